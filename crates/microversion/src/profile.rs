//! Profiles: the observable behaviour of each real microversioned server,
//! as a set of rules. The server crate's layer follows them and the
//! command-line checker expects them; this module only describes them.
//!
//! | rule | `api-sig` | `placement` | `nova` | `ironic` | `cinder` |
//! |---|---|---|---|---|---|
//! | legacy request header | none | none | `X-OpenStack-Nova-API-Version` | `X-OpenStack-Ironic-API-Version` | `OpenStack-Volume-microversion` |
//! | response version headers | standard | standard | standard and legacy | legacy only | standard and legacy |
//! | min/max headers on every response | no | no | no | yes | no |
//! | malformed version | 400 | 400 | 400 | 406 | 400 |
//! | `0.Y` | 400 | 406 (below the range) | 400 | 406 | 400 |
//! | `latest` | exact word | exact word | exact word | any case | exact word |
//! | `Vary` | yes | yes | yes | never | yes |
//! | version headers on the layer's 400/406 | Vary only | none | 406: the rejected version | none | Vary only |
//! | request id headers | `x-openstack-request-id` | same | also `x-compute-request-id` | also `openstack-request-id` | same as API-SIG |
//! | `GET /` reads the header | yes | yes | no | yes | yes |
//! | error body | API-SIG `errors[]` | `errors[]`, `code` from 1.23, HTML or text by `Accept` | `{"<fault>": {"code", "message"}}` | `{"error_message": "<json>"}` | `{"<fault>": {"code", "message"}}` |
//!
//! Cinder's row comes from its code: in `cinder/api/openstack/wsgi.py`,
//! `Resource.__call__` calls `Request.set_api_version_request` for every
//! resource, the versions controller of `cinder/api/versions.py` (which
//! serves `GET /` and has no `/v3` in its URL) included. A malformed
//! version is a 400 and one outside the range a 406 there too; without a
//! header the request is set to `_MIN_API_VERSION`, and
//! `Resource._process_stack` then puts `OpenStack-API-Version: volume 3.0`
//! and `Vary: OpenStack-API-Version` on the versions document (Cinder's
//! `VersionsControllerTestCase.test_versions_version_invalid` checks the
//! 400 on `/`).
//!
//! Observed but not reproduced, because no client should depend on it:
//! upstream Placement and Ironic parse versions with Python's `int()`, so
//! they accept `1.01`, `+1.2` and `1.1_0`; every profile here keeps the
//! strict grammar. Ironic reads only the last of repeated header lines;
//! here they are folded. Nova answers unknown paths with an HTML 404 and
//! no version headers; here the version headers are on every response.
//!
//! The `api-sig` profile is the default and follows the API-SIG guidelines.
//! Each other profile departs from them only where its server does, so that
//! a client written against the real server sees no difference.

use std::fmt;
use std::str::FromStr;

use crate::Version;
use http::{HeaderName, StatusCode};

/// A named set of behaviours reproducing one real server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// The OpenStack API-SIG guidelines, as written.
    #[default]
    ApiSig,
    /// OpenStack Placement 16.0.0.
    ///
    /// Departs from API-SIG: a 406 carries no version or Vary header (its
    /// microversion middleware fails before it knows a version); `0.5` is
    /// read as a version below the range (406), because upstream splits on
    /// the dot and compares numbers; error bodies carry `code` only from
    /// 1.23, and follow `Accept` (HTML, plain text or JSON) as webob does,
    /// their text webob's page of the error.
    Placement,
    /// OpenStack Nova 34.0.0 (compute API).
    ///
    /// Departs from API-SIG: also reads and echoes
    /// `X-OpenStack-Nova-API-Version`; a 406 echoes the rejected version in
    /// both headers; `GET /` ignores the version header (the versions
    /// document is not versioned); error bodies are `{"computeFault": ..}`
    /// style objects named after the error.
    Nova,
    /// OpenStack Ironic 39.0.0 (bare metal API).
    ///
    /// Departs from API-SIG: reads and echoes only the legacy
    /// `X-OpenStack-Ironic-API-Version` in responses; every response carries
    /// the supported range in `X-OpenStack-Ironic-API-Minimum-Version` and
    /// `-Maximum-Version`; a malformed version is 406, not 400; `latest` is
    /// accepted in any case; errors are `{"error_message": "<json text>"}`.
    Ironic,
    /// OpenStack Cinder (block storage API v3), from its code and spec.
    ///
    /// Departs from API-SIG: also reads and echoes
    /// `OpenStack-Volume-microversion`; error bodies are Nova-style fault
    /// objects. `GET /` reads the version header like any path.
    Cinder,
}

impl Profile {
    /// Every profile, for tests and help texts.
    pub const ALL: [Profile; 5] = [
        Profile::ApiSig,
        Profile::Placement,
        Profile::Nova,
        Profile::Ironic,
        Profile::Cinder,
    ];

    /// The profile's name, as accepted by [`FromStr`]: `api-sig`,
    /// `placement`, `nova`, `ironic`, `cinder`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Profile::ApiSig => "api-sig",
            Profile::Placement => "placement",
            Profile::Nova => "nova",
            Profile::Ironic => "ironic",
            Profile::Cinder => "cinder",
        }
    }

    /// The rules this profile follows.
    #[must_use]
    pub fn rules(self) -> Rules {
        let api_sig = Rules {
            legacy_header: None,
            echo_standard: true,
            echo_legacy: false,
            vary: true,
            vary_lowercase: false,
            range_headers: None,
            malformed_status: StatusCode::BAD_REQUEST,
            zero_major_is_unsupported: false,
            latest_any_case: false,
            version_error_headers: VersionErrorHeaders::VaryOnly,
            root_is_versioned: true,
            error_format: ErrorFormat::ApiSig,
            error_code_since: None,
            default_error_code: None,
            messages: Messages::ApiSig,
            request_id_aliases: Vec::new(),
        };
        match self {
            Profile::ApiSig => api_sig,
            Profile::Placement => Rules {
                vary_lowercase: true,
                zero_major_is_unsupported: true,
                version_error_headers: VersionErrorHeaders::None,
                error_format: ErrorFormat::Placement,
                error_code_since: Some(Version::new(1, 23)),
                default_error_code: Some("placement.undefined_code".to_owned()),
                messages: Messages::Placement,
                ..api_sig
            },
            Profile::Nova => Rules {
                legacy_header: Some(HeaderName::from_static("x-openstack-nova-api-version")),
                echo_legacy: true,
                version_error_headers: VersionErrorHeaders::RejectedVersion,
                root_is_versioned: false,
                error_format: ErrorFormat::Fault,
                messages: Messages::Nova,
                request_id_aliases: vec![HeaderName::from_static("x-compute-request-id")],
                ..api_sig
            },
            Profile::Ironic => Rules {
                legacy_header: Some(HeaderName::from_static("x-openstack-ironic-api-version")),
                echo_standard: false,
                echo_legacy: true,
                vary: false,
                range_headers: Some((
                    HeaderName::from_static("x-openstack-ironic-api-minimum-version"),
                    HeaderName::from_static("x-openstack-ironic-api-maximum-version"),
                )),
                malformed_status: StatusCode::NOT_ACCEPTABLE,
                zero_major_is_unsupported: true,
                latest_any_case: true,
                version_error_headers: VersionErrorHeaders::None,
                error_format: ErrorFormat::Ironic,
                messages: Messages::Ironic,
                request_id_aliases: vec![HeaderName::from_static("openstack-request-id")],
                ..api_sig
            },
            Profile::Cinder => Rules {
                legacy_header: Some(HeaderName::from_static("openstack-volume-microversion")),
                echo_legacy: true,
                error_format: ErrorFormat::Fault,
                ..api_sig
            },
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile name that is not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownProfile {
    input: String,
}

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown profile {:?}: expected one of api-sig, placement, nova, ironic, cinder",
            self.input
        )
    }
}

impl std::error::Error for UnknownProfile {}

impl FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownProfile {
                input: s.to_owned(),
            })
    }
}

/// Which version headers the layer's own 400 and 406 answers carry.
///
/// A closed set, like [`Messages`] and [`ErrorFormat`]: the server crate
/// matches every variant, so one added here is a compile error there
/// until it is implemented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VersionErrorHeaders {
    /// `Vary` only: no version was served.
    VaryOnly,
    /// Neither version headers nor `Vary` (Placement, Ironic).
    None,
    /// A 406 echoes the rejected version in the version headers, with
    /// `Vary`; a 400 carries neither (Nova).
    RejectedVersion,
}

/// The wording of the layer's own version errors.
///
/// A closed set: the server crate words each one, and a variant added
/// here is a compile error there until it is worded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Messages {
    /// "Version 1.999 is not supported by the API. Minimum is 1.0 and
    /// maximum is 1.39." and "Invalid OpenStack-API-Version header: ...".
    ApiSig,
    /// Placement's: "... Invalid microversion: Unacceptable version header:
    /// 1.999" and "... Invalid microversion: invalid version string: 1.2.3".
    Placement,
    /// Nova's: "API Version String 1.2.3 is of invalid format. Must be of
    /// format MajorNum.MinorNum." and the API-SIG 406 wording.
    Nova,
    /// Ironic's: "Version 1.999 was requested but the minor version is not
    /// supported by this service. The supported version range is: [1.1,
    /// 1.115]." and "Invalid value for X-OpenStack-Ironic-API-Version
    /// header".
    Ironic,
}

/// The shape of error bodies.
///
/// A closed set: the server crate renders each one, and a variant added
/// here is a compile error there until it is rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorFormat {
    /// API-SIG: `{"errors": [{"status", "title", "detail", ...}]}`.
    ApiSig,
    /// Placement: API-SIG JSON, or HTML or plain text when `Accept` prefers
    /// them (webob's choice), each made from webob's page of the error: the
    /// JSON `detail` is the status's explanation, a blank line, then the
    /// message on one line (its newlines spaces), as upstream's.
    Placement,
    /// Nova and Cinder: `{"badRequest": {"code": 400, "message": ".."}}`,
    /// the key named after the error.
    Fault,
    /// Ironic: `{"error_message": "{\"faultstring\": .., \"faultcode\": ..}"}`.
    Ironic,
}

/// The rules a profile sets. Start from [`Profile::rules`] and change
/// fields to describe a server no profile matches.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rules {
    /// A legacy header read when the standard one has no entry.
    pub legacy_header: Option<HeaderName>,
    /// Whether responses carry the standard header.
    pub echo_standard: bool,
    /// Whether responses carry the legacy header.
    pub echo_legacy: bool,
    /// Whether responses carry `Vary` naming the version headers.
    pub vary: bool,
    /// Whether `Vary` names the headers in lower case (Placement), rather
    /// than in their usual spelling.
    pub vary_lowercase: bool,
    /// Headers carrying the minimum and maximum on every response.
    pub range_headers: Option<(HeaderName, HeaderName)>,
    /// The status for a malformed version: 400, or 406.
    pub malformed_status: StatusCode,
    /// Whether `0.Y` is read as a version below the range (406) rather than
    /// malformed.
    pub zero_major_is_unsupported: bool,
    /// Whether `latest` is accepted in any case.
    pub latest_any_case: bool,
    /// Which version headers the layer's 400 and 406 carry.
    pub version_error_headers: VersionErrorHeaders,
    /// Whether `GET /` reads the version header.
    pub root_is_versioned: bool,
    /// The shape of error bodies.
    pub error_format: ErrorFormat,
    /// From which served version error bodies carry `code` (`None`: always,
    /// when a code is set).
    pub error_code_since: Option<Version>,
    /// The code of errors that set none, where codes are carried.
    pub default_error_code: Option<String>,
    /// The wording of the layer's version errors.
    pub messages: Messages,
    /// More headers carrying the request id (Nova's `x-compute-request-id`).
    pub request_id_aliases: Vec<HeaderName>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Profile::ALL {
            assert_eq!(p.name().parse(), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!("NOVA".parse(), Ok(Profile::Nova));
        let err = "keystone".parse::<Profile>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown profile \"keystone\": expected one of api-sig, placement, nova, ironic, cinder"
        );
    }

    #[test]
    fn only_nova_serves_the_root_without_reading_the_header() {
        for p in Profile::ALL {
            assert_eq!(p.rules().root_is_versioned, p != Profile::Nova, "{p}");
        }
    }

    #[test]
    fn ironic_echoes_only_legacy() {
        let r = Profile::Ironic.rules();
        assert!(!r.echo_standard && r.echo_legacy);
        assert_eq!(r.malformed_status, StatusCode::NOT_ACCEPTABLE);
    }
}
