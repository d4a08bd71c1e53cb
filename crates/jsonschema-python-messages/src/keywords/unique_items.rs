//! `uniqueItems`: `[1, 2, 1.0] has non-unique elements`.

use std::collections::HashSet;

use serde_json::Value;

use super::{Array, ArrayKeyword, Compiled, Site, array_keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::repr;
use crate::value::equality_key;

struct UniqueItems;

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    match site.value {
        Value::Bool(true) => array_keyword(UniqueItems),
        Value::Bool(false) => Ok(None),
        _ => Err(site.not_a("a boolean")),
    }
}

impl ArrayKeyword for UniqueItems {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, array: Array<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        // One hash per item, not one comparison per pair of items.
        let mut seen = HashSet::with_capacity(array.items.len());
        if !array
            .items
            .iter()
            .all(|item| seen.insert(equality_key(item)))
        {
            out.push(at.fail(
                array.value,
                format!("{} has non-unique elements", repr(array.value)),
            ));
        }
    }
}
