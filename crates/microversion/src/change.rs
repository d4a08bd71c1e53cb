//! [`Change`]: one microversion as a value, named by what it changes.

use crate::span::VersionSpan;
use crate::version::{Version, parse};

/// One microversion: its version and what it changed, in one line.
///
/// A service declares each of its microversions once, as a `const`, and
/// names it wherever the version matters: the spans of routes, body
/// schemas and responses come from its changes instead of version
/// literals, its history is the list of them, and its documents say at
/// each version what that version changed.
///
/// ```
/// use microversion::{Change, VersionSpan};
///
/// const INITIAL: Change = Change::new("1.0", "Initial version.");
/// const COLOR: Change = Change::new("1.1", "Widgets have a color.");
/// const QUOTA: Change = Change::new("1.2", "Creating a widget past the quota answers 409.").behaviour();
///
/// assert_eq!(COLOR.since(), VersionSpan::from_static("1.1 - latest"));
/// assert_eq!(INITIAL.until(COLOR), VersionSpan::from_static("1.0 - 1.0"));
/// assert!(QUOTA.is_behaviour());
/// ```
///
/// A malformed version or an empty description fails the build where the
/// change is a `const`:
///
/// ```compile_fail
/// const BAD: microversion::Change = microversion::Change::new("1.x", "Oops.");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Change {
    version: Version,
    description: &'static str,
    behaviour: bool,
}

impl Change {
    /// The change that `version` makes, described in one line.
    ///
    /// # Panics
    ///
    /// When `version` is not `X.Y` or `description` is blank: a
    /// programmer error in a literal. In a `const` the build fails instead.
    #[must_use]
    #[track_caller]
    pub const fn new(version: &'static str, description: &'static str) -> Self {
        // A const panic cannot format; the caller's location names it.
        let Ok(version) = parse(version.as_bytes()) else {
            panic!("invalid version literal in a Change: expected \"X.Y\"")
        };
        assert!(
            !description.trim_ascii().is_empty(),
            "a Change needs a one-line description"
        );
        Change {
            version,
            description,
            behaviour: false,
        }
    }

    /// Marks the change as one of behaviour: its effect is inside a
    /// handler (a new error, a different search), so the documents of its
    /// version and the one before it may be the same.
    #[must_use]
    pub const fn behaviour(self) -> Self {
        Change {
            behaviour: true,
            ..self
        }
    }

    /// The version.
    #[must_use]
    pub const fn version(self) -> Version {
        self.version
    }

    /// What it changed.
    #[must_use]
    pub const fn description(self) -> &'static str {
        self.description
    }

    /// Whether it is a change of behaviour ([`Change::behaviour`]).
    #[must_use]
    pub const fn is_behaviour(self) -> bool {
        self.behaviour
    }

    /// From this change on: `X.Y - latest`.
    #[must_use]
    pub const fn since(self) -> VersionSpan {
        VersionSpan::since(self.version)
    }

    /// From this change until `next` replaces it: this version to the one
    /// before `next`'s.
    ///
    /// # Panics
    ///
    /// When `next` is not later than this change in the same major
    /// version: a programmer error in the service's declarations, which
    /// fails the build in a `const`.
    #[must_use]
    #[track_caller]
    pub const fn until(self, next: Change) -> VersionSpan {
        let last = match next.version.previous_minor() {
            Some(last) if next.version.major() == self.version.major() => last,
            _ => panic!("Change::until: the next change must come later in the same major version"),
        };
        match VersionSpan::between(self.version, last) {
            Ok(span) => span,
            Err(_) => {
                panic!("Change::until: the next change must come later in the same major version")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Change = Change::new("1.2", "Adds a.");
    const B: Change = Change::new("1.5", "Adds b.");

    #[test]
    fn spans_from_changes() {
        assert_eq!(A.since(), VersionSpan::from_static("1.2 - latest"));
        assert_eq!(A.until(B), VersionSpan::from_static("1.2 - 1.4"));
        assert_eq!(A.version(), Version::new(1, 2));
        assert_eq!(A.description(), "Adds a.");
        assert!(!A.is_behaviour());
        assert!(A.behaviour().is_behaviour());
    }

    #[test]
    #[should_panic(expected = "the next change must come later")]
    fn until_an_earlier_change_is_refused() {
        let _ = B.until(A);
    }

    #[test]
    #[should_panic(expected = "a Change needs a one-line description")]
    fn a_blank_description_is_refused() {
        let _ = Change::new("1.0", "  ");
    }
}
