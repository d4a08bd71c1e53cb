//! The parts of an OpenAPI 3.1 document the generator writes, as types
//! that serialize to it. Schemas stay JSON values: they are JSON Schema
//! 2020-12, which OpenAPI 3.1 takes as it is.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// A whole document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Document {
    pub(crate) openapi: &'static str,
    pub(crate) info: Info,
    pub(crate) paths: BTreeMap<String, PathItem>,
    #[serde(skip_serializing_if = "Components::is_empty")]
    pub(crate) components: Components,
}

/// The document's `info`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Info {
    pub(crate) title: String,
    pub(crate) version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    #[serde(rename = "x-openstack", skip_serializing_if = "Option::is_none")]
    pub(crate) openstack: Option<Value>,
}

/// The operations of one path, by lowercase method.
pub(crate) type PathItem = BTreeMap<String, Operation>;

/// One operation.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Operation {
    pub(crate) operation_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    pub(crate) tags: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) parameters: Vec<Parameter>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) request_body: Option<RequestBody>,
    pub(crate) responses: BTreeMap<String, Response>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) deprecated: bool,
    #[serde(rename = "x-openstack", skip_serializing_if = "Option::is_none")]
    pub(crate) openstack: Option<Value>,
}

/// Where a parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum In {
    Path,
    Query,
    Header,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Parameter {
    pub(crate) name: String,
    #[serde(rename = "in")]
    pub(crate) location: In,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    pub(crate) schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) style: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) explode: Option<bool>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) deprecated: bool,
    #[serde(rename = "x-openstack", skip_serializing_if = "Option::is_none")]
    pub(crate) openstack: Option<Value>,
}

impl Parameter {
    /// A parameter that is not required, with nothing but its schema.
    pub(crate) fn new(name: impl Into<String>, location: In, schema: Value) -> Self {
        Parameter {
            name: name.into(),
            location,
            description: None,
            required: false,
            schema,
            style: None,
            explode: None,
            deprecated: false,
            openstack: None,
        }
    }
}

/// A request body.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct RequestBody {
    pub(crate) required: bool,
    pub(crate) content: BTreeMap<String, MediaType>,
}

/// The schema of one media type.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct MediaType {
    pub(crate) schema: Value,
}

/// One response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Response {
    pub(crate) description: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) content: BTreeMap<String, MediaType>,
    #[serde(rename = "x-openstack", skip_serializing_if = "Option::is_none")]
    pub(crate) openstack: Option<Value>,
}

/// Shared schemas.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Components {
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub(crate) schemas: Map<String, Value>,
}

impl Components {
    fn is_empty(&self) -> bool {
        self.schemas.is_empty()
    }
}
