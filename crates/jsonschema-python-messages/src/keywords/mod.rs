//! One validator per keyword, in the shape of `jsonschema`'s
//! `_keywords.py`: each module compiles its keyword's value (checking it
//! as `check_schema` would) and applies it to instances.

pub(crate) mod additional_properties;
pub(crate) mod all_of;
pub(crate) mod any_of;
pub(crate) mod const_;
pub(crate) mod contains;
pub(crate) mod count;
pub(crate) mod dependent_required;
pub(crate) mod dependent_schemas;
pub(crate) mod enum_;
pub(crate) mod format;
pub(crate) mod if_;
pub(crate) mod items;
pub(crate) mod limit;
pub(crate) mod multiple_of;
pub(crate) mod not;
pub(crate) mod one_of;
pub(crate) mod pattern;
pub(crate) mod pattern_properties;
pub(crate) mod prefix_items;
pub(crate) mod properties;
pub(crate) mod property_names;
pub(crate) mod required;
pub(crate) mod subschemas;
pub(crate) mod type_;
pub(crate) mod unique_items;

use serde_json::{Map, Value};

use crate::error::{InvalidSchema, PathItem, Reason};
use crate::failure::Failure;
use crate::node::{At, Compiler, Location, Node};

/// A compiled keyword.
pub(crate) trait Keyword: Send + Sync {
    /// Pushes onto `out` the failures of `instance` under this keyword,
    /// in Python's order.
    fn validate<'s, 'i>(&'s self, at: &At<'s>, instance: &'i Value, out: &mut Vec<Failure<'s, 'i>>);
}

/// A keyword that applies only to objects (Python's validators begin
/// with `if not validator.is_type(instance, "object"): return`).
pub(crate) trait ObjectKeyword: Send + Sync {
    /// Pushes onto `out` the failures of `object`, in Python's order.
    fn validate<'s, 'i>(&'s self, at: &At<'s>, object: Object<'i>, out: &mut Vec<Failure<'s, 'i>>);
}

/// A keyword that applies only to arrays.
pub(crate) trait ArrayKeyword: Send + Sync {
    /// Pushes onto `out` the failures of `array`, in Python's order.
    fn validate<'s, 'i>(&'s self, at: &At<'s>, array: Array<'i>, out: &mut Vec<Failure<'s, 'i>>);
}

/// An object instance: the value (which failures name) and its members.
#[derive(Clone, Copy)]
pub(crate) struct Object<'i> {
    pub(crate) value: &'i Value,
    pub(crate) members: &'i Map<String, Value>,
}

/// An array instance: the value (which failures name) and its items.
#[derive(Clone, Copy)]
pub(crate) struct Array<'i> {
    pub(crate) value: &'i Value,
    pub(crate) items: &'i [Value],
}

/// An [`ObjectKeyword`] as a [`Keyword`] that passes over other instances.
struct OnObjects<K>(K);

impl<K: ObjectKeyword> Keyword for OnObjects<K> {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, value: &'i Value, out: &mut Vec<Failure<'s, 'i>>) {
        if let Value::Object(members) = value {
            self.0.validate(at, Object { value, members }, out);
        }
    }
}

/// An [`ArrayKeyword`] as a [`Keyword`] that passes over other instances.
struct OnArrays<K>(K);

impl<K: ArrayKeyword> Keyword for OnArrays<K> {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, value: &'i Value, out: &mut Vec<Failure<'s, 'i>>) {
        if let Value::Array(items) = value {
            self.0.validate(at, Array { value, items }, out);
        }
    }
}

/// A keyword's place in its schema: its value, the other keywords of its
/// schema (some keywords read their siblings), and where it is.
pub(crate) struct Site<'a> {
    pub(crate) value: &'a Value,
    pub(crate) siblings: &'a Map<String, Value>,
    pub(crate) location: Location,
}

/// What a keyword compiles to: nothing when it never fails (or is one
/// Python ignores).
pub(crate) type Compiled = Result<Option<Box<dyn Keyword>>, InvalidSchema>;

/// Compiles the keyword `name` of an object schema. `if`, `then` and
/// `else` are compiled by the schema itself (see [`if_`]).
pub(crate) fn compile(name: &str, site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    match name {
        "$ref" | "$dynamicRef" | "unevaluatedItems" | "unevaluatedProperties" => {
            Err(site.location.invalid(Reason::Unsupported(name.to_owned())))
        }
        "type" => type_::compile(site),
        "properties" => properties::compile(site, compiler),
        "patternProperties" => pattern_properties::compile(site, compiler),
        "additionalProperties" => additional_properties::compile(site, compiler),
        "required" => required::compile(site),
        "propertyNames" => property_names::compile(site, compiler),
        "dependentRequired" => dependent_required::compile(site),
        "dependentSchemas" => dependent_schemas::compile(site, compiler),
        "minProperties" | "maxProperties" | "minItems" | "maxItems" | "minLength" | "maxLength"
        | "minContains" | "maxContains" => count::compile(name, site),
        "items" => items::compile(site, compiler),
        "prefixItems" => prefix_items::compile(site, compiler),
        "uniqueItems" => unique_items::compile(site),
        "contains" => contains::compile(site, compiler),
        "pattern" => pattern::compile(site, compiler),
        "format" => format::compile(site),
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
            limit::compile(name, site)
        }
        "multipleOf" => multiple_of::compile(site),
        "enum" => enum_::compile(site),
        "const" => const_::compile(site),
        "allOf" => all_of::compile(site, compiler),
        "anyOf" => any_of::compile(site, compiler),
        "oneOf" => one_of::compile(site, compiler),
        "not" => not::compile(site, compiler),
        _ => Ok(None),
    }
}

/// A compiled keyword, boxed.
fn keyword(check: impl Keyword + 'static) -> Compiled {
    Ok(Some(Box::new(check)))
}

/// A compiled keyword on objects, boxed.
fn object_keyword(check: impl ObjectKeyword + 'static) -> Compiled {
    keyword(OnObjects(check))
}

/// A compiled keyword on arrays, boxed.
fn array_keyword(check: impl ArrayKeyword + 'static) -> Compiled {
    keyword(OnArrays(check))
}

impl Site<'_> {
    /// The error for a value that is not `what` (`a string`).
    pub(crate) fn not_a(&self, what: &'static str) -> InvalidSchema {
        self.location.invalid(Reason::NotA(what))
    }

    /// The value, compiled as a subschema.
    pub(crate) fn subschema(&self, compiler: &mut Compiler) -> Result<Node, InvalidSchema> {
        compiler.node(self.value, self.location.clone())
    }

    /// The value, a non-empty array of subschemas, compiled.
    pub(crate) fn subschemas(&self, compiler: &mut Compiler) -> Result<Vec<Node>, InvalidSchema> {
        let subs = self
            .value
            .as_array()
            .filter(|subs| !subs.is_empty())
            .ok_or_else(|| self.not_a("a non-empty array of schemas"))?;
        subs.iter()
            .enumerate()
            .map(|(index, sub)| compiler.node(sub, self.location.join(PathItem::Index(index))))
            .collect()
    }

    /// The value, an object of subschemas by name, compiled.
    pub(crate) fn subschemas_by_name(
        &self,
        compiler: &mut Compiler,
    ) -> Result<Vec<(String, Node)>, InvalidSchema> {
        let subs = self
            .value
            .as_object()
            .ok_or_else(|| self.not_a("an object of schemas"))?;
        subs.iter()
            .map(|(name, sub)| Ok((name.clone(), compiler.node(sub, self.location.key(name))?)))
            .collect()
    }

    /// The value, an array of strings.
    pub(crate) fn strings(&self) -> Result<Vec<String>, InvalidSchema> {
        let strings = self.value.as_array().and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        strings.ok_or_else(|| self.not_a("an array of strings"))
    }
}
