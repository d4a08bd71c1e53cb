//! `pattern`: `'instance' does not match '^[A-Z0-9_]+$'`, found as
//! Python's `re.search` finds it.

use std::sync::Arc;

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::{At, Compiler};
use crate::regex::PythonRegex;
use crate::repr::{repr, repr_str};

struct Pattern {
    regex: Arc<PythonRegex>,
    /// The pattern's repr, as the message prints it.
    shown: String,
}

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    let pattern = site.value.as_str().ok_or_else(|| site.not_a("a string"))?;
    keyword(Pattern {
        regex: compiler.regex(pattern, &site.location)?,
        shown: repr_str(pattern),
    })
}

impl Keyword for Pattern {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        if let Value::String(text) = instance {
            if !self.regex.search(text) {
                let message = format!("{} does not match {}", repr(instance), self.shown);
                out.push(at.fail(instance, message));
            }
        }
    }
}
