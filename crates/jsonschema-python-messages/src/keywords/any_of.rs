//! `anyOf`: `3 is not valid under any of the given schemas`, with the
//! failures under each subschema as the error's context.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};
use crate::repr::repr;

struct AnyOf(Vec<Node>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(AnyOf(site.subschemas(compiler)?))
}

impl Keyword for AnyOf {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let mut context = Vec::new();
        for (index, node) in self.0.iter().enumerate() {
            let failures = at.descend(node, instance, None, Some(&PathItem::Index(index)));
            if failures.is_empty() {
                return;
            }
            context.extend(failures);
        }
        out.push(none_valid(at, instance, context));
    }
}

/// The failure of `anyOf` or `oneOf` when no subschema passes.
pub(crate) fn none_valid<'s, 'i>(
    at: &At<'s>,
    instance: &'i Value,
    context: Vec<Failure<'s, 'i>>,
) -> Failure<'s, 'i> {
    let message = format!(
        "{} is not valid under any of the given schemas",
        repr(instance)
    );
    let mut e = at.fail(instance, message);
    e.context = context;
    e
}
