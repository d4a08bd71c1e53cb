//! Concurrent writers over loopback: many allocators racing for the same
//! provider never allocate more than it has, and every loser gets 409.
//!
//! On SQLite writes are serialized; against PostgreSQL or MariaDB (set
//! `PLACEMENT_TEST_DATABASE` to a database holding upstream's schema) the
//! transactions truly overlap and the provider and consumer generations
//! decide.

mod support;

use std::sync::Arc;

use reqwest::Method;
use serde_json::{Value, json};
use support::{Server, uuid};
use tokio::task::JoinSet;

/// Runs `bodies` as concurrent PUTs to `/allocations/{consumer}`;
/// returns each answer's status and error code.
async fn race(s: &Arc<Server>, bodies: Vec<(String, Value)>) -> Vec<(u16, String, String)> {
    let mut set = JoinSet::new();
    for (consumer, body) in bodies {
        let s = Arc::clone(s);
        set.spawn(async move {
            let r = s
                .put(&format!("/allocations/{consumer}"), "1.28", &body)
                .await;
            (r.status, r.code().to_owned(), r.detail().to_owned())
        });
    }
    let mut out = Vec::new();
    while let Some(done) = set.join_next().await {
        out.push(done.expect("the task completes"));
    }
    out
}

fn asking(rp: &str, class: &str, amount: i64, generation: Value) -> Value {
    let mut body = json!({
        "allocations": {rp: {"resources": {class: amount}}},
        "project_id": "p", "user_id": "u"
    });
    body["consumer_generation"] = generation;
    body
}

async fn used(s: &Server, rp: &str, class: &str) -> i64 {
    let r = s
        .get(&format!("/resource_providers/{rp}/usages"), "1.28")
        .await;
    r.body["usages"][class].as_i64().expect("a usage")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_allocators_never_over_allocate() {
    let s = Arc::new(Server::start().await);
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 10).await;
    s.simple_inventory(&rp, "DISK_GB", 20).await;
    let start = s.generation(&rp).await;

    // 40 allocators of one VCPU each, for 10.
    let bodies = (0..40)
        .map(|_| (uuid(), asking(&rp, "VCPU", 1, json!(null))))
        .collect();
    let results = race(&s, bodies).await;
    let won = results.iter().filter(|r| r.0 == 204).count();
    assert_eq!(won, 10, "{results:?}");
    assert!(
        results.iter().all(|r| r.0 == 204 || r.0 == 409),
        "{results:?}"
    );
    assert_eq!(used(&s, &rp, "VCPU").await, 10);
    // Every winner moved the generation once.
    assert_eq!(s.generation(&rp).await, start + 10);

    // 30 allocators of 3 DISK_GB each, for 20: 6 fit.
    let bodies = (0..30)
        .map(|_| (uuid(), asking(&rp, "DISK_GB", 3, json!(null))))
        .collect();
    let results = race(&s, bodies).await;
    let won = results.iter().filter(|r| r.0 == 204).count();
    assert_eq!(won, 6, "{results:?}");
    assert!(
        results.iter().all(|r| r.0 == 204 || r.0 == 409),
        "{results:?}"
    );
    assert_eq!(used(&s, &rp, "DISK_GB").await, 18);
    assert_eq!(used(&s, &rp, "VCPU").await, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_writers_of_one_consumer_conflict() {
    let s = Arc::new(Server::start().await);
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 100).await;
    let consumer = uuid();
    let r = s
        .put(
            &format!("/allocations/{consumer}"),
            "1.28",
            &asking(&rp, "VCPU", 1, json!(null)),
        )
        .await;
    assert_eq!(r.status, 204);
    // 20 writers all expecting generation 1: one wins.
    let bodies = (1..=20)
        .map(|n| (consumer.clone(), asking(&rp, "VCPU", n, json!(1))))
        .collect();
    let results = race(&s, bodies).await;
    let won = results.iter().filter(|r| r.0 == 204).count();
    assert_eq!(won, 1, "{results:?}");
    for (status, code, detail) in &results {
        if *status != 204 {
            assert_eq!(*status, 409, "{detail}");
            assert_eq!(code, "placement.concurrent_update", "{detail}");
        }
    }
    let r = s.get(&format!("/allocations/{consumer}"), "1.28").await;
    assert_eq!(r.body["consumer_generation"], 2);
    // The winner's amount, alone.
    let amount = r.body["allocations"][&rp]["resources"]["VCPU"]
        .as_i64()
        .unwrap();
    assert_eq!(used(&s, &rp, "VCPU").await, amount);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_new_consumers_of_one_uuid() {
    let s = Arc::new(Server::start().await);
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 100).await;
    let consumer = uuid();
    // 10 writers all creating the same new consumer.
    let bodies = (1..=10)
        .map(|n| (consumer.clone(), asking(&rp, "VCPU", n, json!(null))))
        .collect();
    let results = race(&s, bodies).await;
    assert_eq!(
        results.iter().filter(|r| r.0 == 204).count(),
        1,
        "{results:?}"
    );
    assert!(
        results.iter().all(|r| r.0 == 204 || r.0 == 409),
        "{results:?}"
    );
    let r = s.get(&format!("/allocations/{consumer}"), "1.28").await;
    assert_eq!(r.body["consumer_generation"], 1);
    assert_eq!(s.count("consumers", "uuid = ?", &consumer).await, 1);
}

/// `count` new providers with 100 VCPU each.
async fn providers_of_100_vcpu(s: &Server, count: usize) -> Vec<String> {
    let providers: Vec<String> = (0..count).map(|_| uuid()).collect();
    for rp in &providers {
        s.provider(rp, None).await;
        s.simple_inventory(rp, "VCPU", 100).await;
    }
    providers
}

/// Consumer `n` of a run of neighbouring UUIDs, as a client counting its
/// consumers would make them.
fn neighbour(prefix: &str, n: usize) -> String {
    format!("{prefix}-0000-4000-8000-{n:012x}")
}

/// A server whose allocation writes get one try: where writers share
/// nothing, any conflict (a deadlock, say) is a 409 instead of a retry.
async fn server_of_one_try() -> Arc<Server> {
    Arc::new(Server::start_with(|c| c.allocation_conflict_retry_count = 1).await)
}

/// Writers of different new consumers, each on a provider of its own,
/// share nothing and must all succeed at the first try. Their consumer
/// UUIDs are neighbours: on MariaDB, deleting a new consumer's (absent)
/// allocations by consumer used to lock the index gap they share, and
/// most of these writers deadlocked into 409s.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_of_neighbouring_new_consumers_all_succeed() {
    const WRITERS: usize = 96;
    let s = server_of_one_try().await;
    let providers = providers_of_100_vcpu(&s, WRITERS).await;
    let prefix = &uuid()[..8];
    let bodies = (0..WRITERS)
        .map(|n| {
            let body = asking(&providers[n], "VCPU", 1, json!(null));
            (neighbour(prefix, n), body)
        })
        .collect();
    let results = race(&s, bodies).await;
    assert!(results.iter().all(|r| r.0 == 204), "{results:?}");
    for rp in &providers {
        assert_eq!(used(&s, rp, "VCPU").await, 1, "{rp}");
    }
    for n in 0..WRITERS {
        let c = neighbour(prefix, n);
        let r = s.get(&format!("/allocations/{c}"), "1.28").await;
        assert_eq!(r.body["consumer_generation"], 1, "{c}");
    }
}

/// Deleting some consumers' allocations while writing new neighbouring
/// consumers, every consumer on a provider of its own: nothing is shared,
/// so every request succeeds at the first try, and only the deleted
/// consumers are gone.
/// On MariaDB, deleting an emptied consumer with one statement that looked
/// for its allocations share-locked them all, and these deadlocked.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleters_and_writers_of_neighbouring_consumers_all_succeed() {
    const CONSUMERS: usize = 192;
    let s = server_of_one_try().await;
    let providers = providers_of_100_vcpu(&s, CONSUMERS).await;
    let prefix = &uuid()[..8];
    // Even consumers exist first and are deleted; odd ones are new.
    for n in (0..CONSUMERS).step_by(2) {
        let r = s
            .put(
                &format!("/allocations/{}", neighbour(prefix, n)),
                "1.28",
                &asking(&providers[n], "VCPU", 1, json!(null)),
            )
            .await;
        assert_eq!(r.status, 204, "{r:?}");
    }
    let mut set = JoinSet::new();
    for (n, rp) in providers.iter().enumerate() {
        let s = Arc::clone(&s);
        let path = format!("/allocations/{}", neighbour(prefix, n));
        let body = asking(rp, "VCPU", 1, json!(null));
        set.spawn(async move {
            let r = if n % 2 == 0 {
                s.delete(&path, "1.28").await
            } else {
                s.put(&path, "1.28", &body).await
            };
            (n, r.status, r.text)
        });
    }
    while let Some(done) = set.join_next().await {
        let (n, status, text) = done.expect("the task completes");
        assert_eq!(status, 204, "consumer {n}: {text}");
    }
    for (n, rp) in providers.iter().enumerate() {
        let r = s
            .get(&format!("/allocations/{}", neighbour(prefix, n)), "1.28")
            .await;
        let held = r.body["allocations"]
            .as_object()
            .map_or(0, serde_json::Map::len);
        assert_eq!(held, n % 2, "consumer {n}: {r:?}");
        let expected = if n % 2 == 0 { 0 } else { 1 };
        assert_eq!(used(&s, rp, "VCPU").await, expected, "{rp}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleters_racing_allocators() {
    let s = Arc::new(Server::start().await);
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 10).await;
    // Full: ten consumers of one VCPU each.
    let mut holders = Vec::new();
    for _ in 0..10 {
        let c = uuid();
        let r = s
            .put(
                &format!("/allocations/{c}"),
                "1.28",
                &asking(&rp, "VCPU", 1, json!(null)),
            )
            .await;
        assert_eq!(r.status, 204);
        holders.push(c);
    }
    // Five of them leave while twenty newcomers ask for one each.
    let mut set = JoinSet::new();
    for c in &holders[..5] {
        let s = Arc::clone(&s);
        let path = format!("/allocations/{c}");
        set.spawn(async move {
            let r = s.delete(&path, "1.28").await;
            ("delete", r.status)
        });
    }
    for _ in 0..20 {
        let s = Arc::clone(&s);
        let body = asking(&rp, "VCPU", 1, json!(null));
        set.spawn(async move {
            let r = s
                .put(&format!("/allocations/{}", uuid()), "1.28", &body)
                .await;
            ("put", r.status)
        });
    }
    let mut won = 0;
    while let Some(done) = set.join_next().await {
        match done.expect("the task completes") {
            ("delete", status) => assert_eq!(status, 204),
            (_, 204) => won += 1,
            (_, status) => assert_eq!(status, 409),
        }
    }
    assert!(won <= 5, "{won} newcomers fit in 5 free VCPU");
    assert_eq!(used(&s, &rp, "VCPU").await, 5 + won);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_creators_of_custom_resource_classes() {
    let s = Arc::new(Server::start().await);
    let tag = uuid().replace('-', "").to_uppercase();
    // Sixteen new classes at once (each creator picks the next free id),
    // and four creators of one more name.
    let mut names: Vec<String> = (0..16).map(|i| format!("CUSTOM_RACE_{tag}_{i}")).collect();
    let shared = format!("CUSTOM_RACE_{tag}_SHARED");
    names.extend(std::iter::repeat_n(shared.clone(), 4));
    let mut set = JoinSet::new();
    for name in names {
        let s = Arc::clone(&s);
        set.spawn(async move {
            let r = s
                .call(
                    reqwest::Method::PUT,
                    &format!("/resource_classes/{name}"),
                    Some("1.7"),
                    None,
                )
                .await;
            (name, r.status)
        });
    }
    let mut shared_created = 0;
    while let Some(done) = set.join_next().await {
        let (name, status) = done.expect("the task completes");
        if name == shared {
            assert!(status == 201 || status == 204, "{name}: {status}");
            shared_created += usize::from(status == 201);
        } else {
            assert_eq!(status, 201, "{name}");
        }
    }
    assert_eq!(shared_created, 1);
    let listed = s.get("/resource_classes", "1.7").await;
    let count = listed.body["resource_classes"]
        .as_array()
        .expect("a list")
        .iter()
        .filter(|rc| rc["name"].as_str().is_some_and(|n| n.contains(&tag)))
        .count();
    assert_eq!(count, 17);
}

/// PUTs `body` (with the provider's generation filled in) to `path` until
/// it is taken, reading the generation again after each 409; returns how
/// many 409s it met. Any other answer fails the test.
async fn put_until_taken(s: &Server, rp: &str, path: &str, mut body: Value) -> usize {
    for conflicts in 0..200 {
        body["resource_provider_generation"] = json!(s.generation(rp).await);
        let r = s.put(path, "1.20", &body).await;
        match r.status {
            200 => return conflicts,
            409 => {}
            other => panic!("{path}: {other} {r:?}"),
        }
    }
    panic!("{path}: still in conflict after 200 tries");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn inventory_and_trait_writers_of_one_provider_lose_no_update() {
    // Two kinds of writers of one provider at once, each trying again on
    // a conflict: only 200s and 409s, and each write that succeeds moves
    // the provider's generation exactly once.
    let s = Arc::new(Server::start().await);
    let rp = uuid();
    s.provider(&rp, None).await;
    for i in 0..8 {
        let r = s
            .call(
                Method::PUT,
                &format!("/traits/CUSTOM_T{i}"),
                Some("1.6"),
                None,
            )
            .await;
        assert_eq!(r.status, 201, "{r:?}");
    }
    let start = s.generation(&rp).await;
    let mut set = JoinSet::new();
    for i in 0..8_i64 {
        let writes = [
            (
                format!("/resource_providers/{rp}/inventories"),
                json!({"inventories": {"VCPU": {"total": 10 + i}}}),
            ),
            (
                format!("/resource_providers/{rp}/traits"),
                json!({"traits": [format!("CUSTOM_T{i}")]}),
            ),
        ];
        for (path, body) in writes {
            let (s, rp) = (Arc::clone(&s), rp.clone());
            set.spawn(async move { put_until_taken(&s, &rp, &path, body).await });
        }
    }
    while let Some(done) = set.join_next().await {
        done.expect("the task completes");
    }
    assert_eq!(s.generation(&rp).await, start + 16);
}
