//! A fake Keystone v3 for client tests: it issues tokens for known
//! credentials with a catalog the test sets, expires them after a lifetime
//! the test sets, counts authentications, and can misbehave. And
//! [`require_token`], a layer that makes a test service answer 401 to
//! tokens this Keystone does not know.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use crate::serve::{serve, serve_on_own_thread};

/// The user the fake Keystone knows: name, id, domain and password.
pub const USER: &str = "demo";
/// The user's id.
pub const USER_ID: &str = "u-demo";
/// The user's password.
pub const PASSWORD: &str = "s3cret";
/// An application credential's id.
pub const APP_CREDENTIAL_ID: &str = "app-1";
/// Its secret.
pub const APP_CREDENTIAL_SECRET: &str = "app-s3cret";

/// How the next token requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// As Keystone does.
    Normal,
    /// 201 without the `X-Subject-Token` header.
    NoTokenHeader,
    /// 201 with a body that is not JSON.
    NotJson,
    /// 503.
    Unavailable,
}

#[derive(Debug)]
struct Inner {
    catalog: Mutex<Value>,
    lifetime: Mutex<Duration>,
    valid: Mutex<HashSet<String>>,
    answer: Mutex<Answer>,
    bodies: Mutex<Vec<Value>>,
    issued: AtomicUsize,
    delay: Mutex<Duration>,
}

/// A running fake Keystone.
#[derive(Debug, Clone)]
pub struct FakeKeystone {
    /// `http://127.0.0.1:PORT` (tokens at `/v3/auth/tokens`).
    pub url: String,
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl FakeKeystone {
    fn parts() -> (Arc<Inner>, Router) {
        let inner = Arc::new(Inner {
            catalog: Mutex::new(json!([])),
            lifetime: Mutex::new(Duration::from_secs(3600)),
            valid: Mutex::new(HashSet::new()),
            answer: Mutex::new(Answer::Normal),
            bodies: Mutex::new(Vec::new()),
            issued: AtomicUsize::new(0),
            delay: Mutex::new(Duration::ZERO),
        });
        let app = Router::new()
            .route("/v3/auth/tokens", post(issue))
            .with_state(Arc::clone(&inner));
        (inner, app)
    }

    /// Starts on the test's runtime.
    pub async fn start() -> Self {
        let (inner, app) = Self::parts();
        let url = serve(app).await;
        Self { url, inner }
    }

    /// Starts on a thread of its own (for tests that run a binary).
    #[must_use]
    pub fn start_on_own_thread() -> Self {
        let (inner, app) = Self::parts();
        let url = serve_on_own_thread(app);
        Self { url, inner }
    }

    /// The catalog of the next tokens: `[(type, url)]`, each with public,
    /// internal and admin endpoints in RegionOne.
    pub fn set_catalog(&self, services: &[(&str, &str)]) {
        let catalog: Vec<Value> = services
            .iter()
            .enumerate()
            .map(|(i, (service_type, url))| {
                let endpoints: Vec<Value> = ["public", "internal", "admin"]
                    .iter()
                    .map(|interface| {
                        json!({"id": format!("e{i}-{interface}"), "interface": interface,
                               "region_id": "RegionOne", "region": "RegionOne", "url": url})
                    })
                    .collect();
                json!({"id": format!("s{i}"), "type": service_type, "name": service_type,
                       "endpoints": endpoints})
            })
            .collect();
        *lock(&self.inner.catalog) = Value::Array(catalog);
    }

    /// The lifetime of the next tokens.
    pub fn set_lifetime(&self, lifetime: Duration) {
        *lock(&self.inner.lifetime) = lifetime;
    }

    /// How the next token requests are answered.
    pub fn set_answer(&self, answer: Answer) {
        *lock(&self.inner.answer) = answer;
    }

    /// A delay before each answer (to make concurrent callers overlap).
    pub fn set_delay(&self, delay: Duration) {
        *lock(&self.inner.delay) = delay;
    }

    /// How many tokens were issued.
    #[must_use]
    pub fn issued(&self) -> usize {
        self.inner.issued.load(Ordering::SeqCst)
    }

    /// The bodies of the token requests, in order.
    #[must_use]
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.inner.bodies).clone()
    }

    /// Whether `token` was issued and not revoked.
    #[must_use]
    pub fn is_valid(&self, token: &str) -> bool {
        lock(&self.inner.valid).contains(token)
    }

    /// Revokes every token issued so far.
    pub fn revoke_all(&self) {
        lock(&self.inner.valid).clear();
    }
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        axum::Json(json!({"error": {"code": 401, "title": "Unauthorized",
            "message": "The request you have made requires authentication."}})),
    )
        .into_response()
}

/// Whether the identity part of the request names known credentials.
fn accepted(identity: &Value, inner: &Inner) -> bool {
    let methods = identity["methods"].as_array().cloned().unwrap_or_default();
    match methods.first().and_then(Value::as_str) {
        Some("password") => {
            let user = &identity["password"]["user"];
            let who = user["id"] == USER_ID
                || (user["name"] == USER
                    && (user["domain"]["name"] == "Default" || user["domain"]["id"] == "default"));
            who && user["password"] == PASSWORD
        }
        Some("application_credential") => {
            let app = &identity["application_credential"];
            app["id"] == APP_CREDENTIAL_ID && app["secret"] == APP_CREDENTIAL_SECRET
        }
        Some("token") => identity["token"]["id"]
            .as_str()
            .is_some_and(|t| lock(&inner.valid).contains(t)),
        _ => false,
    }
}

async fn issue(State(inner): State<Arc<Inner>>, body: Bytes) -> Response {
    let delay = *lock(&inner.delay);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    lock(&inner.bodies).push(body.clone());
    if !accepted(&body["auth"]["identity"], &inner) {
        return unauthorized();
    }
    let answer = *lock(&inner.answer);
    if answer == Answer::Unavailable {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let n = inner.issued.fetch_add(1, Ordering::SeqCst) + 1;
    let token = format!("tok-{n}");
    lock(&inner.valid).insert(token.clone());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let expires = now + *lock(&inner.lifetime);
    let scope = &body["auth"]["scope"];
    let mut token_body = json!({
        "methods": ["password"],
        "user": {"id": USER_ID, "name": USER, "domain": {"id": "default", "name": "Default"}},
        "expires_at": rfc3339(expires),
        "issued_at": rfc3339(now),
        "roles": [{"id": "r1", "name": "member"}, {"id": "r2", "name": "reader"}],
        "catalog": lock(&inner.catalog).clone(),
    });
    if scope.get("system").is_some() {
        token_body["system"] = json!({"all": true});
    } else if scope.get("project").is_some() || scope.is_null() {
        token_body["project"] =
            json!({"id": "p-demo", "name": "demo", "domain": {"id": "default", "name": "Default"}});
    } else if let Some(domain) = scope.get("domain") {
        token_body["domain"] = json!({"id": domain["id"].as_str().unwrap_or("default"),
            "name": domain["name"].as_str().unwrap_or("Default")});
    }
    let mut headers = HeaderMap::new();
    if answer != Answer::NoTokenHeader {
        headers.insert("x-subject-token", token.parse().expect("token header"));
    }
    let body = match answer {
        Answer::NotJson => "<html>not json</html>".to_owned(),
        _ => json!({ "token": token_body }).to_string(),
    };
    headers.insert("content-type", "application/json".parse().expect("header"));
    (StatusCode::CREATED, headers, body).into_response()
}

/// `2026-11-24T03:46:51.000000Z` of a time since the epoch.
fn rfc3339(since_epoch: Duration) -> String {
    let secs = since_epoch.as_secs();
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since_epoch.subsec_micros()
    )
}

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's
/// civil-from-days algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Makes `app` answer 401 (as keystonemiddleware) to requests without a
/// token `keystone` knows, except `GET /` (the versions document);
/// counts the 401s in `refused`.
pub fn require_token(app: Router, keystone: &FakeKeystone, refused: Arc<AtomicUsize>) -> Router {
    let keystone = keystone.clone();
    app.layer(middleware::from_fn(move |request: Request, next: Next| {
        let keystone = keystone.clone();
        let refused = Arc::clone(&refused);
        async move {
            if request.uri().path() == "/" {
                return next.run(request).await;
            }
            let token = request
                .headers()
                .get("x-auth-token")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if token.is_some_and(|t| keystone.is_valid(&t)) {
                next.run(request).await
            } else {
                refused.fetch_add(1, Ordering::SeqCst);
                unauthorized()
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(
            rfc3339(Duration::from_secs(0)),
            "1970-01-01T00:00:00.000000Z"
        );
        assert_eq!(
            rfc3339(Duration::from_secs(1_795_000_000)),
            "2026-11-18T11:06:40.000000Z"
        );
        assert_eq!(
            rfc3339(Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000000Z"
        );
    }
}
