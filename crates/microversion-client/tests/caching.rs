//! Caching: one discovery per endpoint shared by clones and concurrent
//! callers; the disk cache (key, TTL, atomic writes, corrupt files); and a
//! 406 on a cached version.

mod common;

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::routing::get;
use common::{Server, server};
use microversion::{NegotiationError, ServerVersions, Version, VersionRange};
use microversion_client::{Client, DiscoveryCache, DiskCache, NegotiationMode};
use microversion_server::{MicroversionLayer, Microversions, Profile, ServedVersion};
use microversion_test_support::{RequestLog, Scratch, serve};
use serde_json::{Value, json};
use tokio::sync::Barrier;

fn r(min: &'static str, max: &'static str) -> VersionRange {
    VersionRange::from_static(min, max)
}

/// A Placement-like server whose versions document takes 200 ms, so that
/// concurrent first callers overlap.
async fn slow_placement() -> (String, RequestLog) {
    let log = RequestLog::default();
    let api = Microversions::builder("placement", r("1.0", "1.39"))
        .profile(Profile::Placement)
        .build()
        .unwrap();
    let app = axum::Router::new()
        .route(
            "/",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(200)).await;
                Json(json!({"versions": [{"id": "v1.0", "status": "CURRENT",
                    "min_version": "1.0", "max_version": "1.39", "links": []}]}))
            }),
        )
        .route(
            "/resource_providers",
            get(|v: ServedVersion| async move { v.to_string() }),
        )
        .layer(MicroversionLayer::new(api));
    let base = serve(log.recording(app)).await;
    (base, log)
}

fn placement(endpoint: &str) -> Client {
    Client::builder()
        .endpoint(endpoint)
        .service_type("placement")
        .supported_versions(r("1.0", "1.60"))
        .version("latest")
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_first_calls_discover_once() {
    let (base, log) = slow_placement().await;
    let client = placement(&base);
    let barrier = Arc::new(Barrier::new(50));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let (client, barrier) = (client.clone(), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                let res = client.get("resource_providers").send().await.unwrap();
                (res.status(), res.text().await.unwrap())
            })
        })
        .collect();
    for task in tasks {
        let (status, body) = task.await.unwrap();
        assert_eq!(status, 200);
        assert_eq!(body, "1.39");
    }
    assert_eq!(
        log.count(&["/"]),
        1,
        "one discovery for 50 concurrent callers"
    );
    assert_eq!(log.count(&["/resource_providers"]), 50);
    // Every request carried the negotiated version.
    for seen in log.to(&["/resource_providers"]) {
        assert_eq!(seen.header("openstack-api-version"), Some("placement 1.39"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clients_sharing_a_cache_discover_once() {
    let (base, log) = slow_placement().await;
    let shared = DiscoveryCache::new();
    let build = || {
        Client::builder()
            .endpoint(&base)
            .service_type("placement")
            .supported_versions(r("1.0", "1.20"))
            .version("latest")
            .discovery_cache(shared.clone())
            .build()
            .unwrap()
    };
    let (a, b) = (build(), build());
    let (va, vb) = tokio::join!(a.server_versions(), b.server_versions());
    assert_eq!(va.unwrap(), vb.unwrap());
    assert_eq!(log.count(&["/"]), 1);
    assert_eq!(shared.len(), 1);
    // A client with its own cache discovers for itself.
    let c = placement(&base);
    c.discover().await.unwrap();
    assert_eq!(log.count(&["/"]), 2);
    // Forgetting makes the next call discover again.
    a.forget().await;
    assert_eq!(a.known_server_versions(), None);
    a.version().await.unwrap();
    assert_eq!(log.count(&["/"]), 3);
}

fn with_disk(s: &Server, dir: &Scratch) -> Client {
    Client::builder()
        .endpoint(&s.endpoint)
        .service_type(s.client_service_type)
        .supported_versions(r("1.0", "1.60"))
        .version("latest")
        .disk_cache(DiskCache::new(dir.path()))
        .build()
        .unwrap()
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[tokio::test]
async fn the_disk_cache_saves_discovery_across_clients() {
    let s = server(Profile::Placement).await;
    let dir = Scratch::new("across");
    let first = with_disk(&s, &dir);
    assert_eq!(
        first.get(s.resource).send().await.unwrap().version(),
        Some(Version::new(1, 39))
    );
    assert_eq!(s.discoveries(), 1);

    let path = DiskCache::new(dir.path()).path_for(first.endpoint());
    assert_eq!(
        dir.files(),
        [path.file_name().unwrap().to_string_lossy().into_owned()]
    );
    let saved = read_json(&path);
    let port = first.endpoint().port().unwrap();
    assert_eq!(saved["endpoint"], format!("http://127.0.0.1:{port}"));
    assert_eq!(saved["max_version"], "1.39");
    assert_eq!(saved["source"], "discovery");

    // A new client (a new process, say) uses the file: no discovery.
    let second = with_disk(&s, &dir);
    let res = second.get(s.resource).send().await.unwrap();
    assert_eq!(res.version(), Some(Version::new(1, 39)));
    assert_eq!(s.discoveries(), 1);
    let d = second.discover().await.unwrap();
    assert_eq!(d.selected().id, "v1.0");
    assert_eq!(s.discoveries(), 1);
}

#[tokio::test]
async fn entries_expire_after_their_ttl() {
    let s = server(Profile::Placement).await;
    let dir = Scratch::new("ttl");
    with_disk(&s, &dir).version().await.unwrap();
    assert_eq!(s.discoveries(), 1);
    let path = DiskCache::new(dir.path()).path_for(&url::Url::parse(&s.endpoint).unwrap());
    // Ten minutes old: stale for the default 300 s, fresh for an hour.
    let mut saved = read_json(&path);
    let old = saved["saved_at"].as_u64().unwrap() - 600;
    saved["saved_at"] = json!(old);
    std::fs::write(&path, serde_json::to_vec(&saved).unwrap()).unwrap();

    let hour = Client::builder()
        .endpoint(&s.endpoint)
        .service_type("placement")
        .supported_versions(r("1.0", "1.60"))
        .disk_cache(DiskCache::new(dir.path()).ttl(Duration::from_secs(3600)))
        .build()
        .unwrap();
    hour.server_versions().await.unwrap();
    assert_eq!(s.discoveries(), 1);

    with_disk(&s, &dir).version().await.unwrap();
    assert_eq!(s.discoveries(), 2);
    // Rewritten with a new time.
    assert!(read_json(&path)["saved_at"].as_u64().unwrap() > old);
}

#[tokio::test]
async fn corrupt_and_unreadable_files_are_ignored_and_rewritten() {
    let s = server(Profile::Placement).await;
    let dir = Scratch::new("corrupt");
    let path = DiskCache::new(dir.path()).path_for(&url::Url::parse(&s.endpoint).unwrap());
    let garbage: [&[u8]; 4] = [b"{\"format\": ", b"\x00\xff\xfe garbage", b"[]", b"{}"];
    for (i, bytes) in garbage.into_iter().enumerate() {
        std::fs::write(&path, bytes).unwrap();
        let res = with_disk(&s, &dir).get(s.resource).send().await.unwrap();
        assert_eq!(res.version(), Some(Version::new(1, 39)));
        assert_eq!(s.discoveries(), i + 1);
        assert_eq!(read_json(&path)["max_version"], "1.39");
    }
    // A cache directory that cannot be created is not an error either.
    let scratch = Scratch::new("not-a-dir");
    let file = scratch.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let c = Client::builder()
        .endpoint(&s.endpoint)
        .service_type("placement")
        .supported_versions(r("1.0", "1.60"))
        .version("latest")
        .disk_cache(DiskCache::new(file.join("cache")))
        .build()
        .unwrap();
    assert_eq!(c.get(s.resource).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn keys_are_the_full_endpoint_url() {
    let nova = server(Profile::Nova).await;
    let dir = Scratch::new("keys");
    let build = |endpoint: String| {
        Client::builder()
            .endpoint(endpoint)
            .service_type("compute")
            .supported_versions(r("2.1", "2.90"))
            .disk_cache(DiskCache::new(dir.path()))
            .build()
            .unwrap()
    };
    // Same host and port, different paths: different entries.
    let root = build(format!("{}/", nova.base));
    let v21 = build(format!("{}/v2.1", nova.base));
    let v2 = build(format!("{}/v2", nova.base));
    assert_eq!(v21.discover().await.unwrap().selected().id, "v2.1");
    assert_eq!(v2.discover().await.unwrap().selected().id, "v2.0");
    assert_eq!(root.discover().await.unwrap().selected().id, "v2.1");
    assert_eq!(dir.files().len(), 3, "{:?}", dir.files());
    // A trailing slash is the same endpoint.
    let again = build(format!("{}/v2.1/", nova.base));
    let before = nova.log.count(&["/", "/v2.1", "/v2.1/", "/v2"]);
    assert_eq!(
        again.server_versions().await.unwrap(),
        v21.server_versions().await.unwrap()
    );
    assert_eq!(nova.log.count(&["/", "/v2.1", "/v2.1/", "/v2"]), before);
    // Another port (another server): another entry.
    let other = server(Profile::Nova).await;
    build(format!("{}/v2.1", other.base))
        .discover()
        .await
        .unwrap();
    assert_eq!(dir.files().len(), 4);
    assert!(
        dir.files().iter().all(|f| f.ends_with(".json")),
        "{:?}",
        dir.files()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_leave_one_whole_file() {
    let s = server(Profile::Placement).await;
    let dir = Scratch::new("writers");
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            // Separate memory caches: every client discovers and writes.
            let c = with_disk(&s, &dir);
            tokio::spawn(async move {
                c.forget().await;
                c.discover().await.map(|_| ())
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let files = dir.files();
    assert_eq!(files.len(), 1, "{files:?}");
    let saved = read_json(&dir.path().join(&files[0]));
    assert_eq!(saved["max_version"], "1.39");
}

/// Rewrites the cached maximum, as if the server had been downgraded since.
fn make_stale(path: &std::path::Path, max: &str) {
    let mut saved = read_json(path);
    saved["max_version"] = json!(max);
    let entry = &mut saved["discovery"]["document"]["versions"][0];
    entry["max_version"] = json!(max);
    entry["version"] = json!(max);
    std::fs::write(path, serde_json::to_vec(&saved).unwrap()).unwrap();
}

#[tokio::test]
async fn a_406_on_a_cached_version_drops_it_and_renegotiates_once() {
    let s = server(Profile::Placement).await;
    let dir = Scratch::new("stale");
    with_disk(&s, &dir).version().await.unwrap();
    let path = DiskCache::new(dir.path()).path_for(&url::Url::parse(&s.endpoint).unwrap());
    make_stale(&path, "1.50");

    let c = with_disk(&s, &dir);
    assert_eq!(
        c.server_versions().await.unwrap(),
        ServerVersions::Microversions(r("1.0", "1.50"))
    );
    let res = c.get(s.resource).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.version(), Some(Version::new(1, 39)));
    assert_eq!(res.attempts(), 2);
    let sent: Vec<_> = s
        .resource_requests()
        .iter()
        .map(|r| r.header("openstack-api-version").unwrap().to_owned())
        .collect();
    assert_eq!(sent, ["placement 1.50", "placement 1.39"]);
    assert_eq!(s.discoveries(), 2, "the first client's and one rediscovery");
    assert_eq!(read_json(&path)["max_version"], "1.39");
    assert_eq!(
        c.known_server_versions(),
        Some(ServerVersions::Microversions(s.range))
    );
}

#[tokio::test]
async fn a_406_on_a_cached_exact_version_names_the_fresh_ranges() {
    let s = server(Profile::Placement).await;
    let dir = Scratch::new("stale-exact");
    with_disk(&s, &dir).version().await.unwrap();
    let path = DiskCache::new(dir.path()).path_for(&url::Url::parse(&s.endpoint).unwrap());
    make_stale(&path, "1.50");
    let c = with_disk(&s, &dir);
    let err = c.get(s.resource).version("1.45").send().await.unwrap_err();
    assert_eq!(
        err.negotiation(),
        Some(&NegotiationError::OutsideServerRange {
            requested: Version::new(1, 45),
            client: r("1.0", "1.60"),
            server: r("1.0", "1.39"),
        }),
        "{err}"
    );
    assert_eq!(s.resource_requests().len(), 1);
}

#[tokio::test]
async fn the_optimistic_mode_saves_what_a_406_taught() {
    let s = server(Profile::Ironic).await;
    let dir = Scratch::new("optimistic");
    let build = || {
        Client::builder()
            .endpoint(&s.endpoint)
            .service_type("baremetal")
            .supported_versions(r("1.1", "1.200"))
            .version("latest")
            .negotiation(NegotiationMode::Optimistic)
            .disk_cache(DiskCache::new(dir.path()))
            .build()
            .unwrap()
    };
    assert_eq!(build().get("nodes").send().await.unwrap().attempts(), 2);
    let saved = read_json(&dir.path().join(&dir.files()[0]));
    assert_eq!(saved["source"], "not-acceptable");
    assert_eq!(
        (saved["min_version"].as_str(), saved["max_version"].as_str()),
        (Some("1.1"), Some("1.115"))
    );
    // The next process starts from the saved range.
    let res = build().get("nodes").send().await.unwrap();
    assert_eq!(res.attempts(), 1);
    assert_eq!(res.version(), Some(Version::new(1, 115)));
    assert_eq!(s.discoveries(), 0);
}
