//! Python's comparisons of the values `json.loads` makes.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// Python's `==` between numbers (an `int` equals the same `float`).
pub(crate) fn num_cmp(a: &Number, b: &Number) -> Option<Ordering> {
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// `jsonschema._utils.equal`: booleans only equal booleans, `1 == 1.0`.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_cmp(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// A text that two values share exactly when Python finds them equal as
/// `uniqueItems` compares them (booleans apart from numbers, `1 == 1.0`,
/// objects in any order), so that uniqueness is one hash per item and not
/// a comparison per pair of items.
pub(crate) fn equality_key(value: &Value) -> String {
    let mut key = String::new();
    write_equality_key(value, &mut key);
    key
}

fn write_equality_key(value: &Value, key: &mut String) {
    use std::fmt::Write as _;
    match value {
        Value::Null => key.push('n'),
        Value::Bool(true) => key.push('t'),
        Value::Bool(false) => key.push('f'),
        Value::Number(n) => {
            let int = n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from));
            // A float with no fraction is the integer it equals; the bound
            // keeps the cast exact.
            let float = n.as_f64().unwrap_or(f64::NAN);
            let _ = match int {
                Some(i) => write!(key, "i{i};"),
                None if float.fract() == 0.0 && float.abs() < 1e38 => {
                    write!(key, "i{};", float as i128)
                }
                None => write!(key, "f{:x};", float.to_bits()),
            };
        }
        Value::String(text) => {
            let _ = write!(key, "s{}:", text.len());
            key.push_str(text);
        }
        Value::Array(items) => {
            key.push('[');
            for item in items {
                write_equality_key(item, key);
            }
            key.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            key.push('{');
            for (name, item) in entries {
                let _ = write!(key, "s{}:", name.len());
                key.push_str(name);
                write_equality_key(item, key);
            }
            key.push('}');
        }
    }
}

pub(crate) fn is_number(v: &Value) -> Option<&Number> {
    match v {
        Value::Number(n) => Some(n),
        _ => None,
    }
}
