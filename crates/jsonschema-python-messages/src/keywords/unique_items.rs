//! `uniqueItems`: `[1, 2, 1.0] has non-unique elements`.

use std::collections::HashSet;

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::repr;
use crate::value::equality_key;

struct UniqueItems;

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    match site.value {
        Value::Bool(true) => keyword(UniqueItems),
        Value::Bool(false) => Ok(None),
        _ => Err(site.not_a("a boolean")),
    }
}

impl Keyword for UniqueItems {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let Value::Array(items) = instance else {
            return;
        };
        // One hash per item, not one comparison per pair of items.
        let mut seen = HashSet::with_capacity(items.len());
        if !items.iter().all(|item| seen.insert(equality_key(item))) {
            out.push(at.fail(
                instance,
                format!("{} has non-unique elements", repr(instance)),
            ));
        }
    }
}
