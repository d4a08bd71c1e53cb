//! Requests through one route, in process, for counting instructions with
//! callgrind (BENCHMARKS.md, "What falls short"): the route bare, behind
//! `MicroversionLayer`, or behind the layer with versioned dispatch.
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
use microversion::VersionRange;
use microversion_server::{MicroversionLayer, Microversions, Profile, VersionedRouter, Versions};
use tower::ServiceExt;

async fn handler() -> &'static str {
    "{}"
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: layer_requests bare|layered|versioned COUNT";
    let kind = args.next().ok_or(usage)?;
    let count: usize = args.next().ok_or(usage)?.parse()?;
    let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(Profile::Placement)
        .build()?;
    let app: Router = match kind.as_str() {
        "bare" => Router::new().route("/resource", get(handler)),
        "layered" => Router::new()
            .route("/resource", get(handler))
            .layer(MicroversionLayer::new(api)),
        "versioned" => VersionedRouter::new()
            .get("/resource", Versions::between("1.0", "1.19"), handler)
            .get("/resource", Versions::since("1.20"), handler)
            .build()?
            .layer(MicroversionLayer::new(api)),
        _ => return Err(usage.into()),
    };
    let app = app.with_state(());
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
