//! The layer and the versioned router over a real loopback server.

use axum::Json;
use microversion::{VersionRange, VersionSpan};
use microversion_server::{
    ApiError, MicroversionLayer, Microversions, Profile, ServedVersion, VersionedRouter,
};
use microversion_test_support::serve;
use serde_json::{Value, json};

async fn old() -> Json<Value> {
    Json(json!({"shape": "old"}))
}

async fn new(v: ServedVersion) -> Json<Value> {
    Json(json!({"shape": "new", "version": v.to_string()}))
}

async fn gone() -> ApiError {
    ApiError::new(http::StatusCode::CONFLICT, "busy").with_code("x.busy")
}

async fn server(profile: Profile) -> String {
    let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(profile)
        .build()
        .unwrap();
    let app = VersionedRouter::new()
        .get("/things", VersionSpan::from_static("1.0 - 1.4"), old)
        .get("/things", VersionSpan::from_static("1.5 - latest"), new)
        .post("/things", VersionSpan::ALL, gone)
        .build()
        .unwrap()
        .layer(MicroversionLayer::new(api));
    serve(app).await
}

#[tokio::test]
async fn versioned_dispatch_and_headers() {
    let base = server(Profile::ApiSig).await;
    let client = reqwest::Client::new();
    let res = client.get(format!("{base}/things")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.0");
    assert_eq!(res.headers()["vary"], "OpenStack-API-Version");
    assert!(
        res.headers()["x-openstack-request-id"]
            .to_str()
            .unwrap()
            .starts_with("req-")
    );
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"shape": "old"}));

    let res = client
        .get(format!("{base}/things"))
        .header("OpenStack-API-Version", "placement latest")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.39");
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"shape": "new", "version": "1.39"})
    );

    let res = client
        .get(format!("{base}/things"))
        .header("OpenStack-API-Version", "placement 1.999")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 406);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["errors"][0]["title"], "Not Acceptable");
    assert_eq!(
        body["errors"][0]["detail"],
        "Version 1.999 is not supported by the API. Minimum is 1.0 and maximum is 1.39."
    );
    assert_eq!(body["errors"][0]["max_version"], "1.39");

    let res = client
        .get(format!("{base}/things"))
        .header("OpenStack-API-Version", "placement 1.2.3")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);

    let res = client.post(format!("{base}/things")).send().await.unwrap();
    assert_eq!(res.status(), 409);
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.0");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], "x.busy");

    let res = client.get(format!("{base}/nowhere")).send().await.unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.0");
    let res = client
        .delete(format!("{base}/things"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
    assert_eq!(res.headers()["openstack-api-version"], "placement 1.0");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["errors"][0]["status"], 405);
}

mod bodies {
    use axum::Router;
    use axum::routing::post;
    use microversion::{VersionRange, VersionSpan};
    use std::sync::Arc;

    use http::Method;
    use microversion_server::{
        BodySchemas, MicroversionLayer, Microversions, VersionedJson, VersionedRouter,
    };
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Debug)]
    struct Create {
        name: String,
        size: Option<u32>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct V1 {
        name: String,
    }

    impl From<V1> for Create {
        fn from(v: V1) -> Self {
            Create {
                name: v.name,
                size: None,
            }
        }
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct V5 {
        name: String,
        size: u32,
    }

    impl From<V5> for Create {
        fn from(v: V5) -> Self {
            Create {
                name: v.name,
                size: Some(v.size),
            }
        }
    }

    async fn create(VersionedJson(body): VersionedJson<Create>) -> String {
        format!("{} {:?}", body.name, body.size)
    }

    async fn server() -> String {
        let api = Microversions::builder("demo", VersionRange::from_static("1.0", "1.9"))
            .build()
            .unwrap();
        let schemas = BodySchemas::<Create>::builder("POST /things")
            .serde::<V1>(VersionSpan::from_static("1.0 - 1.4"))
            .serde::<V5>(VersionSpan::from_static("1.5 - latest"))
            .build()
            .unwrap();
        let app = Router::new()
            .route("/things", post(create))
            .layer(schemas.extension())
            .layer(MicroversionLayer::new(api));
        super::serve(app).await
    }

    async fn send(base: &str, version: &str, content_type: &str, body: &str) -> (u16, String) {
        let res = reqwest::Client::new()
            .post(format!("{base}/things"))
            .header("openstack-api-version", format!("demo {version}"))
            .header("content-type", content_type)
            .body(body.to_owned())
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), res.text().await.unwrap())
    }

    fn detail(text: &str) -> String {
        let v: Value = serde_json::from_str(text).unwrap();
        v["errors"][0]["detail"].as_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn the_schema_follows_the_version() {
        let base = server().await;
        let json = "application/json";
        assert_eq!(
            send(&base, "1.4", json, r#"{"name": "a"}"#).await,
            (200, "a None".into())
        );
        assert_eq!(
            send(&base, "1.5", json, r#"{"name": "a", "size": 3}"#).await,
            (200, "a Some(3)".into())
        );
        // The 1.5 field is unknown at 1.4; missing at 1.5.
        let (status, text) = send(&base, "1.4", json, r#"{"name": "a", "size": 3}"#).await;
        assert_eq!(status, 400);
        assert!(detail(&text).contains("unknown field `size`"), "{text}");
        let (status, text) = send(&base, "1.5", json, r#"{"name": "a"}"#).await;
        assert_eq!(status, 400);
        assert!(detail(&text).contains("missing field `size`"), "{text}");
        let (status, text) = send(&base, "1.5", json, r#"{"name": "a", "size": "big"}"#).await;
        assert_eq!(status, 400);
        assert!(
            detail(&text).starts_with("JSON does not validate: at size:"),
            "{text}"
        );
        let (status, text) = send(&base, "1.5", json, "{not json").await;
        assert_eq!(status, 400);
        assert!(detail(&text).starts_with("Malformed JSON"), "{text}");
        let (status, text) = send(&base, "1.5", "text/plain", r#"{"name": "a"}"#).await;
        assert_eq!(status, 415);
        assert_eq!(
            detail(&text),
            "The media type text/plain is not supported, use application/json"
        );
    }

    /// Two operations read one body type with schemas of their own, each
    /// bound to its operation on the router.
    #[tokio::test]
    async fn bound_schemas_belong_to_their_operation() {
        let api = Microversions::builder("demo", VersionRange::from_static("1.0", "1.9"))
            .build()
            .unwrap();
        let create_body = BodySchemas::<Create>::builder("POST /things")
            .serde::<V1>(VersionSpan::ALL)
            .build()
            .unwrap();
        let replace_body = BodySchemas::<Create>::builder("PUT /things/{id}")
            .serde::<V5>(VersionSpan::from_static("1.2 - latest"))
            .build()
            .unwrap();
        let app = VersionedRouter::new()
            .post("/things", VersionSpan::ALL, create)
            .body("/things", Method::POST, create_body)
            .put(
                "/things/{id}",
                VersionSpan::from_static("1.2 - 1.4"),
                create,
            )
            .put(
                "/things/{id}",
                VersionSpan::from_static("1.5 - latest"),
                create,
            )
            .body("/things/{id}", Method::PUT, replace_body)
            .get("/things", VersionSpan::ALL, create)
            .build()
            .unwrap()
            .layer(MicroversionLayer::new(api));
        let base = super::serve(app).await;
        let client = reqwest::Client::new();
        let send = |method: Method, path: &str, body: &str| {
            client
                .request(method, format!("{base}{path}"))
                .header("openstack-api-version", "demo 1.6")
                .header("content-type", "application/json")
                .body(body.to_owned())
                .send()
        };
        let answer = |res: reqwest::Response| async move {
            (res.status().as_u16(), res.text().await.unwrap())
        };
        let sized = r#"{"name": "a", "size": 3}"#;
        assert_eq!(
            answer(
                send(Method::POST, "/things", r#"{"name": "a"}"#)
                    .await
                    .unwrap()
            )
            .await,
            (200, "a None".into())
        );
        assert_eq!(
            answer(send(Method::PUT, "/things/1", sized).await.unwrap()).await,
            (200, "a Some(3)".into())
        );
        // Each operation refuses the other's shape.
        let (status, text) = answer(send(Method::POST, "/things", sized).await.unwrap()).await;
        assert_eq!(status, 400);
        assert!(detail(&text).contains("unknown field `size`"), "{text}");
        // A handler whose operation has no schemas says what to do.
        let (status, text) = answer(send(Method::GET, "/things", "{}").await.unwrap()).await;
        assert_eq!(status, 500);
        assert_eq!(
            detail(&text),
            "VersionedJson is used on an operation without body schemas: bind them with VersionedRouter::body"
        );
    }

    #[test]
    fn bindings_that_cannot_be_read_fail_the_build() {
        let schemas = |span: &'static str| {
            Arc::new(
                BodySchemas::<Create>::builder("PUT /things/{id}")
                    .serde::<V1>(VersionSpan::from_static(span))
                    .build()
                    .unwrap(),
            )
        };
        let built = |span: &'static str, path: &str, twice: bool| {
            let mut router = VersionedRouter::<()>::new()
                .put(
                    "/things/{id}",
                    VersionSpan::from_static("1.2 - 1.4"),
                    create,
                )
                .put(
                    "/things/{id}",
                    VersionSpan::from_static("1.5 - 1.7"),
                    create,
                )
                .body(path, Method::PUT, schemas(span));
            if twice {
                router = router.body(path, Method::PUT, schemas(span));
            }
            router.build().map(|_| ()).map_err(|e| e.to_string())
        };
        // Handlers that meet serve one schema across both.
        assert_eq!(built("1.2 - 1.7", "/things/{id}", false), Ok(()));
        assert_eq!(built("1.3 - 1.6", "/things/{id}", false), Ok(()));
        for span in ["1.0 - 1.4", "1.5 - latest", "1.8 - 1.9"] {
            assert_eq!(
                built(span, "/things/{id}", false),
                Err(format!(
                    "request body schemas for PUT /things/{{id}}: {span} covers versions no handler serves"
                ))
            );
        }
        assert_eq!(
            built("1.2 - 1.4", "/things", false),
            Err("request body schemas for PUT /things: the operation is not routed".into())
        );
        assert_eq!(
            built("1.2 - 1.4", "/things/{id}", true),
            Err("request body schemas for PUT /things/{id}: 1.2 - 1.4 is bound twice".into())
        );
    }
}

/// A status that changes by version is declared on the route: success
/// answers take it, errors keep theirs.
#[tokio::test]
async fn the_route_sets_the_success_status_by_version() {
    use http::{Method, StatusCode};
    use microversion::Change;

    const INITIAL: Change = Change::new("1.0", "Initial version.");
    const OK_ON_CREATE: Change = Change::new("1.5", "POST /widgets answers 200.");

    async fn create(body: String) -> Result<(StatusCode, &'static str), ApiError> {
        if body == "busy" {
            return Err(ApiError::new(StatusCode::CONFLICT, "busy"));
        }
        Ok((StatusCode::CREATED, "made"))
    }

    let api = Microversions::builder("widgets", VersionRange::from_static("1.0", "1.9"))
        .build()
        .unwrap();
    let app = VersionedRouter::new()
        .post("/widgets", INITIAL.since(), create)
        .status(
            "/widgets",
            &Method::POST,
            OK_ON_CREATE.since(),
            StatusCode::OK,
        )
        .build_for(&api)
        .unwrap()
        .layer(MicroversionLayer::new(api));
    let base = serve(app).await;
    let client = reqwest::Client::new();
    let post = |version: &'static str, body: &'static str| {
        client
            .post(format!("{base}/widgets"))
            .header("openstack-api-version", format!("widgets {version}"))
            .body(body)
            .send()
    };
    assert_eq!(post("1.4", "").await.unwrap().status(), 201);
    let made = post("1.5", "").await.unwrap();
    assert_eq!(made.status(), 200);
    assert_eq!(made.text().await.unwrap(), "made");
    assert_eq!(post("latest", "busy").await.unwrap().status(), 409);

    let overlapping = VersionedRouter::<()>::new()
        .post("/widgets", INITIAL.since(), create)
        .status(
            "/widgets",
            &Method::POST,
            OK_ON_CREATE.since(),
            StatusCode::OK,
        )
        .status(
            "/widgets",
            &Method::POST,
            VersionSpan::from_static("1.7 - 1.8"),
            StatusCode::ACCEPTED,
        )
        .build()
        .unwrap_err();
    assert_eq!(
        overlapping.to_string(),
        "a success status for POST /widgets: 1.7 - 1.8 is bound twice"
    );
    let unrouted = VersionedRouter::<()>::new()
        .post("/widgets", INITIAL.until(OK_ON_CREATE), create)
        .status(
            "/widgets",
            &Method::POST,
            OK_ON_CREATE.since(),
            StatusCode::OK,
        )
        .build()
        .unwrap_err();
    assert_eq!(
        unrouted.to_string(),
        "a success status for POST /widgets: 1.5 - latest covers versions no handler serves"
    );
}
