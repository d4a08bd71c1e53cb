//! A fake Keystone on 127.0.0.1:0 playing the v3 token API: it issues the
//! service token, validates tokens it was told about, counts calls, and
//! can be told to fail in the ways a real one does.

#![allow(dead_code, unreachable_pub)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use keystone_auth::{DomainSpec, KeystoneClient, KeystoneClientBuilder};

pub const SERVICE_USER: &str = "placement";
pub const SERVICE_PASSWORD: &str = "s3cret";
/// The service user's application credential.
pub const APP_CREDENTIAL_ID: &str = "appcred-id";
pub const APP_CREDENTIAL_NAME: &str = "placement-appcred";
pub const APP_CREDENTIAL_SECRET: &str = "appcred-s3cret";

/// How validations are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    ServerError,
    NotJson,
    MissingFields,
    HugeBody,
}

#[derive(Default)]
pub struct Counters {
    pub auths: AtomicUsize,
    pub validations: AtomicUsize,
    pub nocatalog: AtomicUsize,
}

pub struct FakeKeystone {
    pub url: String,
    pub state: Arc<KsState>,
}

pub struct KsState {
    pub counters: Counters,
    tokens: Mutex<HashMap<String, Value>>,
    service_tokens: Mutex<HashSet<String>>,
    next: AtomicU64,
    mode: Mutex<Mode>,
    delay_ms: AtomicU64,
    service_token_lifetime_ms: AtomicU64,
    refuse_service_token_once: AtomicBool,
}

/// A TLS listener for `axum::serve`: a connection whose handshake fails
/// (a client without the certificate asked for, say) is dropped, and the
/// next one accepted.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

impl FakeKeystone {
    pub async fn start() -> Self {
        Self::serve(None).await
    }

    /// The same Keystone over https, with `config`'s certificate and
    /// client verification.
    pub async fn start_tls(config: Arc<rustls::ServerConfig>) -> Self {
        Self::serve(Some(config)).await
    }

    async fn serve(tls: Option<Arc<rustls::ServerConfig>>) -> Self {
        let https = tls.is_some();
        let state = Arc::new(KsState {
            counters: Counters::default(),
            tokens: Mutex::new(HashMap::new()),
            service_tokens: Mutex::new(HashSet::new()),
            next: AtomicU64::new(1),
            mode: Mutex::new(Mode::Normal),
            delay_ms: AtomicU64::new(0),
            service_token_lifetime_ms: AtomicU64::new(3_600_000),
            refuse_service_token_once: AtomicBool::new(false),
        });
        let app = Router::new()
            .route("/v3/auth/tokens", post(issue).get(validate))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        match tls {
            None => {
                tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
            }
            Some(config) => {
                let listener = TlsListener {
                    tcp: listener,
                    acceptor: tokio_rustls::TlsAcceptor::from(config),
                };
                tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
            }
        }
        let scheme = if https { "https" } else { "http" };
        Self {
            url: format!("{scheme}://{addr}"),
            state,
        }
    }

    /// A client builder with the service's credentials, timeouts short.
    pub fn client_builder(&self) -> KeystoneClientBuilder {
        KeystoneClient::builder()
            .auth_url(format!("{}/v3", self.url))
            .username(SERVICE_USER)
            .password(SERVICE_PASSWORD)
            .project_name("service")
            .user_domain(DomainSpec::Name("Default".into()))
            .project_domain(DomainSpec::Id("default".into()))
            .connect_timeout(Duration::from_secs(1))
            .request_timeout(Duration::from_secs(2))
    }

    /// Makes a project-scoped token for `user` with `roles`, valid for an hour.
    pub fn project_token(&self, user: &str, project: &str, roles: &[&str]) -> String {
        self.add(token_body(
            user,
            roles,
            json!({"project": {"id": project, "name": format!("{project}-name"),
                               "domain": {"id": "default", "name": "Default"}}}),
            OffsetDateTime::now_utc() + Duration::from_secs(3600),
        ))
    }

    /// A system-scoped token.
    pub fn system_token(&self, user: &str, roles: &[&str]) -> String {
        self.add(token_body(
            user,
            roles,
            json!({"system": {"all": true}}),
            OffsetDateTime::now_utc() + Duration::from_secs(3600),
        ))
    }

    /// A project token that expires at `expires_at`.
    pub fn token_expiring(&self, user: &str, expires_at: OffsetDateTime) -> String {
        self.add(token_body(
            user,
            &["member"],
            json!({"project": {"id": "p1", "name": "p1-name",
                               "domain": {"id": "default", "name": "Default"}}}),
            expires_at,
        ))
    }

    fn add(&self, body: Value) -> String {
        let n = self.state.next.fetch_add(1, Ordering::SeqCst);
        let token = format!("gAAAAAB-user-{n}");
        self.state
            .tokens
            .lock()
            .unwrap()
            .insert(token.clone(), body);
        token
    }

    /// `DELETE /v3/auth/tokens`: the token is now unknown.
    pub fn revoke(&self, token: &str) {
        self.state.tokens.lock().unwrap().remove(token);
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.state.mode.lock().unwrap() = mode;
    }

    pub fn set_delay(&self, delay: Duration) {
        self.state
            .delay_ms
            .store(delay.as_millis().try_into().unwrap(), Ordering::SeqCst);
    }

    /// How long the service tokens issued from now on live.
    pub fn set_service_token_lifetime(&self, lifetime: Duration) {
        self.state
            .service_token_lifetime_ms
            .store(lifetime.as_millis().try_into().unwrap(), Ordering::SeqCst);
    }

    /// The next validation answers 401 and every service token issued so
    /// far is forgotten, as when Keystone's keys rotate.
    pub fn expire_service_tokens(&self) {
        self.state.service_tokens.lock().unwrap().clear();
        self.state
            .refuse_service_token_once
            .store(true, Ordering::SeqCst);
    }

    pub fn auths(&self) -> usize {
        self.state.counters.auths.load(Ordering::SeqCst)
    }

    pub fn validations(&self) -> usize {
        self.state.counters.validations.load(Ordering::SeqCst)
    }

    pub fn nocatalog(&self) -> usize {
        self.state.counters.nocatalog.load(Ordering::SeqCst)
    }
}

fn token_body(user: &str, roles: &[&str], scope: Value, expires_at: OffsetDateTime) -> Value {
    let mut token = json!({
        "methods": ["password"],
        "user": {"id": format!("{user}-id"), "name": user,
                 "domain": {"id": "default", "name": "Default"}},
        "roles": roles.iter().enumerate()
            .map(|(i, r)| json!({"id": format!("r{i}"), "name": r})).collect::<Vec<_>>(),
        "expires_at": expires_at.format(&Rfc3339).unwrap(),
        "issued_at": OffsetDateTime::now_utc().format(&Rfc3339).unwrap(),
        "audit_ids": ["a"],
        "is_admin_project": false,
        "catalog": [{"type": "placement", "name": "placement", "id": "s1",
                     "endpoints": [{"id": "e1", "interface": "public",
                                    "region_id": "RegionOne", "region": "RegionOne",
                                    "url": "http://127.0.0.1/placement"}]}],
    });
    let obj = token.as_object_mut().unwrap();
    let Value::Object(scope) = scope else {
        panic!("scope is an object")
    };
    obj.extend(scope);
    json!({ "token": token })
}

async fn issue(State(state): State<Arc<KsState>>, body: Bytes) -> Response {
    state.counters.auths.fetch_add(1, Ordering::SeqCst);
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let user = &body["auth"]["identity"]["password"]["user"];
    let scope = &body["auth"]["scope"]["project"];
    let password = body["auth"]["identity"]["methods"] == json!(["password"])
        && user["name"] == SERVICE_USER
        && user["password"] == SERVICE_PASSWORD
        && user["domain"]["name"] == "Default"
        && scope["name"] == "service"
        && scope["domain"]["id"] == "default";
    // An application credential carries its project: a scope is refused.
    let credential = &body["auth"]["identity"]["application_credential"];
    let named = credential["name"] == APP_CREDENTIAL_NAME
        && credential["user"]["name"] == SERVICE_USER
        && credential["user"]["domain"]["name"] == "Default";
    let application_credential = body["auth"]["identity"]["methods"]
        == json!(["application_credential"])
        && (credential["id"] == APP_CREDENTIAL_ID || named)
        && credential["secret"] == APP_CREDENTIAL_SECRET
        && body["auth"].get("scope").is_none();
    let good = password || application_credential;
    if !good {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": {"code": 401, "title": "Unauthorized",
                "message": "The request you have made requires authentication."}})),
        )
            .into_response();
    }
    let n = state.next.fetch_add(1, Ordering::SeqCst);
    let token = format!("gAAAAAB-service-{n}");
    state.service_tokens.lock().unwrap().insert(token.clone());
    let body = token_body(
        SERVICE_USER,
        &["service", "admin"],
        json!({"project": {"id": "svc", "name": "service",
                           "domain": {"id": "default", "name": "Default"}}}),
        OffsetDateTime::now_utc()
            + Duration::from_millis(state.service_token_lifetime_ms.load(Ordering::SeqCst)),
    );
    (
        StatusCode::CREATED,
        [("x-subject-token", token)],
        axum::Json(body),
    )
        .into_response()
}

async fn validate(
    State(state): State<Arc<KsState>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    state.counters.validations.fetch_add(1, Ordering::SeqCst);
    if query.as_deref() == Some("nocatalog") {
        state.counters.nocatalog.fetch_add(1, Ordering::SeqCst);
    }
    let delay = state.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let service_ok = headers
        .get("x-auth-token")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| state.service_tokens.lock().unwrap().contains(t));
    if state
        .refuse_service_token_once
        .swap(false, Ordering::SeqCst)
        || !service_ok
    {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let mode = *state.mode.lock().unwrap();
    match mode {
        Mode::ServerError => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        Mode::NotJson => return (StatusCode::OK, "<html>proxy error</html>").into_response(),
        Mode::MissingFields => {
            return (StatusCode::OK, axum::Json(json!({"token": {"roles": []}}))).into_response();
        }
        Mode::HugeBody => {
            let padding = "x".repeat(9 * 1024 * 1024);
            return (
                StatusCode::OK,
                axum::Json(json!({"token": {"padding": padding}})),
            )
                .into_response();
        }
        Mode::Normal => {}
    }
    let subject = headers
        .get("x-subject-token")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Some(mut body) = state.tokens.lock().unwrap().get(subject).cloned() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if query.as_deref() == Some("nocatalog") {
        body["token"].as_object_mut().unwrap().remove("catalog");
    }
    ([("x-subject-token", subject.to_owned())], axum::Json(body)).into_response()
}
