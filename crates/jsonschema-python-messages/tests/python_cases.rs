//! The validator against Python: `cases.json` holds, for each case, the
//! schema and instance as JSON text, and `str(best_match(errors))` with
//! the error's `absolute_path` and `absolute_schema_path` from Python's
//! `jsonschema` (made by `gen_cases.py`).

use jsonschema_python_messages::{PathItem, PythonSchema};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Case {
    name: String,
    schema: String,
    instance: String,
    expected: Option<String>,
    absolute_path: Option<Vec<Value>>,
    absolute_schema_path: Option<Vec<Value>>,
}

/// Python's path items as JSON: a string key or an integer index.
fn path_items(items: &[Value]) -> Vec<PathItem> {
    items
        .iter()
        .map(|item| match item {
            Value::String(key) => PathItem::Key(key.clone()),
            index => PathItem::Index(
                usize::try_from(index.as_u64().expect("a key or an index"))
                    .expect("an index that fits"),
            ),
        })
        .collect()
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
        let error = compiled.validate(&instance).err();
        let got = error.as_ref().map(ToString::to_string);
        assert_eq!(got, case.expected, "case {}", case.name);
        let paths = error.as_ref().map(|e| {
            (
                e.absolute_instance_path().to_vec(),
                e.absolute_schema_path().to_vec(),
            )
        });
        let expected_paths = case
            .absolute_path
            .as_deref()
            .map(path_items)
            .zip(case.absolute_schema_path.as_deref().map(path_items));
        assert_eq!(paths, expected_paths, "the paths of case {}", case.name);
        assert_eq!(
            compiled.is_valid(&instance),
            case.expected.is_none(),
            "case {}",
            case.name
        );
    }
}
