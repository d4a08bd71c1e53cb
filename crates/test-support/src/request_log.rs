//! What a test server received, for tests that count requests (one
//! discovery, not two) or read the headers a client sent.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use http::{HeaderMap, Method};

/// One request as a server received it.
#[derive(Clone, Debug)]
pub struct SeenRequest {
    /// Its method.
    pub method: Method,
    /// The path of its URI, without the query.
    pub path: String,
    /// Its headers, repeated ones kept.
    pub headers: HeaderMap,
}

impl SeenRequest {
    /// The first value of the header `name`, when it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Every request a server received, in order. Clones share one log.
#[derive(Clone, Debug, Default)]
pub struct RequestLog {
    seen: Arc<Mutex<Vec<SeenRequest>>>,
}

impl RequestLog {
    /// `app`, recording every request it receives into this log before the
    /// request reaches its routes.
    pub fn recording(&self, app: Router) -> Router {
        let log = self.clone();
        app.layer(middleware::from_fn(move |req: Request, next: Next| {
            log.lock().push(SeenRequest {
                method: req.method().clone(),
                path: req.uri().path().to_owned(),
                headers: req.headers().clone(),
            });
            next.run(req)
        }))
    }

    /// Every request so far.
    pub fn all(&self) -> Vec<SeenRequest> {
        self.lock().clone()
    }

    /// The requests whose path is one of `paths`.
    pub fn to(&self, paths: &[&str]) -> Vec<SeenRequest> {
        self.all()
            .into_iter()
            .filter(|s| paths.contains(&s.path.as_str()))
            .collect()
    }

    /// How many requests went to one of `paths`.
    pub fn count(&self, paths: &[&str]) -> usize {
        self.to(paths).len()
    }

    /// How many requests there were in all.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no request came.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Forgets every request so far.
    pub fn clear(&self) {
        self.lock().clear();
    }

    // A test that panicked while holding the lock has failed already; the
    // log is still worth reading for the others.
    fn lock(&self) -> MutexGuard<'_, Vec<SeenRequest>> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
