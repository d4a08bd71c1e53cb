//! `dependentSchemas`: the whole object against a subschema when it has
//! a given property.

use super::{Compiled, Object, ObjectKeyword, Site, object_keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct DependentSchemas(Vec<(String, Node)>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    object_keyword(DependentSchemas(site.subschemas_by_name(compiler)?))
}

impl ObjectKeyword for DependentSchemas {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, object: Object<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        for (property, node) in &self.0 {
            if object.members.contains_key(property) {
                let step = PathItem::Key(property.clone());
                out.extend(at.descend(node, object.value, None, Some(&step)));
            }
        }
    }
}
