//! `enum`: `'c' is not one of ['a', 'b', 1]`.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::repr;
use crate::value::equal;

struct Enum {
    options: Vec<Value>,
    /// The options' repr, as the message prints them.
    shown: String,
}

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    let options = site
        .value
        .as_array()
        .ok_or_else(|| site.not_a("an array"))?;
    keyword(Enum {
        options: options.clone(),
        shown: repr(site.value),
    })
}

impl Keyword for Enum {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        if !self.options.iter().any(|option| equal(option, instance)) {
            let message = format!("{} is not one of {}", repr(instance), self.shown);
            out.push(at.fail(instance, message));
        }
    }
}
