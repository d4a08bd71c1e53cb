//! `oneOf`: no subschema passes (as `anyOf`), or several do (`3 is valid
//! under each of {'minimum': 0}, {'type': 'integer'}`).

use serde_json::Value;

use super::any_of::none_valid;
use super::subschemas::Subschemas;
use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};
use crate::repr::repr;

struct OneOf(Subschemas);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(OneOf(Subschemas::compile(site, compiler)?))
}

impl Keyword for OneOf {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let first = match self.0.first_valid(at, instance) {
            Ok(first) => first,
            Err(context) => {
                out.push(none_valid(at, instance, context));
                return;
            }
        };
        // Python lists the later valid subschemas, then the first.
        let nodes = self.0.nodes();
        let mut valid: Vec<&Node> = nodes[first + 1..]
            .iter()
            .filter(|node| at.is_valid(node, instance))
            .collect();
        if valid.is_empty() {
            return;
        }
        valid.push(&nodes[first]);
        let shown: Vec<String> = valid.iter().map(|node| at.repr(node)).collect();
        let message = format!(
            "{} is valid under each of {}",
            repr(instance),
            shown.join(", ")
        );
        out.push(at.fail(instance, message));
    }
}
