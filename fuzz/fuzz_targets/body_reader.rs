//! Any bytes as a request body, read by the server crate's body reader
//! (`BodySchemas::parse`) with Python's messages and with the default ones,
//! against a schema that takes any JSON and one that uses most keywords.
//! Never a panic or a stack overflow; a body serde reads (at most 1000
//! deep) is read, to the same value, and one it does not read is refused
//! as malformed; every refusal has a message; a Python schema error's
//! absolute paths point at the part of the body (for `propertyNames`, the
//! object holding the name, as in Python) and of the schema that failed.
#![no_main]

use std::sync::LazyLock;

use jsonschema_python_messages::{PathItem, PythonSchema};
use libfuzzer_sys::fuzz_target;
use microversion::{Version, VersionSpan};
use microversion_fuzz::{MAX_DEPTH, json_depth, serde_reads};
use microversion_server::{BodyError, BodySchemas};
use serde_json::{Value, json};

/// A schema with most keywords Python's `jsonschema` knows, in the order
/// a Python source would list them.
static RICH: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 20, "pattern": "^[A-Z_][A-Z0-9_]*$"},
            "uuid": {"type": "string", "format": "uuid"},
            "total": {"type": "integer", "minimum": 1, "maximum": 2147483647},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 100, "multipleOf": 0.5},
            "flag": {"type": "boolean"},
            "kind": {"enum": ["INSTANCE", "MIGRATION", null, 1, [1], {"a": 1}]},
            "fixed": {"const": {"a": [1, 2.5, "x"]}},
            "parent": {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]},
            "one": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
            "all": {"allOf": [{"type": "string"}, {"maxLength": 3}]},
            "never": {"not": {"type": ["string", "null"]}},
            "list": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4, "uniqueItems": true},
            "tuple": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false, "contains": {"type": "integer"}},
            "map": {
                "type": "object",
                "patternProperties": {
                    "^[A-Z_]+$": {
                        "type": "object",
                        "properties": {"total": {"type": "integer"}, "reserved": {"type": "integer", "minimum": 0}},
                        "required": ["total"],
                        "additionalProperties": false
                    }
                },
                "additionalProperties": false,
                "minProperties": 1,
                "maxProperties": 3,
                "propertyNames": {"maxLength": 10}
            },
            "cond": {"if": {"type": "integer"}, "then": {"minimum": 0}, "else": {"type": "string"}},
            "deps": {"type": "object", "dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}},
            "nested": {"type": "array", "items": {"$comment": "any", "type": ["array", "object", "integer"], "items": {"type": "integer"}}}
        },
        "required": ["name"],
        "additionalProperties": false
    })
});

static ANY_PYTHON: LazyLock<BodySchemas<Value>> = LazyLock::new(|| schemas(&json!({}), true));
static ANY_DEFAULT: LazyLock<BodySchemas<Value>> = LazyLock::new(|| schemas(&json!({}), false));
static RICH_PYTHON: LazyLock<BodySchemas<Value>> = LazyLock::new(|| schemas(&RICH, true));
static RICH_DEFAULT: LazyLock<BodySchemas<Value>> = LazyLock::new(|| schemas(&RICH, false));
static RICH_VALIDATOR: LazyLock<PythonSchema> =
    LazyLock::new(|| PythonSchema::new(&RICH).expect("the schema is valid"));

fn schemas(schema: &Value, python: bool) -> BodySchemas<Value> {
    let builder = BodySchemas::builder("POST /fuzz");
    let builder = if python {
        builder.python_messages()
    } else {
        builder
    };
    builder
        .json_schema(VersionSpan::from_static("1.0 - latest"), schema)
        .build()
        .expect("the schema is valid")
}

/// The part of `value` at `path`.
fn at<'a>(value: &'a Value, path: &[PathItem]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, item| match item {
        PathItem::Key(k) => v.get(k.as_str()),
        PathItem::Index(i) => v.get(*i),
    })
}

fn check_refusal(e: &BodyError, data: &[u8]) {
    let text = e.to_string();
    assert!(!text.is_empty(), "an empty message for {data:?}");
    assert_eq!(e.status(), 400, "{e}");
}

microversion_fuzz::asan_default_options!(c"detect_odr_violation=0");

fuzz_target!(|data: &[u8]| {
    let version = Version::new(1, 0);
    let depth = json_depth(data);
    let serde = serde_reads(data);
    for any in [&*ANY_PYTHON, &*ANY_DEFAULT] {
        match any.parse(version, data) {
            Ok(value) => assert_eq!(
                Some(&value),
                serde.as_ref(),
                "read a body serde does not read the same"
            ),
            Err(e) => {
                check_refusal(&e, data);
                assert!(
                    matches!(e, BodyError::Malformed(_)),
                    "a schema of any JSON refused with {e}"
                );
                assert!(
                    serde.is_none(),
                    "valid JSON ({depth} deep) refused as malformed: {e}"
                );
            }
        }
    }
    if depth > MAX_DEPTH {
        return;
    }
    match RICH_PYTHON.parse(version, data) {
        Ok(value) => assert!(RICH_VALIDATOR.is_valid(&value)),
        Err(BodyError::Schema(e)) => {
            let value = serde.as_ref().expect("a schema error on JSON serde reads");
            assert!(!RICH_VALIDATOR.is_valid(value));
            assert!(!e.message().is_empty());
            assert!(e.to_string().starts_with(e.message()), "{e}");
            let part = at(value, e.absolute_instance_path());
            let path = e.absolute_schema_path();
            if path.contains(&PathItem::Key("propertyNames".into())) {
                // As in Python, the instance is the name, the path its object's.
                let name = e.instance().as_str().expect("a property name");
                assert!(
                    part.and_then(|p| p.get(name)).is_some(),
                    "the instance path of {e}"
                );
            } else {
                assert_eq!(part, Some(e.instance()), "the instance path of {e}");
            }
            if let Some(keyword) = e.keyword() {
                assert_eq!(
                    path.last(),
                    Some(&PathItem::Key(keyword.to_owned())),
                    "the schema path of {e}"
                );
                assert_eq!(
                    at(&RICH, &path[..path.len() - 1]),
                    Some(e.schema()),
                    "the schema of {e}"
                );
            }
            check_refusal(&BodyError::Schema(e), data);
        }
        Err(e) => {
            check_refusal(&e, data);
            assert!(serde.is_none(), "JSON serde reads refused with {e}");
        }
    }
    match RICH_DEFAULT.parse(version, data) {
        Ok(_) => {}
        Err(e) => check_refusal(&e, data),
    }
});
