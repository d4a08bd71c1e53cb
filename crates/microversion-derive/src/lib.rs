//! `#[derive(Versioned)]`: one Rust type for every microversion of an
//! API.
//!
//! Use it through `microversion-server` (feature `derive`), which
//! re-exports the derive and holds the traits it implements and their
//! documentation (`microversion_server::versioned`): the code it makes
//! names that crate's paths.
//!
//! On a struct with named fields, with `#[versioned(response)]`,
//! `#[versioned(request)]` or both:
//!
//! - `#[versioned(since = "1.1")]`: the field exists from 1.1 on;
//!   `since = CHANGE`: from the version of a `microversion::Change` const;
//! - `#[versioned(until = "1.4")]`: 1.4 is the last version it exists in;
//! - `#[versioned(removed = "1.5")]` or `removed = CHANGE`: it is gone
//!   from that version on;
//! - `#[versioned(rename = "name")]`: its name on the wire;
//! - `#[versioned(form(versions = "1.0 - 1.2", rename = "title", via = Type))]`:
//!   at those versions it has another name, or stands on the wire as
//!   `Type` (`From<&Field>` for a response, `Into<Field>` for a request),
//!   or both;
//! - `#[versioned(nested)]`: its type is versioned too (or a `Vec`,
//!   `Option`, `Box` or map of one), taken at the same version;
//! - `#[versioned(default)]`: a request may leave it out (an `Option`
//!   may always).
//!
//! The version literals are read by the `microversion` crate's parser
//! when the program is compiled: a malformed one, an empty span, a form
//! reaching outside its field's versions, two forms over one version and
//! two fields with one name at one version are compile errors. A change's
//! version is read from its const when the program is compiled: the
//! order of a field's bounds and forms is checked then, by const
//! assertions the derive emits.

mod expand;
mod model;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `VersionedSchema`, and `SerializeAt` (a response) or
/// `DeserializeAt` (a request) or both, from one definition; see
/// `microversion_server::versioned`.
#[proc_macro_derive(Versioned, attributes(versioned))]
pub fn derive_versioned(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match model::read(&input) {
        Ok(container) => expand::expand(&container).into(),
        Err(error) => error.to_compile_error().into(),
    }
}
