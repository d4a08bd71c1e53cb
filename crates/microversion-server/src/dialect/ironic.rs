//! Ironic's wording of the layer's refusals, and its error bodies: the
//! fault as JSON text inside `{"error_message": ".."}`.

use http::HeaderValue;
use microversion::profile::Rules;
use microversion::{Version, VersionRange};

use crate::config::canonical;
use crate::error::ApiError;

/// What Ironic says of a malformed version: it names the header, not the
/// text.
pub(super) fn malformed(rules: &Rules) -> String {
    match &rules.legacy_header {
        Some(name) => format!("Invalid value for {} header", canonical(name.as_str())),
        None => "Invalid value for OpenStack-API-Version header".to_owned(),
    }
}

/// What Ironic says of a version outside `range`: another major version
/// is "mutually exclusive".
pub(super) fn unsupported(range: VersionRange, requested: Version) -> String {
    let (min, max) = (range.min(), range.max());
    if requested.major() == max.major() {
        format!(
            "Version {requested} was requested but the minor version is not supported by this service. The supported version range is: [{min}, {max}]."
        )
    } else {
        format!(
            "Mutually exclusive versions requested. Version {requested} requested but not supported by this service. The supported version range is: [{min}, {max}]."
        )
    }
}

/// `{"error_message": "{\"faultstring\": .., \"faultcode\": .., \"debuginfo\": null}"}`.
pub(super) fn render(error: &ApiError) -> (HeaderValue, String) {
    let fault = serde_json::json!({
        "faultstring": error.detail(),
        "faultcode": if error.status().is_server_error() { "Server" } else { "Client" },
        "debuginfo": null,
    });
    super::json(serde_json::json!({"error_message": fault.to_string()}))
}

#[cfg(test)]
mod tests {
    use super::super::tests::ctx;
    use super::super::{malformed_detail, render, unsupported_detail};
    use super::*;
    use crate::Profile;
    use http::StatusCode;

    fn inner(error: &ApiError) -> serde_json::Value {
        let (ct, body) = render(&Profile::Ironic.rules(), error, &ctx());
        assert_eq!(ct, "application/json");
        let outer: serde_json::Value = serde_json::from_str(&body).unwrap();
        serde_json::from_str(outer["error_message"].as_str().unwrap()).unwrap()
    }

    #[test]
    fn error_message_holds_the_fault_as_text() {
        let fault = inner(&ApiError::new(StatusCode::NOT_ACCEPTABLE, "too new"));
        assert_eq!(fault["faultstring"], "too new");
        assert_eq!(fault["faultcode"], "Client");
        assert_eq!(
            inner(&ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "down")),
            serde_json::json!({"faultstring": "down", "faultcode": "Server", "debuginfo": null})
        );
    }

    #[test]
    fn refusals_name_the_header_and_the_range() {
        let rules = Profile::Ironic.rules();
        let error = Version::try_from_bytes(b"1.x").unwrap_err();
        assert_eq!(
            malformed_detail(&rules, &error),
            "Invalid value for X-OpenStack-Ironic-API-Version header"
        );
        // Rules without the legacy header name the standard one.
        let mut standard_only = rules.clone();
        standard_only.legacy_header = None;
        assert_eq!(
            malformed_detail(&standard_only, &error),
            "Invalid value for OpenStack-API-Version header"
        );
        let range = VersionRange::from_static("1.1", "1.115");
        assert_eq!(
            unsupported_detail(&rules, range, Version::new(1, 999)),
            "Version 1.999 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.115]."
        );
        assert_eq!(
            unsupported_detail(&rules, range, Version::new(2, 0)),
            "Mutually exclusive versions requested. Version 2.0 requested but not supported by this service. The supported version range is: [1.1, 1.115]."
        );
    }
}
