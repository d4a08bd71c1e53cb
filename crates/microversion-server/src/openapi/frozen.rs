//! Released versions frozen: each version's document committed, and
//! compared with the one the code makes now.

use std::fmt;
use std::path::{Path, PathBuf};

use microversion::Version;
use microversion_contract::Delta;

use super::ApiDescription;

/// The variable that makes [`Contracts::verify`] write the documents
/// instead of comparing them.
pub const ACCEPT_VARIABLE: &str = "MICROVERSION_ACCEPT_CONTRACTS";

/// The committed documents of an API's released versions: one
/// `X.Y.json` per version in one directory, each the document
/// [`ApiDescription::at`] made when it was accepted.
///
/// A test of the service calls [`Contracts::verify`]: it fails when the
/// code's document of a committed version differs from the committed one
/// in its contract (text for people aside), saying for each difference
/// whether it breaks that version's clients. A breaking one belongs in a
/// new microversion. An intended change is accepted by running the test
/// again with `MICROVERSION_ACCEPT_CONTRACTS=1`, which writes every
/// version's document, and committing them.
///
/// ```no_run
/// # fn description() -> microversion_server::openapi::ApiDescription { unimplemented!() }
/// use microversion_server::openapi::Contracts;
///
/// #[test]
/// fn released_versions_are_frozen() {
///     let contracts = Contracts::in_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/contracts"));
///     if let Err(report) = contracts.verify(&description()) {
///         panic!("{report}");
///     }
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Contracts {
    dir: PathBuf,
}

/// What [`Contracts::check`] found: the differences of each version, and
/// what could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub struct ContractReport {
    /// The directory of the committed documents.
    pub dir: PathBuf,
    /// Each difference, with its version.
    pub deltas: Vec<(Version, Delta)>,
    /// The versions served with no committed document.
    pub missing: Vec<Version>,
    /// Committed documents of versions no longer in the range.
    pub stale: Vec<Version>,
    /// Documents that could not be read, with why.
    pub unreadable: Vec<(PathBuf, String)>,
}

impl ContractReport {
    /// Whether a difference breaks a client of a committed version.
    #[must_use]
    pub fn breaks_clients(&self) -> bool {
        self.deltas.iter().any(|(_, d)| d.breaking) || !self.stale.is_empty()
    }
}

impl fmt::Display for ContractReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "the documents of the API differ from those committed in {}:",
            self.dir.display()
        )?;
        for (version, delta) in &self.deltas {
            let kind = if delta.breaking {
                "BREAKING"
            } else {
                "compatible"
            };
            writeln!(f, "  {version}: {kind}: {delta}")?;
        }
        for version in &self.missing {
            writeln!(f, "  {version}: no committed document")?;
        }
        for version in &self.stale {
            writeln!(f, "  {version}: BREAKING: committed, but no longer served")?;
        }
        for (path, why) in &self.unreadable {
            writeln!(f, "  {}: cannot be read: {why}", path.display())?;
        }
        if self.breaks_clients() {
            writeln!(
                f,
                "A breaking change to a released version belongs in a new microversion."
            )?;
        }
        write!(
            f,
            "To accept these changes, run the test again with {ACCEPT_VARIABLE}=1 and commit the documents."
        )
    }
}

impl std::error::Error for ContractReport {}

impl Contracts {
    /// The documents committed in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Contracts { dir: dir.into() }
    }

    fn path_of(&self, version: Version) -> PathBuf {
        self.dir.join(format!("{version}.json"))
    }

    /// The versions of the documents committed, in order.
    fn committed(&self) -> Vec<Version> {
        let mut versions: Vec<Version> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name();
                let stem = Path::new(&name).file_stem()?.to_str()?.to_owned();
                let is_json = Path::new(&name).extension().is_some_and(|e| e == "json");
                is_json.then(|| stem.parse().ok()).flatten()
            })
            .collect();
        versions.sort();
        versions
    }

    /// The committed documents of versions outside `description`'s range.
    fn stale(&self, description: &ApiDescription) -> Vec<Version> {
        let range = description.range();
        self.committed()
            .into_iter()
            .filter(|v| !range.contains(*v))
            .collect()
    }

    /// Compares the document of each version of `description`'s range
    /// with the committed one.
    ///
    /// # Errors
    ///
    /// The [`ContractReport`] of every difference, missing or stale
    /// document, and unreadable file.
    pub fn check(&self, description: &ApiDescription) -> Result<(), ContractReport> {
        let mut report = ContractReport {
            dir: self.dir.clone(),
            deltas: Vec::new(),
            missing: Vec::new(),
            stale: Vec::new(),
            unreadable: Vec::new(),
        };
        for version in description.versions() {
            let path = self.path_of(version);
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    report.missing.push(version);
                    continue;
                }
                Err(e) => {
                    report.unreadable.push((path, e.to_string()));
                    continue;
                }
            };
            let committed: serde_json::Value = match serde_json::from_str(&text) {
                Ok(value) => value,
                Err(e) => {
                    report.unreadable.push((path, e.to_string()));
                    continue;
                }
            };
            let current = match description.at(version) {
                Ok(document) => document.to_value(),
                Err(e) => {
                    report.unreadable.push((path, e.to_string()));
                    continue;
                }
            };
            report.deltas.extend(
                microversion_contract::compare(&committed, &current)
                    .into_iter()
                    .map(|delta| (version, delta)),
            );
        }
        report.stale = self.stale(description);
        let clean = report.deltas.is_empty()
            && report.missing.is_empty()
            && report.stale.is_empty()
            && report.unreadable.is_empty();
        if clean { Ok(()) } else { Err(report) }
    }

    /// Writes the document of each version of `description`'s range, and
    /// removes those of versions outside it: the documents as the code
    /// makes them now, accepted. Returns how many were written.
    ///
    /// # Errors
    ///
    /// The first file that cannot be written or removed.
    pub fn accept(&self, description: &ApiDescription) -> std::io::Result<usize> {
        std::fs::create_dir_all(&self.dir)?;
        let mut written = 0;
        for version in description.versions() {
            let document = description
                .at(version)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let mut text = serde_json::to_string_pretty(&document.to_value())
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            text.push('\n');
            std::fs::write(self.path_of(version), text)?;
            written += 1;
        }
        for stale in self.stale(description) {
            std::fs::remove_file(self.path_of(stale))?;
        }
        Ok(written)
    }

    /// [`Contracts::accept`] when the environment variable
    /// `MICROVERSION_ACCEPT_CONTRACTS` is `1`, [`Contracts::check`]
    /// otherwise: what a test calls.
    ///
    /// # Errors
    ///
    /// As [`Contracts::check`]; when accepting, a report of the file that
    /// cannot be written.
    pub fn verify(&self, description: &ApiDescription) -> Result<(), ContractReport> {
        if std::env::var(ACCEPT_VARIABLE).is_ok_and(|v| v == "1") {
            return self
                .accept(description)
                .map(|_| ())
                .map_err(|e| ContractReport {
                    dir: self.dir.clone(),
                    deltas: Vec::new(),
                    missing: Vec::new(),
                    stale: Vec::new(),
                    unreadable: vec![(self.dir.clone(), e.to_string())],
                });
        }
        self.check(description)
    }
}

#[cfg(test)]
mod tests {
    use http::StatusCode;
    use microversion::{VersionRange, VersionSpan};
    use serde_json::json;

    use super::*;
    use crate::openapi::{OperationDoc, ResponseDoc};
    use crate::{Microversions, VersionedRouter};

    fn description(with_color: bool, max: &'static str) -> ApiDescription {
        let api = Microversions::builder("widgets", VersionRange::from_static("1.0", max))
            .build()
            .unwrap();
        let router =
            VersionedRouter::<()>::new().get("/widgets", VersionSpan::ALL, || async { "[]" });
        let mut properties = json!({"id": {"type": "integer"}});
        if with_color {
            properties["color"] = json!({"type": "string"});
        }
        let schema = json!({"type": "object", "properties": properties, "required": ["id"]});
        ApiDescription::builder(&api)
            .routes(&router)
            .operation(OperationDoc::get("/widgets").response(
                VersionSpan::ALL,
                StatusCode::OK,
                ResponseDoc::json("The widget", schema),
            ))
            .build()
            .unwrap()
    }

    #[test]
    fn committed_documents_are_compared_and_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let contracts = Contracts::in_dir(dir.path());
        let report = contracts.check(&description(true, "1.1")).unwrap_err();
        assert_eq!(report.missing, [Version::new(1, 0), Version::new(1, 1)]);
        assert_eq!(contracts.accept(&description(true, "1.1")).unwrap(), 2);
        assert!(dir.path().join("1.1.json").is_file());
        contracts.check(&description(true, "1.1")).unwrap();

        // A property removed from a released version's answer.
        let report = contracts.check(&description(false, "1.1")).unwrap_err();
        assert!(report.breaks_clients());
        let text = report.to_string();
        assert!(
            text.contains("  1.0: BREAKING: GET /widgets: 200 response body `color` removed\n"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "A breaking change to a released version belongs in a new microversion.\n\
                 To accept these changes, run the test again with MICROVERSION_ACCEPT_CONTRACTS=1 \
                 and commit the documents."
            ),
            "{text}"
        );
        // A version dropped from the range.
        let report = contracts.check(&description(true, "1.0")).unwrap_err();
        assert_eq!(report.stale, [Version::new(1, 1)]);
        contracts.accept(&description(true, "1.0")).unwrap();
        assert!(!dir.path().join("1.1.json").exists());
        contracts.check(&description(true, "1.0")).unwrap();
    }
}
