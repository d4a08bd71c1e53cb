//! The version history: every microversion with a one-line description of
//! what it changed, kept in one place in code (docs/wire.md 18).
//!
//! The maximum version of the API is the last entry, so adding a
//! microversion is adding a line here:
//!
//! ```
//! use microversion_server::history::VersionHistory;
//!
//! let history = VersionHistory::builder()
//!     .version("1.0", "Initial version.")
//!     .version("1.1", "Adds GET and PUT /resource_providers/{uuid}/aggregates.")
//!     .version("1.2", "Adds /resource_classes.")
//!     .build()?;
//! assert_eq!(history.range().max().to_string(), "1.2");
//! assert!(history.to_markdown().contains("| 1.1 | Adds GET and PUT"));
//! # Ok::<(), microversion_server::BuildError>(())
//! ```

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::routing::get;
use microversion::{Version, VersionRange};
use serde_json::{Value, json};

use crate::error::BuildError;

/// One microversion and what it changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    /// The version.
    pub version: Version,
    /// What it changed, in one line.
    pub description: String,
}

/// The ordered history of an API's microversions. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionHistory {
    entries: Arc<[HistoryEntry]>,
    range: VersionRange,
}

impl VersionHistory {
    /// Starts a builder.
    pub fn builder() -> VersionHistoryBuilder {
        VersionHistoryBuilder {
            entries: Vec::new(),
            error: None,
        }
    }

    /// The entries, oldest first.
    #[must_use]
    pub fn entries(&self) -> &[HistoryEntry] {
        &self.entries
    }

    /// From the first entry to the last.
    #[must_use]
    pub fn range(&self) -> VersionRange {
        self.range
    }

    /// What `version` changed, if it is in the history.
    #[must_use]
    pub fn describe(&self, version: Version) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.version == version)
            .map(|e| e.description.as_str())
    }

    /// The history as JSON: `{"min_version", "max_version", "versions":
    /// [{"version", "description", "status"}]}`, where status is
    /// `DEPRECATED` for a version one of `deprecations` covers, else
    /// `SUPPORTED`, and `CURRENT` for the last.
    #[must_use]
    pub fn to_json(&self, deprecations: &[crate::Deprecation]) -> Value {
        let last = self.range().max();
        let versions: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                let status = if crate::Deprecation::of(deprecations, e.version).is_some() {
                    "DEPRECATED"
                } else if e.version == last {
                    "CURRENT"
                } else {
                    "SUPPORTED"
                };
                json!({
                    "version": e.version.to_string(),
                    "description": e.description,
                    "status": status,
                })
            })
            .collect();
        json!({
            "min_version": self.range().min().to_string(),
            "max_version": last.to_string(),
            "versions": versions,
        })
    }

    /// The history as a Markdown table, for the docs.
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("| version | change |\n|---|---|\n");
        for e in self.entries.iter() {
            let _ = writeln!(
                out,
                "| {} | {} |",
                e.version,
                e.description.replace('|', "\\|")
            );
        }
        out
    }

    /// A route serving [`VersionHistory::to_json`] at `path` (make it
    /// version-neutral if it should not be negotiated).
    pub fn router<S>(&self, path: &str, deprecations: &[crate::Deprecation]) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        let body = self.to_json(deprecations);
        Router::new().route(path, get(move || async move { Json(body.clone()) }))
    }
}

/// Builds a [`VersionHistory`]; the first error comes out of `build`.
#[derive(Debug)]
#[must_use]
pub struct VersionHistoryBuilder {
    entries: Vec<HistoryEntry>,
    error: Option<BuildError>,
}

impl VersionHistoryBuilder {
    /// Adds the next microversion.
    pub fn version(mut self, version: &str, description: impl Into<String>) -> Self {
        match version.parse() {
            Ok(version) => self.entries.push(HistoryEntry {
                version,
                description: description.into(),
            }),
            Err(e) => {
                self.error.get_or_insert(BuildError::HistoryVersion(e));
            }
        }
        self
    }

    /// Checks and builds.
    ///
    /// # Errors
    ///
    /// Returns [`BuildError::HistoryVersion`] for an invalid version text,
    /// [`BuildError::EmptyHistory`], [`BuildError::HistoryOrder`] for a
    /// version not above the previous one, or [`BuildError::NoDescription`].
    pub fn build(self) -> Result<VersionHistory, BuildError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let (Some(first), Some(last)) = (self.entries.first(), self.entries.last()) else {
            return Err(BuildError::EmptyHistory);
        };
        let range = VersionRange::new(first.version, last.version).map_err(|_| {
            BuildError::HistoryOrder {
                previous: first.version,
                next: last.version,
            }
        })?;
        for pair in self.entries.windows(2) {
            if pair[1].version <= pair[0].version {
                return Err(BuildError::HistoryOrder {
                    previous: pair[0].version,
                    next: pair[1].version,
                });
            }
        }
        if let Some(e) = self
            .entries
            .iter()
            .find(|e| e.description.trim().is_empty())
        {
            return Err(BuildError::NoDescription(e.version));
        }
        Ok(VersionHistory {
            entries: self.entries.into(),
            range,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_and_described() {
        let err = VersionHistory::builder()
            .version("1.0", "a")
            .version("1.0", "b")
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "version history: 1.0 follows 1.0, but versions must increase"
        );
        assert!(matches!(err, BuildError::HistoryOrder { .. }));
        let err = VersionHistory::builder()
            .version("1.x", "a")
            .build()
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("version history: invalid version \"1.x\"")
        );
        assert!(matches!(err, BuildError::HistoryVersion(_)));
        let err = VersionHistory::builder().build().unwrap_err();
        assert!(matches!(err, BuildError::EmptyHistory), "{err}");
        assert_eq!(err.to_string(), "version history is empty");
        let err = VersionHistory::builder()
            .version("1.0", " ")
            .build()
            .unwrap_err();
        assert!(matches!(err, BuildError::NoDescription(v) if v == Version::new(1, 0)));
        assert_eq!(err.to_string(), "version history: 1.0 has no description");
    }

    #[test]
    fn json_marks_deprecated_and_current() {
        let h = VersionHistory::builder()
            .version("1.0", "first")
            .version("1.1", "second")
            .version("1.2", "third")
            .build()
            .unwrap();
        assert_eq!(h.range(), VersionRange::from_static("1.0", "1.2"));
        assert_eq!(h.describe(Version::new(1, 1)), Some("second"));
        let below = crate::Deprecation::new(Version::new(1, 1), std::time::UNIX_EPOCH);
        let v = h.to_json(std::slice::from_ref(&below));
        assert_eq!(v["max_version"], "1.2");
        assert_eq!(v["versions"][0]["status"], "DEPRECATED");
        assert_eq!(v["versions"][1]["status"], "SUPPORTED");
        assert_eq!(v["versions"][2]["status"], "CURRENT");
        // One version alone.
        let one = crate::Deprecation::versions(
            microversion::VersionSpan::from_static("1.1 - 1.1"),
            std::time::UNIX_EPOCH,
        );
        let v = h.to_json(&[one]);
        assert_eq!(v["versions"][0]["status"], "SUPPORTED");
        assert_eq!(v["versions"][1]["status"], "DEPRECATED");
        assert_eq!(
            h.to_markdown(),
            "| version | change |\n|---|---|\n| 1.0 | first |\n| 1.1 | second |\n| 1.2 | third |\n"
        );
    }
}
