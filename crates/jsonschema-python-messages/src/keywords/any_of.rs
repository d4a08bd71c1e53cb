//! `anyOf`: `3 is not valid under any of the given schemas`, with the
//! failures under each subschema as the error's context.

use serde_json::Value;

use super::subschemas::Subschemas;
use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::{At, Compiler};
use crate::repr::repr;

struct AnyOf(Subschemas);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(AnyOf(Subschemas::compile(site, compiler)?))
}

impl Keyword for AnyOf {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        if let Err(context) = self.0.first_valid(at, instance) {
            out.push(none_valid(at, instance, context));
        }
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
