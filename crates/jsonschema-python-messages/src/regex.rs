//! Python's `re` patterns, as `re.search` applies them to the names and
//! strings `pattern` and `patternProperties` check.

use std::collections::HashMap;
use std::sync::Arc;

use fancy_regex::Regex;

/// A compiled pattern.
pub(crate) struct PythonRegex(Regex);

impl PythonRegex {
    /// `re.search(pattern, text)`: a match anywhere in `text`.
    pub(crate) fn search(&self, text: &str) -> bool {
        self.0.is_match(text).unwrap_or(false)
    }
}

/// The patterns of one schema, each compiled once however often it occurs.
#[derive(Default)]
pub(crate) struct Regexes(HashMap<String, Arc<PythonRegex>>);

impl Regexes {
    /// Compiles a Python `re` pattern for `re.search`.
    pub(crate) fn compile(
        &mut self,
        pattern: &str,
    ) -> Result<Arc<PythonRegex>, fancy_regex::Error> {
        if let Some(regex) = self.0.get(pattern) {
            return Ok(Arc::clone(regex));
        }
        let regex = Arc::new(PythonRegex(Regex::new(&translate_regex(pattern))?));
        self.0.insert(pattern.to_owned(), Arc::clone(&regex));
        Ok(regex)
    }
}

/// Python `re` syntax to `fancy_regex` syntax: `$` also matches before a
/// final newline, `\Z` is the end, and a backslash before any other
/// non-alphanumeric ASCII character is that character.
fn translate_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('Z') if !in_class => out.push_str(r"\z"),
                Some(e) if e.is_ascii() && !e.is_ascii_alphanumeric() => {
                    out.push_str(&fancy_regex::escape(&e.to_string()));
                }
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A `]` or `^]` right after the bracket is literal.
                let rest = chars.as_str();
                if let Some(after) = rest.strip_prefix("^]") {
                    out.push_str(r"^\]");
                    chars = after.chars();
                } else if let Some(after) = rest.strip_prefix(']') {
                    out.push_str(r"\]");
                    chars = after.chars();
                }
            }
            '[' => out.push_str(r"\["),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '$' if !in_class => out.push_str(r"(?:\n?\z)"),
            // Set operators in Rust classes, plain characters in Python's.
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            '-' if in_class && chars.as_str().starts_with('-') => out.push_str(r"\-"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regexes_read_as_python_reads_them() {
        let mut regexes = Regexes::default();
        let mut m = |p: &str, s: &str| {
            regexes
                .compile(p)
                .unwrap_or_else(|e| panic!("{p}: {e}"))
                .search(s)
        };
        assert!(m(r"^CUSTOM\_[A-Z]+$", "CUSTOM_A"));
        assert!(m(r"^CUSTOM\_[A-Z]+$", "CUSTOM_A\n"));
        assert!(!m(r"^CUSTOM\_[A-Z]+$", "CUSTOM_A\n\n"));
        assert!(m(r"^[]a]+\Z", "]a"));
        assert!(!m(r"^[]a]+\Z", "]a\n"));
        assert!(m(r"^[\]x]$", "]"));
        assert!(m(r"^a$|^b$", "b"));
        assert!(m(r"(?P<x>a)(?P=x)", "aa"));
        assert!(m(r"[a&&b]", "&"));
        assert!(regexes.compile("(").is_err());
    }

    #[test]
    fn a_pattern_is_compiled_once() {
        let mut regexes = Regexes::default();
        let first = regexes.compile("^a").unwrap();
        let again = regexes.compile("^a").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
    }
}
