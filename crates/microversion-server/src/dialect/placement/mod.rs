//! Placement's refusals and error bodies, as upstream Placement 16.0.0's
//! clients read them.
//!
//! - A malformed version is refused in microversion_parse's words, which
//!   quote Python's `int()` ([`python`]); one outside the range names only
//!   the version asked.
//! - An error body follows `Accept` as webob does (JSON, HTML or plain
//!   text), each made from webob's page of the error ([`webob`]); the JSON
//!   is API-SIG's shape with webob's title and page as detail.

mod python;
mod webob;

use http::{HeaderValue, Method, StatusCode};
use microversion::profile::Rules;
use microversion::{InvalidVersion, Version};

use self::webob::{WebobPage, latin1};
use super::{ErrorContext, api_sig_body, json};
use crate::error::{ApiError, METHOD_NOT_ALLOWED};

/// Upstream Placement's message for a malformed version: microversion_parse
/// splits the version at its first dot and reads each part with Python's
/// `int()`, and quotes the exception it meets (the header's text is read
/// as ISO-8859-1, as WSGI servers hand it on). Where `int()` would have
/// read both parts (`01.2`, `+1.2`, `1_0.2`, which the grammar here
/// refuses), the message says what the grammar wants instead.
pub(super) fn malformed(error: &InvalidVersion) -> String {
    let text = latin1(error.input());
    let (major, minor) = match text.split_once('.') {
        Some((major, minor)) => (major, Some(minor)),
        None => (text.as_str(), None),
    };
    let python = match [Some(major), minor]
        .into_iter()
        .flatten()
        .find(|part| !python::int_reads(part))
    {
        Some(part) => Some(format!(
            "invalid literal for int() with base 10: {}",
            python::repr(part)
        )),
        None if minor.is_none() => {
            Some("Version.__new__() missing 1 required positional argument: 'minor'".to_owned())
        }
        None => None,
    };
    match python {
        Some(why) => format!("Invalid microversion: invalid version string: {text}; {why}"),
        None => format!(
            "Invalid microversion: invalid version string: {text}; {}; {}",
            error.reason(),
            InvalidVersion::expected()
        ),
    }
}

/// Upstream Placement's message for a version outside the range: the
/// range is in the body's `min_version` and `max_version`.
pub(super) fn unsupported(requested: Version) -> String {
    format!("Invalid microversion: Unacceptable version header: {requested}")
}

/// `error` in the representation webob picks by `Accept`.
pub(super) fn render(
    rules: &Rules,
    error: &ApiError,
    ctx: &ErrorContext<'_>,
) -> (HeaderValue, String) {
    let accept = page_accept(ctx.accept);
    let content_type = ctx.content_type.map(|v| latin1(v.as_bytes()));
    let page = WebobPage {
        status: error.status(),
        message: message(error),
        method: ctx.method.map_or("GET", Method::as_str),
        accept: &accept,
        content_type: content_type.as_deref(),
    };
    match choice(ctx.accept) {
        Choice::Json => {
            let mut body = api_sig_body(rules, error, page.json_detail(), ctx);
            for entry in &mut body.errors {
                webob::title(error.status()).clone_into(&mut entry.title);
            }
            json(body)
        }
        Choice::Html => (
            HeaderValue::from_static("text/html; charset=UTF-8"),
            page.html(),
        ),
        Choice::Plain => (
            HeaderValue::from_static("text/plain; charset=UTF-8"),
            page.plain(),
        ),
    }
}

/// The message upstream Placement gives an error (webob's `detail`): none
/// for its stock 404s, a fixed one for its 405s.
fn message(error: &ApiError) -> &str {
    match (error.is_stock(), error.status()) {
        (false, _) => error.detail(),
        (true, StatusCode::METHOD_NOT_ALLOWED) => METHOD_NOT_ALLOWED,
        (true, _) => "",
    }
}

/// The `Accept` upstream Placement's 406 page names: its request log
/// middleware makes a missing `Accept`, or exactly `*/*`,
/// `application/json`.
fn page_accept(accept: Option<&HeaderValue>) -> String {
    match accept.map(HeaderValue::as_bytes) {
        None | Some(b"" | b"*/*") => "application/json".to_owned(),
        Some(bytes) => latin1(bytes),
    }
}

/// The representations of an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    Html,
    Plain,
    Json,
}

/// The representation upstream Placement picks for an error.
///
/// Its request log middleware first reads a missing `Accept`, or exactly
/// `*/*`, as `application/json`. Then webob offers HTML and JSON: the one
/// with the highest quality in `Accept` wins, HTML on ties; plain text
/// when `Accept` allows neither.
fn choice(accept: Option<&HeaderValue>) -> Choice {
    const OFFERS: [(&str, Choice); 2] = [
        ("text/html", Choice::Html),
        ("application/json", Choice::Json),
    ];
    let accept = match accept.map(HeaderValue::to_str) {
        None => return Choice::Json,
        Some(Ok(accept)) if accept.is_empty() || accept == "*/*" => return Choice::Json,
        Some(Ok(accept)) => accept,
        Some(Err(_)) => return Choice::Plain,
    };
    let mut best: Option<(f32, Choice)> = None;
    for (offer, choice) in OFFERS {
        let quality = accept
            .split(',')
            .filter_map(|range| media_range_quality(range, offer))
            .fold(None, |acc: Option<(u8, f32)>, (spec, q)| match acc {
                // The most specific matching range decides the quality.
                Some((s, _)) if s > spec => acc,
                _ => Some((spec, q)),
            })
            .map(|(_, q)| q);
        if let Some(q) = quality {
            if q > 0.0 && best.is_none_or(|(bq, _)| q > bq) {
                best = Some((q, choice));
            }
        }
    }
    best.map_or(Choice::Plain, |(_, choice)| choice)
}

/// If `range` (one element of `Accept`) matches `offer`: how specific it
/// is (0 for `*/*`, 1 for `type/*`, 2 for exact) and its quality.
fn media_range_quality(range: &str, offer: &str) -> Option<(u8, f32)> {
    let mut parts = range.split(';');
    let media = parts.next()?.trim().to_ascii_lowercase();
    let quality = parts
        .filter_map(|p| p.trim().strip_prefix("q="))
        .find_map(|q| q.trim().parse::<f32>().ok())
        .unwrap_or(1.0);
    let (offer_type, _) = offer.split_once('/')?;
    let specificity = if media == "*/*" {
        0
    } else if media.strip_suffix("/*") == Some(offer_type) {
        1
    } else if media == offer {
        2
    } else {
        return None;
    };
    Some((specificity, quality))
}

#[cfg(test)]
mod tests {
    use super::super::tests::ctx;
    // The seam's `render`, over the glob's: the profile's rules choose
    // this module's.
    use super::super::{malformed_detail, render, unsupported_detail};
    use super::*;
    use crate::Profile;

    /// Upstream's texts, read from Placement 16.0.0 (microversion_parse
    /// 2.1.0) answering the same headers.
    #[test]
    fn placement_malformed_versions_read_as_python_reads_them() {
        let message = |raw: &[u8]| {
            let error = Version::try_from(raw).expect_err("malformed");
            malformed(&error)
        };
        let prefix = "Invalid microversion: invalid version string: ";
        for (raw, why) in [
            (
                &b"1.a"[..],
                "1.a; invalid literal for int() with base 10: 'a'",
            ),
            (b"a.1", "a.1; invalid literal for int() with base 10: 'a'"),
            (
                b"1.2.3",
                "1.2.3; invalid literal for int() with base 10: '2.3'",
            ),
            (
                b"1..2",
                "1..2; invalid literal for int() with base 10: '.2'",
            ),
            (b".", ".; invalid literal for int() with base 10: ''"),
            (b"1.", "1.; invalid literal for int() with base 10: ''"),
            (
                b"1",
                "1; Version.__new__() missing 1 required positional argument: 'minor'",
            ),
            (
                b"LATEST",
                "LATEST; invalid literal for int() with base 10: 'LATEST'",
            ),
            (
                "\u{e9}.1".as_bytes(),
                "\u{c3}\u{a9}.1; invalid literal for int() with base 10: '\u{c3}\u{a9}'",
            ),
            (
                b"1.it's",
                "1.it's; invalid literal for int() with base 10: \"it's\"",
            ),
            (
                b"1.a\tb\\",
                "1.a\tb\\; invalid literal for int() with base 10: 'a\\tb\\\\'",
            ),
        ] {
            assert_eq!(message(raw), format!("{prefix}{why}"));
        }
        // int() reads these; the strict grammar does not.
        assert_eq!(
            message(b"01.2"),
            format!(
                "{prefix}01.2; a number has a leading zero; {}",
                InvalidVersion::expected()
            )
        );
        for part in ["1", " 1 ", "+1", "-1", "1_000", "\u{a0}7"] {
            assert!(python::int_reads(part), "{part:?}");
        }
        for part in ["", "_1", "1_", "1__0", "+", "1 1", "\u{b2}", "0x1"] {
            assert!(!python::int_reads(part), "{part:?}");
        }
        assert_eq!(
            python::repr("a\u{a0}\u{ad}\u{85}\u{ff}"),
            "'a\\xa0\\xad\\x85\u{ff}'"
        );
    }

    /// The seam picks these for the Placement profile's rules.
    #[test]
    fn the_profile_words_its_refusals_here() {
        let rules = Profile::Placement.rules();
        let error = Version::try_from(&b"1.a"[..]).expect_err("malformed");
        assert_eq!(malformed_detail(&rules, &error), malformed(&error));
        let range = microversion::VersionRange::from_static("1.0", "1.39");
        assert_eq!(
            unsupported_detail(&rules, range, Version::new(1, 99)),
            "Invalid microversion: Unacceptable version header: 1.99"
        );
    }

    #[test]
    fn placement_code_only_from_1_23() {
        let rules = Profile::Placement.rules();
        let accept = HeaderValue::from_static("application/json");
        let err = ApiError::new(StatusCode::CONFLICT, "conflict");
        let at = |v: Option<Version>| {
            let ctx = ErrorContext {
                served: v,
                accept: Some(&accept),
                ..ctx()
            };
            let (_, body) = render(&rules, &err, &ctx);
            serde_json::from_str::<serde_json::Value>(&body).unwrap()["errors"][0]["code"].clone()
        };
        assert_eq!(at(Some(Version::new(1, 22))), serde_json::Value::Null);
        assert_eq!(at(Some(Version::new(1, 23))), "placement.undefined_code");
        assert_eq!(at(None), serde_json::Value::Null);
    }

    #[test]
    fn placement_follows_accept() {
        let rules = Profile::Placement.rules();
        let err = ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "Unacceptable version header: 0.5",
        );
        for (accept, want) in [
            (Some("application/json"), "application/json"),
            (Some("text/html"), "text/html; charset=UTF-8"),
            // Placement's request log makes these two JSON.
            (Some("*/*"), "application/json"),
            (None, "application/json"),
            (Some("*/*;q=0.9"), "text/html; charset=UTF-8"),
            (
                Some("application/json, text/html;q=0.5"),
                "application/json",
            ),
            // Plain text is not an offer, only the fallback.
            (
                Some("text/plain, application/json;q=0.5"),
                "application/json",
            ),
            (Some("text/plain"), "text/plain; charset=UTF-8"),
            (Some("image/png"), "text/plain; charset=UTF-8"),
        ] {
            let value = accept.map(HeaderValue::from_static);
            let ctx = ErrorContext {
                accept: value.as_ref(),
                ..ctx()
            };
            let (ct, body) = render(&rules, &err, &ctx);
            assert_eq!(ct, want, "{accept:?}");
            assert!(body.contains("Unacceptable version header: 0.5"), "{body}");
        }
    }

    #[test]
    fn placement_details_are_webob_pages() {
        let rules = Profile::Placement.rules();
        let delete = Method::DELETE;
        let detail = |err: &ApiError| {
            let ctx = ErrorContext {
                method: Some(&delete),
                ..ctx()
            };
            let (_, body) = render(&rules, err, &ctx);
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            (
                v["errors"][0]["title"].as_str().unwrap().to_owned(),
                v["errors"][0]["detail"].as_str().unwrap().to_owned(),
            )
        };
        assert_eq!(
            detail(&ApiError::not_found()),
            (
                "Not Found".to_owned(),
                "The resource could not be found.\n\n   ".to_owned()
            )
        );
        assert_eq!(
            detail(&ApiError::method_not_allowed_for(&delete)).1,
            "The method DELETE is not allowed for this resource. \n\n The method specified is not allowed for this resource."
        );
        assert_eq!(
            detail(&ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "a\nb")),
            (
                "Request Entity Too Large".to_owned(),
                "The body of your request was too large for this server.\n\n a b  ".to_owned()
            )
        );
        // Other formats keep the stock sentence as the detail.
        let (_, body) = render(&Profile::ApiSig.rules(), &ApiError::not_found(), &ctx());
        assert!(
            body.contains("\"detail\":\"The resource could not be found.\""),
            "{body}"
        );
    }
}
