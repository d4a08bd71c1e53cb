//! `oneOf`: no subschema passes (as `anyOf`), or several do (`3 is valid
//! under each of {'minimum': 0}, {'type': 'integer'}`).

use serde_json::Value;

use super::any_of::none_valid;
use super::{Compiled, Keyword, Site, keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};
use crate::repr::repr;

struct OneOf(Vec<Node>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(OneOf(site.subschemas(compiler)?))
}

impl Keyword for OneOf {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let mut context = Vec::new();
        let mut first_valid = None;
        for (index, node) in self.0.iter().enumerate() {
            let failures = at.descend(node, instance, None, Some(&PathItem::Index(index)));
            if failures.is_empty() {
                first_valid = Some(index);
                break;
            }
            context.extend(failures);
        }
        let Some(first) = first_valid else {
            out.push(none_valid(at, instance, context));
            return;
        };
        // Python lists the later valid subschemas, then the first.
        let mut valid: Vec<&Node> = self.0[first + 1..]
            .iter()
            .filter(|node| at.is_valid(node, instance))
            .collect();
        if valid.is_empty() {
            return;
        }
        valid.push(&self.0[first]);
        let shown: Vec<String> = valid.iter().map(|node| at.repr(node)).collect();
        let message = format!(
            "{} is valid under each of {}",
            repr(instance),
            shown.join(", ")
        );
        out.push(at.fail(instance, message));
    }
}
