//! One type for every version of a body: `#[derive(Versioned)]`
//! (feature `derive`).
//!
//! Instead of a struct per shape and a branch per difference, a body is
//! defined once, each field saying at which versions it exists and where
//! it takes another name or form. The derive makes, from that one
//! definition:
//!
//! - [`VersionedSchema`]: the body's JSON Schema at each version (only
//!   that version's fields, `additionalProperties: false`), which
//!   [`OperationDoc::versioned_response`](crate::openapi::OperationDoc::versioned_response)
//!   and [`BodySchemasBuilder::versioned`](crate::schema::BodySchemasBuilder::versioned)
//!   put into the OpenAPI documents without the service restating it;
//! - with `#[versioned(response)]`, [`SerializeAt`]: the body written at
//!   a version, that version's fields in their declared order, straight
//!   through serde (no intermediate `serde_json::Value`); a handler
//!   returns [`Versioned`](struct@Versioned);
//! - with `#[versioned(request)]`, [`DeserializeAt`]: the body read at a
//!   version, refusing a field that version does not have, as its schema
//!   would; [`VersionedJson`](crate::VersionedJson) takes it through
//!   [`BodySchemasBuilder::versioned`](crate::schema::BodySchemasBuilder::versioned),
//!   and [`VersionedQuery`] reads a query string the same way.
//!
//! # Attributes
//!
//! On the struct (named fields, no generic parameters):
//! `#[versioned(response)]`, `#[versioned(request)]`, or both.
//!
//! On a field:
//!
//! | attribute | meaning |
//! |---|---|
//! | `since = "1.1"` | the field exists from 1.1 on |
//! | `since = COLOR` | the field exists from the version of the [`Change`](microversion::Change) const `COLOR` on |
//! | `until = "1.4"` | 1.4 is the last version it exists in |
//! | `removed = "1.5"`, `removed = NO_LEGACY` | the field is gone from 1.5, or from the version of the change `NO_LEGACY`, on |
//! | `rename = "name"` | its name on the wire (default: the field's) |
//! | `form(versions = "1.0 - 1.2", rename = "title")` | another name at those versions |
//! | `form(versions = "1.0 - 1.2", via = Legacy)` | at those versions it stands on the wire as a `Legacy`: `Legacy: From<&Field> + Serialize` for a response, `Legacy: Deserialize + Into<Field>` for a request, `Legacy: JsonSchema` always |
//! | `nested` | its type is versioned too (or a `Vec`, slice, `Option`, `Box` or `BTreeMap<String, _>` of one): written, read and described at the same version |
//! | `default` | a request may leave it out (its type's default); an `Option` may always |
//!
//! A request type's field that exists at some versions only takes its
//! type's default where it does not exist, so its type is `Default`
//! (typically an `Option`). A field's doc comment is its description in
//! the schema.
//!
//! The version literals are read by the core crate's one parser when the
//! program is compiled: a malformed version, an empty span, a form that
//! reaches outside its field's versions, two forms over one version and
//! two fields named alike at one version fail the build. A bound given as
//! a change is read from its const when the program is compiled, after
//! the derive: its order against the field's other bound and its forms is
//! checked then (a build error too), but two fields named alike are found
//! only among fields bounded by literals.
//!
//! ```compile_fail
//! # use microversion::Change;
//! # use microversion_server::versioned::Versioned;
//! const COLOR: Change = Change::new("1.4", "Widgets have a color.");
//! const PAINT: Change = Change::new("1.2", "Widgets can be painted.");
//! #[derive(Versioned)]
//! #[versioned(response)]
//! struct Widget {
//!     #[versioned(since = COLOR, removed = PAINT)] // removed before it appears
//!     color: Option<String>,
//! }
//! ```
//!
//! ```compile_fail
//! # use microversion_server::versioned::Versioned;
//! #[derive(Versioned)]
//! #[versioned(response)]
//! struct Widget {
//!     #[versioned(since = "1.x")] // not a version: does not compile
//!     color: Option<String>,
//! }
//! ```
//!
//! ```compile_fail
//! # use microversion_server::versioned::Versioned;
//! #[derive(Versioned)]
//! #[versioned(response)]
//! struct Widget {
//!     #[versioned(since = "1.4", until = "1.2")] // empty: does not compile
//!     color: Option<String>,
//! }
//! ```
//!
//! ```compile_fail
//! # use microversion_server::versioned::Versioned;
//! #[derive(Versioned)]
//! #[versioned(response)]
//! struct Widget {
//!     // Two forms at 1.2: does not compile.
//!     #[versioned(form(versions = "1.0 - 1.2", rename = "title"))]
//!     #[versioned(form(versions = "1.2 - 1.3", rename = "label"))]
//!     name: String,
//! }
//! ```
//!
//! ```compile_fail
//! # use microversion_server::versioned::Versioned;
//! #[derive(Versioned)]
//! #[versioned(request)]
//! struct Widget {
//!     // Both would be `name` at 1.0: does not compile.
//!     #[versioned(until = "1.2")]
//!     name: Option<String>,
//!     #[versioned(form(versions = "1.0 - 1.4", rename = "name"))]
//!     title: String,
//! }
//! ```
//!
//! # Example
//!
//! ```
//! use axum::Json;
//! use microversion::{Version, VersionSpan};
//! use microversion_server::ServedVersion;
//! use microversion_server::versioned::{Versioned, response_schema};
//! use serde_json::json;
//!
//! /// A widget, as `GET /widgets/{id}` answers.
//! #[derive(Versioned)]
//! #[versioned(response)]
//! struct Widget {
//!     id: u64,
//!     /// Called `title` before 1.3.
//!     #[versioned(form(versions = "1.0 - 1.2", rename = "title"))]
//!     name: String,
//!     /// Added in 1.1.
//!     #[versioned(since = "1.1")]
//!     color: Option<String>,
//! }
//!
//! async fn show(version: ServedVersion) -> Versioned<Widget> {
//!     let widget = Widget { id: 7, name: "w".into(), color: None };
//!     Versioned::new(version, widget)
//! }
//!
//! let widget = Widget { id: 7, name: "w".into(), color: Some("red".into()) };
//! let at = |v| serde_json::to_string(&Versioned::new(Version::new(1, v), &widget)).unwrap();
//! assert_eq!(at(0), r#"{"id":7,"title":"w"}"#);
//! assert_eq!(at(1), r#"{"id":7,"title":"w","color":"red"}"#);
//! assert_eq!(at(3), r#"{"id":7,"name":"w","color":"red"}"#);
//!
//! let schema = response_schema::<Widget>(Version::new(1, 0));
//! assert_eq!(schema["properties"].as_object().unwrap().keys().collect::<Vec<_>>(), ["id", "title"]);
//! assert_eq!(schema["additionalProperties"], json!(false));
//! ```
//!
//! A request body, read at a version:
//!
//! ```
//! use microversion::{Version, VersionSpan};
//! use microversion_server::schema::BodySchemas;
//! use microversion_server::versioned::Versioned;
//!
//! #[derive(Debug, Versioned)]
//! #[versioned(request)]
//! struct NewWidget {
//!     name: String,
//!     #[versioned(since = "1.1")]
//!     color: Option<String>,
//! }
//!
//! let schemas = BodySchemas::<NewWidget>::builder("POST /widgets")
//!     .versioned::<NewWidget>(VersionSpan::ALL)
//!     .build()?;
//! let body = br#"{"name": "w", "color": "red"}"#;
//! assert_eq!(schemas.parse(Version::new(1, 1), body)?.color.as_deref(), Some("red"));
//! let refused = schemas.parse(Version::new(1, 0), body).unwrap_err();
//! assert_eq!(
//!     refused.to_string(),
//!     "JSON does not validate: field `color` does not exist at version 1.0; \
//!      the fields at 1.0 are `name` at line 1 column 21",
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::request::Parts;
use microversion::{Version, VersionSpan};
use schemars::{Schema, SchemaGenerator, generate::SchemaSettings};
use serde::de::{DeserializeSeed, Deserializer};
use serde::{Serialize, Serializer};

use crate::extract::{LegacyRequest, MissingLayer, ServedVersion};

/// The derive; see the [module](self).
pub use microversion_derive::Versioned;

/// A body's JSON Schema at each version, and the versions where it
/// changes. Derived by `#[derive(Versioned)]`.
pub trait VersionedSchema {
    /// Pushes the versions at which the body's shape changes (a field
    /// appears, goes, or changes form), nested bodies' included; in any
    /// order, repeats allowed.
    fn boundaries(out: &mut Vec<Version>);

    /// The body's schema at `version`, its subschemas' definitions left
    /// in `generator`.
    fn schema_at(version: Version, generator: &mut SchemaGenerator) -> Schema;
}

/// A body that is written at a version. Derived by
/// `#[derive(Versioned)]` with `#[versioned(response)]`.
pub trait SerializeAt {
    /// Writes the body as it is at `version`.
    ///
    /// # Errors
    ///
    /// The serializer's.
    fn serialize_at<S: Serializer>(
        &self,
        version: Version,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;
}

/// A body that is read at a version. Derived by `#[derive(Versioned)]`
/// with `#[versioned(request)]`.
pub trait DeserializeAt<'de>: Sized {
    /// Reads the body as it is at `version`, refusing fields that version
    /// does not have.
    ///
    /// # Errors
    ///
    /// The deserializer's, and a refused or missing field.
    fn deserialize_at<D: Deserializer<'de>>(
        version: Version,
        deserializer: D,
    ) -> Result<Self, D::Error>;
}

/// A value with the version to write it at, as a response (JSON, 200) or
/// as anything [`Serialize`] goes into.
///
/// `(StatusCode::CREATED, Versioned::new(version, body))` answers with
/// another status.
#[derive(Clone, Copy, Debug)]
pub struct Versioned<T> {
    version: Version,
    value: T,
}

impl<T> Versioned<T> {
    /// `value`, to be written at `version` (a
    /// [`ServedVersion`] or a [`Version`]).
    pub fn new(version: impl Into<Version>, value: T) -> Self {
        Versioned {
            version: version.into(),
            value,
        }
    }

    /// The version it is written at.
    #[must_use]
    pub fn version(&self) -> Version {
        self.version
    }

    /// The value.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: SerializeAt> Serialize for Versioned<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize_at(self.version, serializer)
    }
}

impl<T: SerializeAt> IntoResponse for Versioned<T> {
    fn into_response(self) -> Response {
        // A body of a hundred bytes or so is common; the buffer grows
        // from there as `serde_json` writes.
        let mut body = Vec::with_capacity(128);
        match serde_json::to_writer(&mut body, &self) {
            Ok(()) => (
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                body,
            )
                .into_response(),
            // Only a type whose `Serialize` fails (a map with keys JSON
            // cannot have) gets here: the service's bug, not the client's.
            Err(e) => crate::ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the response body could not be written: {e}"),
            )
            .into_response(),
        }
    }
}

/// A reference to a value, written at a version.
#[derive(Debug)]
pub struct At<'a, T: ?Sized> {
    value: &'a T,
    version: Version,
}

impl<'a, T: ?Sized> At<'a, T> {
    /// `value` at `version`.
    pub fn new(value: &'a T, version: Version) -> Self {
        At { value, version }
    }
}

impl<T: SerializeAt + ?Sized> Serialize for At<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize_at(self.version, serializer)
    }
}

/// Reads a `T` at a version, as a [`DeserializeSeed`].
pub struct AtSeed<T> {
    version: Version,
    kind: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for AtSeed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtSeed")
            .field("version", &self.version)
            .finish()
    }
}

impl<T> AtSeed<T> {
    /// Reads at `version`.
    #[must_use]
    pub fn new(version: Version) -> Self {
        AtSeed {
            version,
            kind: PhantomData,
        }
    }
}

impl<'de, T: DeserializeAt<'de>> DeserializeSeed<'de> for AtSeed<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize_at(self.version, deserializer)
    }
}

/// A request's query parameters as a `T` read at the served version
/// (`#[derive(Versioned)]` with `#[versioned(request)]`): a parameter the
/// version does not have is refused with 400, naming the parameters it
/// has, and values are parsed into the fields' types (`limit=5` into a
/// `u32`). Under the legacy root
/// ([`MicroversionsBuilder::legacy_root`](crate::MicroversionsBuilder::legacy_root))
/// parameters the version does not have are ignored instead.
/// [`OperationDoc::versioned_query`](crate::openapi::OperationDoc::versioned_query)
/// documents them from the same type.
///
/// ```
/// use microversion_server::versioned::{Versioned, VersionedQuery};
///
/// #[derive(Versioned)]
/// #[versioned(request)]
/// struct ListQuery {
///     name: Option<String>,
///     #[versioned(since = "1.2")]
///     limit: Option<u32>,
/// }
///
/// async fn list(VersionedQuery(query): VersionedQuery<ListQuery>) -> String {
///     format!("{:?} {:?}", query.name, query.limit)
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionedQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for VersionedQuery<T>
where
    S: Send + Sync,
    T: for<'de> DeserializeAt<'de> + VersionedSchema + Send,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let version = ServedVersion::from_extensions(&parts.extensions)
            .ok_or(MissingLayer::new("VersionedQuery"))
            .map_err(IntoResponse::into_response)?
            .0;
        let query = parts.uri.query().unwrap_or_default();
        let read = |query: &str| {
            let pairs = form_urlencoded::parse(query.as_bytes());
            T::deserialize_at(version, serde_urlencoded::Deserializer::new(pairs))
        };
        let read = if LegacyRequest::from_extensions(&parts.extensions) {
            // Rare (the legacy root's requests only): the parameters the
            // version has, from its schema.
            let schema = request_schema::<T>(version);
            let known = |name: &str| schema["properties"].get(name).is_some();
            let kept = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(
                    form_urlencoded::parse(query.as_bytes()).filter(|(name, _)| known(name)),
                )
                .finish();
            read(&kept)
        } else {
            read(query)
        };
        read.map(VersionedQuery).map_err(|e| {
            crate::ApiError::bad_request(format!("Invalid query string: {e}")).into_response()
        })
    }
}

/// `T`'s schema at `version` as a response body is written: a JSON
/// Schema 2020-12 document with its definitions under `$defs`.
#[must_use]
pub fn response_schema<T: VersionedSchema + ?Sized>(version: Version) -> serde_json::Value {
    root_schema::<T>(version, SchemaSettings::draft2020_12().for_serialize())
}

/// `T`'s schema at `version` as a request body is read.
#[must_use]
pub fn request_schema<T: VersionedSchema + ?Sized>(version: Version) -> serde_json::Value {
    root_schema::<T>(version, SchemaSettings::draft2020_12().for_deserialize())
}

fn root_schema<T: VersionedSchema + ?Sized>(
    version: Version,
    settings: SchemaSettings,
) -> serde_json::Value {
    let meta = settings.meta_schema.clone();
    let mut generator = settings.into_generator();
    let mut schema = T::schema_at(version, &mut generator);
    let definitions = generator.take_definitions(true);
    if !definitions.is_empty() {
        schema.insert("$defs".to_owned(), serde_json::Value::Object(definitions));
    }
    if let Some(meta) = meta {
        schema.insert("$schema".to_owned(), meta.into());
    }
    schema.to_value()
}

/// `span` cut where `T`'s shape changes: within each piece, `T` is the
/// same at every version, in order. The pieces begin at 1.0 at the
/// earliest: no request has a version below (the grammar refuses a major
/// of 0).
#[must_use]
pub fn segments<T: VersionedSchema + ?Sized>(span: VersionSpan) -> Vec<VersionSpan> {
    let mut cuts = Vec::new();
    T::boundaries(&mut cuts);
    // No request has a version below 1.0 (the grammar refuses a major of
    // 0): the pieces begin there at the earliest.
    let mut start = Version::new(1, 0).max(span.start());
    cuts.retain(|&cut| cut > start && span.contains(cut));
    cuts.sort_unstable();
    cuts.dedup();
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    for cut in cuts {
        // `cut` is above `start`, so the version before it exists; before
        // a major's first version, the previous major's last stands.
        let before = cut
            .previous_minor()
            .unwrap_or(Version::new(cut.major().saturating_sub(1), u32::MAX));
        pieces.extend(VersionSpan::between(start, before).ok());
        start = cut;
    }
    pieces.extend(VersionSpan::new(start, span.end()).ok());
    pieces
}

// Containers of versioned bodies are versioned at the same version.

macro_rules! through {
    ($($ty:ty),*) => {$(
        impl<T: VersionedSchema + ?Sized> VersionedSchema for $ty {
            fn boundaries(out: &mut Vec<Version>) {
                T::boundaries(out);
            }

            fn schema_at(version: Version, generator: &mut SchemaGenerator) -> Schema {
                T::schema_at(version, generator)
            }
        }

        impl<T: SerializeAt + ?Sized> SerializeAt for $ty {
            fn serialize_at<S: Serializer>(
                &self,
                version: Version,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                (**self).serialize_at(version, serializer)
            }
        }
    )*};
}

through!(&T, Box<T>);

impl<'de, T: DeserializeAt<'de>> DeserializeAt<'de> for Box<T> {
    fn deserialize_at<D: Deserializer<'de>>(
        version: Version,
        deserializer: D,
    ) -> Result<Self, D::Error> {
        T::deserialize_at(version, deserializer).map(Box::new)
    }
}

impl<T: VersionedSchema> VersionedSchema for Option<T> {
    fn boundaries(out: &mut Vec<Version>) {
        T::boundaries(out);
    }

    fn schema_at(version: Version, generator: &mut SchemaGenerator) -> Schema {
        let inner = T::schema_at(version, generator);
        schemars::json_schema!({"anyOf": [inner, {"type": "null"}]})
    }
}

impl<T: SerializeAt> SerializeAt for Option<T> {
    fn serialize_at<S: Serializer>(
        &self,
        version: Version,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match self {
            Some(value) => serializer.serialize_some(&At::new(value, version)),
            None => serializer.serialize_none(),
        }
    }
}

impl<'de, T: DeserializeAt<'de>> DeserializeAt<'de> for Option<T> {
    fn deserialize_at<D: Deserializer<'de>>(
        version: Version,
        deserializer: D,
    ) -> Result<Self, D::Error> {
        struct Maybe<T>(Version, PhantomData<fn() -> T>);
        impl<'de, T: DeserializeAt<'de>> serde::de::Visitor<'de> for Maybe<T> {
            type Value = Option<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value or null")
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                T::deserialize_at(self.0, d).map(Some)
            }
        }
        deserializer.deserialize_option(Maybe::<T>(version, PhantomData))
    }
}

impl<T: VersionedSchema> VersionedSchema for [T] {
    fn boundaries(out: &mut Vec<Version>) {
        T::boundaries(out);
    }

    fn schema_at(version: Version, generator: &mut SchemaGenerator) -> Schema {
        let items = T::schema_at(version, generator);
        schemars::json_schema!({"type": "array", "items": items})
    }
}

impl<T: SerializeAt> SerializeAt for [T] {
    fn serialize_at<S: Serializer>(
        &self,
        version: Version,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(|item| At::new(item, version)))
    }
}

impl<T: VersionedSchema> VersionedSchema for Vec<T> {
    fn boundaries(out: &mut Vec<Version>) {
        T::boundaries(out);
    }

    fn schema_at(version: Version, generator: &mut SchemaGenerator) -> Schema {
        <[T]>::schema_at(version, generator)
    }
}

impl<T: SerializeAt> SerializeAt for Vec<T> {
    fn serialize_at<S: Serializer>(
        &self,
        version: Version,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize_at(version, serializer)
    }
}

impl<'de, T: DeserializeAt<'de>> DeserializeAt<'de> for Vec<T> {
    fn deserialize_at<D: Deserializer<'de>>(
        version: Version,
        deserializer: D,
    ) -> Result<Self, D::Error> {
        struct Items<T>(Version, PhantomData<fn() -> T>);
        impl<'de, T: DeserializeAt<'de>> serde::de::Visitor<'de> for Items<T> {
            type Value = Vec<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
                while let Some(item) = seq.next_element_seed(AtSeed::<T>::new(self.0))? {
                    items.push(item);
                }
                Ok(items)
            }
        }
        deserializer.deserialize_seq(Items::<T>(version, PhantomData))
    }
}

impl<K: Serialize, T: VersionedSchema> VersionedSchema for BTreeMap<K, T> {
    fn boundaries(out: &mut Vec<Version>) {
        T::boundaries(out);
    }

    fn schema_at(version: Version, generator: &mut SchemaGenerator) -> Schema {
        let values = T::schema_at(version, generator);
        schemars::json_schema!({"type": "object", "additionalProperties": values})
    }
}

impl<K: Serialize, T: SerializeAt> SerializeAt for BTreeMap<K, T> {
    fn serialize_at<S: Serializer>(
        &self,
        version: Version,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter().map(|(k, v)| (k, At::new(v, version))))
    }
}

impl<'de, K, T> DeserializeAt<'de> for BTreeMap<K, T>
where
    K: serde::Deserialize<'de> + Ord,
    T: DeserializeAt<'de>,
{
    fn deserialize_at<D: Deserializer<'de>>(
        version: Version,
        deserializer: D,
    ) -> Result<Self, D::Error> {
        struct Entries<K, T>(Version, PhantomData<fn() -> (K, T)>);
        impl<'de, K, T> serde::de::Visitor<'de> for Entries<K, T>
        where
            K: serde::Deserialize<'de> + Ord,
            T: DeserializeAt<'de>,
        {
            type Value = BTreeMap<K, T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut entries = BTreeMap::new();
                while let Some(key) = map.next_key::<K>()? {
                    let value = map.next_value_seed(AtSeed::<T>::new(self.0))?;
                    entries.insert(key, value);
                }
                Ok(entries)
            }
        }
        deserializer.deserialize_map(Entries::<K, T>(version, PhantomData))
    }
}

/// What the derive's code names; not part of the API.
#[doc(hidden)]
pub mod __private {
    use std::fmt::Write as _;

    pub use super::{At, AtSeed, DeserializeAt, SerializeAt, VersionedSchema};
    pub use ::core::fmt::{Formatter, Result as FmtResult};
    pub use ::microversion::Version;
    pub use ::schemars::{Schema, SchemaGenerator};
    pub use ::serde::de::{Error as DeError, MapAccess, Visitor};
    pub use ::serde::ser::SerializeStruct;
    pub use ::serde::{Deserializer, Serializer};
    pub use ::std::vec::Vec;

    use serde::de::DeserializeSeed;
    use serde_json::{Map, Value};

    /// Whether `a` comes before `b`, when the program is compiled (the
    /// order of the versions a field's changes name).
    #[must_use]
    pub const fn version_before(a: Version, b: Version) -> bool {
        a.major() < b.major() || (a.major() == b.major() && a.minor() < b.minor())
    }

    /// A key of a body: one of the type's names (by position), or not.
    #[derive(Debug)]
    pub enum Key {
        /// `names[i]`.
        Known(usize),
        /// No version of the type has it.
        Unknown(String),
    }

    /// Reads a key, looking it up among `names`.
    #[derive(Debug)]
    pub struct KeySeed {
        names: &'static [&'static str],
    }

    impl KeySeed {
        /// Looks keys up among `names`.
        #[must_use]
        pub fn new(names: &'static [&'static str]) -> Self {
            KeySeed { names }
        }
    }

    impl<'de> DeserializeSeed<'de> for KeySeed {
        type Value = Key;

        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
            deserializer.deserialize_identifier(self)
        }
    }

    impl Visitor<'_> for KeySeed {
        type Value = Key;

        fn expecting(&self, f: &mut Formatter<'_>) -> FmtResult {
            f.write_str("a field name")
        }

        fn visit_str<E: DeError>(self, key: &str) -> Result<Key, E> {
            Ok(match self.names.iter().position(|name| *name == key) {
                Some(i) => Key::Known(i),
                None => Key::Unknown(key.to_owned()),
            })
        }
    }

    /// The error for a key the body may not have at `version`.
    pub fn refuse_field<E: DeError>(
        key: Key,
        names: &[&str],
        version: Version,
        accepted: &[&str],
    ) -> E {
        let mut message = match key {
            Key::Known(i) => format!(
                "field `{}` does not exist at version {version}; ",
                names.get(i).copied().unwrap_or_default()
            ),
            Key::Unknown(name) => format!("unknown field `{name}`; "),
        };
        if accepted.is_empty() {
            let _ = write!(message, "there are no fields at {version}");
        } else {
            let _ = write!(message, "the fields at {version} are ");
            for (i, name) in accepted.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                let _ = write!(message, "{sep}`{name}`");
            }
        }
        E::custom(message)
    }

    /// An object's schema, a property at a time.
    #[derive(Debug)]
    pub struct ObjectSchema {
        title: &'static str,
        properties: Map<String, Value>,
        required: Vec<Value>,
    }

    impl ObjectSchema {
        /// An object titled `title`, without properties yet.
        #[must_use]
        pub fn new(title: &'static str) -> Self {
            ObjectSchema {
                title,
                properties: Map::new(),
                required: Vec::new(),
            }
        }

        /// Adds the property `name`.
        pub fn property(
            &mut self,
            name: &'static str,
            schema: Schema,
            required: bool,
            description: Option<&'static str>,
        ) {
            let mut schema = schema.to_value();
            if let Some(description) = description {
                if schema == Value::Bool(true) {
                    schema = Value::Object(Map::new());
                }
                if let Value::Object(map) = &mut schema {
                    map.entry("description").or_insert(description.into());
                }
            }
            self.properties.insert(name.to_owned(), schema);
            if required {
                self.required.push(name.into());
            }
        }

        /// The schema: no property but these.
        #[must_use]
        pub fn finish(self) -> Schema {
            let mut map = Map::new();
            map.insert("title".to_owned(), self.title.into());
            map.insert("type".to_owned(), "object".into());
            map.insert("properties".to_owned(), Value::Object(self.properties));
            if !self.required.is_empty() {
                map.insert("required".to_owned(), Value::Array(self.required));
            }
            map.insert("additionalProperties".to_owned(), false.into());
            Schema::from(map)
        }
    }
}
