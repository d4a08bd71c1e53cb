//! Concurrent writers of one provider: the generation lets exactly one
//! win, the others get 409.

use std::sync::Arc;

use serde_json::json;

use crate::support::{Server, uuid};

const WRITERS: usize = 16;

/// Standard resource classes, one per writer.
const CLASSES: [&str; 16] = [
    "VCPU",
    "MEMORY_MB",
    "DISK_GB",
    "PCI_DEVICE",
    "SRIOV_NET_VF",
    "NUMA_SOCKET",
    "NUMA_CORE",
    "NUMA_THREAD",
    "NUMA_MEMORY_MB",
    "IPV4_ADDRESS",
    "VGPU",
    "VGPU_DISPLAY_HEAD",
    "NET_BW_EGR_KILOBIT_PER_SEC",
    "NET_BW_IGR_KILOBIT_PER_SEC",
    "PCPU",
    "MEM_ENCRYPTION_CONTEXT",
];

async fn race<F, Fut>(s: &Arc<Server>, call: F) -> Vec<u16>
where
    F: Fn(Arc<Server>, usize) -> Fut,
    Fut: std::future::Future<Output = u16> + Send + 'static,
{
    let mut tasks = Vec::new();
    for n in 0..WRITERS {
        tasks.push(tokio::spawn(call(s.clone(), n)));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.expect("the writer finishes"));
    }
    statuses
}

fn one_wins(statuses: &[u16], ok: u16) {
    assert_eq!(
        statuses.iter().filter(|s| **s == ok).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == ok || *s == 409),
        "{statuses:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_inventory_puts_with_one_generation() {
    let s = Arc::new(Server::start().await);
    let id = s.provider_named(&format!("race-{}", uuid()), None).await["uuid"]
        .as_str()
        .expect("uuid")
        .to_owned();
    let path = Arc::new(format!("/resource_providers/{id}/inventories"));
    let statuses = race(&s, |s, n| {
        let path = path.clone();
        async move {
            let total = 10 + i64::try_from(n).expect("small");
            s.put(
                &path,
                "1.26",
                &json!({"resource_provider_generation": 0, "inventories": {"VCPU": {"total": total}}}),
            )
            .await
            .status
        }
    })
    .await;
    one_wins(&statuses, 200);
    let r = s.get(&path, "1.26").await;
    assert_eq!(r.body["resource_provider_generation"], 1);
    assert_eq!(r.body["inventories"].as_object().expect("map").len(), 1);

    // One class at a time, each from generation 1.
    let statuses = race(&s, |s, n| {
        let path = path.clone();
        async move {
            let total = 100 + i64::try_from(n).expect("small");
            s.put(
                &format!("{path}/VCPU"),
                "1.26",
                &json!({"resource_provider_generation": 1, "total": total}),
            )
            .await
            .status
        }
    })
    .await;
    one_wins(&statuses, 200);
    assert_eq!(
        s.get(&path, "1.26").await.body["resource_provider_generation"],
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_aggregate_and_trait_puts() {
    let s = Arc::new(Server::start().await);
    let id = s.provider_named(&format!("race-{}", uuid()), None).await["uuid"]
        .as_str()
        .expect("uuid")
        .to_owned();
    let path = Arc::new(format!("/resource_providers/{id}"));
    let statuses = race(&s, |s, _| {
        let path = path.clone();
        async move {
            s.put(
                &format!("{path}/aggregates"),
                "1.19",
                &json!({"aggregates": [uuid()], "resource_provider_generation": 0}),
            )
            .await
            .status
        }
    })
    .await;
    one_wins(&statuses, 200);
    let r = s.get(&format!("{path}/aggregates"), "1.19").await;
    assert_eq!(r.body["aggregates"].as_array().expect("list").len(), 1);
    assert_eq!(r.body["resource_provider_generation"], 1);

    let names = [
        "HW_CPU_X86_SSE",
        "HW_CPU_X86_SSE2",
        "HW_CPU_X86_AVX",
        "HW_CPU_X86_AVX2",
    ];
    let statuses = race(&s, |s, n| {
        let path = path.clone();
        async move {
            s.put(
                &format!("{path}/traits"),
                "1.19",
                &json!({"traits": [names[n % names.len()]], "resource_provider_generation": 1}),
            )
            .await
            .status
        }
    })
    .await;
    // Writers asking for what another already set change nothing and
    // succeed; every change is one generation.
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 409),
        "{statuses:?}"
    );
    let r = s.get(&format!("{path}/traits"), "1.19").await;
    assert_eq!(r.body["traits"].as_array().expect("list").len(), 1);
    assert_eq!(r.body["resource_provider_generation"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_providers_joining_one_new_aggregate() {
    let s = Arc::new(Server::start().await);
    let aggregate = Arc::new(uuid());
    let mut providers = Vec::new();
    for _ in 0..WRITERS {
        providers.push(
            s.provider_named(&format!("join-{}", uuid()), None).await["uuid"]
                .as_str()
                .expect("uuid")
                .to_owned(),
        );
    }
    let providers = Arc::new(providers);
    let statuses = race(&s, |s, n| {
        let providers = providers.clone();
        let aggregate = aggregate.clone();
        async move {
            s.put(
                &format!("/resource_providers/{}/aggregates", providers[n]),
                "1.19",
                &json!({"aggregates": [*aggregate], "resource_provider_generation": 0}),
            )
            .await
            .status
        }
    })
    .await;
    // Different providers do not conflict: the aggregate is made once.
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    let r = s
        .get(
            &format!("/resource_providers?member_of={aggregate}"),
            "1.19",
        )
        .await;
    assert_eq!(
        r.body["resource_providers"].as_array().expect("list").len(),
        WRITERS
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn delete_racing_inventory_writers_leaves_nothing_behind() {
    let s = Arc::new(Server::start().await);
    let id = s.provider_named(&format!("doomed-{}", uuid()), None).await["uuid"]
        .as_str()
        .expect("uuid")
        .to_owned();
    let internal = s.provider_id(&id).await;
    let path = Arc::new(format!("/resource_providers/{id}"));
    let statuses = race(&s, |s, n| {
        let path = path.clone();
        async move {
            if n == WRITERS / 2 {
                s.delete(&path, "1.26").await.status
            } else {
                s.post(
                    &format!("{path}/inventories"),
                    "1.26",
                    &json!({"resource_class": CLASSES[n % CLASSES.len()], "total": 1}),
                )
                .await
                .status
            }
        }
    })
    .await;
    assert!(
        statuses.iter().all(|s| matches!(*s, 204 | 201 | 404 | 409)),
        "{statuses:?}"
    );
    let left = s.inventory_rows(internal).await;
    if statuses[WRITERS / 2] == 204 {
        assert_eq!(left, 0, "inventory outlived its provider");
        assert_eq!(s.get(&path, "1.26").await.status, 404);
    } else {
        // The delete lost to a writer: what was written is all there.
        let created = statuses.iter().filter(|s| **s == 201).count();
        assert_eq!(left, i64::try_from(created).expect("small"));
        let r = s.get(&format!("{path}/inventories"), "1.26").await;
        assert_eq!(
            r.body["resource_provider_generation"],
            i64::try_from(created).expect("small")
        );
    }
}
