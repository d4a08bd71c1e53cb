//! `dependentSchemas`: the whole object against a subschema when it has
//! a given property.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct DependentSchemas(Vec<(String, Node)>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(DependentSchemas(site.subschemas_by_name(compiler)?))
}

impl Keyword for DependentSchemas {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let Value::Object(members) = instance else {
            return;
        };
        for (property, node) in &self.0 {
            if members.contains_key(property) {
                let step = PathItem::Key(property.clone());
                out.extend(at.descend(node, instance, None, Some(&step)));
            }
        }
    }
}
