//! The validator against Python: `cases.json` holds, for each case, the
//! schema and instance as JSON text and `str(best_match(errors))` from
//! Python's `jsonschema` (made by `gen_cases.py`).

use serde::Deserialize;
use serde_json::{Value, json};

use super::*;

#[derive(Deserialize)]
struct Case {
    name: String,
    schema: String,
    instance: String,
    expected: Option<String>,
}

#[test]
fn every_case_reads_as_python_wrote_it() {
    let cases: Vec<Case> = serde_json::from_str(include_str!("cases.json")).unwrap();
    assert!(cases.len() > 70);
    for case in cases {
        let schema: Value = serde_json::from_str(&case.schema).unwrap();
        let instance: Value = serde_json::from_str(&case.instance).unwrap();
        let compiled = PythonSchema::new(&schema)
            .unwrap_or_else(|e| panic!("{}: the schema does not build: {e}", case.name));
        let got = compiled.validate(&instance).err().map(|e| e.to_string());
        assert_eq!(got, case.expected, "case {}", case.name);
        assert_eq!(
            compiled.is_valid(&instance),
            case.expected.is_none(),
            "case {}",
            case.name
        );
    }
}

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
    assert!(FormatChecker::empty().conforms("uuid", &json!("x")));
    assert!(FormatChecker::default().conforms("uuid", &json!(5)));
}

#[test]
fn python_uuid_parsing() {
    assert!(is_uuid("01234567-89ab-cdef-0123-456789abcdef"));
    assert!(is_uuid("01234567-89AB-CDEF-0123-456789ABCDEF"));
    assert!(!is_uuid("01234567-89ab-cdef-0123-456789abcdeg"));
    assert!(!is_uuid("{01234567-89ab-cdef-0123-456789abcdef}"));
    assert!(python_uuid_parses("{0123456789abcdef0123456789abcdef}"));
    assert!(python_uuid_parses(
        "urn:uuid:0123456789abcdef0123456789abcdef"
    ));
    assert!(!python_uuid_parses("0123456789abcdef0123456789abcde"));
}

#[test]
fn dates_and_addresses() {
    assert!(is_date("2024-02-29"));
    assert!(!is_date("2023-02-29"));
    assert!(!is_date("0000-01-01"));
    assert!(!is_date("2024-1-01"));
    assert!(is_ipv6("::1"));
    assert!(is_ipv6("fe80::1%eth0"));
    assert!(!is_ipv6("fe80::1%"));
    assert!(!is_ipv6("1.2.3.4"));
}

#[test]
fn regexes_read_as_python_reads_them() {
    let mut regexes = HashMap::new();
    for p in [
        r"^CUSTOM\_[A-Z]+$",
        r"^[]a]+\Z",
        r"^[\]x]$",
        r"^a$|^b$",
        r"(?P<x>a)(?P=x)",
        r"[a&&b]",
    ] {
        compile(p, &mut regexes).unwrap_or_else(|e| panic!("{p}: {e}"));
    }
    let m = |p: &str, s: &str| regexes[p].is_match(s).unwrap();
    assert!(m(r"^CUSTOM\_[A-Z]+$", "CUSTOM_A"));
    assert!(m(r"^CUSTOM\_[A-Z]+$", "CUSTOM_A\n"));
    assert!(!m(r"^CUSTOM\_[A-Z]+$", "CUSTOM_A\n\n"));
    assert!(m(r"^[]a]+\Z", "]a"));
    assert!(!m(r"^[]a]+\Z", "]a\n"));
    assert!(m(r"^[\]x]$", "]"));
    assert!(m(r"^a$|^b$", "b"));
    assert!(m(r"(?P<x>a)(?P=x)", "aa"));
    assert!(m(r"[a&&b]", "&"));
    assert!(compile("(", &mut regexes).is_err());
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
