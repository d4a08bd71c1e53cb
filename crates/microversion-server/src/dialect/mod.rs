//! How the layer words its refusals and renders error bodies: API-SIG's
//! way here (docs/wire.md, the default), and each profile that departs
//! from it in a module of its own.
//!
//! The rules name a wording ([`Messages`]) and a body format
//! ([`ErrorFormat`]), each read on its own: [`malformed_detail`] and
//! [`unsupported_detail`] match the wording exhaustively, [`render`] the
//! format. Both enums are closed sets, so a wording or format added to
//! the core crate is a compile error here until it is written, rather
//! than an answer in API-SIG's words.
//!
//! - [`placement`]: upstream Placement's texts (Python's `int()` and
//!   `repr()`, as microversion_parse quotes them) and webob's error pages,
//!   chosen by `Accept`.
//! - [`nova`]: Nova's wording of a malformed version, and the fault
//!   bodies Nova and Cinder share.
//! - [`ironic`]: Ironic's wording and its `error_message` bodies.
//!
//! None of this is on the path of a request that is served: the layer
//! comes here only for a refusal or a response that carries an
//! [`ApiError`].

use http::{HeaderValue, Method};
use microversion::profile::{ErrorFormat, Messages, Rules};
use microversion::{ErrorBody, ErrorEntry, InvalidVersion, Version, VersionRange};

use crate::error::ApiError;

mod ironic;
mod nova;
mod placement;

/// What an error body may mention besides the error itself.
#[derive(Clone, Debug, Default)]
pub(crate) struct ErrorContext<'a> {
    pub(crate) request_id: Option<&'a str>,
    /// The version that served the request, if one did.
    pub(crate) served: Option<Version>,
    /// The supported range, on version errors.
    pub(crate) range: Option<VersionRange>,
    /// The request's `Accept`, for formats that follow it.
    pub(crate) accept: Option<&'a HeaderValue>,
    /// The request's method, for formats that name it.
    pub(crate) method: Option<&'a Method>,
    /// The request's `Content-Type`, for formats that name it.
    pub(crate) content_type: Option<&'a HeaderValue>,
}

/// What the layer says of a malformed version, in the words of `rules`.
pub(crate) fn malformed_detail(rules: &Rules, error: &InvalidVersion) -> String {
    // Exhaustive: a new wording does not compile until it is written here.
    match rules.messages {
        Messages::ApiSig => format!("Invalid OpenStack-API-Version header: {error}"),
        Messages::Placement => placement::malformed(error),
        Messages::Nova => nova::malformed(error),
        Messages::Ironic => ironic::malformed(rules),
    }
}

/// What the layer says of a well-formed version outside `range`, in the
/// words of `rules`.
pub(crate) fn unsupported_detail(rules: &Rules, range: VersionRange, requested: Version) -> String {
    // Exhaustive: a new wording does not compile until it is written here.
    match rules.messages {
        Messages::ApiSig | Messages::Nova => format!(
            "Version {requested} is not supported by the API. Minimum is {} and maximum is {}.",
            range.min(),
            range.max()
        ),
        Messages::Placement => placement::unsupported(requested),
        Messages::Ironic => ironic::unsupported(range, requested),
    }
}

/// Renders `error` in the format of `rules`: the content type and the body.
pub(crate) fn render(
    rules: &Rules,
    error: &ApiError,
    ctx: &ErrorContext<'_>,
) -> (HeaderValue, String) {
    // Exhaustive: a new format does not compile until it is rendered here.
    match rules.error_format {
        ErrorFormat::ApiSig => json(api_sig_body(rules, error, error.detail().to_owned(), ctx)),
        ErrorFormat::Placement => placement::render(rules, error, ctx),
        ErrorFormat::Fault => nova::fault(error),
        ErrorFormat::Ironic => ironic::render(error),
    }
}

/// An `application/json` body.
fn json(body: impl serde::Serialize) -> (HeaderValue, String) {
    (
        HeaderValue::from_static("application/json"),
        serde_json::to_string(&body).unwrap_or_else(|_| String::from("{}")),
    )
}

/// The API-SIG body of `error`, with `detail` as its detail: the code
/// where `rules` carry one at the served version, the request id, and the
/// range on a version error.
fn api_sig_body(
    rules: &Rules,
    error: &ApiError,
    detail: String,
    ctx: &ErrorContext<'_>,
) -> ErrorBody {
    let mut entry = ErrorEntry::new(error.status(), detail);
    let code_allowed = match (rules.error_code_since, ctx.served) {
        (None, _) => true,
        (Some(since), Some(served)) => served >= since,
        (Some(_), None) => false,
    };
    if code_allowed {
        entry.code = error
            .code()
            .map(str::to_owned)
            .or_else(|| rules.error_code_since.and(rules.default_error_code.clone()));
    }
    entry.request_id = ctx.request_id.map(str::to_owned);
    if let Some(range) = ctx.range {
        entry = entry.with_range(range);
    }
    ErrorBody::single(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;
    use http::StatusCode;

    pub(super) fn ctx() -> ErrorContext<'static> {
        ErrorContext {
            request_id: Some("req-1"),
            ..ErrorContext::default()
        }
    }

    #[test]
    fn api_sig_json() {
        let (ct, body) = render(
            &Profile::ApiSig.rules(),
            &ApiError::bad_request("bad").with_code("x.y"),
            &ctx(),
        );
        assert_eq!(ct, "application/json");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"errors": [{"status": 400, "title": "Bad Request",
                "detail": "bad", "code": "x.y", "request_id": "req-1"}]})
        );
    }

    /// The wording and the format are read on their own: rules that mix
    /// them (Cinder's API-SIG words in fault bodies, or a profile changed
    /// field by field) get each as the rules name it.
    #[test]
    fn wording_and_format_are_independent() {
        let range = VersionRange::from_static("1.0", "1.39");
        let asked = Version::new(1, 99);
        let mut rules = Profile::Placement.rules();
        rules.error_format = ErrorFormat::ApiSig;
        let detail = unsupported_detail(&rules, range, asked);
        assert_eq!(
            detail,
            "Invalid microversion: Unacceptable version header: 1.99"
        );
        // API-SIG's body, so no webob page around the message.
        let ctx = ErrorContext {
            range: Some(range),
            ..ctx()
        };
        let (ct, body) = render(
            &rules,
            &ApiError::new(StatusCode::NOT_ACCEPTABLE, detail),
            &ctx,
        );
        assert_eq!(ct, "application/json");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&body).unwrap(),
            serde_json::json!({"errors": [{"status": 406, "title": "Not Acceptable",
                "detail": "Invalid microversion: Unacceptable version header: 1.99",
                "request_id": "req-1", "min_version": "1.0", "max_version": "1.39"}]})
        );
        let cinder = Profile::Cinder.rules();
        assert_eq!(
            unsupported_detail(&cinder, range, asked),
            "Version 1.99 is not supported by the API. Minimum is 1.0 and maximum is 1.39."
        );
        let error = Version::try_from_bytes(b"1.a").unwrap_err();
        assert_eq!(
            malformed_detail(&cinder, &error),
            format!("Invalid OpenStack-API-Version header: {error}")
        );
    }
}
