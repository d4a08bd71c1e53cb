//! Requests through the load benchmark's two routes (the fair baseline
//! `bare-headers`, and `wrapped-versioned`: the layer around a versioned
//! router) from several threads at once, in process, timed: what the
//! layer's shared state costs when cores serve requests side by side
//! (BENCHMARKS.md, "Server layer in process").
//!
//! ```text
//! cargo build --release -p microversion-server --example layer_threads
//! target/release/examples/layer_threads wrapped-versioned 100000 2
//! target/release/examples/layer_threads bare-headers 100000 2
//! ```
//!
//! Each thread has its own single-threaded runtime and its own clone of
//! the service (as each connection has under `axum::serve`) and sends
//! COUNT requests; the program prints the wall time per request and
//! thread. Counting instructions (`layer_requests` under callgrind) cannot
//! see a reference count that moves between cores: this can. Timings move
//! with the machine: compare builds in alternating runs.

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

async fn handler() -> &'static str {
    "{}"
}

async fn handler_with_headers() -> impl axum::response::IntoResponse {
    (bare_headers::wire_headers(), "{}")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: layer_threads bare-headers|wrapped-versioned COUNT THREADS";
    let kind = args.next().ok_or(usage)?;
    let count: u32 = args.next().ok_or(usage)?.parse()?;
    let threads: u32 = args.next().ok_or(usage)?.parse()?;
    let started = match kind.as_str() {
        "bare-headers" => run(
            &Router::new()
                .route("/resource", get(handler_with_headers))
                .with_state(()),
            count,
            threads,
        )?,
        "wrapped-versioned" => {
            let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
                .profile(Profile::Placement)
                .build()?;
            let routes = VersionedRouter::new()
                .get("/resource", VersionSpan::from_static("1.0 - 1.19"), handler)
                .get(
                    "/resource",
                    VersionSpan::from_static("1.20 - latest"),
                    handler,
                )
                .build()?
                .with_state(());
            run(&MicroversionLayer::new(api).layer(routes), count, threads)?
        }
        _ => return Err(usage.into()),
    };
    let nanos = started.elapsed().as_secs_f64() * 1e9 / f64::from(count);
    println!("{kind}, {threads} threads: {nanos:.0} ns a request on each thread");
    Ok(())
}

/// Sends `count` requests on each of `threads` threads; the start time.
fn run<S>(app: &S, count: u32, threads: u32) -> Result<Instant, Box<dyn std::error::Error>>
where
    S: tower::Service<Request<Body>, Response = axum::response::Response> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: std::error::Error + Send + 'static,
{
    let started = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let app = app.clone();
                scope.spawn(move || send(&app, count))
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| Err("a thread panicked".into()))
            })
            .collect::<Result<Vec<()>, String>>()
    })?;
    Ok(started)
}

fn send<S>(app: &S, count: u32) -> Result<(), String>
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
