//! A database server that goes away (a crash, a Galera node killed) gets
//! 503 with an errors body, promptly, not a 500 after the pool's 30 s; the
//! service serves again once the server is back. The service reaches the
//! database of `PLACEMENT_TEST_DATABASE` (PostgreSQL or MySQL) through a
//! TCP proxy of the test, which the test stops (closing every connection,
//! refusing new ones) and starts again on the same port. Without such a
//! database (SQLite, a file of the process) there is nothing to lose.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use support::{Server, uuid};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// A proxy from a loopback port to the database server.
struct Proxy {
    tasks: JoinSet<()>,
}

impl Proxy {
    /// Forwards connections to `listener` to `target` until dropped.
    fn start(listener: TcpListener, target: String) -> Proxy {
        let mut tasks = JoinSet::new();
        tasks.spawn(async move {
            let mut connections = JoinSet::new();
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    continue;
                };
                let target = target.clone();
                connections.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        Proxy { tasks }
    }

    /// Closes the listener and every forwarded connection.
    async fn stop(mut self) {
        self.tasks.shutdown().await;
    }
}

/// `url` with its `host:port` replaced by `addr`, and the old `host:port`.
fn through(url: &str, addr: &str) -> (String, String) {
    let (scheme, rest) = url.split_once("://").expect("a URL with ://");
    let (credentials, rest) = match rest.split_once('@') {
        Some((c, r)) => (format!("{c}@"), r),
        None => (String::new(), rest),
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (hostport, tail) = rest.split_at(end);
    let default = if scheme.starts_with("postgres") {
        5432
    } else {
        3306
    };
    let target = if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:{default}")
    };
    (format!("{scheme}://{credentials}{addr}{tail}"), target)
}

async fn list_status(s: &Server) -> (u16, serde_json::Value, Duration) {
    let start = Instant::now();
    let r = s.get("/resource_providers", "1.39").await;
    (r.status, r.body, start.elapsed())
}

#[tokio::test]
async fn a_lost_database_is_a_prompt_503_until_it_is_back() {
    let Ok(url) = std::env::var("PLACEMENT_TEST_DATABASE") else {
        return;
    };
    if url.is_empty() || url.starts_with("sqlite") {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (proxied, target) = through(&url, &addr.to_string());
    let proxy = Proxy::start(listener, target.clone());
    let s = Server::start_with(|c| c.database = proxied).await;
    let rp = uuid();
    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &serde_json::json!({"name": format!("unreachable {rp}"), "uuid": rp}),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");

    proxy.stop().await;
    // The pooled connections are gone and new ones are refused: the first
    // request learns it within the probe's second, the next ones at once.
    let (status, body, took) = list_status(&s).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["errors"][0]["status"], 503, "{body}");
    assert_eq!(body["errors"][0]["title"], "Service Unavailable", "{body}");
    let detail = body["errors"][0]["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("The database cannot be reached; please try again later."),
        "{detail}"
    );
    assert!(took < Duration::from_secs(5), "first 503 after {took:?}");
    for _ in 0..3 {
        let (status, body, took) = list_status(&s).await;
        assert_eq!(status, 503, "{body}");
        assert!(took < Duration::from_millis(500), "503 after {took:?}");
    }
    let r = s
        .put(
            &format!("/resource_providers/{rp}"),
            "1.20",
            &serde_json::json!({"name": "renamed while down"}),
        )
        .await;
    assert_eq!(r.status, 503, "{r:?}");
    // The versions document does not need the database.
    let r = s.get("/", "1.39").await;
    assert_eq!(r.status, 200, "{r:?}");

    // The server comes back on the same address: served again.
    let listener = TcpListener::bind(addr).await.expect("bind the same port");
    let proxy = Proxy::start(listener, target);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body, _) = list_status(&s).await;
        if status == 200 {
            break;
        }
        assert_eq!(status, 503, "{body}");
        assert!(
            Instant::now() < deadline,
            "still 503 10 s after the server came back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let r = s.get(&format!("/resource_providers/{rp}"), "1.20").await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body["name"], format!("unreachable {rp}"), "{r:?}");
    proxy.stop().await;
}

#[test]
fn the_proxy_address_replaces_the_server_in_each_url_form() {
    assert_eq!(
        through(
            "postgresql+psycopg2://postgres@127.0.0.1:5432/db",
            "127.0.0.1:9"
        ),
        (
            "postgresql+psycopg2://postgres@127.0.0.1:9/db".to_owned(),
            "127.0.0.1:5432".to_owned()
        )
    );
    assert_eq!(
        through(
            "mysql+pymysql://root@localhost/db?charset=utf8",
            "127.0.0.1:9"
        ),
        (
            "mysql+pymysql://root@127.0.0.1:9/db?charset=utf8".to_owned(),
            "localhost:3306".to_owned()
        )
    );
}

/// oslo.db's `max_retries` and `retry_interval` at start: a server that
/// cannot be reached yet is tried again until it can (`-1`: without end),
/// and one that stays unreachable is given up after the last try.
#[tokio::test]
async fn the_start_waits_for_the_database() {
    let Ok(url) = std::env::var("PLACEMENT_TEST_DATABASE") else {
        return;
    };
    if url.starts_with("sqlite") {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    drop(listener);
    let (proxied, target) = through(&url, &addr);
    let waiting = placement::db::PoolSettings {
        max_retries: None,
        retry_interval: Duration::from_millis(200),
        ..placement::db::PoolSettings::default()
    };
    let start = Instant::now();
    let connecting = tokio::spawn({
        let proxied = proxied.clone();
        async move { placement::db::Store::connect_with(&proxied, &waiting).await }
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!connecting.is_finished(), "the start did not wait");
    let proxy = Proxy::start(TcpListener::bind(&addr).await.unwrap(), target);
    let store = tokio::time::timeout(Duration::from_secs(30), connecting)
        .await
        .expect("the start ends once the database is there")
        .unwrap()
        .expect("the database opens");
    assert!(start.elapsed() >= Duration::from_millis(1500));
    store.close().await;
    proxy.stop().await;

    // A server that closes every connection: two more tries, then the
    // error.
    let giving_up = placement::db::PoolSettings {
        max_retries: Some(2),
        retry_interval: Duration::from_millis(50),
        ..placement::db::PoolSettings::default()
    };
    let (closing, tries) = counting(None).await;
    let (url_closing, _) = through(&url, &closing);
    let e = tokio::time::timeout(
        Duration::from_secs(60),
        placement::db::Store::connect_with(&url_closing, &giving_up),
    )
    .await
    .expect("the start gives up")
    .expect_err("nothing answers");
    assert_eq!(tries.load(Ordering::SeqCst), 3, "{e:#}");
    // A login the server refuses is not tried again.
    let (forwarding, tries) = counting(Some(target_of(&url))).await;
    let (url_forwarding, _) = through(&url, &forwarding);
    let refused = with_credentials(&url_forwarding, "nobody-placement-test:wrong");
    tokio::time::timeout(
        Duration::from_secs(60),
        placement::db::Store::connect_with(&refused, &giving_up),
    )
    .await
    .expect("the start gives up")
    .expect_err("the login is refused");
    assert_eq!(tries.load(Ordering::SeqCst), 1);
}

/// The `host:port` of `url`'s server.
fn target_of(url: &str) -> String {
    through(url, "x").1
}

/// `url` with `credentials` in place of its own.
fn with_credentials(url: &str, credentials: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL with ://");
    let rest = rest.split_once('@').map_or(rest, |(_, r)| r);
    format!("{scheme}://{credentials}@{rest}")
}

/// A listener that counts the connections it accepts and forwards each to
/// `target`, or closes it at once when there is none. Returns its
/// address and the count.
async fn counting(target: Option<String>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&count);
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            if let Some(target) = target.clone() {
                tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        }
    });
    (addr, count)
}
