//! The connection to Placement: the client, the version it sends and
//! how it was chosen, and typed requests whose error statuses become
//! [`Failure::Server`].

use bytes::Bytes;
use http::Method;
use microversion::{ServerVersions, Version, VersionRange, VersionRequest, VersionSpan};
use microversion_client::cloud::Cloud;
use microversion_client::{Client, DiskCache};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Failure;
use crate::error::Error;

/// The versions this client knows: Placement 1.0 to 1.39.
pub(crate) const CLIENT_RANGE: (Version, Version) = (Version::new(1, 0), Version::new(1, 39));

pub(crate) fn client_range() -> VersionRange {
    VersionRange::new(CLIENT_RANGE.0, CLIENT_RANGE.1).unwrap_or(VersionRange::whole_major(1))
}

/// The version an explicit request fixes without asking the server:
/// `X.Y`, or 1.0 for `1` and `None` (no header).
pub(crate) fn fixed_version(requested: VersionRequest) -> Option<Version> {
    match requested {
        VersionRequest::Exact(v) => Some(v),
        VersionRequest::Latest | VersionRequest::MajorLatest(_) => None,
        VersionRequest::Major(major) => Some(Version::new(major, 0)),
        _ => Some(Version::new(1, 0)),
    }
}

pub(crate) fn check_client_range(version: Version) -> Result<(), Error> {
    if client_range().contains(version) {
        Ok(())
    } else {
        Err(Error::new(format!(
            "API version {version} is outside what this client supports ({})",
            client_range()
        )))
    }
}

/// Fails naming the first need whose span excludes `version`.
pub(crate) fn check_needs(needs: &[(String, VersionSpan)], version: Version) -> Result<(), Error> {
    for (feature, span) in needs {
        if !span.contains(version) {
            return Err(Error::new(format!(
                "{feature} is supported by API versions {span}; the version in use is {version}"
            )));
        }
    }
    Ok(())
}

/// The client, the version it sends and what to say about it.
pub(crate) struct Api {
    client: Client,
    /// The version sent with each request (`None`: as the client was
    /// built).
    send: Option<Version>,
    /// The version the server answers at.
    pub(crate) version: Version,
    /// The endpoint.
    pub(crate) endpoint: String,
    /// How the version was chosen, for `--verbose`.
    pub(crate) note: String,
}

/// Builds the client of `cloud`'s Placement endpoint and settles the
/// version: `requested`, else the lowest with every need; the server's
/// range comes from the on-disk cache when `disk_cache` allows it.
pub(crate) async fn connect(
    cloud: &Cloud,
    requested: Option<VersionRequest>,
    needs: &[(String, VersionSpan)],
    disk_cache: bool,
) -> Result<Api, Failure> {
    let mut builder = cloud
        .client("placement")
        .await
        .map_err(Error::from_client)?
        .supported_versions(client_range());
    if disk_cache {
        if let Some(dir) = DiskCache::default_dir() {
            builder = builder.disk_cache(DiskCache::new(dir));
        }
    }
    if let Some(requested) = requested {
        builder = builder.version(requested);
    }
    let client = builder
        .build()
        .map_err(|e| Error::with_source(e.to_string(), e))?;
    let endpoint = client.endpoint().to_string();
    let unsupported = |e: microversion_client::Error| -> Failure {
        match e.negotiation() {
            Some(n) => Error::new(format!("{n} at {endpoint}")).into(),
            None => Error::from_client(e).into(),
        }
    };
    let (send, version, note) = match requested {
        Some(VersionRequest::Exact(v)) => {
            // The server's range is checked too, before the request.
            client.version().await.map_err(unsupported)?;
            (
                None,
                v,
                format!("API version: placement {v} (from --os-placement-api-version)"),
            )
        }
        Some(r) if fixed_version(r).is_some() => (
            None,
            Version::new(1, 0),
            "API version: none sent (the server's default, 1.0)".to_owned(),
        ),
        Some(r) => {
            let v = client
                .version()
                .await
                .map_err(unsupported)?
                .effective()
                .unwrap_or(CLIENT_RANGE.0);
            check_needs(needs, v)?;
            (None, v, format!("API version: placement {v} ({r})"))
        }
        None => {
            let server = client.server_versions().await.map_err(unsupported)?;
            let (v, why) = lowest(needs, server, &endpoint)?;
            (Some(v), v, format!("API version: placement {v} ({why})"))
        }
    };
    Ok(Api {
        client,
        send,
        version,
        endpoint,
        note,
    })
}

/// The lowest version that has every need, within the client's and the
/// server's ranges, and why.
fn lowest(
    needs: &[(String, VersionSpan)],
    server: ServerVersions,
    endpoint: &str,
) -> Result<(Version, String), Error> {
    let server = match server {
        ServerVersions::Microversions(range) => range,
        ServerVersions::Unversioned => VersionRange::new(CLIENT_RANGE.0, CLIENT_RANGE.0)
            .unwrap_or(VersionRange::whole_major(1)),
    };
    let Some(common) = server.intersect(client_range()) else {
        return Err(Error::new(format!(
            "no common API version: the server at {endpoint} supports {server}, this client {}",
            client_range()
        )));
    };
    let mut version = common.min();
    let mut why = format!("the server's minimum; it supports {server}");
    for (feature, span) in needs {
        if span.start() > version {
            version = span.start();
            why = format!("the lowest with {feature}; the server supports {server}");
        }
    }
    for (feature, span) in needs {
        if !span.contains(version) || !common.contains(version) {
            return Err(Error::new(format!(
                "{feature} is supported by API versions {span}; the server at {endpoint} \
                 supports {server}"
            )));
        }
    }
    Ok((version, why))
}

/// A server's answer to a request that succeeded.
pub(crate) struct Reply {
    method: Method,
    url: String,
    body: Bytes,
    /// Its `Location` header.
    pub(crate) location: Option<String>,
}

impl Reply {
    /// Whether the answer has no body (only whitespace).
    pub(crate) fn is_empty(&self) -> bool {
        self.body.iter().all(u8::is_ascii_whitespace)
    }

    /// The body, read as `T`.
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, Failure> {
        let Reply { method, url, .. } = self;
        serde_json::from_slice(&self.body).map_err(|e| {
            let what = if e.classify() == serde_json::error::Category::Data {
                "the answer is not what Placement sends"
            } else {
                "the answer is not JSON"
            };
            Error::with_source(format!("{method} {url}: {what}"), e).into()
        })
    }
}

impl Api {
    /// Whether the version in use is `v` or later.
    pub(crate) fn at_least(&self, v: &'static str) -> bool {
        self.version >= Version::from_static(v)
    }

    /// The server's range of versions (discovery, never the disk cache's
    /// copy when the command asked for fresh versions).
    pub(crate) async fn server_versions(&self) -> Result<ServerVersions, Failure> {
        Ok(self
            .client
            .server_versions()
            .await
            .map_err(Error::from_client)?)
    }

    /// Sends a request with an optional JSON body; an error status is a
    /// [`Failure::Server`].
    pub(crate) async fn send<B: Serialize + ?Sized>(
        &self,
        method: Method,
        path: &str,
        query: &[(String, String)],
        body: Option<&B>,
    ) -> Result<Reply, Failure> {
        let mut request = self
            .client
            .request(method.clone(), path)
            .header("accept", "application/json");
        if let Some(v) = self.send {
            request = request.version(v);
        }
        if !query.is_empty() {
            request = request.query(query);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(Error::from_client)?;
        let status = response.status();
        let url = response.url().to_string();
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response.bytes().await.map_err(Error::from_client)?;
        if !status.is_success() {
            return Err(Failure::Server {
                method,
                url,
                status,
                detail: error_detail(&body),
            });
        }
        Ok(Reply {
            method,
            url,
            body,
            location,
        })
    }

    /// `GET path?query`, its answer read as `T`.
    pub(crate) async fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(String, String)],
    ) -> Result<T, Failure> {
        self.send::<()>(Method::GET, path, query, None)
            .await?
            .json()
    }

    /// `PUT path` with `body`, its answer read as `T`.
    pub(crate) async fn put<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, Failure> {
        self.send(Method::PUT, path, &[], Some(body)).await?.json()
    }

    /// `PUT path` with `body`, its answer ignored.
    pub(crate) async fn put_ignoring_answer<B: Serialize + ?Sized>(
        &self,
        path: &str,
        body: Option<&B>,
    ) -> Result<(), Failure> {
        self.send(Method::PUT, path, &[], body).await.map(|_| ())
    }

    /// `DELETE path`.
    pub(crate) async fn delete(&self, path: &str) -> Result<(), Failure> {
        self.send::<()>(Method::DELETE, path, &[], None)
            .await
            .map(|_| ())
    }
}

/// The `detail` of every error of an API-SIG error body, each in full;
/// else the body as text.
fn error_detail(body: &[u8]) -> String {
    /// An API-SIG error body.
    #[derive(serde::Deserialize)]
    struct Errors {
        errors: Vec<ErrorEntry>,
    }
    #[derive(serde::Deserialize)]
    struct ErrorEntry {
        detail: Option<serde_json::Value>,
    }
    let details = serde_json::from_slice::<Errors>(body).ok().and_then(|v| {
        let details: Vec<String> = v
            .errors
            .iter()
            .filter_map(|e| e.detail.as_ref().and_then(serde_json::Value::as_str))
            .map(|d| d.trim().to_owned())
            .collect();
        (!details.is_empty()).then(|| details.join("\n"))
    });
    details.unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(s: &'static str) -> VersionSpan {
        VersionSpan::from_static(s)
    }

    #[test]
    fn the_lowest_version_with_every_need() {
        let server = ServerVersions::Microversions(VersionRange::from_static("1.0", "1.39"));
        let needs = vec![
            ("option --in-tree".to_owned(), span("1.14 - latest")),
            ("option --resource".to_owned(), span("1.4 - latest")),
        ];
        let (v, why) = lowest(&needs, server, "http://h/").unwrap();
        assert_eq!(v, Version::new(1, 14));
        assert_eq!(
            why,
            "the lowest with option --in-tree; the server supports 1.0 - 1.39"
        );
        assert_eq!(
            lowest(&[], server, "http://h/").unwrap().0,
            Version::new(1, 0)
        );
        let old = ServerVersions::Microversions(VersionRange::from_static("1.0", "1.10"));
        assert_eq!(
            lowest(&needs, old, "http://h/").unwrap_err().to_string(),
            "option --in-tree is supported by API versions 1.14 - latest; the server at \
             http://h/ supports 1.0 - 1.10"
        );
        let newer = ServerVersions::Microversions(VersionRange::from_static("1.20", "1.50"));
        assert_eq!(
            lowest(&needs, newer, "http://h/").unwrap().0,
            Version::new(1, 20)
        );
    }

    #[test]
    fn explicit_versions_are_checked() {
        let needs = vec![("option --limit".to_owned(), span("1.16 - latest"))];
        assert_eq!(
            check_needs(&needs, Version::new(1, 10))
                .unwrap_err()
                .to_string(),
            "option --limit is supported by API versions 1.16 - latest; the version in use is 1.10"
        );
        assert!(check_needs(&needs, Version::new(1, 16)).is_ok());
        assert!(check_client_range(Version::new(1, 40)).is_err());
        assert_eq!(
            fixed_version(VersionRequest::Unversioned),
            Some(Version::new(1, 0))
        );
    }

    #[test]
    fn error_details_in_full() {
        let body = br#"{"errors": [{"status": 404, "title": "Not Found", "detail": "The resource could not be found.\n\n No provider  "}]}"#;
        assert_eq!(
            error_detail(body),
            "The resource could not be found.\n\n No provider"
        );
        assert_eq!(error_detail(b"plain text\n"), "plain text");
    }
}
