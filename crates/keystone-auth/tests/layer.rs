//! KeystoneAuthLayer in front of an axum app, against a fake Keystone on
//! loopback: statuses, headers, bodies and the number of calls to Keystone.

mod support;

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::routing::get;
use axum::{Extension, Json, Router};
use http::Method;
use http_body_util::BodyExt;
use keystone_auth::{
    KeystoneAuthLayer, KeystoneAuthLayerBuilder, RequestIdentity, UNAUTHORIZED_BODY,
    UNAVAILABLE_BODY,
};
use serde_json::{Value, json};
use support::{FakeKeystone, Mode};
use time::OffsetDateTime;
use tower::ServiceExt;

const WWW: &str = "http://keystone.example:5000";

/// Echoes the request's headers and its `RequestIdentity`.
async fn whoami(headers: HeaderMap, id: Option<Extension<RequestIdentity>>) -> Json<Value> {
    let headers: serde_json::Map<String, Value> = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), json!(v.to_str().unwrap_or("<bin>"))))
        .collect();
    let identity = id.map(|Extension(id)| {
        json!({
            "user": id.user.user_id,
            "project": id.user.project_id(),
            "roles": id.user.roles,
            "system": id.user.is_system_scope(),
            "service_user": id.service.as_ref().map(|s| s.user_id.clone()),
        })
    });
    Json(json!({ "headers": headers, "identity": identity }))
}

fn layer(
    ks: &FakeKeystone,
    f: impl FnOnce(KeystoneAuthLayerBuilder) -> KeystoneAuthLayerBuilder,
) -> Router {
    let client = ks.client_builder().build().unwrap();
    let auth = f(KeystoneAuthLayer::builder(client)
        .www_authenticate_uri(WWW)
        .public_route(Method::GET, "/"))
    .build()
    .unwrap();
    Router::new()
        .route("/", get(whoami))
        .route("/whoami", get(whoami))
        .layer(auth)
}

fn app(ks: &FakeKeystone) -> Router {
    layer(ks, |b| b)
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }

    fn seen(&self, header: &str) -> Option<String> {
        self.json()["headers"][header].as_str().map(str::to_owned)
    }
}

async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

fn get_with(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut b = Request::get(path);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::empty()).unwrap()
}

fn assert_401(a: &Answer) {
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{}", a.body);
    assert_eq!(
        a.headers["www-authenticate"],
        format!("Keystone uri=\"{WWW}\"")
    );
    assert_eq!(a.headers["content-type"], "application/json");
    assert_eq!(a.body, UNAUTHORIZED_BODY);
}

fn assert_503(a: &Answer) {
    assert_eq!(a.status, StatusCode::SERVICE_UNAVAILABLE, "{}", a.body);
    assert!(a.headers.get("www-authenticate").is_none());
    assert_eq!(a.body, UNAVAILABLE_BODY);
}

#[tokio::test]
async fn valid_token_gives_identity_and_headers_and_is_cached() {
    let ks = FakeKeystone::start().await;
    let app = app(&ks);
    let token = ks.project_token("alice", "p1", &["reader", "member"]);
    let spoofed = [
        ("x-auth-token", token.as_str()),
        ("x-roles", "admin"),
        ("openstack-system-scope", "all"),
        ("x-service-roles", "service"),
        ("x-is-admin-project", "True"),
    ];
    let a = send(&app, get_with("/whoami", &spoofed)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.seen("x-identity-status").as_deref(), Some("Confirmed"));
    assert_eq!(a.seen("x-user-id").as_deref(), Some("alice-id"));
    assert_eq!(a.seen("x-user-name").as_deref(), Some("alice"));
    assert_eq!(a.seen("x-user-domain-id").as_deref(), Some("default"));
    assert_eq!(a.seen("x-project-id").as_deref(), Some("p1"));
    assert_eq!(a.seen("x-project-name").as_deref(), Some("p1-name"));
    assert_eq!(a.seen("x-project-domain-name").as_deref(), Some("Default"));
    assert_eq!(a.seen("x-roles").as_deref(), Some("reader,member"));
    assert_eq!(a.seen("x-is-admin-project").as_deref(), Some("False"));
    assert_eq!(a.seen("openstack-system-scope"), None);
    assert_eq!(a.seen("x-service-roles"), None);
    assert_eq!(a.seen("x-service-catalog"), None);
    let id = &a.json()["identity"];
    assert_eq!(id["user"], "alice-id");
    assert_eq!(id["project"], "p1");
    assert_eq!(id["roles"], json!(["reader", "member"]));
    assert_eq!(id["service_user"], Value::Null);
    assert_eq!((ks.auths(), ks.validations(), ks.nocatalog()), (1, 1, 1));

    for _ in 0..5 {
        let a = send(&app, get_with("/whoami", &[("x-auth-token", &token)])).await;
        assert_eq!(a.status, StatusCode::OK);
    }
    assert_eq!(ks.validations(), 1, "cache hits make no call");
    assert_eq!(ks.auths(), 1, "the service token is reused");
}

#[tokio::test]
async fn missing_unknown_and_implausible_tokens_are_401() {
    let ks = FakeKeystone::start().await;
    let app = app(&ks);
    assert_401(&send(&app, get_with("/whoami", &[])).await);
    assert_eq!(ks.validations(), 0);

    for _ in 0..2 {
        assert_401(
            &send(
                &app,
                get_with("/whoami", &[("x-auth-token", "gAAAAAB-unknown")]),
            )
            .await,
        );
    }
    assert_eq!(ks.validations(), 2, "failures are not cached");

    let huge = "a".repeat(10 * 1024 * 1024);
    assert_401(&send(&app, get_with("/whoami", &[("x-auth-token", &huge)])).await);
    assert_401(&send(&app, get_with("/whoami", &[("x-auth-token", "abc\tdef")])).await);
    let mut binary = Request::get("/whoami").body(Body::empty()).unwrap();
    binary.headers_mut().insert(
        "x-auth-token",
        http::HeaderValue::from_bytes(b"tok\xff\xfe").unwrap(),
    );
    assert_401(&send(&app, binary).await);
    let twice = Request::get("/whoami")
        .header("x-auth-token", "a")
        .header("x-auth-token", "b")
        .body(Body::empty())
        .unwrap();
    assert_401(&send(&app, twice).await);
    assert_eq!(ks.validations(), 2, "implausible tokens are never sent");
}

#[tokio::test]
async fn public_route_passes_without_token_but_scrubbed() {
    let ks = FakeKeystone::start().await;
    let app = app(&ks);
    let a = send(
        &app,
        get_with(
            "/",
            &[("x-roles", "admin"), ("openstack-system-scope", "all")],
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.seen("x-roles"), None);
    assert_eq!(a.seen("openstack-system-scope"), None);
    assert_eq!(a.json()["identity"], Value::Null);
    let post = Request::post("/").body(Body::empty()).unwrap();
    assert_401(&send(&app, post).await);
    assert_eq!(ks.validations(), 0);
}

#[tokio::test]
async fn twenty_concurrent_requests_with_a_new_token_validate_once() {
    let ks = FakeKeystone::start().await;
    let app = app(&ks);
    let token = ks.project_token("bob", "p2", &["member"]);
    ks.set_delay(Duration::from_millis(300));
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let app = app.clone();
        let token = token.clone();
        tasks.push(tokio::spawn(async move {
            send(&app, get_with("/whoami", &[("x-auth-token", &token)]))
                .await
                .status
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), StatusCode::OK);
    }
    assert_eq!(ks.validations(), 1);
    assert_eq!(ks.auths(), 1);
}

#[tokio::test]
async fn revoked_token_is_refused_after_the_cache_time() {
    let ks = FakeKeystone::start().await;
    let app = layer(&ks, |b| b.token_cache_time(1));
    let token = ks.project_token("carol", "p1", &["member"]);
    let req = || get_with("/whoami", &[("x-auth-token", &token)]);
    assert_eq!(send(&app, req()).await.status, StatusCode::OK);
    ks.revoke(&token);
    assert_eq!(
        send(&app, req()).await.status,
        StatusCode::OK,
        "still cached"
    );
    assert_eq!(ks.validations(), 1);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert_401(&send(&app, req()).await);
    assert_eq!(ks.validations(), 2);
}

#[tokio::test]
async fn cache_off_validates_every_time() {
    let ks = FakeKeystone::start().await;
    let app = layer(&ks, |b| b.token_cache_time(-1));
    let token = ks.project_token("dan", "p1", &["member"]);
    for _ in 0..3 {
        let a = send(&app, get_with("/whoami", &[("x-auth-token", &token)])).await;
        assert_eq!(a.status, StatusCode::OK);
    }
    assert_eq!(ks.validations(), 3);
}

#[tokio::test]
async fn token_expiry_is_checked_on_a_cache_hit() {
    let ks = FakeKeystone::start().await;
    let app = app(&ks);
    let token = ks.token_expiring(
        "erin",
        OffsetDateTime::now_utc() + Duration::from_millis(1200),
    );
    let req = || get_with("/whoami", &[("x-auth-token", &token)]);
    assert_eq!(send(&app, req()).await.status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_401(&send(&app, req()).await);
    assert_eq!(ks.validations(), 1, "refused from the cache entry itself");
    let past = ks.token_expiring("frank", OffsetDateTime::now_utc() - Duration::from_secs(5));
    assert_401(&send(&app, get_with("/whoami", &[("x-auth-token", &past)])).await);
}

#[tokio::test]
async fn service_token_reauth_once_on_401() {
    let ks = FakeKeystone::start().await;
    let app = app(&ks);
    let t1 = ks.project_token("gina", "p1", &["member"]);
    assert_eq!(
        send(&app, get_with("/whoami", &[("x-auth-token", &t1)]))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(ks.auths(), 1);
    ks.expire_service_tokens();
    let t2 = ks.project_token("hank", "p1", &["member"]);
    let a = send(&app, get_with("/whoami", &[("x-auth-token", &t2)])).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(ks.auths(), 2, "one re-authentication");
    assert_eq!(ks.validations(), 3, "the refused call and its retry");
}

#[tokio::test]
async fn keystone_errors_are_503_and_not_cached() {
    let ks = FakeKeystone::start().await;
    let app = app(&ks);
    let token = ks.project_token("ivan", "p1", &["member"]);
    let req = || get_with("/whoami", &[("x-auth-token", &token)]);
    for mode in [
        Mode::ServerError,
        Mode::NotJson,
        Mode::MissingFields,
        Mode::HugeBody,
    ] {
        ks.set_mode(mode);
        assert_503(&send(&app, req()).await);
    }
    ks.set_mode(Mode::Normal);
    assert_eq!(send(&app, req()).await.status, StatusCode::OK);
    assert_eq!(ks.validations(), 5);
}

#[tokio::test]
async fn slow_keystone_is_503_within_the_request_timeout() {
    let ks = FakeKeystone::start().await;
    let client = ks
        .client_builder()
        .request_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    // Get the service token while Keystone is fast.
    client.authenticate().await.unwrap();
    let auth = KeystoneAuthLayer::builder(client)
        .www_authenticate_uri(WWW)
        .build()
        .unwrap();
    let app = Router::new().route("/whoami", get(whoami)).layer(auth);
    let token = ks.project_token("judy", "p1", &["member"]);
    ks.set_delay(Duration::from_secs(5));
    let started = Instant::now();
    assert_503(&send(&app, get_with("/whoami", &[("x-auth-token", &token)])).await);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn unreachable_keystone_is_503() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let client = keystone_auth::KeystoneClient::builder()
        .auth_url(format!("http://127.0.0.1:{port}/v3"))
        .username("u")
        .password("p")
        .project_name("service")
        .user_domain(keystone_auth::DomainSpec::Name("Default".into()))
        .project_domain(keystone_auth::DomainSpec::Name("Default".into()))
        .max_retries(1)
        .build()
        .unwrap();
    let auth = KeystoneAuthLayer::builder(client)
        .www_authenticate_uri(WWW)
        .build()
        .unwrap();
    let app = Router::new().route("/whoami", get(whoami)).layer(auth);
    let started = Instant::now();
    assert_503(&send(&app, get_with("/whoami", &[("x-auth-token", "gAAAAAB-x")])).await);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn refused_service_credentials_are_503() {
    let ks = FakeKeystone::start().await;
    let client = ks.client_builder().password("wrong").build().unwrap();
    let e = client.authenticate().await.unwrap_err();
    assert_eq!(
        e.kind(),
        keystone_auth::ErrorKind::ServiceAuthRefused(StatusCode::UNAUTHORIZED)
    );
    let auth = KeystoneAuthLayer::builder(client)
        .www_authenticate_uri(WWW)
        .build()
        .unwrap();
    let app = Router::new().route("/whoami", get(whoami)).layer(auth);
    let token = ks.project_token("kim", "p1", &["member"]);
    assert_503(&send(&app, get_with("/whoami", &[("x-auth-token", &token)])).await);
}

#[tokio::test]
async fn service_token_adds_service_headers_and_needs_the_role() {
    let ks = FakeKeystone::start().await;
    let app = app(&ks);
    let user = ks.project_token("leo", "p1", &["reader"]);
    let nova = ks.project_token("nova", "service", &["service"]);
    let a = send(
        &app,
        get_with(
            "/whoami",
            &[("x-auth-token", &user), ("x-service-token", &nova)],
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.seen("x-service-identity-status").as_deref(),
        Some("Confirmed")
    );
    assert_eq!(a.seen("x-service-user-id").as_deref(), Some("nova-id"));
    assert_eq!(a.seen("x-service-roles").as_deref(), Some("service"));
    assert_eq!(a.seen("x-service-project-id").as_deref(), Some("service"));
    assert_eq!(a.seen("x-roles").as_deref(), Some("reader"));
    assert_eq!(a.json()["identity"]["service_user"], "nova-id");

    let not_service = ks.project_token("mallory", "p1", &["member"]);
    let h = [
        ("x-auth-token", user.as_str()),
        ("x-service-token", not_service.as_str()),
    ];
    assert_401(&send(&app, get_with("/whoami", &h)).await);
    let h = [
        ("x-auth-token", user.as_str()),
        ("x-service-token", "gAAAAAB-bogus"),
    ];
    assert_401(&send(&app, get_with("/whoami", &h)).await);

    let lenient = layer(&ks, |b| b.service_token_roles_required(false));
    let h = [
        ("x-auth-token", user.as_str()),
        ("x-service-token", not_service.as_str()),
    ];
    let a = send(&lenient, get_with("/whoami", &h)).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.seen("x-service-roles").as_deref(), Some("member"));
}

#[tokio::test]
async fn system_scope_and_catalog() {
    let ks = FakeKeystone::start().await;
    let app = layer(&ks, |b| b);
    let token = ks.system_token("root", &["admin", "member", "reader"]);
    let a = send(&app, get_with("/whoami", &[("x-auth-token", &token)])).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.seen("openstack-system-scope").as_deref(), Some("all"));
    assert_eq!(a.seen("x-project-id"), None);
    assert_eq!(a.json()["identity"]["system"], true);

    let client = ks.client_builder().include_catalog(true).build().unwrap();
    let auth = KeystoneAuthLayer::builder(client)
        .www_authenticate_uri(WWW)
        .build()
        .unwrap();
    let with_catalog = Router::new().route("/whoami", get(whoami)).layer(auth);
    let before = ks.nocatalog();
    let a = send(
        &with_catalog,
        get_with("/whoami", &[("x-auth-token", &token)]),
    )
    .await;
    assert_eq!(
        ks.nocatalog(),
        before,
        "no ?nocatalog when the catalog is wanted"
    );
    let catalog: Value = serde_json::from_str(&a.seen("x-service-catalog").unwrap()).unwrap();
    assert_eq!(catalog[0]["type"], "placement");
}
