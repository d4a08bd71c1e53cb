//! Requests through one route, in process, for counting instructions with
//! callgrind (BENCHMARKS.md, "Server layer in process"): the route bare
//! (`bare`), behind `MicroversionLayer` (`layered`), or behind the layer
//! with versioned dispatch (`versioned`), the layer applied with
//! `Router::layer`; or the same two with the layer wrapped around the whole
//! router (`wrapped-layered`, `wrapped-versioned`); or the bare route
//! sending, from its handler, the three headers the layer adds (a fixed
//! version, `Vary`, a new request id: `bare-headers`, the same code as the
//! load benchmark's fair baseline, `support/bare_headers.rs`), to tell
//! what the wire spec's headers cost apart from negotiation and dispatch;
//! or `wrapped-versioned` with `ResponseValidationLayer` inside the layer,
//! off (`wrapped-validation-off`) or checking each answer's status and
//! JSON body (`wrapped-validation-error`; features `openapi` and
//! `json-schema`).
//!
//! ```text
//! cargo build --release -p microversion-server --example layer_requests
//! valgrind --tool=callgrind target/release/examples/layer_requests layered 10
//! valgrind --tool=callgrind target/release/examples/layer_requests layered 1010
//! ```
//!
//! Instructions per request: the difference of the two totals divided by
//! 1,000. Each run first sends 16 requests that warm what is made on
//! first use.
//!
//! With a third argument, THREADS, the requests are sent from that many
//! threads at once, COUNT on each, and timed: what the layer's shared
//! state costs when cores serve requests side by side, which counting
//! instructions cannot see (a reference count that moves between cores).
//! Each thread has its own single-threaded runtime and its own clone of
//! the route, as each connection has under `axum::serve`; the run prints
//! the wall time per request on each thread. Timings move with the
//! machine: compare builds and routes in alternating runs.
//!
//! ```text
//! target/release/examples/layer_requests wrapped-versioned 100000 2
//! target/release/examples/layer_requests bare-headers 100000 2
//! ```

use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use http::{Request, StatusCode};
use microversion::{VersionRange, VersionSpan};
use microversion_server::{MicroversionLayer, Microversions, Profile, VersionedRouter};
use tower::{Layer, ServiceExt};

#[path = "support/bare_headers.rs"]
mod bare_headers;

/// `wrapped-versioned` with its answers checked against a document of
/// the route (features `openapi` and `json-schema`).
#[cfg(all(feature = "openapi", feature = "json-schema"))]
mod validation {
    use http::StatusCode;
    use microversion::VersionSpan;
    use microversion_server::openapi::{
        ApiDescription, OperationDoc, ResponseDoc, ResponseValidation, ResponseValidationLayer,
    };
    use microversion_server::{Microversions, VersionedRouter};

    pub(crate) fn layer(
        api: &Microversions,
        mode: ResponseValidation,
    ) -> Result<ResponseValidationLayer, Box<dyn std::error::Error>> {
        let routes = VersionedRouter::<()>::new()
            .get(
                "/resource",
                VersionSpan::from_static("1.0 - 1.19"),
                super::handler,
            )
            .get(
                "/resource",
                VersionSpan::from_static("1.20 - latest"),
                super::handler,
            );
        let description = ApiDescription::builder(api)
            .routes(&routes)
            .operation(OperationDoc::get("/resource").response(
                VersionSpan::ALL,
                StatusCode::OK,
                ResponseDoc::json("The resource", serde_json::json!({"type": "object"})),
            ))
            .build()?;
        Ok(ResponseValidationLayer::new(&description, mode))
    }
}

async fn handler() -> &'static str {
    "{}"
}

/// The bare handler, answering with the headers the layer would add.
async fn handler_with_headers() -> impl axum::response::IntoResponse {
    (bare_headers::wire_headers(), "{}")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: layer_requests bare|bare-headers|layered|versioned|wrapped-layered|wrapped-versioned\
                 |wrapped-validation-off|wrapped-validation-error COUNT [THREADS]";
    let kind = args.next().ok_or(usage)?;
    let count: u32 = args.next().ok_or(usage)?.parse()?;
    let threads: Option<u32> = args.next().map(|t| t.parse()).transpose()?;

    let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(Profile::Placement)
        .build()?;
    let plain = || Router::new().route("/resource", get(handler));
    let versioned = || {
        VersionedRouter::new()
            .get("/resource", VersionSpan::from_static("1.0 - 1.19"), handler)
            .get(
                "/resource",
                VersionSpan::from_static("1.20 - latest"),
                handler,
            )
            .build_for(&api)
    };
    let layer = MicroversionLayer::new(api.clone());
    match kind.as_str() {
        "bare" => send(&plain().with_state(()), count, threads),
        "bare-headers" => send(
            &Router::new()
                .route("/resource", get(handler_with_headers))
                .with_state(()),
            count,
            threads,
        ),
        "layered" => send(&plain().layer(layer).with_state(()), count, threads),
        "versioned" => send(&versioned()?.layer(layer).with_state(()), count, threads),
        "wrapped-layered" => send(&layer.layer(plain().with_state(())), count, threads),
        "wrapped-versioned" => send(&layer.layer(versioned()?.with_state(())), count, threads),
        #[cfg(all(feature = "openapi", feature = "json-schema"))]
        "wrapped-validation-off" | "wrapped-validation-error" => {
            use microversion_server::openapi::ResponseValidation;
            let mode = if kind.ends_with("off") {
                ResponseValidation::Off
            } else {
                ResponseValidation::Error
            };
            let checked = validation::layer(&api, mode)?.layer(versioned()?.with_state(()));
            send(&layer.layer(checked), count, threads)
        }
        _ => Err(usage.into()),
    }
}

/// Sends `count` requests (after 16 that warm up) on this thread, or
/// `count` on each of `threads` threads at once, timed.
fn send<S>(app: &S, count: u32, threads: Option<u32>) -> Result<(), Box<dyn std::error::Error>>
where
    S: tower::Service<Request<Body>, Response = axum::response::Response> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: std::error::Error,
{
    let Some(threads) = threads else {
        return Ok(requests(app, 16 + count)?);
    };
    let started = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let app = app.clone();
                scope.spawn(move || requests(&app, count))
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err("a thread panicked".into())))
            .collect::<Result<Vec<()>, String>>()
    })?;
    let nanos = started.elapsed().as_secs_f64() * 1e9 / f64::from(count);
    println!("{threads} threads: {nanos:.0} ns a request on each thread");
    Ok(())
}

/// `count` requests, one after another, on a runtime of this thread.
fn requests<S>(app: &S, count: u32) -> Result<(), String>
where
    S: tower::Service<Request<Body>, Response = axum::response::Response> + Clone,
    S::Error: std::error::Error,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| e.to_string())?;
    for _ in 0..count {
        let request = Request::get("/resource")
            .header("host", "127.0.0.1:8080")
            .header("openstack-api-version", "placement 1.20")
            .body(Body::empty())
            .map_err(|e| e.to_string())?;
        let response = runtime
            .block_on(app.clone().oneshot(request))
            .map_err(|e| e.to_string())?;
        if response.status() != StatusCode::OK {
            return Err(format!("answered {}", response.status()));
        }
    }
    Ok(())
}
