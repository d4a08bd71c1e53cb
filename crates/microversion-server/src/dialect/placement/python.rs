//! The Python semantics upstream Placement's refusals are made of:
//! microversion_parse reads a version with Python's `int()` and quotes
//! the exception, whose text shows the part with `repr()`.

/// Whether Python's `int(part)` reads `part` (of ISO-8859-1 characters):
/// optional white space around an optional sign and ASCII digits, single
/// underscores allowed between digits.
pub(super) fn int_reads(part: &str) -> bool {
    let is_space = |c: char| matches!(c, '\t'..='\r' | '\u{1c}'..='\u{20}' | '\u{85}' | '\u{a0}');
    let digits = part.trim_matches(is_space);
    let digits = digits.strip_prefix(['+', '-']).unwrap_or(digits);
    !digits.is_empty()
        && digits
            .split('_')
            .all(|run| !run.is_empty() && run.bytes().all(|b| b.is_ascii_digit()))
}

/// Python's `repr()` of a string of ISO-8859-1 characters (a header's
/// text). jsonschema-python-messages has the whole of Unicode; this crate
/// needs it only behind its `json-schema` feature.
pub(super) fn repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            // Control characters, and the two Latin-1 characters Python
            // does not print (no-break space, soft hyphen).
            c if c.is_control() || c == '\u{a0}' || c == '\u{ad}' => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}
