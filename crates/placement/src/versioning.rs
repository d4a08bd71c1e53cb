//! The versioning of the API: Placement's microversions (1.0 to 1.39,
//! from [`crate::history`]), the range an operator serves of them
//! (`[microversions]`), and the versions document of `GET /`.

use std::sync::{OnceLock, RwLock};

use anyhow::Context as _;
use bytes::Bytes;
use microversion::{VersionRange, VersionStatus};
use microversion_server::{
    ApiVersionSpec, BuildError, Discovery, Microversions, MicroversionsBuilder, Profile,
};

use crate::config::ServedVersions;

/// The service type of Placement.
pub const SERVICE_TYPE: &str = "placement";

/// The versioning of the API: Placement's profile over 1.0 to 1.39, all
/// of it served.
///
/// # Errors
///
/// Never in practice: the history and profile are fixed.
pub fn microversions() -> Result<Microversions, BuildError> {
    builder(true)?.build()
}

fn builder(count_requests: bool) -> Result<MicroversionsBuilder, BuildError> {
    let history = crate::history::history()?;
    Ok(Microversions::builder(SERVICE_TYPE, history.range())
        .profile(Profile::Placement)
        .count_requests(count_requests)
        // The project Keystone (or noauth2) named, for the counts of who
        // asks for which version.
        .telemetry_project(|extensions| {
            extensions
                .get::<crate::context::RequestContext>()?
                .project_id
                .as_deref()
        }))
}

/// The range `served` names inside the code's range: each bound unset is
/// the code's own.
///
/// # Errors
///
/// A minimum above the maximum, or a bound outside the code's range,
/// named with the code's range.
pub fn served_range(served: ServedVersions) -> anyhow::Result<VersionRange> {
    let code = crate::history::history()?.range();
    let min = served.min_version.unwrap_or(code.min());
    let max = served.max_version.unwrap_or(code.max());
    let range = VersionRange::new(min, max)
        .with_context(|| format!("min_version {min} is above max_version {max}"))?;
    microversion_server::check_served_range(code, range)?;
    Ok(range)
}

/// The versioning, counting negotiations for the metrics or not, serving
/// `served` of its range.
pub(crate) fn build(count_requests: bool, served: ServedVersions) -> anyhow::Result<Microversions> {
    Ok(builder(count_requests)?
        .served_range(served_range(served)?)
        .build()?)
}

/// The versions document of `GET /`: one API version, `v1.0`, whose
/// `self` link is the empty relative URL, as upstream writes it, listing
/// the range `api` serves when each document is made.
///
/// # Errors
///
/// Never in practice.
pub fn discovery(api: &Microversions) -> Result<Discovery, BuildError> {
    Discovery::builder()
        .version(
            ApiVersionSpec::new(
                format!("v{}", api.code_range().min()),
                "/",
                VersionStatus::Current,
            )
            .served_by(api)
            .literal_self_href(""),
        )
        .build()
}

/// The versions document as `GET /` sends it, serialized once for each
/// range served: the code's whole range is read without a lock; a
/// narrowed range's body is kept until the range changes again.
#[derive(Debug)]
pub(crate) struct VersionsBody {
    api: Microversions,
    discovery: Discovery,
    whole: OnceLock<Bytes>,
    narrowed: RwLock<Option<(VersionRange, Bytes)>>,
}

impl VersionsBody {
    pub(crate) fn new(api: Microversions, discovery: Discovery) -> VersionsBody {
        VersionsBody {
            api,
            discovery,
            whole: OnceLock::new(),
            narrowed: RwLock::new(None),
        }
    }

    /// The body for the range served now.
    pub(crate) fn get(&self) -> Bytes {
        let range = self.api.range();
        let whole = range == self.api.code_range();
        if whole {
            if let Some(body) = self.whole.get() {
                return body.clone();
            }
        } else if let Ok(narrowed) = self.narrowed.read()
            && let Some((kept, body)) = &*narrowed
            && *kept == range
        {
            return body.clone();
        }
        let body = self.render();
        // Kept only when no reload came while it was made.
        if self.api.range() == range {
            if whole {
                let _ = self.whole.set(body.clone());
            } else if let Ok(mut narrowed) = self.narrowed.write() {
                *narrowed = Some((range, body.clone()));
            }
        }
        body
    }

    fn render(&self) -> Bytes {
        // Through a `Value`, as the handler serialized it per request
        // before: its keys are sorted, and the bytes stay the same.
        serde_json::to_value(self.discovery.document(None))
            .and_then(|value| serde_json::to_vec(&value))
            .map(Bytes::from)
            .unwrap_or_default()
    }
}
