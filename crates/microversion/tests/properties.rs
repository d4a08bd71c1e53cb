//! Property tests: the parsers round-trip, order numerically, agree with
//! the grammar of docs/wire.md, and never panic on any input.

use http::HeaderValue;
use microversion::{
    Decoded, RequestedVersion, Version, VersionHeader, VersionRequest, VersionSpan,
};
use proptest::prelude::*;

/// The grammar `^([1-9][0-9]*)\.([1-9][0-9]*|0)$` with numbers fitting a
/// u32, written independently of the crate's parser.
fn reference_accepts(s: &str) -> bool {
    let Some((major, minor)) = s.split_once('.') else {
        return false;
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let fits = |p: &str| p.parse::<u32>().is_ok();
    digits(major)
        && digits(minor)
        && !major.starts_with('0')
        && (minor == "0" || !minor.starts_with('0'))
        && fits(major)
        && fits(minor)
}

proptest! {
    #[test]
    fn display_and_parse_round_trip(major in 1u32.., minor in any::<u32>()) {
        let v = Version::new(major, minor);
        prop_assert_eq!(v.to_string().parse::<Version>(), Ok(v));
    }

    #[test]
    fn ordering_agrees_with_tuples(a in any::<(u32, u32)>(), b in any::<(u32, u32)>()) {
        prop_assert_eq!(Version::from(a).cmp(&Version::from(b)), a.cmp(&b));
    }

    #[test]
    fn parser_agrees_with_the_grammar(s in "[0-9.+ a-]{0,12}") {
        prop_assert_eq!(s.parse::<Version>().is_ok(), reference_accepts(&s), "{:?}", s);
    }

    #[test]
    fn parser_agrees_on_digit_soup(s in "[0-9]{1,12}\\.[0-9]{1,12}") {
        prop_assert_eq!(s.parse::<Version>().is_ok(), reference_accepts(&s), "{:?}", s);
    }

    #[test]
    fn version_parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        if let Err(e) = Version::try_from_bytes(&bytes) {
            prop_assert_eq!(e.input(), &bytes[..]);
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn span_display_and_parse_round_trip(
        start in (1u32.., any::<u32>()),
        end in proptest::option::of((1u32.., any::<u32>())),
    ) {
        let start = Version::from(start);
        match VersionSpan::new(start, end.map(Version::from)) {
            Ok(span) => {
                prop_assert_eq!(span.to_string().parse::<VersionSpan>(), Ok(span));
                prop_assert!(span.contains(start));
            }
            Err(_) => prop_assert!(end.is_some_and(|end| Version::from(end) < start)),
        }
    }

    #[test]
    fn span_parse_never_panics(s in "[0-9. alte-]{0,16}|\\PC{0,16}") {
        match s.parse::<VersionSpan>() {
            Ok(span) => prop_assert_eq!(span.to_string().parse::<VersionSpan>(), Ok(span)),
            Err(e) => prop_assert!(e.to_string().starts_with("invalid version span ")),
        }
    }

    #[test]
    fn spans_overlap_when_they_share_a_version(
        a in (0u32..6, proptest::option::of(0u32..6)),
        b in (0u32..6, proptest::option::of(0u32..6)),
    ) {
        let span = |(start, end): (u32, Option<u32>)| {
            VersionSpan::new(Version::new(1, start), end.map(|end| Version::new(1, start.max(end))))
                .expect("end at or after start")
        };
        let (a, b) = (span(a), span(b));
        let shared = (0..8).any(|minor| a.contains(Version::new(1, minor)) && b.contains(Version::new(1, minor)));
        prop_assert_eq!(a.overlaps(b), shared);
    }

    #[test]
    fn request_parse_never_panics_and_round_trips(s in "\\PC{0,16}") {
        if let Ok(req) = s.parse::<VersionRequest>() {
            prop_assert_eq!(req.to_string().parse::<VersionRequest>(), Ok(req));
        }
        let _ = VersionRequest::parse_cli(&s);
    }

    #[test]
    fn decode_never_panics(
        values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..60), 0..4),
        any_case in any::<bool>(),
    ) {
        let codec = VersionHeader::new("placement").latest_any_case(any_case);
        let _ = codec.decode_bytes(values.iter().map(Vec::as_slice));
        let _ = codec.decode_legacy_bytes(values.iter().map(Vec::as_slice));
        if let Decoded::Malformed(m) = codec.decode_bytes(values.iter().map(Vec::as_slice)) {
            prop_assert!(!m.error().to_string().is_empty());
        }
    }

    #[test]
    fn decode_structured_headers_never_panics(
        entries in proptest::collection::vec("(placement|PLACEMENT|compute|)[ \t]{0,2}(latest|[0-9.]{0,6}|[a-z]{0,3})", 0..6),
    ) {
        let value = entries.join(",");
        let _ = VersionHeader::new("placement").decode_bytes([value.as_bytes()]);
    }

    #[test]
    fn encode_then_decode(major in 1u32.., minor in any::<u32>(), other in "[a-z]{1,8}") {
        let codec = VersionHeader::new("placement");
        let v = Version::new(major, minor);
        let mine = codec.encode(v);
        let theirs = HeaderValue::try_from(format!("{other} 9.9")).unwrap();
        let values = [mine.clone(), theirs];
        let want = if other == "placement" {
            Decoded::Present(RequestedVersion::Exact(Version::new(9, 9)))
        } else {
            Decoded::Present(RequestedVersion::Exact(v))
        };
        prop_assert_eq!(codec.decode(&values), want);
        prop_assert_eq!(codec.decode([&mine]), Decoded::Present(RequestedVersion::Exact(v)));
    }

    #[test]
    fn document_parse_never_panics(s in "\\PC{0,200}") {
        let _ = serde_json::from_str::<microversion::VersionsDocument>(&s);
    }

    #[test]
    fn document_parse_of_near_documents_never_panics(
        id in proptest::option::of("[a-z0-9.]{0,5}"),
        min in proptest::option::of("[0-9.]{0,5}"),
        max in proptest::option::of("[0-9.]{0,5}"),
        shape in 0u8..4,
    ) {
        let mut entry = serde_json::Map::new();
        if let Some(id) = id { entry.insert("id".into(), id.into()); }
        if let Some(min) = min { entry.insert("min_version".into(), min.into()); }
        if let Some(max) = max { entry.insert("version".into(), max.into()); }
        let entry = serde_json::Value::Object(entry);
        let doc = match shape {
            0 => serde_json::json!({"versions": [entry]}),
            1 => serde_json::json!({"versions": {"values": [entry]}}),
            2 => serde_json::json!({"version": entry}),
            _ => entry,
        };
        if let Ok(parsed) = serde_json::from_value::<microversion::VersionsDocument>(doc) {
            for v in &parsed.versions {
                if let (Some(a), Some(b)) = (v.min_version, v.max_version) {
                    prop_assert!(a <= b);
                }
            }
        }
    }
}
