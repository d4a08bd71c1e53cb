//! Relaxed validation, for requests under a legacy root: the properties a
//! schema would refuse as unknown are taken out of the body before it is
//! validated, so that an old client's extra fields are ignored rather than
//! refused (as Nova's v2.0 API on its v2.1 code does).
//!
//! An object loses the properties its schema neither lists in
//! `properties` nor allows, where the schema says `additionalProperties:
//! false` and has no `patternProperties` (a property matching no pattern is
//! still refused, as the strict schema refuses it). The walk follows
//! `properties`, `additionalProperties`, `items`, `prefixItems`, `allOf`
//! and local `$ref`s; inside `anyOf` and `oneOf` nothing is taken out, as
//! a property one branch does not know may be another branch's.

use serde::Deserializer;
use serde::de::{self, Visitor};
use serde_json::Value;

/// Takes out of `value` the properties `schema` would refuse as unknown.
pub(crate) fn strip_unknown(value: &mut Value, schema: &Value) {
    strip(value, schema, schema, &mut Vec::new());
}

/// `applied` holds the schemas already applied to this value (through
/// `$ref` and `allOf`), so that a schema referring to itself ends.
fn strip(value: &mut Value, schema: &Value, root: &Value, applied: &mut Vec<*const Value>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    let this: *const Value = schema;
    if applied.contains(&this) {
        return;
    }
    applied.push(this);
    let schema = object;
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        strip(value, target, root, applied);
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for sub in all {
            strip(value, sub, root, applied);
        }
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let known = |key: &str| properties.is_some_and(|p| p.contains_key(key));
            match schema.get("additionalProperties") {
                Some(Value::Bool(false)) if !schema.contains_key("patternProperties") => {
                    map.retain(|key, _| known(key));
                }
                Some(extra @ Value::Object(_)) => {
                    for (_, v) in map.iter_mut().filter(|(key, _)| !known(key)) {
                        strip(v, extra, root, &mut Vec::new());
                    }
                }
                _ => {}
            }
            if let Some(properties) = properties {
                for (key, sub) in properties {
                    if let Some(v) = map.get_mut(key) {
                        strip(v, sub, root, &mut Vec::new());
                    }
                }
            }
        }
        Value::Array(items) => {
            let prefix = schema
                .get("prefixItems")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            // Draft 4's tuples are an `items` array.
            let (tuple, rest) = match schema.get("items") {
                Some(Value::Array(tuple)) => (tuple.as_slice(), None),
                Some(each @ Value::Object(_)) => (prefix, Some(each)),
                _ => (prefix, None),
            };
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(sub) = tuple.get(i).or(rest) {
                    strip(item, sub, root, &mut Vec::new());
                }
            }
        }
        _ => {}
    }
}

/// The field names of the struct `U` deserializes as, when serde's derive
/// declares them (not for a map, nor a struct with a flattened field).
pub(crate) fn struct_fields<'de, U: serde::Deserialize<'de>>() -> Option<&'static [&'static str]> {
    let mut fields = None;
    // The probe always fails: it only records what the derive asked for.
    let _ = U::deserialize(FieldProbe(&mut fields));
    fields
}

/// A deserializer that records the fields a struct asks for, then stops.
struct FieldProbe<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// Takes out of a JSON object the keys `fields` does not name.
pub(crate) fn keep_fields(value: &mut Value, fields: &[&str]) {
    if let Value::Object(map) = value {
        map.retain(|key, _| fields.contains(&key.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[test]
    fn unknown_properties_go_where_the_schema_refuses_them() {
        let schema = json!({
            "type": "object",
            "properties": {
                "server": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "tags": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"k": {}}, "additionalProperties": false}
                    }},
                    "additionalProperties": false
                },
                "metadata": {
                    "type": "object",
                    "patternProperties": {"^[a-z]+$": {"type": "string"}},
                    "additionalProperties": false
                },
                "open": {"type": "object"}
            },
            "additionalProperties": false
        });
        let mut body = json!({
            "server": {"name": "a", "flavor": 1, "tags": [{"k": 1, "extra": 2}]},
            "metadata": {"ok": "x", "Bad!": "y"},
            "open": {"anything": 1},
            "top": true
        });
        strip_unknown(&mut body, &schema);
        assert_eq!(
            body,
            json!({
                "server": {"name": "a", "tags": [{"k": 1}]},
                // patternProperties: left for the schema to refuse.
                "metadata": {"ok": "x", "Bad!": "y"},
                "open": {"anything": 1}
            })
        );
    }

    #[test]
    fn refs_all_of_and_a_schema_that_refers_to_itself() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {
                "type": "object",
                "allOf": [{"properties": {"child": {"$ref": "#/$defs/Node"}}}],
                "properties": {"name": {}, "child": {"$ref": "#/$defs/Node"}},
                "additionalProperties": false
            }},
            "anyOf": [{"$ref": "#"}]
        });
        let mut body = json!({"name": 1, "x": 2, "child": {"name": 2, "y": 3}});
        strip_unknown(&mut body, &schema);
        assert_eq!(body, json!({"name": 1, "child": {"name": 2}}));
        let looping = json!({"$ref": "#", "allOf": [{"$ref": "#"}]});
        let mut body = json!({"a": 1});
        strip_unknown(&mut body, &looping);
        assert_eq!(body, json!({"a": 1}));
    }

    #[test]
    fn tuples_and_items() {
        let closed =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        let schema = json!({"type": "array", "prefixItems": [closed], "items": {"type": "object"}});
        let mut body = json!([{"a": 1, "b": 2}, {"a": 1, "b": 2}]);
        strip_unknown(&mut body, &schema);
        assert_eq!(body, json!([{"a": 1}, {"a": 1, "b": 2}]));
        let draft4 = json!({"type": "array", "items": [{"type": "object"}, closed]});
        let mut body = json!([{"b": 2}, {"a": 1, "b": 2}, {"b": 2}]);
        strip_unknown(&mut body, &draft4);
        assert_eq!(body, json!([{"b": 2}, {"a": 1}, {"b": 2}]));
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Create {
        name: String,
        #[serde(rename = "colour")]
        color: Option<String>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Flattened {
        name: String,
        #[serde(flatten)]
        rest: std::collections::HashMap<String, Value>,
    }

    #[test]
    fn the_fields_serde_derives() {
        assert_eq!(struct_fields::<Create>(), Some(&["name", "colour"][..]));
        assert_eq!(struct_fields::<Flattened>(), None);
        assert_eq!(struct_fields::<Value>(), None);
        let mut body = json!({"name": "a", "colour": "red", "size": 3});
        keep_fields(&mut body, &["name", "colour"]);
        assert_eq!(body, json!({"name": "a", "colour": "red"}));
    }
}
