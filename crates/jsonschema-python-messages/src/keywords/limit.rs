//! The bounds on a number: `minimum`, `maximum`, `exclusiveMinimum` and
//! `exclusiveMaximum` (`0 is less than the minimum of 1`).

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::{repr, repr_number};
use crate::value::{is_number, num_cmp};

struct Limit {
    limit: Number,
    /// How the instance compares with the limit when it fails.
    fails_when: fn(Ordering) -> bool,
    /// The message's words between the instance and the limit.
    words: &'static str,
}

pub(crate) fn compile(name: &str, site: &Site<'_>) -> Compiled {
    let limit = is_number(site.value).ok_or_else(|| site.not_a("a number"))?;
    let (fails_when, words): (fn(Ordering) -> bool, _) = match name {
        "minimum" => (Ordering::is_lt, "is less than the minimum of"),
        "maximum" => (Ordering::is_gt, "is greater than the maximum of"),
        "exclusiveMinimum" => (Ordering::is_le, "is less than or equal to the minimum of"),
        "exclusiveMaximum" => (
            Ordering::is_ge,
            "is greater than or equal to the maximum of",
        ),
        _ => return Ok(None),
    };
    keyword(Limit {
        limit: limit.clone(),
        fails_when,
        words,
    })
}

impl Keyword for Limit {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let Some(n) = is_number(instance) else {
            return;
        };
        if num_cmp(n, &self.limit).is_some_and(self.fails_when) {
            let message = format!(
                "{} {} {}",
                repr(instance),
                self.words,
                repr_number(&self.limit)
            );
            out.push(at.fail(instance, message));
        }
    }
}
