//! The version history: every microversion with a one-line description of
//! what it changed, kept in one place in code (docs/wire.md 18).
//!
//! The maximum version of the API is the last entry, so adding a
//! microversion is adding a line here. Each is best a [`Change`], a
//! `const` the routes and schemas of that version name too:
//!
//! ```
//! use microversion::Change;
//! use microversion_server::history::VersionHistory;
//!
//! const INITIAL: Change = Change::new("1.0", "Initial version.");
//! const AGGREGATES: Change =
//!     Change::new("1.1", "Adds GET and PUT /resource_providers/{uuid}/aggregates.");
//! const CLASSES: Change = Change::new("1.2", "Adds /resource_classes.");
//!
//! let history = VersionHistory::of(&[INITIAL, AGGREGATES, CLASSES])?;
//! assert_eq!(history.range().max().to_string(), "1.2");
//! assert!(history.to_markdown().contains("| 1.1 | Adds GET and PUT"));
//! # Ok::<(), microversion_server::BuildError>(())
//! ```
//!
//! Within a major version no version may be left out: each has its change.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::routing::get;
use microversion::{Change, Version, VersionRange};
use serde_json::{Value, json};

use crate::error::BuildError;

/// One microversion and what it changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    /// The version.
    pub version: Version,
    /// What it changed, in one line.
    pub description: String,
    /// Whether its effect is inside a handler only
    /// ([`Change::behaviour`]): its documents may equal the previous
    /// version's.
    pub behaviour: bool,
}

/// The ordered history of an API's microversions. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionHistory {
    entries: Arc<[HistoryEntry]>,
    range: VersionRange,
}

impl VersionHistory {
    /// The history of `changes`, oldest first.
    ///
    /// # Errors
    ///
    /// As [`VersionHistoryBuilder::build`].
    pub fn of(changes: &[Change]) -> Result<VersionHistory, BuildError> {
        changes
            .iter()
            .fold(VersionHistory::builder(), |builder, change| {
                builder.change(*change)
            })
            .build()
    }

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
                behaviour: false,
            }),
            Err(e) => {
                self.error.get_or_insert(BuildError::HistoryVersion(e));
            }
        }
        self
    }

    /// Adds the next microversion as its [`Change`].
    pub fn change(mut self, change: Change) -> Self {
        self.entries.push(HistoryEntry {
            version: change.version(),
            description: change.description().to_owned(),
            behaviour: change.is_behaviour(),
        });
        self
    }

    /// Checks and builds.
    ///
    /// # Errors
    ///
    /// Returns [`BuildError::HistoryVersion`] for an invalid version text,
    /// [`BuildError::EmptyHistory`], [`BuildError::HistoryOrder`] for a
    /// version not above the previous one, [`BuildError::HistoryGap`] for
    /// versions of one major left out between two entries, or
    /// [`BuildError::NoDescription`].
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
            let (previous, next) = (pair[0].version, pair[1].version);
            if next <= previous {
                return Err(BuildError::HistoryOrder { previous, next });
            }
            if next.major() == previous.major() && previous.next_minor() != Some(next) {
                return Err(BuildError::HistoryGap { previous, next });
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
        let err = VersionHistory::of(&[
            Change::new("1.0", "a"),
            Change::new("1.1", "b"),
            Change::new("1.3", "c"),
        ])
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "version history: 1.3 follows 1.1, but every version between them needs its change"
        );
        // A new major starts where it will.
        let across = VersionHistory::of(&[Change::new("1.0", "a"), Change::new("2.1", "b")]);
        assert!(across.is_ok());
    }

    #[test]
    fn changes_keep_whether_they_are_of_behaviour() {
        let h = VersionHistory::of(&[
            Change::new("1.0", "first"),
            Change::new("1.1", "second").behaviour(),
        ])
        .unwrap();
        let kinds: Vec<bool> = h.entries().iter().map(|e| e.behaviour).collect();
        assert_eq!(kinds, [false, true]);
        assert_eq!(h.describe(Version::new(1, 1)), Some("second"));
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
