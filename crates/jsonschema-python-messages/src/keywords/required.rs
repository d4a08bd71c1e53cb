//! `required`: `'name' is a required property`.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::repr_str;

struct Required(Vec<String>);

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    keyword(Required(site.strings()?))
}

impl Keyword for Required {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let Value::Object(members) = instance else {
            return;
        };
        for name in &self.0 {
            if !members.contains_key(name) {
                let message = format!("{} is a required property", repr_str(name));
                out.push(at.fail(instance, message));
            }
        }
    }
}
