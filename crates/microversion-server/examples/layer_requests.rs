//! Requests through one route, in process, for counting instructions with
//! callgrind (BENCHMARKS.md, "Server layer in process"): the route bare
//! (`bare`), behind `MicroversionLayer` (`layered`), or behind the layer
//! with versioned dispatch (`versioned`), the layer applied with
//! `Router::layer`; or the same two with the layer wrapped around the whole
//! router (`wrapped-layered`, `wrapped-versioned`); or the bare route
//! sending, from its handler, the three headers the layer adds (a fixed
//! version, `Vary`, a new request id: `bare-headers`, the same code as the
//! load benchmark's fair baseline, `support/bare_headers.rs`), to tell
//! what the wire spec's headers cost apart from negotiation and dispatch.
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

/// The bare handler, answering with the headers the layer would add.
async fn handler_with_headers() -> impl axum::response::IntoResponse {
    (bare_headers::wire_headers(), "{}")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: layer_requests bare|bare-headers|layered|versioned|wrapped-layered|wrapped-versioned COUNT";
    let kind = args.next().ok_or(usage)?;
    let count: usize = args.next().ok_or(usage)?.parse()?;
    let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(Profile::Placement)
        .build()?;
    let layer = MicroversionLayer::new(api);
    let plain = || Router::new().route("/resource", get(handler));
    let versioned = || {
        VersionedRouter::new()
            .get("/resource", VersionSpan::from_static("1.0 - 1.19"), handler)
            .get(
                "/resource",
                VersionSpan::from_static("1.20 - latest"),
                handler,
            )
            .build()
    };
    match kind.as_str() {
        "bare" => send(&plain().with_state(()), count),
        "bare-headers" => send(
            &Router::new()
                .route("/resource", get(handler_with_headers))
                .with_state(()),
            count,
        ),
        "layered" => send(&plain().layer(layer).with_state(()), count),
        "versioned" => send(&versioned()?.layer(layer).with_state(()), count),
        "wrapped-layered" => send(&layer.layer(plain().with_state(())), count),
        "wrapped-versioned" => send(&layer.layer(versioned()?.with_state(())), count),
        _ => Err(usage.into()),
    }
}

fn send<S>(app: &S, count: usize) -> Result<(), Box<dyn std::error::Error>>
where
    S: tower::Service<Request<Body>, Response = axum::response::Response> + Clone,
    S::Error: std::error::Error + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    for _ in 0..16 + count {
        let request = Request::get("/resource")
            .header("host", "127.0.0.1:8080")
            .header("openstack-api-version", "placement 1.20")
            .body(Body::empty())?;
        let response = runtime.block_on(app.clone().oneshot(request))?;
        if response.status() != StatusCode::OK {
            return Err(format!("answered {}", response.status()).into());
        }
    }
    Ok(())
}
