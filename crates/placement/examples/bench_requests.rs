//! In-process measurements of the requests `scripts/bench-load.sh` sends
//! to placement-api, through the whole router (layer, auth, handler,
//! SQLite) with `tower::ServiceExt::oneshot`: no sockets, no client.
//!
//! ```sh
//! cargo run --release -p placement --example bench_requests -- seed /tmp/bench.db
//! cargo run --release -p placement --example bench_requests -- run /tmp/bench.db providers 50
//! ```
//!
//! DB is an SQLite file's path or a database URL
//! (`postgresql://...`, `mysql+pymysql://...`, as in `placement.conf`).
//! `seed` fills a new database as `scripts/bench_placement.py` does
//! (1,000 providers with VCPU, MEMORY_MB and DISK_GB inventory, 50
//! consumers of one project). `run` sends one row's request N times
//! (after 16 unmeasured ones) and prints the mean time per request;
//! every answer must have the expected status. For instruction counts,
//! run it under `valgrind --tool=callgrind` with two values of N and
//! divide the difference by the difference of N. Rows: `root`, `406`,
//! `providers`, `inventories`, `allocations` (a new consumer each),
//! `usages`, and `candidates` (`GET /allocation_candidates` for VCPU and
//! MEMORY_MB: every one of the 1,000 providers is a candidate).

use std::time::Instant;

use axum::Router;
use axum::body::Body;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use placement::app::AppState;
use placement::config::Config;
use tower::ServiceExt;

const PROVIDERS: usize = 1000;
const CONSUMERS: usize = 50;
const PROJECT: &str = "6b9fb5b6-51cd-4c7a-8a52-5c7a1c0c0b50";
const LOAD_PROJECT: &str = "7c0e1b3a-0a4c-4d55-9f0e-2a7e8c1d2b60";
const USER: &str = "8d1f2c4b-1b5d-4e66-a01f-3b8f9d2e3c70";

fn provider(i: usize) -> String {
    format!("00000000-0000-4000-8000-{i:012x}")
}

async fn call(
    app: &Router,
    method: Method,
    path: &str,
    version: &str,
    body: Option<String>,
) -> (StatusCode, usize) {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("x-auth-token", "admin")
        .header("accept", "application/json")
        .header("openstack-api-version", format!("placement {version}"));
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req
        .body(body.map_or_else(Body::empty, Body::from))
        .expect("a request");
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("a body").to_bytes();
    (status, bytes.len())
}

/// A file path is an SQLite file; anything with a scheme is used as the
/// database URL as it is (PostgreSQL, MariaDB).
fn database_url(db: &str) -> String {
    if db.contains("://") {
        db.to_owned()
    } else {
        format!("sqlite:///{db}")
    }
}

async fn app(db: &str) -> Router {
    let config = Config {
        database: database_url(db),
        enforce_new_defaults: false,
        enforce_scope: false,
        ..Config::default()
    };
    let (_, app) = AppState::ready(config).await.expect("the service starts");
    app
}

async fn seed(app: &Router) {
    for i in 0..PROVIDERS {
        let rp = provider(i);
        let body = format!(r#"{{"name": "compute{i:04}", "uuid": "{rp}"}}"#);
        let (s, _) = call(app, Method::POST, "/resource_providers", "1.38", Some(body)).await;
        assert!(s.is_success(), "create provider: {s}");
        let body = r#"{"resource_provider_generation": 0, "inventories": {
            "VCPU": {"total": 10000000, "allocation_ratio": 16.0},
            "MEMORY_MB": {"total": 1000000000}, "DISK_GB": {"total": 1000000000}}}"#;
        let path = format!("/resource_providers/{rp}/inventories");
        let (s, _) = call(app, Method::PUT, &path, "1.38", Some(body.to_owned())).await;
        assert!(s.is_success(), "inventories: {s}");
    }
    for i in 0..CONSUMERS {
        let (s, _) = call(
            app,
            Method::PUT,
            &format!("/allocations/{}", consumer(0xc0, i)),
            "1.38",
            Some(allocation(&provider(i), PROJECT, 2)),
        )
        .await;
        assert!(s.is_success(), "allocations: {s}");
    }
}

fn consumer(run: u32, i: usize) -> String {
    format!("{run:08x}-0000-4000-8000-{i:012x}")
}

fn allocation(rp: &str, project: &str, vcpu: u32) -> String {
    format!(
        r#"{{"allocations": {{"{rp}": {{"resources": {{"VCPU": {vcpu}, "MEMORY_MB": 64}}}}}},
        "project_id": "{project}", "user_id": "{USER}",
        "consumer_generation": null, "consumer_type": "INSTANCE"}}"#
    )
}

async fn one(app: &Router, row: &str, i: usize, run: u32) -> usize {
    let (status, len, expected) = match row {
        "root" => {
            let (s, n) = call(app, Method::GET, "/", "1.39", None).await;
            (s, n, StatusCode::OK)
        }
        "406" => {
            let (s, n) = call(app, Method::GET, "/resource_providers", "9.99", None).await;
            (s, n, StatusCode::NOT_ACCEPTABLE)
        }
        "providers" => {
            let (s, n) = call(app, Method::GET, "/resource_providers", "1.39", None).await;
            (s, n, StatusCode::OK)
        }
        "inventories" => {
            let path = format!("/resource_providers/{}/inventories", provider(0));
            let (s, n) = call(app, Method::GET, &path, "1.39", None).await;
            (s, n, StatusCode::OK)
        }
        "allocations" => {
            let path = format!("/allocations/{}", consumer(run, i));
            let body = allocation(&provider(i * 7919 % PROVIDERS), LOAD_PROJECT, 1);
            let (s, n) = call(app, Method::PUT, &path, "1.38", Some(body)).await;
            (s, n, StatusCode::NO_CONTENT)
        }
        "usages" => {
            let path = format!("/usages?project_id={PROJECT}");
            let (s, n) = call(app, Method::GET, &path, "1.39", None).await;
            (s, n, StatusCode::OK)
        }
        "candidates" => {
            let path = "/allocation_candidates?resources=VCPU:1,MEMORY_MB:64";
            let (s, n) = call(app, Method::GET, path, "1.39", None).await;
            (s, n, StatusCode::OK)
        }
        other => panic!("unknown row {other}"),
    };
    assert_eq!(status, expected, "{row}");
    len
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["seed", db] => {
            let app = app(db).await;
            seed(&app).await;
        }
        ["run", db, row, n] => {
            let n: usize = n.parse().expect("N is a number");
            let app = app(db).await;
            // A run number from the clock, so that allocation runs write
            // consumers no earlier run wrote.
            let run = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_secs() as u32);
            // Warm up past the read pool's size (8), so that every
            // connection has prepared (and cached) the row's statements.
            let mut len = 0;
            for i in 0..16 {
                len = one(&app, row, n + i, run).await;
            }
            let start = Instant::now();
            for i in 0..n {
                one(&app, row, i, run).await;
            }
            let per = start.elapsed() / u32::try_from(n.max(1)).unwrap_or(1);
            println!("{row}: {n} requests, {per:?} per request, {len} bytes");
        }
        _ => {
            eprintln!("usage: bench_requests seed DB | run DB ROW N");
            std::process::exit(2);
        }
    }
}
