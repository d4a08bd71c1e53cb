//! Versioned request bodies: one schema per version range for one
//! operation, checked for overlaps when built (docs/wire.md 16).
//!
//! A schema is a serde type (deserialized, then converted into the
//! handler's type) or, with the `json-schema` feature, a JSON Schema
//! document. A body that fails gets 400 with an error naming the field and
//! the reason.
//!
//! Services that reproduce a Python OpenStack service word those errors as
//! it does with [`MessageStyle::Python`] (`BodySchemasBuilder::python_messages`):
//! `Malformed JSON: Expecting value: line 1 column 1 (char 0)` and
//! `JSON does not validate: 'name' is a required property\n\nFailed
//! validating 'required' in schema: ...`, through the
//! `jsonschema-python-messages` crate.
//!
//! Whatever the schema, a body nested deeper than [`MAX_JSON_DEPTH`]
//! (1000) levels of arrays and objects is refused with 400 (`Malformed
//! JSON: Nested too deeply (at most 1000 levels of arrays and objects)
//! at: line 1 column 1001 (char 1000)` in Python's style) before any
//! parser that recurses per level reads it, and bodies nested deeper than
//! 100 levels are read on a thread with a stack sized for the bound, so
//! that no body can overflow the stack of the service's threads.
//!
//! ```
//! use axum::routing::post;
//! use axum::{Extension, Router};
//! use microversion_server::schema::{BodySchemas, VersionedJson};
//! use microversion::VersionSpan;
//! use serde::Deserialize;
//!
//! /// What the handler works with.
//! #[derive(Debug)]
//! struct Create { name: String, parent: Option<String> }
//!
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct CreateV1 { name: String }
//! impl From<CreateV1> for Create {
//!     fn from(v: CreateV1) -> Self { Create { name: v.name, parent: None } }
//! }
//!
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct CreateV14 { name: String, parent: Option<String> }
//! impl From<CreateV14> for Create {
//!     fn from(v: CreateV14) -> Self { Create { name: v.name, parent: v.parent } }
//! }
//!
//! async fn create(VersionedJson(body): VersionedJson<Create>) -> String {
//!     format!("{body:?}")
//! }
//!
//! let schemas = BodySchemas::<Create>::builder("POST /resource_providers")
//!     .serde::<CreateV1>(VersionSpan::from_static("1.0 - 1.13"))
//!     .serde::<CreateV14>(VersionSpan::from_static("1.14 - latest"))
//!     .build()?;
//! let app: Router = Router::new()
//!     .route("/resource_providers", post(create))
//!     .layer(schemas.extension());
//! # Ok::<(), microversion_server::BuildError>(())
//! ```

use std::fmt;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{FromRequest, Request};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::StatusCode;
use http::header::CONTENT_TYPE;
use microversion::{Version, VersionSpan};
use serde::Deserialize as _;
use serde::de::{DeserializeOwned, IgnoredAny};

use crate::error::{ApiError, BuildError, RouteConflict};
use crate::extract::ServedVersion;
use crate::routing::find_overlap;

mod depth;
pub(crate) mod relax;

pub use self::depth::MAX_JSON_DEPTH;
use self::depth::Nesting;

#[cfg(feature = "json-schema")]
use jsonschema_python_messages::PythonSchema;
/// What [`BodySchemasBuilder::format_checker`] takes and
/// [`BodyError::Schema`] holds, from the `jsonschema-python-messages` crate.
#[cfg(feature = "json-schema")]
pub use jsonschema_python_messages::{FormatChecker, PathItem, PythonSchemaError};

/// Reads a body, given how deeply it nests, how strictly it is read and
/// the request's version.
type Parser<T> =
    Box<dyn Fn(&[u8], Nesting, Strictness, Version) -> Result<T, BodyError> + Send + Sync>;

/// How strictly a body is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strictness {
    /// As its schema says.
    Strict,
    /// Properties the schema does not know are ignored (a request under
    /// the legacy root).
    Relaxed,
}

/// Bodies nesting deeper than this are read on a thread of their own with
/// [`DEEP_BODY_STACK`] of stack: a parser, the validator and the error's
/// text each take stack per level, more than a 2 MiB thread has at
/// [`MAX_JSON_DEPTH`] in a debug build.
const SHALLOW_BODY: usize = 100;

/// The stack of the thread reading a deep body: 16 KiB per level, of which
/// only the pages a read touches are ever mapped in.
const DEEP_BODY_STACK: usize = 16 * 1024 * (MAX_JSON_DEPTH + 1);

/// How JSON Schema failures are worded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageStyle {
    /// The Rust `jsonschema` crate's messages, with the field's path.
    #[default]
    Default,
    /// Python's: `str(jsonschema.ValidationError)` for the error
    /// `jsonschema.validate` raises, and Python's `json` module's words for
    /// malformed bodies (the `jsonschema-python-messages` crate).
    Python,
}

/// A JSON Schema registered on a builder, compiled by `build` in the
/// builder's message style.
#[cfg(feature = "json-schema")]
struct PendingSchema<T> {
    versions: VersionSpan,
    schema: serde_json::Value,
    convert: Convert<T>,
}

/// A body's value made a `T`.
#[cfg(feature = "json-schema")]
type FromValue<T> = Arc<dyn Fn(serde_json::Value) -> Result<T, BodyError> + Send + Sync>;

/// A body read as a `T` at a version.
#[cfg(feature = "json-schema")]
type ReadAt<T> = Arc<dyn Fn(Source<'_>, Version) -> Result<T, BodyError> + Send + Sync>;

/// How a body that is JSON becomes a `T`.
#[cfg(feature = "json-schema")]
enum Convert<T> {
    /// Validated against the schema, then deserialized.
    AfterSchema(FromValue<T>),
    /// Read by its type at the request's version first (whose refusals
    /// name the version's fields), then held to the schema for what the
    /// type does not check (bounds, patterns, formats): from the body's
    /// text, or from its value where the legacy root relaxed it.
    BeforeSchema(ReadAt<T>),
}

/// What a type reads a body from.
#[cfg(feature = "json-schema")]
#[derive(Clone, Copy)]
enum Source<'a> {
    /// The text, whose errors say where.
    Text(&'a [u8]),
    /// The value, with what the legacy root drops dropped.
    Value(&'a serde_json::Value),
}

#[cfg(feature = "json-schema")]
impl<T> Convert<T> {
    /// The body (`text`, read as `value`, relaxed or not) converted at
    /// `version`, `check` run where this order puts it.
    fn run(
        &self,
        text: &[u8],
        value: serde_json::Value,
        strictness: Strictness,
        version: Version,
        check: impl FnOnce(&serde_json::Value) -> Result<(), BodyError>,
    ) -> Result<T, BodyError> {
        match self {
            Convert::AfterSchema(convert) => {
                check(&value)?;
                convert(value)
            }
            Convert::BeforeSchema(convert) => {
                let source = match strictness {
                    Strictness::Strict => Source::Text(text),
                    Strictness::Relaxed => Source::Value(&value),
                };
                let converted = convert(source, version)?;
                check(&value)?;
                Ok(converted)
            }
        }
    }
}

/// A schema of the builder: ready, or a JSON Schema compiled at `build`.
enum Entry<T> {
    Ready(Parser<T>),
    #[cfg(feature = "json-schema")]
    JsonSchema(PendingSchema<T>),
}

/// The schemas of one operation's request body, by version.
pub struct BodySchemas<T> {
    name: String,
    entries: Vec<(VersionSpan, Parser<T>)>,
    /// The JSON Schema of each entry, where one is known (for the
    /// `openapi` generator), in registration order.
    described: Vec<(VersionSpan, Option<Arc<serde_json::Value>>)>,
}

impl<T> fmt::Debug for BodySchemas<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodySchemas")
            .field("name", &self.name)
            .field(
                "versions",
                &self.entries.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<T> BodySchemas<T> {
    /// The operation's name, as given to [`BodySchemas::builder`].
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Each schema's versions with its JSON Schema document, in
    /// registration order: the document given to
    /// [`BodySchemasBuilder::json_schema`] (or derived by
    /// `BodySchemasBuilder::serde_schema`), `None` for a plain
    /// [`BodySchemasBuilder::serde`] type, whose shape is not known.
    pub fn json_schemas(&self) -> impl Iterator<Item = (VersionSpan, Option<&serde_json::Value>)> {
        self.described
            .iter()
            .map(|(versions, schema)| (*versions, schema.as_deref()))
    }
}

impl<T: Send + Sync + 'static> BodySchemas<T> {
    /// Starts the schemas of the operation `name` (used in messages, such
    /// as `PUT /resource_providers/{uuid}`).
    pub fn builder(name: impl Into<String>) -> BodySchemasBuilder<T> {
        BodySchemasBuilder {
            name: name.into(),
            entries: Vec::new(),
            described: Vec::new(),
            error: None,
            style: MessageStyle::Default,
            #[cfg(feature = "json-schema")]
            formats: None,
        }
    }

    /// The versions each schema covers, in registration order.
    #[must_use]
    pub fn versions(&self) -> Vec<VersionSpan> {
        self.entries.iter().map(|(v, _)| *v).collect()
    }

    /// Parses and validates `body` with the schema for `version`.
    ///
    /// # Errors
    ///
    /// Returns a [`BodyError`] (400) naming the field and the reason, or
    /// saying that no schema covers the version (404, as for a route that
    /// does not exist at that version).
    pub fn parse(&self, version: Version, body: &[u8]) -> Result<T, BodyError> {
        self.parse_as(version, body, Strictness::Strict)
    }

    /// As [`parse`](Self::parse), as a request under the legacy root is
    /// read: the body's properties its schema does not know (where it
    /// refuses unknown ones) are ignored rather than refused. Each schema
    /// knows its properties: a JSON Schema's or a `schemars` schema's at
    /// every level, a plain serde struct's at the top level only.
    ///
    /// # Errors
    ///
    /// As [`parse`](Self::parse), for what is left of the body.
    pub fn parse_relaxed(&self, version: Version, body: &[u8]) -> Result<T, BodyError> {
        self.parse_as(version, body, Strictness::Relaxed)
    }

    fn parse_as(
        &self,
        version: Version,
        body: &[u8],
        strictness: Strictness,
    ) -> Result<T, BodyError> {
        let (_, parser) = self
            .entries
            .iter()
            .find(|(v, _)| v.contains(version))
            .ok_or_else(|| BodyError::NoSchema {
                operation: self.name.clone(),
                version,
            })?;
        let nesting = depth::scan(body, MAX_JSON_DEPTH);
        if nesting.deepest <= SHALLOW_BODY {
            return parser(body, nesting, strictness, version);
        }
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("deep-body".into())
                .stack_size(DEEP_BODY_STACK)
                .spawn_scoped(scope, || parser(body, nesting, strictness, version))
                .map_err(|e| BodyError::Unreadable(e.to_string()))?
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// The schemas as a layer that makes them available to
    /// [`VersionedJson`] on the routes it wraps, for a plain axum router.
    /// On a [`VersionedRouter`](crate::VersionedRouter), bind them to
    /// their operation with [`VersionedRouter::body`](crate::VersionedRouter::body)
    /// instead: checked when the router is built, and no two operations
    /// with one body type can take each other's schemas.
    pub fn extension(self) -> Extension<Arc<BodySchemas<T>>> {
        Extension(Arc::new(self))
    }
}

/// [`BodySchemas`] of any body type, as a router holds them for the
/// operation they are bound to.
pub(crate) trait BoundSchemas: Send + Sync {
    /// Makes the schemas the ones [`VersionedJson`] reads one request with.
    fn insert_into(self: Arc<Self>, extensions: &mut http::Extensions);
    /// The versions each schema covers.
    fn spans(&self) -> Vec<VersionSpan>;
    /// The schemas' name.
    #[cfg(feature = "openapi")]
    fn schemas_name(&self) -> &str;
    /// Each schema's versions and JSON Schema, for the documents.
    #[cfg(feature = "openapi")]
    fn documented(&self) -> Vec<(VersionSpan, Option<serde_json::Value>)>;
}

impl<T: Send + Sync + 'static> BoundSchemas for BodySchemas<T> {
    fn insert_into(self: Arc<Self>, extensions: &mut http::Extensions) {
        extensions.insert(self);
    }

    fn spans(&self) -> Vec<VersionSpan> {
        self.versions()
    }

    #[cfg(feature = "openapi")]
    fn schemas_name(&self) -> &str {
        self.name()
    }

    #[cfg(feature = "openapi")]
    fn documented(&self) -> Vec<(VersionSpan, Option<serde_json::Value>)> {
        self.json_schemas()
            .map(|(versions, schema)| (versions, schema.cloned()))
            .collect()
    }
}

/// Builds [`BodySchemas`]; the first error comes out of `build`.
#[must_use]
pub struct BodySchemasBuilder<T> {
    name: String,
    entries: Vec<(VersionSpan, Entry<T>)>,
    described: Vec<(VersionSpan, Option<Arc<serde_json::Value>>)>,
    error: Option<BuildError>,
    style: MessageStyle,
    #[cfg(feature = "json-schema")]
    formats: Option<FormatChecker>,
}

impl<T> fmt::Debug for BodySchemasBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodySchemasBuilder")
            .field("name", &self.name)
            .field("style", &self.style)
            .finish_non_exhaustive()
    }
}

impl<T: Send + Sync + 'static> BodySchemasBuilder<T> {
    /// Words the failures of the JSON Schemas of this builder (and
    /// malformed bodies) in `style`; the default is
    /// [`MessageStyle::Default`]. Applies to every schema of the builder,
    /// whenever called.
    pub fn message_style(mut self, style: MessageStyle) -> Self {
        self.style = style;
        self
    }

    /// Shorthand for [`message_style(MessageStyle::Python)`](Self::message_style).
    pub fn python_messages(self) -> Self {
        self.message_style(MessageStyle::Python)
    }

    /// The checks of the `format` keyword in [`MessageStyle::Python`]
    /// (default: [`FormatChecker::default`]).
    #[cfg(feature = "json-schema")]
    pub fn format_checker(mut self, formats: FormatChecker) -> Self {
        self.formats = Some(formats);
        self
    }

    /// At `versions`, the body is a `U` (deserialized from JSON), converted
    /// into `T`. Use `#[serde(deny_unknown_fields)]` on `U` to reject
    /// unknown fields.
    pub fn serde<U>(self, versions: VersionSpan) -> Self
    where
        U: DeserializeOwned + Into<T> + 'static,
    {
        self.serde_known::<U>(versions, None)
    }

    /// [`serde`](Self::serde), relaxed by `schema` where it is known, else
    /// by the fields of `U`.
    fn serde_known<U>(self, versions: VersionSpan, schema: Option<Arc<serde_json::Value>>) -> Self
    where
        U: DeserializeOwned + Into<T> + 'static,
    {
        let fields = relax::struct_fields::<U>();
        self.read_with(
            versions,
            schema,
            fields,
            Plain::<U>(std::marker::PhantomData),
        )
    }

    /// At `versions`, the body is read by `reader` and converted into `T`,
    /// relaxed by `schema` where it is known, else by `fields`.
    fn read_with<R>(
        mut self,
        versions: VersionSpan,
        schema: Option<Arc<serde_json::Value>>,
        fields: Option<&'static [&'static str]>,
        reader: R,
    ) -> Self
    where
        R: Reader + Send + Sync + 'static,
        R::Output: Into<T>,
    {
        self.described.push((versions, schema.clone()));
        let parser: Parser<T> = Box::new(move |body: &[u8], nesting, strictness, version| {
            check_depth(body, nesting)?;
            if strictness == Strictness::Relaxed {
                let mut value: serde_json::Value =
                    from_bounded_slice(body).map_err(|e| BodyError::Malformed(e.to_string()))?;
                match (&schema, fields) {
                    (Some(schema), _) => relax::strip_unknown(&mut value, schema),
                    (None, Some(fields)) => relax::keep_fields(&mut value, fields),
                    (None, None) => {}
                }
                let mut track = serde_path_to_error::Track::new();
                return reader
                    .read(
                        version,
                        serde_path_to_error::Deserializer::new(value, &mut track),
                    )
                    .map(Into::into)
                    .map_err(|e| BodyError::Invalid {
                        field: track.path().to_string(),
                        reason: e.to_string(),
                    });
            }
            let mut de = serde_json::Deserializer::from_slice(body);
            de.disable_recursion_limit();
            let mut track = serde_path_to_error::Track::new();
            let value = reader
                .read(
                    version,
                    serde_path_to_error::Deserializer::new(&mut de, &mut track),
                )
                .map_err(|inner| {
                    if inner.is_syntax() || inner.is_eof() {
                        BodyError::Malformed(inner.to_string())
                    } else {
                        BodyError::Invalid {
                            field: track.path().to_string(),
                            reason: inner.to_string(),
                        }
                    }
                })?;
            de.end().map_err(|e| BodyError::Malformed(e.to_string()))?;
            Ok(value.into())
        });
        self.entries.push((versions, Entry::Ready(parser)));
        self
    }

    /// At `versions`, the body is a `U` read at the request's version
    /// (`#[derive(Versioned)]` with `#[versioned(request)]`; see
    /// [`versioned`](crate::versioned)), converted into `T`: a schema per
    /// piece of `versions` where `U` keeps one shape, each described by
    /// the JSON Schema the derive makes, so the OpenAPI documents take
    /// them as they are. With the `json-schema` feature, a body the type
    /// reads is also held to that schema, so that what the documents say
    /// of a field (a `maxLength`, a `pattern` of its type's schema) is
    /// what is enforced; the type's own refusals (a field the version
    /// does not have, a missing or mistyped one) come first.
    #[cfg(feature = "derive")]
    pub fn versioned<U>(mut self, versions: VersionSpan) -> Self
    where
        U: for<'de> crate::versioned::DeserializeAt<'de>
            + crate::versioned::VersionedSchema
            + Into<T>
            + 'static,
    {
        for piece in crate::versioned::segments::<U>(versions) {
            let schema = crate::versioned::request_schema::<U>(piece.start());
            #[cfg(feature = "json-schema")]
            {
                let convert = Convert::BeforeSchema(Arc::new(|source: Source<'_>, version| {
                    let mut track = serde_path_to_error::Track::new();
                    let read = match source {
                        Source::Text(text) => {
                            let mut de = serde_json::Deserializer::from_slice(text);
                            de.disable_recursion_limit();
                            U::deserialize_at(
                                version,
                                serde_path_to_error::Deserializer::new(&mut de, &mut track),
                            )
                        }
                        Source::Value(value) => U::deserialize_at(
                            version,
                            serde_path_to_error::Deserializer::new(value, &mut track),
                        ),
                    };
                    read.map(Into::into).map_err(|e| BodyError::Invalid {
                        field: track.path().to_string(),
                        reason: e.to_string(),
                    })
                }));
                self.described.push((piece, Some(Arc::new(schema.clone()))));
                self.entries.push((
                    piece,
                    Entry::JsonSchema(PendingSchema {
                        versions: piece,
                        schema,
                        convert,
                    }),
                ));
            }
            #[cfg(not(feature = "json-schema"))]
            {
                let reader = AtVersion::<U>(std::marker::PhantomData);
                self = self.read_with(piece, Some(Arc::new(schema)), None, reader);
            }
        }
        self
    }

    /// As [`serde`](Self::serde), with the JSON Schema of `U` derived by
    /// `schemars` kept for the `openapi` generator.
    #[cfg(feature = "schemars")]
    pub fn serde_schema<U>(self, versions: VersionSpan) -> Self
    where
        U: DeserializeOwned + Into<T> + schemars::JsonSchema + 'static,
    {
        let schema = Arc::new(schemars::schema_for!(U).to_value());
        self.serde_known::<U>(versions, Some(schema))
    }

    /// At `versions`, the body must validate against the JSON Schema
    /// `schema`, then is deserialized into `T`.
    #[cfg(feature = "json-schema")]
    pub fn json_schema(mut self, versions: VersionSpan, schema: &serde_json::Value) -> Self
    where
        T: DeserializeOwned,
    {
        let convert = Convert::AfterSchema(Arc::new(from_value::<T>));
        self.described
            .push((versions, Some(Arc::new(schema.clone()))));
        self.entries.push((
            versions,
            Entry::JsonSchema(PendingSchema {
                versions,
                schema: schema.clone(),
                convert,
            }),
        ));
        self
    }

    /// Compiles a JSON Schema in the builder's style.
    #[cfg(feature = "json-schema")]
    fn compile(&self, pending: PendingSchema<T>) -> Result<Parser<T>, BuildError> {
        let PendingSchema {
            versions,
            schema,
            convert,
        } = pending;
        let invalid =
            |source: Box<dyn std::error::Error + Send + Sync>| BuildError::InvalidSchema {
                name: self.name.clone(),
                versions,
                source,
            };
        match self.style {
            MessageStyle::Python => {
                let mut validator = PythonSchema::new(&schema).map_err(|e| invalid(Box::new(e)))?;
                if let Some(formats) = &self.formats {
                    validator = validator.with_format_checker(formats.clone());
                }
                Ok(Box::new(
                    move |body: &[u8], nesting, strictness, version| {
                        let mut value = python_value(body, nesting)?;
                        if strictness == Strictness::Relaxed {
                            relax::strip_unknown(&mut value, &schema);
                        }
                        convert.run(body, value, strictness, version, |value| {
                            validator.validate(value).map_err(BodyError::Schema)
                        })
                    },
                ))
            }
            MessageStyle::Default => {
                let validator = jsonschema::validator_for(&schema)
                    .map_err(|e| invalid(Box::new(e.to_owned())))?;
                Ok(Box::new(
                    move |body: &[u8], nesting, strictness, version| {
                        check_depth(body, nesting)?;
                        let mut value: serde_json::Value = from_bounded_slice(body)
                            .map_err(|e| BodyError::Malformed(e.to_string()))?;
                        if strictness == Strictness::Relaxed {
                            relax::strip_unknown(&mut value, &schema);
                        }
                        convert.run(body, value, strictness, version, |value| {
                            match validator.iter_errors(value).next() {
                                Some(error) => {
                                    let field = error.instance_path().to_string();
                                    Err(BodyError::Invalid {
                                        field: field.trim_start_matches('/').replace('/', "."),
                                        reason: error.to_string(),
                                    })
                                }
                                None => Ok(()),
                            }
                        })
                    },
                ))
            }
        }
    }

    /// Checks that no two schemas overlap, and builds.
    ///
    /// # Errors
    ///
    /// Returns [`BuildError::Overlap`] naming the operation and both ranges,
    /// or the first error met while building (an invalid JSON Schema).
    pub fn build(mut self) -> Result<BodySchemas<T>, BuildError> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let ranges: Vec<VersionSpan> = self.entries.iter().map(|(v, _)| *v).collect();
        if let Some((first, second)) = find_overlap(&ranges) {
            return Err(BuildError::Overlap(RouteConflict {
                path: format!("the body of {}", self.name),
                method: None,
                first,
                second,
            }));
        }
        let pending = std::mem::take(&mut self.entries);
        let mut entries = Vec::with_capacity(pending.len());
        for (versions, entry) in pending {
            #[cfg_attr(
                not(feature = "json-schema"),
                allow(clippy::infallible_destructuring_match)
            )]
            let parser = match entry {
                Entry::Ready(parser) => parser,
                #[cfg(feature = "json-schema")]
                Entry::JsonSchema(pending) => self.compile(pending)?,
            };
            entries.push((versions, parser));
        }
        Ok(BodySchemas {
            name: self.name,
            entries,
            described: self.described,
        })
    }
}

/// Refuses a body nested deeper than [`MAX_JSON_DEPTH`] before a parser
/// that recurses per level reads it: with the syntax error serde meets
/// before that depth if there is one (as it would have said), else with
/// the place where the body goes too deep (`... at line 1 column 1001`).
/// How a schema's body is read from JSON into its type.
trait Reader {
    type Output;

    fn read<'de, D: serde::Deserializer<'de, Error = E>, E: serde::de::Error>(
        &self,
        version: Version,
        deserializer: D,
    ) -> Result<Self::Output, E>;
}

/// A plain serde type.
struct Plain<U>(std::marker::PhantomData<fn() -> U>);

impl<U: DeserializeOwned> Reader for Plain<U> {
    type Output = U;

    fn read<'de, D: serde::Deserializer<'de, Error = E>, E: serde::de::Error>(
        &self,
        _: Version,
        deserializer: D,
    ) -> Result<U, E> {
        U::deserialize(deserializer)
    }
}

/// A versioned type, read at the request's version.
#[cfg(all(feature = "derive", not(feature = "json-schema")))]
struct AtVersion<U>(std::marker::PhantomData<fn() -> U>);

#[cfg(all(feature = "derive", not(feature = "json-schema")))]
impl<U: for<'de> crate::versioned::DeserializeAt<'de>> Reader for AtVersion<U> {
    type Output = U;

    fn read<'de, D: serde::Deserializer<'de, Error = E>, E: serde::de::Error>(
        &self,
        version: Version,
        deserializer: D,
    ) -> Result<U, E> {
        U::deserialize_at(version, deserializer)
    }
}

fn check_depth(body: &[u8], nesting: Nesting) -> Result<(), BodyError> {
    let Some(at) = nesting.too_deep_at else {
        return Ok(());
    };
    // Nothing before `at` nests deeper than the bound.
    let mut de = serde_json::Deserializer::from_slice(&body[..at]);
    de.disable_recursion_limit();
    match IgnoredAny::deserialize(&mut de) {
        Err(e) if !e.is_eof() => Err(BodyError::Malformed(e.to_string())),
        _ => Err(BodyError::Malformed(too_deep(body, at))),
    }
}

/// The error for a body that goes too deep at byte `at`, placed as serde
/// places its errors (line and column from 1, the column in bytes).
fn too_deep(body: &[u8], at: usize) -> String {
    let before = &body[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |nl| nl + 1);
    format!(
        "{} line {line} column {}",
        depth::TOO_DEEP,
        at - line_start + 1
    )
}

/// A `U` of a body already read as JSON, refused naming the field.
#[cfg(feature = "json-schema")]
fn from_value<U: DeserializeOwned>(value: serde_json::Value) -> Result<U, BodyError> {
    serde_path_to_error::deserialize(value).map_err(|e| BodyError::Invalid {
        field: e.path().to_string(),
        reason: e.into_inner().to_string(),
    })
}

/// Deserializes a body whose depth is already bounded, without serde's
/// own limit of 128 levels (which would refuse bodies Python reads).
fn from_bounded_slice<U: DeserializeOwned>(body: &[u8]) -> serde_json::Result<U> {
    let mut de = serde_json::Deserializer::from_slice(body);
    de.disable_recursion_limit();
    let value = U::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Reads a body as Python's `json.loads` would, refusing it in Python's
/// words; Python's scanner words a body nested too deeply too (it stops at
/// the bound, or at an error Python meets before).
#[cfg(feature = "json-schema")]
fn python_value(body: &[u8], nesting: Nesting) -> Result<serde_json::Value, BodyError> {
    // What serde says is only used where Python would read the body
    // (`NaN`, a lone surrogate, a huge number).
    let serde_says = match nesting.too_deep_at {
        None => match from_bounded_slice(body) {
            Ok(value) => return Ok(value),
            Err(e) => e.to_string(),
        },
        Some(at) => too_deep(body, at),
    };
    let python_says = jsonschema_python_messages::json::decode_error(body, MAX_JSON_DEPTH);
    Err(BodyError::Malformed(
        python_says.map_or(serde_says, |e| e.to_string()),
    ))
}

/// Why a request body was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BodyError {
    /// Not JSON at all.
    Malformed(String),
    /// JSON, but a field is missing, unknown, or of the wrong type or value.
    Invalid {
        /// Where (`inventories.VCPU.total`, or `.` for the whole body).
        field: String,
        /// Why.
        reason: String,
    },
    /// JSON, refused by a JSON Schema in [`MessageStyle::Python`]:
    /// displayed as `JSON does not validate: <str(ValidationError)>`.
    #[cfg(feature = "json-schema")]
    Schema(PythonSchemaError),
    /// The request is not JSON (`Content-Type`).
    UnsupportedMediaType(String),
    /// The service could not read the body: it had no thread to read a
    /// deeply nested body on (503).
    Unreadable(String),
    /// No schema covers this version.
    NoSchema {
        /// The operation.
        operation: String,
        /// The served version.
        version: Version,
    },
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::Malformed(e) => write!(f, "Malformed JSON: {e}"),
            BodyError::Invalid { field, reason } if field.is_empty() || field == "." => {
                write!(f, "JSON does not validate: {reason}")
            }
            BodyError::Invalid { field, reason } => {
                write!(f, "JSON does not validate: at {field}: {reason}")
            }
            #[cfg(feature = "json-schema")]
            BodyError::Schema(e) => write!(f, "JSON does not validate: {e}"),
            BodyError::UnsupportedMediaType(given) => write!(
                f,
                "The media type {given} is not supported, use application/json"
            ),
            BodyError::NoSchema { operation, version } => {
                write!(f, "{operation} takes no body at version {version}")
            }
            BodyError::Unreadable(why) => write!(
                f,
                "The request body cannot be read now (no thread for a deeply nested body: {why}); try again later"
            ),
        }
    }
}

impl std::error::Error for BodyError {}

impl BodyError {
    /// The status this error is answered with.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            BodyError::Malformed(_) | BodyError::Invalid { .. } => StatusCode::BAD_REQUEST,
            #[cfg(feature = "json-schema")]
            BodyError::Schema(_) => StatusCode::BAD_REQUEST,
            BodyError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            BodyError::NoSchema { .. } => StatusCode::NOT_FOUND,
            BodyError::Unreadable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl From<BodyError> for ApiError {
    fn from(e: BodyError) -> Self {
        ApiError::new(e.status(), e.to_string())
    }
}

impl IntoResponse for BodyError {
    fn into_response(self) -> Response {
        ApiError::from(self).into_response()
    }
}

/// A JSON request body parsed with the schema for the served version.
///
/// The operation's schemas are the ones bound to it with
/// [`VersionedRouter::body`](crate::VersionedRouter::body) (or, on a
/// plain axum router, a [`BodySchemas::extension`] layer for `T`), and the
/// route is wrapped in the microversion layer. Under the legacy root the
/// body is read as [`BodySchemas::parse_relaxed`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionedJson<T>(pub T);

impl<S, T> FromRequest<S> for VersionedJson<T>
where
    S: Send + Sync,
    T: Send + Sync + 'static,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let schemas = req
            .extensions()
            .get::<Arc<BodySchemas<T>>>()
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "VersionedJson is used on an operation without body schemas: bind them with VersionedRouter::body",
                )
                .into_response()
            })?;
        let version = ServedVersion::from_extensions(req.extensions())
            .ok_or_else(|| crate::MissingLayer::new("ServedVersion").into_response())?;
        let content_type = req
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let is_json = content_type.as_deref().is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
        if !is_json {
            let given = content_type.unwrap_or_else(|| "None".to_owned());
            return Err(BodyError::UnsupportedMediaType(given).into_response());
        }
        let strictness = if crate::LegacyRequest::from_extensions(req.extensions()) {
            Strictness::Relaxed
        } else {
            Strictness::Strict
        };
        let body = Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        schemas
            .parse_as(*version, &body, strictness)
            .map(VersionedJson)
            .map_err(IntoResponse::into_response)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, PartialEq)]
    struct Thing {
        name: String,
        size: u32,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ThingV1 {
        name: String,
    }

    impl From<ThingV1> for Thing {
        fn from(v: ThingV1) -> Self {
            Thing {
                name: v.name,
                size: 0,
            }
        }
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ThingV2 {
        name: String,
        size: u32,
    }

    impl From<ThingV2> for Thing {
        fn from(v: ThingV2) -> Self {
            Thing {
                name: v.name,
                size: v.size,
            }
        }
    }

    fn schemas() -> BodySchemas<Thing> {
        BodySchemas::builder("POST /things")
            .serde::<ThingV1>(VersionSpan::from_static("1.0 - 1.4"))
            .serde::<ThingV2>(VersionSpan::from_static("1.5 - latest"))
            .build()
            .unwrap()
    }

    #[test]
    fn picks_the_schema_by_version() {
        let s = schemas();
        assert_eq!(
            s.parse(Version::new(1, 2), br#"{"name": "a"}"#),
            Ok(Thing {
                name: "a".into(),
                size: 0
            })
        );
        assert_eq!(
            s.parse(Version::new(1, 5), br#"{"name": "a", "size": 3}"#),
            Ok(Thing {
                name: "a".into(),
                size: 3
            })
        );
        let err = s
            .parse(Version::new(1, 2), br#"{"name": "a", "size": 3}"#)
            .unwrap_err();
        assert!(err.to_string().contains("unknown field `size`"), "{err}");
        let err = s
            .parse(Version::new(1, 5), br#"{"name": "a", "size": "x"}"#)
            .unwrap_err();
        assert_eq!(
            err,
            BodyError::Invalid {
                field: "size".into(),
                reason: "invalid type: string \"x\", expected u32 at line 1 column 25".into()
            }
        );
        assert!(
            err.to_string()
                .starts_with("JSON does not validate: at size:")
        );
        let err = s.parse(Version::new(1, 5), b"{nope").unwrap_err();
        assert!(matches!(err, BodyError::Malformed(_)));
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
    }

    #[test]
    fn overlapping_schemas_fail_to_build() {
        let err = BodySchemas::<Thing>::builder("POST /things")
            .serde::<ThingV1>(VersionSpan::from_static("1.0 - 1.5"))
            .serde::<ThingV2>(VersionSpan::from_static("1.5 - latest"))
            .build()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "overlapping version ranges for the body of POST /things: 1.0 - 1.5 and 1.5 - latest"
        );
    }

    #[cfg(feature = "json-schema")]
    #[test]
    fn python_messages() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Named {
            name: String,
        }
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string", "format": "uuid"}},
            "required": ["name"],
            "additionalProperties": false
        });
        let python = BodySchemas::<Named>::builder("POST /things")
            .json_schema(VersionSpan::ALL, &schema)
            .python_messages()
            .build()
            .unwrap();
        let v = Version::new(1, 0);
        let err = python.parse(v, b"").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Malformed JSON: Expecting value: line 1 column 1 (char 0)"
        );
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
        let err = python.parse(v, br#"{"name": "x", "bad": 1}"#).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(
                "JSON does not validate: Additional properties are not allowed ('bad' was unexpected)\n\nFailed validating 'additionalProperties' in schema:\n    {'type': 'object',"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("On instance:\n    {'name': 'x', 'bad': 1}"),
            "{text}"
        );
        let BodyError::Schema(e) = &err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(e.keyword(), Some("additionalProperties"));
        assert_eq!(ApiError::from(err).status(), StatusCode::BAD_REQUEST);
        let no_dashes = br#"{"name": "0123456789abcdef0123456789abcdef"}"#;
        let err = python.parse(v, no_dashes).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "JSON does not validate: '0123456789abcdef0123456789abcdef' is not a 'uuid'"
            ),
            "{err}"
        );
        let lenient = BodySchemas::<Named>::builder("POST /things")
            .python_messages()
            .format_checker(FormatChecker::empty())
            .json_schema(VersionSpan::ALL, &schema)
            .build()
            .unwrap();
        assert_eq!(
            lenient.parse(v, no_dashes),
            Ok(Named {
                name: "0123456789abcdef0123456789abcdef".into()
            })
        );
        // The default style is unchanged.
        let default = BodySchemas::<Named>::builder("POST /things")
            .json_schema(VersionSpan::ALL, &schema)
            .build()
            .unwrap();
        assert!(matches!(
            default.parse(v, br#"{}"#),
            Err(BodyError::Invalid { .. })
        ));
        let bad = BodySchemas::<Named>::builder("POST /things")
            .python_messages()
            .json_schema(VersionSpan::ALL, &serde_json::json!({"$ref": "#/x"}))
            .build()
            .unwrap_err();
        assert!(
            bad.to_string()
                .starts_with("invalid JSON Schema for POST /things at all: "),
            "{bad}"
        );
        match &bad {
            BuildError::InvalidSchema { name, versions, .. } => {
                assert_eq!(
                    (name.as_str(), *versions),
                    ("POST /things", VersionSpan::ALL)
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(std::error::Error::source(&bad).is_some());
        let bad = BodySchemas::<Named>::builder("POST /things")
            .python_messages()
            .json_schema(
                VersionSpan::from_static("1.2 - latest"),
                &serde_json::json!({"properties": {"name": {"type": "strnig"}}}),
            )
            .build()
            .unwrap_err();
        assert!(matches!(bad, BuildError::InvalidSchema { .. }), "{bad:?}");
        assert_eq!(
            bad.to_string(),
            "invalid JSON Schema for POST /things at 1.2 - latest: schema['properties']['name']['type']: not a type name or a list of type names"
        );
    }

    #[cfg(feature = "json-schema")]
    #[test]
    fn json_schema_validation_names_the_field() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Inv {
            total: u32,
        }
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"total": {"type": "integer", "minimum": 1}},
            "required": ["total"],
            "additionalProperties": false
        });
        let s = BodySchemas::<Inv>::builder("PUT /inventory")
            .json_schema(VersionSpan::ALL, &schema)
            .build()
            .unwrap();
        assert_eq!(
            s.parse(Version::new(1, 0), br#"{"total": 4}"#),
            Ok(Inv { total: 4 })
        );
        let err = s.parse(Version::new(1, 0), br#"{"total": 0}"#).unwrap_err();
        match &err {
            BodyError::Invalid { field, reason } => {
                assert_eq!(field, "total");
                assert!(reason.contains("minimum"), "{reason}");
            }
            other => panic!("unexpected {other:?}"),
        }
        let err = s.parse(Version::new(1, 0), br#"{}"#).unwrap_err();
        assert!(
            err.to_string().contains("\"total\" is a required property"),
            "{err}"
        );
        let bad = BodySchemas::<Inv>::builder("PUT /inventory")
            .json_schema(VersionSpan::ALL, &serde_json::json!({"type": 12}))
            .build()
            .unwrap_err();
        assert!(
            bad.to_string()
                .starts_with("invalid JSON Schema for PUT /inventory at all: "),
            "{bad}"
        );
        assert!(matches!(bad, BuildError::InvalidSchema { .. }));
        assert!(std::error::Error::source(&bad).is_some());
    }

    /// `open` arrays nested in each other around `inner`, `depth` deep.
    fn nested(depth: usize, inner: &str) -> String {
        format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn serde_bodies_are_bounded_in_depth() {
        let s = schemas();
        let v = Version::new(1, 5);
        // Deeper than the bound: refused before serde recurses into it, at
        // the bracket past the bound.
        for body in ["[".repeat(100_000), "[".repeat(1_000_000)] {
            let err = s.parse(v, body.as_bytes()).unwrap_err();
            assert_eq!(
                err.to_string(),
                "Malformed JSON: Nested too deeply (at most 1000 levels of arrays and objects) at line 1 column 1001"
            );
        }
        let err = s
            .parse(
                v,
                format!("{{\n  \"name\": {}", nested(1001, "")).as_bytes(),
            )
            .unwrap_err();
        assert!(err.to_string().ends_with("at line 2 column 1010"), "{err}");
        // A syntax error before that depth is what serde says.
        let err = s
            .parse(v, format!("[x{}", "[".repeat(2000)).as_bytes())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Malformed JSON: expected value at line 1 column 2"
        );
        // Up to the bound, serde reads the body (here: the wrong type).
        let err = s
            .parse(v, format!(r#"{{"name": {}}}"#, nested(999, "")).as_bytes())
            .unwrap_err();
        assert!(matches!(err, BodyError::Invalid { .. }), "{err:?}");
    }

    #[cfg(feature = "json-schema")]
    #[test]
    fn python_bodies_are_bounded_in_depth() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "list": {"type": "array", "uniqueItems": true}},
            "additionalProperties": false
        });
        let python = BodySchemas::<serde_json::Value>::builder("POST /things")
            .python_messages()
            .json_schema(VersionSpan::ALL, &schema)
            .build()
            .unwrap();
        let v = Version::new(1, 0);
        let too_deep = "Malformed JSON: Nested too deeply (at most 1000 levels of arrays and objects) at: line 1 column 1001 (char 1000)";
        for body in [
            "[".repeat(1001),
            "[".repeat(100_000),
            "[".repeat(1 << 20),
            nested(5000, ""),
            "{\"a\": ".repeat(5000),
        ] {
            let err = python.parse(v, body.as_bytes()).unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with("Malformed JSON: Nested too deeply"),
                "{text}"
            );
            if body.starts_with('[') {
                assert_eq!(text, too_deep);
            } else {
                assert!(text.ends_with("(char 6000)"), "{text}");
            }
        }
        // Python's first error comes first, whatever is deeper after it.
        let err = python
            .parse(v, format!("[1 2{}", "[".repeat(5000)).as_bytes())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Malformed JSON: Expecting ',' delimiter: line 1 column 4 (char 3)"
        );
        let err = python.parse(v, "[".repeat(1000).as_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Malformed JSON: Expecting value: line 1 column 1001 (char 1000)"
        );
        // At the bound the body is read, validated and printed back in the
        // message, with no stack to spare taken by any of them.
        let body = format!(r#"{{"name": {}}}"#, nested(999, "1, 2"));
        let err = python.parse(v, body.as_bytes()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "JSON does not validate: {} is not of type 'string'",
                nested(999, "1, 2")
            )),
            "{}",
            &text[..200]
        );
        // pprint breaks the innermost list only, at the indent of its
        // depth (checked against Python at depth 50), plus the message's 4.
        let printed = format!(
            "{}1,\n{}2{}",
            "[".repeat(999),
            " ".repeat(1003),
            "]".repeat(999)
        );
        assert!(
            text.ends_with(&format!("On instance['name']:\n    {printed}")),
            "{}",
            &text[text.len() - 200..]
        );
        let err = python
            .parse(
                v,
                br#"{"list": [1, "a", [1.0, {"x": 1, "y": 2}], true, [1, {"y": 2, "x": 1}]]}"#,
            )
            .unwrap_err();
        assert!(
            err.to_string().starts_with("JSON does not validate: [1, 'a', [1.0, {'x': 1, 'y': 2}], True, [1, {'y': 2, 'x': 1}]] has non-unique elements"),
            "{err}"
        );
        let unique = python.parse(
            v,
            br#"{"list": [1, true, "1", [1], {"1": 1}, 1.5, null, false, 0]}"#,
        );
        assert!(unique.is_ok(), "{unique:?}");
        let many: Vec<u32> = (0..100_000).collect();
        let body = serde_json::json!({ "list": many }).to_string();
        assert!(python.parse(v, body.as_bytes()).is_ok());
    }
}
