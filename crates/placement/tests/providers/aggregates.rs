//! `/resource_providers/{uuid}/aggregates`.

use serde_json::json;

use crate::support::{Server, uuid};

#[tokio::test]
async fn list_body_before_1_19_generation_after() {
    let s = Server::start().await;
    let id = s.provider_named(&format!("agg-{}", uuid()), None).await["uuid"]
        .as_str()
        .expect("uuid")
        .to_owned();
    let path = format!("/resource_providers/{id}/aggregates");
    let (a, b) = (uuid(), uuid());

    assert_eq!(s.get(&path, "1.0").await.status, 404);
    let r = s.get(&path, "1.1").await;
    assert_eq!(r.body, json!({"aggregates": []}));

    // 1.1 - 1.18: a list; the generation stays.
    let r = s.put(&path, "1.18", &json!([a, b])).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body, json!({"aggregates": [a, b]}));
    let r = s
        .put(
            &path,
            "1.18",
            &json!({"aggregates": [a], "resource_provider_generation": 0}),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = s.get(&format!("/resource_providers/{id}"), "1.19").await;
    assert_eq!(r.body["generation"], 0);
    let r = s.put(&path, "1.14", &json!([a])).await;
    assert!(r.header("last-modified").is_none());
    let r = s.get(&path, "1.15").await;
    assert_eq!(r.body, json!({"aggregates": [a]}));
    assert!(r.header("last-modified").is_some());

    // From 1.19: the generation must match and moves on.
    let r = s.put(&path, "1.19", &json!([a])).await;
    assert_eq!(r.status, 400);
    let r = s
        .put(
            &path,
            "1.19",
            &json!({"aggregates": [a, b], "resource_provider_generation": 0}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["resource_provider_generation"], 1);
    let r = s
        .put(
            &path,
            "1.23",
            &json!({"aggregates": [], "resource_provider_generation": 0}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.concurrent_update");
    let r = s.get(&path, "1.19").await;
    let mut got: Vec<String> = serde_json::from_value(r.body["aggregates"].clone()).expect("list");
    got.sort();
    let mut want = vec![a.clone(), b.clone()];
    want.sort();
    assert_eq!(got, want);
    assert_eq!(r.body["resource_provider_generation"], 1);

    let r = s
        .put(
            &path,
            "1.19",
            &json!({"aggregates": [a, a], "resource_provider_generation": 1}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("non-unique"), "{}", r.message());
    let r = s
        .put(
            &path,
            "1.19",
            &json!({"aggregates": ["harry"], "resource_provider_generation": 1}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("is not a 'uuid'"), "{}", r.message());
    let r = s
        .put(
            &format!("/resource_providers/{}/aggregates", uuid()),
            "1.19",
            &json!({"aggregates": [], "resource_provider_generation": 0}),
        )
        .await;
    assert_eq!(r.status, 404);

    // An aggregate shared by two providers is one row.
    let other = s.provider_named(&format!("agg-{}", uuid()), None).await["uuid"]
        .as_str()
        .expect("uuid")
        .to_owned();
    let r = s
        .put(
            &format!("/resource_providers/{other}/aggregates"),
            "1.19",
            &json!({"aggregates": [a], "resource_provider_generation": 0}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = s
        .get(&format!("/resource_providers?member_of={a}"), "1.3")
        .await;
    assert_eq!(
        r.body["resource_providers"].as_array().expect("list").len(),
        2
    );
    let r = s
        .put(
            &path,
            "1.19",
            &json!({"aggregates": [], "resource_provider_generation": 1}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        json!({"aggregates": [], "resource_provider_generation": 2})
    );
}
