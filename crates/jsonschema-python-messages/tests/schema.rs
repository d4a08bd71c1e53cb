//! The public API: the parts of an error, format checkers, and the
//! schemas refused when compiled.

use jsonschema_python_messages::{FormatChecker, PathItem, PythonSchema};
use serde_json::json;

#[test]
fn error_parts() {
    let schema = PythonSchema::new(&json!({
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer", "minimum": 1}}}
    }))
    .unwrap();
    let e = schema.validate(&json!({"a": [1, 0]})).unwrap_err();
    assert_eq!(e.message(), "0 is less than the minimum of 1");
    assert_eq!(e.keyword(), Some("minimum"));
    assert_eq!(
        e.instance_path(),
        [PathItem::Key("a".into()), PathItem::Index(1)]
    );
    assert_eq!(
        e.schema_path(),
        [
            PathItem::Key("properties".into()),
            PathItem::Key("a".into()),
            PathItem::Key("items".into()),
            PathItem::Key("minimum".into())
        ]
    );
    assert_eq!(e.instance(), &json!(0));
    assert_eq!(e.schema(), &json!({"type": "integer", "minimum": 1}));
    assert!(
        e.to_string()
            .contains("Failed validating 'minimum' in schema['properties']['a']['items']:")
    );
    assert!(e.to_string().ends_with("On instance['a'][1]:\n    0"));
}

#[test]
fn the_schema_of_an_error_is_the_subschema_that_failed() {
    let schema = PythonSchema::new(&json!({
        "anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]
    }))
    .unwrap();
    let e = schema.validate(&json!(3)).unwrap_err();
    // Inside anyOf, paths are relative to the subschema, as in Python.
    assert_eq!(e.message(), "3 is less than the minimum of 5");
    assert_eq!(e.schema(), &json!({"type": "integer", "minimum": 5}));
    assert_eq!(
        e.schema_path(),
        [PathItem::Index(1), PathItem::Key("minimum".into())]
    );
    assert_eq!(
        e.absolute_schema_path(),
        [
            PathItem::Key("anyOf".into()),
            PathItem::Index(1),
            PathItem::Key("minimum".into())
        ]
    );
    let schema = PythonSchema::new(&json!({
        "if": {"type": "integer"},
        "then": {"maximum": 1},
        "patternProperties": {"^x": {"not": {"type": "null"}}}
    }))
    .unwrap();
    let e = schema.validate(&json!(3)).unwrap_err();
    assert_eq!(e.schema(), &json!({"maximum": 1}));
    assert_eq!(
        e.schema_path(),
        [
            PathItem::Key("then".into()),
            PathItem::Key("maximum".into())
        ]
    );
    let e = schema.validate(&json!({"xa": null})).unwrap_err();
    assert_eq!(
        e.message(),
        "None should not be valid under {'type': 'null'}"
    );
    assert_eq!(e.schema(), &json!({"not": {"type": "null"}}));
}

#[test]
fn format_checkers_can_be_replaced() {
    let schema = json!({"type": "string", "format": "uuid"});
    let strict = PythonSchema::new(&schema).unwrap();
    let no_dashes = json!("0123456789abcdef0123456789ABCDEF");
    assert_eq!(
        strict.validate(&no_dashes).unwrap_err().message(),
        "'0123456789abcdef0123456789ABCDEF' is not a 'uuid'"
    );
    let lenient = strict.with_format_checker(
        FormatChecker::default().with("uuid", |v| v.as_str().is_some_and(|s| s.len() == 32)),
    );
    assert!(lenient.validate(&no_dashes).is_ok());
}

#[test]
fn schemas_this_validator_cannot_apply_are_refused() {
    for (schema, why) in [
        (
            json!({"$ref": "#/$defs/x"}),
            "the keyword $ref is not supported",
        ),
        (json!({"type": "strnig"}), "not a type name"),
        (
            json!({"properties": {"a": {"minLength": -1}}}),
            "not a non-negative integer",
        ),
        (json!({"pattern": "("}), "does not compile"),
        (json!({"anyOf": []}), "not a non-empty array"),
        (json!(3), "is not of type 'object', 'boolean'"),
    ] {
        let e = PythonSchema::new(&schema).unwrap_err().to_string();
        assert!(e.contains(why), "{schema}: {e}");
    }
    // Keywords Python ignores are ignored.
    assert!(PythonSchema::new(&json!({"description": "x", "dependencies": 3})).is_ok());
}

#[test]
fn a_refused_schema_says_where_and_what() {
    let cases = [
        (
            json!({"properties": {"a": {"type": "strnig"}}}),
            "schema['properties']['a']['type']: not a type name or a list of type names",
        ),
        (
            json!({"items": {"allOf": [{}, 3]}}),
            "schema['items']['allOf'][1]: 3 is not of type 'object', 'boolean'",
        ),
        (
            json!({"unevaluatedProperties": false}),
            "schema['unevaluatedProperties']: the keyword unevaluatedProperties is not supported",
        ),
        (
            json!({"required": ["a", 1]}),
            "schema['required']: not an array of strings",
        ),
        (
            json!({"dependentRequired": {"a": "b"}}),
            "schema['dependentRequired']: not an object of arrays of strings",
        ),
        (json!({"minimum": "1"}), "schema['minimum']: not a number"),
        (
            json!({"multipleOf": 0}),
            "schema['multipleOf']: not a number above 0",
        ),
        (
            json!({"uniqueItems": 1}),
            "schema['uniqueItems']: not a boolean",
        ),
        (json!({"enum": 1}), "schema['enum']: not an array"),
        (json!({"format": 1}), "schema['format']: not a string"),
        (
            json!({"maxContains": 1.5}),
            "schema['maxContains']: not a non-negative integer",
        ),
        (
            json!({"patternProperties": {"a(": {}}}),
            "schema['patternProperties']: the pattern 'a(' does not compile: ",
        ),
        // `then` and `else` are checked where they stand, `if` or not.
        (
            json!({"then": 1, "type": "x", "if": {}}),
            "schema['then']: 1 is not of type 'object', 'boolean'",
        ),
        // A bad pattern is reported by `patternProperties`, wherever
        // `additionalProperties` stands.
        (
            json!({"additionalProperties": false, "type": 1, "patternProperties": {"(": {}}}),
            "schema['type']: not a type name or a list of type names",
        ),
    ];
    for (schema, want) in cases {
        let e = PythonSchema::new(&schema).unwrap_err();
        assert!(e.to_string().starts_with(want), "{schema}: {e}");
    }
    let e = PythonSchema::new(&json!({"properties": {"a": {"type": 1}}})).unwrap_err();
    assert_eq!(
        e.location(),
        [
            PathItem::Key("properties".into()),
            PathItem::Key("a".into()),
            PathItem::Key("type".into())
        ]
    );
    let source: &dyn std::error::Error = &e;
    assert!(source.source().is_none());
}
