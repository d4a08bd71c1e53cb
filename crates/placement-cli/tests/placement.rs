//! The `placement` command against this workspace's Placement service on
//! 127.0.0.1: every command, the version each sends, the checks made
//! before any request, bad input and the server's errors.

mod placement_support;

use microversion_test_support::{Scratch, dead_base};
use placement_support::{Run, Service, placement};
use serde_json::{Value, json};

const RP: &str = "4e8e5957-649f-477b-9e5b-f1f75b21c03c";
const CHILD: &str = "5f9f6a68-75a0-488c-8f6c-a2a86c32d14d";
const CONSUMER: &str = "9a3f0fb4-5b9e-4d32-9f1c-4a51e2a0c0de";
const PROJECT: &str = "6e1d2c3b-0f0e-4a3e-8b5d-2f5d7a3c9e10";
const USER: &str = "0b6a1f64-51c5-4a43-9d8a-0f2b9e3c7d21";
const AGG: &str = "c1b7bd7e-6a8f-4f0a-9d41-8f2b0ad7a6e3";

struct Env {
    service: Service,
    cache: Scratch,
}

impl Env {
    fn new() -> Env {
        Env {
            service: Service::start(),
            cache: Scratch::new("placement-cli-cache"),
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        placement(&self.service.url, self.cache.path(), args)
    }

    /// Runs a command that must succeed and print nothing.
    fn quiet(&self, args: &[&str]) {
        let run = self.run(args);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, ""),
            "{args:?}: {run:?}"
        );
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-f", "json"]);
        self.run(&all).json()
    }

    /// The API version `--verbose` says was sent.
    fn version_sent(&self, args: &[&str]) -> String {
        let mut all = vec!["-v"];
        all.extend(args);
        let run = self.run(&all);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        let line = run.stderr.lines().next().unwrap_or_default();
        line.strip_prefix("API version: placement ")
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("{run:?}"))
            .to_owned()
    }
}

#[test]
fn every_command_end_to_end() {
    let env = Env::new();
    // Providers.
    assert_eq!(
        env.json(&["resource", "provider", "create", "compute1", "--uuid", RP]),
        json!({"uuid": RP, "name": "compute1", "generation": 0})
    );
    let child = env.json(&[
        "resource",
        "provider",
        "create",
        "child",
        "--uuid",
        CHILD,
        "--parent-provider",
        RP,
    ]);
    assert_eq!(
        child,
        json!({"uuid": CHILD, "name": "child", "generation": 0,
               "root_provider_uuid": RP, "parent_provider_uuid": RP})
    );
    let list = env.json(&["resource", "provider", "list"]);
    assert_eq!(list.as_array().map(Vec::len), Some(2), "{list}");
    assert_eq!(
        list[0].as_object().map(serde_json::Map::len),
        Some(3),
        "{list}"
    );
    let tree = env.json(&[
        "resource",
        "provider",
        "list",
        "--in-tree",
        RP,
        "--name",
        "child",
    ]);
    assert_eq!(
        tree,
        json!([{"uuid": CHILD, "name": "child", "generation": 0,
                "root_provider_uuid": RP, "parent_provider_uuid": RP}])
    );
    let shown = env.run(&[
        "resource", "provider", "show", RP, "-c", "name", "-f", "value",
    ]);
    assert_eq!((shown.code, shown.stdout.as_str()), (0, "compute1\n"));
    assert_eq!(
        env.json(&["resource", "provider", "set", RP, "--name", "compute-1"]),
        json!({"uuid": RP, "name": "compute-1", "generation": 0})
    );

    // Inventories.
    let set = env.json(&[
        "resource",
        "provider",
        "inventory",
        "set",
        RP,
        "--resource",
        "VCPU=8",
        "--resource",
        "MEMORY_MB=4096",
        "--resource",
        "MEMORY_MB:reserved=512",
    ]);
    assert_eq!(set.as_array().map(Vec::len), Some(2), "{set}");
    let memory = set
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["resource_class"] == "MEMORY_MB")
        .unwrap_or_else(|| panic!("{set}"));
    assert_eq!(
        (&memory["total"], &memory["reserved"]),
        (&json!(4096), &json!(512))
    );
    let amended = env.json(&[
        "resource",
        "provider",
        "inventory",
        "set",
        RP,
        "--amend",
        "--resource",
        "DISK_GB=50",
    ]);
    assert_eq!(amended.as_array().map(Vec::len), Some(3), "{amended}");
    assert_eq!(
        env.json(&[
            "resource",
            "provider",
            "inventory",
            "class",
            "set",
            RP,
            "DISK_GB",
            "--total",
            "100",
            "--allocation-ratio",
            "1.5",
        ]),
        json!({"allocation_ratio": 1.5, "min_unit": 1, "max_unit": 2147483647, "reserved": 0,
               "step_size": 1, "total": 100})
    );
    let inventories = env.json(&["resource", "provider", "inventory", "list", RP]);
    assert_eq!(
        inventories.as_array().map(Vec::len),
        Some(3),
        "{inventories}"
    );
    assert_eq!(
        env.json(&["resource", "provider", "inventory", "show", RP, "VCPU"]),
        json!({"allocation_ratio": 1.0, "min_unit": 1, "max_unit": 2147483647, "reserved": 0,
               "step_size": 1, "total": 8, "used": 0})
    );

    // Resource classes (1.2, set 1.7).
    env.quiet(&["resource", "class", "create", "CUSTOM_GPU"]);
    assert_eq!(
        env.json(&["resource", "class", "show", "CUSTOM_GPU"]),
        json!({"name": "CUSTOM_GPU"})
    );
    assert_eq!(
        env.version_sent(&["resource", "class", "set", "CUSTOM_FPGA"]),
        "1.7"
    );
    let classes = env.json(&["resource", "class", "list"]);
    assert!(
        classes
            .as_array()
            .unwrap()
            .contains(&json!({"name": "CUSTOM_FPGA"}))
    );
    env.quiet(&["resource", "class", "delete", "CUSTOM_FPGA"]);

    // Traits (1.6).
    env.quiet(&["trait", "create", "CUSTOM_FAST"]);
    assert_eq!(
        env.json(&["trait", "list", "--name", "startswith:CUSTOM_"]),
        json!([{"name": "CUSTOM_FAST"}])
    );
    assert_eq!(
        env.json(&["trait", "show", "CUSTOM_FAST"]),
        json!({"name": "CUSTOM_FAST"})
    );
    assert_eq!(
        env.json(&[
            "resource",
            "provider",
            "trait",
            "set",
            RP,
            "--trait",
            "CUSTOM_FAST"
        ]),
        json!([{"name": "CUSTOM_FAST"}])
    );
    assert_eq!(
        env.json(&["resource", "provider", "trait", "list", RP]),
        json!([{"name": "CUSTOM_FAST"}])
    );
    assert_eq!(
        env.json(&[
            "resource",
            "provider",
            "list",
            "--required",
            "CUSTOM_FAST",
            "-c",
            "uuid"
        ]),
        json!([{"uuid": RP}])
    );

    // Aggregates: 1.1 sends a list; --generation needs 1.19.
    assert_eq!(
        env.json(&[
            "resource",
            "provider",
            "aggregate",
            "set",
            CHILD,
            "--aggregate",
            AGG
        ]),
        json!([{"uuid": AGG}])
    );
    let generation = env.json(&["resource", "provider", "show", CHILD])["generation"]
        .as_i64()
        .unwrap()
        .to_string();
    assert_eq!(
        env.version_sent(&[
            "resource",
            "provider",
            "aggregate",
            "set",
            CHILD,
            "--aggregate",
            AGG,
            "--generation",
            &generation,
        ]),
        "1.19"
    );
    assert_eq!(
        env.json(&["resource", "provider", "aggregate", "list", CHILD]),
        json!([{"uuid": AGG}])
    );
    assert_eq!(
        env.json(&[
            "resource",
            "provider",
            "list",
            "--member-of",
            AGG,
            "-c",
            "name"
        ]),
        json!([{"name": "child"}])
    );

    // Allocations and usages.
    let alloc = env.json(&[
        "resource",
        "provider",
        "allocation",
        "set",
        CONSUMER,
        "--allocation",
        &format!("rp={RP},VCPU=2,MEMORY_MB=1024"),
        "--project-id",
        PROJECT,
        "--user-id",
        USER,
    ]);
    assert_eq!(alloc[0]["resource_provider"], RP);
    assert_eq!(alloc[0]["resources"], json!({"VCPU": 2, "MEMORY_MB": 1024}));
    let shown = env.json(&[
        "resource",
        "provider",
        "allocation",
        "show",
        CONSUMER,
        "-c",
        "project_id",
        "-c",
        "resources",
    ]);
    assert_eq!(
        shown,
        json!([{"resources": {"VCPU": 2, "MEMORY_MB": 1024}, "project_id": PROJECT}])
    );
    let usage = env.json(&["resource", "provider", "usage", "show", RP]);
    assert!(
        usage
            .as_array()
            .unwrap()
            .contains(&json!({"resource_class": "VCPU", "usage": 2}))
    );
    let usage = env.json(&["resource", "usage", "show", PROJECT, "--user-id", USER]);
    assert!(
        usage
            .as_array()
            .unwrap()
            .contains(&json!({"resource_class": "VCPU", "usage": 2}))
    );
    assert_eq!(
        env.json(&[
            "resource",
            "provider",
            "inventory",
            "show",
            RP,
            "VCPU",
            "-c",
            "used"
        ]),
        json!({"used": 2})
    );
    let shown = env.json(&[
        "resource",
        "provider",
        "show",
        RP,
        "--allocations",
        "-c",
        "allocations",
    ]);
    assert_eq!(
        shown["allocations"][CONSUMER]["resources"],
        json!({"VCPU": 2, "MEMORY_MB": 1024})
    );

    // Allocation candidates (1.10; --limit 1.16; groups 1.25).
    let candidates = env.json(&["allocation", "candidate", "list", "--resource", "VCPU=4"]);
    assert_eq!(candidates.as_array().map(Vec::len), Some(1), "{candidates}");
    let capacity = candidates[0]["inventory used/capacity"].as_str().unwrap();
    assert!(capacity.split(',').any(|c| c == "VCPU=2/8"), "{candidates}");
    // 1.10 has no traits column.
    assert!(candidates[0].get("traits").is_none(), "{candidates}");
    assert_eq!(candidates[0]["allocation"], "VCPU=4");
    assert_eq!(candidates[0]["resource provider"], RP);
    assert_eq!(
        env.version_sent(&[
            "allocation",
            "candidate",
            "list",
            "--resource",
            "VCPU=4",
            "--limit",
            "1"
        ]),
        "1.16"
    );
    let grouped = env.json(&[
        "allocation",
        "candidate",
        "list",
        "--group",
        "1",
        "--resource",
        "VCPU=1",
        "--group",
        "2",
        "--resource",
        "MEMORY_MB=512",
        "--group-policy",
        "none",
    ]);
    // Both groups fit the one provider: one row with both amounts, and
    // 1.25 has the traits column.
    assert_eq!(grouped.as_array().map(Vec::len), Some(1), "{grouped}");
    assert_eq!(grouped[0]["allocation"], "VCPU=1,MEMORY_MB=512");
    assert_eq!(grouped[0]["traits"], "CUSTOM_FAST");

    // Unset one class, then everything.
    let left = env.json(&[
        "resource",
        "provider",
        "allocation",
        "unset",
        CONSUMER,
        "--resource-class",
        "MEMORY_MB",
    ]);
    assert_eq!(left[0]["resources"], json!({"VCPU": 2}));
    assert_eq!(left[0]["project_id"], PROJECT);
    env.quiet(&["resource", "provider", "allocation", "delete", CONSUMER]);
    assert_eq!(
        env.json(&["resource", "provider", "allocation", "show", CONSUMER]),
        json!([])
    );

    // Deleting.
    env.quiet(&["resource", "provider", "trait", "delete", RP]);
    env.quiet(&["trait", "delete", "CUSTOM_FAST"]);
    env.quiet(&["resource", "class", "delete", "CUSTOM_GPU"]);
    env.quiet(&[
        "resource",
        "provider",
        "inventory",
        "delete",
        RP,
        "--resource-class",
        "DISK_GB",
    ]);
    assert_eq!(
        env.version_sent(&["resource", "provider", "inventory", "delete", RP]),
        "1.5"
    );
    assert_eq!(
        env.json(&["resource", "provider", "inventory", "list", RP]),
        json!([])
    );
    env.quiet(&["resource", "provider", "delete", CHILD]);
    env.quiet(&["resource", "provider", "delete", RP]);
    assert_eq!(env.json(&["resource", "provider", "list"]), json!([]));
}

#[test]
fn the_lowest_version_that_has_what_was_asked() {
    let env = Env::new();
    env.json(&["resource", "provider", "create", "compute1", "--uuid", RP]);
    assert_eq!(env.version_sent(&["resource", "provider", "list"]), "1.0");
    assert_eq!(
        env.version_sent(&["resource", "provider", "list", "--resource", "VCPU=1"]),
        "1.4"
    );
    assert_eq!(
        env.version_sent(&[
            "resource",
            "provider",
            "list",
            "--forbidden",
            "HW_CPU_X86_AVX2",
            "--in-tree",
            RP
        ]),
        "1.22"
    );
    assert_eq!(
        env.version_sent(&[
            "resource",
            "provider",
            "list",
            "--required",
            "HW_CPU_X86_AVX2,HW_CPU_X86_SSE"
        ]),
        "1.39"
    );
    assert_eq!(
        env.version_sent(&[
            "resource",
            "provider",
            "list",
            "--member-of",
            AGG,
            "--member-of",
            AGG
        ]),
        "1.24"
    );
    // A column that only 1.14 has raises the version.
    assert_eq!(
        env.version_sent(&["resource", "provider", "list", "-c", "root_provider_uuid"]),
        "1.14"
    );
    assert_eq!(
        env.json(&["resource", "provider", "list", "-c", "root_provider_uuid"]),
        json!([{"root_provider_uuid": RP}])
    );
    assert_eq!(env.version_sent(&["trait", "list"]), "1.6");
    assert_eq!(
        env.version_sent(&["resource", "usage", "show", PROJECT]),
        "1.9"
    );
    // The reason is given.
    let run = env.run(&["-v", "resource", "provider", "list", "--in-tree", RP]);
    assert_eq!(
        run.stderr,
        "API version: placement 1.14 (the lowest with option --in-tree of `resource provider \
         list`; the server supports 1.0 - 1.39)\n"
    );
    // Explicit versions and latest.
    assert_eq!(
        env.version_sent(&[
            "--os-placement-api-version",
            "1.20",
            "resource",
            "provider",
            "list"
        ]),
        "1.20"
    );
    assert_eq!(
        env.version_sent(&[
            "--os-placement-api-version",
            "latest",
            "resource",
            "provider",
            "list"
        ]),
        "1.39"
    );
    let at_latest = env.json(&[
        "--os-placement-api-version",
        "latest",
        "resource",
        "provider",
        "list",
    ]);
    assert_eq!(
        at_latest[0].as_object().map(serde_json::Map::len),
        Some(5),
        "{at_latest}"
    );
    // Discovery is kept on disk: the cache directory holds the endpoint.
    let cached = std::fs::read_dir(env.cache.join("microversion"))
        .expect("the cache directory")
        .count();
    assert_eq!(cached, 1);
}

/// Runs against a port nothing listens on: whatever fails must fail
/// before any request.
fn offline(args: &[&str]) -> Run {
    let cache = Scratch::new("placement-cli-offline");
    placement(&format!("{}/", dead_base()), cache.path(), args)
}

#[test]
fn an_explicit_version_is_checked_before_any_request() {
    let run = offline(&[
        "--os-placement-api-version",
        "1.10",
        "resource",
        "provider",
        "list",
        "--in-tree",
        RP,
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "placement: error: option --in-tree of `resource provider list` is supported by API \
         versions 1.14 - latest; the version in use is 1.10\n"
    );
    let run = offline(&["--os-placement-api-version", "1.5", "trait", "list"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "placement: error: command `trait` is supported by API versions 1.6 - latest; the \
             version in use is 1.5\n"
        )
    );
    let run = offline(&[
        "--os-placement-api-version",
        "1.14",
        "resource",
        "provider",
        "list",
        "-c",
        "nope",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(
            "no column \"nope\" in `resource provider list`: its columns are uuid, name, \
             generation, root_provider_uuid, parent_provider_uuid"
        ),
        "{run:?}"
    );
    let run = offline(&[
        "--os-placement-api-version",
        "1.10",
        "resource",
        "provider",
        "list",
        "-c",
        "parent_provider_uuid",
    ]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "placement: error: column parent_provider_uuid is supported by API versions 1.14 - \
             latest; the version in use is 1.10\n"
        )
    );
    let run = offline(&["--os-placement-api-version", "1.40", "trait", "list"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("outside what this client supports (1.0 - 1.39)"),
        "{run:?}"
    );
}

#[test]
fn bad_input_exits_with_2_before_any_request() {
    for (args, expected) in [
        (
            &["resource", "provider", "list", "--bogus"][..],
            "unexpected argument '--bogus'",
        ),
        (
            &["resource", "provider", "show", "not-a-uuid"][..],
            "invalid UUID \"not-a-uuid\": expected a UUID such as",
        ),
        (
            &[
                "resource",
                "provider",
                "inventory",
                "class",
                "set",
                RP,
                "VCPU",
                "--total",
                "8.5",
            ][..],
            "invalid integer \"8.5\": expected a whole number from 0 to 2147483647",
        ),
        (
            &[
                "resource",
                "provider",
                "inventory",
                "set",
                RP,
                "--resource",
                "VCPU=many",
            ][..],
            "invalid integer \"many\"",
        ),
        (
            &["--os-placement-api-version", "1.x", "trait", "list"][..],
            "invalid version \"1.x\": expected X.Y, X.latest or latest",
        ),
        (
            &[
                "resource",
                "provider",
                "allocation",
                "set",
                CONSUMER,
                "--allocation",
                "VCPU=1",
            ][..],
            "it names no provider (rp=UUID)",
        ),
        (
            &["allocation", "candidate", "list"][..],
            "needs at least one --resource",
        ),
    ] {
        let run = offline(args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stderr.contains(expected), "{args:?}: {run:?}");
        assert_eq!(run.stdout, "", "{args:?}");
    }
    // Without the server, a command that needs it fails with 2, naming it.
    let run = offline(&["resource", "provider", "list"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.starts_with("placement: error: "), "{run:?}");
}

#[test]
fn the_servers_errors_in_full_with_exit_code_1() {
    let env = Env::new();
    let run = env.run(&["resource", "provider", "show", RP]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(&format!(
            "placement: error: GET {}resource_providers/{RP}: 404 Not Found\n",
            env.service.url
        )),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains(&format!("No resource provider with uuid {RP} found")),
        "{run:?}"
    );
    env.json(&["resource", "provider", "create", "compute1", "--uuid", RP]);
    let run = env.run(&["resource", "provider", "create", "compute1"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("409 Conflict"), "{run:?}");
}

#[test]
fn help_shows_each_range_and_output_forms() {
    let run = offline(&["resource", "provider", "list", "--help"]);
    assert_eq!(run.code, 0);
    for expected in [
        "(supported by API versions 1.14 - latest)",
        "(supported by API versions 1.4 - latest)",
        "(supported by API versions 1.22 - latest)",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {}", run.stdout);
    }
    let run = offline(&["allocation", "candidate", "--help"]);
    assert!(
        run.stdout
            .contains("(supported by API versions 1.10 - latest)"),
        "{}",
        run.stdout
    );
    let env = Env::new();
    env.json(&["resource", "provider", "create", "compute1", "--uuid", RP]);
    let table = env.run(&["resource", "provider", "list"]);
    assert_eq!(
        table.stdout,
        format!(
            "+--------------------------------------+----------+------------+\n\
             | uuid                                 | name     | generation |\n\
             +--------------------------------------+----------+------------+\n\
             | {RP} | compute1 |          0 |\n\
             +--------------------------------------+----------+------------+\n"
        )
    );
    let yaml = env.run(&["resource", "provider", "show", RP, "-f", "yaml"]);
    assert_eq!(
        yaml.stdout,
        format!("uuid: {RP}\nname: compute1\ngeneration: 0\n")
    );
    let versions = env.json(&["version-list"]);
    assert_eq!(versions["max_version"], "1.39");
    assert_eq!(versions["client_max_version"], "1.39");
}

#[test]
fn a_cloud_of_clouds_yaml_and_its_catalog() {
    use microversion_test_support::keystone::{self, FakeKeystone};
    let service = Service::start();
    let keystone = FakeKeystone::start_on_own_thread();
    keystone.set_catalog(&[("placement", service.url.as_str())]);
    let dir = Scratch::new("placement-cli-cloud");
    let clouds = format!(
        "clouds:\n  pw:\n    auth:\n      auth_url: {}/v3\n      username: demo\n      \
         password: {}\n      project_name: demo\n      user_domain_name: Default\n      \
         project_domain_name: Default\n    region_name: RegionOne\n",
        keystone.url,
        keystone::PASSWORD
    );
    std::fs::write(dir.join("clouds.yaml"), clouds).unwrap();
    // The endpoint comes from the catalog of the token Keystone issued.
    let run = placement_support::run_in(
        dir.path(),
        &["--os-cloud", "pw", "version-list", "-f", "json"],
        &[],
    );
    assert_eq!(run.json()["endpoint"], service.url.as_str());
    assert_eq!(keystone.issued(), 1);
    // OS_CLOUD works as --os-cloud; the service sees the Keystone token,
    // which noauth2 takes for a user who is not an administrator.
    let run = placement_support::run_in(
        dir.path(),
        &["resource", "provider", "list"],
        &[("OS_CLOUD", "pw")],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.starts_with(&format!(
            "placement: error: GET {}resource_providers: 403 Forbidden\n",
            service.url
        )),
        "{run:?}"
    );
    // Without any cloud or endpoint, the message says what to give.
    let run = placement_support::run_in(dir.path(), &["resource", "provider", "list"], &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("no Placement endpoint: give --os-endpoint URL"),
        "{run:?}"
    );
}
