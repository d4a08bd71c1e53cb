//! JSON Schema validation that fails the way Python's `jsonschema` 4.x
//! does, and JSON parsing that fails the way Python's `json` module does,
//! word for word.
//!
//! OpenStack services written in Python (Nova, Ironic, Cinder, Placement)
//! check request bodies with `jsonschema.validate` and answer 400 with
//! `str(ValidationError)` in the body; a malformed body gets the text of
//! the `ValueError` raised by `json.loads`. Their clients and test suites
//! (gabbi files, tempest) read those texts. A Rust service that takes the
//! place of one of them has to say exactly the same: this crate reproduces
//!
//! - [`PythonSchema`]: `jsonschema.validate(instance, schema,
//!   format_checker=...)`, the same error chosen among several
//!   (`best_match`) and its text, `str(ValidationError)`, with Python's
//!   `repr` and `pprint` of the schema and the instance in it;
//! - [`json::decode_error`]: the text of the error `json.loads` raises
//!   for a malformed document (`Expecting value: line 1 column 1 (char
//!   0)`), and of `bytes.decode('utf-8')` for one that is not UTF-8.
//!
//! A schema is compiled once into a tree (one node per subschema, one
//! validator per keyword, in the order the schema lists them) and the tree
//! is walked for each instance. Schemas are read as draft 2020-12 (what
//! `jsonschema.validate` picks for a schema without `$schema`); `$ref`,
//! `$dynamicRef` and the `unevaluated*` keywords are refused by
//! [`PythonSchema::new`] with an [`InvalidSchema`], and keywords Python
//! ignores are ignored.
//!
//! ```
//! use jsonschema_python_messages::PythonSchema;
//! use serde_json::json;
//!
//! let schema = PythonSchema::new(&json!({
//!     "type": "object",
//!     "properties": {"name": {"type": "string", "maxLength": 8}},
//!     "required": ["name"],
//!     "additionalProperties": false,
//! }))?;
//! assert!(schema.validate(&json!({"name": "a"})).is_ok());
//! let error = schema.validate(&json!({"nom": "a"})).unwrap_err();
//! assert_eq!(error.message(), "'name' is a required property");
//! assert_eq!(
//!     error.to_string(),
//!     "'name' is a required property\n\n\
//!      Failed validating 'required' in schema:\n    \
//!      {'type': 'object',\n     \
//!      'properties': {'name': {'type': 'string', 'maxLength': 8}},\n     \
//!      'required': ['name'],\n     \
//!      'additionalProperties': False}\n\n\
//!      On instance:\n    \
//!      {'nom': 'a'}"
//! );
//! # Ok::<(), jsonschema_python_messages::InvalidSchema>(())
//! ```

mod error;
mod failure;
mod format_checker;
pub mod json;
mod keywords;
mod node;
mod regex;
mod repr;
mod schema;
mod value;

pub use self::error::{InvalidSchema, PathItem, PythonSchemaError};
pub use self::format_checker::FormatChecker;
pub use self::schema::PythonSchema;
