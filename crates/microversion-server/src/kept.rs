//! Values kept until the process ends, read on every request without
//! counting references.
//!
//! A reference count that every request touches is a cache line that moves
//! between cores on each one (docs/decisions.md). What a
//! service describes once (its versions' header values, its route
//! templates) is therefore kept for the life of the process, once however
//! often it is asked for, so that building the same API again (test
//! suites do) keeps nothing more.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use http::HeaderValue;

/// `value` with bytes that live until the process ends: a clone copies a
/// pointer instead of counting a shared reference.
pub(crate) fn header_value(value: HeaderValue) -> HeaderValue {
    static KEPT: Mutex<BTreeSet<&'static [u8]>> = Mutex::new(BTreeSet::new());
    let bytes = kept(&KEPT, value.as_bytes());
    // The bytes were a valid value already.
    HeaderValue::from_maybe_shared(bytes::Bytes::from_static(bytes)).unwrap_or(value)
}

/// `text` (a route template), kept until the process ends.
#[cfg(feature = "metrics")]
pub(crate) fn text(text: &str) -> &'static str {
    static KEPT: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    kept(&KEPT, text)
}

/// The kept copy of `value` in `set`, made on first use.
fn kept<T>(set: &Mutex<BTreeSet<&'static T>>, value: &T) -> &'static T
where
    T: ?Sized + Ord,
    for<'a> Box<T>: From<&'a T>,
{
    let mut set = set.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&copy) = set.get(value) {
        return copy;
    }
    let copy: &'static T = Box::leak(Box::from(value));
    set.insert(copy);
    copy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_kept_once_and_reads_the_same() {
        let first = header_value(HeaderValue::from_str("placement 1.20").unwrap());
        let again = header_value(HeaderValue::from_str("placement 1.20").unwrap());
        assert_eq!(first, "placement 1.20");
        assert_eq!(again, "placement 1.20");
        assert!(std::ptr::eq(first.as_bytes(), again.as_bytes()));
        let other = header_value(HeaderValue::from_static("placement 1.21"));
        assert!(!std::ptr::eq(first.as_bytes(), other.as_bytes()));
    }

    #[cfg(feature = "metrics")]
    #[test]
    fn a_text_is_kept_once() {
        let path = String::from("/resource_providers/{uuid}");
        assert!(std::ptr::eq(
            text(&path),
            text("/resource_providers/{uuid}")
        ));
    }
}
