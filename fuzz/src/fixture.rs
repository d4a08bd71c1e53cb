//! The rows [`Harness`](crate::Harness) puts in every database before the
//! fuzzer's requests, so that inputs can name existing providers,
//! consumers and aggregates (`fuzz/seed_from_gabbi.py` maps upstream's
//! `$ENVIRON` names to them): their identifiers, and the requests that
//! make them.

use http::Method;
use serde_json::{Value, json};

/// A compute node (`cn1`): VCPU 8, MEMORY_MB 4096, DISK_GB 100; traits
/// `HW_CPU_X86_AVX2`, `CUSTOM_FUZZ`; in aggregate [`AGG_A`].
pub const CN1: &str = "c0000000-0000-4000-8000-000000000001";
/// A second compute node (`cn2`): VCPU 8, MEMORY_MB 4096; in [`AGG_B`].
pub const CN2: &str = "c0000000-0000-4000-8000-000000000002";
/// A sharing provider (`ss`): DISK_GB 1000, `MISC_SHARES_VIA_AGGREGATE`,
/// in [`AGG_A`].
pub const SS: &str = "c0000000-0000-4000-8000-000000000003";
/// A child of [`CN1`] (`cn1-numa0`): VCPU 4, `CUSTOM_FUZZ` 10.
pub const NUMA0: &str = "c0000000-0000-4000-8000-000000000004";
/// A provider with nothing (`empty`).
pub const EMPTY: &str = "c0000000-0000-4000-8000-000000000005";
/// A consumer of [`CN1`] (VCPU 2, MEMORY_MB 512), of [`PROJECT`] and
/// [`USER`].
pub const CONSUMER1: &str = "c0000000-0000-4000-8000-000000000101";
/// A consumer of [`CN2`] (VCPU 1) and [`SS`] (DISK_GB 10), a migration.
pub const CONSUMER2: &str = "c0000000-0000-4000-8000-000000000102";
/// The project of the consumers.
pub const PROJECT: &str = "c0000000-0000-4000-8000-000000000201";
/// The user of the consumers.
pub const USER: &str = "c0000000-0000-4000-8000-000000000301";
/// An aggregate of [`CN1`] and [`SS`].
pub const AGG_A: &str = "c0000000-0000-4000-8000-000000000a01";
/// An aggregate of [`CN2`].
pub const AGG_B: &str = "c0000000-0000-4000-8000-000000000a02";
/// A custom resource class and a custom trait, both in use.
pub const CUSTOM: &str = "CUSTOM_FUZZ";
/// The origin CORS allows.
pub const ORIGIN: &str = "http://valid.example.com";

/// The requests that make the fixture, at 1.39 as the admin.
pub(crate) fn requests() -> Vec<(Method, String, Value)> {
    let rp = |uuid: &str, name: &str, parent: Option<&str>| {
        (
            Method::POST,
            "/resource_providers".to_owned(),
            json!({"uuid": uuid, "name": name, "parent_provider_uuid": parent}),
        )
    };
    let inventories = |uuid: &str, inventories: Value| {
        (
            Method::PUT,
            format!("/resource_providers/{uuid}/inventories"),
            json!({"resource_provider_generation": 0, "inventories": inventories}),
        )
    };
    let put = |path: String, body: Value| (Method::PUT, path, body);
    vec![
        put(format!("/resource_classes/{CUSTOM}"), Value::Null),
        put(format!("/traits/{CUSTOM}"), Value::Null),
        rp(CN1, "cn1", None),
        rp(CN2, "cn2", None),
        rp(SS, "ss", None),
        rp(NUMA0, "cn1-numa0", Some(CN1)),
        rp(EMPTY, "empty", None),
        inventories(
            CN1,
            json!({"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}, "DISK_GB": {"total": 100}}),
        ),
        inventories(
            CN2,
            json!({"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}}),
        ),
        inventories(SS, json!({"DISK_GB": {"total": 1000}})),
        inventories(NUMA0, json!({"VCPU": {"total": 4}, CUSTOM: {"total": 10}})),
        put(
            format!("/resource_providers/{CN1}/traits"),
            json!({"resource_provider_generation": 1, "traits": ["HW_CPU_X86_AVX2", CUSTOM]}),
        ),
        put(
            format!("/resource_providers/{SS}/traits"),
            json!({"resource_provider_generation": 1, "traits": ["MISC_SHARES_VIA_AGGREGATE"]}),
        ),
        put(
            format!("/resource_providers/{CN1}/aggregates"),
            json!({"resource_provider_generation": 2, "aggregates": [AGG_A]}),
        ),
        put(
            format!("/resource_providers/{SS}/aggregates"),
            json!({"resource_provider_generation": 2, "aggregates": [AGG_A]}),
        ),
        put(
            format!("/resource_providers/{CN2}/aggregates"),
            json!({"resource_provider_generation": 1, "aggregates": [AGG_B]}),
        ),
        put(
            format!("/allocations/{CONSUMER1}"),
            json!({
                "allocations": {CN1: {"resources": {"VCPU": 2, "MEMORY_MB": 512}}},
                "project_id": PROJECT, "user_id": USER,
                "consumer_generation": null, "consumer_type": "INSTANCE"
            }),
        ),
        put(
            format!("/allocations/{CONSUMER2}"),
            json!({
                "allocations": {
                    CN2: {"resources": {"VCPU": 1}},
                    SS: {"resources": {"DISK_GB": 10}}
                },
                "project_id": PROJECT, "user_id": USER,
                "consumer_generation": null, "consumer_type": "MIGRATION"
            }),
        ),
    ]
}
