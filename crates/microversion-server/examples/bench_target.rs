//! Two servers for the load benchmark (`scripts/bench-load.sh`): the same
//! route, bare and behind the microversion layer with versioned dispatch.
//!
//! ```text
//! cargo run --release -p microversion-server --example bench_target -- \
//!     --bare 127.0.0.1:18081 --layered 127.0.0.1:18082
//! ```
//!
//! `GET /resource` answers a small JSON body on both. On the layered
//! server it has two handlers (1.0 - 1.19 and 1.20 - latest) chosen by the
//! served version, as a real API's route would, and the layer wraps the
//! whole router once, the cheaper of the two ways to apply it (see
//! `MicroversionLayer`).

use std::net::SocketAddr;

use axum::extract::Request;
use axum::routing::get;
use axum::{Json, Router, ServiceExt};
use clap::Parser;
use microversion::{VersionRange, VersionSpan};
use microversion_server::{MicroversionLayer, Microversions, Profile, VersionedRouter};
use serde_json::{Value, json};
use tower::Layer;

/// Serve the bare and the layered route.
#[derive(Debug, Parser)]
struct Args {
    /// Address of the bare axum route.
    #[arg(long)]
    bare: SocketAddr,
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let bare = Router::new().route("/resource", get(new));
    let api = Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(Profile::Placement)
        .build()?;
    let routes: Router = VersionedRouter::new()
        .get("/resource", VersionSpan::from_static("1.0 - 1.19"), old)
        .get("/resource", VersionSpan::from_static("1.20 - latest"), new)
        .build()?
        .with_state(());
    let layered = MicroversionLayer::new(api).layer(routes);
    let bare_listener = tokio::net::TcpListener::bind(args.bare).await?;
    let layered_listener = tokio::net::TcpListener::bind(args.layered).await?;
    eprintln!(
        "bare on http://{}, layered on http://{}",
        bare_listener.local_addr()?,
        layered_listener.local_addr()?
    );
    let bare = tokio::spawn(async move { axum::serve(bare_listener, bare).await });
    let layered = tokio::spawn(async move {
        axum::serve(
            layered_listener,
            ServiceExt::<Request>::into_make_service(layered),
        )
        .await
    });
    let (a, b) = tokio::join!(bare, layered);
    a??;
    b??;
    Ok(())
}
