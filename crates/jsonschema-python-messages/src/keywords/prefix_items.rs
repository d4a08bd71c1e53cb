//! `prefixItems`: the first items, each against its own subschema.

use super::{Array, ArrayKeyword, Compiled, Site, array_keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct PrefixItems(Vec<Node>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    array_keyword(PrefixItems(site.subschemas(compiler)?))
}

impl ArrayKeyword for PrefixItems {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, array: Array<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        for (index, (item, node)) in array.items.iter().zip(&self.0).enumerate() {
            let step = PathItem::Index(index);
            out.extend(at.descend(node, item, Some(&step), Some(&step)));
        }
    }
}
