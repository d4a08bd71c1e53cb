//! `properties`: each named member against its subschema.

use super::{Compiled, Object, ObjectKeyword, Site, object_keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct Properties(Vec<(String, Node)>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    object_keyword(Properties(site.subschemas_by_name(compiler)?))
}

impl ObjectKeyword for Properties {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, object: Object<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        for (name, node) in &self.0 {
            if let Some(item) = object.members.get(name) {
                let step = PathItem::Key(name.clone());
                out.extend(at.descend(node, item, Some(&step), Some(&step)));
            }
        }
    }
}
