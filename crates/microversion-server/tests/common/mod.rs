//! Shared test support: serve a router on a loopback port.

#![allow(dead_code, unreachable_pub)]

use axum::Router;

/// Serves `app` on 127.0.0.1 at a free port; returns its base URL
/// (`http://127.0.0.1:PORT`). The server runs until the test ends.
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    format!("http://{addr}")
}
