//! The validator against Python: `cases.json` holds, for each case, the
//! schema and instance as JSON text and `str(best_match(errors))` from
//! Python's `jsonschema` (made by `gen_cases.py`).

use jsonschema_python_messages::PythonSchema;
use serde::Deserialize;
use serde_json::Value;

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
