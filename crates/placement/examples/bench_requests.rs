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
//! `usages`, and `candidates` (`GET /allocation_candidates` for VCPU,
//! MEMORY_MB and DISK_GB with `limit=1000`, Nova's request: every one of
//! the 1,000 providers is a candidate).
//!
//! The candidate rows of `scripts/bench-load.sh --part candidates`
//! (`candidates-a`, `candidates-b`, `candidates-c`, `candidates-d`,
//! `candidates-e` and `candidates-e-breadth`) send the requests of
//! `scripts/bench_placement.py query ROW` on a database that script
//! seeded through a placement-api (`seed` here does not make their data):
//! keep the SQLite files of a run, or seed one yourself, then run a row
//! (the `e` rows set `max_allocation_candidates = 1000`, and the
//! generation strategy, as the load benchmark's configuration does):
//!
//! ```sh
//! bash scripts/bench-load.sh --part candidates --rows b --rounds 1 --keep /tmp/rows
//! cargo run --release -p placement --example bench_requests -- run /tmp/rows/ours-b.db candidates-b 20
//! # or: placement-api --auth-strategy noauth2 --database sqlite:////tmp/c.db --bind 127.0.0.1:8778 &
//! #     python3 scripts/bench_placement.py seed-candidates c http://127.0.0.1:8778; kill %1
//! cargo run --release -p placement --example bench_requests -- run /tmp/c.db candidates-c 20
//! ```

use std::time::Instant;

use axum::Router;
use axum::body::Body;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use placement::config::{AuthStrategy, CandidateStrategy, Config};
use tower::ServiceExt;

/// The allocator placement-api runs on, so that the allocations measured
/// here cost what they cost in the service.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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

/// The Nova-shaped request of rows a, b and d: three classes, as many
/// candidates as Nova's scheduler takes.
const NOVA_REQUEST: &str =
    "/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:1&limit=1000";

/// The request of a candidate row, as `bench_placement.py query ROW`
/// prints it for the row's default number of hosts.
fn candidate_request(row: &str) -> Option<String> {
    let pci = "CUSTOM_PCI_8086_1572";
    Some(match row {
        "candidates-a" | "candidates-b" | "candidates-d" => NOVA_REQUEST.to_owned(),
        "candidates-c" => concat!(
            "/allocation_candidates?resources=DISK_GB:20",
            "&resources_COMPUTE=VCPU:2,MEMORY_MB:2048&required_COMPUTE=HW_NUMA_ROOT",
            "&resources_NET=SRIOV_NET_VF:1&required_NET=HW_NIC_SRIOV,CUSTOM_PHYSNET_PHYS1",
            "&same_subtree=_COMPUTE,_NET&group_policy=isolate&limit=1000"
        )
        .to_owned(),
        "candidates-e" | "candidates-e-breadth" => {
            let groups: String = (1..=8).map(|j| format!("&resources{j}={pci}:1")).collect();
            format!(
                "/allocation_candidates?resources=VCPU:1,MEMORY_MB:512{groups}&group_policy=isolate&limit=1000"
            )
        }
        _ => return None,
    })
}

async fn app(db: &str, row: &str) -> Router {
    let mut config = Config {
        database: database_url(db),
        enforce_new_defaults: false,
        enforce_scope: false,
        auth_strategy: AuthStrategy::Noauth2,
        ..Config::default()
    };
    // The wide tree's rows run with the load benchmark's bound.
    if row.starts_with("candidates-e") {
        config.max_allocation_candidates = 1000;
    }
    if row == "candidates-e-breadth" {
        config.allocation_candidates_strategy = CandidateStrategy::BreadthFirst;
    }
    let (_, app) = placement::app::ready(config)
        .await
        .expect("the service starts");
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
            let (s, n) = call(app, Method::GET, NOVA_REQUEST, "1.39", None).await;
            (s, n, StatusCode::OK)
        }
        other => match candidate_request(other) {
            Some(path) => {
                let (s, n) = call(app, Method::GET, &path, "1.39", None).await;
                (s, n, StatusCode::OK)
            }
            None => panic!("unknown row {other}"),
        },
    };
    assert_eq!(status, expected, "{row}");
    len
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["seed", db] => {
            let app = app(db, "").await;
            seed(&app).await;
        }
        ["run", db, row, n] => {
            let n: usize = n.parse().expect("N is a number");
            let app = app(db, row).await;
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
