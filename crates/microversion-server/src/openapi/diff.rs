//! What one version of an API changed: the differences between the
//! documents of two versions, operation by operation, and the check that
//! the history's changes and those differences agree.

use std::fmt;

use http::{Method, StatusCode};
use microversion::Version;
use serde_json::Value;

use super::{ApiDescription, OpenApiError, Operation, ResponseDoc, contains};
use crate::deprecation::Deprecation;
use crate::history::HistoryEntry;

/// One thing an operation does differently at one version than at
/// another ([`ApiDescription::differences`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Difference {
    /// The operation's method.
    pub method: Method,
    /// The operation's path pattern.
    pub path: String,
    /// What differs: `added`, `removed`, `request body changed`,
    /// `200 response added`, ...
    pub what: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.method, self.path, self.what)
    }
}

/// An operation as the document of one version shows it.
struct View<'a> {
    query: Option<&'a Value>,
    body: Option<&'a Value>,
    responses: Vec<(StatusCode, &'a ResponseDoc)>,
    errors: Vec<(StatusCode, &'a str)>,
    deprecated: bool,
}

impl<'a> View<'a> {
    fn of(op: &'a Operation, version: Version) -> Option<View<'a>> {
        if !contains(op.life, version) {
            return None;
        }
        let piece = |pieces: &'a [(super::Closed, Value)]| {
            pieces
                .iter()
                .find(|(range, _)| contains(*range, version))
                .map(|(_, schema)| schema)
        };
        let mut responses: Vec<_> = op
            .responses
            .iter()
            .filter(|(range, _, _)| contains(*range, version))
            .map(|(_, status, doc)| (*status, doc))
            .collect();
        responses.sort_by_key(|(status, _)| *status);
        let mut errors: Vec<_> = op
            .errors
            .iter()
            .filter(|(range, _, _)| contains(*range, version))
            .map(|(_, status, text)| (*status, text.as_str()))
            .collect();
        errors.sort_by_key(|(status, _)| *status);
        Some(View {
            query: piece(&op.query),
            body: piece(&op.body),
            responses,
            errors,
            deprecated: Deprecation::of(&op.deprecations, version).is_some(),
        })
    }
}

/// What differs between `old` and `new` in one kind of answer, by status.
fn by_status<T: PartialEq>(
    kind: &str,
    old: &[(StatusCode, T)],
    new: &[(StatusCode, T)],
    out: &mut Vec<String>,
) {
    fn find<T>(list: &[(StatusCode, T)], status: StatusCode) -> Option<&T> {
        list.iter()
            .find(|(s, _)| *s == status)
            .map(|(_, item)| item)
    }
    let mut statuses: Vec<StatusCode> = old.iter().chain(new).map(|(s, _)| *s).collect();
    statuses.sort();
    statuses.dedup();
    for status in statuses {
        let status_text = status.as_u16();
        match (find(old, status), find(new, status)) {
            (None, Some(_)) => out.push(format!("{status_text} {kind} added")),
            (Some(_), None) => out.push(format!("{status_text} {kind} removed")),
            (Some(a), Some(b)) if a != b => out.push(format!("{status_text} {kind} changed")),
            _ => {}
        }
    }
}

/// What differs between two optional schemas, named `what`.
fn schema(what: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<String>) {
    match (old, new) {
        (None, Some(_)) => out.push(format!("{what} added")),
        (Some(_), None) => out.push(format!("{what} removed")),
        (Some(a), Some(b)) if a != b => out.push(format!("{what} changed")),
        _ => {}
    }
}

impl ApiDescription {
    /// What each operation does differently at `to` than at `from`: the
    /// operations added and removed, and of the others each query, request
    /// body, response (by status), error and deprecation that differs, in
    /// the order of the documents' paths.
    ///
    /// ```
    /// use http::StatusCode;
    /// use microversion::{Change, Version, VersionRange};
    /// use microversion_server::openapi::{ApiDescription, OperationDoc, ResponseDoc};
    /// use microversion_server::{Microversions, VersionedRouter};
    /// use serde_json::json;
    ///
    /// const INITIAL: Change = Change::new("1.0", "Initial version.");
    /// const GADGETS: Change = Change::new("1.1", "Adds GET /gadgets.");
    ///
    /// let api = Microversions::builder("widgets", VersionRange::from_static("1.0", "1.1")).build()?;
    /// let router = VersionedRouter::<()>::new()
    ///     .get("/widgets", INITIAL.since(), || async { "[]" })
    ///     .get("/gadgets", GADGETS.since(), || async { "[]" });
    /// let list = || ResponseDoc::json("The list", json!({"type": "array"}));
    /// let description = ApiDescription::builder(&api)
    ///     .routes(&router)
    ///     .operation(OperationDoc::get("/widgets").response(INITIAL.since(), StatusCode::OK, list()))
    ///     .operation(OperationDoc::get("/gadgets").response(GADGETS.since(), StatusCode::OK, list()))
    ///     .build()?;
    /// let changed: Vec<String> = description
    ///     .differences(Version::new(1, 0), Version::new(1, 1))?
    ///     .iter()
    ///     .map(ToString::to_string)
    ///     .collect();
    /// assert_eq!(changed, ["GET /gadgets: added"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`OpenApiError::Unsupported`] when either version is outside the
    /// range.
    pub fn differences(&self, from: Version, to: Version) -> Result<Vec<Difference>, OpenApiError> {
        for version in [from, to] {
            if !self.range.contains(version) {
                return Err(OpenApiError::Unsupported {
                    version,
                    range: self.range,
                });
            }
        }
        let mut out = Vec::new();
        for op in &self.operations {
            let mut what = Vec::new();
            match (View::of(op, from), View::of(op, to)) {
                (None, Some(_)) => what.push("added".to_owned()),
                (Some(_), None) => what.push("removed".to_owned()),
                (Some(old), Some(new)) => {
                    schema("query parameters", old.query, new.query, &mut what);
                    schema("request body", old.body, new.body, &mut what);
                    by_status("response", &old.responses, &new.responses, &mut what);
                    by_status("error", &old.errors, &new.errors, &mut what);
                    match (old.deprecated, new.deprecated) {
                        (false, true) => what.push("deprecated".to_owned()),
                        (true, false) => what.push("no longer deprecated".to_owned()),
                        _ => {}
                    }
                }
                (None, None) => {}
            }
            out.extend(what.into_iter().map(|what| Difference {
                method: op.method.clone(),
                path: op.path.clone(),
                what,
            }));
        }
        Ok(out)
    }

    /// The differences `version` makes, against the version before it;
    /// none for the range's first version or a major's first.
    pub(crate) fn made_by(&self, version: Version) -> Vec<Difference> {
        match version.previous_minor() {
            Some(before) if self.range.contains(before) => {
                self.differences(before, version).unwrap_or_default()
            }
            _ => Vec::new(),
        }
    }
}

/// Why a history does not fit its description
/// ([`OpenApiError::History`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryProblem {
    /// The change's version is outside the range the code implements.
    OutsideRange(microversion::VersionRange),
    /// The version has no change.
    NoChange,
    /// The change (described so) makes no difference in the documents
    /// and is not marked as a change of behaviour.
    NoDifference(String),
}

/// The problem of the first version whose change does not fit `description`.
pub(super) fn check_history(
    description: &ApiDescription,
    code_range: microversion::VersionRange,
    history: &[HistoryEntry],
) -> Result<(), OpenApiError> {
    let problem = |version, problem| OpenApiError::History { version, problem };
    if let Some(outside) = history.iter().find(|e| !code_range.contains(e.version)) {
        return Err(problem(
            outside.version,
            HistoryProblem::OutsideRange(code_range),
        ));
    }
    let (Some(first), Some(last)) = (history.first(), history.last()) else {
        return Err(problem(code_range.min(), HistoryProblem::NoChange));
    };
    if first.version > code_range.min() {
        return Err(problem(code_range.min(), HistoryProblem::NoChange));
    }
    if last.version < code_range.max() {
        let missing = last.version.next_minor().unwrap_or(code_range.max());
        return Err(problem(missing, HistoryProblem::NoChange));
    }
    for entry in history {
        if entry.behaviour
            || !description.range.contains(entry.version)
            || entry
                .version
                .previous_minor()
                .is_none_or(|before| !description.range.contains(before))
        {
            continue;
        }
        if description.made_by(entry.version).is_empty() {
            return Err(problem(
                entry.version,
                HistoryProblem::NoDifference(entry.description.clone()),
            ));
        }
    }
    Ok(())
}
