//! `propertyNames`: each member's name against a subschema. As in
//! Python, a failure's instance is the name and its path the object's.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct PropertyNames(Node);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    keyword(PropertyNames(site.subschema(compiler)?))
}

impl Keyword for PropertyNames {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let Value::Object(members) = instance else {
            return;
        };
        for name in members.keys() {
            let name = Value::String(name.clone());
            let failures = at.descend(&self.0, &name, None, None);
            out.extend(failures.into_iter().map(Failure::into_owned));
        }
    }
}
