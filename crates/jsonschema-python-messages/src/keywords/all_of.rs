//! `allOf`: the instance against every subschema.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct AllOf(Vec<Node>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(AllOf(site.subschemas(compiler)?))
}

impl Keyword for AllOf {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        for (index, node) in self.0.iter().enumerate() {
            out.extend(at.descend(node, instance, None, Some(&PathItem::Index(index))));
        }
    }
}
