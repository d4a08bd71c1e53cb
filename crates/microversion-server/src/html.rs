//! Escaping text for HTML, shared by Placement's error pages and the API
//! reference page.

use std::fmt::Write as _;

/// `text` made safe in HTML text and in quoted attributes: `&`, `<`, `>`
/// and both quotes as character references, and every character outside
/// ASCII as a decimal reference (`é` is `&#233;`). This is how webob
/// escapes the values of its error pages, so Placement's HTML errors are
/// upstream's byte for byte.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c if c.is_ascii() => out.push(c),
            c => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_quotes_and_non_ascii_become_references() {
        assert_eq!(
            escape(r#"<a href="x">it's & é</a>"#),
            "&lt;a href=&quot;x&quot;&gt;it&#x27;s &amp; &#233;&lt;/a&gt;"
        );
        assert_eq!(escape("plain text 1.2"), "plain text 1.2");
        assert_eq!(escape("\u{1f600}"), "&#128512;");
    }
}
