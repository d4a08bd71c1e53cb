//! `/resource_providers`.

use serde_json::{Value, json};

use crate::support::{Server, uuid};

fn rels(provider: &Value) -> Vec<String> {
    provider["links"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| l["rel"].as_str().expect("rel").to_owned())
        .collect()
}

#[tokio::test]
async fn create_answers_by_version_and_links_grow() {
    let s = Server::start().await;
    let id = uuid();
    let name = format!("rp-{id}");
    let r = s
        .post(
            "/resource_providers",
            "1.19",
            &json!({"name": name, "uuid": id}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert!(r.header("content-type").is_none());
    let location = r.header("location").expect("location");
    assert!(location.starts_with("http://"), "{location}");
    assert!(location.ends_with(&format!("/resource_providers/{id}")));

    let path = format!("/resource_providers/{id}");
    for (version, expected) in [
        ("1.0", vec!["self", "inventories", "usages"]),
        ("1.1", vec!["self", "inventories", "usages", "aggregates"]),
        (
            "1.6",
            vec!["self", "inventories", "usages", "aggregates", "traits"],
        ),
        (
            "1.11",
            vec![
                "self",
                "inventories",
                "usages",
                "aggregates",
                "traits",
                "allocations",
            ],
        ),
    ] {
        let r = s.get(&path, version).await;
        assert_eq!(r.status, 200);
        assert_eq!(rels(&r.body), expected, "at {version}");
    }
    let old = s.get(&path, "1.13").await;
    assert_eq!(old.body.as_object().expect("object").len(), 4);
    assert!(old.body.get("root_provider_uuid").is_none());
    let new = s.get(&path, "1.14").await;
    assert_eq!(new.body["root_provider_uuid"], json!(id));
    assert_eq!(new.body["parent_provider_uuid"], Value::Null);
    assert!(new.header("last-modified").is_none());
    let dated = s.get(&path, "1.15").await;
    assert_eq!(dated.header("cache-control"), Some("no-cache"));
    assert!(
        dated
            .header("last-modified")
            .expect("date")
            .ends_with(" GMT")
    );

    // From 1.20: 200 with the provider; a uuid is made when none is given.
    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": format!("n-{}", uuid())}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["generation"], 0);
    let made = r.body["uuid"].as_str().expect("uuid");
    assert!(r.header("location").expect("location").ends_with(made));
    assert_eq!(r.header("cache-control"), Some("no-cache"));
}

/// A provider written to the database by someone else (another
/// connection, as upstream's workers or `placement-manage` would) is in
/// the next list, read as written, even with text that JSON escapes.
#[tokio::test]
async fn a_provider_written_by_another_connection_is_listed() {
    let s = Server::start().await;
    let id = uuid();
    let name = format!(r#"other "writer" \ {id}"#);
    let mut conn = s.other_connection().await;
    sqlx::query(&s.sql(
        "INSERT INTO resource_providers (uuid, name, generation, created_at) \
         VALUES (?, ?, 3, '2024-01-02 03:04:05')",
    ))
    .bind(&id)
    .bind(&name)
    .execute(&mut conn)
    .await
    .expect("insert");
    sqlx::query(&s.sql("UPDATE resource_providers SET root_provider_id = id WHERE uuid = ?"))
        .bind(&id)
        .execute(&mut conn)
        .await
        .expect("root");
    let listed = s.get("/resource_providers", "1.39").await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    let found: Vec<&Value> = listed.body["resource_providers"]
        .as_array()
        .expect("list")
        .iter()
        .filter(|p| p["uuid"] == id.as_str())
        .collect();
    assert_eq!(found.len(), 1, "{}", listed.text);
    assert_eq!(found[0]["name"], name.as_str());
    assert_eq!(found[0]["generation"], 3);
    assert_eq!(found[0]["root_provider_uuid"], id.as_str());
    assert_eq!(found[0]["parent_provider_uuid"], Value::Null);
    assert_eq!(
        found[0]["links"][0],
        json!({"rel": "self", "href": format!("/resource_providers/{id}")})
    );
    let by_name = s
        .get(
            &format!("/resource_providers?name={}", urlencode(&name)),
            "1.39",
        )
        .await;
    assert_eq!(by_name.body["resource_providers"][0]["uuid"], id.as_str());
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[tokio::test]
async fn duplicates_and_bad_bodies() {
    let s = Server::start().await;
    let id = uuid();
    let name = format!("dup-{id}");
    let dashed = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": name, "uuid": id}),
        )
        .await;
    assert_eq!(dashed.status, 200);

    let r = s
        .post(
            "/resource_providers",
            "1.23",
            &json!({"name": name, "uuid": uuid()}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.duplicate_name");
    assert_eq!(
        r.message(),
        format!("Conflicting resource provider name: {name} already exists.")
    );
    // The same uuid without dashes, upper case: normalized, so a conflict.
    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": format!("other-{id}"), "uuid": id.replace('-', "").to_uppercase()}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        format!("Conflicting resource provider uuid: {id} already exists.")
    );

    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": uuid(), "uuid": "not a uuid"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message().starts_with("JSON does not validate"),
        "{}",
        r.message()
    );
    let r = s
        .post("/resource_providers", "1.20", &json!({"name": ""}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("name is required"), "{}", r.message());
    // parent_provider_uuid is not known before 1.14.
    let r = s
        .post(
            "/resource_providers",
            "1.13",
            &json!({"name": "child", "parent_provider_uuid": id}),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = s
        .put(
            &format!("/resource_providers/{id}"),
            "1.20",
            &json!({"name": "x", "uuid": uuid()}),
        )
        .await;
    assert_eq!(r.status, 400);
    let long = "x".repeat(201);
    let r = s
        .post("/resource_providers", "1.20", &json!({"name": long}))
        .await;
    assert_eq!(r.status, 400);
    let r = s.get("/resource_providers/random_sauce", "1.20").await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.message(),
        "No resource provider with uuid random_sauce found"
    );
}

#[tokio::test]
async fn trees_reparenting_and_loops() {
    let s = Server::start().await;
    let root = s.provider_named(&format!("root-{}", uuid()), None).await;
    let root_id = root["uuid"].as_str().expect("uuid").to_owned();
    let child = s
        .provider_named(&format!("child-{}", uuid()), Some(&root_id))
        .await;
    let child_id = child["uuid"].as_str().expect("uuid").to_owned();
    let grandchild = s
        .provider_named(&format!("grandchild-{}", uuid()), Some(&child_id))
        .await;
    let grandchild_id = grandchild["uuid"].as_str().expect("uuid").to_owned();
    assert_eq!(grandchild["root_provider_uuid"], json!(root_id));
    assert_eq!(grandchild["parent_provider_uuid"], json!(child_id));

    let r = s
        .get(
            &format!("/resource_providers?in_tree={grandchild_id}"),
            "1.14",
        )
        .await;
    assert_eq!(
        r.body["resource_providers"].as_array().expect("list").len(),
        3
    );
    let r = s
        .get(&format!("/resource_providers?in_tree={}", uuid()), "1.14")
        .await;
    assert_eq!(r.body["resource_providers"], json!([]));

    // Self-parenting at create.
    let own = uuid();
    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": "selfish", "uuid": own, "parent_provider_uuid": own}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("parent provider UUID cannot be same as UUID")
    );
    let r = s
        .post(
            "/resource_providers",
            "1.20",
            &json!({"name": "orphan", "parent_provider_uuid": uuid()}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("parent provider UUID does not exist"));

    // Loops are refused, even at 1.37.
    let child_path = format!("/resource_providers/{child_id}");
    let root_path = format!("/resource_providers/{root_id}");
    let r = s
        .put(
            &root_path,
            "1.37",
            &json!({"name": root["name"], "parent_provider_uuid": grandchild_id}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("creating loop in the provider tree is not allowed.")
    );
    let r = s
        .put(
            &root_path,
            "1.14",
            &json!({"name": root["name"], "parent_provider_uuid": root_id}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.message().contains("creating loop"));

    // Un-parenting needs 1.37; the subtree follows to its new root.
    let r = s
        .put(
            &child_path,
            "1.36",
            &json!({"name": child["name"], "parent_provider_uuid": null}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("un-parenting a provider is not currently allowed")
    );
    let r = s
        .put(
            &child_path,
            "1.37",
            &json!({"name": child["name"], "parent_provider_uuid": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["root_provider_uuid"], json!(child_id));
    let g = s
        .get(&format!("/resource_providers/{grandchild_id}"), "1.37")
        .await;
    assert_eq!(g.body["root_provider_uuid"], json!(child_id));

    // Parenting a root is allowed before 1.37; re-parenting is not.
    let other = s.provider_named(&format!("other-{}", uuid()), None).await;
    let other_id = other["uuid"].as_str().expect("uuid").to_owned();
    let r = s
        .put(
            &child_path,
            "1.14",
            &json!({"name": child["name"], "parent_provider_uuid": root_id}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = s
        .put(
            &child_path,
            "1.36",
            &json!({"name": child["name"], "parent_provider_uuid": other_id}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("re-parenting a provider is not currently allowed")
    );
    let r = s
        .put(
            &child_path,
            "1.37",
            &json!({"name": child["name"], "parent_provider_uuid": other_id}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["root_provider_uuid"], json!(other_id));
    let g = s
        .get(&format!("/resource_providers/{grandchild_id}"), "1.37")
        .await;
    assert_eq!(g.body["root_provider_uuid"], json!(other_id));
    // A PUT is dated with updated_at as it was before (as upstream): a
    // child never changed since its creation has none, a root has one.
    let fresh = s
        .provider_named(&format!("fresh-{}", uuid()), Some(&other_id))
        .await;
    let r = s
        .put(
            &format!(
                "/resource_providers/{}",
                fresh["uuid"].as_str().expect("uuid")
            ),
            "1.15",
            &json!({"name": format!("fresh-{}", uuid())}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(r.header("last-modified").is_none());
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    let r = s
        .put(
            &format!("/resource_providers/{other_id}"),
            "1.15",
            &json!({"name": other["name"]}),
        )
        .await;
    assert!(r.header("last-modified").is_some());
    // A rename keeps the parent; the generation does not move.
    let renamed = format!("renamed-{}", uuid());
    let r = s.put(&child_path, "1.37", &json!({"name": renamed})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["parent_provider_uuid"], json!(other_id));
    assert_eq!(r.body["generation"], 0);
    let r = s
        .put(&child_path, "1.37", &json!({"name": other["name"]}))
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.duplicate_name");

    // Parents cannot be deleted; leaves can.
    let r = s
        .delete(&format!("/resource_providers/{other_id}"), "1.37")
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.resource_provider.cannot_delete_parent");
    assert_eq!(
        r.message(),
        format!(
            "Unable to delete parent resource provider {other_id}: It has child resource providers."
        )
    );
    let r = s
        .delete(&format!("/resource_providers/{grandchild_id}"), "1.37")
        .await;
    assert_eq!(r.status, 204);
    let r = s
        .delete(&format!("/resource_providers/{grandchild_id}"), "1.37")
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.message(),
        format!("No resource provider with uuid {grandchild_id} found for delete")
    );
}

#[tokio::test]
async fn delete_refused_while_allocated() {
    let s = Server::start().await;
    let rp = s.provider_named(&format!("alloc-{}", uuid()), None).await;
    let id = rp["uuid"].as_str().expect("uuid").to_owned();
    s.set_inventories(&id, &[("VCPU", 8)]).await;
    s.allocate(&id, "VCPU", 2).await;
    let r = s.delete(&format!("/resource_providers/{id}"), "1.23").await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.resource_provider.inuse");
    assert_eq!(
        r.message(),
        format!("Unable to delete resource provider {id}: Resource provider has allocations.")
    );
    s.deallocate(&id).await;
    // Inventory, traits and aggregates go with it.
    let g = s.get(&format!("/resource_providers/{id}"), "1.20").await;
    let r = s
        .put(
            &format!("/resource_providers/{id}/traits"),
            "1.20",
            &json!({"traits": ["HW_CPU_X86_SSE"], "resource_provider_generation": g.body["generation"]}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = s.delete(&format!("/resource_providers/{id}"), "1.23").await;
    assert_eq!(r.status, 204);
    let r = s
        .get(&format!("/resource_providers/{id}/inventories"), "1.23")
        .await;
    assert_eq!(r.status, 404);
}

/// The names of a provider list, sorted.
fn names(r: &crate::support::Resp) -> Vec<String> {
    let mut n: Vec<String> = r.body["resource_providers"]
        .as_array()
        .expect("list")
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_owned())
        .collect();
    n.sort();
    n
}

#[tokio::test]
async fn list_filters_by_version() {
    let s = Server::start().await;
    let tag = uuid();
    let a = s.provider_named(&format!("a-{tag}"), None).await;
    let b = s.provider_named(&format!("b-{tag}"), None).await;
    let a_id = a["uuid"].as_str().expect("uuid").to_owned();
    let b_id = b["uuid"].as_str().expect("uuid").to_owned();
    let r = s
        .get(&format!("/resource_providers?name=a-{tag}"), "1.0")
        .await;
    assert_eq!(names(&r), vec![format!("a-{tag}")]);
    assert!(r.header("last-modified").is_none());
    let r = s.get("/resource_providers?uuid=spameggs", "1.0").await;
    assert_eq!(r.status, 400);
    assert!(r.message().starts_with("Invalid query string parameters"));
    // A dashless uuid is not the query's uuid format.
    let r = s
        .get(
            &format!("/resource_providers?uuid={}", a_id.replace('-', "")),
            "1.0",
        )
        .await;
    assert_eq!(r.status, 400);
    let r = s.get("/resource_providers?spam=eggs", "1.0").await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .contains("Additional properties are not allowed")
    );

    // Aggregates: member_of from 1.3, several from 1.24, ! from 1.32.
    let agg1 = uuid();
    let agg2 = uuid();
    let r = s
        .put(
            &format!("/resource_providers/{a_id}/aggregates"),
            "1.19",
            &json!({"aggregates": [agg1, agg2], "resource_provider_generation": 0}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = s
        .put(
            &format!("/resource_providers/{b_id}/aggregates"),
            "1.19",
            &json!({"aggregates": [agg2], "resource_provider_generation": 0}),
        )
        .await;
    assert_eq!(r.status, 200);
    let q = format!("/resource_providers?member_of={agg1}");
    assert_eq!(s.get(&q, "1.2").await.status, 400);
    assert_eq!(names(&s.get(&q, "1.3").await), vec![format!("a-{tag}")]);
    let q = format!("/resource_providers?member_of=in:{agg1},{agg2}");
    assert_eq!(names(&s.get(&q, "1.3").await).len(), 2);
    let q = format!("/resource_providers?member_of={agg1}&member_of={agg2}");
    let r = s.get(&q, "1.23").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "Multiple member_of parameters are not supported"
    );
    assert_eq!(names(&s.get(&q, "1.24").await), vec![format!("a-{tag}")]);
    let q = format!("/resource_providers?member_of=!{agg1}&name=b-{tag}");
    assert_eq!(s.get(&q, "1.31").await.status, 400);
    assert_eq!(names(&s.get(&q, "1.32").await), vec![format!("b-{tag}")]);
    let q = format!("/resource_providers?member_of=!in:{agg1},{agg2}&name=b-{tag}");
    assert!(names(&s.get(&q, "1.32").await).is_empty());

    // Traits: required from 1.18, ! from 1.22, in: from 1.39.
    let r = s
        .put(
            &format!("/resource_providers/{a_id}/traits"),
            "1.18",
            &json!({"traits": ["HW_CPU_X86_SSE", "STORAGE_DISK_SSD"], "resource_provider_generation": 1}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let q = format!("/resource_providers?required=STORAGE_DISK_SSD&member_of=in:{agg1},{agg2}");
    assert_eq!(s.get(&q, "1.17").await.status, 400);
    let r = s.get(&q, "1.18").await;
    assert_eq!(names(&r), vec![format!("a-{tag}")]);
    let q = format!("/resource_providers?required=!STORAGE_DISK_SSD&member_of={agg2}");
    assert_eq!(s.get(&q, "1.21").await.status, 400);
    assert_eq!(names(&s.get(&q, "1.24").await), vec![format!("b-{tag}")]);
    let q = "/resource_providers?required=BOGUS_TRAIT";
    let r = s.get(q, "1.22").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "Invalid trait(s) in \"required\" parameter: No such trait(s): BOGUS_TRAIT."
    );
    let q = format!(
        "/resource_providers?required=in:STORAGE_DISK_SSD,HW_NIC_ACCEL_TLS&member_of={agg2}"
    );
    assert_eq!(s.get(&q, "1.38").await.status, 400);
    assert_eq!(names(&s.get(&q, "1.39").await), vec![format!("a-{tag}")]);

    // Resources from 1.4: capacity after allocations, and unit limits.
    s.set_inventories(&a_id, &[("VCPU", 4)]).await;
    s.set_inventories(&b_id, &[("VCPU", 8)]).await;
    let q = format!("/resource_providers?resources=VCPU:5&member_of=in:{agg1},{agg2}");
    assert_eq!(s.get(&q, "1.3").await.status, 400);
    assert_eq!(names(&s.get(&q, "1.4").await), vec![format!("b-{tag}")]);
    s.allocate(&b_id, "VCPU", 4).await;
    assert!(names(&s.get(&q, "1.4").await).is_empty());
    let q = format!("/resource_providers?resources=VCPU:4&member_of=in:{agg1},{agg2}");
    assert_eq!(names(&s.get(&q, "1.4").await).len(), 2);
    let r = s
        .get("/resource_providers?resources=NO_CLASS:1", "1.4")
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "Invalid resource class in resources parameter: No such resource class NO_CLASS."
    );
    // More than any inventory can hold is no provider, not an overflow.
    let q = format!("/resource_providers?resources=VCPU:9223372036854775807&member_of={agg2}");
    let r = s.get(&q, "1.4").await;
    assert_eq!(r.status, 200);
    assert!(names(&r).is_empty());
    let r = s.get("/resource_providers?resources=VCPU:0", "1.4").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "Requested resource VCPU requires amount >= 1. Got: 0."
    );
    let r = s
        .get(&format!("/resource_providers?name=a-{tag}"), "1.15")
        .await;
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    assert!(r.header("last-modified").is_some());
}

/// Trait and aggregate rows whose provider is gone (a database upstream
/// filled on SQLite, where it leaves foreign keys unenforced, may hold
/// them) change no answer: `required`, `member_of` and their forbidden
/// forms list the providers they would without those rows, and a trait
/// only such a row carries matches nothing.
#[tokio::test]
async fn rows_of_a_removed_provider_match_nothing() {
    use sqlx::Connection as _;
    let s = Server::start().await;
    if s.store.dialect() != placement::db::Dialect::Sqlite {
        // PostgreSQL and MySQL enforce the foreign keys: no such rows.
        return;
    }
    let tag = uuid();
    let trait_ = format!("CUSTOM_HELD_{}", tag.replace('-', "_").to_uppercase());
    let stray = format!("CUSTOM_STRAY_{}", tag.replace('-', "_").to_uppercase());
    let agg = uuid();
    for name in [&trait_, &stray] {
        let r = s
            .call(
                reqwest::Method::PUT,
                &format!("/traits/{name}"),
                Some("1.6"),
                None,
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let mut ids = Vec::new();
    for name in ["with", "without"] {
        let p = s.provider_named(&format!("{name}-{tag}"), None).await;
        let id = p["uuid"].as_str().expect("uuid").to_owned();
        s.set_inventories(&id, &[("VCPU", 4)]).await;
        ids.push(id);
    }
    let with = ids[0].clone();
    let r = s
        .put(
            &format!("/resource_providers/{with}/traits"),
            "1.6",
            &json!({"traits": [&trait_], "resource_provider_generation": 1}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = s
        .put(
            &format!("/resource_providers/{with}/aggregates"),
            "1.19",
            &json!({"aggregates": [&agg], "resource_provider_generation": 2}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);

    // The rows of a provider id no provider has.
    let mut conn = s.other_connection().await;
    sqlx::query("PRAGMA foreign_keys = OFF")
        .execute(&mut conn)
        .await
        .expect("foreign keys off");
    let gone = 2_000_000_000_i64;
    sqlx::query(
        "INSERT INTO resource_provider_traits (resource_provider_id, trait_id) \
         SELECT ?, id FROM traits WHERE name IN (?, ?)",
    )
    .bind(gone)
    .bind(&trait_)
    .bind(&stray)
    .execute(&mut conn)
    .await
    .expect("stray trait rows");
    sqlx::query(
        "INSERT INTO resource_provider_aggregates (resource_provider_id, aggregate_id) \
         SELECT ?, id FROM placement_aggregates WHERE uuid = ?",
    )
    .bind(gone)
    .bind(&agg)
    .execute(&mut conn)
    .await
    .expect("stray aggregate row");
    conn.close().await.expect("close");

    let ours = |r: &crate::support::Resp| -> Vec<String> {
        names(r)
            .into_iter()
            .filter(|name| name.ends_with(&tag))
            .collect()
    };
    let with_name = format!("with-{tag}");
    let without_name = format!("without-{tag}");
    let q = format!("/resource_providers?required={trait_}");
    assert_eq!(ours(&s.get(&q, "1.18").await), vec![with_name.clone()]);
    let q = format!("/resource_providers?required=!{trait_}");
    assert_eq!(ours(&s.get(&q, "1.22").await), vec![without_name.clone()]);
    let q = format!("/resource_providers?member_of={agg}");
    assert_eq!(ours(&s.get(&q, "1.3").await), vec![with_name.clone()]);
    let q = format!("/resource_providers?member_of=!{agg}");
    assert_eq!(ours(&s.get(&q, "1.32").await), vec![without_name]);
    let q = format!("/resource_providers?required={stray}");
    assert!(names(&s.get(&q, "1.18").await).is_empty());

    let candidates = |query: String| {
        let s = &s;
        async move {
            let r = s
                .get(&format!("/allocation_candidates?{query}"), "1.39")
                .await;
            assert_eq!(r.status, 200, "{:?}", r.body);
            let mut providers: Vec<String> = r.body["provider_summaries"]
                .as_object()
                .expect("summaries")
                .keys()
                .cloned()
                .collect();
            providers.sort();
            providers
        }
    };
    let q = format!("resources=VCPU:1&required={trait_}&member_of={agg}");
    assert_eq!(candidates(q).await, vec![with.clone()]);
    let q = format!("resources=VCPU:1&required={stray}");
    assert!(candidates(q).await.is_empty());
}
