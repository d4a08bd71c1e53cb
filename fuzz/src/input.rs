//! Requests from the fuzzer's bytes: request targets a client would
//! send, the `router` target's input format ([`RouterInput`]), and the
//! admin's requests of the other service targets.

use std::fmt::Write as _;

use axum::body::Body;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING};
use http::{HeaderName, HeaderValue, Method, Request, Uri};
use microversion::Version;

/// `target` (bytes a client might put after the method) as a valid
/// request target: `/` first, and every byte that may not appear in a URI
/// percent-encoded, as a client would send it. `%` is kept as it is, so
/// that any byte can still reach the service's own decoding.
#[must_use]
pub fn request_target(target: &[u8]) -> String {
    let mut out = String::with_capacity(target.len() + 1);
    if target.first() != Some(&b'/') {
        out.push('/');
    }
    for &b in target {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?%".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The query string of `raw` bytes as a client would send it (see
/// [`request_target`]; `#` and `?` are kept out of the way).
#[must_use]
pub fn query_string(raw: &[u8]) -> String {
    let target = request_target(raw);
    target[1..].to_owned()
}

/// A request as the `router` target reads it from bytes.
///
/// The format, so that seeds can be written by hand:
///
/// ```text
/// byte 0      flags: bits 0-1 the token (0 none, 1 or 2 `admin`, 3 `fuzz`),
///             bits 2-3 the version (0 none, 1 `latest`, 2 or 3 `1.<byte 1 % 42>`),
///             bit 4 no `content-type: application/json` for a body,
///             bit 5 `accept: application/json`
/// byte 1      the minor version
/// then        METHOD SP TARGET LF (no SP: the line is the target of a GET)
///             NAME: VALUE LF ... (headers; those given win over the flags')
///             LF
///             BODY
/// ```
///
/// The target is made valid as [`request_target`] does; a method that is
/// not a token is `GET`; headers that are not valid are left out;
/// `content-length` is the body's (given ones and `transfer-encoding` are
/// left out), as a client's HTTP library would send it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouterInput {
    /// The method as given.
    pub method: Vec<u8>,
    /// The target as given.
    pub target: Vec<u8>,
    /// The headers as given.
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// The body.
    pub body: Vec<u8>,
    /// Byte 0.
    pub flags: u8,
    /// Byte 1.
    pub minor: u8,
}

/// `line` without a `\r` at its end.
fn chomp(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl RouterInput {
    /// Reads `data` (see the format above); any bytes are an input.
    #[must_use]
    pub fn parse(data: &[u8]) -> RouterInput {
        let (flags, minor, rest) = match data {
            [] => (0, 0, &[][..]),
            [flags] => (*flags, 0, &[][..]),
            [flags, minor, rest @ ..] => (*flags, *minor, rest),
        };
        let (head, body) = match rest.windows(2).position(|w| w == b"\n\n") {
            Some(at) => (&rest[..at], &rest[at + 2..]),
            None => (rest, &[][..]),
        };
        let mut lines = head.split(|&b| b == b'\n');
        let request_line = chomp(lines.next().unwrap_or_default());
        let (method, target) = match request_line.iter().position(|&b| b == b' ') {
            Some(at) => (&request_line[..at], &request_line[at + 1..]),
            None => (&b"GET"[..], request_line),
        };
        let headers = lines
            .filter_map(|line| {
                let line = chomp(line);
                let at = line.iter().position(|&b| b == b':')?;
                Some((
                    line[..at].trim_ascii().to_vec(),
                    line[at + 1..].trim_ascii().to_vec(),
                ))
            })
            .collect();
        RouterInput {
            method: method.to_vec(),
            target: target.to_vec(),
            headers,
            body: body.to_vec(),
            flags,
            minor,
        }
    }

    /// The bytes [`RouterInput::parse`] reads back as this input (headers
    /// and target as given).
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.flags, self.minor];
        out.extend_from_slice(&self.method);
        out.push(b' ');
        out.extend_from_slice(&self.target);
        for (name, value) in &self.headers {
            out.push(b'\n');
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
        }
        if !self.body.is_empty() {
            out.extend_from_slice(b"\n\n");
            out.extend_from_slice(&self.body);
        }
        out
    }

    /// The request, or `None` when no valid URI can be made of the target.
    #[must_use]
    pub fn to_request(&self) -> Option<Request<Body>> {
        let method = Method::from_bytes(&self.method).unwrap_or(Method::GET);
        let uri: Uri = request_target(&self.target).parse().ok()?;
        let mut request = Request::builder().method(method.clone()).uri(uri);
        let headers = request.headers_mut()?;
        for (name, value) in &self.headers {
            let (Ok(name), Ok(value)) =
                (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
            else {
                continue;
            };
            if name != CONTENT_LENGTH && name != TRANSFER_ENCODING {
                headers.append(name, value);
            }
        }
        let mut derived: Vec<(&str, String)> = Vec::new();
        match self.flags & 0b11 {
            1 | 2 => derived.push(("x-auth-token", "admin".to_owned())),
            3 => derived.push(("x-auth-token", "fuzz".to_owned())),
            _ => {}
        }
        match (self.flags >> 2) & 0b11 {
            1 => derived.push(("openstack-api-version", "placement latest".to_owned())),
            2 | 3 => derived.push((
                "openstack-api-version",
                format!("placement 1.{}", self.minor % 42),
            )),
            _ => {}
        }
        if self.flags & 0b1_0000 == 0 && !self.body.is_empty() {
            derived.push(("content-type", "application/json".to_owned()));
        }
        if self.flags & 0b10_0000 != 0 {
            derived.push(("accept", "application/json".to_owned()));
        }
        for (name, value) in derived {
            if !headers.contains_key(name) {
                headers.insert(name, HeaderValue::from_str(&value).ok()?);
            }
        }
        if !self.body.is_empty() || matches!(method, Method::POST | Method::PUT | Method::PATCH) {
            headers.insert(CONTENT_LENGTH, HeaderValue::from(self.body.len()));
        }
        request.body(Body::from(self.body.clone())).ok()
    }
}

/// A request as the admin at `version`, with a JSON body when one is
/// given; `None` when `target` cannot be made a URI.
#[must_use]
pub fn admin_request(
    method: Method,
    target: &str,
    version: Version,
    body: Option<&[u8]>,
) -> Option<Request<Body>> {
    let mut request = Request::builder()
        .method(method)
        .uri(target.parse::<Uri>().ok()?)
        .header("x-auth-token", "admin")
        .header("openstack-api-version", format!("placement {version}"))
        .header("accept", "application/json");
    if let Some(body) = body {
        request = request
            .header(CONTENT_TYPE, "application/json")
            .header(CONTENT_LENGTH, body.len());
    }
    request
        .body(Body::from(body.map(<[u8]>::to_vec).unwrap_or_default()))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn router_inputs_read_back() {
        let input = RouterInput::parse(
            b"\x05\x14PUT /traits/CUSTOM_X?a=b c\r\nx-thing: 1\nbad\n\n{\"a\": 1}",
        );
        assert_eq!(input.flags, 5);
        assert_eq!(input.minor, 20);
        assert_eq!(input.method, b"PUT");
        assert_eq!(input.target, b"/traits/CUSTOM_X?a=b c");
        assert_eq!(input.headers, vec![(b"x-thing".to_vec(), b"1".to_vec())]);
        assert_eq!(input.body, b"{\"a\": 1}");
        assert_eq!(RouterInput::parse(&input.to_bytes()), input);
        let request = input.to_request().unwrap();
        assert_eq!(request.uri(), "/traits/CUSTOM_X?a=b%20c");
        assert_eq!(request.headers()["x-auth-token"], "admin");
        assert_eq!(
            request.headers()["openstack-api-version"],
            "placement latest"
        );
        assert_eq!(request.headers()["content-type"], "application/json");
        assert_eq!(request.headers()["content-length"], "8");
        let bare = RouterInput::parse(b"\x00\x00resource_providers")
            .to_request()
            .unwrap();
        assert_eq!(bare.method(), Method::GET);
        assert_eq!(bare.uri(), "/resource_providers");
        assert!(!bare.headers().contains_key("x-auth-token"));
        assert_eq!(RouterInput::parse(b"").to_request().unwrap().uri(), "/");
    }
}
