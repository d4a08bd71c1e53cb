//! The binary with a cloud: clouds.yaml and `OS_*` forms against a fake
//! Keystone whose catalog lists demo services that want its tokens.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use common::{CINDER, Demo, NOVA, PLACEMENT, Server, run_in as run};
use microversion_test_support::Scratch;
use microversion_test_support::keystone::{self, FakeKeystone, require_token};
use serde_json::Value;

struct Setup {
    keystone: FakeKeystone,
    placement: Server,
    dir: Scratch,
}

fn demo(keystone: &FakeKeystone, demo: &Demo) -> Server {
    common::start(require_token(
        demo.app(),
        keystone,
        Arc::new(AtomicUsize::new(0)),
    ))
}

fn setup(extra: &str) -> Setup {
    let keystone = FakeKeystone::start_on_own_thread();
    let placement = demo(&keystone, &PLACEMENT);
    let nova = demo(&keystone, &NOVA);
    let cinder = demo(&keystone, &CINDER);
    let compute = format!("{}v2.1", nova.url);
    let volume = format!("{}v3", cinder.url);
    keystone.set_catalog(&[
        ("placement", placement.url.as_str()),
        ("compute", compute.as_str()),
        ("volumev3", volume.as_str()),
    ]);
    let dir = Scratch::new("cli-cloud");
    let clouds = format!(
        "clouds:
  pw:
    auth:
      auth_url: {url}/v3
      username: demo
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
  wrong:
    auth:
      auth_url: {url}
      user_id: {uid}
      password: not-the-password
      project_id: p-demo
{extra}",
        url = keystone.url,
        uid = keystone::USER_ID,
    );
    std::fs::write(dir.join("clouds.yaml"), clouds).unwrap();
    let secure = format!(
        "clouds:\n  pw:\n    auth:\n      password: {}\n",
        keystone::PASSWORD
    );
    std::fs::write(dir.join("secure.yaml"), secure).unwrap();
    Setup {
        keystone,
        placement,
        dir,
    }
}

#[test]
fn version_list_probes_every_service_of_the_catalog() {
    let s = setup("");
    let r = run(&s.dir, &["version-list", "--os-cloud", "pw"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "Cloud: pw");
    assert!(lines[1].starts_with("SERVICE    ENDPOINT"), "{}", r.stdout);
    let row = |service: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{service} ")))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .unwrap_or_else(|| panic!("{service}: {}", r.stdout))
    };
    // SERVICE ENDPOINT ID (STATUS) MIN MAX REQUESTED NEGOTIATED COMMON
    assert_eq!(
        row("placement")[4..],
        ["1.0", "1.39", "latest", "1.39", "1.0", "-", "1.39"]
    );
    assert_eq!(
        row("compute")[4..],
        ["2.1", "2.104", "latest", "2.104", "2.1", "-", "2.104"]
    );
    assert_eq!(
        row("volumev3")[4..],
        ["3.0", "3.71", "latest", "3.71", "3.0", "-", "3.71"]
    );
    // One token for the whole listing.
    assert_eq!(s.keystone.issued(), 1);

    let r = run(
        &s.dir,
        &["version-list", "-f", "json"],
        &[("OS_CLOUD", "pw"), ("OS_COMPUTE_API_VERSION", "2.53")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["cloud"], "pw");
    let compute = doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service_type"] == "compute")
        .unwrap();
    assert_eq!(compute["requested"], "2.53");
    assert_eq!(compute["negotiated"], "2.53");
    assert_eq!(compute["max_version"], "2.104");
    assert_eq!(compute["common"]["min_version"], "2.53");
}

#[test]
fn request_resolves_the_endpoint_from_the_catalog() {
    let s = setup("");
    let r = run(
        &s.dir,
        &["request", "placement", "GET", "/widgets", "-i"],
        &[("OS_CLOUD", "pw")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("openstack-api-version: placement 1.39"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains(
            "API version: placement 1.39 (latest by default; the server supports 1.0 - 1.39)"
        ),
        "{}",
        r.stderr
    );
    let seen = s.placement.log.to(&["/widgets"]);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].header("x-auth-token"), Some("tok-1"));
}

#[test]
fn the_os_variables_alone_describe_a_cloud() {
    let s = setup("");
    let url = s.keystone.url.clone();
    let r = run(
        &s.dir,
        &["request", "block-storage", "/widgets"],
        &[
            ("OS_AUTH_URL", url.as_str()),
            ("OS_USERNAME", "demo"),
            ("OS_PASSWORD", keystone::PASSWORD),
            ("OS_PROJECT_NAME", "demo"),
            ("OS_USER_DOMAIN_NAME", "Default"),
            ("OS_PROJECT_DOMAIN_NAME", "Default"),
            ("OS_VOLUME_API_VERSION", "3.27"),
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    // OS_VOLUME_API_VERSION serves the whole family of block-storage.
    assert!(
        r.stderr
            .contains("API version: volume 3.27 (3.27 from the cloud configuration; the server supports 3.0 - 3.71)"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_cloud_version_of_clouds_yaml_is_used() {
    let s = setup("");
    let extra = "    placement_api_version: 1.20\n";
    let text = std::fs::read_to_string(s.dir.join("clouds.yaml"))
        .unwrap()
        .replace(
            "    region_name: RegionOne\n",
            &format!("    region_name: RegionOne\n{extra}"),
        );
    std::fs::write(s.dir.join("clouds.yaml"), text).unwrap();
    let r = run(
        &s.dir,
        &["request", "placement", "/widgets", "--os-cloud", "pw"],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("API version: placement 1.20 (1.20 from the cloud configuration;"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_wrong_password_exits_with_1() {
    let s = setup("");
    let r = run(
        &s.dir,
        &["request", "placement", "/widgets", "--os-cloud", "wrong"],
        &[],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.stderr.trim_end(),
        format!(
            "microversion: error: authentication failed: keystone at {}/v3/auth/tokens refused \
             the password of user id \"{}\": 401 Unauthorized: The request you have made \
             requires authentication.",
            s.keystone.url,
            keystone::USER_ID
        )
    );
    assert!(!r.stderr.contains("not-the-password"));
    assert!(s.placement.log.is_empty());
    // And a password given as an option wins over clouds.yaml.
    let r = run(
        &s.dir,
        &[
            "version-list",
            "--os-cloud",
            "wrong",
            "--os-password",
            keystone::PASSWORD,
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
}

#[test]
fn configuration_errors_exit_with_2_before_any_request() {
    let s = setup("");
    let r = run(&s.dir, &["version-list", "--os-cloud", "nope"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.starts_with(
            "microversion: error: invalid cloud configuration: cloud \"nope\" is not in "
        ) && r.stderr.contains("clouds.yaml (it has: pw, wrong)"),
        "{}",
        r.stderr
    );
    let r = run(
        &s.dir,
        &["request", "baremetal", "/nodes", "--os-cloud", "pw"],
        &[],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains(
            "no public endpoint for service type \"baremetal\" (or bare-metal) in region \
             \"RegionOne\" in the catalog; the catalog offers: placement (public in RegionOne"
        ),
        "{}",
        r.stderr
    );
    std::fs::write(s.dir.join("clouds.yaml"), "clouds: [not, a, mapping").unwrap();
    let r = run(&s.dir, &["version-list", "--os-cloud", "pw"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("clouds.yaml is not a valid clouds file: "),
        "{}",
        r.stderr
    );
    let r = run(&s.dir, &["version-list"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("version-list without URLs needs a cloud"),
        "{}",
        r.stderr
    );
    // Only the baremetal lookup authenticated (to read the catalog).
    assert_eq!(s.keystone.issued(), 1);
}
