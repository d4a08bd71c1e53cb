//! `const`: `{'a': [1, None]} was expected`.

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::repr;
use crate::value::equal;

struct Const {
    value: Value,
    /// The value's repr, as the message prints it.
    shown: String,
}

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    keyword(Const {
        value: site.value.clone(),
        shown: repr(site.value),
    })
}

impl Keyword for Const {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        if !equal(instance, &self.value) {
            out.push(at.fail(instance, format!("{} was expected", self.shown)));
        }
    }
}
