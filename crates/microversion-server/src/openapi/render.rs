//! The two documents of an [`ApiDescription`]: one version's, and the
//! whole range's with `x-openstack` ranges.

use std::collections::BTreeMap;

use http::StatusCode;
use microversion::profile::ErrorFormat;
use microversion::{Rules, Version};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::merge::{self, range_mark};
use super::model::{
    Components, Document, In, Info, MediaType, Operation as Op, Parameter, RequestBody, Response,
};
use super::{ApiDescription, Closed, ERROR_SCHEMA, OpenApiError, Operation, ResponseDoc, contains};
use crate::Deprecation;

/// An OpenAPI 3.1 document, made by [`ApiDescription::at`] or
/// [`ApiDescription::whole`]: serialize it (it is [`Serialize`]) or take
/// it as a JSON value.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenApiDocument {
    document: Document,
}

impl OpenApiDocument {
    /// The document as a JSON value.
    #[must_use]
    pub fn to_value(&self) -> Value {
        serde_json::to_value(&self.document).unwrap_or(Value::Null)
    }

    /// The document as indented JSON text.
    #[must_use]
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(&self.document).unwrap_or_default()
    }
}

impl Serialize for OpenApiDocument {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.document.serialize(serializer)
    }
}

/// The header the version is asked with.
const VERSION_HEADER: &str = "OpenStack-API-Version";

impl ApiDescription {
    /// The document of `version`: what exists at that version only.
    ///
    /// # Errors
    ///
    /// Returns [`OpenApiError::Unsupported`] when `version` is outside
    /// the supported range.
    pub fn at(&self, version: Version) -> Result<OpenApiDocument, OpenApiError> {
        if !self.range.contains(version) {
            return Err(OpenApiError::Unsupported {
                version,
                range: self.range,
            });
        }
        let deprecated = Deprecation::of(&self.deprecations, version).is_some();
        let mut paths: BTreeMap<String, BTreeMap<String, Op>> = BTreeMap::new();
        for op in &self.operations {
            if !contains(op.life, version) {
                continue;
            }
            let mut parameters = self.path_parameters(op);
            if !op.neutral {
                parameters.push(Parameter {
                    description: Some(format!(
                        "The version this document describes. Without the header the \
                         service serves {}, its lowest; `latest` asks for {}, its highest.",
                        self.range.min(),
                        self.range.max()
                    )),
                    required: true,
                    ..Parameter::new(
                        VERSION_HEADER,
                        In::Header,
                        json!({"type": "string", "enum": [format!("{} {version}", self.service_type)]}),
                    )
                });
            }
            if let Some((_, schema)) = op.query.iter().find(|(r, _)| contains(*r, version)) {
                parameters.extend(query_parameters(schema, &op.query_descriptions));
            }
            let request_body = op
                .body
                .iter()
                .find(|(r, _)| contains(*r, version))
                .map(|(_, schema)| json_body(schema.clone()));
            let mut responses = BTreeMap::new();
            for (_, status, response) in op
                .responses
                .iter()
                .filter(|(r, _, _)| contains(*r, version))
            {
                responses.insert(status.as_u16().to_string(), response_object(response, None));
            }
            for (_, status, description) in
                op.errors.iter().filter(|(r, _, _)| contains(*r, version))
            {
                add_error(&mut responses, *status, description, None);
            }
            if !op.neutral {
                self.add_layer_errors(&mut responses);
            }
            let going = Deprecation::of(&op.deprecations, version).is_some();
            let description = match (&op.description, deprecated, going) {
                (Some(text), true, _) => {
                    Some(format!("{text}\n\nVersion {version} is deprecated."))
                }
                (Some(text), false, true) => Some(format!(
                    "{text}\n\nThis operation is deprecated at version {version}."
                )),
                (text, _, _) => text.clone(),
            };
            paths.entry(op.path.clone()).or_default().insert(
                op.method.as_str().to_ascii_lowercase(),
                Op {
                    operation_id: op.operation_id.clone(),
                    summary: op.summary.clone(),
                    description,
                    tags: vec![op.tag.clone()],
                    parameters,
                    request_body,
                    responses,
                    deprecated: deprecated || going,
                    openstack: None,
                },
            );
        }
        let mut description = self.description.clone().unwrap_or_default();
        if !description.is_empty() {
            description.push_str("\n\n");
        }
        description.push_str(&format!(
            "The API at microversion {version} (`{VERSION_HEADER}: {} {version}`); the service \
             supports {} to {}.",
            self.service_type,
            self.range.min(),
            self.range.max()
        ));
        if deprecated {
            description.push_str(&format!(" Version {version} is deprecated."));
        }
        if let Some(change) = self.changes.iter().find(|e| e.version == version) {
            description.push_str(&format!("\n\nVersion {version}: {}", change.description));
            let made = self.made_by(version);
            if !made.is_empty() {
                description.push('\n');
                for difference in made {
                    description.push_str(&format!("\n- {difference}"));
                }
            }
        }
        Ok(OpenApiDocument {
            document: Document {
                openapi: "3.1.0",
                info: Info {
                    title: self.title.clone(),
                    version: version.to_string(),
                    description: Some(description),
                    openstack: None,
                },
                paths,
                components: Components {
                    schemas: self.components.clone(),
                },
            },
        })
    }

    /// The document of the whole range: every operation, parameter,
    /// body and response with its `x-openstack` range where it exists at
    /// part of the range only (the convention of OpenStack's own
    /// documents).
    #[must_use]
    pub fn whole(&self) -> OpenApiDocument {
        let whole: Closed = (self.range.min(), self.range.max());
        let mut paths: BTreeMap<String, BTreeMap<String, Op>> = BTreeMap::new();
        for op in &self.operations {
            let mut parameters = self.path_parameters(op);
            if !op.neutral {
                parameters.push(Parameter {
                    description: Some(format!(
                        "The version to serve: `{} X.Y` or `{} latest`. Without it the \
                         service serves {}.",
                        self.service_type,
                        self.service_type,
                        self.range.min()
                    )),
                    ..Parameter::new(VERSION_HEADER, In::Header, json!({"type": "string"}))
                });
            }
            parameters.extend(whole_query_parameters(op));
            let request_body = (!op.body.is_empty()).then(|| {
                let pieces: Vec<(Closed, &Value)> = op.body.iter().map(|(r, s)| (*r, s)).collect();
                json_body(merge::variants(&pieces, op.life))
            });
            let mut responses = BTreeMap::new();
            let mut statuses: Vec<StatusCode> = op.responses.iter().map(|(_, s, _)| *s).collect();
            statuses.sort();
            statuses.dedup();
            for status in statuses {
                let declared: Vec<(Closed, &ResponseDoc)> = op
                    .responses
                    .iter()
                    .filter(|(_, s, _)| *s == status)
                    .map(|(r, _, doc)| (*r, doc))
                    .collect();
                responses.insert(
                    status.as_u16().to_string(),
                    whole_response(&declared, op.life),
                );
            }
            let mut errors: Vec<&(Closed, StatusCode, String)> = op.errors.iter().collect();
            errors.sort_by_key(|(r, s, _)| (*s, *r));
            for (range, status, description) in errors {
                add_error(
                    &mut responses,
                    *status,
                    description,
                    range_mark(*range, op.life),
                );
            }
            if !op.neutral {
                self.add_layer_errors(&mut responses);
            }
            // Deprecated where its last version is, for the API or for it.
            let deprecated = Deprecation::of(&self.deprecations, op.life.1).is_some()
                || Deprecation::of(&op.deprecations, op.life.1).is_some();
            paths.entry(op.path.clone()).or_default().insert(
                op.method.as_str().to_ascii_lowercase(),
                Op {
                    operation_id: op.operation_id.clone(),
                    summary: op.summary.clone(),
                    description: op.description.clone(),
                    tags: vec![op.tag.clone()],
                    parameters,
                    request_body,
                    responses,
                    deprecated,
                    openstack: range_mark(op.life, whole),
                },
            );
        }
        let mut openstack = Map::new();
        openstack.insert(
            "min-ver".into(),
            Value::String(self.range.min().to_string()),
        );
        openstack.insert(
            "max-ver".into(),
            Value::String(self.range.max().to_string()),
        );
        // The highest threshold, and the versions deprecated one by one.
        if let Some(below) = self
            .deprecations
            .iter()
            .filter_map(Deprecation::below)
            .max()
        {
            openstack.insert("deprecated-below".into(), Value::String(below.to_string()));
        }
        let spans: Vec<Value> = self
            .deprecations
            .iter()
            .filter_map(Deprecation::span)
            .map(|span| Value::String(span.to_string()))
            .collect();
        if !spans.is_empty() {
            openstack.insert("deprecated-versions".into(), Value::Array(spans));
        }
        OpenApiDocument {
            document: Document {
                openapi: "3.1.0",
                info: Info {
                    title: self.title.clone(),
                    version: self.range.max().to_string(),
                    description: self.description.clone(),
                    openstack: Some(Value::Object(openstack)),
                },
                paths,
                components: Components {
                    schemas: self.components.clone(),
                },
            },
        }
    }

    fn path_parameters(&self, op: &Operation) -> Vec<Parameter> {
        op.path_parameters
            .iter()
            .map(|(name, description, schema)| Parameter {
                description: description.clone(),
                required: true,
                ..Parameter::new(name.clone(), In::Path, schema.clone())
            })
            .collect()
    }

    /// The answers of the microversion layer to a malformed or an
    /// unsupported version.
    fn add_layer_errors(&self, responses: &mut BTreeMap<String, Response>) {
        add_error(
            responses,
            self.rules.malformed_status,
            &format!("The `{VERSION_HEADER}` header is malformed."),
            None,
        );
        add_error(
            responses,
            StatusCode::NOT_ACCEPTABLE,
            &format!(
                "The version asked for is outside {} to {}.",
                self.range.min(),
                self.range.max()
            ),
            None,
        );
    }
}

fn json_body(schema: Value) -> RequestBody {
    RequestBody {
        required: true,
        content: BTreeMap::from([("application/json".to_owned(), MediaType { schema })]),
    }
}

fn response_object(response: &ResponseDoc, openstack: Option<Value>) -> Response {
    let content = response
        .content
        .iter()
        .map(|(media, schema)| {
            (
                media.clone(),
                MediaType {
                    schema: schema.clone(),
                },
            )
        })
        .collect();
    Response {
        description: response.description.clone(),
        content,
        openstack,
    }
}

/// One response over the versions it is declared at: its schemas merged
/// (properties marked with their ranges), the response marked with its
/// range when it is not answered at every version of the operation.
fn whole_response(declared: &[(Closed, &ResponseDoc)], life: Closed) -> Response {
    let range = (declared[0].0.0, declared[declared.len() - 1].0.1);
    let mark = range_mark(range, life);
    let first = declared[0].1;
    let with_body: Vec<(Closed, &Value)> = declared
        .iter()
        .filter_map(|(r, doc)| doc.content.as_ref().map(|(_, schema)| (*r, schema)))
        .collect();
    let mut response = response_object(first, mark);
    if let (Some((media, _)), false) = (&first.content, with_body.is_empty()) {
        let schema = if with_body.len() == declared.len() {
            merge::fields(&with_body)
        } else {
            // A body at some versions only: its variants, each with its range.
            merge::one_of(&with_body)
        };
        response.content = BTreeMap::from([(media.clone(), MediaType { schema })]);
    }
    response
}

/// Adds (or widens the description of) the error response `status`.
fn add_error(
    responses: &mut BTreeMap<String, Response>,
    status: StatusCode,
    description: &str,
    openstack: Option<Value>,
) {
    let key = status.as_u16().to_string();
    if let Some(existing) = responses.get_mut(&key) {
        if !existing.description.contains(description) {
            existing.description.push(' ');
            existing.description.push_str(description);
        }
        return;
    }
    responses.insert(
        key,
        Response {
            description: description.to_owned(),
            content: BTreeMap::from([(
                "application/json".to_owned(),
                MediaType {
                    schema: json!({"$ref": format!("#/components/schemas/{ERROR_SCHEMA}")}),
                },
            )]),
            openstack,
        },
    );
}

/// The error body of the profile's format.
pub(super) fn error_schema(rules: &Rules) -> Value {
    match rules.error_format {
        ErrorFormat::Fault => json!({
            "type": "object",
            "description": "One member, named after the kind of fault (`itemNotFound`).",
            "minProperties": 1,
            "maxProperties": 1,
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "code": {"type": "integer"},
                    "message": {"type": "string"}
                },
                "required": ["code", "message"]
            }
        }),
        ErrorFormat::Ironic => json!({
            "type": "object",
            "properties": {
                "error_message": {
                    "type": "string",
                    "description": "A JSON document with `faultstring`, `faultcode` and `debuginfo`."
                }
            },
            "required": ["error_message"]
        }),
        // Placement's JSON errors are API-SIG's shape. Exhaustive: a new
        // format does not compile until its schema is written here.
        ErrorFormat::ApiSig | ErrorFormat::Placement => json!({
            "type": "object",
            "properties": {
                "errors": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "status": {"type": "integer"},
                            "title": {"type": "string"},
                            "detail": {"type": "string"},
                            "code": {"type": "string"},
                            "request_id": {"type": "string"},
                            "min_version": {"type": "string"},
                            "max_version": {"type": "string"}
                        },
                        "required": ["status", "title", "detail"]
                    }
                }
            },
            "required": ["errors"]
        }),
    }
}

/// The keywords a query string schema may have: it is an object whose
/// properties are parameters.
const QUERY_KEYWORDS: [&str; 7] = [
    "type",
    "properties",
    "patternProperties",
    "additionalProperties",
    "required",
    "title",
    "description",
];

/// Why a query string schema cannot be said as parameters, if it
/// cannot.
pub(super) fn check_query_schema(schema: &Value) -> Result<(), String> {
    let Some(map) = schema.as_object() else {
        return Err("it is not a JSON object schema".to_owned());
    };
    if let Some(key) = map.keys().find(|k| !QUERY_KEYWORDS.contains(&k.as_str())) {
        return Err(format!("the keyword {key} does not map to parameters"));
    }
    if map.get("type").is_some_and(|t| t != "object") {
        return Err("its type is not object".to_owned());
    }
    for keyword in ["properties", "patternProperties"] {
        if map.get(keyword).is_some_and(|p| !p.is_object()) {
            return Err(format!("its {keyword} is not an object"));
        }
    }
    let properties = map.get("properties").and_then(Value::as_object);
    if let Some(required) = map.get("required") {
        let names = required
            .as_array()
            .ok_or_else(|| "its required is not a list".to_owned())?;
        for name in names {
            let known = name
                .as_str()
                .is_some_and(|n| properties.is_some_and(|p| p.contains_key(n)));
            if !known {
                return Err(format!(
                    "it requires {name}, which is not one of its properties"
                ));
            }
        }
    }
    Ok(())
}

/// The parameters of a query string schema (checked by
/// [`check_query_schema`]): one per property, and one free-form object
/// per pattern, named by its pattern.
fn query_parameters(schema: &Value, descriptions: &BTreeMap<String, String>) -> Vec<Parameter> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            out.push(Parameter {
                description: descriptions.get(name).cloned(),
                required: required.contains(&name.as_str()),
                ..Parameter::new(name.clone(), In::Query, property.clone())
            });
        }
    }
    if let Some(Value::Object(patterns)) = schema.get("patternProperties") {
        for (pattern, property) in patterns {
            let mut member = Map::new();
            member.insert(pattern.clone(), property.clone());
            out.push(Parameter {
                description: Some(descriptions.get(pattern).cloned().unwrap_or_else(|| {
                    format!("Any parameters whose names match `{pattern}`.")
                })),
                style: Some("form"),
                explode: Some(true),
                ..Parameter::new(
                    pattern.clone(),
                    In::Query,
                    json!({"type": "object", "patternProperties": member, "additionalProperties": false}),
                )
            });
        }
    }
    out
}

/// The query parameters over the operation's versions: each with its
/// range, its schema's variants, and required where it is required at
/// every version it exists.
fn whole_query_parameters(op: &Operation) -> Vec<Parameter> {
    // Name → (piece index, range, parameter), in first-seen order.
    type Held = Vec<(usize, Closed, Parameter)>;
    let mut seen: Vec<(String, Held)> = Vec::new();
    for (i, (range, schema)) in op.query.iter().enumerate() {
        for param in query_parameters(schema, &op.query_descriptions) {
            match seen.iter_mut().find(|(name, _)| *name == param.name) {
                Some((_, held)) => held.push((i, *range, param)),
                None => seen.push((param.name.clone(), vec![(i, *range, param)])),
            }
        }
    }
    let mut out = Vec::new();
    for (_, held) in seen {
        let pieces: Vec<(Closed, &Value)> = held.iter().map(|(_, r, p)| (*r, &p.schema)).collect();
        let range = (held[0].1.0, held[held.len() - 1].1.1);
        // Gone and back: a parameter has one range, so its schema's
        // variants say when it exists.
        let contiguous = held.windows(2).all(|pair| pair[1].0 == pair[0].0 + 1);
        let mut param = held[0].2.clone();
        param.required = held.iter().all(|(_, _, p)| p.required) && range == op.life;
        param.schema = if contiguous {
            merge::variants(&pieces, range)
        } else {
            merge::one_of(&merge::coalesce(&pieces))
        };
        param.openstack = range_mark(range, op.life);
        out.push(param);
    }
    out
}
