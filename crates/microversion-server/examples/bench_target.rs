//! Three servers for the load benchmark (`scripts/bench-load.sh`): the
//! same route bare, bare with the headers the wire rules require sent by
//! its own handler (the fair baseline), and behind the microversion layer
//! with versioned dispatch.
//!
//! ```text
//! cargo run --release -p microversion-server --example bench_target -- \
//!     --bare 127.0.0.1:18081 --bare-headers 127.0.0.1:18082 \
//!     --layered 127.0.0.1:18083
//! ```
//!
//! `GET /resource` answers the same small JSON body on all three. The
//! bare-headers handler adds the layer's three headers itself
//! (`support/bare_headers.rs`, shared with `layer_requests`), so that it
//! and the layered server answer the same header set. On the layered
//! server the route has two handlers (1.0 - 1.19 and 1.20 - latest)
//! chosen by the served version, as a real API's route would, and the
//! layer wraps the whole router once, the cheaper of the two ways to apply
//! it (see `MicroversionLayer`).

use std::net::SocketAddr;

use axum::extract::Request;
use axum::routing::get;
use axum::{Json, Router, ServiceExt};
use clap::Parser;
use microversion::{VersionRange, VersionSpan};
use microversion_server::{MicroversionLayer, Microversions, Profile, VersionedRouter};
use serde_json::{Value, json};
use tower::Layer;

#[path = "support/bare_headers.rs"]
mod bare_headers;

/// Serve the bare, the bare-headers and the layered route.
#[derive(Debug, Parser)]
struct Args {
    /// Address of the bare axum route.
    #[arg(long)]
    bare: SocketAddr,
    /// Address of the bare route whose handler sends the layer's headers.
    #[arg(long)]
    bare_headers: SocketAddr,
    /// Address of the same route behind the microversion layer.
    #[arg(long)]
    layered: SocketAddr,
}

async fn old() -> Json<Value> {
    Json(json!({"name": "rp1", "generation": 1}))
}

async fn new() -> Json<Value> {
    Json(json!({"name": "rp1", "generation": 1}))
}

/// The bare handler with the headers the wire rules require.
async fn new_with_headers() -> impl axum::response::IntoResponse {
    (bare_headers::wire_headers(), new().await)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let bare = Router::new().route("/resource", get(new));
    let bare_with_headers = Router::new().route("/resource", get(new_with_headers));
    let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(Profile::Placement)
        .build()?;
    let routes: Router = VersionedRouter::new()
        .get("/resource", VersionSpan::from_static("1.0 - 1.19"), old)
        .get("/resource", VersionSpan::from_static("1.20 - latest"), new)
        .build_for(&api)?
        .with_state(());
    let layered = MicroversionLayer::new(api).layer(routes);
    let bare_listener = tokio::net::TcpListener::bind(args.bare).await?;
    let headers_listener = tokio::net::TcpListener::bind(args.bare_headers).await?;
    let layered_listener = tokio::net::TcpListener::bind(args.layered).await?;
    eprintln!(
        "bare on http://{}, bare-headers on http://{}, layered on http://{}",
        bare_listener.local_addr()?,
        headers_listener.local_addr()?,
        layered_listener.local_addr()?
    );
    let bare = tokio::spawn(async move { axum::serve(bare_listener, bare).await });
    let bare_with_headers =
        tokio::spawn(async move { axum::serve(headers_listener, bare_with_headers).await });
    let layered = tokio::spawn(async move {
        axum::serve(
            layered_listener,
            ServiceExt::<Request>::into_make_service(layered),
        )
        .await
    });
    let (a, b, c) = tokio::join!(bare, bare_with_headers, layered);
    a??;
    b??;
    c??;
    Ok(())
}
