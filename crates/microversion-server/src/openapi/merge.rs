//! One schema for several version ranges, in the convention of
//! OpenStack's OpenAPI documents (its `codegenerator`): `x-openstack`
//! with `min-ver` and `max-ver` marks what exists only at some versions,
//! and a schema that changes shape is a `oneOf` of its variants, each
//! marked with its range, under `x-openstack: {discriminator: microversion}`.

use serde_json::{Map, Value, json};

use super::Closed;

/// A schema and the versions it holds at, sorted by version, the ranges
/// apart and in order.
pub(super) type Pieces<'a> = [(Closed, &'a Value)];

/// The `x-openstack` range of `part` within `whole`: `min-ver` where it
/// starts later, `max-ver` where it ends earlier; `None` when it spans
/// all of `whole`.
pub(super) fn range_mark(part: Closed, whole: Closed) -> Option<Value> {
    let mut mark = Map::new();
    if part.0 > whole.0 {
        mark.insert("min-ver".into(), Value::String(part.0.to_string()));
    }
    if part.1 < whole.1 {
        mark.insert("max-ver".into(), Value::String(part.1.to_string()));
    }
    (!mark.is_empty()).then_some(Value::Object(mark))
}

/// Adds `mark` to the `x-openstack` of `schema` (wrapping a schema that
/// is not an object, such as `true`).
pub(super) fn marked(schema: &Value, mark: Option<Value>) -> Value {
    let Some(Value::Object(mark)) = mark else {
        return schema.clone();
    };
    let mut out = match schema {
        Value::Object(map) => map.clone(),
        other => {
            let mut map = Map::new();
            map.insert("allOf".into(), Value::Array(vec![other.clone()]));
            map
        }
    };
    let slot = out
        .entry("x-openstack")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(existing) = slot {
        existing.extend(mark);
    }
    Value::Object(out)
}

/// Neighbouring pieces with equal schemas as one.
pub(super) fn coalesce<'a>(pieces: &Pieces<'a>) -> Vec<(Closed, &'a Value)> {
    let mut out: Vec<(Closed, &Value)> = Vec::new();
    for &(range, schema) in pieces {
        match out.last_mut() {
            Some((last, previous)) if *previous == schema && adjacent(last.1, range.0) => {
                last.1 = range.1;
            }
            _ => out.push((range, schema)),
        }
    }
    out
}

/// Whether `next` is the version right after `end`.
fn adjacent(end: microversion::Version, next: microversion::Version) -> bool {
    end.next_minor() == Some(next)
}

/// The variants as one `oneOf`, each marked with its range, under
/// `x-openstack: {discriminator: microversion}`.
pub(super) fn one_of(pieces: &Pieces<'_>) -> Value {
    let variants: Vec<Value> = pieces
        .iter()
        .map(|&(range, schema)| {
            let mut mark = Map::new();
            mark.insert("min-ver".into(), Value::String(range.0.to_string()));
            mark.insert("max-ver".into(), Value::String(range.1.to_string()));
            marked(schema, Some(Value::Object(mark)))
        })
        .collect();
    json!({"oneOf": variants, "x-openstack": {"discriminator": "microversion"}})
}

/// One schema for a request body or parameter over `whole`: the schema
/// itself when one holds at every version, else a `oneOf` of the
/// variants. A single variant that holds only at part of `whole` is a
/// `oneOf` of one, so that its range is said.
pub(super) fn variants(pieces: &Pieces<'_>, whole: Closed) -> Value {
    let pieces = coalesce(pieces);
    match pieces.as_slice() {
        [(range, schema)] if *range == whole => (*schema).clone(),
        _ => one_of(&pieces),
    }
}

/// One schema for a response over the versions of its pieces: objects
/// that differ in which properties they have become one object whose
/// properties are marked with their ranges (nested objects, arrays'
/// items and pattern properties alike); where that is not possible, a
/// `oneOf` of the variants.
pub(super) fn fields(pieces: &Pieces<'_>) -> Value {
    let pieces = coalesce(pieces);
    merge(&pieces).unwrap_or_else(|| one_of(&pieces))
}

/// The keywords [`merge`] combines itself; every other keyword must be
/// the same in every piece.
const COMBINED: [&str; 5] = [
    "properties",
    "patternProperties",
    "required",
    "items",
    "additionalProperties",
];

fn merge(pieces: &[(Closed, &Value)]) -> Option<Value> {
    let (first, rest) = pieces.split_first()?;
    if rest.iter().all(|(_, schema)| *schema == first.1) {
        return Some(first.1.clone());
    }
    let maps: Vec<&Map<String, Value>> = pieces
        .iter()
        .map(|(_, schema)| schema.as_object())
        .collect::<Option<_>>()?;
    let others = |map: &Map<String, Value>| -> Map<String, Value> {
        map.iter()
            .filter(|(key, _)| !COMBINED.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    };
    let mut out = others(maps[0]);
    if maps[1..].iter().any(|map| others(map) != out) {
        return None;
    }
    let whole = (first.0.0, pieces[pieces.len() - 1].0.1);
    for keyword in ["properties", "patternProperties"] {
        if let Some(merged) = merge_members(pieces, &maps, keyword, whole)? {
            out.insert(keyword.into(), merged);
        }
    }
    for keyword in ["items", "additionalProperties"] {
        let held: Vec<(Closed, &Value)> = pieces
            .iter()
            .zip(&maps)
            .filter_map(|((range, _), map)| map.get(keyword).map(|v| (*range, v)))
            .collect();
        if held.is_empty() {
            continue;
        }
        if held.len() != pieces.len() {
            return None;
        }
        out.insert(keyword.into(), merge(&coalesce(&held))?);
    }
    // Required where every piece requires it: a reader of one version
    // finds the rest by the ranges.
    let required: Vec<Value> = match maps[0].get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter(|name| {
                maps[1..].iter().all(|map| {
                    map.get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|r| r.contains(name))
                })
            })
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    Some(Value::Object(out))
}

/// The members of `keyword` (`properties`) over the pieces: each with the
/// range it has, merged; `Some(None)` when no piece has the keyword,
/// `None` when a member goes away and comes back.
fn merge_members(
    pieces: &[(Closed, &Value)],
    maps: &[&Map<String, Value>],
    keyword: &str,
    whole: Closed,
) -> Option<Option<Value>> {
    let mut names: Vec<&String> = Vec::new();
    for map in maps {
        if let Some(Value::Object(members)) = map.get(keyword) {
            for name in members.keys() {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    if names.is_empty() {
        return Some(None);
    }
    let mut out = Map::new();
    for name in names {
        let held: Vec<(usize, Closed, &Value)> = pieces
            .iter()
            .zip(maps)
            .enumerate()
            .filter_map(|(i, ((range, _), map))| {
                map.get(keyword)
                    .and_then(|members| members.get(name.as_str()))
                    .map(|schema| (i, *range, schema))
            })
            .collect();
        // Held by consecutive pieces, or it cannot be given one range.
        if held.windows(2).any(|pair| pair[1].0 != pair[0].0 + 1) {
            return None;
        }
        let held: Vec<(Closed, &Value)> = held.into_iter().map(|(_, r, s)| (r, s)).collect();
        let range = (held[0].0.0, held[held.len() - 1].0.1);
        let schema = fields(&held);
        out.insert(name.clone(), marked(&schema, range_mark(range, whole)));
    }
    Some(Some(Value::Object(out)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use microversion::Version;

    fn v(minor: u32) -> Version {
        Version::new(1, minor)
    }

    #[test]
    fn equal_neighbours_are_one_schema() {
        let a = json!({"type": "string"});
        let pieces = [((v(0), v(3)), &a), ((v(4), v(9)), &a)];
        assert_eq!(variants(&pieces, (v(0), v(9))), a);
        // Held at part of the range only: a oneOf of one, with its range.
        assert_eq!(
            variants(&pieces, (v(0), v(12))),
            json!({"oneOf": [{"type": "string", "x-openstack": {"min-ver": "1.0", "max-ver": "1.9"}}],
                   "x-openstack": {"discriminator": "microversion"}})
        );
    }

    #[test]
    fn added_properties_are_marked_with_their_range() {
        let old = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let new = json!({"type": "object",
            "properties": {"name": {"type": "string"}, "parent": {"type": ["string", "null"]}},
            "required": ["name", "parent"]});
        let merged = fields(&[((v(0), v(13)), &old), ((v(14), v(39)), &new)]);
        assert_eq!(
            merged,
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "parent": {"type": ["string", "null"], "x-openstack": {"min-ver": "1.14"}}
            }, "required": ["name"]})
        );
    }

    #[test]
    fn nested_and_removed_members_are_marked() {
        let a = json!({"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}}});
        let b = json!({"type": "array", "items": {"type": "object", "properties": {"y": {"type": "integer"}}}});
        let merged = fields(&[((v(0), v(4)), &a), ((v(5), v(9)), &b)]);
        assert_eq!(
            merged["items"]["properties"],
            json!({"x": {"type": "integer", "x-openstack": {"max-ver": "1.4"}},
                   "y": {"type": "integer", "x-openstack": {"min-ver": "1.5"}}})
        );
    }

    #[test]
    fn shapes_that_do_not_merge_become_one_of() {
        let a = json!({"type": "object", "properties": {"x": {"type": "integer"}}});
        let b = json!({"type": "array"});
        let c = json!({"type": "object", "properties": {"x": {"type": "integer"}, "z": {}}});
        let merged = fields(&[((v(0), v(1)), &a), ((v(2), v(3)), &b), ((v(4), v(5)), &c)]);
        assert_eq!(
            merged["x-openstack"],
            json!({"discriminator": "microversion"})
        );
        assert_eq!(
            merged["oneOf"][1]["x-openstack"],
            json!({"min-ver": "1.2", "max-ver": "1.3"})
        );
        // A property that goes away and comes back cannot be one range.
        let merged = fields(&[((v(0), v(1)), &c), ((v(2), v(3)), &a), ((v(4), v(5)), &c)]);
        assert!(merged.get("oneOf").is_some(), "{merged}");
    }
}
