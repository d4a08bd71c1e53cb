//! Deeply nested request bodies (issue #26): every PUT and POST of the
//! API, at its first and last microversion, is sent runs of `[` 128,
//! 1,000, 1,001 and 100,000 levels deep and as deep as the body limit
//! allows (1 MiB of `[`), and well-formed values nested 1,000, 1,001 and
//! 100,000 levels deep under one of its fields. Each is answered 400, and
//! the service answers the request that follows.
//!
//! A body is read at most 1000 levels deep. To there it is read as
//! Python's `json` reads it (an unclosed run is `Expecting value` at its
//! end, a well-formed value reaches the schema); deeper, it is refused at
//! the bracket that opens level 1001. Before that bound a body of 100,000
//! `[` overflowed the stack and killed the process: the request after each
//! deep body is what shows the service still lives (here, in one process
//! with the test, the overflow aborts the test binary).
//!
//! The routes that take no body at some version (`PUT
//! /resource_classes/{name}` from 1.7, `PUT /traits/{name}`) are sent the
//! same bodies: they do not read them and answer as without one.

mod support;

use std::time::Duration;

use placement::config::DEFAULT_MAX_BODY_SIZE;
use reqwest::Method;
use support::{Resp, Server, uuid};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The deepest nesting of arrays and objects the service reads.
const MAX_DEPTH: usize = 1000;

/// The start of the detail of a body nested deeper than [`MAX_DEPTH`].
const TOO_DEEP: &str =
    "Malformed JSON: Nested too deeply (at most 1000 levels of arrays and objects) at: ";

/// The depths of the unclosed runs of `[`: under the bound, at it, one
/// past it, 100,000, and the whole default body limit.
const RUNS: [usize; 5] = [
    128,
    MAX_DEPTH,
    MAX_DEPTH + 1,
    100_000,
    DEFAULT_MAX_BODY_SIZE,
];

/// The provider generation, which many bodies require.
const GENERATION: &str = r#""resource_provider_generation": 0, "#;

/// The depths of the well-formed bodies.
const NESTED: [usize; 3] = [MAX_DEPTH, MAX_DEPTH + 1, 100_000];

/// Python's words for the place of the 0-based char `offset` of a
/// document of one line.
fn at(offset: usize) -> String {
    format!("line 1 column {} (char {offset})", offset + 1)
}

/// A well-formed body nested `depth` levels deep, and the offset of the
/// bracket that opens level `MAX_DEPTH + 1` (when it is that deep). With a
/// field, the body is an object (the first level) holding `others` (the
/// body's other required members, JSON text ending in `, `) and `field`,
/// where arrays nest; without one, the body is the arrays.
fn nested(others: &str, field: Option<&str>, depth: usize) -> (String, usize) {
    match field {
        Some(field) => {
            let open = format!("{{{others}\"{field}\": ");
            // Level 1 is the `{` at 0, level k >= 2 the `[` at
            // open.len() + k - 2.
            let deepest = open.len() + MAX_DEPTH - 1;
            let arrays = depth - 1;
            let body = format!("{open}{}{}}}", "[".repeat(arrays), "]".repeat(arrays));
            (body, deepest)
        }
        None => (
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
            MAX_DEPTH,
        ),
    }
}

/// The first characters of `text`, for failure messages (a refused deep
/// value may be quoted whole).
fn short(text: &str) -> &str {
    text.char_indices()
        .nth(600)
        .map_or(text, |(end, _)| &text[..end])
}

/// A fresh custom name (resource class or trait).
fn custom_name() -> String {
    format!("CUSTOM_DEEP_{}", uuid().replace('-', "").to_uppercase())
}

/// A route that reads its body, at one version.
struct Reads {
    method: Method,
    path: String,
    version: &'static str,
    /// The other members a well-formed body needs (so that the schema
    /// reaches `field`), as JSON text ending in `, `.
    others: &'static str,
    /// A member of the body whose schema refuses a list of lists; `None`
    /// where the body itself is a list (aggregates before 1.19).
    field: Option<String>,
}

impl Reads {
    fn new(method: Method, path: impl Into<String>, version: &'static str, field: &str) -> Reads {
        Reads {
            method,
            path: path.into(),
            version,
            others: "",
            field: Some(field.to_owned()),
        }
    }

    /// A route whose body is itself a list.
    fn list(method: Method, path: impl Into<String>, version: &'static str) -> Reads {
        Reads {
            field: None,
            ..Reads::new(method, path, version, "")
        }
    }

    /// With `others` in the well-formed bodies.
    fn besides(self, others: &'static str) -> Reads {
        Reads { others, ..self }
    }

    fn what(&self) -> String {
        format!("{} {} at {}", self.method, self.path, self.version)
    }
}

/// A 400 with an errors body whose detail holds `expected`.
fn assert_refused(r: &Resp, expected: &str, what: &str) {
    assert_eq!(r.status, 400, "{what}: {}", short(&r.text));
    assert_eq!(
        r.body["errors"][0]["status"],
        400,
        "{what}: {}",
        short(&r.text)
    );
    assert_eq!(
        r.body["errors"][0]["title"],
        "Bad Request",
        "{what}: {}",
        short(&r.text)
    );
    assert!(
        r.message().contains(expected),
        "{what}: the detail {:?} lacks {expected:?}",
        short(r.message())
    );
}

/// The service answers a simple request after `what`.
async fn assert_serving(s: &Server, what: &str) {
    let r = s.get("/", "1.0").await;
    assert_eq!(r.status, 200, "after {what}: {r:?}");
    assert!(r.body["versions"].is_array(), "after {what}: {r:?}");
}

/// A request declaring a body one byte over the default limit is 413
/// whatever the body holds. The bytes are not sent: the service answers
/// from `Content-Length` without reading them and closes the connection,
/// and bytes still arriving at a closed socket would make it reset the
/// connection, perhaps before the client has read the answer.
async fn assert_over_limit(s: &Server, method: &Method, path: &str, version: &str) {
    let what = format!("{method} {path} at {version} over the limit");
    let addr = s.base.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nx-auth-token: admin\r\n\
         openstack-api-version: placement {version}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        DEFAULT_MAX_BODY_SIZE + 1
    );
    conn.write_all(head.as_bytes())
        .await
        .expect("the head is sent");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), conn.read_to_end(&mut answer))
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer"))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{what}: {answer}");
    assert!(
        answer.contains(&format!("limit of {DEFAULT_MAX_BODY_SIZE} bytes")),
        "{what}: {answer}"
    );
    assert_serving(s, &what).await;
}

/// Sends every deep body to a route that reads it.
async fn assert_reads_deep_bodies(s: &Server, t: &Reads) {
    for depth in RUNS {
        let what = format!("{}, {depth} unclosed `[`", t.what());
        let r = s
            .call_raw(t.method.clone(), &t.path, t.version, "[".repeat(depth))
            .await;
        let expected = if depth <= MAX_DEPTH {
            format!("Malformed JSON: Expecting value: {}", at(depth))
        } else {
            format!("{TOO_DEEP}{}", at(MAX_DEPTH))
        };
        assert_refused(&r, &expected, &what);
        assert_serving(s, &what).await;
    }
    for depth in NESTED {
        let what = format!("{}, {depth} levels well-formed", t.what());
        let (body, deepest) = nested(t.others, t.field.as_deref(), depth);
        let r = s.call_raw(t.method.clone(), &t.path, t.version, body).await;
        if depth <= MAX_DEPTH {
            // Read whole, and refused by the schema at the deep value: no
            // member takes a list of lists.
            assert_refused(&r, " is not of type ", &what);
            assert!(
                r.message().starts_with("JSON does not validate: "),
                "{what}: {}",
                short(r.message())
            );
        } else {
            assert_refused(&r, &format!("{TOO_DEEP}{}", at(deepest)), &what);
        }
        assert_serving(s, &what).await;
    }
    assert_over_limit(s, &t.method, &t.path, t.version).await;
}

/// Sends every deep body to a route that takes none at `version`, at a
/// fresh path each time; each is answered `status`.
async fn assert_ignores_deep_bodies(
    s: &Server,
    path: impl Fn() -> String,
    version: &str,
    status: u16,
) {
    let bodies = RUNS
        .iter()
        .map(|&depth| (format!("{depth} unclosed `[`"), "[".repeat(depth)))
        .chain(NESTED.iter().map(|&depth| {
            let (body, _) = nested("", Some("name"), depth);
            (format!("{depth} levels well-formed"), body)
        }));
    for (shape, body) in bodies {
        let path = path();
        let what = format!("PUT {path} at {version}, {shape}");
        let r = s.call_raw(Method::PUT, &path, version, body).await;
        assert_eq!(r.status, status, "{what}: {}", short(&r.text));
        assert_serving(s, &what).await;
    }
    assert_over_limit(s, &Method::PUT, &path(), version).await;
}

#[tokio::test]
async fn provider_routes_refuse_deep_bodies() {
    let s = Server::start().await;
    // The provider the paths name exists: the inventory and provider
    // updates look it up before they read the body (a missing one is 404).
    let rp = uuid();
    s.provider(&rp, None).await;
    let mut routes = Vec::new();
    for version in ["1.0", "1.39"] {
        routes.extend([
            Reads::new(Method::POST, "/resource_providers", version, "name"),
            Reads::new(
                Method::PUT,
                format!("/resource_providers/{rp}"),
                version,
                "name",
            ),
            Reads::new(
                Method::POST,
                format!("/resource_providers/{rp}/inventories"),
                version,
                "resource_class",
            )
            .besides(r#""total": 1, "#),
            Reads::new(
                Method::PUT,
                format!("/resource_providers/{rp}/inventories"),
                version,
                "inventories",
            )
            .besides(GENERATION),
            Reads::new(
                Method::PUT,
                format!("/resource_providers/{rp}/inventories/VCPU"),
                version,
                "total",
            )
            .besides(GENERATION),
        ]);
    }
    // Aggregates from 1.1: a list of uuids until 1.18, an object from 1.19.
    routes.push(Reads::list(
        Method::PUT,
        format!("/resource_providers/{rp}/aggregates"),
        "1.1",
    ));
    routes.push(
        Reads::new(
            Method::PUT,
            format!("/resource_providers/{rp}/aggregates"),
            "1.39",
            "aggregates",
        )
        .besides(GENERATION),
    );
    // Provider traits from 1.6.
    for version in ["1.6", "1.39"] {
        routes.push(
            Reads::new(
                Method::PUT,
                format!("/resource_providers/{rp}/traits"),
                version,
                "traits",
            )
            .besides(GENERATION),
        );
    }
    for route in &routes {
        assert_reads_deep_bodies(&s, route).await;
    }
    // Nothing was written.
    assert_eq!(s.generation(&rp).await, 0);
}

#[tokio::test]
async fn allocation_routes_refuse_deep_bodies() {
    let s = Server::start().await;
    let consumer = uuid();
    let mut routes = vec![
        Reads::new(
            Method::PUT,
            format!("/allocations/{consumer}"),
            "1.0",
            "allocations",
        ),
        Reads::new(
            Method::PUT,
            format!("/allocations/{consumer}"),
            "1.39",
            "allocations",
        )
        .besides(
            r#""project_id": "p", "user_id": "u", "consumer_generation": null, "consumer_type": "INSTANCE", "#,
        ),
    ];
    // POST /allocations from 1.13: the body's keys are consumer uuids.
    for version in ["1.13", "1.39"] {
        routes.push(Reads::new(Method::POST, "/allocations", version, &uuid()));
    }
    for version in ["1.30", "1.39"] {
        routes.push(
            Reads::new(Method::POST, "/reshaper", version, "inventories")
                .besides(r#""allocations": {}, "#),
        );
    }
    for route in &routes {
        assert_reads_deep_bodies(&s, route).await;
    }
    let r = s.get(&format!("/allocations/{consumer}"), "1.39").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body["allocations"], serde_json::json!({}), "{r:?}");
}

#[tokio::test]
async fn resource_class_routes_refuse_or_ignore_deep_bodies() {
    let s = Server::start().await;
    let mut routes = Vec::new();
    for version in ["1.2", "1.39"] {
        routes.push(Reads::new(
            Method::POST,
            "/resource_classes",
            version,
            "name",
        ));
    }
    // PUT renames a class from 1.2 to 1.6 (the body is read before the
    // class is looked up, so the class need not exist).
    for version in ["1.2", "1.6"] {
        routes.push(Reads::new(
            Method::PUT,
            format!("/resource_classes/{}", custom_name()),
            version,
            "name",
        ));
    }
    for route in &routes {
        assert_reads_deep_bodies(&s, route).await;
    }
    // From 1.7 PUT creates the class the path names and takes no body, as
    // upstream: whatever is sent is not read, and a new class is 201.
    for version in ["1.7", "1.39"] {
        assert_ignores_deep_bodies(
            &s,
            || format!("/resource_classes/{}", custom_name()),
            version,
            201,
        )
        .await;
    }
}

#[tokio::test]
async fn trait_creation_ignores_deep_bodies() {
    let s = Server::start().await;
    // PUT /traits/{name} (from 1.6) creates the trait the path names and
    // takes no body, as upstream: whatever is sent is not read, and a new
    // trait is 201.
    for version in ["1.6", "1.39"] {
        assert_ignores_deep_bodies(&s, || format!("/traits/{}", custom_name()), version, 201).await;
    }
}
