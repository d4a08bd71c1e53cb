//! The request log: one info line per request, as upstream's
//! `placement.requestlog` writes it, with the request context of oslo.log
//! (global request id, request id, user identity) in the event's fields:
//!
//! ```text
//! 127.0.0.1 "GET /resource_providers?name=x" status: 200 len: 26 microversion: 1.39
//! ```
//!
//! The address is the client's: the connection's peer, or the address a
//! proxy forwarded when `enable_proxy_headers_parsing` is on (see
//! [`crate::proxy`]; `-` on a Unix socket without one). The path is the
//! path prefix (`SCRIPT_NAME`: the root path and `X-Forwarded-Prefix`)
//! then the decoded path, as WSGI's `PATH_INFO` has it, and the query
//! string as sent; `len` is the response's `Content-Length` (`-`
//! when unknown); `microversion` the version served (`-` when the version
//! was refused, or the request was refused before it was looked at). The
//! line is written when the response's head is ready.
//!
//! The user identity is oslo.context's `user project domain system_scope
//! user_domain project_domain`, each `-` when missing: from the token
//! Keystone validated, or with `noauth2` from the token and headers (as
//! upstream's `noauth2` middleware makes them). The global request id is
//! an inbound `X-OpenStack-Request-Id` of the form `req-UUID`, as
//! oslo.middleware accepts it, else `None`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::Response;
use http::header::CONTENT_LENGTH;
use http::{HeaderMap, HeaderValue};
use http_body::Body as _;
use microversion_server::REQUEST_ID;
use microversion_server::RequestId;

use crate::auth::{Caller, RefusedUnversioned};
use crate::context::RequestContext;
use crate::proxy::Origin;

/// The target (oslo.log's logger name) of the request log lines.
pub const TARGET: &str = "placement.requestlog";

/// Whether the request log is written: whether the installed subscriber
/// takes info events of [`TARGET`]. Checked once, when the router is
/// built; without it no request pays for the log.
#[must_use]
pub fn enabled() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

/// The request log middleware; outside everything that may answer. It
/// chooses the request id (the microversion layer uses it), writes the
/// debug line `Starting request: ...` and, once the response's head is
/// ready, the info line; a response without `x-openstack-request-id`
/// (a Keystone or CORS answer) gets it here, as upstream's does.
pub(crate) async fn log(mut req: Request, next: Next) -> Response {
    let request_id = RequestId::generate();
    req.extensions_mut().insert(request_id.clone());
    let global_request_id = req
        .headers()
        .get(REQUEST_ID)
        .filter(|v| is_request_id(v.as_bytes()))
        .cloned();
    let global = global_request_id
        .as_ref()
        .and_then(|v| v.to_str().ok())
        .unwrap_or("None");
    let mut line = String::with_capacity(128);
    let origin = req.extensions().get::<Origin>();
    match (
        origin.and_then(|o| o.client.as_deref()),
        req.extensions().get::<ConnectInfo<SocketAddr>>(),
    ) {
        (Some(forwarded), _) => line.push_str(forwarded),
        (None, Some(ConnectInfo(addr))) => push_ip(&mut line, addr.ip()),
        (None, None) => line.push('-'),
    }
    line.push_str(" \"");
    line.push_str(req.method().as_str());
    line.push(' ');
    if let Some(origin) = origin {
        line.push_str(&origin.prefix);
    }
    push_decoded_path(&mut line, req.uri().path());
    if let Some(query) = req.uri().query().filter(|q| !q.is_empty()) {
        line.push('?');
        line.push_str(query);
    }
    line.push('"');
    tracing::debug!(
        target: TARGET,
        global_request_id = global,
        request_id = request_id.as_str(),
        user_identity = "- - - - - -",
        "Starting request: {line}"
    );
    let mut response = next.run(req).await;
    let user_identity = response.extensions().get::<Caller>().map(caller_identity);
    line.push_str(" status: ");
    line.push_str(response.status().as_str());
    line.push_str(" len: ");
    push_length(&mut line, &response);
    line.push_str(" microversion: ");
    let version = match response.extensions().get::<RefusedUnversioned>() {
        Some(_) => None,
        None => served_version(response.headers()),
    };
    line.push_str(version.unwrap_or("-"));
    let identity = user_identity.as_deref().unwrap_or("- - - - - -");
    match crate::logging::request_lines() {
        Some(lines) => lines.write(global, request_id.as_str(), identity, &line),
        None => tracing::info!(
            target: TARGET,
            global_request_id = global,
            request_id = request_id.as_str(),
            user_identity = identity,
            message = line.as_str()
        ),
    }
    if !response.headers().contains_key(REQUEST_ID) {
        response
            .headers_mut()
            .insert(REQUEST_ID, request_id.header_value().clone());
    }
    response
}

/// An address as Python prints it; an IPv4 one digit by digit (the
/// formatting machinery costs more than the rest of the line's head).
fn push_ip(out: &mut String, ip: std::net::IpAddr) {
    match ip {
        std::net::IpAddr::V4(v4) => {
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                if octet >= 100 {
                    out.push(char::from(b'0' + octet / 100));
                }
                if octet >= 10 {
                    out.push(char::from(b'0' + octet / 10 % 10));
                }
                out.push(char::from(b'0' + octet % 10));
            }
        }
        std::net::IpAddr::V6(_) => {
            let _ = write!(out, "{ip}");
        }
    }
}

/// oslo.middleware's form of a request id: `req-` and a UUID in lower
/// case hex.
fn is_request_id(value: &[u8]) -> bool {
    let Some(uuid) = value.strip_prefix(b"req-") else {
        return false;
    };
    uuid.len() == 36
        && uuid.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(b),
        })
}

/// The path as WSGI's `PATH_INFO`: percent-decoded, each byte one
/// character (PEP 3333's latin-1).
fn push_decoded_path(out: &mut String, path: &str) {
    let bytes = path.as_bytes();
    // Most paths have nothing to decode: ASCII without `%` is itself.
    if !bytes.iter().any(|&b| b == b'%' || !b.is_ascii()) {
        out.push_str(path);
        return;
    }
    let mut i = 0;
    while i < bytes.len() {
        let byte = match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    i += 2;
                    hi << 4 | lo
                }
                _ => b'%',
            },
            b => b,
        };
        out.push(char::from(byte));
        i += 1;
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `Content-Length`, or the body's exact size, or `-`.
fn push_length(out: &mut String, response: &Response) {
    if let Some(length) = response
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
    {
        out.push_str(length);
    } else if let Some(size) = response.body().size_hint().exact() {
        let _ = write!(out, "{size}");
    } else {
        out.push('-');
    }
}

/// `1.39` of `OpenStack-API-Version: placement 1.39`.
fn served_version(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(microversion::OPENSTACK_API_VERSION)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .map(|(_, version)| version)
}

/// oslo.context's user identity of the caller authentication found.
fn caller_identity(caller: &Caller) -> Cow<'_, str> {
    match caller {
        Caller::Keystone(identity) => Cow::Owned(keystone_identity(identity)),
        Caller::Noauth2(identity) => Cow::Borrowed(identity),
    }
}

/// oslo.context's user identity of a `noauth2` context, with the user's
/// and the project's domains the request named.
pub(crate) fn noauth2_identity(
    context: &RequestContext,
    user_domain: Option<&str>,
    project_domain: Option<&str>,
) -> String {
    user_identity([
        Some(context.user_id.as_str()),
        context.project_id.as_deref(),
        context.domain_id.as_deref(),
        context.system_scope.as_deref(),
        user_domain,
        project_domain,
    ])
}

/// oslo.context's user identity of a Keystone token.
fn keystone_identity(identity: &keystone_auth::Identity) -> String {
    use keystone_auth::Scope;
    let (project, domain, system, project_domain) = match &identity.scope {
        Scope::Project { project, domain } => (
            Some(project.id.as_str()),
            None,
            None,
            Some(domain.id.as_str()),
        ),
        Scope::Domain(domain) => (None, Some(domain.id.as_str()), None, None),
        Scope::System => (None, None, Some("all"), None),
        _ => (None, None, None, None),
    };
    user_identity([
        Some(identity.user_id.as_str()),
        project,
        domain,
        system,
        Some(identity.user_domain.id.as_str()),
        project_domain,
    ])
}

/// The six parts of oslo.context's user identity, `-` for a missing one.
fn user_identity(parts: [Option<&str>; 6]) -> String {
    let mut out = String::with_capacity(64);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(part.filter(|p| !p.is_empty()).unwrap_or("-"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_written_as_python_writes_them() {
        for ip in [
            "127.0.0.1",
            "10.200.0.9",
            "255.255.255.255",
            "0.0.0.0",
            "::1",
            "fe80::1",
        ] {
            let mut out = String::new();
            push_ip(&mut out, ip.parse().unwrap());
            assert_eq!(out, ip);
        }
    }

    fn decoded(path: &str) -> String {
        let mut out = String::new();
        push_decoded_path(&mut out, path);
        out
    }

    #[test]
    fn paths_are_decoded_as_wsgi_does() {
        assert_eq!(decoded("/resource_providers"), "/resource_providers");
        assert_eq!(decoded("/traits/CUSTOM%5FA%20b"), "/traits/CUSTOM_A b");
        // Bad or short escapes stay as they are.
        assert_eq!(decoded("/a%zz/%4"), "/a%zz/%4");
        assert_eq!(decoded("/%"), "/%");
        // UTF-8 bytes become one character each (latin-1).
        assert_eq!(decoded("/%C3%A9"), "/\u{c3}\u{a9}");
    }

    #[test]
    fn request_ids_in_oslo_middlewares_form() {
        assert!(is_request_id(b"req-8e9b7c65-3d71-4f5a-9d2a-1c2b3d4e5f60"));
        assert!(!is_request_id(b"req-8E9B7C65-3d71-4f5a-9d2a-1c2b3d4e5f60"));
        assert!(!is_request_id(b"8e9b7c65-3d71-4f5a-9d2a-1c2b3d4e5f60"));
        assert!(!is_request_id(b"req-8e9b7c65-3d71-4f5a-9d2a-1c2b3d4e5f6"));
        assert!(!is_request_id(b"req-8e9b7c65x3d71-4f5a-9d2a-1c2b3d4e5f60"));
    }

    fn keystone(scope: &str) -> String {
        let body = format!(
            r#"{{"user": {{"id": "u1", "name": "demo", "domain": {{"id": "default", "name": "Default"}}}},
                "expires_at": "2036-01-01T00:00:00Z", "roles": [{{"id": "r", "name": "member"}}] {scope}}}"#
        );
        let token: keystone_auth::model::Token = serde_json::from_str(&body).unwrap();
        keystone_identity(&keystone_auth::Identity::try_from(token).unwrap())
    }

    #[test]
    fn keystone_identities_as_oslo_context_logs_them() {
        assert_eq!(
            keystone(
                r#", "project": {"id": "p1", "name": "demo", "domain": {"id": "d2", "name": "D2"}}"#
            ),
            "u1 p1 - - default d2"
        );
        assert_eq!(
            keystone(r#", "domain": {"id": "d3", "name": "D3"}"#),
            "u1 - d3 - default -"
        );
        assert_eq!(
            keystone(r#", "system": {"all": true}"#),
            "u1 - - all default -"
        );
    }

    #[test]
    fn noauth2_identities_take_the_domain_headers() {
        let context = RequestContext {
            user_id: "alice".to_owned(),
            project_id: Some("proj1".to_owned()),
            ..Default::default()
        };
        let caller = Caller::Noauth2(noauth2_identity(&context, Some("default"), Some("")));
        assert_eq!(caller_identity(&caller), "alice proj1 - - default -");
    }

    #[test]
    fn identities_have_six_parts() {
        assert_eq!(
            user_identity([Some("admin"), Some("admin"), None, None, None, None]),
            "admin admin - - - -"
        );
        assert_eq!(user_identity([None; 6]), "- - - - - -");
        assert_eq!(
            user_identity([
                Some("u"),
                None,
                None,
                Some("all"),
                Some("default"),
                Some("")
            ]),
            "u - - all default -"
        );
    }
}
