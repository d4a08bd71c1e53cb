//! `items`: the items past those `prefixItems` covers, against a
//! subschema; with `items: false`, `Expected at most 1 item but found 2
//! extra: [2, 3]`.

use serde_json::Value;

use super::{Array, ArrayKeyword, Compiled, Site, array_keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};
use crate::repr::repr;

struct Items {
    /// How many items `prefixItems` covers.
    prefix: usize,
    /// `None` for `items: false`.
    rest: Option<Node>,
}

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    let prefix = site
        .siblings
        .get("prefixItems")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let rest = match site.value {
        Value::Bool(true) => return Ok(None),
        Value::Bool(false) => None,
        _ => Some(site.subschema(compiler)?),
    };
    array_keyword(Items { prefix, rest })
}

impl ArrayKeyword for Items {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, array: Array<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        let prefix = self.prefix;
        if array.items.len() <= prefix {
            return;
        }
        let Some(node) = &self.rest else {
            let extra = array.items.len() - prefix;
            let rest = if extra == 1 {
                repr(&array.items[prefix])
            } else {
                repr(&Value::Array(array.items[prefix..].to_vec()))
            };
            let noun = if prefix == 1 { "item" } else { "items" };
            let message =
                format!("Expected at most {prefix} {noun} but found {extra} extra: {rest}");
            out.push(at.fail(array.value, message));
            return;
        };
        for (index, item) in array.items.iter().enumerate().skip(prefix) {
            out.extend(at.descend(node, item, Some(&PathItem::Index(index)), None));
        }
    }
}
