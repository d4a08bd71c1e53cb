//! What changed between two OpenAPI 3.1 documents of a microversioned
//! API, operation by operation, and whether each change keeps the clients
//! of the older document working.
//!
//! Two uses, one comparison ([`compare`]):
//!
//! - **A released version stays as it was.** Its document is committed
//!   when it is released; a test compares the committed document with the
//!   one the code makes now. A change a client of the committed document
//!   would notice ([`Delta::breaking`]: an operation, parameter, status or
//!   property removed or changed, a request requirement added) means the
//!   change belongs in a new microversion.
//! - **What a version changed.** The documents of two versions of one API
//!   (`microversion diff`) list what a client moving from one to the
//!   other meets.
//!
//! Text meant for people (`description`, `summary`, `title`, examples) and
//! extension keys (`x-...`) are not compared: rewording the docs changes
//! no contract. Nor is the version header parameter
//! (`OpenStack-API-Version`, and the legacy `X-OpenStack-...-API-Version`),
//! which names the document's own version.
//!
//! ```
//! use serde_json::json;
//!
//! let old = json!({"paths": {"/widgets/{id}": {"get": {"responses": {"200": {
//!     "description": "The widget",
//!     "content": {"application/json": {"schema": {
//!         "type": "object",
//!         "properties": {"id": {"type": "integer"}, "title": {"type": "string"}},
//!         "required": ["id", "title"]
//!     }}}
//! }}}}}});
//! let mut new = old.clone();
//! let schema = &mut new["paths"]["/widgets/{id}"]["get"]["responses"]["200"]["content"]
//!     ["application/json"]["schema"];
//! schema["properties"].as_object_mut().unwrap().remove("title");
//! schema["required"] = json!(["id"]);
//!
//! let deltas = microversion_contract::compare(&old, &new);
//! let shown: Vec<String> = deltas.iter().map(ToString::to_string).collect();
//! assert_eq!(shown, ["GET /widgets/{id}: 200 response body `title` removed"]);
//! assert!(deltas[0].breaking);
//! ```

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

/// One difference between two documents.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delta {
    /// The operation (`GET /resource_providers/{uuid}`), or `components`
    /// for a shared schema.
    pub operation: String,
    /// The part of it that differs (`query parameter \`limit\``,
    /// `request body \`name\``, `200 response body \`links[].rel\``);
    /// empty for the whole operation.
    pub part: String,
    /// How it differs.
    pub kind: Kind,
    /// Whether a client written against the older document can break.
    pub breaking: bool,
}

/// How a part differs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// Only the newer document has it.
    Added,
    /// Only the older document has it.
    Removed,
    /// Both have it, and a keyword of it differs (`None`: absent on that
    /// side).
    Changed {
        /// The keyword (`type`, `required`, `maxLength`).
        keyword: String,
        /// Its value in the older document.
        old: Option<Value>,
        /// Its value in the newer document.
        new: Option<Value>,
    },
}

impl fmt::Display for Delta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subject = if self.part.is_empty() {
            self.operation.clone()
        } else {
            format!("{}: {}", self.operation, self.part)
        };
        match &self.kind {
            Kind::Added => write!(f, "{subject} added"),
            Kind::Removed => write!(f, "{subject} removed"),
            Kind::Changed { keyword, old, new } => {
                let shown = |value: &Option<Value>| match value {
                    Some(value) => short(value),
                    None => "nothing".to_owned(),
                };
                write!(
                    f,
                    "{subject}: `{keyword}` changed from {} to {}",
                    shown(old),
                    shown(new)
                )
            }
        }
    }
}

/// A value in one line, cut short.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        return text;
    }
    let cut: String = text.chars().take(57).collect();
    format!("{cut}...")
}

/// Which way a schema's values travel: what the server accepts may grow,
/// what it answers may not lose anything.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Request,
    Response,
}

/// Keys that describe for people, or extend: never a contract change.
fn is_annotation(key: &str) -> bool {
    matches!(
        key,
        "description" | "summary" | "title" | "example" | "examples" | "$comment" | "externalDocs"
    ) || key.starts_with("x-")
}

/// Everything that differs from `old` to `new`, two OpenAPI 3.1 documents
/// (the same version of one API, or two versions), by path, then method,
/// then the shared schemas.
#[must_use]
pub fn compare(old: &Value, new: &Value) -> Vec<Delta> {
    let mut out = Out(Vec::new());
    let paths = |doc: &'_ Value| doc.get("paths").and_then(Value::as_object).cloned();
    let (old_paths, new_paths) = (
        paths(old).unwrap_or_default(),
        paths(new).unwrap_or_default(),
    );
    let mut all_paths = union(&old_paths, &new_paths);
    all_paths.sort();
    for path in all_paths {
        let methods = |paths: &Map<String, Value>| {
            paths
                .get(&path)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let (old_ops, new_ops) = (methods(&old_paths), methods(&new_paths));
        for method in union(&old_ops, &new_ops) {
            if !is_method(&method) {
                continue;
            }
            let operation = format!("{} {path}", method.to_ascii_uppercase());
            match (old_ops.get(&method), new_ops.get(&method)) {
                (Some(_), None) => out.push(&operation, String::new(), Kind::Removed, true),
                (None, Some(_)) => out.push(&operation, String::new(), Kind::Added, false),
                (Some(a), Some(b)) => {
                    operation_delta(&operation, a, b, &mut out);
                }
                (None, None) => {}
            }
        }
    }
    let schemas = |doc: &Value| {
        doc.pointer("/components/schemas")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (old_schemas, new_schemas) = (schemas(old), schemas(new));
    for name in union(&old_schemas, &new_schemas) {
        let part = format!("schema `{name}`");
        match (old_schemas.get(&name), new_schemas.get(&name)) {
            (Some(_), None) => out.push("components", part, Kind::Removed, true),
            (None, Some(_)) => out.push("components", part, Kind::Added, false),
            (Some(a), Some(b)) => {
                // Shared schemas may be answered: read as a response's.
                schema("components", &part, "", Side::Response, a, b, &mut out);
            }
            (None, None) => {}
        }
    }
    out.0
}

struct Out(Vec<Delta>);

impl Out {
    fn push(&mut self, operation: &str, part: String, kind: Kind, breaking: bool) {
        self.0.push(Delta {
            operation: operation.to_owned(),
            part,
            kind,
            breaking,
        });
    }
}

/// Whether `parameter` is the header that asks for the version.
fn is_version_header(parameter: &Value) -> bool {
    let name = parameter
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    parameter.get("in").and_then(Value::as_str) == Some("header")
        && (name == "openstack-api-version"
            || (name.starts_with("x-openstack-") && name.ends_with("-api-version")))
}

fn is_method(key: &str) -> bool {
    matches!(
        key,
        "get" | "put" | "post" | "delete" | "patch" | "head" | "options" | "trace"
    )
}

/// The keys of both maps, each once, in order.
fn union(a: &Map<String, Value>, b: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = a.keys().cloned().collect();
    keys.extend(b.keys().filter(|k| !a.contains_key(*k)).cloned());
    keys
}

fn operation_delta(operation: &str, old: &Value, new: &Value, out: &mut Out) {
    // Parameters, by where they are and their name.
    let parameters = |op: &Value| -> Map<String, Value> {
        op.get("parameters")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter(|p| !is_version_header(p))
                    .map(|p| {
                        let place = p.get("in").and_then(Value::as_str).unwrap_or("?");
                        let name = p.get("name").and_then(Value::as_str).unwrap_or("?");
                        (format!("{place} parameter `{name}`"), p.clone())
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old_params, new_params) = (parameters(old), parameters(new));
    for key in union(&old_params, &new_params) {
        let required = |p: &Value| p.get("required").and_then(Value::as_bool) == Some(true);
        match (old_params.get(&key), new_params.get(&key)) {
            (Some(_), None) => out.push(operation, key, Kind::Removed, true),
            (None, Some(p)) => out.push(operation, key, Kind::Added, required(p)),
            (Some(a), Some(b)) => {
                if required(a) != required(b) {
                    out.push(
                        operation,
                        key.clone(),
                        Kind::Changed {
                            keyword: "required".into(),
                            old: Some(Value::Bool(required(a))),
                            new: Some(Value::Bool(required(b))),
                        },
                        required(b),
                    );
                }
                if let (Some(sa), Some(sb)) = (a.get("schema"), b.get("schema")) {
                    schema(operation, &key, "", Side::Request, sa, sb, out);
                }
            }
            (None, None) => {}
        }
    }
    // The request body.
    match (old.get("requestBody"), new.get("requestBody")) {
        (Some(_), None) => out.push(operation, "request body".into(), Kind::Removed, true),
        (None, Some(body)) => {
            let required = body.get("required").and_then(Value::as_bool) == Some(true);
            out.push(operation, "request body".into(), Kind::Added, required);
        }
        (Some(a), Some(b)) => content(operation, "request", Side::Request, a, b, out),
        (None, None) => {}
    }
    // The responses, by status.
    let responses = |op: &Value| {
        op.get("responses")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (old_responses, new_responses) = (responses(old), responses(new));
    for status in union(&old_responses, &new_responses) {
        let part = format!("{status} response");
        match (old_responses.get(&status), new_responses.get(&status)) {
            (Some(_), None) => out.push(operation, part, Kind::Removed, true),
            (None, Some(_)) => out.push(operation, part, Kind::Added, false),
            (Some(a), Some(b)) => content(operation, &part, Side::Response, a, b, out),
            (None, None) => {}
        }
    }
}

/// A request's or a response's body, by media type (`part`: `request`,
/// `200 response`).
fn content(operation: &str, part: &str, side: Side, old: &Value, new: &Value, out: &mut Out) {
    let media = |v: &Value| {
        v.get("content")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (old_media, new_media) = (media(old), media(new));
    let single = old_media.len() <= 1 && new_media.len() <= 1;
    for kind in union(&old_media, &new_media) {
        let body = if single {
            format!("{part} body")
        } else {
            format!("{part} body ({kind})")
        };
        match (old_media.get(&kind), new_media.get(&kind)) {
            (Some(_), None) => out.push(operation, body, Kind::Removed, true),
            (None, Some(_)) => out.push(operation, body, Kind::Added, side == Side::Request),
            (Some(a), Some(b)) => {
                if let (Some(sa), Some(sb)) = (a.get("schema"), b.get("schema")) {
                    schema(operation, &body, "", side, sa, sb, out);
                }
            }
            (None, None) => {}
        }
    }
    if side == Side::Request {
        let required = |v: &Value| v.get("required").and_then(Value::as_bool) == Some(true);
        if required(old) != required(new) {
            out.push(
                operation,
                format!("{part} body"),
                Kind::Changed {
                    keyword: "required".into(),
                    old: Some(Value::Bool(required(old))),
                    new: Some(Value::Bool(required(new))),
                },
                required(new),
            );
        }
    }
}

/// Where in a schema: `part` and, inside it, the property path.
fn located(part: &str, path: &str) -> String {
    if path.is_empty() {
        part.to_owned()
    } else {
        format!("{part} `{path}`")
    }
}

fn joined(path: &str, next: &str) -> String {
    if path.is_empty() {
        next.to_owned()
    } else if next.starts_with('[') || next.starts_with('<') {
        format!("{path}{next}")
    } else {
        format!("{path}.{next}")
    }
}

/// The names in a schema's `required`.
fn required_names(schema: &Map<String, Value>) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn schema(
    operation: &str,
    part: &str,
    path: &str,
    side: Side,
    old: &Value,
    new: &Value,
    out: &mut Out,
) {
    if old == new {
        return;
    }
    let (Some(a), Some(b)) = (old.as_object(), new.as_object()) else {
        // `true`, `false` or another value in place of a schema.
        out.push(
            operation,
            located(part, path),
            Kind::Changed {
                keyword: "schema".into(),
                old: Some(old.clone()),
                new: Some(new.clone()),
            },
            true,
        );
        return;
    };
    let (old_required, new_required) = (required_names(a), required_names(b));
    let properties = |s: &Map<String, Value>| {
        s.get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (old_props, new_props) = (properties(a), properties(b));
    for name in union(&old_props, &new_props) {
        let at = joined(path, &name);
        match (old_props.get(&name), new_props.get(&name)) {
            (Some(_), None) => out.push(operation, located(part, &at), Kind::Removed, true),
            (None, Some(_)) => {
                // A client sending the old body does not send it.
                let breaking = side == Side::Request && new_required.contains(&name);
                out.push(operation, located(part, &at), Kind::Added, breaking);
            }
            (Some(pa), Some(pb)) => {
                let (was, is) = (old_required.contains(&name), new_required.contains(&name));
                if was != is {
                    let breaking = match side {
                        Side::Request => is,
                        Side::Response => was,
                    };
                    out.push(
                        operation,
                        located(part, &at),
                        Kind::Changed {
                            keyword: "required".into(),
                            old: Some(Value::Bool(was)),
                            new: Some(Value::Bool(is)),
                        },
                        breaking,
                    );
                }
                schema(operation, part, &at, side, pa, pb, out);
            }
            (None, None) => {}
        }
    }
    match (a.get("items"), b.get("items")) {
        (Some(ia), Some(ib)) => schema(operation, part, &joined(path, "[]"), side, ia, ib, out),
        (None, None) => {}
        (ia, ib) => changed(operation, part, path, "items", ia, ib, true, out),
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        match (
            a.get(key).and_then(Value::as_array),
            b.get(key).and_then(Value::as_array),
        ) {
            (Some(la), Some(lb)) if la.len() == lb.len() => {
                for (i, (va, vb)) in la.iter().zip(lb).enumerate() {
                    let at = joined(path, &format!("<{key} {i}>"));
                    schema(operation, part, &at, side, va, vb, out);
                }
            }
            _ => {
                if a.get(key) != b.get(key) {
                    changed(
                        operation,
                        part,
                        path,
                        key,
                        a.get(key),
                        b.get(key),
                        true,
                        out,
                    );
                }
            }
        }
    }
    let handled = ["properties", "required", "items", "anyOf", "oneOf", "allOf"];
    let mut keys: Vec<&String> = a
        .keys()
        .chain(b.keys().filter(|k| !a.contains_key(*k)))
        .collect();
    keys.retain(|k| !handled.contains(&k.as_str()) && !is_annotation(k));
    for key in keys {
        let (va, vb) = (a.get(key), b.get(key));
        if va == vb {
            continue;
        }
        // A request that accepted only the listed properties may accept
        // more: nothing an old client sends is refused.
        let loosened = key == "additionalProperties"
            && side == Side::Request
            && va == Some(&Value::Bool(false))
            && vb != Some(&Value::Bool(false));
        changed(operation, part, path, key, va, vb, !loosened, out);
    }
}

#[allow(clippy::too_many_arguments)]
fn changed(
    operation: &str,
    part: &str,
    path: &str,
    keyword: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    breaking: bool,
    out: &mut Out,
) {
    out.push(
        operation,
        located(part, path),
        Kind::Changed {
            keyword: keyword.to_owned(),
            old: old.cloned(),
            new: new.cloned(),
        },
        breaking,
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc(op: &Value) -> Value {
        json!({"paths": {"/a": {"post": op}}, "components": {"schemas": {}}})
    }

    fn body(schema: &Value) -> Value {
        json!({"content": {"application/json": {"schema": schema}}, "required": true})
    }

    fn shown(old: &Value, new: &Value) -> Vec<(String, bool)> {
        compare(old, new)
            .iter()
            .map(|d| (d.to_string(), d.breaking))
            .collect()
    }

    #[test]
    fn operations_added_and_removed() {
        let old = json!({"paths": {"/a": {"get": {}}, "/b": {"get": {}}}});
        let new = json!({"paths": {"/a": {"get": {}, "put": {}}}});
        assert_eq!(
            shown(&old, &new),
            [
                ("PUT /a added".to_owned(), false),
                ("GET /b removed".to_owned(), true)
            ]
        );
    }

    #[test]
    fn a_request_may_accept_more_but_not_require_more() {
        let old = doc(&json!({"requestBody": body(&json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": false
        }))}));
        let mut new = old.clone();
        let schema =
            &mut new["paths"]["/a"]["post"]["requestBody"]["content"]["application/json"]["schema"];
        schema["properties"]["size"] = json!({"type": "integer"});
        assert_eq!(
            shown(&old, &new),
            [("POST /a: request body `size` added".to_owned(), false)]
        );
        let schema =
            &mut new["paths"]["/a"]["post"]["requestBody"]["content"]["application/json"]["schema"];
        schema["required"] = json!(["name", "size"]);
        let again = new.clone();
        assert_eq!(
            shown(&old, &again),
            [("POST /a: request body `size` added".to_owned(), true)]
        );
        let schema =
            &mut new["paths"]["/a"]["post"]["requestBody"]["content"]["application/json"]["schema"];
        schema["properties"]["name"]["maxLength"] = json!(10);
        schema["additionalProperties"] = json!(true);
        schema["description"] = json!("Reworded.");
        assert_eq!(
            shown(&old, &new),
            [
                (
                    "POST /a: request body `name`: `maxLength` changed from nothing to 10"
                        .to_owned(),
                    true
                ),
                ("POST /a: request body `size` added".to_owned(), true),
                (
                    "POST /a: request body: `additionalProperties` changed from false to true"
                        .to_owned(),
                    false
                ),
            ]
        );
    }

    #[test]
    fn an_answer_may_grow_but_not_lose() {
        let answer = |schema: Value| doc(&json!({"responses": {"200": body(&schema)}}));
        let old = answer(json!({
            "type": "object",
            "properties": {"links": {"type": "array", "items": {
                "type": "object", "properties": {"rel": {"type": "string"}}, "required": ["rel"]
            }}},
            "required": ["links"]
        }));
        let new = answer(json!({
            "type": "object",
            "properties": {
                "links": {"type": "array", "items": {"type": "object", "properties": {"rel": {"type": "integer"}}}},
                "next": {"type": "string"}
            },
            "required": ["links", "next"]
        }));
        assert_eq!(
            shown(&old, &new),
            [
                (
                    "POST /a: 200 response body `links[].rel`: `required` changed from true to false"
                        .to_owned(),
                    true
                ),
                (
                    "POST /a: 200 response body `links[].rel`: `type` changed from \"string\" to \"integer\""
                        .to_owned(),
                    true
                ),
                ("POST /a: 200 response body `next` added".to_owned(), false),
            ]
        );
    }

    #[test]
    fn parameters_statuses_and_shared_schemas() {
        let old = json!({
            "paths": {"/a": {"get": {
                "parameters": [
                    {"in": "query", "name": "limit", "schema": {"type": "string"}},
                    {"in": "header", "name": "OpenStack-API-Version", "required": true,
                     "schema": {"enum": ["widgets 1.1"]}}
                ],
                "responses": {"200": {"description": "ok"}, "404": {"description": "none"}}
            }}},
            "components": {"schemas": {"E": {"type": "object"}}}
        });
        let new = json!({
            "paths": {"/a": {"get": {
                "parameters": [
                    {"in": "header", "name": "OpenStack-API-Version", "required": true,
                     "schema": {"enum": ["widgets 1.2"]}},
                    {"in": "query", "name": "limit", "required": true, "schema": {"type": "string"}},
                    {"in": "query", "name": "page", "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "reworded"}, "409": {"description": "busy"}}
            }}},
            "components": {"schemas": {}}
        });
        assert_eq!(
            shown(&old, &new),
            [
                (
                    "GET /a: query parameter `limit`: `required` changed from false to true"
                        .to_owned(),
                    true
                ),
                ("GET /a: query parameter `page` added".to_owned(), false),
                ("GET /a: 404 response removed".to_owned(), true),
                ("GET /a: 409 response added".to_owned(), false),
                ("components: schema `E` removed".to_owned(), true),
            ]
        );
        assert!(compare(&old, &old).is_empty());
    }
}
