//! `contains`, with `minContains` and `maxContains`: how many items pass
//! a subschema.

use serde_json::Value;

use super::{Array, ArrayKeyword, Compiled, Site, array_keyword};
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};
use crate::repr::repr;

struct Contains {
    node: Node,
    /// `minContains` (default 1).
    min: u64,
    /// `maxContains` (default: no bound).
    max: Option<u64>,
}

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    let bound = |name: &str| site.siblings.get(name).and_then(Value::as_u64);
    array_keyword(Contains {
        node: site.subschema(compiler)?,
        min: bound("minContains").unwrap_or(1),
        max: bound("maxContains"),
    })
}

impl ArrayKeyword for Contains {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, array: Array<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        let max = self.max.unwrap_or(array.items.len() as u64);
        let min = self.min;
        let mut matches = 0u64;
        for item in array.items {
            if at.is_valid(&self.node, item) {
                matches += 1;
                if matches > max {
                    let message =
                        format!("Too many items match the given schema (expected at most {max})");
                    let mut e = at.fail(array.value, message);
                    e.keyword = Some("maxContains");
                    out.push(e);
                    return;
                }
            }
        }
        if matches >= min {
            return;
        }
        if matches == 0 {
            let message = format!(
                "{} does not contain items matching the given schema",
                repr(array.value)
            );
            out.push(at.fail(array.value, message));
        } else {
            let message = format!(
                "Too few items match the given schema (expected at least {min} but only {matches} matched)"
            );
            let mut e = at.fail(array.value, message);
            e.keyword = Some("minContains");
            out.push(e);
        }
    }
}
