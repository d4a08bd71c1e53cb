//! `prefixItems`: the first items, each against its own subschema.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct PrefixItems(Vec<Node>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(PrefixItems(site.subschemas(compiler)?))
}

impl Keyword for PrefixItems {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let Value::Array(items) = instance else {
            return;
        };
        for (index, (item, node)) in items.iter().zip(&self.0).enumerate() {
            let step = PathItem::Index(index);
            out.extend(at.descend(node, item, Some(&step), Some(&step)));
        }
    }
}
