//! The nesting bound on request bodies: found by one pass over the bytes,
//! before any parser that recurses per level sees the body.

/// The deepest nesting of arrays and objects a JSON request body may have.
///
/// Python's `json.loads` raises `RecursionError` near this depth (its
/// default recursion limit is 1000 frames, and the frames of the service
/// that calls it count too), so nothing a Python OpenStack service reads is
/// refused here. A body nested deeper is answered 400 (`Malformed JSON:
/// Nested too deeply (at most 1000 levels of arrays and objects) at: ...`).
pub const MAX_JSON_DEPTH: usize = 1000;

/// The words of the error for a body nested deeper than [`MAX_JSON_DEPTH`],
/// followed by the position of the bracket past the bound.
pub(crate) const TOO_DEEP: &str =
    "Nested too deeply (at most 1000 levels of arrays and objects) at";

/// How deeply a body nests, as far as [`scan`] read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Nesting {
    /// The most arrays and objects open at once, at most `limit + 1`.
    pub(crate) deepest: usize,
    /// The byte offset of the first `[` or `{` that opens a level deeper
    /// than `limit`.
    pub(crate) too_deep_at: Option<usize>,
}

/// Reads how deeply `body` nests, stopping at the first bracket that opens
/// a level deeper than `limit`.
///
/// Only strings (with their escapes) are told apart from structure: a body
/// that is otherwise malformed is left to the parser, which never nests
/// deeper than this pass counted before the place it stopped.
pub(crate) fn scan(body: &[u8], limit: usize) -> Nesting {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in body.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if depth > limit {
                    return Nesting {
                        deepest,
                        too_deep_at: Some(i),
                    };
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Nesting {
        deepest,
        too_deep_at: None,
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_JSON_DEPTH, TOO_DEEP, scan};

    fn too_deep_at(body: &[u8], limit: usize) -> Option<usize> {
        scan(body, limit).too_deep_at
    }

    #[test]
    fn counts_arrays_and_objects_but_not_strings() {
        assert_eq!(too_deep_at(b"[[[]]]", 3), None);
        assert_eq!(too_deep_at(b"[[[]]]", 2), Some(2));
        assert_eq!(too_deep_at(br#"{"a": {"b": []}}"#, 2), Some(12));
        assert_eq!(too_deep_at(br#"["[[[[", "\"[[["]"#, 1), None);
        assert_eq!(too_deep_at(br#"["\\", [[]]]"#, 2), Some(8));
        // Closing brackets close levels: siblings do not add up.
        assert_eq!(too_deep_at(b"[[],[],[[]]]", 3), None);
        assert_eq!(too_deep_at(b"]]]][[", 1), Some(5));
        assert_eq!(too_deep_at(b"", 0), None);
        assert_eq!(scan(b"[[],[[{}]],[]]", 10).deepest, 4);
        assert_eq!(scan(br#"[["[[[[[["]]"#, 10).deepest, 2);
    }

    #[test]
    fn the_limit_is_the_documented_one() {
        let at_limit = "[".repeat(MAX_JSON_DEPTH);
        assert_eq!(too_deep_at(at_limit.as_bytes(), MAX_JSON_DEPTH), None);
        let past = "[".repeat(MAX_JSON_DEPTH + 1);
        assert_eq!(
            too_deep_at(past.as_bytes(), MAX_JSON_DEPTH),
            Some(MAX_JSON_DEPTH)
        );
        assert!(TOO_DEEP.contains(&MAX_JSON_DEPTH.to_string()));
    }
}
