//! Behind a proxy and under a path prefix.
//!
//! Two settings change where the service thinks a request was addressed:
//!
//! - `[oslo_middleware] enable_proxy_headers_parsing` (off by default),
//!   read as oslo.middleware's `HTTPProxyToWSGI` reads the headers: when
//!   the request has `Forwarded` (RFC 7239), its first element's `proto`,
//!   `host` and `for` give the scheme, the host and the client's address;
//!   otherwise `X-Forwarded-Proto`, `X-Forwarded-Host` and
//!   `X-Forwarded-For` do (each value as sent, a list included). Either
//!   way `X-Forwarded-Prefix` is put before the path prefix. Upstream
//!   16.0.0 builds that middleware without its own configuration, so it
//!   never sees the key and ignores the headers; this service honours the
//!   key as oslo.middleware documents it.
//! - `[server] root_path` (`--root-path`, ours): the service is mounted
//!   at this prefix, as upstream under uwsgi or mod_wsgi with the prefix
//!   as its `SCRIPT_NAME`. A request under it is served with the prefix
//!   taken off the path; any other is answered 404.
//!
//! The prefix goes before the path of every link and `Location` the
//! service writes (as upstream puts `SCRIPT_NAME` there); an absolute
//! `Location` takes the scheme and host too (`https` on the TLS listener
//! unless a proxy says otherwise). The request log shows the forwarded
//! client address and the prefixed path. The versions document's `self`
//! link stays the empty relative URL, which upstream writes whatever the
//! mount.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use http::header::HOST;
use http::request::Parts;
use http::{HeaderMap, Uri};

use crate::error::Error;
use crate::listen::RootPath;

/// Where a request was addressed, as the proxy headers and the mount say;
/// in the request's extensions when `Mount` is in force.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Origin {
    /// The client's address as the proxy gave it (`for`,
    /// `X-Forwarded-For`), as sent.
    pub client: Option<String>,
    /// The scheme the client used (`proto`, `X-Forwarded-Proto`), or
    /// `https` on the TLS listener.
    pub scheme: Option<String>,
    /// The host the client addressed (`host`, `X-Forwarded-Host`).
    pub host: Option<String>,
    /// The path prefix: `X-Forwarded-Prefix` then the root path; empty at
    /// the root.
    pub prefix: String,
}

impl Origin {
    /// `path` (from `/`) under the prefix: a link's `href`, a relative
    /// `Location`.
    #[must_use]
    pub fn link(&self, path: &str) -> String {
        let mut link = String::with_capacity(self.prefix.len() + path.len());
        link.push_str(&self.prefix);
        link.push_str(path);
        link
    }

    /// The absolute URL of `path` (from `/`), as webob makes a relative
    /// `Location` absolute: the scheme (`http` unless known otherwise),
    /// the host (the request's `Host` unless forwarded; `localhost`
    /// without one), its port left out when it is the scheme's default,
    /// then the prefix and `path`.
    #[must_use]
    pub fn absolute_url(&self, headers: &HeaderMap, path: &str) -> String {
        let scheme = self.scheme.as_deref().unwrap_or("http");
        let host = self
            .host
            .as_deref()
            .or_else(|| headers.get(HOST).and_then(|h| h.to_str().ok()))
            .filter(|h| !h.is_empty())
            .unwrap_or("localhost");
        let host = match scheme {
            "http" => host.strip_suffix(":80").unwrap_or(host),
            "https" => host.strip_suffix(":443").unwrap_or(host),
            _ => host,
        };
        format!("{scheme}://{host}{}{path}", self.prefix)
    }

    /// What `Mount` finds in `headers` with proxy headers parsing on,
    /// before the mount's own prefix and scheme.
    #[must_use]
    pub fn from_proxy_headers(headers: &HeaderMap) -> Origin {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.is_empty())
        };
        let mut origin = Origin::default();
        if let Some(forwarded) = header("forwarded") {
            // The first proxy's element: what the client sent it.
            let first = forwarded.split(',').next().unwrap_or_default();
            for pair in first.split(';') {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                let value = value.trim();
                if value.is_empty() {
                    continue;
                }
                match key.trim().to_ascii_lowercase().as_str() {
                    "proto" => origin.scheme = Some(value.to_owned()),
                    "host" => origin.host = Some(value.to_owned()),
                    "for" => origin.client = Some(value.to_owned()),
                    _ => {}
                }
            }
        } else {
            origin.scheme = header("x-forwarded-proto").map(str::to_owned);
            origin.host = header("x-forwarded-host").map(str::to_owned);
            origin.client = header("x-forwarded-for").map(str::to_owned);
        }
        if let Some(prefix) = header("x-forwarded-prefix") {
            origin.prefix = prefix.to_owned();
        }
        origin
    }
}

/// Reads the request's [`Origin`]: the one `Mount` left, or the root's
/// (scheme, host and prefix from the request alone).
impl<S: Send + Sync> FromRequestParts<S> for Origin {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<Origin>()
            .cloned()
            .unwrap_or_default())
    }
}

/// How requests are read for their [`Origin`]; installed only when one of
/// its settings is on, so that a service at the root behind no proxy
/// pays nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct Mount {
    /// `enable_proxy_headers_parsing`.
    pub(crate) proxy_headers: bool,
    /// `[server] root_path`.
    pub(crate) root_path: Option<RootPath>,
    /// Served over TLS: the scheme is `https` unless a proxy says.
    pub(crate) tls: bool,
}

impl Mount {
    /// The mount of `config`, when anything is to be read.
    pub(crate) fn of(config: &crate::config::Config) -> Option<Arc<Mount>> {
        let mount = Mount {
            proxy_headers: config.enable_proxy_headers_parsing,
            root_path: config.server.root_path.clone(),
            tls: config.server.is_tls(),
        };
        (mount.proxy_headers || mount.root_path.is_some() || mount.tls).then(|| Arc::new(mount))
    }
}

/// The middleware: outside everything, the request log included. A
/// request outside the root path is answered 404 with an errors body.
pub(crate) async fn mount(mount: Arc<Mount>, mut req: Request, next: Next) -> Response {
    let mut origin = if mount.proxy_headers {
        Origin::from_proxy_headers(req.headers())
    } else {
        Origin::default()
    };
    if let Some(root) = &mount.root_path {
        let Some(rest) = root.strip(req.uri().path()) else {
            return Error::not_found(format!(
                "The resource could not be found.\n\nThis service is served under {}.",
                root.as_str()
            ))
            .into_response();
        };
        let path_and_query = match req.uri().query() {
            Some(query) => format!("{rest}?{query}"),
            None => rest.to_owned(),
        };
        match Uri::try_from(path_and_query) {
            Ok(uri) => *req.uri_mut() = uri,
            // Cannot happen: a part of a valid URI.
            Err(e) => return Error::bad_request(format!("Invalid path: {e}")).into_response(),
        }
        origin.prefix.push_str(root.as_str());
    }
    if mount.tls && origin.scheme.is_none() {
        origin.scheme = Some("https".to_owned());
    }
    req.extensions_mut().insert(origin);
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, http::HeaderValue::from_static(value));
        }
        h
    }

    #[test]
    fn forwarded_first_element_wins_over_x_forwarded() {
        let o = Origin::from_proxy_headers(&headers(&[
            (
                "forwarded",
                "for=192.0.2.60;proto=https;host=cloud.example;by=203.0.113.43, for=198.51.100.17",
            ),
            ("x-forwarded-for", "10.0.0.1"),
            ("x-forwarded-proto", "http"),
            ("x-forwarded-prefix", "/placement"),
        ]));
        assert_eq!(o.client.as_deref(), Some("192.0.2.60"));
        assert_eq!(o.scheme.as_deref(), Some("https"));
        assert_eq!(o.host.as_deref(), Some("cloud.example"));
        // The prefix is read with either.
        assert_eq!(o.prefix, "/placement");
        // Keys in any case, values as sent (quotes included), as
        // oslo.middleware keeps them.
        let o = Origin::from_proxy_headers(&headers(&[(
            "forwarded",
            r#"For="[2001:db8::1]:4711"; Proto=http"#,
        )]));
        assert_eq!(o.client.as_deref(), Some(r#""[2001:db8::1]:4711""#));
        assert_eq!(o.scheme.as_deref(), Some("http"));
        assert_eq!(o.host, None);
    }

    #[test]
    fn x_forwarded_headers_without_forwarded() {
        let o = Origin::from_proxy_headers(&headers(&[
            ("x-forwarded-for", "192.0.2.1, 10.0.0.2"),
            ("x-forwarded-proto", "https"),
            ("x-forwarded-host", "cloud.example:8443"),
        ]));
        assert_eq!(o.client.as_deref(), Some("192.0.2.1, 10.0.0.2"));
        assert_eq!(o.scheme.as_deref(), Some("https"));
        assert_eq!(o.host.as_deref(), Some("cloud.example:8443"));
        assert_eq!(o.prefix, "");
        assert_eq!(
            Origin::from_proxy_headers(&HeaderMap::new()),
            Origin::default()
        );
    }

    #[test]
    fn urls_as_webob_makes_them() {
        let host = headers(&[("host", "placement.example:80")]);
        assert_eq!(
            Origin::default().absolute_url(&host, "/traits/A"),
            "http://placement.example/traits/A"
        );
        assert_eq!(
            Origin::default().absolute_url(&HeaderMap::new(), "/traits/A"),
            "http://localhost/traits/A"
        );
        let behind = Origin {
            scheme: Some("https".into()),
            host: Some("cloud.example:443".into()),
            prefix: "/placement".into(),
            ..Origin::default()
        };
        assert_eq!(
            behind.absolute_url(&host, "/traits/A"),
            "https://cloud.example/placement/traits/A"
        );
        assert_eq!(
            behind.link("/resource_classes/X"),
            "/placement/resource_classes/X"
        );
        assert_eq!(Origin::default().link("/traits"), "/traits");
    }
}
