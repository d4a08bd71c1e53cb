//! The binary against a real Keystone (scripts/keystone.sh) whose catalog
//! lists placement-api, compute and volumev3 (scripts/keystone-catalog.sh).
//! Each test prints "skipped: ..." and passes when `KEYSTONE_URL` or
//! `MV_TEST_PLACEMENT_URL` is not set; CI sets both (scripts/test.sh).

mod common;

use common::run_in as run;
use microversion_test_support::RealKeystone;
use serde_json::Value;

#[test]
fn version_list_of_the_whole_cloud() {
    let Some(env) = RealKeystone::from_env() else {
        return;
    };
    let dir = env.clouds();
    let r = run(
        &dir,
        &["version-list", "--os-cloud", "member", "-f", "json"],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let service = |t: &str| {
        doc["services"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["service_type"] == t)
            .cloned()
            .unwrap_or_else(|| panic!("{t}: {doc}"))
    };
    assert_eq!(service("placement")["negotiated"], "1.39");
    assert_eq!(service("compute")["negotiated"], "2.90");
    assert_eq!(service("volumev3")["max_version"], "3.71");
    // Keystone itself: no microversions, no header.
    assert_eq!(service("identity")["negotiated"], Value::Null);
    assert_eq!(service("identity")["error"], Value::Null);

    let r = run(&dir, &["version-list"], &[("OS_CLOUD", "member")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.starts_with("Cloud: member\nSERVICE"),
        "{}",
        r.stdout
    );
}

#[test]
fn request_by_service_type_from_the_catalog() {
    let Some(env) = RealKeystone::from_env() else {
        return;
    };
    let dir = env.clouds();
    let r = run(
        &dir,
        &[
            "request",
            "placement",
            "GET",
            "/resource_providers",
            "-i",
            "-H",
            "X-Roles: admin",
        ],
        &[("OS_CLOUD", "member")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("HTTP/1.1 200 OK\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("openstack-api-version: placement 1.39"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("\"resource_providers\""), "{}", r.stdout);
    // The OS_* form, and an alias of the catalog's volumev3.
    let r = run(
        &dir,
        &["request", "block-storage", "/", "--api-version", "3.latest"],
        &[
            ("OS_AUTH_URL", env.url.as_str()),
            ("OS_USERNAME", env.member.as_str()),
            ("OS_PASSWORD", env.member_password.as_str()),
            ("OS_PROJECT_NAME", "demo"),
            ("OS_USER_DOMAIN_NAME", "Default"),
            ("OS_PROJECT_DOMAIN_NAME", "Default"),
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("API version: volume 3.71"),
        "{}",
        r.stderr
    );
    // check on the catalog's endpoint.
    let r = run(
        &dir,
        &[
            "check",
            "--service-type",
            "placement",
            "--os-cloud",
            "member",
        ],
        &[],
    );
    assert_ne!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains(&env.placement), "{}", r.stdout);
}

#[test]
fn wrong_password_unknown_cloud_and_missing_service() {
    let Some(env) = RealKeystone::from_env() else {
        return;
    };
    let dir = env.clouds();
    let r = run(&dir, &["version-list", "--os-cloud", "wrong"], &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .starts_with("microversion: error: authentication failed: keystone at ")
            && r.stderr
                .contains(&format!("refused the password of user \"{}\"", env.member))
            && r.stderr.contains("401 Unauthorized"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("wrong-password"));
    let r = run(&dir, &["version-list", "--os-cloud", "nope"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("cloud \"nope\" is not in "),
        "{}",
        r.stderr
    );
    let r = run(
        &dir,
        &["request", "baremetal", "/nodes", "--os-cloud", "member"],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("no public endpoint for service type \"baremetal\"")
            && r.stderr.contains("placement (public in RegionOne"),
        "{}",
        r.stderr
    );
}
