//! Error pages as upstream Placement's errors show them: webob's HTTP
//! exceptions (WebOb 1.8), whose JSON `detail`, plain text and HTML are
//! all made from one page template.
//!
//! The template of most statuses is the status's stock explanation, a
//! `<br /><br />`, then the error's own message (webob's `detail`); 405,
//! 406, 415 and 501 have templates of their own that name the request's
//! method, `Accept` or `Content-Type`. The JSON `detail` and the plain
//! text are that page with its tags stripped the way webob strips them:
//! newlines become spaces first, then each `<br>` a newline, then other
//! tags go. So
//! `"The resource could not be found.\n\n No such resource class CUSTOM_X.  "`
//! is the `detail` of a 404 whose message is `No such resource class
//! CUSTOM_X.`, and a message's own newlines are spaces there.

use http::StatusCode;

use crate::html::escape as html_escape;

/// One error as webob renders it.
#[derive(Clone, Copy, Debug)]
pub(super) struct WebobPage<'a> {
    pub(super) status: StatusCode,
    /// The error's own message (webob's `detail`), empty for none.
    pub(super) message: &'a str,
    /// The request's method (`REQUEST_METHOD`).
    pub(super) method: &'a str,
    /// The request's `Accept` as upstream's request log leaves it
    /// (`HTTP_ACCEPT`).
    pub(super) accept: &'a str,
    /// The request's `Content-Type` (`CONTENT_TYPE`), if it has one.
    pub(super) content_type: Option<&'a str>,
}

impl WebobPage<'_> {
    /// The `detail` of Placement's JSON error body.
    pub(super) fn json_detail(&self) -> String {
        strip_tags(&self.body(str::to_owned))
    }

    /// The `text/plain` body.
    pub(super) fn plain(&self) -> String {
        format!(
            "{} {}\n\n{}",
            self.status.as_u16(),
            title(self.status),
            self.json_detail()
        )
    }

    /// The `text/html` body.
    pub(super) fn html(&self) -> String {
        let status = format!("{} {}", self.status.as_u16(), title(self.status));
        format!(
            "<html>\n <head>\n  <title>{status}</title>\n </head>\n <body>\n  <h1>{status}</h1>\n  {}\n </body>\n</html>",
            self.body(html_escape)
        )
    }

    /// The page template of the status, its values put through `escape`.
    fn body(&self, escape: impl Fn(&str) -> String) -> String {
        let message = escape(self.message);
        match self.status.as_u16() {
            405 => format!(
                "The method {} is not allowed for this resource. <br /><br />\n{message}",
                escape(self.method)
            ),
            406 => format!(
                "The resource could not be generated that was acceptable to your browser\n(content of type {}. <br /><br />\n{message}",
                escape(self.accept)
            ),
            415 => format!(
                "The request media type {} is not supported by this server.\n<br /><br />\n{message}",
                // webob leaves a variable the request lacks as it is.
                self.content_type
                    .map_or_else(|| "${CONTENT_TYPE}".to_owned(), &escape)
            ),
            501 => format!(
                "\nThe request method {} is not implemented for this server. <br /><br />\n{message}",
                escape(self.method)
            ),
            _ => format!(
                "{}<br /><br />\n{message}\n\n",
                escape(explanation(self.status))
            ),
        }
    }
}

/// webob's title of a status: its own names where they differ from the
/// current reason phrases (`Request Entity Too Large`).
pub(super) fn title(status: StatusCode) -> &'static str {
    match status.as_u16() {
        413 => "Request Entity Too Large",
        414 => "Request-URI Too Long",
        416 => "Request Range Not Satisfiable",
        422 => "Unprocessable Entity",
        _ => status.canonical_reason().unwrap_or("Error"),
    }
}

/// webob's explanation of a status (its sentences joined on one line), or
/// that of its class for a status webob has no exception for.
fn explanation(status: StatusCode) -> &'static str {
    const CLIENT: &str = "The server could not comply with the request since it is either malformed or otherwise incorrect.";
    const SERVER: &str =
        "The server has either erred or is incapable of performing the requested operation.";
    match status.as_u16() {
        401 => {
            "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required."
        }
        402 => "Access was denied for financial reasons.",
        403 => "Access was denied to this resource.",
        404 => "The resource could not be found.",
        407 => "Authentication with a local proxy is needed.",
        408 => "The server has waited too long for the request to be sent by the client.",
        409 => "There was a conflict when trying to complete your request.",
        410 => "This resource is no longer available. No forwarding address is given.",
        411 => "Content-Length header required.",
        412 => "Request precondition failed.",
        413 => "The body of your request was too large for this server.",
        414 => "The request URI was too long for this server.",
        416 => "The Range requested is not available.",
        417 => "Expectation failed.",
        422 => "Unable to process the contained instructions",
        423 => "The resource is locked",
        424 => {
            "The method could not be performed because the requested action dependended on another action and that action failed"
        }
        428 => "This request is required to be conditional",
        429 => "The client has sent too many requests in a given amount of time",
        431 => "The request header fields were too large",
        451 => "The resource is not available due to legal reasons.",
        502 => "Bad gateway.",
        503 => "The server is currently unavailable. Please try again at a later time.",
        504 => "The gateway has timed out.",
        505 => "The HTTP version is not supported.",
        507 => "There was not enough space to save the resource",
        511 => "Network authentication is required",
        500..=599 => SERVER,
        _ => CLIENT,
    }
}

/// A header's text as a WSGI server hands it on: each byte one character
/// (ISO-8859-1).
pub(super) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// webob's `strip_tags`: newlines become spaces and carriage returns go,
/// then each `<br...>` becomes a newline, comment markers go, and so does
/// every other `<...>`.
fn strip_tags(page: &str) -> String {
    let flat: String = page
        .chars()
        .filter(|&c| c != '\r')
        .map(|c| if c == '\n' { ' ' } else { c })
        .collect();
    let with_breaks = replace_tags(&flat, true, "\n");
    let without_comments = with_breaks.replace("<!--", "").replace("-->", "");
    replace_tags(&without_comments, false, "")
}

/// Replaces each shortest `<...>` (only those starting `<br`, in any
/// case, when `breaks_only`) with `with`, scanning left to right as a
/// regular expression does.
fn replace_tags(text: &str, breaks_only: bool, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = find_tag_start(rest, breaks_only) {
        let after = start + if breaks_only { 3 } else { 1 };
        let Some(len) = rest[after..].find('>') else {
            // No `>` later: no tag starts here or further on.
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(with);
        rest = &rest[after + len + 1..];
    }
    out.push_str(rest);
    out
}

fn find_tag_start(text: &str, breaks_only: bool) -> Option<usize> {
    if !breaks_only {
        return text.find('<');
    }
    text.char_indices()
        .filter(|&(_, c)| c == '<')
        .map(|(i, _)| i)
        .find(|&i| {
            text.as_bytes()
                .get(i + 1..i + 3)
                .is_some_and(|b| b.eq_ignore_ascii_case(b"br"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(status: u16, message: &str) -> WebobPage<'_> {
        WebobPage {
            status: StatusCode::from_u16(status).unwrap(),
            message,
            method: "DELETE",
            accept: "application/json",
            content_type: Some("text/plain"),
        }
    }

    // The expected texts below were read from upstream Placement 16.0.0
    // (WebOb 1.8.11) answering the same errors.

    #[test]
    fn default_template_folds_the_message_onto_one_line() {
        let message = "JSON does not validate: 'efg' is not a 'uuid'\n\nFailed validating 'format' in schema['items']:\n    {'type': 'string', 'format': 'uuid'}\n\nOn instance[1]:\n    'efg'";
        assert_eq!(
            page(400, message).json_detail(),
            "The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n JSON does not validate: 'efg' is not a 'uuid'  Failed validating 'format' in schema['items']:     {'type': 'string', 'format': 'uuid'}  On instance[1]:     'efg'  "
        );
        assert_eq!(
            page(404, "").json_detail(),
            "The resource could not be found.\n\n   "
        );
        assert_eq!(
            page(409, "resource provider generation conflict").json_detail(),
            "There was a conflict when trying to complete your request.\n\n resource provider generation conflict  "
        );
    }

    #[test]
    fn own_templates_name_the_request() {
        assert_eq!(
            page(
                405,
                "The method specified is not allowed for this resource."
            )
            .json_detail(),
            "The method DELETE is not allowed for this resource. \n\n The method specified is not allowed for this resource."
        );
        assert_eq!(
            page(
                406,
                "Invalid microversion: Unacceptable version header: 1.99"
            )
            .json_detail(),
            "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: 1.99"
        );
        assert_eq!(
            page(
                415,
                "The media type text/plain is not supported, use application/json"
            )
            .json_detail(),
            "The request media type text/plain is not supported by this server. \n\n The media type text/plain is not supported, use application/json"
        );
        let no_type = WebobPage {
            content_type: None,
            ..page(415, "x")
        };
        assert!(
            no_type
                .json_detail()
                .contains("media type ${CONTENT_TYPE} is"),
            "{}",
            no_type.json_detail()
        );
    }

    #[test]
    fn tags_in_the_message_are_stripped_as_webob_strips_them() {
        let detail =
            page(400, "JSON does not validate: 'fake<b>x</b>' and <BR/>line").json_detail();
        assert_eq!(
            detail,
            "The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n JSON does not validate: 'fakex' and \nline  "
        );
        // An unclosed tag stays; comment markers go.
        assert_eq!(strip_tags("a <!-- b --> c < d"), "a  b  c < d");
        assert_eq!(strip_tags("x<br"), "x<br");
        assert_eq!(strip_tags("é<i>é</i>\r\n"), "éé ");
    }

    #[test]
    fn plain_and_html_pages() {
        assert_eq!(
            page(
                405,
                "The method specified is not allowed for this resource."
            )
            .plain(),
            "405 Method Not Allowed\n\nThe method DELETE is not allowed for this resource. \n\n The method specified is not allowed for this resource."
        );
        assert_eq!(
            page(404, "").html(),
            "<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\n\n\n\n </body>\n</html>"
        );
        let html = WebobPage {
            accept: "text/<i>\u{c3}\u{a9}",
            ..page(406, "it's")
        }
        .html();
        assert!(
            html.contains(
                "acceptable to your browser\n(content of type text/&lt;i&gt;&#195;&#169;. <br /><br />\nit&#x27;s\n </body>"
            ),
            "{html}"
        );
    }

    #[test]
    fn titles_and_explanations_are_webobs() {
        assert_eq!(
            title(StatusCode::PAYLOAD_TOO_LARGE),
            "Request Entity Too Large"
        );
        assert_eq!(title(StatusCode::CONFLICT), "Conflict");
        assert_eq!(
            page(500, "").json_detail(),
            "The server has either erred or is incapable of performing the requested operation.\n\n   "
        );
        assert!(
            page(418, "")
                .json_detail()
                .starts_with("The server could not comply")
        );
        assert_eq!(latin1("é".as_bytes()), "\u{c3}\u{a9}");
    }
}
