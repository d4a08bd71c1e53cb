//! `patternProperties`: each member whose name a pattern finds, against
//! that pattern's subschema.

use std::sync::Arc;

use super::{Compiled, Object, ObjectKeyword, Site, object_keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};
use crate::regex::PythonRegex;

struct PatternProperties(Vec<(PathItem, Arc<PythonRegex>, Node)>);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    let subs = site
        .value
        .as_object()
        .ok_or_else(|| site.not_a("an object of schemas"))?;
    let mut patterns = Vec::with_capacity(subs.len());
    for (pattern, sub) in subs {
        let regex = compiler.regex(pattern, &site.location)?;
        let node = compiler.node(sub, site.location.key(pattern))?;
        patterns.push((PathItem::Key(pattern.clone()), regex, node));
    }
    object_keyword(PatternProperties(patterns))
}

impl ObjectKeyword for PatternProperties {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, object: Object<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        for (pattern, regex, node) in &self.0 {
            for (name, item) in object.members {
                if regex.search(name) {
                    let name = PathItem::Key(name.clone());
                    out.extend(at.descend(node, item, Some(&name), Some(pattern)));
                }
            }
        }
    }
}
