//! `properties`: each named member against its subschema.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct Properties(Vec<(String, Node)>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(Properties(site.subschemas_by_name(compiler)?))
}

impl Keyword for Properties {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let Value::Object(members) = instance else {
            return;
        };
        for (name, node) in &self.0 {
            if let Some(item) = members.get(name) {
                let step = PathItem::Key(name.clone());
                out.extend(at.descend(node, item, Some(&step), Some(&step)));
            }
        }
    }
}
