//! The checks behind the `format` keyword.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

type Check = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// The checks behind the `format` keyword, by format name, as
/// `jsonschema.FormatChecker` holds them. A format without a check passes.
///
/// [`FormatChecker::default`] has what `jsonschema.FormatChecker()` checks
/// without optional packages: `uuid` (hyphens at 8, 13, 18 and 23, as
/// `jsonschema` asks), `email` and `idn-email` (an `@`), `ipv4`, `ipv6`
/// and `date`. Each passes values that are not strings.
#[derive(Clone)]
pub struct FormatChecker {
    checks: BTreeMap<String, Check>,
}

impl fmt::Debug for FormatChecker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.checks.keys()).finish()
    }
}

impl Default for FormatChecker {
    fn default() -> Self {
        FormatChecker::empty()
            .with("uuid", |v| strings_only(v, is_uuid))
            .with("email", |v| strings_only(v, |s| s.contains('@')))
            .with("idn-email", |v| strings_only(v, |s| s.contains('@')))
            .with("ipv4", |v| {
                strings_only(v, |s| s.parse::<std::net::Ipv4Addr>().is_ok())
            })
            .with("ipv6", |v| strings_only(v, is_ipv6))
            .with("date", |v| strings_only(v, is_date))
    }
}

fn strings_only(value: &Value, check: impl Fn(&str) -> bool) -> bool {
    value.as_str().is_none_or(check)
}

/// Python's `uuid.UUID(s)` accepts `s` (after dropping `urn:`, `uuid:`,
/// braces and hyphens, 32 hexadecimal digits as `int(x, 16)` reads them).
fn python_uuid_parses(s: &str) -> bool {
    let text = s.replace("urn:", "").replace("uuid:", "");
    let hex: String = text
        .trim_matches(|c| c == '{' || c == '}')
        .chars()
        .filter(|&c| c != '-')
        .collect();
    if hex.chars().count() != 32 {
        return false;
    }
    // int(hex, 16): surrounding whitespace, a sign, single underscores
    // between digits.
    let body = hex.trim_matches(|c: char| c.is_whitespace());
    let body = body.strip_prefix(['+', '-']).unwrap_or(body);
    !body.is_empty()
        && !body.starts_with('_')
        && !body.ends_with('_')
        && !body.contains("__")
        && body.chars().all(|c| c == '_' || c.is_ascii_hexdigit())
}

/// `jsonschema`'s `uuid` format: `UUID(s)` parses and hyphens are at 8,
/// 13, 18 and 23.
fn is_uuid(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    python_uuid_parses(s) && [8, 13, 18, 23].iter().all(|&i| chars.get(i) == Some(&'-'))
}

/// `ipaddress.IPv6Address(s)`, with an optional `%scope`.
fn is_ipv6(s: &str) -> bool {
    let (addr, scope) = match s.split_once('%') {
        Some((addr, scope)) => (addr, Some(scope)),
        None => (s, None),
    };
    if scope.is_some_and(|scope| scope.is_empty() || scope.contains('%')) {
        return false;
    }
    addr.parse::<std::net::Ipv6Addr>().is_ok()
}

/// `^\d{4}-\d{2}-\d{2}$` (ASCII) and `datetime.date.fromisoformat`.
fn is_date(s: &str) -> bool {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &s[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    // A trailing newline passes the pattern but not fromisoformat.
    year >= 1 && (1..=days).contains(&day) && s.len() == b.len() && !s.ends_with('\n')
}

impl FormatChecker {
    /// A checker that checks no format.
    #[must_use]
    pub fn empty() -> Self {
        FormatChecker {
            checks: BTreeMap::new(),
        }
    }

    /// Checks `format` with `check` (replacing any check of that name):
    /// `false` fails with `<instance> is not a '<format>'`.
    #[must_use]
    pub fn with(
        mut self,
        format: impl Into<String>,
        check: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.checks.insert(format.into(), Arc::new(check));
        self
    }

    /// Whether `instance` conforms to `format` (true for unknown formats).
    #[must_use]
    pub fn conforms(&self, format: &str, instance: &Value) -> bool {
        self.checks.get(format).is_none_or(|check| check(instance))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn format_checkers_can_be_replaced() {
        let no_dashes = json!("0123456789abcdef0123456789ABCDEF");
        assert!(!FormatChecker::default().conforms("uuid", &no_dashes));
        let lenient =
            FormatChecker::default().with("uuid", |v| v.as_str().is_some_and(|s| s.len() == 32));
        assert!(lenient.conforms("uuid", &no_dashes));
        assert!(FormatChecker::empty().conforms("uuid", &json!("x")));
        assert!(FormatChecker::default().conforms("uuid", &json!(5)));
        assert_eq!(
            format!("{:?}", FormatChecker::empty().with("a", |_| true)),
            r#"{"a"}"#
        );
    }

    #[test]
    fn python_uuid_parsing() {
        assert!(is_uuid("01234567-89ab-cdef-0123-456789abcdef"));
        assert!(is_uuid("01234567-89AB-CDEF-0123-456789ABCDEF"));
        assert!(!is_uuid("01234567-89ab-cdef-0123-456789abcdeg"));
        assert!(!is_uuid("{01234567-89ab-cdef-0123-456789abcdef}"));
        assert!(python_uuid_parses("{0123456789abcdef0123456789abcdef}"));
        assert!(python_uuid_parses(
            "urn:uuid:0123456789abcdef0123456789abcdef"
        ));
        assert!(!python_uuid_parses("0123456789abcdef0123456789abcde"));
    }

    #[test]
    fn dates_and_addresses() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("0000-01-01"));
        assert!(!is_date("2024-1-01"));
        assert!(is_ipv6("::1"));
        assert!(is_ipv6("fe80::1%eth0"));
        assert!(!is_ipv6("fe80::1%"));
        assert!(!is_ipv6("1.2.3.4"));
    }
}
