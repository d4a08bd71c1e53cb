//! The response headers the microversion layer adds to a Placement answer
//! at 1.20, made by hand as a service without the layer would make them:
//! the fair baseline of the layer benchmarks (BENCHMARKS.md, "Server layer
//! under load"). Shared by `bench_target` and `layer_requests` through
//! `#[path]`.
//!
//! The set is the layer's, name for name and byte for byte apart from the
//! id itself: `openstack-api-version: placement 1.20`, `vary:
//! openstack-api-version` (the Placement profile writes it lower case) and
//! `x-openstack-request-id: req-` followed by a new random UUID. The id is
//! made as cheaply as a careful service would: formatted on the stack,
//! then copied once into the header value.

use http::HeaderValue;
use http::header::{HeaderName, VARY};

/// The names, checked when compiled rather than on each request.
const OPENSTACK_API_VERSION: HeaderName = HeaderName::from_static("openstack-api-version");
const REQUEST_ID: HeaderName = HeaderName::from_static("x-openstack-request-id");

/// The three headers, with a new request id.
pub(crate) fn wire_headers() -> [(HeaderName, HeaderValue); 3] {
    [
        (
            OPENSTACK_API_VERSION,
            HeaderValue::from_static("placement 1.20"),
        ),
        (VARY, HeaderValue::from_static("openstack-api-version")),
        (REQUEST_ID, new_request_id()),
    ]
}

/// `req-` and a random (version 4) UUID, lower-case hyphenated.
fn new_request_id() -> HeaderValue {
    let mut buf = [0u8; 40];
    buf[..4].copy_from_slice(b"req-");
    uuid::Uuid::new_v4()
        .hyphenated()
        .encode_lower(&mut buf[4..]);
    HeaderValue::from_bytes(&buf).unwrap_or(HeaderValue::from_static("req-unknown"))
}
