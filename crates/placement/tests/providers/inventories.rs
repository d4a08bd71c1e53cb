//! `/resource_providers/{uuid}/inventories`.

use serde_json::json;

use crate::support::{Server, uuid};

async fn provider(s: &Server) -> String {
    s.provider_named(&format!("inv-{}", uuid()), None).await["uuid"]
        .as_str()
        .expect("uuid")
        .to_owned()
}

#[tokio::test]
async fn one_class_lifecycle() {
    let s = Server::start().await;
    let id = provider(&s).await;
    let base = format!("/resource_providers/{id}/inventories");

    let r = s.get(&base, "1.15").await;
    assert_eq!(
        r.body,
        json!({"resource_provider_generation": 0, "inventories": {}})
    );
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    // No inventories: no time to tell, as upstream.
    assert!(r.header("last-modified").is_none());

    let r = s
        .post(
            &base,
            "1.0",
            &json!({"resource_class": "DISK_GB", "total": 2048, "reserved": 512, "min_unit": 10,
                    "max_unit": 1024, "step_size": 10, "allocation_ratio": 1.1}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert!(
        r.header("location")
            .expect("location")
            .ends_with(&format!("{base}/DISK_GB"))
    );
    assert_eq!(
        r.body,
        json!({"resource_provider_generation": 1, "total": 2048, "reserved": 512, "min_unit": 10,
               "max_unit": 1024, "step_size": 10, "allocation_ratio": 1.1})
    );
    let r = s
        .post(
            &base,
            "1.23",
            &json!({"resource_class": "DISK_GB", "total": 1}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.concurrent_update");
    assert!(r.message().starts_with("Update conflict"));
    let r = s
        .post(
            &base,
            "1.0",
            &json!({"resource_class": "NO_CLASS_14", "total": 1}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        format!(
            "Unable to create inventory for resource provider {id}: No such resource class NO_CLASS_14."
        )
    );
    let r = s
        .post(&base, "1.0", &json!({"resource_class": "DISK_GB"}))
        .await;
    assert_eq!(r.status, 400);
    let r = s
        .post(
            &base,
            "1.0",
            &json!({"resource_class": "VCPU", "total": 2147483648_i64}),
        )
        .await;
    assert_eq!(r.status, 400);

    let one = format!("{base}/DISK_GB");
    let r = s.get(&one, "1.15").await;
    assert_eq!(r.body["allocation_ratio"], 1.1);
    assert!(r.header("last-modified").is_some());
    let r = s.get(&one, "1.14").await;
    assert!(r.header("cache-control").is_none());
    let r = s.get(&format!("{base}/HOUSE"), "1.0").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.message(), format!("No inventory of class HOUSE for {id}"));

    let r = s
        .put(
            &one,
            "1.23",
            &json!({"resource_provider_generation": 5, "total": 2048}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.concurrent_update");
    assert_eq!(r.message(), "resource provider generation conflict");
    let r = s
        .put(
            &one,
            "1.0",
            &json!({"resource_provider_generation": 1, "total": 2048, "reserved": 1024}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["resource_provider_generation"], 2);
    assert_eq!(r.body["max_unit"], 2147483647);
    let r = s
        .put(
            &format!("{base}/MEMORY_MB"),
            "1.0",
            &json!({"resource_provider_generation": 2, "total": 2048}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        format!(
            "No inventory record with resource class for resource provider {id}: No inventory of class MEMORY_MB found."
        )
    );
    let r = s
        .put(
            &format!("{base}/NO_SUCH"),
            "1.0",
            &json!({"resource_provider_generation": 2, "total": 2048}),
        )
        .await;
    assert_eq!(r.status, 404);

    let r = s.delete(&one, "1.0").await;
    assert_eq!(r.status, 204);
    assert!(r.header("content-type").is_none());
    let r = s.delete(&one, "1.0").await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.message(),
        "No inventory of class DISK_GB found for delete: No inventory of class DISK_GB found for delete"
    );
    let r = s.get(&base, "1.0").await;
    assert_eq!(r.body["resource_provider_generation"], 3);
    let r = s
        .get(
            &format!("/resource_providers/{}/inventories", uuid()),
            "1.0",
        )
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn reserved_equal_to_total_from_1_26() {
    let s = Server::start().await;
    let id = provider(&s).await;
    let base = format!("/resource_providers/{id}/inventories");
    let body = |generation: i64, reserved: i64| {
        json!({"resource_provider_generation": generation,
               "inventories": {"IPV4_ADDRESS": {"total": 253, "reserved": reserved}}})
    };
    let r = s.put(&base, "1.25", &body(0, 253)).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        format!(
            "Unable to update inventory for resource provider {id}: Invalid inventory for 'IPV4_ADDRESS' on resource provider '{id}'. The reserved value is greater than or equal to total."
        )
    );
    let r = s.put(&base, "1.26", &body(0, 253)).await;
    assert_eq!(r.status, 200);
    let r = s.put(&base, "1.26", &body(1, 254)).await;
    assert_eq!(r.status, 400);
    assert!(
        r.message()
            .ends_with("The reserved value is greater than total.")
    );
    // A ratio that leaves no capacity counts too.
    let r = s
        .post(
            &base,
            "1.25",
            &json!({"resource_class": "VCPU", "total": 4, "allocation_ratio": 0.1}),
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn replace_all_and_delete_all() {
    let s = Server::start().await;
    let id = provider(&s).await;
    let base = format!("/resource_providers/{id}/inventories");
    let r = s
        .put(
            &base,
            "1.15",
            &json!({"resource_provider_generation": 0,
                    "inventories": {"IPV4_ADDRESS": {"total": 253}, "DISK_GB": {"total": 1024}}}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["resource_provider_generation"], 1);
    assert_eq!(r.body["inventories"]["IPV4_ADDRESS"]["reserved"], 0);
    assert_eq!(r.body["inventories"]["DISK_GB"]["allocation_ratio"], 1.0);
    assert!(r.header("last-modified").is_some());
    let r = s
        .put(
            &base,
            "1.0",
            &json!({"resource_provider_generation": 1, "inventories": {"HOUSE": {"total": 1}}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        format!(
            "Unknown resource class in inventory for resource provider {id}: No such resource class HOUSE."
        )
    );
    let r = s
        .put(
            &base,
            "1.0",
            &json!({"resource_provider_generation": 1, "inventories": {"DISK_GB": {"total": 2048}}}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = s.get(&base, "1.0").await;
    assert_eq!(r.body["resource_provider_generation"], 2);
    assert_eq!(r.body["inventories"].as_object().expect("map").len(), 1);
    assert_eq!(r.body["inventories"]["DISK_GB"]["total"], 2048);
    // Integral floats are integers, as JSON Schema counts them.
    let r = s
        .put(
            &base,
            "1.0",
            &json!({"resource_provider_generation": 2.0, "inventories": {"DISK_GB": {"total": 4096.0}}}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = s
        .put(
            &base,
            "1.0",
            &json!({"resource_provider_generation": 3, "inventories": {"DISK_GB": {"total": 4096.5}}}),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = s.get(&base, "1.0").await;
    assert_eq!(r.body["inventories"]["DISK_GB"]["total"], 4096);

    // DELETE of all is 405 before 1.5.
    let r = s.delete(&base, "1.4").await;
    assert_eq!(r.status, 405);
    let r = s.delete(&base, "1.5").await;
    assert_eq!(r.status, 204);
    let r = s.delete(&base, "1.5").await;
    assert_eq!(r.status, 204);
    let r = s.get(&base, "1.0").await;
    assert_eq!(
        r.body,
        json!({"resource_provider_generation": 5, "inventories": {}})
    );
    let r = s
        .delete(
            &format!("/resource_providers/{}/inventories", uuid()),
            "1.5",
        )
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn inventory_in_use_cannot_go() {
    let s = Server::start().await;
    let id = provider(&s).await;
    let base = format!("/resource_providers/{id}/inventories");
    s.set_inventories(&id, &[("VCPU", 8), ("MEMORY_MB", 1024)])
        .await;
    s.allocate(&id, "VCPU", 6).await;
    let generation = s.get(&base, "1.0").await.body["resource_provider_generation"]
        .as_i64()
        .expect("generation");

    let r = s.delete(&format!("{base}/VCPU"), "1.23").await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.concurrent_update");
    assert_eq!(
        r.message(),
        format!(
            "Unable to delete inventory of class VCPU: Inventory for 'VCPU' on resource provider '{id}' in use."
        )
    );
    let r = s
        .put(
            &base,
            "1.23",
            &json!({"resource_provider_generation": generation,
                    "inventories": {"MEMORY_MB": {"total": 1024}}}),
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.inventory.inuse");
    assert_eq!(
        r.message(),
        format!("update conflict: Inventory for 'VCPU' on resource provider '{id}' in use.")
    );
    let r = s.delete(&base, "1.23").await;
    assert_eq!(r.status, 409);
    assert_eq!(r.code(), "placement.inventory.inuse");
    // Nothing changed.
    let r = s.get(&base, "1.0").await;
    assert_eq!(r.body["resource_provider_generation"], generation);
    assert_eq!(r.body["inventories"].as_object().expect("map").len(), 2);
    // Shrinking below what is used is allowed, as upstream (a warning).
    let r = s
        .put(
            &format!("{base}/VCPU"),
            "1.0",
            &json!({"resource_provider_generation": generation, "total": 4}),
        )
        .await;
    assert_eq!(r.status, 200);
    s.deallocate(&id).await;
    let r = s.delete(&format!("{base}/VCPU"), "1.23").await;
    assert_eq!(r.status, 204);
}
