//! `type`: `3 is not of type 'string'`.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::{repr, repr_str};

/// A type of draft 2020-12's type checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Type {
    Array,
    Boolean,
    Integer,
    Null,
    Number,
    Object,
    String,
}

impl Type {
    fn from_name(name: &str) -> Option<Type> {
        Some(match name {
            "array" => Type::Array,
            "boolean" => Type::Boolean,
            "integer" => Type::Integer,
            "null" => Type::Null,
            "number" => Type::Number,
            "object" => Type::Object,
            "string" => Type::String,
            _ => return None,
        })
    }

    /// Whether `instance` is of this type (`2.0` is an integer, `true` is
    /// not).
    pub(crate) fn matches(self, instance: &Value) -> bool {
        match self {
            Type::Array => instance.is_array(),
            Type::Boolean => instance.is_boolean(),
            Type::Null => instance.is_null(),
            Type::Number => instance.is_number(),
            Type::Object => instance.is_object(),
            Type::String => instance.is_string(),
            Type::Integer => match instance {
                Value::Number(n) => {
                    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
                }
                _ => false,
            },
        }
    }
}

/// The types a `type` keyword names, in its order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Types(Vec<(Type, String)>);

impl Types {
    /// A type name or an array of type names.
    pub(crate) fn parse(value: &Value) -> Option<Types> {
        let one = |name: &Value| {
            let name = name.as_str()?;
            Some((Type::from_name(name)?, name.to_owned()))
        };
        match value {
            Value::Array(names) => names.iter().map(one).collect::<Option<_>>().map(Types),
            name => one(name).map(|t| Types(vec![t])),
        }
    }

    /// Whether `instance` has one of the types.
    pub(crate) fn matches(&self, instance: &Value) -> bool {
        self.0.iter().any(|(t, _)| t.matches(instance))
    }
}

struct TypeKeyword {
    types: Types,
    /// `'integer', 'null'`, as the message lists them.
    names: String,
}

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    let types = Types::parse(site.value)
        .ok_or_else(|| site.not_a("a type name or a list of type names"))?;
    let names: Vec<String> = types.0.iter().map(|(_, name)| repr_str(name)).collect();
    keyword(TypeKeyword {
        types,
        names: names.join(", "),
    })
}

impl Keyword for TypeKeyword {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        if !self.types.matches(instance) {
            let message = format!("{} is not of type {}", repr(instance), self.names);
            out.push(at.fail(instance, message));
        }
    }
}
