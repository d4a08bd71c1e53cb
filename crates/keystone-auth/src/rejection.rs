//! The layer's own answers: 401 and 503 with keystonemiddleware's bodies.

use http::header::{CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use http::{Response, StatusCode};

/// keystonemiddleware's 401 body.
pub const UNAUTHORIZED_BODY: &str = r#"{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}"#;

/// The 503 body when Keystone cannot validate a token.
pub const UNAVAILABLE_BODY: &str = r#"{"error": {"code": 503, "title": "Service Unavailable", "message": "The Keystone service is temporarily unavailable."}}"#;

/// Why the layer answered itself instead of calling the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// No token, or a token that is invalid, expired, revoked or not
    /// plausible: 401 with `WWW-Authenticate`.
    Unauthorized,
    /// Keystone could not validate the token: 503.
    Unavailable,
}

impl Rejection {
    /// The status of the answer.
    #[must_use]
    pub fn status(self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The answer, with `www_authenticate` on a 401.
    pub(crate) fn into_response<B: From<String>>(
        self,
        www_authenticate: &HeaderValue,
    ) -> Response<B> {
        let body = match self {
            Self::Unauthorized => UNAUTHORIZED_BODY,
            Self::Unavailable => UNAVAILABLE_BODY,
        };
        let mut response = Response::new(B::from(body.to_owned()));
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if self == Self::Unauthorized {
            headers.insert(WWW_AUTHENTICATE, www_authenticate.clone());
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_json_with_code_and_title() {
        for (body, code, title) in [
            (UNAUTHORIZED_BODY, 401, "Unauthorized"),
            (UNAVAILABLE_BODY, 503, "Service Unavailable"),
        ] {
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            assert_eq!(v["error"]["code"], code);
            assert_eq!(v["error"]["title"], title);
        }
    }

    #[test]
    fn unauthorized_has_www_authenticate_unavailable_not() {
        let uri = HeaderValue::from_static(r#"Keystone uri="http://k:5000""#);
        let r: Response<String> = Rejection::Unauthorized.into_response(&uri);
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()[WWW_AUTHENTICATE], uri);
        assert_eq!(r.headers()[CONTENT_TYPE], "application/json");
        let r: Response<String> = Rejection::Unavailable.into_response(&uri);
        assert_eq!(r.status(), 503);
        assert!(r.headers().get(WWW_AUTHENTICATE).is_none());
    }
}
