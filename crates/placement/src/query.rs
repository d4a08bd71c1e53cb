//! Query strings as upstream Placement reads them (webob's `req.GET`), and
//! the parsers of the filter parameters several operations share
//! (`member_of`, `required`, `resources`), with upstream's messages.
//!
//! Nothing here knows HTTP: a refusal is an [`InvalidQuery`] holding the
//! text the service answers with status 400 (its `detail`). The handlers
//! also check the parameters against each operation's query schema, which
//! is not part of this module.
//!
//! ```
//! use microversion::Version;
//! use placement::query::{self, QueryParams};
//!
//! let params = QueryParams::parse(Some("resources=VCPU:2,MEMORY_MB:1024&required=!HW_GPU"))?;
//! let amounts = query::resources(params.get("resources").unwrap_or_default())?;
//! assert_eq!(amounts, [("VCPU".to_owned(), 2), ("MEMORY_MB".to_owned(), 1024)]);
//!
//! let traits = query::required_traits(&params, Version::new(1, 22), "")?;
//! assert!(traits.required.is_empty());
//! assert!(traits.forbidden.contains("HW_GPU"));
//!
//! // Before 1.22 a forbidden trait is refused, with upstream's words.
//! let refused = query::required_traits(&params, Version::new(1, 21), "").unwrap_err();
//! assert_eq!(
//!     refused.detail(),
//!     "Invalid query string parameters: Expected 'required' parameter value of \
//!      the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !HW_GPU"
//! );
//! # Ok::<(), placement::query::InvalidQuery>(())
//! ```

use std::collections::BTreeSet;
use std::fmt;

use crate::history;
use microversion::{Version, VersionSpan};
use serde_json::{Map, Value};

/// A query string, or one of its parameters, that the service refuses
/// (with status 400).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidQuery {
    detail: String,
}

impl InvalidQuery {
    fn new(detail: impl Into<String>) -> Self {
        InvalidQuery {
            detail: detail.into(),
        }
    }

    /// What the service answers: upstream's text, which clients read.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The text of [`InvalidQuery::detail`], owned.
    #[must_use]
    pub fn into_detail(self) -> String {
        self.detail
    }
}

impl fmt::Display for InvalidQuery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for InvalidQuery {}

/// The result of the parsers of this module.
pub type Result<T, E = InvalidQuery> = std::result::Result<T, E>;

/// `Invalid query string parameters: {why}`.
pub(crate) fn invalid(why: &str) -> InvalidQuery {
    InvalidQuery::new(format!("Invalid query string parameters: {why}"))
}

/// The parameters of a query string, in order, decoded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryParams {
    pairs: Vec<(String, String)>,
}

impl QueryParams {
    /// Decodes `raw`, the query string of a request (`a=1&b=2`, without
    /// the `?`; `None` when the target has none): `+` is a space, `%XX`
    /// a byte (a `%` not followed by two hexadecimal digits stays as it
    /// is); blank parts are skipped, blank values kept, and a part without
    /// `=` is a name with a blank value.
    ///
    /// # Errors
    ///
    /// When a name or value is not UTF-8 once decoded.
    pub fn parse(raw: Option<&str>) -> Result<Self> {
        let mut pairs = Vec::new();
        for part in raw.unwrap_or_default().split('&') {
            if part.is_empty() {
                continue;
            }
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            pairs.push((decode(key)?, decode(value)?));
        }
        Ok(QueryParams { pairs })
    }

    /// The last value of `key`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order.
    #[must_use]
    pub fn get_all(&self, key: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Every parameter, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether `key` is given at all.
    #[must_use]
    pub fn contains(&self, key: &str) -> bool {
        self.pairs.iter().any(|(k, _)| k == key)
    }

    /// The parameters as one JSON object (each key once, with its last
    /// value), as upstream validates them.
    pub(crate) fn as_object(&self) -> Value {
        // In order, so that each key ends with its last value (one pass:
        // a lookup of the last value per key would be quadratic).
        let mut object = Map::new();
        for (key, value) in &self.pairs {
            object.insert(key.clone(), Value::String(value.clone()));
        }
        Value::Object(object)
    }
}

/// Percent-decodes one name or value of a query string.
fn decode(text: &str) -> Result<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| invalid("the query string is not valid UTF-8"))
}

/// Whether `text` is a UUID as oslo.utils' `uuidutils.is_uuid_like` reads
/// it: 32 hexadecimal digits once `urn:`, `uuid:`, surrounding braces and
/// hyphens are dropped.
#[must_use]
pub fn is_uuid_like(text: &str) -> bool {
    let text = text.replace("urn:", "").replace("uuid:", "");
    let mut digits = 0;
    for c in text.trim_matches(|c| c == '{' || c == '}').chars() {
        match c {
            '-' => {}
            c if c.is_ascii_hexdigit() => digits += 1,
            _ => return false,
        }
    }
    digits == 32
}

/// `text` in the canonical form (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`,
/// lowercase), as Python's `str(uuid.UUID(text))`, if it is UUID-like
/// ([`is_uuid_like`]).
#[must_use]
pub fn canonical_uuid(text: &str) -> Option<String> {
    if !is_uuid_like(text) {
        return None;
    }
    // What is left once oslo's allowances are dropped: 32 hex digits.
    let hex = text
        .replace("urn:", "")
        .replace("uuid:", "")
        .trim_matches(|c| c == '{' || c == '}')
        .replace('-', "")
        .to_ascii_lowercase();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// The aggregates a `member_of` filter asks for: groups of which each
/// provider must be in at least one aggregate (all groups apply), and
/// aggregates no provider may be in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemberOf {
    /// Each set is "any of these"; all sets must hold.
    pub required: Vec<BTreeSet<String>>,
    /// None of these.
    pub forbidden: BTreeSet<String>,
}

/// Several `member_of` from this version.
const MULTI_MEMBER_OF: VersionSpan = history::MULTIPLE_MEMBER_OF.since();
/// `!` (forbidden aggregates) from this version.
const FORBIDDEN_AGGREGATES: VersionSpan = history::FORBIDDEN_AGGREGATES.since();
/// `!` (forbidden traits) from this version.
const FORBIDDEN_TRAITS: VersionSpan = history::FORBIDDEN_TRAITS.since();
/// `in:` and several `required` from this version.
const ANY_TRAITS: VersionSpan = history::ANY_TRAITS.since();

/// Parses every `member_of{suffix}` parameter as the served `version`
/// allows: a UUID, `!UUID`, `in:U1,U2` or `!in:U1,U2`; several parameters
/// from 1.24, `!` from 1.32.
///
/// # Errors
///
/// When a value is not of these forms, names something not UUID-like, or
/// uses what `version` does not have.
pub fn member_of(params: &QueryParams, version: Version, suffix: &str) -> Result<MemberOf> {
    let key = format!("member_of{suffix}");
    let values = params.get_all(&key);
    if !MULTI_MEMBER_OF.contains(version) && values.len() > 1 {
        return Err(InvalidQuery::new(format!(
            "Multiple member_of{suffix} parameters are not supported"
        )));
    }
    let mut out = MemberOf::default();
    for value in values {
        let (required, forbidden) = member_of_value(value)?;
        if !required.is_empty() {
            out.required.push(required);
        }
        if !forbidden.is_empty() {
            if !FORBIDDEN_AGGREGATES.contains(version) {
                return Err(InvalidQuery::new(format!(
                    "Forbidden member_of{suffix} parameters are not supported in the specified microversion"
                )));
            }
            out.forbidden.extend(forbidden);
        }
    }
    Ok(out)
}

/// One `member_of` value: a UUID, `!UUID`, `in:U1,U2` or `!in:U1,U2`.
fn member_of_value(value: &str) -> Result<(BTreeSet<String>, BTreeSet<String>)> {
    if value.contains(',') && !(value.starts_with("in:") || value.starts_with("!in:")) {
        return Err(InvalidQuery::new(format!(
            "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: {value}"
        )));
    }
    let split = |list: &str| list.split(',').map(str::to_owned).collect::<BTreeSet<_>>();
    let (required, forbidden) = if let Some(list) = value.strip_prefix("!in:") {
        (BTreeSet::new(), split(list))
    } else if let Some(one) = value.strip_prefix('!') {
        (BTreeSet::new(), BTreeSet::from([one.to_owned()]))
    } else if let Some(list) = value.strip_prefix("in:") {
        (split(list), BTreeSet::new())
    } else {
        (BTreeSet::from([value.to_owned()]), BTreeSet::new())
    };
    if let Some(bad) = required.iter().chain(&forbidden).find(|u| !is_uuid_like(u)) {
        return Err(invalid(&format!(
            "Expected 'member_of' parameter to contain valid UUID(s). Got: {bad}"
        )));
    }
    Ok((required, forbidden))
}

/// The traits a `required` filter asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequiredTraits {
    /// Each set is "any of these"; all sets must hold.
    pub required: Vec<BTreeSet<String>>,
    /// None of these.
    pub forbidden: BTreeSet<String>,
}

/// Parses the `required{suffix}` parameters as the served `version`
/// allows: before 1.39 only the last one counts and `in:` is refused; `!`
/// from 1.22.
///
/// # Errors
///
/// As [`traits_value`], for the values that count.
pub fn required_traits(
    params: &QueryParams,
    version: Version,
    suffix: &str,
) -> Result<RequiredTraits> {
    let allow_forbidden = FORBIDDEN_TRAITS.contains(version);
    let allow_any = ANY_TRAITS.contains(version);
    let mut values = params.get_all(&format!("required{suffix}"));
    if !allow_any && values.len() > 1 {
        values.drain(..values.len() - 1);
    }
    let mut out = RequiredTraits::default();
    for value in values {
        let traits = traits_value(value, allow_forbidden, allow_any)?;
        out.required.extend(traits.required);
        out.forbidden.extend(traits.forbidden);
    }
    Ok(out)
}

/// Parses one `required` value (also `root_required`, which takes neither
/// `in:` nor several values): `A,!B` (each trait a set of its own, `!`
/// only when `allow_forbidden`), or `in:A,B` (one "any of" set, only when
/// `allow_any`). Names are stripped of surrounding whitespace.
///
/// # Errors
///
/// On an empty trait, a `!` not allowed, or `in:` not allowed or with a
/// `!`.
pub fn traits_value(value: &str, allow_forbidden: bool, allow_any: bool) -> Result<RequiredTraits> {
    if let Some(list) = value.strip_prefix("in:") {
        if !allow_any {
            return Err(invalid(&format!(
                "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: {value}"
            )));
        }
        let any: BTreeSet<String> = list.split(',').map(|t| py_strip(t).to_owned()).collect();
        if any.iter().any(String::is_empty) {
            return Err(invalid(&format!(
                "Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: {value}"
            )));
        }
        if any.iter().any(|t| t.starts_with('!')) {
            return Err(invalid(&format!(
                "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: {value}"
            )));
        }
        return Ok(RequiredTraits {
            required: vec![any],
            forbidden: BTreeSet::new(),
        });
    }
    let all: Vec<&str> = value.split(',').map(py_strip).collect();
    let forbidden: BTreeSet<String> = all
        .iter()
        .filter(|t| t.starts_with('!'))
        .map(|t| t.trim_start_matches('!').to_owned())
        .collect();
    if all.iter().any(|t| t.is_empty()) || forbidden.iter().any(String::is_empty) {
        let form = if allow_forbidden {
            "HW_CPU_X86_VMX,!CUSTOM_MAGIC"
        } else {
            "HW_CPU_X86_VMX,CUSTOM_MAGIC"
        };
        return Err(invalid(&format!(
            "Expected 'required' parameter value of the form: {form}. Got an empty trait in: {value}"
        )));
    }
    if !forbidden.is_empty() && !allow_forbidden {
        return Err(invalid(&format!(
            "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: {value}"
        )));
    }
    let required = all
        .iter()
        .filter(|t| !t.starts_with('!'))
        .map(|t| BTreeSet::from([(*t).to_owned()]))
        .collect();
    Ok(RequiredTraits {
        required,
        forbidden,
    })
}

/// Python's `str.strip()`: whitespace off both ends.
fn py_strip(text: &str) -> &str {
    text.trim_matches(char::is_whitespace)
}

/// Parses a `resources` value (`VCPU:2,MEMORY_MB:1024`): the amounts by
/// class, in the order first given (a repeated class keeps its last
/// amount).
///
/// # Errors
///
/// When the value is blank, a part is not `NAME:AMOUNT`, or an amount is
/// not an integer ([`python_int`]) of at least 1.
pub fn resources(value: &str) -> Result<Vec<(String, i64)>> {
    const FORM: &str = "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024.";
    if py_strip(value).is_empty() {
        return Err(InvalidQuery::new(format!("{FORM} Got: empty string.")));
    }
    let mut out: Vec<(String, i64)> = Vec::new();
    for part in value.split(',') {
        let mut pieces = part.split(':');
        let (Some(name), Some(amount), None) = (pieces.next(), pieces.next(), pieces.next()) else {
            return Err(InvalidQuery::new(format!("{FORM} Got: {part}.")));
        };
        let Some(amount) = python_int(amount) else {
            return Err(InvalidQuery::new(format!(
                "Requested resource {name} expected positive integer amount. Got: {amount}."
            )));
        };
        if amount < 1 {
            return Err(InvalidQuery::new(format!(
                "Requested resource {name} requires amount >= 1. Got: {amount}."
            )));
        }
        match out.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = amount,
            None => out.push((name.to_owned(), amount)),
        }
    }
    Ok(out)
}

/// An integer as Python's `int()` reads a string: surrounding whitespace,
/// an optional sign, digits with single underscores between them; `None`
/// for anything else, or beyond `i64`.
#[must_use]
pub fn python_int(text: &str) -> Option<i64> {
    let text = py_strip(text);
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let magnitude: i64 = digits.replace('_', "").parse().ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(minor: u32) -> Version {
        Version::new(1, minor)
    }

    fn detail(e: InvalidQuery) -> String {
        assert_eq!(e.to_string(), e.detail());
        e.into_detail()
    }

    #[test]
    fn parses_repeats_blanks_and_encodings() {
        let q = QueryParams::parse(Some("a=1&b=&a=2&c&name=%e2%98%83&s=a+b")).unwrap();
        assert_eq!(q.get("a"), Some("2"));
        assert_eq!(q.get_all("a"), vec!["1", "2"]);
        assert_eq!(q.get("b"), Some(""));
        assert_eq!(q.get("c"), Some(""));
        assert_eq!(q.get("name"), Some("☃"));
        assert_eq!(q.get("s"), Some("a b"));
        assert!(!q.contains("d"));
        assert_eq!(
            q.as_object(),
            serde_json::json!({"a": "2", "b": "", "c": "", "name": "☃", "s": "a b"})
        );
        assert_eq!(
            detail(QueryParams::parse(Some("x=%ff")).unwrap_err()),
            "Invalid query string parameters: the query string is not valid UTF-8"
        );
        assert_eq!(
            QueryParams::parse(Some("x=%zz")).unwrap().get("x"),
            Some("%zz")
        );
        assert_eq!(
            QueryParams::parse(Some("x=%4")).unwrap().get("x"),
            Some("%4")
        );
        assert_eq!(QueryParams::parse(None).unwrap(), QueryParams::default());
    }

    #[test]
    fn uuid_like_as_oslo_reads_it() {
        assert!(is_uuid_like("01234567-89ab-cdef-0123-456789abcdef"));
        assert!(is_uuid_like("0123456789ABCDEF0123456789abcdef"));
        assert!(is_uuid_like(
            "{urn:uuid:01234567-89ab-cdef-0123-456789abcdef}"
        ));
        assert!(!is_uuid_like("01234567-89ab-cdef-0123-456789abcde"));
        assert!(!is_uuid_like("01234567-89ab-cdef-0123-456789abcdeg"));
        assert!(!is_uuid_like(" 0123456789abcdef0123456789abcdef"));
    }

    #[test]
    fn uuids_made_canonical() {
        let u = "2290d4af-9e6e-400b-9d65-1ee01376f71a";
        assert_eq!(canonical_uuid(u).as_deref(), Some(u));
        assert_eq!(
            canonical_uuid("2290D4AF9E6E400B9D651EE01376F71A").as_deref(),
            Some(u)
        );
        assert_eq!(
            canonical_uuid("urn:uuid:{2290d4af-9e6e-400b-9d65-1ee01376f71a}").as_deref(),
            Some(u)
        );
        assert_eq!(
            canonical_uuid("2290d4af-uuid:9e6e-400b-9d65-1ee01376f71a").as_deref(),
            Some(u)
        );
        assert_eq!(canonical_uuid("this is not a uuid"), None);
        assert_eq!(canonical_uuid("2290d4af9e6e400b9d651ee01376f71"), None);
    }

    #[test]
    fn member_of_by_version() {
        let q = |s: &str| QueryParams::parse(Some(s)).unwrap();
        let a = "83a3d69d-8920-48e2-8914-cadfd8fa2f91";
        let b = "99652f11-9f77-46b9-80b7-4b1989be9f8c";
        let parsed = member_of(&q(&format!("member_of=in:{a},{b}")), v(3), "").unwrap();
        assert_eq!(
            parsed.required,
            vec![BTreeSet::from([a.to_owned(), b.to_owned()])]
        );
        let two = format!("member_of={a}&member_of={b}");
        let err = member_of(&q(&two), v(23), "").unwrap_err();
        assert_eq!(
            detail(err),
            "Multiple member_of parameters are not supported"
        );
        assert_eq!(member_of(&q(&two), v(24), "").unwrap().required.len(), 2);
        let forbidden = format!("member_of=!{a}");
        let err = member_of(&q(&forbidden), v(31), "").unwrap_err();
        assert!(detail(err).starts_with("Forbidden member_of parameters are not supported"));
        let parsed = member_of(&q(&format!("member_of=!in:{a},{b}")), v(32), "").unwrap();
        assert_eq!(parsed.forbidden.len(), 2);
        assert!(parsed.required.is_empty());
        let err = member_of(&q("member_of=not+a+uuid"), v(32), "").unwrap_err();
        assert_eq!(
            detail(err),
            "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: not a uuid"
        );
        let err = member_of(&q(&format!("member_of={a},{b}")), v(32), "").unwrap_err();
        assert!(detail(err).starts_with("Multiple values for 'member_of' must be prefixed"));
        let err = member_of(&q(&format!("member_of=in:{a},!{b}")), v(32), "").unwrap_err();
        assert!(detail(err).contains("to contain valid UUID(s)"));
    }

    #[test]
    fn required_by_version() {
        let q = |s: &str| QueryParams::parse(Some(s)).unwrap();
        let parsed = required_traits(&q("required=A,!B,%20C"), v(22), "").unwrap();
        assert_eq!(
            parsed.required,
            vec![
                BTreeSet::from(["A".to_owned()]),
                BTreeSet::from(["C".to_owned()])
            ]
        );
        assert_eq!(parsed.forbidden, BTreeSet::from(["B".to_owned()]));
        let err = required_traits(&q("required=!B"), v(21), "").unwrap_err();
        assert_eq!(
            detail(err),
            "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !B"
        );
        let err = required_traits(&q("required="), v(22), "").unwrap_err();
        assert_eq!(
            detail(err),
            "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: "
        );
        let err = required_traits(&q("required=A,,B"), v(21), "").unwrap_err();
        assert!(detail(err).contains("form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait"));
        // Before 1.39 the last one wins and in: is refused.
        let parsed = required_traits(&q("required=A&required=B"), v(38), "").unwrap();
        assert_eq!(parsed.required, vec![BTreeSet::from(["B".to_owned()])]);
        let err = required_traits(&q("required=in:A,B"), v(38), "").unwrap_err();
        assert!(detail(err).contains("only supported since microversion 1.39. Got: in:A,B"));
        let parsed = required_traits(&q("required=in:A,B&required=C,!D"), v(39), "").unwrap();
        assert_eq!(
            parsed.required,
            vec![
                BTreeSet::from(["A".to_owned(), "B".to_owned()]),
                BTreeSet::from(["C".to_owned()])
            ]
        );
        assert_eq!(parsed.forbidden, BTreeSet::from(["D".to_owned()]));
        let err = required_traits(&q("required=in:A,!B"), v(39), "").unwrap_err();
        assert!(detail(err).contains("does not support forbidden traits"));
        let err = required_traits(&q("required=in:A,"), v(39), "").unwrap_err();
        assert!(detail(err).contains("Got an empty trait in: in:A,"));
        // Any number of leading ! is one forbidden trait.
        let parsed = required_traits(&q("required=!!!A"), v(22), "").unwrap();
        assert_eq!(parsed.forbidden, BTreeSet::from(["A".to_owned()]));
        // A suffix names its own parameters.
        let parsed = required_traits(&q("required=A&required_1=B"), v(39), "_1").unwrap();
        assert_eq!(parsed.required, vec![BTreeSet::from(["B".to_owned()])]);
    }

    #[test]
    fn root_required_values() {
        let parsed = traits_value(" A , !B", true, false).unwrap();
        assert_eq!(parsed.required, vec![BTreeSet::from(["A".to_owned()])]);
        assert_eq!(parsed.forbidden, BTreeSet::from(["B".to_owned()]));
        assert_eq!(
            detail(traits_value("in:A", true, false).unwrap_err()),
            "Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: in:A"
        );
    }

    #[test]
    fn resources_param() {
        assert_eq!(
            resources("VCPU:2,MEMORY_MB:1024,VCPU:3").unwrap(),
            vec![("VCPU".to_owned(), 3), ("MEMORY_MB".to_owned(), 1024)]
        );
        assert_eq!(
            detail(resources(" ").unwrap_err()),
            "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string."
        );
        assert!(detail(resources("VCPU").unwrap_err()).ends_with("Got: VCPU."));
        assert!(detail(resources("VCPU:1:2").unwrap_err()).ends_with("Got: VCPU:1:2."));
        assert_eq!(
            detail(resources("VCPU:x").unwrap_err()),
            "Requested resource VCPU expected positive integer amount. Got: x."
        );
        assert_eq!(
            detail(resources("VCPU:0").unwrap_err()),
            "Requested resource VCPU requires amount >= 1. Got: 0."
        );
        assert_eq!(python_int(" +1_0 "), Some(10));
        assert_eq!(python_int("-3"), Some(-3));
        assert_eq!(python_int("1__0"), None);
        assert_eq!(python_int(""), None);
        assert_eq!(python_int("99999999999999999999"), None);
    }
}
