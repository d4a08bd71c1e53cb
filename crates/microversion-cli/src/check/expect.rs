//! What the checked server must do: a profile's [`Rules`] (the core
//! crate's single source of what each profile promises), or, without a
//! profile, docs/wire.md as written (the `api-sig` rules, plus a legacy header
//! when the server turns out to read one).

use http::{HeaderName, StatusCode};
use microversion::profile::{ErrorFormat, Messages, VersionErrorHeaders};
use microversion::{
    Decoded, OPENSTACK_API_VERSION, Profile, RequestedVersion, Rules, Version, VersionHeader,
    VersionRange,
};

use super::probe::Seen;

/// Which version headers the answer to a version error carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorHeaders {
    /// `Vary` (when the server sends `Vary` at all), no version.
    VaryOnly,
    /// Neither version headers nor `Vary`.
    Nothing,
    /// A 406 echoes the rejected version, with `Vary`; a 400 has nothing.
    RejectedVersion,
}

/// The shape of error bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyShape {
    /// `{"errors": [{"status", "title", "detail", ...}]}`.
    ApiSig,
    /// `{"<fault>": {"code", "message"}}`.
    Fault,
    /// `{"error_message": "<JSON text with faultstring>"}`.
    Ironic,
}

/// The expectations the checks compare answers with.
#[derive(Clone, Debug)]
pub(crate) struct Expect {
    /// Who sets them, for messages: "the nova profile" or "wire.md".
    pub(crate) judge: String,
    pub(crate) codec: VersionHeader,
    pub(crate) service: String,
    pub(crate) legacy: Option<HeaderName>,
    pub(crate) echo_standard: bool,
    pub(crate) echo_legacy: bool,
    pub(crate) vary: bool,
    pub(crate) range_headers: Option<(HeaderName, HeaderName)>,
    pub(crate) malformed_status: StatusCode,
    pub(crate) zero_major_is_unsupported: bool,
    pub(crate) latest_any_case: bool,
    pub(crate) error_headers: ErrorHeaders,
    pub(crate) root_is_versioned: bool,
    pub(crate) body: BodyShape,
    /// Whether a 406's message names the supported range too (upstream
    /// Placement's names only the version asked: its range is in
    /// `min_version` and `max_version`).
    pub(crate) message_names_range: bool,
    /// The server's range, once learned.
    pub(crate) range: Option<VersionRange>,
    /// More headers carrying the request id.
    pub(crate) request_id_aliases: Vec<HeaderName>,
}

impl Expect {
    /// The expectations of `profile`, or of docs/wire.md without one.
    pub(crate) fn new(codec: VersionHeader, profile: Option<Profile>) -> Self {
        let rules = profile.unwrap_or(Profile::ApiSig).rules();
        let judge = match profile {
            Some(p) => format!("the {p} profile"),
            None => "wire.md".to_owned(),
        };
        Expect::from_rules(judge, codec, &rules)
    }

    fn from_rules(judge: String, codec: VersionHeader, rules: &Rules) -> Self {
        let error_headers = match rules.version_error_headers {
            VersionErrorHeaders::VaryOnly => ErrorHeaders::VaryOnly,
            VersionErrorHeaders::RejectedVersion => ErrorHeaders::RejectedVersion,
            VersionErrorHeaders::None => ErrorHeaders::Nothing,
        };
        // Exhaustive, as the server's renderer: a new format is judged
        // only once the checker knows its shape.
        let body = match rules.error_format {
            ErrorFormat::Fault => BodyShape::Fault,
            ErrorFormat::Ironic => BodyShape::Ironic,
            // Placement's body is API-SIG's `errors` list.
            ErrorFormat::ApiSig | ErrorFormat::Placement => BodyShape::ApiSig,
        };
        Expect {
            judge,
            service: codec.service_type().to_owned(),
            codec: codec.latest_any_case(rules.latest_any_case),
            legacy: rules.legacy_header.clone(),
            echo_standard: rules.echo_standard,
            echo_legacy: rules.echo_legacy,
            vary: rules.vary,
            range_headers: rules.range_headers.clone(),
            malformed_status: rules.malformed_status,
            zero_major_is_unsupported: rules.zero_major_is_unsupported,
            latest_any_case: rules.latest_any_case,
            error_headers,
            root_is_versioned: rules.root_is_versioned,
            body,
            message_names_range: rules.messages != Messages::Placement,
            range: None,
            request_id_aliases: rules.request_id_aliases.clone(),
        }
    }

    /// The server's range, as learned.
    pub(crate) fn with_range(mut self, range: VersionRange) -> Self {
        self.range = Some(range);
        self
    }

    /// Without a profile, a server found reading `legacy` must echo it and
    /// name it in `Vary` too (docs/wire.md 9).
    pub(crate) fn with_detected_legacy(mut self, legacy: HeaderName) -> Self {
        self.legacy = Some(legacy);
        self.echo_legacy = true;
        self
    }

    /// The standard header value naming `version` for this service.
    pub(crate) fn ask(&self, version: impl std::fmt::Display) -> String {
        format!("{} {version}", self.service)
    }

    /// Another service type, for entries that must be ignored.
    pub(crate) fn other_service(&self) -> &'static str {
        if self.service.eq_ignore_ascii_case("compute") {
            "placement"
        } else {
            "compute"
        }
    }

    /// The header names `Vary` must list, lower case.
    pub(crate) fn vary_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if self.echo_standard {
            names.push(OPENSTACK_API_VERSION.as_str().to_owned());
        }
        if let (Some(legacy), true) = (&self.legacy, self.echo_legacy) {
            names.push(legacy.as_str().to_owned());
        }
        if names.is_empty() {
            names.push(OPENSTACK_API_VERSION.as_str().to_owned());
        }
        names
    }

    /// The version an answer names: the standard header's entry for the
    /// service, else the legacy header.
    pub(crate) fn served(&self, seen: &Seen) -> Option<Version> {
        let exact = |decoded: Decoded<'_>| match decoded {
            Decoded::Present(RequestedVersion::Exact(v)) => Some(v),
            _ => None,
        };
        exact(
            self.codec
                .decode(seen.headers.get_all(OPENSTACK_API_VERSION)),
        )
        .or_else(|| {
            let legacy = self.legacy.as_ref()?;
            exact(self.codec.decode_legacy(seen.headers.get_all(legacy)))
        })
    }

    /// The version-related headers of an answer, for messages:
    /// `OpenStack-API-Version: placement 1.2, Vary: ...`.
    pub(crate) fn headers_seen(&self, seen: &Seen) -> String {
        let mut parts = Vec::new();
        let mut push = |name: &str, label: &str| {
            if let Some(v) = seen.joined(name) {
                parts.push(format!("{label}: {v}"));
            }
        };
        push("openstack-api-version", "OpenStack-API-Version");
        if let Some(legacy) = &self.legacy {
            push(legacy.as_str(), legacy.as_str());
        }
        push("vary", "Vary");
        if let Some((min, max)) = &self.range_headers {
            push(min.as_str(), min.as_str());
            push(max.as_str(), max.as_str());
        }
        if parts.is_empty() {
            "no version headers".to_owned()
        } else {
            parts.join(", ")
        }
    }

    /// What is wrong with the version headers of an answer that served
    /// `version` (docs/wire.md 9 and 10); empty when nothing is.
    pub(crate) fn served_header_problems(&self, seen: &Seen, version: Version) -> Vec<String> {
        let mut problems = self.echo_problems(seen, Some(version));
        problems.extend(self.vary_problems(seen, self.vary));
        problems.extend(self.range_header_problems(seen));
        problems
    }

    /// Problems with the version echo: `Some(v)` must be echoed in the
    /// headers this judge names, `None` must not appear at all.
    pub(crate) fn echo_problems(&self, seen: &Seen, version: Option<Version>) -> Vec<String> {
        let mut problems = Vec::new();
        let standard = seen.values(OPENSTACK_API_VERSION.as_str());
        match (version, self.echo_standard) {
            (Some(v), true) => {
                let want = self.ask(v);
                let echoed = self
                    .codec
                    .decode(seen.headers.get_all(OPENSTACK_API_VERSION));
                let ok = matches!(echoed, Decoded::Present(RequestedVersion::Exact(e)) if e == v);
                if !ok {
                    problems.push(if standard.is_empty() {
                        format!("no OpenStack-API-Version header (expected {want:?})")
                    } else {
                        format!(
                            "OpenStack-API-Version: {} (expected {want:?})",
                            standard.join(", ")
                        )
                    });
                }
            }
            (None, _) | (Some(_), false) if !standard.is_empty() => {
                problems.push(format!(
                    "OpenStack-API-Version: {} (expected none, as {} says)",
                    standard.join(", "),
                    self.judge
                ));
            }
            _ => {}
        }
        if let Some(legacy) = &self.legacy {
            let values = seen.values(legacy.as_str());
            match (version, self.echo_legacy) {
                (Some(v), true) if values != [v.to_string()] => {
                    problems.push(if values.is_empty() {
                        format!("no {legacy} header (expected \"{v}\")")
                    } else {
                        format!("{legacy}: {} (expected \"{v}\")", values.join(", "))
                    });
                }
                (Some(_), true) => {}
                (None, _) | (Some(_), false) if !values.is_empty() => {
                    problems.push(format!(
                        "{legacy}: {} (expected none, as {} says)",
                        values.join(", "),
                        self.judge
                    ));
                }
                _ => {}
            }
        }
        problems
    }

    /// Problems with `Vary`: it must name the version headers when
    /// `wanted`, and must not name them otherwise.
    pub(crate) fn vary_problems(&self, seen: &Seen, wanted: bool) -> Vec<String> {
        let names = seen.vary_names();
        let expected = self.vary_names();
        if wanted {
            let missing: Vec<&String> = expected.iter().filter(|n| !names.contains(n)).collect();
            if missing.is_empty() || names.iter().any(|n| n == "*") {
                Vec::new()
            } else {
                let missing: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
                vec![match seen.joined("vary") {
                    Some(vary) => format!("Vary: {vary} does not name {}", missing.join(", ")),
                    None => format!(
                        "no Vary header (expected one naming {})",
                        missing.join(", ")
                    ),
                }]
            }
        } else {
            let named: Vec<&String> = expected.iter().filter(|n| names.contains(n)).collect();
            if named.is_empty() {
                Vec::new()
            } else {
                vec![format!(
                    "Vary: {} (expected no version header in Vary, as {} says)",
                    seen.joined("vary").unwrap_or_default(),
                    self.judge
                )]
            }
        }
    }

    /// Problems with the minimum and maximum headers, when this judge
    /// wants them.
    pub(crate) fn range_header_problems(&self, seen: &Seen) -> Vec<String> {
        let (Some((min_name, max_name)), Some(range)) = (&self.range_headers, self.range) else {
            return Vec::new();
        };
        let (min, max) = (range.min(), range.max());
        let mut problems = Vec::new();
        for (name, want) in [(min_name, min), (max_name, max)] {
            let values = seen.values(name.as_str());
            if values != [want.to_string()] {
                problems.push(if values.is_empty() {
                    format!("no {name} header (expected \"{want}\")")
                } else {
                    format!("{name}: {} (expected \"{want}\")", values.join(", "))
                });
            }
        }
        problems
    }
}
