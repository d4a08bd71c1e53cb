//! Version gates: [`VersionSpan`], the versions a feature exists at, and
//! [`Versioned`], one operation with an implementation per span (the idea
//! of python-novaclient's `api_versions.wraps(start, end)`).
//!
//! ```
//! use microversion::{Version, VersionSpan};
//! use microversion_client::Versioned;
//!
//! // How to read a server's flavor: the field moved in 2.47.
//! fn flavor_by_id(server: &serde_json::Value) -> Option<String> {
//!     server["flavor"]["id"].as_str().map(str::to_owned)
//! }
//! fn flavor_by_name(server: &serde_json::Value) -> Option<String> {
//!     server["flavor"]["original_name"].as_str().map(str::to_owned)
//! }
//!
//! let flavor = Versioned::builder("show server flavor")
//!     .between("2.1", "2.46", flavor_by_id as fn(&serde_json::Value) -> Option<String>)
//!     .since("2.47", flavor_by_name)
//!     .build()?;
//! let pick = flavor.select(Version::new(2, 60))?;
//! let server = serde_json::json!({"flavor": {"original_name": "m1.small"}});
//! assert_eq!(pick(&server).as_deref(), Some("m1.small"));
//!
//! let err = flavor.select(Version::new(2, 0)).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "show server flavor is not available at API version 2.0; it is supported by API \
//!      versions 2.1 - 2.46, 2.47 - latest"
//! );
//! # Ok::<(), microversion_client::Error>(())
//! ```

use std::fmt;

use microversion::{Version, VersionSpan};

use crate::error::Error;
use crate::input::IntoVersion;

/// The help suffix of a CLI command or option:
/// `(supported by API versions 1.14 - latest)`.
#[cfg(any(feature = "clap", test))]
pub(crate) fn help_suffix(span: VersionSpan) -> String {
    format!("(supported by API versions {span})")
}

/// Spans as a list for messages: `2.1 - 2.46, 2.47 - latest`.
pub(crate) fn list_spans(spans: impl IntoIterator<Item = VersionSpan>) -> String {
    spans
        .into_iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks `version` against a feature's span: the gate of the CLI
/// metadata.
#[cfg(any(feature = "clap", test))]
pub(crate) fn check_span(feature: &str, span: VersionSpan, version: Version) -> Result<(), Error> {
    if span.contains(version) {
        Ok(())
    } else {
        Err(Error::gate(format!(
            "{feature} is supported by API versions {span}; the version in use is {version}"
        )))
    }
}

/// One operation with an implementation per version span; [`select`]
/// picks the one for a version.
///
/// Built by [`Versioned::builder`]; the spans may leave gaps (a removed
/// operation) but must not overlap, which `build()` checks.
///
/// [`select`]: Versioned::select
#[derive(Clone)]
pub struct Versioned<T> {
    name: String,
    impls: Vec<(VersionSpan, T)>,
}

impl<T> Versioned<T> {
    /// Starts a builder for the operation `name` (used in messages).
    pub fn builder(name: impl Into<String>) -> VersionedBuilder<T> {
        VersionedBuilder {
            name: name.into(),
            impls: Vec::new(),
            error: None,
        }
    }

    /// The operation's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The spans with an implementation, in the order given.
    pub fn spans(&self) -> impl Iterator<Item = VersionSpan> + '_ {
        self.impls.iter().map(|(span, _)| *span)
    }

    /// The implementation for `version`.
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_gate`]) naming the operation, the
    /// version and the spans it is supported at, when no span holds
    /// `version`.
    pub fn select(&self, version: Version) -> Result<&T, Error> {
        self.impls
            .iter()
            .find(|(span, _)| span.contains(version))
            .map(|(_, f)| f)
            .ok_or_else(|| {
                Error::gate(format!(
                    "{} is not available at API version {version}; it is supported by API versions {}",
                    self.name,
                    list_spans(self.spans())
                ))
            })
    }
}

impl<T> fmt::Debug for Versioned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Versioned")
            .field("name", &self.name)
            .field("spans", &self.spans().collect::<Vec<_>>())
            .finish()
    }
}

/// Builds a [`Versioned`]; the first error (a bad version, overlapping
/// spans) is returned by [`VersionedBuilder::build`].
#[must_use]
pub struct VersionedBuilder<T> {
    name: String,
    impls: Vec<(VersionSpan, T)>,
    error: Option<Error>,
}

impl<T> VersionedBuilder<T> {
    /// The implementation for a span.
    pub fn span(mut self, span: VersionSpan, implementation: T) -> Self {
        self.impls.push((span, implementation));
        self
    }

    /// The implementation from `start` to the newest version.
    pub fn since(mut self, start: impl IntoVersion, implementation: T) -> Self {
        match start.into_version() {
            Ok(start) => self.span(VersionSpan::since(start), implementation),
            Err(e) => {
                self.record(Error::builder_with_source(
                    format!("{}: invalid start version", self.name),
                    e,
                ));
                self
            }
        }
    }

    /// The implementation from `start` to `end`, both included.
    pub fn between(
        mut self,
        start: impl IntoVersion,
        end: impl IntoVersion,
        implementation: T,
    ) -> Self {
        let span = match (start.into_version(), end.into_version()) {
            (Ok(start), Ok(end)) => VersionSpan::between(start, end)
                .map_err(|e| Error::builder_with_source(format!("{}: invalid span", self.name), e)),
            (Err(e), _) | (_, Err(e)) => Err(Error::builder_with_source(
                format!("{}: invalid version", self.name),
                e,
            )),
        };
        match span {
            Ok(span) => self.span(span, implementation),
            Err(e) => {
                self.record(e);
                self
            }
        }
    }

    fn record(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    /// Checks the spans and builds.
    ///
    /// # Errors
    ///
    /// Returns an error ([`Error::is_builder`]) for the first invalid
    /// version given, for an operation without any implementation, or when
    /// two spans overlap (naming both).
    pub fn build(self) -> Result<Versioned<T>, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        if self.impls.is_empty() {
            return Err(Error::builder(format!(
                "{} has no implementation for any version",
                self.name
            )));
        }
        for (i, (a, _)) in self.impls.iter().enumerate() {
            if let Some((b, _)) = self.impls[i + 1..].iter().find(|(b, _)| a.overlaps(*b)) {
                return Err(Error::builder(format!(
                    "{}: the implementations for {a} and {b} overlap",
                    self.name
                )));
            }
        }
        Ok(Versioned {
            name: self.name,
            impls: self.impls,
        })
    }
}

impl<T> fmt::Debug for VersionedBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VersionedBuilder")
            .field("name", &self.name)
            .field(
                "spans",
                &self.impls.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            )
            .field("error", &self.error)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &'static str) -> Version {
        Version::from_static(s)
    }

    #[test]
    fn spans() {
        let since = VersionSpan::from_static("1.14 - latest");
        assert_eq!(since.to_string(), "1.14 - latest");
        assert_eq!(
            help_suffix(since),
            "(supported by API versions 1.14 - latest)"
        );
        assert!(since.contains(v("1.14")) && since.contains(v("9.0")));
        assert!(!since.contains(v("1.13")));
        let between = VersionSpan::from_static("1.0 - 1.4");
        assert_eq!(between.to_string(), "1.0 - 1.4");
        assert!(between.contains(v("1.4")) && !between.contains(v("1.5")));
        assert!(!between.overlaps(VersionSpan::from_static("1.5 - latest")));
        assert!(between.overlaps(VersionSpan::from_static("1.4 - latest")));
        assert!(VersionSpan::between(v("1.5"), v("1.4")).is_err());
        assert_eq!(format!("{between:?}"), "VersionSpan(1.0 - 1.4)");
    }

    #[test]
    fn selects_by_version_with_gaps() {
        let op = Versioned::builder("list things")
            .between("1.0", "1.4", 'a')
            .between("1.10", "1.19", 'b')
            .since("1.20", 'c')
            .build()
            .unwrap();
        assert_eq!(op.select(v("1.0")).ok(), Some(&'a'));
        assert_eq!(op.select(v("1.4")).ok(), Some(&'a'));
        assert_eq!(op.select(v("1.10")).ok(), Some(&'b'));
        assert_eq!(op.select(v("1.99")).ok(), Some(&'c'));
        let err = op.select(v("1.7")).unwrap_err();
        assert!(err.is_gate());
        assert_eq!(
            err.to_string(),
            "list things is not available at API version 1.7; it is supported by API versions \
             1.0 - 1.4, 1.10 - 1.19, 1.20 - latest"
        );
    }

    #[test]
    fn builder_errors_come_out_of_build() {
        let err = Versioned::builder("op")
            .since("1.x", 1)
            .since("1.0", 2)
            .build()
            .unwrap_err();
        assert!(err.is_builder());
        assert_eq!(
            err.to_string(),
            "invalid configuration: op: invalid start version"
        );
        assert!(std::error::Error::source(&err).is_some());

        let err = Versioned::builder("op")
            .between("1.5", "1.4", 1)
            .build()
            .unwrap_err();
        assert!(err.is_builder(), "{err}");

        let err = Versioned::builder("op")
            .between("1.0", "1.5", 1)
            .since("1.5", 2)
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration: op: the implementations for 1.0 - 1.5 and 1.5 - latest overlap"
        );
        let err = Versioned::<u8>::builder("op").build().unwrap_err();
        assert!(err.to_string().contains("no implementation"), "{err}");
    }

    #[test]
    fn gate_messages() {
        let err = check_span(
            "option --in-tree",
            VersionSpan::from_static("1.14 - latest"),
            v("1.10"),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "option --in-tree is supported by API versions 1.14 - latest; the version in use is 1.10"
        );
        assert!(check_span("x", VersionSpan::from_static("1.14 - latest"), v("1.14")).is_ok());
    }
}
