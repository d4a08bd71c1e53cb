//! Why Python (`body.decode('utf-8')`, then `json.loads`, CPython 3.11's C
//! scanner) refuses a request body, in its words: `Expecting value: line 1
//! column 1 (char 0)`, `'utf-8' codec can't decode byte 0xff in position
//! 0: invalid start byte`, ...
//!
//! Python raises `RecursionError` for a document nested too deeply; this
//! scanner instead stops at the first bracket past a nesting bound with
//! [`JsonError::TooDeep`], so that it never recurses further than that.

use std::fmt;

/// Why Python refuses a JSON document; `Display` is `str()` of the
/// exception Python raises.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonError {
    /// `body.decode('utf-8')` fails: `'utf-8' codec can't decode byte 0xff
    /// in position 0: invalid start byte`.
    Utf8(String),
    /// `json.loads` fails: `Expecting value: line 1 column 1 (char 0)`.
    Syntax {
        /// The message before the position (`Expecting value`).
        message: &'static str,
        /// Where.
        at: Position,
    },
    /// The document nests deeper than the bound given to [`decode_error`],
    /// at the bracket past it. Python would raise `RecursionError` near
    /// there; this is worded `Nested too deeply (at most 1000 levels of
    /// arrays and objects) at: line 1 column 1001 (char 1000)`.
    TooDeep {
        /// The bound.
        limit: usize,
        /// Where.
        at: Position,
    },
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Utf8(text) => f.write_str(text),
            JsonError::Syntax { message, at } => write!(f, "{message}: {at}"),
            JsonError::TooDeep { limit, at } => write!(
                f,
                "Nested too deeply (at most {limit} levels of arrays and objects) at: {at}"
            ),
        }
    }
}

impl std::error::Error for JsonError {}

/// A place in a document as `json.JSONDecodeError` gives it; displayed
/// `line 1 column 5 (char 4)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    line: usize,
    column: usize,
    offset: usize,
}

impl Position {
    /// The line, from 1.
    #[must_use]
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column in characters, from 1.
    #[must_use]
    pub fn column(&self) -> usize {
        self.column
    }

    /// The offset in characters, from 0 (`char` in the message).
    #[must_use]
    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} column {} (char {})",
            self.line, self.column, self.offset
        )
    }
}

/// The error Python raises for `body`, or `None` when Python would accept
/// it (a caller that reads JSON with serde then knows the body holds
/// something Python reads but serde does not: `NaN`, `Infinity`, a lone
/// surrogate, a huge number). A body nested deeper than `max_depth` levels
/// of arrays and objects fails with [`JsonError::TooDeep`] at the bracket
/// past it, unless Python finds another error before.
///
/// ```
/// use jsonschema_python_messages::json::decode_error;
///
/// let error = decode_error(b"{\"a\": 1,}", 1000).unwrap();
/// assert_eq!(
///     error.to_string(),
///     "Expecting property name enclosed in double quotes: line 1 column 9 (char 8)"
/// );
/// assert_eq!(decode_error(b"[NaN]", 1000), None);
/// ```
#[must_use]
pub fn decode_error(body: &[u8], max_depth: usize) -> Option<JsonError> {
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        Err(e) => return Some(JsonError::Utf8(utf8_error(body, &e))),
    };
    let chars: Vec<char> = text.chars().collect();
    let scanner = Scanner {
        s: &chars,
        max_depth,
    };
    scanner.decode().err().map(|(problem, pos)| {
        let before = &chars[..pos.min(chars.len())];
        let line = before.iter().filter(|&&c| c == '\n').count() + 1;
        let column = match before.iter().rposition(|&c| c == '\n') {
            Some(nl) => pos - nl,
            None => pos + 1,
        };
        let at = Position {
            line,
            column,
            offset: pos,
        };
        match problem {
            Problem::Says(message) => JsonError::Syntax { message, at },
            Problem::TooDeep => JsonError::TooDeep {
                limit: max_depth,
                at,
            },
        }
    })
}

/// `UnicodeDecodeError.__str__` for the UTF-8 codec.
fn utf8_error(body: &[u8], e: &std::str::Utf8Error) -> String {
    let start = e.valid_up_to();
    let (len, reason) = match e.error_len() {
        Some(n) => {
            let first = body[start];
            let reason = if (0x80..0xc2).contains(&first) || first >= 0xf5 {
                "invalid start byte"
            } else {
                "invalid continuation byte"
            };
            (n, reason)
        }
        None => (body.len() - start, "unexpected end of data"),
    };
    if len == 1 {
        format!(
            "'utf-8' codec can't decode byte 0x{:02x} in position {start}: {reason}",
            body[start]
        )
    } else {
        format!(
            "'utf-8' codec can't decode bytes in position {start}-{}: {reason}",
            start + len - 1
        )
    }
}

/// What stopped the scan.
enum Problem {
    Says(&'static str),
    TooDeep,
}

type Fail = (Problem, usize);

struct Scanner<'a> {
    s: &'a [char],
    max_depth: usize,
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

impl Scanner<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        while self.at(i).is_some_and(is_ws) {
            i += 1;
        }
        i
    }

    fn starts_with(&self, i: usize, word: &str) -> bool {
        word.chars()
            .enumerate()
            .all(|(k, c)| self.at(i + k) == Some(c))
    }

    /// `json.loads`: the document, then only whitespace.
    fn decode(&self) -> Result<(), Fail> {
        if self.at(0) == Some('\u{feff}') {
            return Err((
                Problem::Says("Unexpected UTF-8 BOM (decode using utf-8-sig)"),
                0,
            ));
        }
        let start = self.skip_ws(0);
        let end = self.value(start, 0)?;
        let end = self.skip_ws(end);
        if end != self.s.len() {
            return Err((Problem::Says("Extra data"), end));
        }
        Ok(())
    }

    /// `scan_once`: one value at `i`, inside `depth` arrays and objects,
    /// returning where it ends.
    fn value(&self, i: usize, depth: usize) -> Result<usize, Fail> {
        const EXPECTING_VALUE: &str = "Expecting value";
        match self.at(i) {
            None => Err((Problem::Says(EXPECTING_VALUE), i)),
            Some('"') => self.string(i + 1),
            Some('{' | '[') if depth >= self.max_depth => Err((Problem::TooDeep, i)),
            Some('{') => self.object(i + 1, depth + 1),
            Some('[') => self.array(i + 1, depth + 1),
            Some('n') if self.starts_with(i, "null") => Ok(i + 4),
            Some('t') if self.starts_with(i, "true") => Ok(i + 4),
            Some('f') if self.starts_with(i, "false") => Ok(i + 5),
            Some('N') if self.starts_with(i, "NaN") => Ok(i + 3),
            Some('I') if self.starts_with(i, "Infinity") => Ok(i + 8),
            Some('-') if self.starts_with(i, "-Infinity") => Ok(i + 9),
            Some(_) => self.number(i).ok_or((Problem::Says(EXPECTING_VALUE), i)),
        }
    }

    fn digit(&self, i: usize) -> bool {
        self.at(i).is_some_and(|c| c.is_ascii_digit())
    }

    fn number(&self, start: usize) -> Option<usize> {
        let mut i = start;
        if self.at(i) == Some('-') {
            i += 1;
        }
        match self.at(i) {
            Some('1'..='9') => {
                i += 1;
                while self.digit(i) {
                    i += 1;
                }
            }
            Some('0') => i += 1,
            _ => return None,
        }
        if self.at(i) == Some('.') && self.digit(i + 1) {
            i += 2;
            while self.digit(i) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let e_start = i;
            i += 1;
            if matches!(self.at(i), Some('-' | '+')) {
                i += 1;
            }
            while self.digit(i) {
                i += 1;
            }
            if !self.digit(i - 1) {
                i = e_start;
            }
        }
        Some(i)
    }

    /// A string whose opening quote is just before `end`.
    fn string(&self, mut end: usize) -> Result<usize, Fail> {
        const UNTERMINATED: &str = "Unterminated string starting at";
        const BAD_U: &str = "Invalid \\uXXXX escape";
        let begin = end - 1;
        let len = self.s.len();
        loop {
            let mut next = end;
            let mut c = None;
            while next < len {
                let d = self.s[next];
                if d == '"' || d == '\\' {
                    c = Some(d);
                    break;
                }
                if u32::from(d) <= 0x1f {
                    return Err((Problem::Says("Invalid control character at"), next));
                }
                next += 1;
            }
            match c {
                Some('"') => return Ok(next + 1),
                Some(_) => {}
                None => return Err((Problem::Says(UNTERMINATED), begin)),
            }
            next += 1;
            if next == len {
                return Err((Problem::Says(UNTERMINATED), begin));
            }
            if self.s[next] != 'u' {
                end = next + 1;
                if !matches!(self.s[next], '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') {
                    return Err((Problem::Says("Invalid \\escape"), end - 2));
                }
                continue;
            }
            next += 1;
            end = next + 4;
            if end >= len {
                return Err((Problem::Says(BAD_U), next - 1));
            }
            let hex = |from: usize| -> Option<u32> {
                self.s[from..from + 4]
                    .iter()
                    .try_fold(0, |acc, d| d.to_digit(16).map(|v| acc * 16 + v))
            };
            let c = hex(next).ok_or((Problem::Says(BAD_U), end - 5))?;
            next = end;
            if (0xd800..0xdc00).contains(&c)
                && end + 6 < len
                && self.s[next] == '\\'
                && self.s[next + 1] == 'u'
            {
                end += 6;
                let c2 = hex(next + 2).ok_or((Problem::Says(BAD_U), end - 5))?;
                if !(0xdc00..0xe000).contains(&c2) {
                    end -= 6;
                }
            }
        }
    }

    fn object(&self, idx: usize, depth: usize) -> Result<usize, Fail> {
        const NAME: &str = "Expecting property name enclosed in double quotes";
        let mut idx = self.skip_ws(idx);
        if self.at(idx) == Some('}') {
            return Ok(idx + 1);
        }
        loop {
            if self.at(idx) != Some('"') {
                return Err((Problem::Says(NAME), idx));
            }
            idx = self.skip_ws(self.string(idx + 1)?);
            if self.at(idx) != Some(':') {
                return Err((Problem::Says("Expecting ':' delimiter"), idx));
            }
            idx = self.skip_ws(idx + 1);
            idx = self.skip_ws(self.value(idx, depth)?);
            match self.at(idx) {
                Some('}') => return Ok(idx + 1),
                Some(',') => idx = self.skip_ws(idx + 1),
                _ => return Err((Problem::Says("Expecting ',' delimiter"), idx)),
            }
        }
    }

    fn array(&self, idx: usize, depth: usize) -> Result<usize, Fail> {
        let mut idx = self.skip_ws(idx);
        if self.at(idx) == Some(']') {
            return Ok(idx + 1);
        }
        loop {
            idx = self.skip_ws(self.value(idx, depth)?);
            match self.at(idx) {
                Some(']') => return Ok(idx + 1),
                Some(',') => idx = self.skip_ws(idx + 1),
                _ => return Err((Problem::Says("Expecting ',' delimiter"), idx)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{JsonError, decode_error};

    fn python_json_error(body: &[u8]) -> Option<String> {
        decode_error(body, 1000).map(|e| e.to_string())
    }

    #[test]
    fn python_decode_errors() {
        // Expected texts from CPython 3.11: str(e) for e raised by
        // json.loads(body.decode('utf-8')).
        let cases: &[(&[u8], &str)] = &[
            (b"", "Expecting value: line 1 column 1 (char 0)"),
            (b"  ", "Expecting value: line 1 column 3 (char 2)"),
            (
                b"{",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            (
                b"{'a': 1}",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            (
                b"{\"a\" 1}",
                "Expecting ':' delimiter: line 1 column 6 (char 5)",
            ),
            (b"{\"a\": }", "Expecting value: line 1 column 7 (char 6)"),
            (
                b"{\"a\": 1 \"b\": 2}",
                "Expecting ',' delimiter: line 1 column 9 (char 8)",
            ),
            (
                b"{\"a\": 1,}",
                "Expecting property name enclosed in double quotes: line 1 column 9 (char 8)",
            ),
            (
                b"[1, 2",
                "Expecting ',' delimiter: line 1 column 6 (char 5)",
            ),
            (b"[1,]", "Expecting value: line 1 column 4 (char 3)"),
            (b"{\"a\": 1}}", "Extra data: line 1 column 9 (char 8)"),
            (b"01", "Extra data: line 1 column 2 (char 1)"),
            (b"1.", "Extra data: line 1 column 2 (char 1)"),
            (b"-", "Expecting value: line 1 column 1 (char 0)"),
            (b"nul", "Expecting value: line 1 column 1 (char 0)"),
            (
                b"{\n  \"a\": x}",
                "Expecting value: line 2 column 8 (char 9)",
            ),
            (
                b"\"abc",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
            (
                b"[\"a\x01\"]",
                "Invalid control character at: line 1 column 4 (char 3)",
            ),
            (b"\"\\x\"", "Invalid \\escape: line 1 column 2 (char 1)"),
            (
                b"\"\\u12\"",
                "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
            ),
            (
                b"\"\\u12zz\"",
                "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
            ),
            (b"\"\xc3\xa9\" x", "Extra data: line 1 column 5 (char 4)"),
            (
                b"\xef\xbb\xbf{}",
                "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
            ),
            (
                b"\xff",
                "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
            ),
            (
                b"{\"a\": \"\xe2\x82x\"}",
                "'utf-8' codec can't decode bytes in position 7-8: invalid continuation byte",
            ),
            (
                b"\"\xe2x",
                "'utf-8' codec can't decode byte 0xe2 in position 1: invalid continuation byte",
            ),
            (
                b"\"\xf0\x90\x80",
                "'utf-8' codec can't decode bytes in position 1-3: unexpected end of data",
            ),
        ];
        for (body, want) in cases {
            assert_eq!(
                python_json_error(body).as_deref(),
                Some(*want),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        for ok in [
            &b"{}"[..],
            b" [1, 2.5e3, \"\\u00e9\\ud83d\\ude00\"] ",
            b"NaN",
            b"[-Infinity]",
        ] {
            assert_eq!(python_json_error(ok), None);
        }
    }

    #[test]
    fn nesting_stops_at_the_bound() {
        let error = decode_error(b"[[[1]]]", 2).unwrap();
        assert_eq!(
            error.to_string(),
            "Nested too deeply (at most 2 levels of arrays and objects) at: line 1 column 3 (char 2)"
        );
        let JsonError::TooDeep { limit, at } = error else {
            panic!("{error:?}");
        };
        assert_eq!((limit, at.line(), at.column(), at.offset()), (2, 1, 3, 2));
        assert_eq!(decode_error(b"[[1]]", 2), None);
        // An error Python meets first is Python's.
        assert_eq!(
            decode_error(b"[1 [[[", 2).unwrap().to_string(),
            "Expecting ',' delimiter: line 1 column 4 (char 3)"
        );
        let deep = "[".repeat(1 << 20);
        assert!(matches!(
            decode_error(deep.as_bytes(), 1000),
            Some(JsonError::TooDeep { limit: 1000, .. })
        ));
    }
}
