//! An axum app on 127.0.0.1: on the test's runtime, or on a thread of its
//! own for tests that block (running a binary against the server).

use std::net::SocketAddr;

use axum::Router;

/// Serves `app` on 127.0.0.1 at a free port, on the current tokio runtime,
/// until that runtime stops (the test ends). Returns the base URL,
/// `http://127.0.0.1:PORT`, without a trailing slash.
///
/// # Panics
///
/// When no loopback port can be bound, or outside a tokio runtime.
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    serve_on(listener, app)
}

/// Serves `app` on `listener`, a port the caller chose, on the current
/// tokio runtime; returns the base URL as [`serve`] does.
///
/// # Panics
///
/// When the listener has no local address, or outside a tokio runtime.
pub fn serve_on(listener: tokio::net::TcpListener, app: Router) -> String {
    let addr = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
    base(addr)
}

/// Serves `app` as [`serve`] does, on a thread of its own with its own
/// runtime, so that a blocking test (one running a binary against the
/// server) and an async one can both use it. The port is bound before this
/// returns: the server accepts connections at once.
///
/// # Panics
///
/// When no loopback port can be bound.
pub fn serve_on_own_thread(app: Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    listener.set_nonblocking(true).expect("non-blocking");
    let addr = listener.local_addr().expect("local address");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            axum::serve(listener, app).await.expect("serve");
        });
    });
    base(addr)
}

/// The base URL of a loopback port that nothing listens on (it was bound,
/// then released), for tests of connection errors.
///
/// # Panics
///
/// When no loopback port can be bound.
pub fn dead_base() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local address");
    drop(listener);
    base(addr)
}

fn base(addr: SocketAddr) -> String {
    format!("http://{addr}")
}
