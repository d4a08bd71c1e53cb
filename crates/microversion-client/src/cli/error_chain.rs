//! [`error_chain`]: an error and its causes as one line of text.

/// `text` followed by the causes from `cause` on, joined with `: `, on
/// one line, as a command prints an error. What a cause only repeats is
/// left out: its exact text at the end, reqwest's "error sending request
/// for url (URL)" when the URL was already named, or the text's last part
/// when the cause starts with it.
///
/// ```
/// use microversion_client::cli::error_chain;
///
/// let io = std::io::Error::other("connection refused");
/// assert_eq!(
///     error_chain("cannot reach http://h/".into(), Some(&io)),
///     "cannot reach http://h/: connection refused"
/// );
/// ```
#[must_use]
pub fn error_chain(mut text: String, mut cause: Option<&dyn std::error::Error>) -> String {
    while let Some(e) = cause {
        let more = e.to_string();
        let restates_url = more
            .strip_prefix("error sending request for url (")
            .and_then(|rest| rest.strip_suffix(')'))
            .is_some_and(|url| text.contains(url));
        // The text's last part, when the cause begins by repeating it.
        let last = text.rsplit(": ").next().unwrap_or_default().len();
        if more.is_empty() || text.ends_with(&more) || restates_url {
            // Nothing new.
        } else if last > 0 && more.starts_with(&text[text.len() - last..]) {
            text.truncate(text.len() - last);
            text.push_str(&more);
        } else {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = e.source();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    #[derive(Debug)]
    struct Text(&'static str, Option<Box<Text>>);

    impl fmt::Display for Text {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Text {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1
                .as_deref()
                .map(|e| e as &(dyn std::error::Error + 'static))
        }
    }

    #[test]
    fn causes_that_repeat_are_left_out() {
        let e = Text(
            "error sending request for url (http://h:1/)",
            Some(Box::new(Text("client error (Connect)", None))),
        );
        assert_eq!(
            error_chain("cannot reach http://h:1/".into(), Some(&e)),
            "cannot reach http://h:1/: client error (Connect)"
        );
        assert_eq!(
            error_chain("cannot reach http://other/".into(), Some(&e)),
            "cannot reach http://other/: error sending request for url (http://h:1/): \
             client error (Connect)"
        );
        let longer = Text("invalid service type \"\": expected visible ASCII", None);
        assert_eq!(
            error_chain(
                "configuration: invalid service type \"\"".into(),
                Some(&longer)
            ),
            "configuration: invalid service type \"\": expected visible ASCII"
        );
        assert_eq!(
            error_chain("invalid service type \"\"".into(), Some(&longer)),
            "invalid service type \"\": expected visible ASCII"
        );
        let twice = Text("refused", None);
        assert_eq!(error_chain("a: refused".into(), Some(&twice)), "a: refused");
        assert_eq!(error_chain("two\n  lines".into(), None), "two lines");
    }
}
