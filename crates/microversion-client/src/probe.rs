//! [`Probe`]: discovery on many endpoints at once, and the range they all
//! support.
//!
//! Useful before a rolling upgrade, or to pick one version for every
//! region or cell of a cloud:
//!
//! ```no_run
//! # async fn run() -> Result<(), microversion_client::Error> {
//! use microversion_client::Probe;
//!
//! let report = Probe::new()
//!     .endpoint("http://region-one:8778/")
//!     .endpoint("http://region-two:8778/")
//!     .header("x-auth-token", "admin")
//!     .run()
//!     .await?;
//! for endpoint in report.endpoints() {
//!     println!("{}: {:?}", endpoint.endpoint(), endpoint.versions());
//! }
//! match report.common() {
//!     Ok(range) => println!("every endpoint supports {range}"),
//!     Err(e) => println!("{e}"), // names each endpoint's range
//! }
//! # Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use http::header::{ACCEPT, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue};
use microversion::{ServerVersions, VersionRange};
use url::Url;

use crate::discovery::{self, Discovery};
use crate::error::{Error, Kind};

/// Probes endpoints for their versions, all at once. Setter errors are
/// returned by [`Probe::run`].
#[must_use]
pub struct Probe {
    endpoints: Vec<Url>,
    headers: HeaderMap,
    timeout: Option<Duration>,
    http: Option<reqwest::Client>,
    client: Option<VersionRange>,
    error: Option<Error>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe::new()
    }
}

impl Probe {
    /// A probe of no endpoint yet.
    pub fn new() -> Self {
        Probe {
            endpoints: Vec::new(),
            headers: HeaderMap::new(),
            timeout: None,
            http: None,
            client: None,
            error: None,
        }
    }

    fn record(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    /// Adds an endpoint.
    pub fn endpoint(mut self, url: impl AsRef<str>) -> Self {
        let text = url.as_ref();
        match Url::parse(text) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
                self.endpoints.push(url);
            }
            Ok(_) => self.record(Error::builder(format!(
                "endpoint {text:?} is not an http or https URL with a host"
            ))),
            Err(e) => self.record(Error::builder_with_source(
                format!("endpoint {text:?} is not a URL"),
                e,
            )),
        }
        self
    }

    /// Adds endpoints.
    pub fn endpoints<I, S>(self, urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        urls.into_iter().fold(self, Probe::endpoint)
    }

    /// A header sent with every discovery request.
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let name_text = name.as_ref();
        match (
            HeaderName::try_from(name_text),
            HeaderValue::try_from(value.as_ref()),
        ) {
            (Ok(name), Ok(value)) => {
                self.headers.insert(name, value);
            }
            (Err(e), _) => self.record(Error::builder_with_source(
                format!("invalid header name {name_text:?}"),
                e,
            )),
            (_, Err(e)) => self.record(Error::builder_with_source(
                format!("invalid value for header {name_text:?}"),
                e,
            )),
        }
        self
    }

    /// The time limit of each discovery request.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sends through this reqwest client.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Also intersects the common range with the versions this client
    /// supports.
    pub fn client_range(mut self, range: VersionRange) -> Self {
        self.client = Some(range);
        self
    }

    /// Discovers every endpoint concurrently. An endpoint that fails is
    /// reported in its [`EndpointReport`], not as the error of `run`.
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_builder`]) for the first invalid
    /// setting, or when no endpoint was given.
    pub async fn run(self) -> Result<ProbeReport, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        if self.endpoints.is_empty() {
            return Err(Error::builder("no endpoint to probe"));
        }
        let http = match self.http {
            Some(http) => http,
            None => reqwest::Client::builder()
                .build()
                .map_err(|e| Error::builder_with_source("cannot build the HTTP client", e))?,
        };
        let mut headers = self.headers;
        headers
            .entry(ACCEPT)
            .or_insert(HeaderValue::from_static("application/json"));
        headers
            .entry(USER_AGENT)
            .or_insert(HeaderValue::from_static(concat!(
                "microversion-client/",
                env!("CARGO_PKG_VERSION")
            )));
        let tasks: Vec<_> = self
            .endpoints
            .iter()
            .map(|url| {
                let (http, url, headers) = (http.clone(), url.clone(), headers.clone());
                let timeout = self.timeout;
                tokio::spawn(
                    async move { discovery::discover(&http, &url, &headers, timeout).await },
                )
            })
            .collect();
        let mut endpoints = Vec::with_capacity(tasks.len());
        for (url, task) in self.endpoints.into_iter().zip(tasks) {
            let result = match task.await {
                Ok(result) => result,
                Err(e) => Err(Error::discovery("the probe task failed").with_source(e)),
            };
            endpoints.push(EndpointReport {
                endpoint: discovery::normalize_endpoint(&url),
                result,
            });
        }
        Ok(ProbeReport {
            endpoints,
            client: self.client,
        })
    }
}

impl fmt::Debug for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Probe")
            .field(
                "endpoints",
                &self.endpoints.iter().map(Url::as_str).collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .field("client", &self.client)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// What a [`Probe`] found.
#[derive(Debug)]
pub struct ProbeReport {
    endpoints: Vec<EndpointReport>,
    client: Option<VersionRange>,
}

/// What one endpoint answered.
#[derive(Debug)]
pub struct EndpointReport {
    endpoint: Url,
    result: Result<Discovery, Error>,
}

impl EndpointReport {
    /// The endpoint.
    #[must_use]
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// What discovery found, or why it failed.
    ///
    /// # Errors
    ///
    /// Returns the discovery error of this endpoint.
    pub fn discovery(&self) -> Result<&Discovery, &Error> {
        self.result.as_ref()
    }

    /// The endpoint's versions, when discovery worked.
    #[must_use]
    pub fn versions(&self) -> Option<ServerVersions> {
        self.result.as_ref().ok().map(Discovery::server_versions)
    }
}

impl ProbeReport {
    /// Each endpoint, in the order given.
    #[must_use]
    pub fn endpoints(&self) -> &[EndpointReport] {
        &self.endpoints
    }

    /// The versions every endpoint (and the client, if given) supports.
    ///
    /// # Errors
    ///
    /// - [`Error::is_no_common_version`]: the ranges do not overlap, or an
    ///   endpoint has no microversions; the message names each range;
    /// - [`Error::is_discovery`]: an endpoint could not be probed (the
    ///   first such is named, its error is the source).
    pub fn common(&self) -> Result<VersionRange, Error> {
        let mut common = self.client;
        let mut unversioned = false;
        for report in &self.endpoints {
            match &report.result {
                Err(e) => {
                    return Err(Error::discovery(format!(
                        "cannot compute the common range: {} could not be probed: {e}",
                        report.endpoint
                    ))
                    .with_url(&report.endpoint));
                }
                Ok(d) => match d.server_versions() {
                    ServerVersions::Microversions(range) => {
                        common = Some(match common {
                            Some(c) => match c.intersect(range) {
                                Some(both) => both,
                                None => return Err(self.no_common()),
                            },
                            None => range,
                        });
                    }
                    ServerVersions::Unversioned => unversioned = true,
                },
            }
        }
        match common {
            Some(range) if !unversioned => Ok(range),
            _ => Err(self.no_common()),
        }
    }

    fn no_common(&self) -> Error {
        let mut parts: Vec<String> = self
            .endpoints
            .iter()
            .map(|r| match r.versions() {
                Some(ServerVersions::Microversions(range)) => {
                    format!("{} supports {range}", r.endpoint)
                }
                Some(ServerVersions::Unversioned) => {
                    format!("{} does not support microversions", r.endpoint)
                }
                None => format!("{} could not be probed", r.endpoint),
            })
            .collect();
        if let Some(client) = self.client {
            parts.push(format!("this client supports {client}"));
        }
        Error::new(Kind::NoCommonVersion(format!(
            "no common version: {}",
            parts.join("; ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use microversion::{ApiVersion, VersionStatus, VersionsDocument};

    use super::*;

    fn report(endpoint: &str, range: Option<VersionRange>) -> EndpointReport {
        let url = Url::parse(endpoint).unwrap();
        let mut entry = ApiVersion::new("v1", VersionStatus::Current);
        if let Some(range) = range {
            entry = entry.with_microversions(range);
        }
        let doc = VersionsDocument::new(vec![entry]);
        EndpointReport {
            result: Discovery::from_document(&url, &url, doc),
            endpoint: url,
        }
    }

    fn r(min: &'static str, max: &'static str) -> VersionRange {
        VersionRange::from_static(min, max)
    }

    #[test]
    fn common_range_of_every_endpoint() {
        let rep = ProbeReport {
            endpoints: vec![
                report("http://a/", Some(r("1.0", "1.39"))),
                report("http://b/", Some(r("1.2", "1.30"))),
            ],
            client: None,
        };
        assert_eq!(rep.common().unwrap(), r("1.2", "1.30"));
        let rep = ProbeReport {
            client: Some(r("1.0", "1.20")),
            ..rep
        };
        assert_eq!(rep.common().unwrap(), r("1.2", "1.20"));
    }

    #[test]
    fn no_common_version_names_each_range() {
        let rep = ProbeReport {
            endpoints: vec![
                report("http://a/", Some(r("1.0", "1.10"))),
                report("http://b/", Some(r("1.20", "1.30"))),
            ],
            client: Some(r("1.0", "1.39")),
        };
        let err = rep.common().unwrap_err();
        assert!(err.is_no_common_version());
        assert_eq!(
            err.to_string(),
            "no common version: http://a/ supports 1.0 - 1.10; http://b/ supports 1.20 - 1.30; \
             this client supports 1.0 - 1.39"
        );
        let rep = ProbeReport {
            endpoints: vec![
                report("http://a/", Some(r("1.0", "1.10"))),
                report("http://b/", None),
            ],
            client: None,
        };
        assert_eq!(
            rep.common().unwrap_err().to_string(),
            "no common version: http://a/ supports 1.0 - 1.10; http://b/ does not support microversions"
        );
    }

    #[tokio::test]
    async fn setter_errors_come_out_of_run() {
        let err = Probe::new().endpoint("nope").run().await.unwrap_err();
        assert!(err.is_builder());
        let err = Probe::new().run().await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration: no endpoint to probe"
        );
        let err = Probe::new()
            .endpoint("http://h/")
            .header("x y", "1")
            .run()
            .await
            .unwrap_err();
        assert!(err.is_builder());
    }
}
