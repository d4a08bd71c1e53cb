//! `multipleOf`: `7 is not a multiple of 3`.

use serde_json::{Number, Value};

use super::{Compiled, Keyword, Site, keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::{repr, repr_number};
use crate::value::is_number;

struct MultipleOf(Number);

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    match site.value {
        Value::Number(by) if by.as_f64().is_some_and(|f| f > 0.0) => {
            keyword(MultipleOf(by.clone()))
        }
        _ => Err(site.not_a("a number above 0")),
    }
}

impl MultipleOf {
    /// Whether `n` is not a multiple, computed as Python does: in floats
    /// when the divisor is a float, else exactly.
    fn fails(&self, n: &Number) -> bool {
        let by = &self.0;
        let float = |n: &Number| n.as_f64().unwrap_or(f64::NAN);
        if by.is_f64() {
            let quotient = float(n) / float(by);
            quotient.trunc() != quotient
        } else if let (Some(a), Some(b)) = (n.as_i64(), by.as_i64()) {
            b != 0 && a % b != 0
        } else {
            float(n) % float(by) != 0.0
        }
    }
}

impl Keyword for MultipleOf {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        if is_number(instance).is_some_and(|n| self.fails(n)) {
            let message = format!(
                "{} is not a multiple of {}",
                repr(instance),
                repr_number(&self.0)
            );
            out.push(at.fail(instance, message));
        }
    }
}
