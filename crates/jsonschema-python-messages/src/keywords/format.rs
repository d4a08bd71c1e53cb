//! `format`: `'x' is not a 'uuid'`, checked by the schema's
//! [`FormatChecker`](crate::FormatChecker).

use serde_json::Value;

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::{repr, repr_str};

struct Format {
    name: String,
    /// The name's repr, as the message prints it.
    shown: String,
}

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    let name = site.value.as_str().ok_or_else(|| site.not_a("a string"))?;
    keyword(Format {
        name: name.to_owned(),
        shown: repr_str(name),
    })
}

impl Keyword for Format {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        if !at.formats().conforms(&self.name, instance) {
            let message = format!("{} is not a {}", repr(instance), self.shown);
            out.push(at.fail(instance, message));
        }
    }
}
