//! [`Error`]: why a command could not do its work (exit code 2).

use std::fmt;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A usage, input or connection error: the command could not do its work.
///
/// Its [`Display`](fmt::Display) is the message and every cause in its
/// source chain, joined with `: `, ready to be shown to a user.
pub struct Error {
    message: String,
    source: Option<BoxError>,
    exit_code: u8,
}

impl Error {
    /// An error with this message and no cause.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            source: None,
            exit_code: crate::EXIT_ERROR,
        }
    }

    /// An error with this message, caused by `source`.
    pub(crate) fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error {
            message: message.into(),
            source: Some(source.into()),
            exit_code: crate::EXIT_ERROR,
        }
    }

    /// A client crate error, its message first. Keystone refusing the
    /// credentials exits with 1 ([`EXIT_FAILURES`](crate::EXIT_FAILURES)):
    /// the command worked, the answer was no.
    pub(crate) fn from_client(e: microversion_client::Error) -> Self {
        let exit_code = if e.is_auth_refused() {
            crate::EXIT_FAILURES
        } else {
            crate::EXIT_ERROR
        };
        Error {
            message: e.to_string(),
            source: Some(Box::new(e)),
            exit_code,
        }
    }

    /// The exit code this error ends the command with: 1 when Keystone
    /// refused the credentials, 2 otherwise.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        self.exit_code
    }

    /// The message, without its causes.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = self.source.as_deref().map(|e| e as &dyn std::error::Error);
        f.write_str(&chain(self.message.clone(), source))
    }
}

/// `text` followed by the causes from `cause` on, joined with `: `, on
/// one line. What a cause only repeats is left out: its exact text at the
/// end, reqwest's "error sending request for url (URL)" when the URL was
/// already named, or the text's last part when the cause starts with it.
pub(crate) fn chain(mut text: String, mut cause: Option<&dyn std::error::Error>) -> String {
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

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("message", &self.message)
            .field("source", &self.source)
            .field("exit_code", &self.exit_code)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("cannot connect")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn display_walks_the_source_chain() {
        let e = Error::new("no service type");
        assert_eq!(e.to_string(), "no service type");
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = Error::with_source("GET http://h/ failed", Outer(io));
        assert_eq!(
            e.to_string(),
            "GET http://h/ failed: cannot connect: refused"
        );
        assert_eq!(e.message(), "GET http://h/ failed");
    }

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
            chain("cannot reach http://h:1/".into(), Some(&e)),
            "cannot reach http://h:1/: client error (Connect)"
        );
        assert_eq!(
            chain("cannot reach http://other/".into(), Some(&e)),
            "cannot reach http://other/: error sending request for url (http://h:1/): \
             client error (Connect)"
        );
        let longer = Text("invalid service type \"\": expected visible ASCII", None);
        assert_eq!(
            chain(
                "configuration: invalid service type \"\"".into(),
                Some(&longer)
            ),
            "configuration: invalid service type \"\": expected visible ASCII"
        );
        assert_eq!(
            chain("invalid service type \"\"".into(), Some(&longer)),
            "invalid service type \"\": expected visible ASCII"
        );
        let twice = Text("refused", None);
        assert_eq!(chain("a: refused".into(), Some(&twice)), "a: refused");
        assert_eq!(chain("two\n  lines".into(), None), "two lines");
    }
}
