//! Python's `repr()` and `pprint.pformat(width=72, sort_dicts=False)` of
//! what Python's `json.loads` makes of a document: `dict`, `list`, `str`,
//! `int`, `float`, `True`, `False` and `None`.

use serde_json::{Number, Value};

/// `repr(value)`.
pub(crate) fn repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(value, &mut out);
    out
}

fn write_repr(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&repr_number(n)),
        Value::String(s) => out.push_str(&repr_str(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&repr_str(key));
                out.push_str(": ");
                write_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// `repr()` of a JSON number: an `int` unless the text had a fraction or an
/// exponent, then a `float`.
pub(crate) fn repr_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        repr_float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// `repr(float)`: the shortest digits that round-trip, in positional
/// notation with at least one decimal, or in exponent notation when the
/// exponent is below -4 or at least 16.
pub(crate) fn repr_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest round-tripping digits too.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if !(-4..16).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    } else if exp >= 0 {
        let int_len = usize::try_from(exp).unwrap_or(0) + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', int_len - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n(
            '0',
            usize::try_from(-exp - 1).unwrap_or(0),
        ));
        out.push_str(&digits);
    }
    out
}

/// `repr(str)`: single quotes unless the text has a single quote and no
/// double quote; backslash escapes for the quote, backslash, `\t`, `\n`,
/// `\r`, and `\x`/`\u`/`\U` escapes for characters Python does not print.
pub(crate) fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            c if c == quote || c == '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if (c as u32) < 0x7f || is_printable(c) => out.push(c),
            c if (c as u32) <= 0xff => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable()` for one non-ASCII character: false for
/// control, format, private-use, line and paragraph separators and spaces
/// other than U+0020. Unassigned code points (which Python also escapes)
/// are only known here for the noncharacters.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    !matches!(u,
        // Cc
        0x80..=0x9f
        // Zs other than the space
        | 0xa0 | 0x1680 | 0x2000..=0x200a | 0x202f | 0x205f | 0x3000
        // Zl, Zp
        | 0x2028 | 0x2029
        // Cf
        | 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891 | 0x8e2 | 0x180e
        | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x2064 | 0x2066..=0x206f | 0xfeff
        | 0xfff9..=0xfffb | 0x110bd | 0x110cd | 0x13430..=0x1343f | 0x1bca0..=0x1bca3
        | 0x1d173..=0x1d17a | 0xe0001 | 0xe0020..=0xe007f
        // Co
        | 0xe000..=0xf8ff | 0xf0000..=0xffffd | 0x100000..=0x10fffd
        // Cn: noncharacters
        | 0xfdd0..=0xfdef
    ) && (u & 0xfffe) != 0xfffe
}

/// Python's `str.isspace()`.
fn is_space(c: char) -> bool {
    c.is_whitespace() || matches!(c as u32, 0x1c..=0x1f)
}

/// How long a [`pformat`] may grow (in bytes) before it is cut: four times
/// placement's default body limit, far above what a request body prints
/// as. Indentation can make pprint's text the square of its input (a value
/// nested in long keys, with many lines at that indent), and Python would
/// print all of it.
const MAX_PFORMAT_LEN: usize = 4 << 20;

/// `pprint.pformat(value, width=width, sort_dicts=False)`, cut after
/// [`MAX_PFORMAT_LEN`] bytes with `...`.
pub(crate) fn pformat(value: &Value, width: usize) -> String {
    let mut out = String::new();
    let printer = Printer {
        width: isize::try_from(width).unwrap_or(isize::MAX),
    };
    printer.format(value, &mut out, 0, 0, 0);
    if out.len() > MAX_PFORMAT_LEN {
        let mut end = MAX_PFORMAT_LEN;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push_str("...");
    }
    out
}

/// Whether `repr(value)` is longer than `limit` characters. It reads only
/// as much of `value` as it takes to know: pprint asks this at every level
/// of a nested value, and a whole `repr` each time would cost the size of
/// the value times its depth.
fn repr_longer_than(value: &Value, limit: isize) -> bool {
    let Ok(mut budget) = usize::try_from(limit) else {
        return true;
    };
    !repr_fits(value, &mut budget)
}

/// Takes the width of `repr(value)` from `budget`; false once it runs out.
fn repr_fits(value: &Value, budget: &mut usize) -> bool {
    match value {
        Value::Null | Value::Bool(true) => take(budget, 4),
        Value::Bool(false) => take(budget, 5),
        Value::Number(n) => take(budget, repr_number(n).len()),
        Value::String(s) => str_fits(s, budget),
        Value::Array(items) => {
            take(budget, 2)
                && items
                    .iter()
                    .enumerate()
                    .all(|(i, item)| (i == 0 || take(budget, 2)) && repr_fits(item, budget))
        }
        Value::Object(map) => {
            take(budget, 2)
                && map.iter().enumerate().all(|(i, (key, item))| {
                    (i == 0 || take(budget, 2))
                        && str_fits(key, budget)
                        && take(budget, 2)
                        && repr_fits(item, budget)
                })
        }
    }
}

fn str_fits(s: &str, budget: &mut usize) -> bool {
    // Each character is one or more in the repr, and at most four bytes in
    // the text: a long text is too long without writing its repr.
    s.len() / 4 + 2 <= *budget && take(budget, width_of(&repr_str(s)).unsigned_abs())
}

fn take(budget: &mut usize, width: usize) -> bool {
    match budget.checked_sub(width) {
        Some(rest) => {
            *budget = rest;
            true
        }
        None => false,
    }
}

fn width_of(s: &str) -> isize {
    isize::try_from(s.chars().count()).unwrap_or(isize::MAX)
}

struct Printer {
    width: isize,
}

impl Printer {
    fn format(&self, value: &Value, out: &mut String, indent: isize, allowance: isize, level: u32) {
        if repr_longer_than(value, self.width - indent - allowance) {
            match value {
                Value::Object(map) => {
                    out.push('{');
                    if !map.is_empty() {
                        self.dict_items(map, out, indent, allowance + 1, level + 1);
                    }
                    out.push('}');
                    return;
                }
                Value::Array(items) => {
                    out.push('[');
                    self.items(items, out, indent, allowance + 1, level + 1);
                    out.push(']');
                    return;
                }
                Value::String(s) if !s.is_empty() => {
                    self.string(s, out, indent, allowance, level + 1);
                    return;
                }
                _ => {}
            }
        }
        out.push_str(&repr(value));
    }

    fn dict_items(
        &self,
        map: &serde_json::Map<String, Value>,
        out: &mut String,
        indent: isize,
        allowance: isize,
        level: u32,
    ) {
        let indent = indent + 1;
        let last_index = map.len().saturating_sub(1);
        for (i, (key, item)) in map.iter().enumerate() {
            if out.len() > MAX_PFORMAT_LEN {
                return;
            }
            let last = i == last_index;
            let rep = repr_str(key);
            out.push_str(&rep);
            out.push_str(": ");
            self.format(
                item,
                out,
                indent + width_of(&rep) + 2,
                if last { allowance } else { 1 },
                level,
            );
            if !last {
                out.push_str(",\n");
                push_spaces(out, indent);
            }
        }
    }

    fn items(
        &self,
        items: &[Value],
        out: &mut String,
        indent: isize,
        allowance: isize,
        level: u32,
    ) {
        let indent = indent + 1;
        let last_index = items.len().saturating_sub(1);
        for (i, item) in items.iter().enumerate() {
            if out.len() > MAX_PFORMAT_LEN {
                return;
            }
            let last = i == last_index;
            if i > 0 {
                out.push_str(",\n");
                push_spaces(out, indent);
            }
            self.format(item, out, indent, if last { allowance } else { 1 }, level);
        }
    }

    fn string(&self, s: &str, out: &mut String, indent: isize, allowance: isize, level: u32) {
        let (indent, allowance) = if level == 1 {
            (indent + 1, allowance + 1)
        } else {
            (indent, allowance)
        };
        let lines = split_lines_keep_ends(s);
        let max_width = self.width - indent;
        let mut max_width1 = max_width;
        let mut chunks: Vec<String> = Vec::new();
        let mut rep = String::new();
        for (i, line) in lines.iter().enumerate() {
            rep = repr_str(line);
            let last_line = i == lines.len() - 1;
            if last_line {
                max_width1 -= allowance;
            }
            if width_of(&rep) <= max_width1 {
                chunks.push(rep.clone());
                continue;
            }
            let parts = space_parts(line);
            let mut max_width2 = max_width;
            let mut current = String::new();
            for (j, part) in parts.iter().enumerate() {
                let candidate = format!("{current}{part}");
                if j == parts.len() - 1 && last_line {
                    max_width2 -= allowance;
                }
                if width_of(&repr_str(&candidate)) > max_width2 {
                    if !current.is_empty() {
                        chunks.push(repr_str(&current));
                    }
                    current = (*part).to_owned();
                } else {
                    current = candidate;
                }
            }
            if !current.is_empty() {
                chunks.push(repr_str(&current));
            }
        }
        if chunks.len() == 1 {
            out.push_str(&rep);
            return;
        }
        if level == 1 {
            out.push('(');
        }
        for (i, chunk) in chunks.iter().enumerate() {
            if out.len() > MAX_PFORMAT_LEN {
                return;
            }
            if i > 0 {
                out.push('\n');
                push_spaces(out, indent);
            }
            out.push_str(chunk);
        }
        if level == 1 {
            out.push(')');
        }
    }
}

fn push_spaces(out: &mut String, n: isize) {
    out.extend(std::iter::repeat_n(' ', usize::try_from(n).unwrap_or(0)));
}

/// `str.splitlines(keepends=True)`.
fn split_lines_keep_ends(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\r' => match chars.peek() {
                Some(&(j, '\n')) => {
                    chars.next();
                    j + 1
                }
                _ => i + 1,
            },
            '\n' | '\u{0b}' | '\u{0c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => i + c.len_utf8(),
            _ => continue,
        };
        lines.push(&s[start..end]);
        start = end;
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

/// `re.findall(r'\S*\s*', line)` without the empty match at the end.
fn space_parts(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = line;
    while !rest.is_empty() {
        let word_end = rest.find(is_space).unwrap_or(rest.len());
        let space_end = rest[word_end..]
            .find(|c: char| !is_space(c))
            .map_or(rest.len(), |i| word_end + i);
        parts.push(&rest[..space_end]);
        rest = &rest[space_end..];
    }
    parts
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reprs() {
        assert_eq!(repr(&json!(null)), "None");
        assert_eq!(repr(&json!(true)), "True");
        assert_eq!(repr(&json!([1, -2, 1.5, false])), "[1, -2, 1.5, False]");
        assert_eq!(
            repr(&json!({"b": "x", "a": {"c": []}})),
            "{'b': 'x', 'a': {'c': []}}"
        );
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(
            repr_str("a\\b\n\t\r\u{1}\u{7f}"),
            "'a\\\\b\\n\\t\\r\\x01\\x7f'"
        );
        assert_eq!(
            repr_str("é\u{a0}\u{200b}😀\u{e000}\u{f0000}"),
            "'é\\xa0\\u200b😀\\ue000\\U000f0000'"
        );
    }

    #[test]
    fn floats() {
        for (f, text) in [
            (1.0, "1.0"),
            (100.0, "100.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (-2.5, "-2.5"),
            (-0.0, "-0.0"),
            (1e300, "1e+300"),
            (1.100000023841858, "1.100000023841858"),
        ] {
            assert_eq!(repr_float(f), text, "{f}");
        }
    }

    #[test]
    fn pformat_wraps_like_pprint() {
        // Expected texts from Python 3.11 pprint.pformat(width=72, sort_dicts=False).
        let schema = json!({
            "type": "object",
            "properties": {"name": {"type": "string", "pattern": "^CUSTOM_[A-Z0-9_]+$", "maxLength": 255}},
            "required": ["name"],
            "additionalProperties": false
        });
        assert_eq!(
            pformat(&schema, 72),
            "{'type': 'object',\n 'properties': {'name': {'type': 'string',\n                         'pattern': '^CUSTOM_[A-Z0-9_]+$',\n                         'maxLength': 255}},\n 'required': ['name'],\n 'additionalProperties': False}"
        );
        assert_eq!(pformat(&json!({"a": 1}), 72), "{'a': 1}");
        let long = "word ".repeat(20);
        assert_eq!(
            pformat(&json!(long), 72),
            "('word word word word word word word word word word word word word '\n 'word word word word word word word ')"
        );
        assert_eq!(
            pformat(&json!({"k": long}), 72),
            "{'k': 'word word word word word word word word word word word word '\n      'word word word word word word word word '}"
        );
        assert_eq!(
            pformat(&json!((0..30).collect::<Vec<_>>()), 72),
            "[0,\n 1,\n 2,\n 3,\n 4,\n 5,\n 6,\n 7,\n 8,\n 9,\n 10,\n 11,\n 12,\n 13,\n 14,\n 15,\n 16,\n 17,\n 18,\n 19,\n 20,\n 21,\n 22,\n 23,\n 24,\n 25,\n 26,\n 27,\n 28,\n 29]"
        );
        assert_eq!(split_lines_keep_ends("a\r\nb\nc"), ["a\r\n", "b\n", "c"]);
        assert_eq!(space_parts("ab  cd e"), ["ab  ", "cd ", "e"]);
    }

    #[test]
    fn width_checks_agree_with_the_whole_repr() {
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(12.5),
            json!(-7),
            json!("it's"),
            json!("a\u{1}\u{e9}\u{1f600}\n"),
            json!([]),
            json!({}),
            json!([1, "x", {"k": [null]}]),
            json!({"a": "b", "c": [1.0, 2]}),
            json!("x".repeat(300)),
            json!(["\u{e9}".repeat(40)]),
        ];
        for v in &values {
            let width = width_of(&repr(v));
            for limit in -2..=width + 2 {
                assert_eq!(repr_longer_than(v, limit), width > limit, "{v} {limit}");
            }
        }
    }

    #[test]
    fn pformat_is_cut_past_its_bound() {
        // Every item of the list is printed at the indent of the long key:
        // uncut, 1,000 items would print as 100 MB.
        let key = "k".repeat(100_000);
        let v = json!({ key.clone(): (0..1000).collect::<Vec<_>>() });
        let text = pformat(&v, 72);
        assert_eq!(text.len(), MAX_PFORMAT_LEN + 3);
        assert!(text.ends_with("..."));
        let indent = " ".repeat(key.len() + 6);
        assert!(text.starts_with(&format!("{{'{key}': [0,\n{indent}1,\n{indent}2,\n")));
        // What fits is not cut.
        let small = json!({ "k": (0..1000).collect::<Vec<_>>() });
        assert!(!pformat(&small, 72).ends_with("..."));
    }
}
