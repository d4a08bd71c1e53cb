//! Allocations over loopback: the behaviour of upstream's gabbi files for
//! allocations (allocations.yaml, -1-8, -1-12, -1.28, -post, -bug-*,
//! allocation-bad-class, consumer types, ensure-consumer), with providers
//! and inventories set up in the database.

mod support;

use reqwest::Method;
use serde_json::json;
use support::{Server, uuid};

const INCOMPLETE: &str = "00000000-0000-0000-0000-000000000000";

fn list_body(rp: &str, resources: serde_json::Value) -> serde_json::Value {
    let mut body = json!({"allocations": [{"resource_provider": {"uuid": rp}}]});
    body["allocations"][0]["resources"] = resources;
    body
}

#[tokio::test]
async fn list_form_before_1_12() {
    let s = Server::start().await;
    let rp = uuid();
    let consumer = &uuid();
    let path = format!("/allocations/{consumer}");

    // No consumer is a 405, even at 1.0, naming POST.
    let r = s.get("/allocations", "1.0").await;
    assert_eq!(r.status, 405, "{r:?}");
    assert_eq!(r.body["errors"][0]["title"], "Method Not Allowed");
    let r = s.get("/allocations", "1.13").await;
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));

    let r = s.get(&path, "1.0").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, json!({"allocations": {}}));

    // No resource provider in the body.
    let r = s
        .put(
            &path,
            "1.0",
            &json!({"allocations": [{"resources": {"DISK_GB": 10}}]}),
        )
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    // Not JSON.
    let r = s.call(Method::PUT, &path, Some("1.0"), None).await;
    assert_eq!(r.status, 415, "{r:?}");
    let r = s.put(&path, "1.0", &json!({"allocations": []})).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("Failed validating 'minItems'"),
        "{r:?}"
    );
    let r = s
        .put(&path, "1.0", &list_body(&rp, json!({"cow": 10})))
        .await;
    assert_eq!(r.status, 400);

    s.provider(&rp, None).await;
    // A provider without inventory.
    let r = s
        .put(&path, "1.0", &list_body(&rp, json!({"DISK_GB": 10})))
        .await;
    assert_eq!(r.status, 409, "{r:?}");
    assert_eq!(r.body["errors"][0]["title"], "Conflict");
    assert_eq!(
        r.message(),
        format!(
            "Unable to allocate inventory: Inventory for 'DISK_GB' on resource provider '{rp}' invalid."
        )
    );

    s.inventory(&rp, "DISK_GB", [2048, 0, 10, 1024, 1], 1.0)
        .await;
    let r = s
        .put(&path, "1.0", &list_body(&rp, json!({"DISK_GB": 0})))
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .starts_with("JSON does not validate: 0 is less than the minimum of 1"),
        "{r:?}"
    );
    assert!(
        r.message()
            .contains("Failed validating 'minimum' in schema")
    );
    let r = s
        .put(
            &path,
            "1.0",
            &json!({"allocations": [{"resource_provider": {"uuid": rp}}]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("Failed validating 'required' in schema")
    );
    // A provider that is not a uuid, as upstream's format checker reads it.
    let r = s
        .put(
            &path,
            "1.0",
            &list_body("not-a-uuid", json!({"DISK_GB": 10})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().contains("'not-a-uuid' is not a 'uuid'"),
        "{r:?}"
    );

    let r = s
        .put(&path, "1.0", &list_body(&rp, json!({"DISK_GB": 10})))
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    assert!(r.header("cache-control").is_none() && r.header("last-modified").is_none());
    let other = &uuid();
    let r = s
        .put(
            &format!("/allocations/{other}"),
            "1.0",
            &list_body(&rp, json!({"DISK_GB": 10})),
        )
        .await;
    assert_eq!(r.status, 204);
    let r = s
        .get(&format!("/resource_providers/{rp}/usages"), "1.0")
        .await;
    assert_eq!(r.body["usages"]["DISK_GB"], 20);

    // Replacing an allocation.
    let r = s
        .put(&path, "1.0", &list_body(&rp, json!({"DISK_GB": 12})))
        .await;
    assert_eq!(r.status, 204);
    let r = s
        .get(&format!("/resource_providers/{rp}/usages"), "1.0")
        .await;
    assert_eq!(r.body["usages"]["DISK_GB"], 22);

    let r = s
        .put(&path, "1.0", &list_body(&rp, json!({"COWS": 12})))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        format!(
            "Unable to allocate inventory for consumer {consumer}: No such resource class COWS."
        )
    );

    let r = s.delete(&path, "1.0").await;
    assert_eq!(r.status, 204);
    let r = s.delete(&path, "1.0").await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.message(),
        format!("No allocations for consumer '{consumer}'")
    );
    let r = s.delete(&format!("/allocations/{}", uuid()), "1.0").await;
    assert_eq!(r.status, 404);

    let r = s
        .put(&path, "1.0", &list_body(&rp, json!({"DISK_GB": 10})))
        .await;
    assert_eq!(r.status, 204);
    s.inventory(&rp, "VCPU", [32, 0, 1, 8, 1], 1.0).await;
    let multi = &uuid();
    let r = s
        .put(
            &format!("/allocations/{multi}"),
            "1.0",
            &list_body(&rp, json!({"DISK_GB": 20, "VCPU": 4})),
        )
        .await;
    assert_eq!(r.status, 204);

    // Generations: 2 inventories, 5 successful writes; deletes do not count.
    let r = s
        .get(&format!("/resource_providers/{rp}/usages"), "1.0")
        .await;
    assert_eq!(r.body["resource_provider_generation"], 7);
    assert_eq!(r.body["usages"]["DISK_GB"], 40);
    assert_eq!(r.body["usages"]["VCPU"], 4);
    let r = s
        .get(&format!("/resource_providers/{rp}/allocations"), "1.0")
        .await;
    assert_eq!(r.body["resource_provider_generation"], 7);
    assert_eq!(
        r.body["allocations"][multi]["resources"],
        json!({"DISK_GB": 20, "VCPU": 4})
    );
    assert_eq!(r.body["allocations"][consumer]["resources"]["DISK_GB"], 10);
    assert_eq!(r.body["allocations"][other]["resources"]["DISK_GB"], 10);
    assert!(
        r.body["allocations"][multi]
            .get("consumer_generation")
            .is_none()
    );

    let missing = uuid();
    let r = s
        .get(&format!("/resource_providers/{missing}/allocations"), "1.0")
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.message(),
        format!(
            "Resource provider '{missing}' not found: No resource provider with uuid {missing} found"
        )
    );

    let r = s.get(&format!("/allocations/{multi}"), "1.0").await;
    assert_eq!(
        r.body,
        json!({"allocations": {rp.clone(): {"generation": 7, "resources": {"DISK_GB": 20, "VCPU": 4}}}})
    );

    // An unknown provider.
    let r = s
        .put(&path, "1.0", &list_body(&missing, json!({"DISK_GB": 5})))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        format!("Allocation for resource provider '{missing}' that does not exist.")
    );

    let r = s
        .put(
            "/allocations/not-a-uuid",
            "1.0",
            &list_body(&rp, json!({"DISK_GB": 10})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "Malformed consumer_uuid: not-a-uuid");

    // Before 1.8, the consumer gets the incomplete project and user.
    let r = s.get(&path, "1.12").await;
    assert_eq!(r.body["project_id"], INCOMPLETE);
    assert_eq!(r.body["user_id"], INCOMPLETE);
}

#[tokio::test]
async fn cache_headers_from_1_15() {
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 8).await;
    let c = uuid();
    let r = s
        .put(
            &format!("/allocations/{c}"),
            "1.7",
            &list_body(&rp, json!({"VCPU": 1})),
        )
        .await;
    assert_eq!(r.status, 204);
    for path in [
        format!("/allocations/{c}"),
        format!("/resource_providers/{rp}/allocations"),
        format!("/resource_providers/{rp}/usages"),
    ] {
        let r = s.get(&path, "1.15").await;
        assert_eq!(r.header("cache-control"), Some("no-cache"), "{path}");
        let modified = r.header("last-modified").expect("last-modified");
        assert!(modified.ends_with(" GMT"), "{modified}");
        let r = s.get(&path, "1.14").await;
        assert!(r.header("cache-control").is_none(), "{path}");
        assert!(r.header("last-modified").is_none(), "{path}");
    }
    // With no allocations, now.
    let r = s.get(&format!("/allocations/{}", uuid()), "1.15").await;
    assert!(r.header("last-modified").is_some());
}

#[tokio::test]
async fn project_and_user_from_1_8() {
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.inventory(&rp, "DISK_GB", [2048, 0, 10, 1024, 1], 1.0)
        .await;
    let path = format!("/allocations/{}", uuid());
    let long = "x".repeat(256);
    for body in [
        list_body(&rp, json!({"DISK_GB": 10})),
        json!({"allocations": [{"resource_provider": {"uuid": rp}, "resources": {"DISK_GB": 10}}], "user_id": "u"}),
        json!({"allocations": [{"resource_provider": {"uuid": rp}, "resources": {"DISK_GB": 10}}], "project_id": "p"}),
        json!({"allocations": [{"resource_provider": {"uuid": rp}, "resources": {"DISK_GB": 10}}], "project_id": "", "user_id": "u"}),
        json!({"allocations": [{"resource_provider": {"uuid": rp}, "resources": {"DISK_GB": 10}}], "project_id": "p", "user_id": long}),
    ] {
        let r = s.put(&path, "1.8", &body).await;
        assert_eq!(r.status, 400, "{body}");
    }
    let mut body = list_body(&rp, json!({"DISK_GB": 10}));
    body["project_id"] = json!("p");
    body["user_id"] = json!("u");
    assert_eq!(s.put(&path, "1.8", &body).await.status, 204);
    // Not accepted before 1.8.
    assert_eq!(s.put(&path, "1.7", &body).await.status, 400);
}

#[tokio::test]
async fn dict_form_from_1_12() {
    let s = Server::start().await;
    let rp = uuid();
    let consumer = uuid();
    let path = format!("/allocations/{consumer}");
    let owner = json!({"project_id": "42a32c07", "user_id": "66cb2f29"});
    let with = |allocations: serde_json::Value| {
        let mut b = owner.clone();
        b["allocations"] = allocations;
        b
    };
    // The list form is refused.
    let r = s
        .put(
            &path,
            "1.12",
            &with(json!([{"resource_provider": {"uuid": rp}, "resources": {"DISK_GB": 10}}])),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().starts_with("JSON does not validate"), "{r:?}");
    for bad in [
        json!({"nice_house_friend": {"resources": {"VCPU": 1}}}),
        json!({rp.clone(): {"resources": {"vcpu": 1}}}),
        json!({}),
        json!({rp.clone(): {"resources": {}}}),
    ] {
        let r = s.put(&path, "1.12", &with(bad.clone())).await;
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.message().starts_with("JSON does not validate"), "{r:?}");
    }
    let r = s
        .put(
            &path,
            "1.12",
            &with(json!({"nice_house_friend": {"resources": {"VCPU": 1}}})),
        )
        .await;
    assert!(
        r.message().contains("does not match any of the regexes"),
        "{r:?}"
    );
    let mut extra = with(json!({rp.clone(): {"resources": {"VCPU": 1}}}));
    extra["bad_field"] = json!("moo");
    assert_eq!(s.put(&path, "1.12", &extra).await.status, 400);

    s.provider(&rp, None).await;
    s.inventory(&rp, "DISK_GB", [2048, 0, 10, 1024, 1], 1.0)
        .await;
    s.simple_inventory(&rp, "VCPU", 96).await;
    let r = s
        .put(
            &path,
            "1.12",
            &with(json!({rp.clone(): {"resources": {"VCPU": 1, "DISK_GB": 20}}})),
        )
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    let got = s.get(&path, "1.12").await;
    assert_eq!(got.body["project_id"], "42a32c07");
    assert_eq!(got.body["user_id"], "66cb2f29");
    assert!(got.body.get("consumer_generation").is_none());
    // What GET shows can be PUT back (the generation is ignored).
    let r = s
        .put(&path, "1.12", &with(got.body["allocations"].clone()))
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    // Empty resources fail in both forms.
    let r = s
        .put(&path, "1.11", &json!({"allocations": [{"resource_provider": {"uuid": rp}, "resources": {}}], "project_id": "p", "user_id": "u"}))
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn bad_classes_and_capacity() {
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.custom_class("CUSTOM_GOLD").await;
    s.simple_inventory(&rp, "VCPU", 24).await;
    s.simple_inventory(&rp, "CUSTOM_GOLD", 5).await;
    let path = format!("/allocations/{}", uuid());
    let body = |resources: serde_json::Value| {
        let mut b = list_body(&rp, resources);
        b["project_id"] = json!("p");
        b["user_id"] = json!("u");
        b
    };
    let r = s
        .put(
            &path,
            "1.11",
            &body(json!({"DISK_GB": 5, "CUSTOM_GOLD": 1})),
        )
        .await;
    assert_eq!(r.status, 409, "{r:?}");
    assert_eq!(
        r.message(),
        format!(
            "Unable to allocate inventory: Inventory for 'DISK_GB' on resource provider '{rp}' invalid."
        )
    );
    assert_eq!(
        s.put(&path, "1.11", &body(json!({"CUSTOM_GOLD": 1})))
            .await
            .status,
        204
    );
    assert_eq!(
        s.put(&path, "1.11", &body(json!({"DISK_GB": 1})))
            .await
            .status,
        409
    );
    let r = s.put(&path, "1.11", &body(json!({"CUSTOM_GOLD": 6}))).await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        format!(
            "Unable to allocate inventory: Unable to create allocation for 'CUSTOM_GOLD' on resource provider '{rp}'. The requested amount would exceed the capacity."
        )
    );
}

#[tokio::test]
async fn inventory_constraints_and_ratios() {
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    // total 100, reserved 10, min 2, max 40, step 2, ratio 1.5: capacity 135.
    s.inventory(&rp, "DISK_GB", [100, 10, 2, 40, 2], 1.5).await;
    let put = |c: String, n: i64| {
        let body = json!({"allocations": {rp.clone(): {"resources": {"DISK_GB": n}}}, "project_id": "p", "user_id": "u"});
        let s = &s;
        async move { s.put(&format!("/allocations/{c}"), "1.12", &body).await }
    };
    for (n, status) in [
        (1, 409),
        (3, 409),
        (42, 409),
        (40, 204),
        (40, 204),
        (40, 204),
    ] {
        let r = put(uuid(), n).await;
        assert_eq!(r.status, status, "{n}: {r:?}");
        if status == 409 && n < 40 {
            assert!(
                r.message()
                    .ends_with("would violate inventory constraints."),
                "{r:?}"
            );
        }
    }
    // 120 used of 135: 16 more does not fit, 14 does.
    let r = put(uuid(), 16).await;
    assert!(r.message().ends_with("would exceed the capacity."), "{r:?}");
    assert_eq!(put(uuid(), 14).await.status, 204);
}

#[tokio::test]
async fn consumer_generations_from_1_28() {
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.inventory(&rp, "DISK_GB", [2048, 0, 10, 1000, 10], 1.0)
        .await;
    let owner = |allocations: serde_json::Value, generation: Option<serde_json::Value>| {
        let mut b = json!({"allocations": allocations, "project_id": "p", "user_id": "u"});
        if let Some(g) = generation {
            b["consumer_generation"] = g;
        }
        b
    };
    let disk = json!({rp.clone(): {"resources": {"DISK_GB": 10}}});
    let old = &uuid();
    let new = &uuid();

    let r = s.get(&format!("/allocations/{old}"), "1.27").await;
    assert_eq!(r.body, json!({"allocations": {}}));
    let r = s.get(&format!("/allocations/{new}"), "1.28").await;
    assert_eq!(r.body, json!({"allocations": {}}));

    assert_eq!(
        s.put(
            &format!("/allocations/{old}"),
            "1.27",
            &owner(disk.clone(), None)
        )
        .await
        .status,
        204
    );
    // The generation is required from 1.28.
    let r = s
        .put(
            &format!("/allocations/{new}"),
            "1.28",
            &owner(disk.clone(), None),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = s
        .put(
            &format!("/allocations/{new}"),
            "1.28",
            &owner(disk.clone(), Some(json!(5))),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        "consumer generation conflict - expected null but got 5"
    );
    assert_eq!(r.code(), "placement.concurrent_update");
    assert_eq!(
        s.put(
            &format!("/allocations/{new}"),
            "1.28",
            &owner(disk.clone(), Some(json!(null)))
        )
        .await
        .status,
        204
    );

    let c = &uuid();
    let path = format!("/allocations/{c}");
    assert_eq!(
        s.put(&path, "1.28", &owner(disk.clone(), Some(json!(null))))
            .await
            .status,
        204
    );
    let r = s
        .put(&path, "1.28", &owner(disk.clone(), Some(json!(null))))
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        "consumer generation conflict - expected 1 but got None"
    );
    let r = s.get(&path, "1.28").await;
    assert_eq!(r.body["consumer_generation"], 1);
    assert_eq!(
        s.put(&path, "1.28", &owner(disk.clone(), Some(json!(1))))
            .await
            .status,
        204
    );
    let r = s
        .put(&path, "1.28", &owner(disk.clone(), Some(json!(12))))
        .await;
    assert_eq!((r.status, r.code()), (409, "placement.concurrent_update"));
    // Older versions do not check it, but move it.
    assert_eq!(
        s.put(&path, "1.27", &owner(disk.clone(), None))
            .await
            .status,
        204
    );
    let r = s.get(&path, "1.28").await;
    assert_eq!(r.body["consumer_generation"], 3);
    let r = s
        .get(&format!("/resource_providers/{rp}/allocations"), "1.28")
        .await;
    assert_eq!(r.body["allocations"][c]["consumer_generation"], 3);

    // Empty allocations remove them, and the consumer.
    assert_eq!(
        s.put(&path, "1.28", &owner(json!({}), Some(json!(3))))
            .await
            .status,
        204
    );
    assert_eq!(s.get(&path, "1.27").await.body, json!({"allocations": {}}));
    assert_eq!(s.get(&path, "1.28").await.body, json!({"allocations": {}}));
    assert_eq!(s.count("consumers", "uuid = ?", c).await, 0);
    // Before 1.28 they must not be empty.
    assert_eq!(
        s.put(&path, "1.27", &owner(json!({}), None)).await.status,
        400
    );

    // A failed write leaves no consumer behind (bug 1778591).
    let big = json!({rp.clone(): {"resources": {"DISK_GB": 9990}}});
    let fresh = &uuid();
    let r = s
        .put(
            &format!("/allocations/{fresh}"),
            "1.28",
            &owner(big, Some(json!(null))),
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(
        r.message().contains("would violate inventory constraints")
            || r.message().contains("exceed the capacity")
    );
    assert_eq!(s.count("consumers", "uuid = ?", fresh).await, 0);
    assert_eq!(
        s.put(
            &format!("/allocations/{fresh}"),
            "1.28",
            &owner(disk.clone(), Some(json!(null)))
        )
        .await
        .status,
        204
    );
}

#[tokio::test]
async fn post_allocations_from_1_13() {
    let s = Server::start().await;
    let (cn1, cn2, disk) = (uuid(), uuid(), uuid());
    for rp in [&cn1, &cn2] {
        s.provider(rp, None).await;
        s.simple_inventory(rp, "VCPU", 16).await;
        s.simple_inventory(rp, "MEMORY_MB", 2048).await;
    }
    s.provider(&disk, None).await;
    s.simple_inventory(&disk, "DISK_GB", 4096).await;
    let (instance, migration, other) = (uuid(), uuid(), uuid());
    let (project, user, alt_project, alt_user) = (uuid(), uuid(), uuid(), uuid());

    assert_eq!(s.post("/allocations", "1.12", &json!({})).await.status, 404);
    let two = json!({
        instance.clone(): {
            "allocations": {
                cn2.clone(): {"resources": {"MEMORY_MB": 1024, "VCPU": 2}},
                disk.clone(): {"resources": {"DISK_GB": 5}}
            },
            "project_id": project, "user_id": user
        },
        migration.clone(): {
            "allocations": {cn1.clone(): {"resources": {"MEMORY_MB": 1024, "VCPU": 2}}},
            "project_id": project, "user_id": user
        }
    });
    let r = s.post("/allocations", "1.13", &two).await;
    assert_eq!(r.status, 204, "{r:?}");
    let r = s.get(&format!("/allocations/{instance}"), "1.28").await;
    assert_eq!(r.body["consumer_generation"], 1);
    assert_eq!(r.body["project_id"], project.as_str());
    assert_eq!(r.body["allocations"][&cn2]["resources"]["VCPU"], 2);
    assert_eq!(r.body["allocations"][&disk]["resources"]["DISK_GB"], 5);
    let r = s
        .get(&format!("/usages?project_id={project}"), "1.13")
        .await;
    assert_eq!(
        r.body["usages"],
        json!({"DISK_GB": 5, "VCPU": 4, "MEMORY_MB": 2048})
    );

    // Clear one, keep the other.
    let mut clear = two.clone();
    clear[&migration]["allocations"] = json!({});
    assert_eq!(s.post("/allocations", "1.13", &clear).await.status, 204);
    let r = s
        .get(&format!("/usages?project_id={project}"), "1.13")
        .await;
    assert_eq!(
        r.body["usages"],
        json!({"DISK_GB": 5, "VCPU": 2, "MEMORY_MB": 1024})
    );

    let mut users = two.clone();
    users.as_object_mut().unwrap().remove(&migration);
    users[&other] = json!({
        "allocations": {cn1.clone(): {"resources": {"MEMORY_MB": 1024, "VCPU": 2}}},
        "project_id": alt_project, "user_id": alt_user
    });
    assert_eq!(s.post("/allocations", "1.13", &users).await.status, 204);
    let r = s
        .get(&format!("/usages?project_id={alt_project}"), "1.13")
        .await;
    assert_eq!(r.body["usages"], json!({"VCPU": 2, "MEMORY_MB": 1024}));

    // Over capacity: nothing is written.
    let mut over = users.clone();
    over[&other]["allocations"][&cn1]["resources"]["MEMORY_MB"] = json!(2049);
    let r = s.post("/allocations", "1.13", &over).await;
    assert_eq!(r.status, 409);
    assert!(
        r.message()
            .contains("The requested amount would exceed the capacity"),
        "{r:?}"
    );
    let r = s
        .get(&format!("/usages?project_id={alt_project}"), "1.13")
        .await;
    assert_eq!(r.body["usages"], json!({"VCPU": 2, "MEMORY_MB": 1024}));

    let bad = json!({instance.clone(): {"allocations": {cn2.clone(): {"cow": "moo"}}, "project_id": project, "user_id": user}});
    assert_eq!(s.post("/allocations", "1.13", &bad).await.status, 400);
    assert_eq!(
        s.post(
            "/allocations",
            "1.13",
            &json!({instance.clone(): {"cow": "moo"}})
        )
        .await
        .status,
        400
    );

    let mut nowhere = users.clone();
    nowhere[&instance]["allocations"] =
        json!({"c42def7b-498b-4442-9502-c7970b14bea4": {"resources": {"VCPU": 1}}});
    let r = s.post("/allocations", "1.13", &nowhere).await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("that does not exist"));

    let mut pci = users.clone();
    pci[&instance]["allocations"][&cn2]["resources"]["PCI_DEVICE"] = json!(1);
    let r = s.post("/allocations", "1.13", &pci).await;
    assert_eq!(r.status, 409);
    assert!(
        r.message().contains("Inventory for 'PCI_DEVICE' on"),
        "{r:?}"
    );

    let mut pony = users.clone();
    pony[&instance]["allocations"][&cn2]["resources"]["CUSTOM_PONY"] = json!(1);
    let r = s.post("/allocations", "1.13", &pony).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "Unable to allocate inventory No such resource class CUSTOM_PONY."
    );

    // 1.28: consumer generations are required and checked.
    assert_eq!(s.post("/allocations", "1.28", &users).await.status, 400);
    let mut gens = users.clone();
    gens[&instance]["consumer_generation"] = json!(1);
    gens[&other]["consumer_generation"] = json!(1);
    let r = s.post("/allocations", "1.28", &gens).await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        "consumer generation conflict - expected 3 but got 1"
    );
    gens[&instance]["consumer_generation"] = json!(3);
    assert_eq!(s.post("/allocations", "1.28", &gens).await.status, 204);
}

#[tokio::test]
async fn post_is_all_or_nothing_on_capacity() {
    // Bug 1778743: three consumers of one VCPU each on a provider of two.
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 2).await;
    let mut body = json!({});
    let consumers = [uuid(), uuid(), uuid()];
    for c in &consumers {
        body[c] = json!({
            "allocations": {rp.clone(): {"resources": {"VCPU": 1}}},
            "project_id": "p", "user_id": "u", "consumer_generation": null
        });
    }
    assert_eq!(s.post("/allocations", "1.28", &body).await.status, 409);
    let r = s
        .get(&format!("/resource_providers/{rp}/usages"), "1.28")
        .await;
    assert_eq!(r.body["usages"]["VCPU"], 0);
    assert_eq!(r.body["resource_provider_generation"], 1);
    for c in &consumers {
        assert_eq!(s.count("consumers", "uuid = ?", c).await, 0);
    }
}

#[tokio::test]
async fn changing_project_and_user() {
    // Bug 1779717.
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 16).await;
    s.simple_inventory(&rp, "MEMORY_MB", 2048).await;
    let c1 = &uuid();
    let c2 = &uuid();
    let res = json!({rp.clone(): {"resources": {"MEMORY_MB": 1024, "VCPU": 2}}});
    let put = |project: &str, generation: serde_json::Value| json!({"allocations": res.clone(), "project_id": project, "user_id": "u", "consumer_generation": generation});
    assert_eq!(
        s.put(
            &format!("/allocations/{c1}"),
            "1.28",
            &put("p1", json!(null))
        )
        .await
        .status,
        204
    );
    assert_eq!(
        s.get(&format!("/allocations/{c1}"), "1.28").await.body["project_id"],
        "p1"
    );
    assert_eq!(
        s.put(&format!("/allocations/{c1}"), "1.28", &put("p2", json!(1)))
            .await
            .status,
        204
    );
    assert_eq!(
        s.get(&format!("/allocations/{c1}"), "1.28").await.body["project_id"],
        "p2"
    );
    let one = json!({rp.clone(): {"resources": {"MEMORY_MB": 1024, "VCPU": 1}}});
    let body = json!({
        c1: {"allocations": one, "consumer_generation": 2, "project_id": "p1", "user_id": "u"},
        c2: {"allocations": one, "consumer_generation": null, "project_id": "p2", "user_id": "u2"}
    });
    assert_eq!(s.post("/allocations", "1.28", &body).await.status, 204);
    let r = s.get(&format!("/allocations/{c1}"), "1.28").await;
    assert_eq!(
        (
            r.body["project_id"].as_str(),
            r.body["consumer_generation"].as_i64()
        ),
        (Some("p1"), Some(3))
    );
    // A changed project with a write that fails is not kept.
    let too_much = json!({
        "allocations": {rp.clone(): {"resources": {"VCPU": 100}}},
        "project_id": "p3", "user_id": "u3", "consumer_generation": 3
    });
    let r = s
        .put(&format!("/allocations/{c1}"), "1.28", &too_much)
        .await;
    assert_eq!(r.status, 409);
    let r = s.get(&format!("/allocations/{c1}"), "1.28").await;
    assert_eq!(
        (r.body["project_id"].as_str(), r.body["user_id"].as_str()),
        (Some("p1"), Some("u"))
    );
    assert_eq!(r.body["consumer_generation"], 3);
}

#[tokio::test]
async fn consumer_types_from_1_38() {
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "DISK_GB", 2048).await;
    let c = &uuid();
    let disk = json!({rp.clone(): {"resources": {"DISK_GB": 10}}});
    let body = |generation: serde_json::Value, t: Option<&str>| {
        let mut b = json!({"allocations": disk.clone(), "project_id": "p", "user_id": "u", "consumer_generation": generation});
        if let Some(t) = t {
            b["consumer_type"] = json!(t);
        }
        b
    };
    let r = s
        .post("/allocations", "1.38", &json!({c: body(json!(null), None)}))
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("'consumer_type' is a required property"),
        "{r:?}"
    );
    let r = s
        .put(
            &format!("/allocations/{c}"),
            "1.38",
            &body(json!(null), None),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("'consumer_type' is a required property"),
        "{r:?}"
    );
    let r = s
        .post(
            "/allocations",
            "1.38",
            &json!({c: body(json!(null), Some("INSTANCE"))}),
        )
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(
        s.get(&format!("/allocations/{c}"), "1.38").await.body["consumer_type"],
        "INSTANCE"
    );
    let r = s
        .put(
            &format!("/allocations/{c}"),
            "1.38",
            &body(json!(1), Some("PONY")),
        )
        .await;
    assert_eq!(r.status, 204);
    let got = s.get(&format!("/allocations/{c}"), "1.38").await;
    assert_eq!(got.body["consumer_type"], "PONY");
    assert_eq!(got.body["consumer_generation"], 2);
    // Not shown before 1.38.
    assert!(
        s.get(&format!("/allocations/{c}"), "1.37")
            .await
            .body
            .get("consumer_type")
            .is_none()
    );

    // Without a type (before 1.38): unknown.
    let d = &uuid();
    assert_eq!(
        s.put(
            &format!("/allocations/{d}"),
            "1.36",
            &body(json!(null), None)
        )
        .await
        .status,
        204
    );
    assert_eq!(
        s.get(&format!("/allocations/{d}"), "1.38").await.body["consumer_type"],
        "unknown"
    );
    // A type given later is set; a write before 1.38 keeps it.
    assert_eq!(
        s.put(
            &format!("/allocations/{d}"),
            "1.38",
            &body(json!(1), Some("INSTANCE"))
        )
        .await
        .status,
        204
    );
    assert_eq!(
        s.put(&format!("/allocations/{d}"), "1.37", &body(json!(2), None))
            .await
            .status,
        204
    );
    assert_eq!(
        s.get(&format!("/allocations/{d}"), "1.38").await.body["consumer_type"],
        "INSTANCE"
    );
    let r = s
        .put(
            &format!("/allocations/{d}"),
            "1.38",
            &body(json!(3), Some("instance")),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("'instance' does not match '^[A-Z0-9_]+$'"),
        "{r:?}"
    );
    // Types are rejected before 1.38.
    assert_eq!(
        s.put(
            &format!("/allocations/{d}"),
            "1.37",
            &body(json!(3), Some("INSTANCE"))
        )
        .await
        .status,
        400
    );
}

#[tokio::test]
async fn dashless_consumer_uuids_are_canonical() {
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 8).await;
    let body = json!({"allocations": {rp.clone(): {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u", "consumer_generation": null});
    let consumer = uuid();
    let dashless = consumer.replace('-', "").to_uppercase();
    let r = s
        .put(&format!("/allocations/{dashless}"), "1.28", &body)
        .await;
    assert_eq!(r.status, 204);
    let r = s.get(&format!("/allocations/{consumer}"), "1.28").await;
    assert_eq!(r.body["allocations"][&rp]["resources"]["VCPU"], 1);
}

#[tokio::test]
async fn policy_is_checked() {
    let s = Server::start().await;
    let c = uuid();
    let user = [("x-auth-token", "user")];
    for (method, path) in [
        (Method::GET, format!("/allocations/{c}")),
        (Method::DELETE, format!("/allocations/{c}")),
        (Method::GET, format!("/resource_providers/{c}/allocations")),
        (Method::GET, format!("/resource_providers/{c}/usages")),
    ] {
        let r = s
            .call_as(&user, method.clone(), &path, Some("1.28"), None)
            .await;
        assert_eq!(r.status, 403, "{method} {path}");
    }
    let r = s
        .call_as(
            &user,
            Method::PUT,
            &format!("/allocations/{c}"),
            Some("1.28"),
            Some(&json!({})),
        )
        .await;
    assert_eq!(r.status, 403);
    let r = s
        .call_as(
            &user,
            Method::POST,
            "/allocations",
            Some("1.28"),
            Some(&json!({})),
        )
        .await;
    assert_eq!(r.status, 403);
    // Without a JSON body, 415 comes first, as upstream checks it first.
    let r = s
        .call_as(
            &user,
            Method::PUT,
            &format!("/allocations/{c}"),
            Some("1.28"),
            None,
        )
        .await;
    assert_eq!(r.status, 415);
}

#[tokio::test]
async fn a_refused_write_leaves_the_consumers_allocations_as_they_were() {
    // The refusal comes after the transaction removed the consumer's old
    // allocations: all of it is rolled back, and the next write goes on.
    let s = Server::start().await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 2).await;
    let consumer = uuid();
    let path = format!("/allocations/{consumer}");
    let asking = |vcpu: i64, generation: serde_json::Value| {
        json!({
            "allocations": {rp.clone(): {"resources": {"VCPU": vcpu}}},
            "project_id": "p", "user_id": "u", "consumer_generation": generation
        })
    };
    assert_eq!(
        s.put(&path, "1.28", &asking(1, json!(null))).await.status,
        204
    );
    let r = s.put(&path, "1.28", &asking(5, json!(1))).await;
    assert_eq!(r.status, 409, "{r:?}");
    let r = s.get(&path, "1.28").await;
    assert_eq!(r.body["allocations"][&rp]["resources"]["VCPU"], 1);
    assert_eq!(r.body["consumer_generation"], 1);
    assert_eq!(
        s.count("allocations", "consumer_id = ?", &consumer).await,
        1
    );
    assert_eq!(s.generation(&rp).await, 2);
    assert_eq!(s.put(&path, "1.28", &asking(2, json!(1))).await.status, 204);
    let r = s.get(&path, "1.28").await;
    assert_eq!(r.body["allocations"][&rp]["resources"]["VCPU"], 2);
    assert_eq!(r.body["consumer_generation"], 2);
}
