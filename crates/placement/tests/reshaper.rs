//! The reshaper over loopback: upstream's reshaper.yaml on the data of its
//! AllocationFixture, and the reshaper part of consumer-types-1.38.yaml.

mod support;

use reqwest::Method;
use serde_json::{Value, json};
use support::{AllocationFixture, Server, uuid};

/// The body of reshaper.yaml's successful move, with `change` applied.
fn moving(f: &AllocationFixture, child: &str, change: impl FnOnce(&mut Value)) -> Value {
    let mut body = json!({
        "inventories": {
            f.rp.clone(): {
                "resource_provider_generation": 5,
                "inventories": {"DISK_GB": {"total": 2048, "step_size": 10, "min_unit": 10, "max_unit": 1200}}
            },
            child: {
                "resource_provider_generation": 0,
                "inventories": {"VCPU": {"total": 10, "max_unit": 8}}
            }
        },
        "allocations": {
            f.consumer_0.clone(): {
                "allocations": {f.rp.clone(): {"resources": {"DISK_GB": 1000}}},
                "project_id": f.project, "user_id": f.user, "consumer_generation": 1
            },
            f.consumer_id.clone(): {
                "allocations": {child: {"resources": {"VCPU": 8}}},
                "project_id": f.project, "user_id": f.user, "consumer_generation": 1
            },
            f.alt_consumer_id.clone(): {
                "allocations": {
                    f.rp.clone(): {"resources": {"DISK_GB": 20}},
                    child: {"resources": {"VCPU": 1}}
                },
                "project_id": f.project, "user_id": f.alt_user, "consumer_generation": 1
            }
        }
    });
    change(&mut body);
    body
}

async fn usages(s: &Server, rp: &str) -> Value {
    s.get(&format!("/resource_providers/{rp}/usages"), "1.30")
        .await
        .body
}

#[tokio::test]
async fn reshaper_yaml() {
    let s = Server::start().await;
    let f = AllocationFixture::create(&s).await;
    let rp = f.rp.clone();

    let r = s.get("/reshaper", "1.30").await;
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    let r = s
        .call_as(
            &[("x-auth-token", "user")],
            Method::POST,
            "/reshaper",
            Some("1.30"),
            Some(&json!({})),
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(s.post("/reshaper", "1.29", &json!({})).await.status, 404);
    let r = s.post("/reshaper", "1.30", &json!({"cows": "moo"})).await;
    assert_eq!(r.status, 400);
    assert!(r.message().starts_with("JSON does not validate"), "{r:?}");
    let vcpu_1 = |generation: i64| json!({rp.clone(): {"resource_provider_generation": generation, "inventories": {"VCPU": {"total": 1}}}});
    let r = s
        .post("/reshaper", "1.30", &json!({"inventories": vcpu_1(0)}))
        .await;
    assert_eq!(r.status, 400);

    // Removing DISK_GB, which allocations use.
    let r = s
        .post(
            "/reshaper",
            "1.30",
            &json!({"inventories": vcpu_1(5), "allocations": {}}),
        )
        .await;
    assert_eq!(r.status, 409, "{r:?}");
    assert_eq!(r.code(), "placement.inventory.inuse");
    assert_eq!(
        r.message(),
        format!("update conflict: Inventory for 'DISK_GB' on resource provider '{rp}' in use.")
    );
    // One VCPU more, where 7 are used of 1.
    let instance = uuid();
    let r = s
        .post(
            "/reshaper",
            "1.30",
            &json!({"inventories": vcpu_1(5), "allocations": {instance.clone(): {
                "allocations": {rp.clone(): {"resources": {"VCPU": 1}}},
                "consumer_generation": null, "project_id": f.project, "user_id": f.user
            }}}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(
        r.message().starts_with("Unable to allocate inventory"),
        "{r:?}"
    );
    let r = s
        .post(
            "/reshaper",
            "1.30",
            &json!({"inventories": vcpu_1(4), "allocations": {}}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        format!("resource provider generation conflict for provider {rp}: actual: 5, given: 4")
    );
    assert_eq!(r.code(), "placement.concurrent_update");
    let r = s
        .post(
            "/reshaper",
            "1.30",
            &json!({"inventories": vcpu_1(5), "allocations": {instance.clone(): {
                "allocations": {rp.clone(): {"resources": {"VCPU": 1}}},
                "consumer_generation": 99, "project_id": f.project, "user_id": f.user
            }}}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert!(
        r.message().contains("consumer generation conflict"),
        "{r:?}"
    );

    let child = uuid();
    s.provider(&child, Some(&rp)).await;

    let nowhere = "39bafc00-3fff-444d-b87a-2ead3f866e05";
    let body = moving(&f, &child, |b| {
        let inv = b["inventories"].as_object_mut().unwrap();
        let v = inv.remove(&child).unwrap();
        inv.insert(nowhere.to_owned(), v);
    });
    let r = s.post("/reshaper", "1.30", &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.code(), "placement.resource_provider.not_found");
    assert_eq!(
        r.message(),
        format!(
            "Resource provider {nowhere} in inventories not found: No resource provider with uuid {nowhere} found"
        )
    );

    let body = moving(&f, &child, |b| {
        b["inventories"][&rp]["inventories"]["DISK_GB"]["bad_field"] = json!("moo");
    });
    let r = s.post("/reshaper", "1.30", &body).await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("'bad_field' was unexpected"), "{r:?}");
    let body = moving(&f, &child, |b| {
        b["allocations"][&f.consumer_0]["bad_field"] = json!("moo");
    });
    let r = s.post("/reshaper", "1.30", &body).await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("'bad_field' was unexpected"), "{r:?}");

    let body = moving(&f, &child, |b| {
        let inv = b["inventories"][&rp]["inventories"]
            .as_object_mut()
            .unwrap();
        let v = inv.remove("DISK_GB").unwrap();
        inv.insert("DISK_OF_STEEL".to_owned(), v);
    });
    let r = s.post("/reshaper", "1.30", &body).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "malformed reshaper data: No such resource class DISK_OF_STEEL."
    );

    let body = moving(&f, &child, |b| {
        b["inventories"][&rp]["inventories"]["DISK_GB"]["max_unit"] = json!(600);
    });
    let r = s.post("/reshaper", "1.30", &body).await;
    assert_eq!(r.status, 409);
    assert!(
        r.message().starts_with("Unable to allocate inventory"),
        "{r:?}"
    );

    // Every failure above was rolled back: the generations still hold.
    let r = s
        .post("/reshaper", "1.30", &moving(&f, &child, |_| {}))
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(
        usages(&s, &rp).await,
        json!({"resource_provider_generation": 8, "usages": {"DISK_GB": 1020}})
    );
    assert_eq!(
        usages(&s, &child).await,
        json!({"resource_provider_generation": 3, "usages": {"VCPU": 9}})
    );

    // Back to the parent, under two new consumers.
    let (n1, n2) = (&uuid(), &uuid());
    let back = |gen_rp: i64, gen_child: i64, gens: [Value; 5], version_extra: Option<Value>| {
        let mut b = json!({
            "inventories": {
                rp.clone(): {
                    "resource_provider_generation": gen_rp,
                    "inventories": {
                        "DISK_GB": {"total": 2048, "step_size": 10, "min_unit": 10, "max_unit": 1200},
                        "VCPU": {"total": 10, "max_unit": 8}
                    }
                },
                child.clone(): {"resource_provider_generation": gen_child, "inventories": {}}
            },
            "allocations": {
                f.consumer_0.clone(): {
                    "allocations": {rp.clone(): {"resources": {"DISK_GB": 1000}}},
                    "project_id": f.project, "user_id": f.user, "consumer_generation": gens[0]
                },
                n1: {
                    "allocations": {rp.clone(): {"resources": {"VCPU": 8}}},
                    "project_id": f.project, "user_id": f.user, "consumer_generation": gens[1]
                },
                n2: {
                    "allocations": {rp.clone(): {"resources": {"DISK_GB": 20, "VCPU": 1}}},
                    "project_id": f.project, "user_id": f.alt_user, "consumer_generation": gens[2]
                },
                f.consumer_id.clone(): {
                    "allocations": {},
                    "project_id": f.project, "user_id": f.user, "consumer_generation": gens[3]
                },
                f.alt_consumer_id.clone(): {
                    "allocations": {rp.clone(): {"resources": {"DISK_GB": 20}}},
                    "project_id": f.project, "user_id": f.alt_user, "consumer_generation": gens[4]
                }
            }
        });
        if let Some(mappings) = version_extra {
            b["allocations"][&f.consumer_0]["mappings"] = mappings;
        }
        b
    };
    let r = s
        .post(
            "/reshaper",
            "1.30",
            &back(
                8,
                3,
                [json!(2), json!(null), json!(null), json!(2), json!(2)],
                None,
            ),
        )
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(
        usages(&s, &rp).await,
        json!({"resource_provider_generation": 11, "usages": {"VCPU": 9, "DISK_GB": 1040}})
    );
    assert_eq!(
        usages(&s, &child).await,
        json!({"resource_provider_generation": 5, "usages": {}})
    );
    // The consumer left without allocations is gone.
    assert_eq!(s.count("consumers", "uuid = ?", &f.consumer_id).await, 0);

    // Mappings from 1.34, not before.
    let mappings = json!({"": [rp.clone()]});
    let body = back(
        11,
        5,
        [json!(3), json!(1), json!(1), json!(null), json!(3)],
        Some(mappings),
    );
    let r = s.post("/reshaper", "1.33", &body).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("Additional properties are not allowed"),
        "{r:?}"
    );
    let r = s.post("/reshaper", "1.34", &body).await;
    assert_eq!(r.status, 204, "{r:?}");
}

#[tokio::test]
async fn reshaper_consumer_types() {
    let s = Server::start().await;
    let f = AllocationFixture::create(&s).await;
    let c = &uuid();
    let body = |generation: Value, t: Option<&str>| {
        let mut b = json!({
            "inventories": {f.rp.clone(): {
                "resource_provider_generation": 5,
                "inventories": {"DISK_GB": {"total": 2048}, "VCPU": {"total": 97}}
            }},
            "allocations": {c: {
                "allocations": {f.rp.clone(): {"resources": {"DISK_GB": 10}}},
                "project_id": f.project, "user_id": f.user, "consumer_generation": generation
            }}
        });
        if let Some(t) = t {
            b["allocations"][c]["consumer_type"] = json!(t);
        }
        b
    };
    let r = s.post("/reshaper", "1.38", &body(json!(null), None)).await;
    assert_eq!(r.status, 400);
    let r = s
        .post("/reshaper", "1.36", &body(json!(null), Some("RESHAPED")))
        .await;
    assert_eq!(r.status, 400);
    let r = s
        .post("/reshaper", "1.38", &body(json!(null), Some("RESHAPED")))
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    let r = s.get(&format!("/allocations/{c}"), "1.38").await;
    assert_eq!(r.body["consumer_type"], "RESHAPED");
    // Interim, allocations and final steps each moved the generation.
    assert_eq!(s.generation(&f.rp).await, 8);
}

#[tokio::test]
async fn reshaper_policy_is_service() {
    let s = Server::start_with(|c| {
        c.enforce_new_defaults = true;
        c.enforce_scope = true;
    })
    .await;
    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "DISK_GB", 2048).await;
    let child = uuid();
    s.provider(&child, Some(&rp)).await;
    let body = json!({
        "inventories": {
            rp.clone(): {"resource_provider_generation": 1, "inventories": {}},
            child.clone(): {"resource_provider_generation": 0, "inventories": {"DISK_GB": {"total": 2048}}}
        },
        "allocations": {}
    });
    for (roles, project, status) in [
        ("reader", true, 403),
        ("member,reader", true, 403),
        ("admin,member,reader", true, 403),
        ("admin", true, 403),
        ("admin,member,reader", false, 403),
        ("service", true, 204),
    ] {
        let mut headers = vec![("x-auth-token", "user"), ("x-roles", roles)];
        if project {
            headers.push(("x-project-id", "p"));
        } else {
            headers.push(("openstack-system-scope", "all"));
        }
        let r = s
            .call_as(
                &headers,
                Method::POST,
                "/reshaper",
                Some("1.30"),
                Some(&body),
            )
            .await;
        assert_eq!(r.status, status, "{roles}: {r:?}");
    }
    let r = s
        .get(&format!("/resource_providers/{child}/usages"), "1.30")
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(s.generation(&rp).await, 2);
    assert_eq!(s.generation(&child).await, 2);
}
