//! Nova's wording of a malformed version (a version outside the range is
//! worded as API-SIG words it), and the fault bodies Nova and Cinder
//! share.

use http::{HeaderValue, StatusCode};
use microversion::InvalidVersion;

use crate::error::ApiError;

/// What Nova says of a malformed version.
pub(super) fn malformed(error: &InvalidVersion) -> String {
    format!(
        "API Version String {} is of invalid format. Must be of format MajorNum.MinorNum.",
        error.input_lossy()
    )
}

/// `{"<fault>": {"code": 400, "message": ".."}}`, the fault named after
/// the status.
pub(super) fn fault(error: &ApiError) -> (HeaderValue, String) {
    super::json(serde_json::json!({
        fault_name(error.status()): {"code": error.status().as_u16(), "message": error.detail()}
    }))
}

/// Nova's and Cinder's fault names, by status.
fn fault_name(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "badRequest",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "itemNotFound",
        405 => "badMethod",
        409 => "conflictingRequest",
        413 | 429 => "overLimit",
        415 => "badMediaType",
        501 => "notImplemented",
        503 => "serviceUnavailable",
        _ => "computeFault",
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ctx;
    use super::super::{malformed_detail, render};
    use super::*;
    use crate::Profile;

    #[test]
    fn fault_shape() {
        let (ct, body) = render(
            &Profile::Nova.rules(),
            &ApiError::bad_request("nope"),
            &ctx(),
        );
        assert_eq!(ct, "application/json");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&body).unwrap(),
            serde_json::json!({"badRequest": {"code": 400, "message": "nope"}})
        );
    }

    #[test]
    fn faults_are_named_after_the_status() {
        for (status, name) in [
            (400, "badRequest"),
            (401, "unauthorized"),
            (403, "forbidden"),
            (404, "itemNotFound"),
            (405, "badMethod"),
            (406, "computeFault"),
            (409, "conflictingRequest"),
            (413, "overLimit"),
            (415, "badMediaType"),
            (429, "overLimit"),
            (500, "computeFault"),
            (501, "notImplemented"),
            (503, "serviceUnavailable"),
        ] {
            let status = StatusCode::from_u16(status).unwrap();
            let (_, body) = render(
                &Profile::Cinder.rules(),
                &ApiError::new(status, "x"),
                &ctx(),
            );
            let want = serde_json::json!({name: {"code": status.as_u16(), "message": "x"}});
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&body).unwrap(),
                want,
                "{status}"
            );
        }
    }

    #[test]
    fn malformed_names_the_text_as_sent() {
        let error = microversion::Version::try_from_bytes(b"1.x").unwrap_err();
        assert_eq!(
            malformed_detail(&Profile::Nova.rules(), &error),
            "API Version String 1.x is of invalid format. Must be of format MajorNum.MinorNum."
        );
    }
}
