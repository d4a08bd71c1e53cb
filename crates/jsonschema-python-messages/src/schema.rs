//! [`PythonSchema`]: a schema compiled once, then applied to instances.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{InvalidSchema, PythonSchemaError};
use crate::failure::best_match;
use crate::format_checker::FormatChecker;
use crate::node::{Compiler, Cx, Location, Node};

/// A compiled schema that validates as Python's `jsonschema` 4.x does
/// under `jsonschema.validate`: the same error chosen among several
/// (`best_match`), and its text (`str(ValidationError)`).
///
/// The schema is read as draft 2020-12. Keywords apply in the order the
/// schema lists them, as in Python, and that order decides which error is
/// reported: write a schema in the order of the Python source it
/// reproduces. `$ref`, `$dynamicRef` and `unevaluated*` are refused when
/// compiling; keywords Python ignores are ignored.
///
/// Cloning is cheap: clones share the compiled tree.
#[derive(Clone)]
pub struct PythonSchema {
    schema: Arc<Value>,
    tree: Arc<Node>,
    formats: FormatChecker,
}

impl fmt::Debug for PythonSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PythonSchema")
            .field("schema", &self.schema)
            .field("formats", &self.formats)
            .finish()
    }
}

impl PythonSchema {
    /// Compiles `schema`, with the default [`FormatChecker`].
    ///
    /// # Errors
    ///
    /// [`InvalidSchema`], saying where and what, when the schema is not a
    /// valid draft 2020-12 schema (Python's `check_schema` would refuse
    /// it), a pattern does not compile, or it uses `$ref`, `$dynamicRef`
    /// or an `unevaluated*` keyword, which this crate does not implement.
    pub fn new(schema: &Value) -> Result<Self, InvalidSchema> {
        let tree = Compiler::default().node(schema, Location::default())?;
        Ok(PythonSchema {
            schema: Arc::new(schema.clone()),
            tree: Arc::new(tree),
            formats: FormatChecker::default(),
        })
    }

    /// Uses `formats` for the `format` keyword.
    #[must_use]
    pub fn with_format_checker(mut self, formats: FormatChecker) -> Self {
        self.formats = formats;
        self
    }

    /// The schema.
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Whether `instance` is valid.
    #[must_use]
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.tree.is_valid(self.cx(), instance)
    }

    /// Validates `instance` as `jsonschema.validate` does.
    ///
    /// # Errors
    ///
    /// The error `jsonschema.validate` would raise: the best match
    /// (`jsonschema.exceptions.best_match`) among all the failures.
    pub fn validate(&self, instance: &Value) -> Result<(), PythonSchemaError> {
        let failures = self.tree.descend(self.cx(), instance, None, None);
        match best_match(failures) {
            None => Ok(()),
            Some(best) => Err(best.into_public(&self.schema)),
        }
    }

    fn cx(&self) -> Cx<'_> {
        Cx {
            root: &self.schema,
            formats: &self.formats,
        }
    }
}
