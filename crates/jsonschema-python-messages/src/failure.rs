//! Failures met while walking an instance through the tree, and the one
//! Python reports among them (`jsonschema.exceptions.best_match`).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::VecDeque;

use serde_json::Value;

use crate::error::{ErrorPath, PathItem, PythonSchemaError};
use crate::node::Node;

/// A failure while validating; `'s` is the compiled schema's lifetime,
/// `'i` the instance's.
pub(crate) struct Failure<'s, 'i> {
    message: String,
    /// The keyword that failed, `None` for a `false` schema.
    pub(crate) keyword: Option<&'s str>,
    /// Where in the instance, relative to where the failure is seen.
    pub(crate) path: VecDeque<PathItem>,
    /// Where in the schema, keyword included, relative likewise.
    pub(crate) schema_path: VecDeque<PathItem>,
    /// The (sub)schema holding the keyword.
    node: &'s Node,
    instance: Cow<'i, Value>,
    /// The failures under an `anyOf` or `oneOf` that failed.
    pub(crate) context: Vec<Failure<'s, 'i>>,
}

impl<'s, 'i> Failure<'s, 'i> {
    pub(crate) fn new(
        keyword: Option<&'s str>,
        node: &'s Node,
        instance: &'i Value,
        message: String,
    ) -> Self {
        Failure {
            message,
            keyword,
            path: VecDeque::new(),
            schema_path: VecDeque::new(),
            node,
            instance: Cow::Borrowed(instance),
            context: Vec::new(),
        }
    }

    /// The failure, holding its own copy of the instance.
    pub(crate) fn into_owned<'j>(self) -> Failure<'s, 'j> {
        Failure {
            message: self.message,
            keyword: self.keyword,
            path: self.path,
            schema_path: self.schema_path,
            node: self.node,
            instance: Cow::Owned(self.instance.into_owned()),
            context: self.context.into_iter().map(Failure::into_owned).collect(),
        }
    }

    /// `jsonschema.exceptions.relevance(error)`, to be maximised.
    fn relevance(&self) -> Relevance<'_> {
        Relevance {
            depth: -isize::try_from(self.path.len()).unwrap_or(isize::MAX),
            path: &self.path,
            not_weak: !matches!(self.keyword, Some("anyOf" | "oneOf")),
            not_matches_type: !self.node.matches_type(&self.instance),
        }
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Relevance<'a> {
    depth: isize,
    path: &'a VecDeque<PathItem>,
    not_weak: bool,
    not_matches_type: bool,
}

/// The failure `best_match` chose, with the paths of the failures it
/// descended through (a failure in a context has paths relative to the
/// `anyOf` or `oneOf` holding it, as in Python).
pub(crate) struct Best<'s, 'i> {
    failure: Failure<'s, 'i>,
    path_above: Vec<PathItem>,
    schema_path_above: Vec<PathItem>,
}

impl Best<'_, '_> {
    /// The error, worded; `root` is the schema the tree was compiled from.
    pub(crate) fn into_public(self, root: &Value) -> PythonSchemaError {
        let Best {
            failure,
            path_above,
            schema_path_above,
        } = self;
        PythonSchemaError::new(
            failure.message,
            failure.keyword,
            ErrorPath::new(schema_path_above, failure.schema_path),
            ErrorPath::new(path_above, failure.path),
            failure.node.schema(root),
            failure.instance.into_owned(),
        )
    }
}

/// `jsonschema.exceptions.best_match`: the most relevant error (the first
/// of equals), then into its context while one error there is the least
/// relevant alone.
pub(crate) fn best_match<'s, 'i>(errors: Vec<Failure<'s, 'i>>) -> Option<Best<'s, 'i>> {
    let mut best = first_max(errors)?;
    let mut path_above = Vec::new();
    let mut schema_path_above = Vec::new();
    while !best.context.is_empty() {
        let context = std::mem::take(&mut best.context);
        let mut smallest: Option<usize> = None;
        let mut tie = false;
        for (i, e) in context.iter().enumerate() {
            match smallest {
                None => smallest = Some(i),
                Some(s) => match e.relevance().cmp(&context[s].relevance()) {
                    Ordering::Less => {
                        smallest = Some(i);
                        tie = false;
                    }
                    Ordering::Equal => tie = true,
                    Ordering::Greater => {}
                },
            }
        }
        if tie {
            best.context = context;
            break;
        }
        path_above.extend(best.path.drain(..));
        schema_path_above.extend(best.schema_path.drain(..));
        best = context.into_iter().nth(smallest?)?;
    }
    Some(Best {
        failure: best,
        path_above,
        schema_path_above,
    })
}

/// Python's `max(errors, key=relevance)`: the first of the maximal ones.
fn first_max<'s, 'i>(errors: Vec<Failure<'s, 'i>>) -> Option<Failure<'s, 'i>> {
    let mut best: Option<usize> = None;
    for (i, e) in errors.iter().enumerate() {
        if best.is_none_or(|b| e.relevance() > errors[b].relevance()) {
            best = Some(i);
        }
    }
    errors.into_iter().nth(best?)
}
