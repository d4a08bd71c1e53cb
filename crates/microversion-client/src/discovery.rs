//! Discovery (docs/client.md, negotiation 1): what an endpoint's versions
//! document says.
//!
//! The client GETs the endpoint URL, and its parent when that answers 404.
//! The document may have any of the four shapes servers send (parsed by
//! [`microversion::VersionsDocument`]). Of its entries, the client takes the
//! one whose `self` link is the endpoint, else the one marked `CURRENT`,
//! else the newest.
//!
//! `self` links are normalised first: a relative link (Placement sends
//! `""`) is resolved against the document's URL, and a link naming another
//! host than the one that answered (a server that does not know the name
//! it is reached by, such as `http://controller:8774/v2.1/` behind a proxy)
//! gets the answering URL's scheme, host and port. A link then matches the
//! endpoint when the paths are equal (trailing slashes aside), or when the
//! endpoint's path ends with the link's (a proxy that adds a path prefix).

use std::fmt;
use std::time::Duration;

use http::header::ACCEPT;
use http::{HeaderMap, HeaderValue, StatusCode};
use microversion::{ApiVersion, ServerVersions, Version, VersionStatus, VersionsDocument};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::Error;

/// What discovery found at an endpoint: every API version the document
/// lists, and the one this endpoint serves.
///
/// ```no_run
/// # async fn run() -> Result<(), microversion_client::Error> {
/// use microversion::VersionRange;
/// use microversion_client::Client;
///
/// let client = Client::builder()
///     .endpoint("http://127.0.0.1:8774/v2.1")
///     .service_type("compute")
///     .supported_versions(VersionRange::from_static("2.1", "2.100"))
///     .build()?;
/// let discovery = client.discover().await?;
/// for entry in discovery.entries() {
///     println!("{} {} {:?}", entry.id, entry.status, entry.microversions());
/// }
/// println!("this endpoint: {}", discovery.selected().id);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discovery {
    endpoint: Url,
    document_url: Url,
    document: VersionsDocument,
    selected: usize,
    matched_by: MatchedBy,
}

/// How the entry of an endpoint was chosen among the document's entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum MatchedBy {
    /// Its `self` link is the endpoint.
    SelfLink,
    /// No link matched; it is marked `CURRENT`.
    Current,
    /// No link matched and none is `CURRENT`; it is the newest.
    Newest,
}

impl fmt::Display for MatchedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatchedBy::SelfLink => "self link",
            MatchedBy::Current => "CURRENT status",
            MatchedBy::Newest => "newest version",
        })
    }
}

impl Discovery {
    /// Where the versions document is read next when `endpoint` answers
    /// 404: the URL one path segment up (`http://h/placement/v1/` gives
    /// `http://h/placement/`), or `None` at the root.
    #[must_use]
    pub fn parent_of(endpoint: &Url) -> Option<Url> {
        parent_url(endpoint)
    }

    /// Reads a versions document fetched from `document_url` for
    /// `endpoint`: normalises the `self` links and picks the endpoint's
    /// entry.
    ///
    /// This is the pure half of discovery, for documents obtained some other
    /// way (a test, a recorded answer).
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_discovery`]) when the document lists no
    /// version.
    pub fn from_document(
        endpoint: &Url,
        document_url: &Url,
        mut document: VersionsDocument,
    ) -> Result<Self, Error> {
        if document.versions.is_empty() {
            return Err(Error::discovery(format!(
                "the versions document at {document_url} lists no version"
            )));
        }
        let endpoint = normalize_endpoint(endpoint);
        let mut self_match = None;
        for (index, entry) in document.versions.iter_mut().enumerate() {
            for link in entry.links.iter_mut().filter(|l| l.rel == "self") {
                let Some(normal) = normalize_link(document_url, &link.href) else {
                    continue;
                };
                let matched = link_matches(&endpoint, &normal);
                // A link matched through a proxy prefix is the endpoint.
                link.href = if matched {
                    endpoint.to_string()
                } else {
                    normal.to_string()
                };
                if matched && self_match.is_none() {
                    self_match = Some(index);
                }
            }
        }
        let (selected, matched_by) = match self_match {
            Some(index) => (index, MatchedBy::SelfLink),
            None => {
                let current = document.current();
                let index = current
                    .and_then(|c| document.versions.iter().position(|v| std::ptr::eq(v, c)))
                    .unwrap_or(document.versions.len() - 1);
                let by = if document.versions[index].status == VersionStatus::Current {
                    MatchedBy::Current
                } else {
                    MatchedBy::Newest
                };
                (index, by)
            }
        };
        Ok(Discovery {
            endpoint,
            document_url: document_url.clone(),
            document,
            selected,
            matched_by,
        })
    }

    /// The endpoint discovery was for (normalised: no query or fragment).
    #[must_use]
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// Where the versions document was found: the endpoint, its parent, or
    /// where a redirect led.
    #[must_use]
    pub fn document_url(&self) -> &Url {
        &self.document_url
    }

    /// The document's entries, `self` links normalised.
    #[must_use]
    pub fn entries(&self) -> &[ApiVersion] {
        &self.document.versions
    }

    /// The document, `self` links normalised.
    #[must_use]
    pub fn document(&self) -> &VersionsDocument {
        &self.document
    }

    /// The entry of this endpoint.
    #[must_use]
    pub fn selected(&self) -> &ApiVersion {
        // `from_document` guarantees a valid index.
        &self.document.versions[self.selected.min(self.document.versions.len() - 1)]
    }

    /// How [`Discovery::selected`] was chosen.
    #[must_use]
    pub fn matched_by(&self) -> MatchedBy {
        self.matched_by
    }

    /// The versions the endpoint supports: its microversion range, or
    /// [`ServerVersions::Unversioned`] when the entry has none (docs/client.md,
    /// negotiation 2).
    #[must_use]
    pub fn server_versions(&self) -> ServerVersions {
        self.selected()
            .microversions()
            .map_or(ServerVersions::Unversioned, ServerVersions::Microversions)
    }

    /// The major version of the endpoint's entry (the `X` of `X.0`).
    #[must_use]
    pub fn major(&self) -> Option<u32> {
        self.selected().major()
    }
}

/// The on-disk form of a [`Discovery`].
#[derive(Serialize, Deserialize)]
pub(crate) struct DiscoveryRecord {
    endpoint: String,
    document_url: String,
    document: VersionsDocument,
    selected: usize,
    matched_by: MatchedBy,
}

impl From<&Discovery> for DiscoveryRecord {
    fn from(d: &Discovery) -> Self {
        DiscoveryRecord {
            endpoint: d.endpoint.to_string(),
            document_url: d.document_url.to_string(),
            document: d.document.clone(),
            selected: d.selected,
            matched_by: d.matched_by,
        }
    }
}

impl DiscoveryRecord {
    /// Back to a discovery, if the record is consistent.
    pub(crate) fn into_discovery(self) -> Option<Discovery> {
        if self.selected >= self.document.versions.len() {
            return None;
        }
        Some(Discovery {
            endpoint: Url::parse(&self.endpoint).ok()?,
            document_url: Url::parse(&self.document_url).ok()?,
            document: self.document,
            selected: self.selected,
            matched_by: self.matched_by,
        })
    }
}

/// What one GET of a candidate URL gave.
enum Fetched {
    Document(Url, VersionsDocument),
    NotFound,
}

/// Runs discovery for `endpoint` (docs/client.md, negotiation 1).
pub(crate) async fn discover(
    http: &reqwest::Client,
    endpoint: &Url,
    headers: &HeaderMap,
    timeout: Option<Duration>,
) -> Result<Discovery, Error> {
    let endpoint = normalize_endpoint(endpoint);
    match fetch(http, &endpoint, headers, timeout).await? {
        Fetched::Document(url, doc) => Discovery::from_document(&endpoint, &url, doc),
        Fetched::NotFound => {
            let Some(parent) = parent_url(&endpoint) else {
                return Err(Error::discovery(format!(
                    "{endpoint} answered 404 Not Found and has no parent URL"
                ))
                .with_url(&endpoint));
            };
            tracing::debug!(%endpoint, %parent, "endpoint answered 404; trying its parent");
            match fetch(http, &parent, headers, timeout).await? {
                Fetched::Document(url, doc) => Discovery::from_document(&endpoint, &url, doc),
                Fetched::NotFound => Err(Error::discovery(format!(
                    "both {endpoint} and its parent {parent} answered 404 Not Found"
                ))
                .with_url(&endpoint)),
            }
        }
    }
}

async fn fetch(
    http: &reqwest::Client,
    url: &Url,
    headers: &HeaderMap,
    timeout: Option<Duration>,
) -> Result<Fetched, Error> {
    let mut request = http
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, HeaderValue::from_static("application/json"));
    if let Some(timeout) = timeout {
        request = request.timeout(timeout);
    }
    let response = request.send().await.map_err(Error::request)?;
    let status = response.status();
    let final_url = response.url().clone();
    if status == StatusCode::NOT_FOUND {
        return Ok(Fetched::NotFound);
    }
    // Keystone answers its version list with 300 Multiple Choices.
    if !status.is_success() && status != StatusCode::MULTIPLE_CHOICES {
        return Err(Error::discovery(format!("{final_url} answered {status}")).with_url(&final_url));
    }
    let body = response.bytes().await.map_err(Error::request)?;
    let document: VersionsDocument = serde_json::from_slice(&body).map_err(|e| {
        Error::discovery(format!("{final_url} did not answer a versions document"))
            .with_url(&final_url)
            .with_source(e)
    })?;
    Ok(Fetched::Document(final_url, document))
}

/// The endpoint without query, fragment or credentials.
pub(crate) fn normalize_endpoint(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    // Only fails for URLs that cannot have credentials, which then have none.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

/// The key of an endpoint in the caches: scheme, host, port (always
/// written) and path without trailing slashes.
///
/// ```text
/// HTTP://Example.COM/v2.1/?x=1  ->  http://example.com:80/v2.1
/// ```
pub(crate) fn endpoint_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    let port = url
        .port_or_known_default()
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    format!(
        "{}://{host}{port}{}",
        url.scheme(),
        url.path().trim_end_matches('/')
    )
}

/// The URL one path segment up, or `None` at the root.
pub(crate) fn parent_url(url: &Url) -> Option<Url> {
    let path = url.path().trim_end_matches('/');
    if path.is_empty() {
        return None;
    }
    let cut = path.rfind('/')?;
    let mut parent = url.clone();
    parent.set_path(&format!("{}/", &path[..cut]));
    Some(parent)
}

/// A `self` link made absolute, with the answering host when it names
/// another.
fn normalize_link(document_url: &Url, href: &str) -> Option<Url> {
    let mut link = document_url.join(href.trim()).ok()?;
    let same_origin = link.scheme() == document_url.scheme()
        && link.host_str() == document_url.host_str()
        && link.port_or_known_default() == document_url.port_or_known_default();
    if !same_origin {
        link.set_scheme(document_url.scheme()).ok()?;
        link.set_host(document_url.host_str()).ok()?;
        link.set_port(document_url.port()).ok()?;
    }
    link.set_query(None);
    link.set_fragment(None);
    Some(link)
}

fn link_matches(endpoint: &Url, link: &Url) -> bool {
    let endpoint_path = endpoint.path().trim_end_matches('/');
    let link_path = link.path().trim_end_matches('/');
    // A non-empty path starts with `/`, so a suffix match is a whole-segment
    // match: `/compute/v2.1` ends with `/v2.1`, `/xv2.1` does not.
    endpoint_path == link_path
        || (!link_path.is_empty()
            && endpoint_path
                .strip_suffix(link_path)
                .is_some_and(|prefix| !prefix.is_empty()))
}

/// The version of an unversioned endpoint: `X.0`, when X is known.
pub(crate) fn major_version(major: Option<u32>) -> Option<Version> {
    major.map(|m| Version::new(m, 0))
}

#[cfg(test)]
mod tests {
    use microversion::VersionRange;
    use serde_json::json;

    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn doc(value: serde_json::Value) -> VersionsDocument {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn keys_are_full_normalised_urls() {
        assert_eq!(
            endpoint_key(&url("HTTP://Example.COM/v2.1/?x=1#f")),
            "http://example.com:80/v2.1"
        );
        assert_eq!(endpoint_key(&url("https://h:8443/")), "https://h:8443");
        assert_ne!(
            endpoint_key(&url("http://h:8774/v2.1")),
            endpoint_key(&url("http://h:8774/v2"))
        );
        assert_ne!(
            endpoint_key(&url("http://h/a")),
            endpoint_key(&url("https://h/a"))
        );
        assert_eq!(
            endpoint_key(&url("http://h:80/a/")),
            endpoint_key(&url("http://h/a"))
        );
    }

    #[test]
    fn parents() {
        assert_eq!(
            parent_url(&url("http://h/placement/v1/")).unwrap().as_str(),
            "http://h/placement/"
        );
        assert_eq!(
            parent_url(&url("http://h/v2.1")).unwrap().as_str(),
            "http://h/"
        );
        assert_eq!(parent_url(&url("http://h/")), None);
        assert_eq!(
            Discovery::parent_of(&url("http://h/a/b")).unwrap().as_str(),
            "http://h/a/"
        );
    }

    #[test]
    fn normalises_endpoints() {
        assert_eq!(
            normalize_endpoint(&url("http://u:p@h/v1?q=1#x")).as_str(),
            "http://h/v1"
        );
    }

    #[test]
    fn relative_and_wrong_host_links() {
        let base = url("http://127.0.0.1:8778/");
        assert_eq!(
            normalize_link(&base, "").unwrap().as_str(),
            "http://127.0.0.1:8778/"
        );
        assert_eq!(
            normalize_link(&base, "/v1/").unwrap().as_str(),
            "http://127.0.0.1:8778/v1/"
        );
        assert_eq!(
            normalize_link(&base, "http://controller:8774/v2.1/")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:8778/v2.1/"
        );
        let tls = url("https://api.example/compute/");
        assert_eq!(
            normalize_link(&tls, "http://controller:8774/v2.1/")
                .unwrap()
                .as_str(),
            "https://api.example/v2.1/"
        );
    }

    #[test]
    fn link_matching() {
        let m = |e: &str, l: &str| link_matches(&url(e), &url(l));
        assert!(m("http://h/v2.1", "http://h/v2.1/"));
        assert!(m("http://h/v2.1/", "http://h/v2.1"));
        assert!(m("http://h/", "http://h/"));
        assert!(m("http://h/compute/v2.1", "http://h/v2.1/"));
        assert!(!m("http://h/v2.1", "http://h/v2/"));
        assert!(!m("http://h/v2.1", "http://h/"));
        assert!(!m("http://h/xv2.1", "http://h/v2.1"));
        assert!(!m("http://h/", "http://h/v1/"));
    }

    fn nova_root() -> serde_json::Value {
        json!({"versions": [
            {"id": "v2.0", "status": "DEPRECATED", "version": "", "min_version": "",
             "updated": "2025-07-04T12:00:00Z",
             "links": [{"rel": "self", "href": "http://controller:8774/v2/"}]},
            {"id": "v2.1", "status": "CURRENT", "version": "2.104", "min_version": "2.1",
             "updated": "2013-07-23T11:33:21Z",
             "links": [{"rel": "self", "href": "http://controller:8774/v2.1/"}]}
        ]})
    }

    #[test]
    fn picks_by_self_link_then_current_then_newest() {
        let root = url("http://127.0.0.1:8774/");
        // The endpoint /v2 is the unversioned v2.0 entry, by its link.
        let d = Discovery::from_document(&url("http://127.0.0.1:8774/v2"), &root, doc(nova_root()))
            .unwrap();
        assert_eq!(d.selected().id, "v2.0");
        assert_eq!(d.matched_by(), MatchedBy::SelfLink);
        assert_eq!(d.server_versions(), ServerVersions::Unversioned);
        assert_eq!(d.major(), Some(2));
        assert_eq!(d.entries()[0].self_link(), Some("http://127.0.0.1:8774/v2"));
        assert_eq!(
            d.entries()[1].self_link(),
            Some("http://127.0.0.1:8774/v2.1/")
        );

        // The root matches no link: CURRENT wins.
        let d = Discovery::from_document(&root, &root, doc(nova_root())).unwrap();
        assert_eq!(d.selected().id, "v2.1");
        assert_eq!(d.matched_by(), MatchedBy::Current);
        assert_eq!(
            d.server_versions(),
            ServerVersions::Microversions(VersionRange::from_static("2.1", "2.104"))
        );

        // Neither a link nor CURRENT: the newest.
        let mut value = nova_root();
        value["versions"][1]["status"] = json!("SUPPORTED");
        let d = Discovery::from_document(&root, &root, doc(value)).unwrap();
        assert_eq!(d.selected().id, "v2.1");
        assert_eq!(d.matched_by(), MatchedBy::Newest);
    }

    #[test]
    fn placement_empty_href_matches_the_endpoint() {
        let root = url("http://127.0.0.1:8778");
        let value = json!({"versions": [{"id": "v1.0", "max_version": "1.39", "min_version": "1.0",
            "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}]});
        let d = Discovery::from_document(&root, &root, doc(value)).unwrap();
        assert_eq!(d.matched_by(), MatchedBy::SelfLink);
        assert_eq!(
            d.server_versions(),
            ServerVersions::Microversions(VersionRange::from_static("1.0", "1.39"))
        );
    }

    #[test]
    fn empty_documents_are_errors() {
        let root = url("http://h/");
        let err = Discovery::from_document(&root, &root, VersionsDocument::default()).unwrap_err();
        assert!(err.is_discovery());
        assert_eq!(
            err.to_string(),
            "discovery failed: the versions document at http://h/ lists no version"
        );
    }

    #[test]
    fn records_round_trip() {
        let root = url("http://127.0.0.1:8774/");
        let d = Discovery::from_document(&root, &root, doc(nova_root())).unwrap();
        let text = serde_json::to_string(&DiscoveryRecord::from(&d)).unwrap();
        let back: DiscoveryRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back.into_discovery(), Some(d));
        let mut bad: serde_json::Value = serde_json::from_str(&text).unwrap();
        bad["selected"] = json!(7);
        let bad: DiscoveryRecord = serde_json::from_value(bad).unwrap();
        assert_eq!(bad.into_discovery(), None);
    }
}
