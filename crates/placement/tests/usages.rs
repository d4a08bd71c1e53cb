//! Usages over loopback: upstream's usage.yaml, the usages of
//! consumer-types-1.38.yaml, and the policy of usage-secure-rbac.yaml.

mod support;

use reqwest::Method;
use serde_json::json;
use support::{AllocationFixture, Server, uuid};

#[tokio::test]
async fn provider_usages() {
    let s = Server::start().await;
    let missing = "fae14fa3-4b43-498c-a33c-4a1d00edb577";
    let r = s
        .get(&format!("/resource_providers/{missing}/usages"), "1.0")
        .await;
    assert_eq!(r.status, 404);
    assert!(
        r.message()
            .contains(&format!("No resource provider with uuid {missing} found")),
        "{r:?}"
    );
    assert_eq!(r.body["errors"][0]["title"], "Not Found");

    let rp = uuid();
    s.provider(&rp, None).await;
    let path = format!("/resource_providers/{rp}/usages");
    let r = s.get(&path, "1.0").await;
    assert_eq!(
        r.body,
        json!({"resource_provider_generation": 0, "usages": {}})
    );
    assert!(r.header("last-modified").is_none() && r.header("cache-control").is_none());
    let r = s.get(&path, "1.15").await;
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    assert!(r.header("last-modified").is_some());

    // Classes with inventory show, used or not.
    s.simple_inventory(&rp, "VCPU", 8).await;
    s.simple_inventory(&rp, "DISK_GB", 100).await;
    let body = json!({"allocations": {rp.clone(): {"resources": {"VCPU": 3}}}, "project_id": "p", "user_id": "u"});
    assert_eq!(
        s.put(&format!("/allocations/{}", uuid()), "1.12", &body)
            .await
            .status,
        204
    );
    assert_eq!(
        s.put(&format!("/allocations/{}", uuid()), "1.12", &body)
            .await
            .status,
        204
    );
    let r = s.get(&path, "1.0").await;
    assert_eq!(
        r.body,
        json!({"resource_provider_generation": 4, "usages": {"VCPU": 6, "DISK_GB": 0}})
    );
}

#[tokio::test]
async fn total_usages_from_1_9() {
    let s = Server::start().await;
    let project = uuid();
    let r = s.get(&format!("/usages?project_id={project}"), "1.8").await;
    assert_eq!(r.status, 404);
    let r = s.get("/usages", "1.9").await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().starts_with("Invalid query string parameters: "),
        "{r:?}"
    );
    let r = s.get(&format!("/usages?project_id={project}"), "1.9").await;
    assert_eq!((r.status, &r.body), (200, &json!({"usages": {}})));
    let long = "x".repeat(256);
    for query in [
        "project_id=".to_owned(),
        format!("project_id={project}&user_id="),
        format!("project_id={long}"),
        format!("project_id={project}&user_id={long}"),
        format!("project_id={project}&user_id=u&dummy=1"),
        format!("project_id={project}&consumer_type=all"),
    ] {
        let r = s.get(&format!("/usages?{query}"), "1.9").await;
        assert_eq!(r.status, 400, "{query}");
        assert!(
            r.message().starts_with("Invalid query string parameters: "),
            "{r:?}"
        );
    }
    // POST is not a method of /usages, at any version.
    let r = s
        .call(Method::POST, "/usages", Some("1.0"), Some(&json!({})))
        .await;
    assert_eq!((r.status, r.header("allow")), (405, Some("GET")));

    let rp = uuid();
    s.provider(&rp, None).await;
    s.simple_inventory(&rp, "VCPU", 16).await;
    s.simple_inventory(&rp, "MEMORY_MB", 4096).await;
    for (user, vcpu) in [("u1", 1), ("u1", 2), ("u2", 4)] {
        let body = json!({
            "allocations": {rp.clone(): {"resources": {"VCPU": vcpu, "MEMORY_MB": 128}}},
            "project_id": project, "user_id": user
        });
        assert_eq!(
            s.put(&format!("/allocations/{}", uuid()), "1.12", &body)
                .await
                .status,
            204
        );
    }
    let r = s.get(&format!("/usages?project_id={project}"), "1.9").await;
    assert_eq!(r.body, json!({"usages": {"VCPU": 7, "MEMORY_MB": 384}}));
    let r = s
        .get(&format!("/usages?project_id={project}&user_id=u1"), "1.9")
        .await;
    assert_eq!(r.body, json!({"usages": {"VCPU": 3, "MEMORY_MB": 256}}));
    let r = s
        .get(
            &format!("/usages?project_id={project}&user_id=nobody"),
            "1.9",
        )
        .await;
    assert_eq!(r.body, json!({"usages": {}}));
    let r = s
        .get(&format!("/usages?project_id={project}"), "1.15")
        .await;
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    // From 1.38, by consumer type.
    let r = s
        .get(&format!("/usages?project_id={project}"), "1.38")
        .await;
    assert_eq!(
        r.body,
        json!({"usages": {"unknown": {"consumer_count": 3, "VCPU": 7, "MEMORY_MB": 384}}})
    );
}

#[tokio::test]
async fn usages_by_consumer_type() {
    let s = Server::start().await;
    let f = AllocationFixture::create(&s).await;
    let disk = json!({f.rp.clone(): {"resources": {"DISK_GB": 10}}});
    let a = &uuid();
    let b = &uuid();
    let body = |generation: serde_json::Value, t: Option<&str>| {
        let mut v = json!({"allocations": disk.clone(), "project_id": f.project, "user_id": f.user, "consumer_generation": generation});
        if let Some(t) = t {
            v["consumer_type"] = json!(t);
        }
        v
    };
    let r = s
        .post(
            "/allocations",
            "1.38",
            &json!({a: body(json!(null), Some("INSTANCE"))}),
        )
        .await;
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(
        s.put(
            &format!("/allocations/{a}"),
            "1.38",
            &body(json!(1), Some("PONY"))
        )
        .await
        .status,
        204
    );
    assert_eq!(
        s.put(
            &format!("/allocations/{b}"),
            "1.36",
            &body(json!(null), None)
        )
        .await
        .status,
        204
    );
    assert_eq!(
        s.put(
            &format!("/allocations/{b}"),
            "1.38",
            &body(json!(1), Some("INSTANCE"))
        )
        .await
        .status,
        204
    );

    let usages = |query: &str| {
        let path = format!("/usages?project_id={}{query}", f.project);
        let s = &s;
        async move { s.get(&path, "1.38").await.body["usages"].clone() }
    };
    assert_eq!(
        usages("").await,
        json!({
            "PONY": {"consumer_count": 1, "DISK_GB": 10},
            "INSTANCE": {"consumer_count": 1, "DISK_GB": 10},
            "unknown": {"consumer_count": 3, "DISK_GB": 1020, "VCPU": 7}
        })
    );
    assert_eq!(
        usages("&consumer_type=PONY").await,
        json!({"PONY": {"consumer_count": 1, "DISK_GB": 10}})
    );
    assert_eq!(usages("&consumer_type=COW").await, json!({}));
    assert_eq!(
        usages("&consumer_type=all").await,
        json!({"all": {"consumer_count": 5, "DISK_GB": 1040, "VCPU": 7}})
    );
    assert_eq!(usages("&consumer_type=ALL").await, json!({}));
    assert_eq!(
        usages("&consumer_type=unknown").await,
        json!({"unknown": {"consumer_count": 3, "DISK_GB": 1020, "VCPU": 7}})
    );
    assert_eq!(usages("&consumer_type=UNKNOWN").await, json!({}));
    assert_eq!(
        usages(&format!("&user_id={}", f.alt_user)).await,
        json!({"unknown": {"consumer_count": 1, "DISK_GB": 20, "VCPU": 1}})
    );
    let r = s
        .get(
            &format!("/usages?project_id={}&consumer_type=pony", f.project),
            "1.38",
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn usage_policy_secure_rbac() {
    let s = Server::start_with(|c| {
        c.enforce_new_defaults = true;
        c.enforce_scope = true;
    })
    .await;
    let project = uuid();
    let other = uuid();
    let rp = uuid();
    s.provider(&rp, None).await;
    let as_ = |roles: &'static str, project: Option<&str>, system: bool| {
        let mut h = vec![
            ("x-auth-token", "user".to_owned()),
            ("x-roles", roles.to_owned()),
        ];
        if let Some(p) = project {
            h.push(("x-project-id", p.to_owned()));
        }
        if system {
            h.push(("openstack-system-scope", "all".to_owned()));
        }
        h
    };
    let check = |headers: Vec<(&'static str, String)>, path: String, status: u16| {
        let s = &s;
        async move {
            let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let r = s
                .call_as(&h, Method::GET, &path, Some("latest"), None)
                .await;
            assert_eq!(r.status, status, "{headers:?} {path}: {r:?}");
        }
    };
    let usages = format!("/resource_providers/{rp}/usages");
    let total = format!("/usages?project_id={project}");
    check(
        as_("admin,member,reader", Some(&project), false),
        usages.clone(),
        200,
    )
    .await;
    check(as_("service", Some(&other), false), usages.clone(), 200).await;
    check(
        as_("member,reader", Some(&project), false),
        usages.clone(),
        403,
    )
    .await;
    check(as_("admin,member,reader", None, true), usages.clone(), 403).await;
    check(as_("reader", Some(&project), false), total.clone(), 200).await;
    check(
        as_("member,reader", Some(&project), false),
        total.clone(),
        200,
    )
    .await;
    check(
        as_("member,reader", Some(&other), false),
        total.clone(),
        403,
    )
    .await;
    check(as_("reader", Some(&other), false), total.clone(), 403).await;
    check(
        as_("admin,member,reader", Some(&other), false),
        total.clone(),
        200,
    )
    .await;
    check(as_("service", Some(&other), false), total.clone(), 200).await;
    check(as_("reader", None, true), total.clone(), 403).await;
    check(as_("admin,member,reader", None, true), total.clone(), 403).await;
}
