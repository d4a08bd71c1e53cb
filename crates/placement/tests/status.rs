//! `placement-status upgrade check` run as a process on SQLite files: each
//! of upstream's checks passing, and tripped by a database (or policy
//! file) made to trip it, with upstream's table, text and exit codes.

use std::path::PathBuf;
use std::process::Command;

use microversion_test_support::Scratch;
use rusqlite::Connection;

struct Deployment {
    dir: Scratch,
    file: PathBuf,
    conf: PathBuf,
}

impl Deployment {
    /// A synced database and its configuration file.
    fn new(name: &str) -> Deployment {
        let dir = Scratch::new(name);
        let file = dir.join("placement.db");
        let conf = dir.join("placement.conf");
        std::fs::write(
            &conf,
            format!(
                "[placement_database]\nconnection = sqlite:///{}\n",
                file.display()
            ),
        )
        .unwrap();
        let sync = Command::new(env!("CARGO_BIN_EXE_placement-manage"))
            .arg("--config-file")
            .arg(&conf)
            .args(["db", "sync"])
            .status()
            .unwrap();
        assert!(sync.success());
        Deployment { dir, file, conf }
    }

    fn sql(&self, sql: &str) {
        Connection::open(&self.file)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }

    fn check(&self, args: &[&str]) -> (i32, String) {
        let output = Command::new(env!("CARGO_BIN_EXE_placement-status"))
            .arg("--config-file")
            .arg(&self.conf)
            .args(args)
            .output()
            .unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8(output.stdout).unwrap(),
        )
    }
}

const ALL_PASS: &str = "\
+-------------------------------------------+
| Upgrade Check Results                     |
+-------------------------------------------+
| Check: Missing Root Provider IDs          |
| Result: Success                           |
| Details: None                             |
+-------------------------------------------+
| Check: Incomplete Consumers               |
| Result: Success                           |
| Details: None                             |
+-------------------------------------------+
| Check: Policy File JSON to YAML Migration |
| Result: Success                           |
| Details: None                             |
+-------------------------------------------+
";

/// Upstream's table with every check tripped (two incomplete consumers).
const ALL_TRIPPED: &str = "\
+----------------------------------------------------------------------+
| Upgrade Check Results                                                |
+----------------------------------------------------------------------+
| Check: Missing Root Provider IDs                                     |
| Result: Failure                                                      |
| Details: There is at least one resource provider table record which  |
|   misses its root provider id. Run the \"placement-manage db          |
|   online_data_migrations\" command.                                   |
+----------------------------------------------------------------------+
| Check: Incomplete Consumers                                          |
| Result: Warning                                                      |
| Details: There are 2 incomplete consumers table records for existing |
|   allocations. Run the \"placement-manage db                          |
|   online_data_migrations\" command.                                   |
+----------------------------------------------------------------------+
| Check: Policy File JSON to YAML Migration                            |
| Result: Failure                                                      |
| Details: Your policy file is JSON-formatted which is deprecated. You |
|   need to switch to YAML-formatted file. Use the                     |
|   ``oslopolicy-convert-json-to-yaml`` tool to convert the            |
|   existing JSON-formatted files to YAML in a backwards-              |
|   compatible manner: https://docs.openstack.org/oslo.policy/         |
|   latest/cli/oslopolicy-convert-json-to-yaml.html.                   |
+----------------------------------------------------------------------+
";

const PROVIDER_WITHOUT_ROOT: &str =
    "INSERT INTO resource_providers (id, uuid, name, generation) VALUES (1, 'r1', 'one', 0);";

/// Three allocations of two consumers that have no consumer record.
const ALLOCATIONS_WITHOUT_CONSUMERS: &str = "\
INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES (1, 'c1', 0, 1);
INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES (1, 'c1', 1, 8);
INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES (1, 'c2', 0, 1);
";

#[test]
fn every_check_passes_on_a_new_database() {
    let d = Deployment::new("status-pass");
    assert_eq!(d.check(&["upgrade", "check"]), (0, ALL_PASS.to_owned()));
    // A YAML policy file is fine.
    std::fs::write(
        d.dir.join("policy.yaml"),
        "\"placement:resource_providers:list\": \"\"\n",
    )
    .unwrap();
    assert_eq!(d.check(&["upgrade", "check"]), (0, ALL_PASS.to_owned()));
}

#[test]
fn a_provider_without_its_root_id_fails() {
    let d = Deployment::new("status-root");
    d.sql(PROVIDER_WITHOUT_ROOT);
    let (code, table) = d.check(&["upgrade", "check"]);
    assert_eq!(code, 2, "{table}");
    let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "| Check: Missing Root Provider IDs | | Result: Failure | | Details: There is at least one \
             resource provider table record which | | misses its root provider id."
        ),
        "{table}"
    );
    assert!(table.contains("| Check: Incomplete Consumers "), "{table}");
    assert_eq!(table.matches("Result: Success").count(), 2, "{table}");
}

#[test]
fn incomplete_consumers_warn() {
    let d = Deployment::new("status-consumers");
    d.sql("INSERT INTO resource_providers (id, uuid, name, generation, root_provider_id) VALUES (1, 'r1', 'one', 0, 1);");
    d.sql(ALLOCATIONS_WITHOUT_CONSUMERS);
    let (code, table) = d.check(&["upgrade", "check"]);
    assert_eq!(code, 1, "{table}");
    assert!(table.contains(
        "| Result: Warning                                                      |\n\
         | Details: There are 2 incomplete consumers table records for existing |\n"
    ));
    // The online migrations clear it.
    let migrate = Command::new(env!("CARGO_BIN_EXE_placement-manage"))
        .arg("--config-file")
        .arg(&d.conf)
        .args(["db", "online_data_migrations"])
        .status()
        .unwrap();
    assert_eq!(migrate.code(), Some(0));
    assert_eq!(d.check(&["upgrade", "check"]), (0, ALL_PASS.to_owned()));
}

#[test]
fn a_json_policy_file_fails() {
    let d = Deployment::new("status-policy");
    // Found beside placement.conf, as oslo.policy looks for policy.yaml.
    std::fs::write(
        d.dir.join("policy.yaml"),
        "{\"placement:resource_providers:list\": \"\"}\n",
    )
    .unwrap();
    let (code, table) = d.check(&["upgrade", "check"]);
    assert_eq!(code, 2, "{table}");
    assert!(
        table.contains("| Check: Policy File JSON to YAML Migration "),
        "{table}"
    );
    assert!(table.contains("YAML-formatted file. Use the"), "{table}");
    assert_eq!(table.matches("Result: Success").count(), 2, "{table}");
}

#[test]
fn every_check_tripped_prints_upstreams_table() {
    let d = Deployment::new("status-all");
    d.sql(PROVIDER_WITHOUT_ROOT);
    d.sql(ALLOCATIONS_WITHOUT_CONSUMERS);
    std::fs::write(d.dir.join("policy.yaml"), "{}").unwrap();
    assert_eq!(d.check(&["upgrade", "check"]), (2, ALL_TRIPPED.to_owned()));
    // As upstream's: --json is accepted and the table printed.
    assert_eq!(
        d.check(&["upgrade", "check", "--json"]),
        (2, ALL_TRIPPED.to_owned())
    );
}

#[test]
fn an_unreadable_database_exits_255() {
    let d = Deployment::new("status-broken");
    d.sql("DROP TABLE allocations;");
    let (code, out) = d.check(&["upgrade", "check"]);
    assert_eq!(code, 255, "{out}");
    assert!(out.starts_with("Error:\n"), "{out}");
}

#[test]
fn usage_errors_exit_2() {
    let d = Deployment::new("status-usage");
    assert_eq!(d.check(&[]).0, 2);
    assert_eq!(d.check(&["upgrade"]).0, 2);
}
