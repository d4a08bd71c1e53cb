//! The answers to bad versions, rules 5, 6, 9, 10 and 11: the status of
//! each malformed or unsupported version, and the headers and body of the
//! answer.

use http::StatusCode;
use microversion::{Version, VersionRange};
use serde_json::Value;

use super::catalog::CheckId;
use super::expect::{BodyShape, ErrorHeaders, Expect};
use super::probe::Seen;
use super::run::{Runner, STD, pass_if};

impl Runner {
    /// The status of a malformed `raw` version: the judge's, or 406 for a
    /// `0.Y` read as below the range.
    pub(super) fn malformed_status_for(&self, raw: &str) -> StatusCode {
        if self.expect.zero_major_is_unsupported && is_zero_major(raw) {
            StatusCode::NOT_ACCEPTABLE
        } else {
            self.expect.malformed_status
        }
    }

    /// The status of every malformed version (rule 5) and of versions
    /// outside the range (rule 6); the headers and body of the first
    /// answers (rules 9, 10, 11).
    pub(super) async fn error_checks(&mut self, range: VersionRange) {
        let (min, max) = (range.min(), range.max());
        let major = min.major();
        let digits30 = "123456789012345678901234567890";
        let malformed = [
            format!("{major}.01"),
            format!("0{major}.1"),
            format!("{major}"),
            format!("{major}."),
            format!("{major}.2.3"),
            format!("-{major}.5"),
            format!("{major}.a"),
            "pony.horse".to_owned(),
            digits30.to_owned(),
            format!("{major}.{digits30}"),
            format!("+{major}.1"),
            format!("{major}.1_0"),
            "0.5".to_owned(),
        ];
        let mut first_bad: Option<(String, Seen)> = None;
        for raw in &malformed {
            let want = self.malformed_status_for(raw);
            let ask = self.expect.ask(raw);
            let check = if want == StatusCode::NOT_ACCEPTABLE && is_zero_major(raw) {
                CheckId::ZeroMajorBelowRange(raw.clone())
            } else {
                CheckId::Malformed(raw.clone())
            };
            let seen = self.status_row(check, &[(STD, &ask)], want).await;
            if let (None, Some(seen)) = (&first_bad, seen) {
                if raw == "pony.horse" {
                    first_bad = Some((raw.clone(), seen));
                }
            }
        }
        if let Some((raw, seen)) = first_bad {
            self.version_error_rows(&seen, &raw, false, range);
        }

        // 6: out of range.
        let above = Version::new(max.major(), max.minor().saturating_add(1));
        let mut above_seen = None;
        if above != max {
            let ask = self.expect.ask(above);
            above_seen = self
                .status_row(
                    CheckId::AboveMax(above),
                    &[(STD, &ask)],
                    StatusCode::NOT_ACCEPTABLE,
                )
                .await;
        }
        if min.minor() > 0 {
            let below = Version::new(min.major(), min.minor() - 1);
            let ask = self.expect.ask(below);
            self.status_row(
                CheckId::BelowMin(below),
                &[(STD, &ask)],
                StatusCode::NOT_ACCEPTABLE,
            )
            .await;
        }
        if let Some(seen) = above_seen {
            if seen.status == StatusCode::NOT_ACCEPTABLE {
                self.version_error_rows(&seen, &above.to_string(), true, range);
            }
        }
    }

    /// Headers (9, 10) and body (10, 11) of the answer to a version error.
    fn version_error_rows(
        &mut self,
        seen: &Seen,
        raw: &str,
        unsupported: bool,
        range: VersionRange,
    ) {
        let e = self.expect.clone();
        let rejected = raw.parse::<Version>().ok();
        let (echo, vary_wanted, expected) = match e.error_headers {
            ErrorHeaders::RejectedVersion if unsupported => (
                e.echo_problems(seen, rejected),
                e.vary,
                format!("the rejected version echoed, Vary ({})", e.judge),
            ),
            ErrorHeaders::VaryOnly => (
                e.echo_problems(seen, None),
                e.vary,
                if e.vary {
                    format!("Vary but no version header ({})", e.judge)
                } else {
                    format!("no version header ({})", e.judge)
                },
            ),
            _ => (
                e.echo_problems(seen, None),
                false,
                format!("neither version headers nor Vary ({})", e.judge),
            ),
        };
        let mut problems = echo;
        problems.extend(e.vary_problems(seen, vary_wanted));
        let (headers_check, body_check) = if unsupported {
            (CheckId::Headers406, CheckId::Body406)
        } else {
            (CheckId::HeadersMalformed, CheckId::BodyMalformed)
        };
        self.push(
            headers_check,
            pass_if(problems.is_empty()),
            if problems.is_empty() {
                format!("{}, {}", seen.status_text(), e.headers_seen(seen))
            } else {
                problems.join("; ")
            },
            expected,
        );
        if unsupported {
            self.range_headers_row(CheckId::RangeHeaders406, seen);
        }
        let mention = unsupported.then_some((raw, range));
        let (problems, message) = error_body(&e, seen, mention);
        let shape = match e.body {
            BodyShape::ApiSig if unsupported => {
                "{\"errors\": [{\"status\": 406, \"title\", \"detail\", \"min_version\", \"max_version\"}]}"
            }
            BodyShape::ApiSig => "{\"errors\": [{\"status\", \"title\", \"detail\"}]}",
            BodyShape::Fault => "{\"<fault>\": {\"code\", \"message\"}}",
            BodyShape::Ironic => "{\"error_message\": \"{\\\"faultstring\\\": ...}\"}",
        };
        self.push(
            body_check,
            pass_if(problems.is_empty()),
            if problems.is_empty() {
                message.unwrap_or_default()
            } else {
                problems.join("; ")
            },
            format!("{shape} ({})", e.judge),
        );
    }
}

fn is_zero_major(raw: &str) -> bool {
    raw.strip_prefix("0.")
        .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
}

/// Checks an error body's shape; returns the problems and the message.
/// `mention`: the version asked and the range the message must name.
fn error_body(
    e: &Expect,
    seen: &Seen,
    mention: Option<(&str, VersionRange)>,
) -> (Vec<String>, Option<String>) {
    let mut problems = Vec::new();
    let content_type = seen.joined("content-type").unwrap_or_default();
    if !content_type.starts_with("application/json") {
        problems.push(format!(
            "Content-Type {content_type:?}, not application/json"
        ));
    }
    let Some(body) = seen.json() else {
        problems.push(format!(
            "the body is not JSON: {:?}",
            excerpt(&String::from_utf8_lossy(&seen.body))
        ));
        return (problems, None);
    };
    let status = u64::from(seen.status.as_u16());
    let message = match e.body {
        BodyShape::ApiSig => {
            let entry = body
                .get("errors")
                .and_then(Value::as_array)
                .and_then(|errors| errors.first());
            match entry {
                None => {
                    problems.push(format!(
                        "no \"errors\" list: {}",
                        excerpt(&body.to_string())
                    ));
                    None
                }
                Some(entry) => {
                    if entry.get("status").and_then(Value::as_u64) != Some(status) {
                        problems.push(format!(
                            "errors[0].status is {}, not {status}",
                            entry.get("status").unwrap_or(&Value::Null)
                        ));
                    }
                    if entry
                        .get("title")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        problems.push("errors[0] has no title".to_owned());
                    }
                    if let Some((_, range)) = mention {
                        for (key, want) in
                            [("min_version", range.min()), ("max_version", range.max())]
                        {
                            let got = entry.get(key).and_then(Value::as_str);
                            if got != Some(want.to_string().as_str()) {
                                problems.push(format!(
                                    "errors[0].{key} is {}, not \"{want}\"",
                                    entry.get(key).unwrap_or(&Value::Null)
                                ));
                            }
                        }
                    }
                    let detail = entry.get("detail").and_then(Value::as_str);
                    if detail.is_none_or(str::is_empty) {
                        problems.push("errors[0] has no detail".to_owned());
                    }
                    detail.map(str::to_owned)
                }
            }
        }
        BodyShape::Fault => {
            let inner = body
                .as_object()
                .filter(|o| o.len() == 1)
                .and_then(|o| o.values().next());
            match inner {
                None => {
                    problems.push(format!(
                        "not {{\"<fault>\": {{...}}}}: {}",
                        excerpt(&body.to_string())
                    ));
                    None
                }
                Some(inner) => {
                    if inner.get("code").and_then(Value::as_u64) != Some(status) {
                        problems.push(format!(
                            "code is {}, not {status}",
                            inner.get("code").unwrap_or(&Value::Null)
                        ));
                    }
                    let message = inner.get("message").and_then(Value::as_str);
                    if message.is_none_or(str::is_empty) {
                        problems.push("no message".to_owned());
                    }
                    message.map(str::to_owned)
                }
            }
        }
        BodyShape::Ironic => {
            let inner: Option<Value> = body
                .get("error_message")
                .and_then(Value::as_str)
                .and_then(|text| serde_json::from_str(text).ok());
            let message = inner
                .as_ref()
                .and_then(|i| i.get("faultstring").and_then(Value::as_str))
                .map(str::to_owned);
            if message.as_deref().is_none_or(str::is_empty) {
                problems.push(format!(
                    "not {{\"error_message\": \"{{\\\"faultstring\\\": ...}}\"}}: {}",
                    excerpt(&body.to_string())
                ));
            }
            message
        }
    };
    if let (Some((asked, range)), Some(text)) = (mention, &message) {
        let mut parts = vec![asked.to_owned()];
        if e.message_names_range {
            parts.extend([range.min().to_string(), range.max().to_string()]);
        }
        let missing: Vec<String> = parts
            .into_iter()
            .filter(|part| !text.contains(part.as_str()))
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "the message does not name {}: {:?}",
                missing.join(" or "),
                excerpt(text)
            ));
        }
    }
    (problems, message)
}

/// The start of a long text, for messages.
fn excerpt(text: &str) -> String {
    const MAX: usize = 200;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(MAX).collect();
        cut.push('…');
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_majors() {
        assert!(is_zero_major("0.5") && is_zero_major("0.0"));
        assert!(!is_zero_major("0.") && !is_zero_major("1.0") && !is_zero_major("0.a"));
    }

    #[test]
    fn the_406_message_must_name_the_version_and_the_range() {
        let e = Expect::new(microversion::VersionHeader::new("placement"), None);
        let range = VersionRange::from_static("1.0", "1.39");
        let body = |detail: &str| {
            serde_json::json!({"errors": [{"status": 406, "title": "Not Acceptable",
                "detail": detail, "min_version": "1.0", "max_version": "1.39"}]})
            .to_string()
        };
        let mut answer = Seen::not_acceptable(&[("content-type", "application/json")], "");
        answer.body = body("Unacceptable version header: 1.40").into_bytes();
        let (problems, message) = error_body(&e, &answer, Some(("1.40", range)));
        assert_eq!(
            problems,
            ["the message does not name 1.0 or 1.39: \"Unacceptable version header: 1.40\""]
        );
        assert_eq!(
            message.as_deref(),
            Some("Unacceptable version header: 1.40")
        );
        answer.body =
            body("Version 1.40 is not supported by the API. Minimum is 1.0 and maximum is 1.39.")
                .into_bytes();
        assert!(error_body(&e, &answer, Some(("1.40", range))).0.is_empty());
        // Upstream Placement's text names the version only; its profile
        // wants no more (the range is in min_version and max_version).
        let placement = Expect::new(
            microversion::VersionHeader::new("placement"),
            Some(microversion::profile::Profile::Placement),
        );
        answer.body = body("Invalid microversion: Unacceptable version header: 1.40").into_bytes();
        assert!(
            error_body(&placement, &answer, Some(("1.40", range)))
                .0
                .is_empty()
        );
        answer.body = body("Invalid microversion: Unacceptable version header").into_bytes();
        assert_eq!(
            error_body(&placement, &answer, Some(("1.40", range))).0,
            [
                "the message does not name 1.40: \"Invalid microversion: Unacceptable version header\""
            ]
        );
        // A text body is named, cut short.
        answer.body = "x".repeat(500).into_bytes();
        let (problems, _) = error_body(&e, &answer, None);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with("the body is not JSON: \"xxx"),
            "{problems:?}"
        );
        assert!(problems[0].ends_with("x…\""), "{problems:?}");
    }
}
