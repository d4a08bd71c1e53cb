//! `allOf`: the instance against every subschema.

use serde_json::Value;

use super::subschemas::Subschemas;
use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::{At, Compiler};

struct AllOf(Subschemas);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(AllOf(Subschemas::compile(site, compiler)?))
}

impl Keyword for AllOf {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        for failures in self.0.failures(at, instance) {
            out.extend(failures);
        }
    }
}
