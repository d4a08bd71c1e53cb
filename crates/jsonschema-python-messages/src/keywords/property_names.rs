//! `propertyNames`: each member's name against a subschema. As in
//! Python, a failure's instance is the name and its path the object's.

use serde_json::Value;

use super::{Compiled, Object, ObjectKeyword, Site, object_keyword};
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

struct PropertyNames(Node);

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    object_keyword(PropertyNames(site.subschema(compiler)?))
}

impl ObjectKeyword for PropertyNames {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, object: Object<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        for name in object.members.keys() {
            let name = Value::String(name.clone());
            let failures = at.descend(&self.0, &name, None, None);
            out.extend(failures.into_iter().map(Failure::into_owned));
        }
    }
}
