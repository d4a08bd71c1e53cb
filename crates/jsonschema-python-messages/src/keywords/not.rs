//! `not`: `'x' should not be valid under {'type': 'string'}`.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};
use crate::repr::repr;

struct Not(Node);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(Not(site.subschema(compiler)?))
}

impl Keyword for Not {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        if at.is_valid(&self.0, instance) {
            let message = format!(
                "{} should not be valid under {}",
                repr(instance),
                at.repr(&self.0)
            );
            out.push(at.fail(instance, message));
        }
    }
}
