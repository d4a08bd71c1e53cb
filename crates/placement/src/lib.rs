//! A Placement-compatible service: OpenStack Placement's API (upstream
//! 16.0.0, microversions 1.0 to 1.39) built on the `microversion` crates,
//! serving upstream's database schema on SQLite, PostgreSQL or MariaDB.
//!
//! Run it with `placement-api` (see [`cli`]); embed it with [`app::router`].

pub mod app;
mod auth;
pub mod cli;
pub mod config;
pub mod context;
pub mod cors;
pub mod db;
mod error;
mod handlers;
pub mod history;
pub mod keystone_authtoken;
pub mod limits;
pub mod listen;
pub mod logging;
pub mod manage;
pub mod metrics;
mod middleware;
mod objects;
pub mod openapi;
pub mod oslo_config;
pub mod policy;
pub mod proxy;
pub mod query;
pub mod requestlog;
pub mod state;
pub mod status;
pub mod versioning;

use anyhow::Context as _;
use axum::serve::ListenerExt as _;

use crate::config::Config;
use crate::db::schema::Synced;
use crate::keystone_authtoken::KeystoneAuthtoken;

/// Creates or checks the schema. As upstream's `placement-manage db sync`,
/// it writes no rows but `alembic_version`: the standard resource classes
/// and traits are added when the service starts.
///
/// # Errors
///
/// Fails when the database cannot be reached or is not one this service
/// can use.
pub async fn db_sync(config: &Config) -> anyhow::Result<Synced> {
    let store = db::Store::connect_with(&config.database, &config.database_pool)
        .await
        .with_context(|| {
            format!(
                "cannot open the database {}",
                db::redacted(&config.database)
            )
        })?;
    let synced = db::schema::sync(&store).await?;
    store.close().await;
    Ok(synced)
}

/// How the service stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stopped {
    /// Every request in flight at the signal finished.
    Drained,
    /// The shutdown timeout ran out: the connections still open were
    /// dropped.
    TimedOut,
}

/// Serves the API until interrupted (SIGINT or SIGTERM), syncing a new
/// database first: on TCP at [`Config::bind`], over TLS there when a
/// certificate is configured, or on a Unix socket (see [`listen`]).
///
/// On SIGHUP, `reload` gives the settings as they are now, and the range
/// of microversions served (`[microversions]`) follows them from the
/// next request on; other settings need a restart. Settings that cannot
/// be read change nothing: the error is logged and the range stays.
///
/// On the signal the listener is closed (new connections are refused),
/// idle keep-alive connections are closed, and the requests in flight
/// are finished, each connection closing after its response; what is
/// still open after [`Config::shutdown_timeout`] is dropped. The
/// database pools are closed then.
///
/// # Errors
///
/// Fails when the database, the address or socket, or the TLS files
/// cannot be used.
pub async fn serve(
    config: Config,
    reload: impl Fn() -> anyhow::Result<Config> + Send + 'static,
) -> anyhow::Result<Stopped> {
    let bind = config.bind;
    let tls = config.server.tls_config()?;
    let unix_socket = config.server.unix_socket.clone();
    let metrics_bind = config.metrics_bind;
    let timeout = config.shutdown_timeout;
    let keystone_warnings = config.keystone.iter().flat_map(KeystoneAuthtoken::warnings);
    for warning in config.warnings.iter().cloned().chain(keystone_warnings) {
        tracing::warn!("{warning}");
        eprintln!("placement-api: warning: {warning}");
    }
    let (state, router) = app::ready(config).await?;
    reload_on_hangup(state.api.clone(), reload)?;
    let listener = match &unix_socket {
        Some(path) => {
            let (listener, file) = listen::bind_unix(path).await?;
            Listening::Unix(listener, file)
        }
        None => {
            let listener = tokio::net::TcpListener::bind(bind)
                .await
                .with_context(|| format!("cannot listen on {bind}"))?;
            match tls {
                Some(tls) => Listening::Tls(listen::TlsListener::new(listener, tls)?),
                None => Listening::Tcp(listener),
            }
        }
    };
    // Stopped when the API server stops (dropping the sender).
    let (_metrics_running, metrics_stop) = tokio::sync::oneshot::channel::<()>();
    if let (Some(metrics), Some(metrics_bind)) = (state.metrics.clone(), metrics_bind) {
        let metrics_listener = tokio::net::TcpListener::bind(metrics_bind)
            .await
            .with_context(|| format!("cannot listen on {metrics_bind} for the metrics"))?;
        eprintln!(
            "placement-api metrics on http://{}/metrics",
            metrics_listener.local_addr()?
        );
        tokio::spawn(async move {
            let served = axum::serve(metrics_listener, metrics.router())
                .with_graceful_shutdown(async move {
                    let _ = metrics_stop.await;
                })
                .await;
            if let Err(e) = served {
                tracing::error!("the metrics listener failed: {e}");
            }
        });
    }
    let (signalled, on_signal) = tokio::sync::oneshot::channel();
    let stopping = async move {
        shutdown_signal().await;
        eprintln!(
            "placement-api: stopping: new connections refused, requests in flight get {} s to finish",
            timeout.as_secs_f64()
        );
        let _ = signalled.send(());
    };
    // The socket file is removed when the service stops.
    let mut _socket_file = None;
    let server: std::pin::Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>> = match listener
    {
        Listening::Tcp(listener) => {
            eprintln!(
                "placement-api listening on http://{}",
                listener.local_addr()?
            );
            let router = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
            Box::pin(
                axum::serve(without_nagle(listener), router)
                    .with_graceful_shutdown(stopping)
                    .into_future(),
            )
        }
        Listening::Tls(listener) => {
            use axum::serve::Listener as _;
            eprintln!(
                "placement-api listening on https://{}",
                listener.local_addr()?
            );
            let router = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
            // `TapIo` for its `ConnectInfo` of the peer's address;
            // the listener itself turned Nagle's algorithm off.
            let listener = listener.tap_io(|_: &mut _| {});
            Box::pin(
                axum::serve(listener, router)
                    .with_graceful_shutdown(stopping)
                    .into_future(),
            )
        }
        Listening::Unix(listener, file) => {
            eprintln!("placement-api listening on unix:{}", file.path().display());
            _socket_file = Some(file);
            Box::pin(
                axum::serve(listener, router.into_make_service())
                    .with_graceful_shutdown(stopping)
                    .into_future(),
            )
        }
    };
    let deadline = async move {
        match on_signal.await {
            Ok(()) => tokio::time::sleep(timeout).await,
            // The server stopped without a signal: it has its own answer.
            Err(_) => std::future::pending().await,
        }
    };
    let stopped = tokio::select! {
        served = server => {
            served?;
            Stopped::Drained
        }
        () = deadline => Stopped::TimedOut,
    };
    match stopped {
        Stopped::Drained => state.store.close().await,
        Stopped::TimedOut => {
            eprintln!(
                "placement-api: the shutdown timeout ({} s) ran out: connections still open were dropped",
                timeout.as_secs_f64()
            );
            // A request cut short may still hold a database connection,
            // which the pools' close would wait for.
            let _ = tokio::time::timeout(POOL_CLOSE_GRACE, state.store.close()).await;
        }
    }
    Ok(stopped)
}

/// The listener [`serve`] serves on.
enum Listening {
    Tcp(tokio::net::TcpListener),
    Tls(listen::TlsListener),
    Unix(tokio::net::UnixListener, listen::SocketFile),
}

/// How long the database pools may take to close after the shutdown
/// timeout ran out.
const POOL_CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// `listener`, with Nagle's algorithm off on each connection it accepts
/// (as gunicorn does for upstream). An answer of more than one piece ends
/// with a short write, which Nagle's algorithm holds until the client
/// acknowledges the piece before, and Linux clients delay that ACK by up
/// to 40 ms (docs/decisions.md).
fn without_nagle(
    listener: tokio::net::TcpListener,
) -> axum::serve::TapIo<tokio::net::TcpListener, fn(&mut tokio::net::TcpStream)> {
    fn set_nodelay(tcp: &mut tokio::net::TcpStream) {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY on an accepted connection: {e}");
        }
    }
    listener.tap_io(set_nodelay)
}

/// Applies the served range of the settings `reload` reads on each
/// SIGHUP (see [`serve`]).
fn reload_on_hangup(
    api: microversion_server::Microversions,
    reload: impl Fn() -> anyhow::Result<Config> + Send + 'static,
) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangup = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                let applied = reload()
                    .and_then(|config| versioning::served_range(config.microversions))
                    .and_then(|range| Ok(api.set_served_range(range).map(|()| range)?));
                let now = api.range();
                match applied {
                    Ok(_) => tracing::info!(
                        "SIGHUP: serving microversions {} to {} ([microversions]; other settings change at a restart)",
                        now.min(),
                        now.max()
                    ),
                    Err(e) => tracing::error!(
                        "SIGHUP: settings not reloaded, still serving microversions {} to {}: {e:#}",
                        now.min(),
                        now.max()
                    ),
                }
            }
        });
    }
    #[cfg(not(unix))]
    let _ = (api, reload);
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        else {
            let _ = interrupt.await;
            return;
        };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

#[cfg(test)]
mod tests {
    use axum::serve::Listener as _;

    /// Every connection the API's listener accepts has Nagle's algorithm
    /// off.
    #[tokio::test]
    async fn accepted_connections_have_nodelay() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let address = listener.local_addr().expect("its address");
        let mut listener = super::without_nagle(listener);
        for _ in 0..2 {
            let client = tokio::net::TcpStream::connect(address);
            let ((accepted, _), client) = tokio::join!(listener.accept(), client);
            client.expect("the client connects");
            assert!(accepted.nodelay().expect("the socket's option"));
        }
    }
}
