//! The errors: an instance refused ([`PythonSchemaError`], worded as
//! Python's `str(ValidationError)`), and a schema refused when compiled
//! ([`InvalidSchema`]).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use crate::repr::{pformat, repr_str};

/// One step of a path into a schema or an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathItem {
    /// An object member.
    Key(String),
    /// An array index.
    Index(usize),
}

impl PathItem {
    fn repr(&self) -> String {
        match self {
            PathItem::Key(k) => repr_str(k),
            PathItem::Index(i) => i.to_string(),
        }
    }
}

impl PartialOrd for PathItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PathItem {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathItem::Key(a), PathItem::Key(b)) => a.cmp(b),
            (PathItem::Index(a), PathItem::Index(b)) => a.cmp(b),
            (PathItem::Index(_), PathItem::Key(_)) => Ordering::Less,
            (PathItem::Key(_), PathItem::Index(_)) => Ordering::Greater,
        }
    }
}

/// `container[index][index]...` as `jsonschema` writes paths.
pub(crate) fn format_as_index(container: &str, indices: &[PathItem]) -> String {
    let mut out = container.to_owned();
    for item in indices {
        out.push('[');
        out.push_str(&item.repr());
        out.push(']');
    }
    out
}

/// A path from the root, and where the part relative to the `anyOf` or
/// `oneOf` failures `best_match` descended through begins (0 when it
/// descended through none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ErrorPath {
    items: Vec<PathItem>,
    relative_from: usize,
}

impl ErrorPath {
    /// `relative` under `above`.
    pub(crate) fn new(
        mut above: Vec<PathItem>,
        relative: impl IntoIterator<Item = PathItem>,
    ) -> Self {
        let relative_from = above.len();
        above.extend(relative);
        ErrorPath {
            items: above,
            relative_from,
        }
    }

    fn relative(&self) -> &[PathItem] {
        &self.items[self.relative_from..]
    }
}

/// Python's refusal of an instance: `str()` of it is the text of
/// `jsonschema.ValidationError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonSchemaError(Box<ErrorParts>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct ErrorParts {
    message: String,
    keyword: Option<String>,
    schema_path: ErrorPath,
    path: ErrorPath,
    schema: Value,
    instance: Value,
    /// `str()` of the error, written when the error is made: a reader of
    /// a deeply nested body makes it on a stack sized for that depth.
    text: String,
}

impl PythonSchemaError {
    /// The error with these parts, its text written now.
    pub(crate) fn new(
        message: String,
        keyword: Option<&str>,
        schema_path: ErrorPath,
        path: ErrorPath,
        schema: &Value,
        instance: Value,
    ) -> Self {
        let text = error_text(
            &message,
            keyword,
            schema_path.relative(),
            path.relative(),
            schema,
            &instance,
        );
        PythonSchemaError(Box::new(ErrorParts {
            message,
            keyword: keyword.map(str::to_owned),
            schema_path,
            path,
            schema: schema.clone(),
            instance,
            text,
        }))
    }

    /// The message alone (`error.message`): `'name' is a required property`.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The keyword that failed (`error.validator`), `None` for a `false`
    /// schema.
    #[must_use]
    pub fn keyword(&self) -> Option<&str> {
        self.0.keyword.as_deref()
    }

    /// Where in the instance (`error.relative_path`): for an error found
    /// inside an `anyOf` or `oneOf`, relative to the part of the instance
    /// that keyword checked, as the error's text writes it.
    #[must_use]
    pub fn instance_path(&self) -> &[PathItem] {
        self.0.path.relative()
    }

    /// Where in the schema, keyword included (`error.relative_schema_path`):
    /// for an error found inside an `anyOf` or `oneOf`, relative to that
    /// keyword's list, as the error's text writes it.
    #[must_use]
    pub fn schema_path(&self) -> &[PathItem] {
        self.0.schema_path.relative()
    }

    /// Where in the instance, from its root (`error.absolute_path`): the
    /// field to name to a user.
    #[must_use]
    pub fn absolute_instance_path(&self) -> &[PathItem] {
        &self.0.path.items
    }

    /// Where in the schema, from its root, keyword included
    /// (`error.absolute_schema_path`).
    #[must_use]
    pub fn absolute_schema_path(&self) -> &[PathItem] {
        &self.0.schema_path.items
    }

    /// The (sub)schema holding the keyword.
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.0.schema
    }

    /// The part of the instance that failed.
    #[must_use]
    pub fn instance(&self) -> &Value {
        &self.0.instance
    }
}

impl fmt::Display for PythonSchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.text)
    }
}

/// `str(ValidationError)`.
fn error_text(
    message: &str,
    keyword: Option<&str>,
    schema_path: &[PathItem],
    path: &[PathItem],
    schema: &Value,
    instance: &Value,
) -> String {
    let schema_path = format_as_index(
        "schema",
        &schema_path[..schema_path.len().saturating_sub(1)],
    );
    let instance_path = format_as_index("instance", path);
    let keyword = keyword.map_or("None".to_owned(), repr_str);
    let indent = |text: String| text.replace('\n', "\n    ");
    format!(
        "{message}\n\nFailed validating {keyword} in {schema_path}:\n    {}\n\nOn {instance_path}:\n    {}",
        indent(pformat(schema, 72)),
        indent(pformat(instance, 72)),
    )
}

impl std::error::Error for PythonSchemaError {}

/// A schema [`PythonSchema::new`](crate::PythonSchema::new) refuses: one
/// Python's `check_schema` would refuse, or one that uses a keyword this
/// crate does not implement. Displayed as where, then what:
/// `schema['properties']['name']['type']: not a type name or a list of
/// type names`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidSchema {
    location: Vec<PathItem>,
    reason: Reason,
}

/// What is wrong with a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// A subschema that is neither an object nor a boolean (its repr).
    NotASchema(String),
    /// `$ref` and the other keywords this crate does not implement.
    Unsupported(String),
    /// A keyword's value is not of the shape it needs (`a string`).
    NotA(&'static str),
    /// A pattern that does not compile, with the regex engine's reason.
    Pattern { pattern: String, error: String },
}

impl InvalidSchema {
    pub(crate) fn new(location: Vec<PathItem>, reason: Reason) -> Self {
        InvalidSchema { location, reason }
    }

    /// Where in the schema: the path to the keyword whose value is wrong,
    /// or to the subschema that is not a schema.
    #[must_use]
    pub fn location(&self) -> &[PathItem] {
        &self.location
    }
}

impl fmt::Display for InvalidSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", format_as_index("schema", &self.location))?;
        match &self.reason {
            Reason::NotASchema(repr) => write!(f, "{repr} is not of type 'object', 'boolean'"),
            Reason::Unsupported(keyword) => write!(f, "the keyword {keyword} is not supported"),
            Reason::NotA(what) => write!(f, "not {what}"),
            Reason::Pattern { pattern, error } => write!(
                f,
                "the pattern {} does not compile: {error}",
                repr_str(pattern)
            ),
        }
    }
}

impl std::error::Error for InvalidSchema {}
