//! Against a real Keystone, only when `KEYSTONE_URL` is set (otherwise each
//! test prints "skipped: KEYSTONE_URL not set" and passes).
//!
//! Variables: `KEYSTONE_URL` (the identity root or its `/v3`),
//! `KEYSTONE_SERVICE_USER`, `KEYSTONE_SERVICE_PASSWORD`,
//! `KEYSTONE_SERVICE_PROJECT` (the service user, role `service`),
//! `KEYSTONE_MEMBER_USER`, `KEYSTONE_MEMBER_PASSWORD`,
//! `KEYSTONE_DEMO_PROJECT` (a user with role `member` on that project; a
//! project name, or an id of 32 hex digits). All users and projects are in
//! the domain `default`. The system-scope test also needs
//! `KEYSTONE_ADMIN_PASSWORD` (user `KEYSTONE_ADMIN_USER`, `admin` by
//! default, with a role on the system, as `keystone-manage bootstrap` makes).

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::routing::get;
use axum::{Extension, Json, Router};
use http_body_util::BodyExt;
use keystone_auth::{DomainSpec, KeystoneAuthLayer, KeystoneClient, RequestIdentity, Scope};
use serde_json::{Value, json};
use tower::ServiceExt;

struct Env {
    url: String,
    service_user: String,
    service_password: String,
    service_project: String,
    member_user: String,
    user_password: String,
    demo_project: String,
}

fn env() -> Option<Env> {
    let Ok(url) = std::env::var("KEYSTONE_URL") else {
        eprintln!("skipped: KEYSTONE_URL not set");
        return None;
    };
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| panic!("KEYSTONE_URL is set but {name} is not"))
    };
    Some(Env {
        url: url.trim_end_matches('/').trim_end_matches("/v3").to_owned(),
        service_user: var("KEYSTONE_SERVICE_USER"),
        service_password: var("KEYSTONE_SERVICE_PASSWORD"),
        service_project: var("KEYSTONE_SERVICE_PROJECT"),
        member_user: var("KEYSTONE_MEMBER_USER"),
        user_password: var("KEYSTONE_MEMBER_PASSWORD"),
        demo_project: var("KEYSTONE_DEMO_PROJECT"),
    })
}

fn project_scope(project: &str) -> Value {
    let is_id = project.len() == 32 && project.bytes().all(|b| b.is_ascii_hexdigit());
    if is_id {
        json!({ "project": { "id": project } })
    } else {
        json!({ "project": { "name": project, "domain": { "id": "default" } } })
    }
}

/// The demo member's project token, as a client would get it.
async fn member_token(env: &Env) -> String {
    let scope = project_scope(&env.demo_project);
    scoped_token(env, &env.member_user, &env.user_password, scope).await
}

/// The service user's project token.
async fn service_token(env: &Env) -> String {
    let scope = project_scope(&env.service_project);
    scoped_token(env, &env.service_user, &env.service_password, scope).await
}

async fn scoped_token(env: &Env, user: &str, password: &str, scope: Value) -> String {
    let body = json!({"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"id": "default"}, "password": password}}},
        "scope": scope,
    }});
    let response = reqwest::Client::new()
        .post(format!("{}/v3/auth/tokens?nocatalog", env.url))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201, "token for {user}");
    response.headers()["x-subject-token"]
        .to_str()
        .unwrap()
        .to_owned()
}

async fn revoke(env: &Env, token: &str) {
    let response = reqwest::Client::new()
        .delete(format!("{}/v3/auth/tokens", env.url))
        .header("x-auth-token", token)
        .header("x-subject-token", token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
}

fn client(env: &Env) -> KeystoneClient {
    KeystoneClient::builder()
        .auth_url(format!("{}/v3", env.url))
        .username(&env.service_user)
        .password(&env.service_password)
        .project_name(&env.service_project)
        .user_domain(DomainSpec::Id("default".into()))
        .project_domain(DomainSpec::Id("default".into()))
        .connect_timeout(Duration::from_secs(2))
        .request_timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

async fn whoami(headers: HeaderMap, id: Extension<RequestIdentity>) -> Json<Value> {
    let seen = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    Json(json!({
        "x-user-id": seen("x-user-id"),
        "x-project-id": seen("x-project-id"),
        "x-roles": seen("x-roles"),
        "x-service-roles": seen("x-service-roles"),
        "openstack-system-scope": seen("openstack-system-scope"),
        "user_id": id.user.user_id,
    }))
}

fn app(env: &Env, cache_time: i64) -> Router {
    let auth = KeystoneAuthLayer::builder(client(env))
        .www_authenticate_uri(&env.url)
        .token_cache_time(cache_time)
        .build()
        .unwrap();
    Router::new().route("/whoami", get(whoami)).layer(auth)
}

async fn call(app: &Router, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    let mut request = Request::get("/whoami");
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn member_token_validates_with_implied_roles() {
    let Some(env) = env() else { return };
    let client = client(&env);
    client.authenticate().await.unwrap();
    let member = member_token(&env).await;
    let id = client.validate(&member).await.unwrap();
    assert_eq!(id.user_name, env.member_user);
    assert!(matches!(id.scope, Scope::Project { .. }));
    assert!(
        id.has_role("member") && id.has_role("reader"),
        "{:?}",
        id.roles
    );
    assert!(!id.has_role("admin"));
    let e = client
        .validate("gAAAAABnot-a-real-token")
        .await
        .unwrap_err();
    assert!(e.is_invalid_token(), "{e:?}");
}

#[tokio::test]
async fn layer_replaces_spoofed_headers_and_refuses_bad_tokens() {
    let Some(env) = env() else { return };
    let app = app(&env, 300);
    let member = member_token(&env).await;
    let (status, seen) = call(
        &app,
        &[
            ("x-auth-token", &member),
            ("x-roles", "admin"),
            ("openstack-system-scope", "all"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let roles = seen["x-roles"].as_str().unwrap();
    assert!(
        roles.contains("member") && roles.contains("reader"),
        "{roles}"
    );
    assert!(!roles.contains("admin"), "{roles}");
    assert_eq!(seen["openstack-system-scope"], Value::Null);
    assert!(seen["x-project-id"].is_string());

    let (status, _) = call(&app, &[("x-auth-token", "gAAAAABnot-a-real-token")]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = call(&app, &[]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn service_token_gives_service_roles() {
    let Some(env) = env() else { return };
    let app = app(&env, 300);
    let member = member_token(&env).await;
    let service = service_token(&env).await;
    let (status, seen) = call(
        &app,
        &[("x-auth-token", &member), ("x-service-token", &service)],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        seen["x-service-roles"]
            .as_str()
            .unwrap()
            .contains("service"),
        "{seen}"
    );
    // A member's token is no service token.
    let (status, _) = call(
        &app,
        &[("x-auth-token", &member), ("x-service-token", &member)],
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn revoked_token_is_refused_after_the_cache_time() {
    let Some(env) = env() else { return };
    let app = app(&env, 1);
    let member = member_token(&env).await;
    let (status, _) = call(&app, &[("x-auth-token", &member)]).await;
    assert_eq!(status, StatusCode::OK);
    revoke(&env, &member).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (status, _) = call(&app, &[("x-auth-token", &member)]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn system_token_gives_system_scope() {
    let Some(env) = env() else { return };
    let Ok(password) = std::env::var("KEYSTONE_ADMIN_PASSWORD") else {
        eprintln!("skipped: KEYSTONE_ADMIN_PASSWORD not set");
        return;
    };
    let admin = std::env::var("KEYSTONE_ADMIN_USER").unwrap_or_else(|_| "admin".to_owned());
    let system = scoped_token(&env, &admin, &password, json!({"system": {"all": true}})).await;
    let id = client(&env).validate(&system).await.unwrap();
    assert_eq!(id.scope, Scope::System);
    assert!(
        id.has_role("admin") && id.has_role("reader"),
        "{:?}",
        id.roles
    );
    let (status, seen) = call(&app(&env, 300), &[("x-auth-token", &system)]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(seen["openstack-system-scope"], "all");
    assert_eq!(seen["x-project-id"], Value::Null);
}
