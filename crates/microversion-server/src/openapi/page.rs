//! [`ReferencePage`]: an API reference page a person reads, with a
//! version picker, for the documents of an [`ApiDescription`].

use std::fmt;
use std::fmt::Write as _;

use axum::Router;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderValue, header};
use microversion::Version;

use super::ApiDescription;
use crate::html::escape as html_escape;

/// What the page allows the browser to load: its own files, the
/// documents from the same server, nothing else. Swagger UI sets inline
/// styles and draws some icons from `data:` URLs; the page's icon is an
/// empty `data:` URL, so that the browser does not ask the service for
/// `/favicon.ico`.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
     font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page's own script: the version picker.
const SCRIPT: &str = include_str!("page/reference.js");

/// The page's own stylesheet: the picker's bar.
const STYLESHEET: &str = include_str!("page/reference.css");

/// Swagger UI's files the page loads, served from the `swagger-ui-dist`
/// crate, with their source maps (which browsers fetch only when their
/// developer tools are open).
const SWAGGER_UI_FILES: [&str; 4] = [
    "swagger-ui.css",
    "swagger-ui-bundle.js",
    "swagger-ui.css.map",
    "swagger-ui-bundle.js.map",
];

/// The value the picker gives the whole range.
const WHOLE_RANGE: &str = "all";

/// Why a [`ReferencePage`] cannot be built or served at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidReferencePage {
    reason: String,
}

impl fmt::Display for InvalidReferencePage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid reference page: {}", self.reason)
    }
}

impl std::error::Error for InvalidReferencePage {}

fn invalid(reason: impl Into<String>) -> InvalidReferencePage {
    InvalidReferencePage {
        reason: reason.into(),
    }
}

/// An API reference page a person reads, with a version picker, for the
/// documents of an [`ApiDescription`] (feature `reference-page`).
///
/// The page is rendered in the browser by [Swagger UI], whose files come
/// from the `swagger-ui-dist` crate: they are in that crate's package on
/// crates.io (it has no build script and downloads nothing), so they are
/// compiled into the binary, pinned by `Cargo.lock` with the rest of the
/// dependencies, and a plain `cargo build` on a fresh machine needs
/// nothing but the crate registry. The server serves them itself: the
/// page fetches nothing from anywhere but the server at run time, and its
/// `Content-Security-Policy` tells the browser to refuse anything else.
/// Taking the files from the npm registry at setup time instead would
/// have made a build with this feature depend on a step outside cargo
/// (and fail when it was not run); through a crate, the workspace build
/// stays self-contained, `--all-features` included.
///
/// What is ours: the page, its stylesheet and its script, which put a
/// version picker above Swagger UI. The picker lists the versions of the
/// description's range (a deprecated one marked so) and, last, the whole
/// range; choosing one loads `DOCUMENT?version=X.Y` (or `DOCUMENT` for the
/// whole range, where Swagger UI shows the `x-openstack` ranges) and puts
/// `?version=X.Y` in the page's address, so that a link names a version.
/// The page opens at the highest version unless its address names
/// another. The service serves the documents at `DOCUMENT` (by default
/// `/openapi.json`); [`ApiDescription::at`] and [`ApiDescription::whole`]
/// make them.
///
/// Every address on the page is relative to the page, so the page works
/// behind a proxy that puts the service under a prefix.
///
/// [Swagger UI]: https://swagger.io/tools/swagger-ui/
///
/// ```
/// use microversion::VersionRange;
/// use microversion_server::Microversions;
/// use microversion_server::openapi::{ApiDescription, ReferencePage};
///
/// let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.5")).build()?;
/// let description = ApiDescription::builder(&api).build()?;
/// let page = ReferencePage::builder(&description)
///     .title("Things")
///     .document_url("/openapi.json")
///     .build()?;
/// // `GET /api-ref` is the page; its files are under `/api-ref/`.
/// let app: axum::Router = page.router("/api-ref")?;
/// assert!(page.html("/api-ref").contains(r#"<option value="1.5" selected>1.5</option>"#));
/// # let _ = app;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ReferencePage {
    title: String,
    /// Every version the picker offers, lowest first, each with whether
    /// it is deprecated.
    versions: Vec<(Version, bool)>,
    whole: String,
    document_url: String,
    /// The versioning whose served range the picker follows.
    served_by: Option<crate::Microversions>,
}

/// Builds a [`ReferencePage`]; the checks are made by `build`.
#[derive(Clone, Debug)]
#[must_use]
pub struct ReferencePageBuilder {
    title: String,
    range: microversion::VersionRange,
    deprecated: Vec<crate::Deprecation>,
    versions: Option<Vec<Version>>,
    document_url: String,
    served_by: Option<crate::Microversions>,
}

impl ReferencePage {
    /// Starts the page of `description`'s documents: titled as they are,
    /// offering every version of their range, loading them from
    /// `/openapi.json`.
    pub fn builder(description: &ApiDescription) -> ReferencePageBuilder {
        ReferencePageBuilder {
            title: description.title.clone(),
            range: description.range,
            deprecated: description.deprecations.clone(),
            versions: None,
            document_url: "/openapi.json".to_owned(),
            served_by: None,
        }
    }

    /// The versions the picker offers, lowest first.
    pub fn versions(&self) -> impl Iterator<Item = Version> + '_ {
        self.versions.iter().map(|(v, _)| *v)
    }

    /// The page's HTML when it is served at `path`.
    #[must_use]
    pub fn html(&self, path: &str) -> String {
        let files = format!("{}/", last_segment(path));
        let document = relative(path, &self.document_url);
        let title = html_escape(&format!("{} API reference", self.title));
        let mut options = String::new();
        let served = self.served_by.as_ref().map(crate::Microversions::range);
        let offered: Vec<&(Version, bool)> = self
            .versions
            .iter()
            .filter(|(v, _)| served.is_none_or(|range| range.contains(*v)))
            .collect();
        let highest = offered.last().map(|(v, _)| *v);
        for (version, deprecated) in offered {
            let selected = if Some(*version) == highest {
                " selected"
            } else {
                ""
            };
            let note = if *deprecated { " (deprecated)" } else { "" };
            // Infallible: writing to a String.
            let _ = writeln!(
                options,
                r#"      <option value="{version}"{selected}>{version}{note}</option>"#
            );
        }
        let _ = writeln!(
            options,
            r#"      <option value="{WHOLE_RANGE}">{} (x-openstack)</option>"#,
            html_escape(&served.map_or_else(
                || self.whole.clone(),
                |range| format!("{} - {}", range.min(), range.max())
            ))
        );
        format!(
            r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title}</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="{files}swagger-ui.css">
  <link rel="stylesheet" href="{files}reference.css">
</head>
<body>
  <header class="mv-picker">
    <h1>{title}</h1>
    <label for="mv-version">Microversion</label>
    <select id="mv-version" data-document="{document}">
{options}    </select>
  </header>
  <main id="mv-reference"></main>
  <script src="{files}swagger-ui-bundle.js"></script>
  <script src="{files}reference.js"></script>
</body>
</html>
"#,
            document = html_escape(&document),
        )
    }

    /// The routes of the page at `path` (such as `/api-ref`): `GET path`
    /// is the page, `GET path/FILE` its files. The service serves the
    /// documents themselves at the page's document URL.
    ///
    /// # Errors
    ///
    /// Fails when `path` is not an absolute path of plain segments (it
    /// must start with `/`, not end with one, and hold no `{`, `}`, `*`,
    /// `?` or `#`).
    pub fn router<S>(&self, path: &str) -> Result<Router<S>, InvalidReferencePage>
    where
        S: Clone + Send + Sync + 'static,
    {
        check_path(path)?;
        let page = match &self.served_by {
            // Made for each request: the served range may change.
            Some(_) => {
                let (this, path) = (self.clone(), path.to_owned());
                get(move || page_response(this.html(&path)))
            }
            None => {
                let html = self.html(path);
                get(move || page_response(html.clone()))
            }
        };
        let mut router = Router::new()
            .route(path, page)
            .route(
                &format!("{path}/reference.js"),
                get(|| async { file_response("text/javascript; charset=utf-8", SCRIPT) }),
            )
            .route(
                &format!("{path}/reference.css"),
                get(|| async { file_response("text/css; charset=utf-8", STYLESHEET) }),
            );
        // Only the files of the crate's routes: its own index page is
        // replaced by ours.
        let swagger_ui = swagger_ui_dist::generate_routes(swagger_ui_dist::ApiDefinition {
            uri_prefix: path.to_owned(),
            api_definition: swagger_ui_dist::OpenApiSource::Uri(self.document_url.clone()),
            title: None,
        });
        for file in SWAGGER_UI_FILES {
            router = router.route_service(
                &format!("{path}/{file}"),
                swagger_ui.clone().into_service::<axum::body::Body>(),
            );
        }
        Ok(router)
    }
}

impl ReferencePageBuilder {
    /// The page's title, before ` API reference` (default: the
    /// description's title).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Where the service serves the documents: the document of version
    /// `X.Y` at `URL?version=X.Y`, the whole range's at `URL` (default
    /// `/openapi.json`). An absolute path is made relative to the page.
    pub fn document_url(mut self, url: impl Into<String>) -> Self {
        self.document_url = url.into();
        self
    }

    /// The versions the picker offers, instead of every version of the
    /// range; needed when the range spans major versions, whose minor
    /// versions have no known end.
    pub fn versions(mut self, versions: impl IntoIterator<Item = Version>) -> Self {
        self.versions = Some(versions.into_iter().collect());
        self
    }

    /// Offers only the versions `api` serves when the page is sent (an
    /// operator may narrow them while the service runs:
    /// [`Microversions::set_served_range`](crate::Microversions::set_served_range)).
    pub fn served_by(mut self, api: &crate::Microversions) -> Self {
        self.served_by = Some(api.clone());
        self
    }

    /// Checks and builds the page.
    ///
    /// # Errors
    ///
    /// Fails when the picker would offer no version, or a version outside
    /// the description's range; when the range spans major versions and
    /// no versions were given; when the document URL is empty or has a
    /// fragment.
    pub fn build(self) -> Result<ReferencePage, InvalidReferencePage> {
        let range = self.range;
        let mut versions = match self.versions {
            Some(versions) => versions,
            None if range.min().major() == range.max().major() => (range.min().minor()
                ..=range.max().minor())
                .map(|minor| Version::new(range.min().major(), minor))
                .collect(),
            None => {
                return Err(invalid(format!(
                    "the range {} to {} spans major versions: name the versions to offer",
                    range.min(),
                    range.max()
                )));
            }
        };
        if let Some(outside) = versions.iter().find(|v| !range.contains(**v)) {
            return Err(invalid(format!(
                "{outside} is outside the range {} to {}",
                range.min(),
                range.max()
            )));
        }
        versions.sort_unstable();
        versions.dedup();
        if versions.is_empty() {
            return Err(invalid("no version to offer"));
        }
        if self.document_url.is_empty() || self.document_url.contains('#') {
            return Err(invalid(format!(
                "the document URL {:?} is empty or has a fragment",
                self.document_url
            )));
        }
        let deprecated = self.deprecated;
        Ok(ReferencePage {
            title: self.title,
            versions: versions
                .into_iter()
                .map(|v| (v, crate::Deprecation::of(&deprecated, v).is_some()))
                .collect(),
            whole: format!("{} - {}", range.min(), range.max()),
            document_url: self.document_url,
            served_by: self.served_by,
        })
    }
}

fn check_path(path: &str) -> Result<(), InvalidReferencePage> {
    let plain = path.len() > 1
        && path.starts_with('/')
        && !path.ends_with('/')
        && !path.contains("//")
        && !path.contains(['{', '}', '*', '?', '#']);
    if plain {
        Ok(())
    } else {
        Err(invalid(format!(
            "the path {path:?} is not an absolute path of plain segments, such as /api-ref"
        )))
    }
}

async fn page_response(html: String) -> Response {
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

fn file_response(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

fn last_segment(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `target` as a reference relative to the page at `page` (both
/// absolute paths); a URL with a scheme, or a relative one, is kept.
fn relative(page: &str, target: &str) -> String {
    if !target.starts_with('/') || target.starts_with("//") {
        return target.to_owned();
    }
    let (target_path, query) = match target.find('?') {
        Some(at) => target.split_at(at),
        None => (target, ""),
    };
    // The page's directory, and the target's segments.
    let dir: Vec<&str> = page[1..].split('/').collect();
    let dir = &dir[..dir.len() - 1];
    let to: Vec<&str> = target_path[1..].split('/').collect();
    let (to_dirs, to_last) = to.split_at(to.len() - 1);
    let common = dir.iter().zip(to_dirs).take_while(|(a, b)| a == b).count();
    let mut out = "../".repeat(dir.len() - common);
    for segment in &to_dirs[common..] {
        out.push_str(segment);
        out.push('/');
    }
    out.push_str(to_last[0]);
    if out.is_empty() {
        out.push_str("./");
    } else if out
        .split('/')
        .next()
        .is_some_and(|first| first.contains(':'))
    {
        // `a:b` would read as a scheme.
        out.insert_str(0, "./");
    }
    out.push_str(query);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Microversions;
    use microversion::VersionRange;

    fn description(min: &'static str, max: &'static str) -> ApiDescription {
        let api = Microversions::builder("things", VersionRange::from_static(min, max))
            .build()
            .unwrap();
        ApiDescription::builder(&api).build().unwrap()
    }

    #[test]
    fn relative_references_follow_the_page() {
        assert_eq!(relative("/api-ref", "/openapi.json"), "openapi.json");
        assert_eq!(
            relative("/docs/api-ref", "/openapi.json"),
            "../openapi.json"
        );
        assert_eq!(
            relative("/docs/api-ref", "/docs/openapi.json"),
            "openapi.json"
        );
        assert_eq!(relative("/a/b/page", "/a/c/doc.json"), "../c/doc.json");
        assert_eq!(relative("/api-ref", "/v1/doc?x=1"), "v1/doc?x=1");
        assert_eq!(relative("/api-ref", "/"), "./");
        assert_eq!(relative("/api-ref", "/a:b"), "./a:b");
        assert_eq!(
            relative("/api-ref", "http://h/openapi.json"),
            "http://h/openapi.json"
        );
        assert_eq!(relative("/api-ref", "doc.json"), "doc.json");
    }

    #[test]
    fn the_picker_offers_every_version_and_the_whole_range() {
        let page = ReferencePage::builder(&description("1.0", "1.3"))
            .build()
            .unwrap();
        let versions: Vec<String> = page.versions().map(|v| v.to_string()).collect();
        assert_eq!(versions, ["1.0", "1.1", "1.2", "1.3"]);
        let html = page.html("/api-ref");
        assert!(html.contains("<option value=\"1.0\">1.0</option>"));
        assert!(html.contains("<option value=\"1.3\" selected>1.3</option>"));
        assert!(html.contains("<option value=\"all\">1.0 - 1.3 (x-openstack)</option>"));
        assert!(html.contains(r#"data-document="openapi.json""#));
        assert!(html.contains(r#"href="api-ref/swagger-ui.css""#));
        assert!(html.contains(r#"src="api-ref/reference.js""#));
        assert!(html.contains("<title>things API reference</title>"));
    }

    #[test]
    fn deprecated_versions_are_marked() {
        let api = Microversions::builder("things", VersionRange::from_static("1.0", "1.3"))
            .deprecation(crate::Deprecation::new(
                Version::new(1, 2),
                std::time::SystemTime::UNIX_EPOCH,
            ))
            .build()
            .unwrap();
        let description = ApiDescription::builder(&api).build().unwrap();
        let html = ReferencePage::builder(&description)
            .build()
            .unwrap()
            .html("/api-ref");
        assert!(html.contains(">1.1 (deprecated)</option>"), "{html}");
        assert!(html.contains(">1.2</option>"), "{html}");
    }

    #[test]
    fn text_is_escaped() {
        let html = ReferencePage::builder(&description("1.0", "1.1"))
            .title("<b>\"x\"</b> & co")
            .document_url("/doc.json?a=1&b=\"2\"")
            .build()
            .unwrap()
            .html("/ref");
        assert!(
            html.contains("<title>&lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp; co API reference</title>")
        );
        assert!(html.contains(r#"data-document="doc.json?a=1&amp;b=&quot;2&quot;""#));
    }

    #[test]
    fn bad_pages_are_refused_when_built() {
        let d = description("1.0", "1.3");
        let e = ReferencePage::builder(&d)
            .versions([Version::new(1, 4)])
            .build()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid reference page: 1.4 is outside the range 1.0 to 1.3"
        );
        let e = ReferencePage::builder(&d).versions([]).build().unwrap_err();
        assert_eq!(e.to_string(), "invalid reference page: no version to offer");
        let e = ReferencePage::builder(&d)
            .document_url("/a#b")
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("has a fragment"), "{e}");
        let d2 = description("1.5", "2.1");
        let e = ReferencePage::builder(&d2).build().unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid reference page: the range 1.5 to 2.1 spans major versions: name the versions to offer"
        );
        let page = ReferencePage::builder(&d2)
            .versions([Version::new(2, 1), Version::new(1, 5), Version::new(2, 0)])
            .build()
            .unwrap();
        let versions: Vec<String> = page.versions().map(|v| v.to_string()).collect();
        assert_eq!(versions, ["1.5", "2.0", "2.1"]);
        let page = ReferencePage::builder(&d).build().unwrap();
        for path in [
            "",
            "/",
            "api-ref",
            "/api-ref/",
            "/a//b",
            "/{x}",
            "/a?b",
            "/a*",
        ] {
            let e = page.router::<()>(path).unwrap_err();
            assert!(
                e.to_string().contains("not an absolute path"),
                "{path}: {e}"
            );
        }
        assert!(page.router::<()>("/docs/api-ref").is_ok());
    }
}
