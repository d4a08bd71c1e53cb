//! The keywords that bound a count: `minLength` and `maxLength` (the
//! characters of a string), `minItems` and `maxItems` (the items of an
//! array), `minProperties` and `maxProperties` (the members of an
//! object). `minContains` and `maxContains` have the same shape and are
//! applied by `contains`.

use serde_json::Value;

use super::type_::Type;
use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::repr;

/// What is counted.
#[derive(Clone, Copy)]
enum Counted {
    Characters,
    Items,
    Properties,
}

impl Counted {
    /// The count, if `instance` is of the kind counted.
    fn count(self, instance: &Value) -> Option<usize> {
        match (self, instance) {
            (Counted::Characters, Value::String(s)) => Some(s.chars().count()),
            (Counted::Items, Value::Array(items)) => Some(items.len()),
            (Counted::Properties, Value::Object(members)) => Some(members.len()),
            _ => None,
        }
    }
}

struct Count {
    counted: Counted,
    /// Whether the bound is a minimum (else a maximum).
    at_least: bool,
    limit: f64,
    /// The message's words after the instance's repr.
    words: &'static str,
}

pub(crate) fn compile(name: &str, site: &Site<'_>) -> Compiled {
    if !Type::Integer.matches(site.value) || site.value.as_f64().is_some_and(|f| f < 0.0) {
        return Err(site.not_a("a non-negative integer"));
    }
    let limit = site.value.as_f64().unwrap_or(f64::NAN);
    // Python words a bound of 1 (minimum) or 0 (maximum) apart.
    let (counted, at_least, words) = match name {
        "minLength" => (Counted::Characters, true, "is too short"),
        "maxLength" => (Counted::Characters, false, "is too long"),
        "minItems" => (Counted::Items, true, "is too short"),
        "maxItems" => (Counted::Items, false, "is too long"),
        "minProperties" => (Counted::Properties, true, "does not have enough properties"),
        "maxProperties" => (Counted::Properties, false, "has too many properties"),
        _ => return Ok(None),
    };
    let words = if at_least && limit == 1.0 {
        "should be non-empty"
    } else if !at_least && limit == 0.0 {
        "is expected to be empty"
    } else {
        words
    };
    keyword(Count {
        counted,
        at_least,
        limit,
        words,
    })
}

impl Keyword for Count {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let Some(count) = self.counted.count(instance) else {
            return;
        };
        let count = i128::try_from(count).unwrap_or(i128::MAX) as f64;
        let fails = if self.at_least {
            count < self.limit
        } else {
            count > self.limit
        };
        if fails {
            out.push(at.fail(instance, format!("{} {}", repr(instance), self.words)));
        }
    }
}
