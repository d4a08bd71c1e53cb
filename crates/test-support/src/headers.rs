//! Header maps from literals.

use http::{HeaderMap, HeaderName, HeaderValue};

/// A header map of `pairs`, in order; a name given twice gets two values,
/// as two header lines would.
///
/// # Panics
///
/// When a name is not a valid lowercase header name or a value is not a
/// valid header value (see [`HeaderName::from_static`]).
pub fn header_map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    map
}
