//! `microversion version-list` without URLs: every service of the cloud's
//! catalog, probed at once: what each one's versions document says, the
//! version this command would negotiate, and the range it has in common
//! with what was asked for ("what does my cloud speak").

use microversion::{ServerVersions, Version, VersionRange, VersionRequest, negotiate};
use microversion_client::Probe;
use microversion_client::cloud::Cloud;
use serde_json::{Value, json};

use crate::args::ListFormat;
use crate::error::Error;
use crate::table::Table;

/// One service of the catalog.
#[derive(Debug)]
struct Service {
    service_type: String,
    endpoint: Option<String>,
    requested: VersionRequest,
    found: Result<Found, String>,
}

#[derive(Debug)]
struct Found {
    id: String,
    status: String,
    versions: ServerVersions,
}

/// What the cloud's services speak.
#[derive(Debug)]
pub(crate) struct CloudListing {
    cloud: Option<String>,
    services: Vec<Service>,
}

/// The CLI supports every version.
fn cli_range() -> VersionRange {
    VersionRange::new(Version::new(0, 0), Version::MAX).unwrap_or(VersionRange::whole_major(1))
}

impl Found {
    /// The version the command would send, or why none.
    fn negotiated(&self, requested: VersionRequest) -> Result<Option<Version>, String> {
        negotiate(cli_range(), self.versions, requested)
            .map(microversion::Negotiated::version)
            .map_err(|e| e.to_string())
    }

    /// The server's range within what was asked for: all of it for
    /// `latest`, its part in the major for `X.latest`, the version itself
    /// for `X.Y` when the server has it.
    fn common(&self, requested: VersionRequest) -> Option<VersionRange> {
        let ServerVersions::Microversions(range) = self.versions else {
            return None;
        };
        match requested {
            VersionRequest::Latest => Some(range),
            VersionRequest::MajorLatest(major) => range.intersect(VersionRange::whole_major(major)),
            VersionRequest::Exact(v) => range
                .contains(v)
                .then(|| VersionRange::new(v, v).ok())
                .flatten(),
            _ => None,
        }
    }
}

impl CloudListing {
    /// Probes every service of the catalog.
    pub(crate) async fn fetch(cloud: &Cloud) -> Result<Self, Error> {
        let endpoints = cloud
            .catalog_endpoints()
            .await
            .map_err(Error::from_client)?;
        let mut probe = Probe::new().http_client(cloud.http_client().clone());
        if let Some(token) = cloud.token_header().await.map_err(Error::from_client)? {
            probe = probe.header("x-auth-token", token.to_str().unwrap_or_default());
        }
        for (_, url) in &endpoints {
            if let Ok(url) = url {
                probe = probe.endpoint(url.as_str());
            }
        }
        let report = probe
            .run()
            .await
            .map_err(|e| Error::with_source("cannot probe the catalog's endpoints", e))?;
        let mut reports = report.endpoints().iter();
        let mut services = Vec::new();
        for (service_type, url) in endpoints {
            let (endpoint, found) = match url {
                Ok(url) => {
                    let found = match reports.next().map(|r| r.discovery()) {
                        Some(Ok(discovery)) => {
                            let selected = discovery.selected();
                            Ok(Found {
                                id: selected.id.clone(),
                                status: selected.status.to_string(),
                                versions: discovery.server_versions(),
                            })
                        }
                        Some(Err(e)) => Err(crate::error::chain(
                            e.to_string(),
                            std::error::Error::source(e),
                        )),
                        None => Err("not probed".to_owned()),
                    };
                    (Some(url.to_string()), found)
                }
                Err(e) => (None, Err(e.to_string())),
            };
            services.push(Service {
                requested: cloud.default_version(&service_type),
                service_type,
                endpoint,
                found,
            });
        }
        Ok(CloudListing {
            cloud: cloud.config().name().map(str::to_owned),
            services,
        })
    }

    /// Whether every service answered.
    pub(crate) fn all_answered(&self) -> bool {
        self.services.iter().all(|s| s.found.is_ok())
    }

    /// The listing in `format`.
    pub(crate) fn render(&self, format: ListFormat) -> String {
        match format {
            ListFormat::Table => self.table(),
            ListFormat::Json => {
                let mut text = serde_json::to_string_pretty(&self.json()).unwrap_or_default();
                text.push('\n');
                text
            }
        }
    }

    fn table(&self) -> String {
        let mut table = Table::new(&[
            "SERVICE",
            "ENDPOINT",
            "ID",
            "MIN",
            "MAX",
            "REQUESTED",
            "NEGOTIATED",
            "COMMON",
        ]);
        let dash = || "-".to_owned();
        for s in &self.services {
            let endpoint = s.endpoint.clone().unwrap_or_else(dash);
            match &s.found {
                Ok(found) => {
                    let range = match found.versions {
                        ServerVersions::Microversions(r) => Some(r),
                        ServerVersions::Unversioned => None,
                    };
                    let negotiated = match found.negotiated(s.requested) {
                        Ok(Some(v)) => v.to_string(),
                        Ok(None) => "none (no header)".to_owned(),
                        Err(e) => format!("error: {e}"),
                    };
                    table.row(vec![
                        s.service_type.clone(),
                        endpoint,
                        format!("{} ({})", found.id, found.status),
                        range.map_or_else(dash, |r| r.min().to_string()),
                        range.map_or_else(dash, |r| r.max().to_string()),
                        s.requested.to_string(),
                        negotiated,
                        found
                            .common(s.requested)
                            .map_or_else(dash, |r| r.to_string()),
                    ]);
                }
                Err(e) => table.row(vec![
                    s.service_type.clone(),
                    endpoint,
                    "ERROR".to_owned(),
                    dash(),
                    dash(),
                    s.requested.to_string(),
                    dash(),
                    e.clone(),
                ]),
            }
        }
        let mut out = String::new();
        if let Some(name) = &self.cloud {
            out.push_str(&format!("Cloud: {name}\n"));
        }
        out.push_str(&table.render());
        out.push_str(
            "\nREQUESTED: the version asked for (OS_<SERVICE>_API_VERSION, <service>_api_version, else latest);\n\
             NEGOTIATED: what `microversion request` sends; COMMON: the server's range within what is asked for\n",
        );
        out
    }

    fn json(&self) -> Value {
        let services: Vec<Value> = self
            .services
            .iter()
            .map(|s| match &s.found {
                Ok(found) => {
                    let range = match found.versions {
                        ServerVersions::Microversions(r) => Some(r),
                        ServerVersions::Unversioned => None,
                    };
                    let (negotiated, error) = match found.negotiated(s.requested) {
                        Ok(v) => (json!(v.map(|v| v.to_string())), Value::Null),
                        Err(e) => (Value::Null, json!(e)),
                    };
                    let common = found.common(s.requested).map(|r| {
                        json!({"min_version": r.min().to_string(), "max_version": r.max().to_string()})
                    });
                    json!({
                        "service_type": s.service_type,
                        "endpoint": s.endpoint,
                        "id": found.id,
                        "status": found.status,
                        "min_version": range.map(|r| r.min().to_string()),
                        "max_version": range.map(|r| r.max().to_string()),
                        "requested": s.requested.to_string(),
                        "negotiated": negotiated,
                        "common": common,
                        "error": error,
                    })
                }
                Err(e) => json!({
                    "service_type": s.service_type,
                    "endpoint": s.endpoint,
                    "requested": s.requested.to_string(),
                    "negotiated": null,
                    "common": null,
                    "error": e,
                }),
            })
            .collect();
        json!({ "cloud": self.cloud, "services": services })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(range: Option<(&'static str, &'static str)>) -> Found {
        Found {
            id: "v1".into(),
            status: "CURRENT".into(),
            versions: range.map_or(ServerVersions::Unversioned, |(a, b)| {
                ServerVersions::Microversions(VersionRange::from_static(a, b))
            }),
        }
    }

    #[test]
    fn negotiated_and_common() {
        let f = found(Some(("1.0", "1.39")));
        assert_eq!(
            f.negotiated(VersionRequest::Latest),
            Ok(Some(Version::new(1, 39)))
        );
        assert_eq!(
            f.common(VersionRequest::Latest),
            Some(VersionRange::from_static("1.0", "1.39"))
        );
        let exact = VersionRequest::Exact(Version::new(1, 20));
        assert_eq!(f.negotiated(exact), Ok(Some(Version::new(1, 20))));
        assert_eq!(
            f.common(exact),
            Some(VersionRange::from_static("1.20", "1.20"))
        );
        let too_high = VersionRequest::Exact(Version::new(1, 50));
        assert!(f.negotiated(too_high).unwrap_err().contains("1.50"));
        assert_eq!(f.common(too_high), None);
        assert_eq!(f.common(VersionRequest::MajorLatest(2)), None);
        let plain = found(None);
        assert_eq!(plain.negotiated(VersionRequest::Latest), Ok(None));
        assert_eq!(plain.common(VersionRequest::Latest), None);
    }
}
