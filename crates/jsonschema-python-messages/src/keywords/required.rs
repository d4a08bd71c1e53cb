//! `required`: `'name' is a required property`.

use super::{Compiled, Object, ObjectKeyword, Site, object_keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::repr_str;

struct Required(Vec<String>);

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    object_keyword(Required(site.strings()?))
}

impl ObjectKeyword for Required {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, object: Object<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        for name in &self.0 {
            if !object.members.contains_key(name) {
                let message = format!("{} is a required property", repr_str(name));
                out.push(at.fail(object.value, message));
            }
        }
    }
}
