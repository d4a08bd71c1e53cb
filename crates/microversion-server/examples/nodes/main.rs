//! A sample service shaped like a slice of OpenStack Ironic: bare metal
//! `nodes` over ten microversions, each making one kind of change (the
//! table is in `service.rs`), built only on the crates' public API.
//!
//! ```text
//! cargo run -p microversion-server --features derive,json-schema,contracts \
//!     --example nodes -- --bind 127.0.0.1:6385
//! curl -s localhost:6385/ ; curl -s -H 'OpenStack-API-Version: baremetal 1.3' localhost:6385/nodes
//! curl -s 'localhost:6385/openapi.json?version=1.5'
//! ```
//!
//! It speaks Ironic's dialect (`Profile::Ironic`, service type
//! `baremetal`): the version headers, error bodies and refusals are
//! Ironic's. `GET /` is the versions document, `/history` the version
//! history, `/openapi.json?version=X.Y` a version's OpenAPI document
//! (the whole range's without `version`), `/healthcheck` version-neutral.
//!
//! Every answer is checked against the document of its version
//! (`--response-validation`, `error` by default: a mismatch becomes a 500
//! naming it, which is what a sample wants to be told; `warn` logs it and
//! lets the answer through, `off` checks nothing).
//!
//! `--openapi X.Y` prints one version's document and exits; `--openapi
//! all` the whole range's, with `x-openstack` ranges.

mod service;

use std::net::SocketAddr;
use std::process::ExitCode;

use axum::serve::ListenerExt;
use clap::Parser;
use microversion_server::openapi::ResponseValidation;

use crate::service::Nodes;

/// Serve the sample nodes API.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on (Ironic's port is 6385).
    #[arg(long, default_value = "127.0.0.1:6385")]
    bind: SocketAddr,
    /// What an answer that does not match its document does: error (a
    /// 500 naming the mismatch), warn (logged), off.
    #[arg(long, default_value = "error")]
    response_validation: ResponseValidation,
    /// Print the OpenAPI document of this version (`X.Y`, or `all` for
    /// the whole range) and exit.
    #[arg(long, value_name = "VERSION")]
    openapi: Option<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nodes: error: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: Args) -> Result<(), service::BuildFailure> {
    let nodes = Nodes::build()?;
    if let Some(which) = &args.openapi {
        let document = if which == "all" {
            nodes.description.whole()
        } else {
            nodes.description.at(nodes.api.resolve_text(which)?)?
        };
        println!("{}", document.to_json_pretty());
        return Ok(());
    }
    // Warnings of `--response-validation warn` are `tracing` events.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let range = nodes.history.range();
    let app = nodes.app(args.response_validation)?;
    let listener = tokio::net::TcpListener::bind(args.bind).await?;
    eprintln!(
        "nodes: baremetal API {} - {} (ironic profile, response validation {}) on http://{}",
        range.min(),
        range.max(),
        args.response_validation,
        listener.local_addr()?
    );
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            eprintln!("nodes: TCP_NODELAY not set on a connection: {e}");
        }
    });
    axum::serve(listener, app).await?;
    Ok(())
}
