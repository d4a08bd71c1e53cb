//! `placement-manage` run as a process on SQLite files: `db sync` from an
//! empty database and from each earlier upstream revision (with upstream's
//! refusals), `db version`, `db stamp`, and `db online_data_migrations`
//! with upstream's output and exit codes.
//!
//! The earlier revisions are made from the head schema by undoing the
//! later steps (what upstream's migrations at that revision leave:
//! consumers without consumer_type_id, no consumer_types, the five
//! indexes that a082b8bb98d0 drops). scripts/manage-check.sh does the
//! same on databases upstream's own code made, on every backend.

use std::path::{Path, PathBuf};
use std::process::Command;

use microversion_test_support::Scratch;
use rusqlite::Connection;

const HEAD: &str = "a082b8bb98d0";

/// A database file and the configuration naming it.
struct Db {
    _dir: Scratch,
    file: PathBuf,
    conf: PathBuf,
}

impl Db {
    fn new(name: &str) -> Db {
        Db::with_conf(name, "")
    }

    /// `extra` is appended to the configuration file.
    fn with_conf(name: &str, extra: &str) -> Db {
        let dir = Scratch::new(name);
        let file = dir.join("placement.db");
        let conf = dir.join("placement.conf");
        std::fs::write(
            &conf,
            format!(
                "[placement_database]\nconnection = sqlite:///{}\n{extra}",
                file.display()
            ),
        )
        .unwrap();
        Db {
            _dir: dir,
            file,
            conf,
        }
    }

    fn manage(&self, args: &[&str]) -> Run {
        run(env!("CARGO_BIN_EXE_placement-manage"), &self.conf, args)
    }

    fn sql(&self, sql: &str) {
        Connection::open(&self.file)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }

    fn count(&self, sql: &str) -> i64 {
        Connection::open(&self.file)
            .unwrap()
            .query_row(sql, [], |row| row.get(0))
            .unwrap()
    }

    /// A database at `revision`, as upstream's migrations leave it.
    fn at(name: &str, revision: &str) -> Db {
        let db = Db::new(name);
        assert_eq!(db.manage(&["db", "sync"]).code, 0);
        db.sql(&format!(
            "{UNDO_HEAD}UPDATE alembic_version SET version_num = '{revision}';"
        ));
        if revision != "422ece571366" {
            db.sql(UNDO_CONSUMER_TYPES);
        }
        db
    }

    /// The schema as SQLite describes it (not the SQL text of each table,
    /// which a rebuilt table words differently).
    fn schema(&self) -> Vec<String> {
        let conn = Connection::open(&self.file).unwrap();
        let mut lines = Vec::new();
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for table in tables {
            for pragma in ["table_info", "foreign_key_list", "index_list"] {
                let mut statement = conn
                    .prepare(&format!("SELECT * FROM pragma_{pragma}('{table}')"))
                    .unwrap();
                let width = statement.column_count();
                let rows = statement
                    .query_map([], |row| {
                        Ok((0..width)
                            .map(|i| format!("{:?}", row.get_ref(i).unwrap()))
                            .collect::<Vec<_>>()
                            .join(" "))
                    })
                    .unwrap();
                let mut rows: Vec<String> = rows
                    .map(|r| format!("{table} {pragma} {}", r.unwrap()))
                    .collect();
                if pragma == "index_list" {
                    // The index's position in the list follows its creation.
                    rows = rows
                        .into_iter()
                        .map(|r| {
                            r.split_once(' ')
                                .map(|(t, rest)| (t.to_owned(), rest.to_owned()))
                                .unwrap()
                        })
                        .map(|(t, rest)| {
                            let rest: Vec<&str> = rest.split(' ').collect();
                            format!("{t} {} {}", rest[0], rest[2..].join(" "))
                        })
                        .collect();
                    rows.sort();
                }
                lines.extend(rows);
            }
        }
        let mut indexes: Vec<String> = conn
            .prepare(
                "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
            )
            .unwrap()
            .query_map([], |row| {
                let name: String = row.get(0)?;
                let table: String = row.get(1)?;
                Ok((name, table))
            })
            .unwrap()
            .map(Result::unwrap)
            .map(|(name, table)| {
                let columns: Vec<String> = conn
                    .prepare(&format!("SELECT name FROM pragma_index_info('{name}')"))
                    .unwrap()
                    .query_map([], |row| row.get(0))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                format!("index {name} on {table} ({})", columns.join(", "))
            })
            .collect();
        indexes.sort();
        lines.extend(indexes);
        lines
    }
}

/// Back from the head revision to 422ece571366: the indexes a082b8bb98d0
/// dropped.
const UNDO_HEAD: &str = "\
CREATE INDEX inventories_resource_provider_id_idx ON inventories (resource_provider_id);
CREATE INDEX inventories_resource_provider_resource_class_idx ON inventories (resource_provider_id, resource_class_id);
CREATE INDEX ix_placement_aggregates_uuid ON placement_aggregates (uuid);
CREATE INDEX resource_providers_name_idx ON resource_providers (name);
CREATE INDEX resource_providers_uuid_idx ON resource_providers (uuid);
";

/// Back from 422ece571366 to b5c396305c25 (whose schema is the initial
/// one's): no consumer types.
const UNDO_CONSUMER_TYPES: &str = "\
CREATE TABLE consumers_before (
    created_at DATETIME,
    updated_at DATETIME,
    id INTEGER NOT NULL,
    uuid VARCHAR(36) NOT NULL,
    project_id INTEGER NOT NULL,
    user_id INTEGER NOT NULL,
    generation INTEGER DEFAULT 0 NOT NULL,
    PRIMARY KEY (id),
    CONSTRAINT uniq_consumers0uuid UNIQUE (uuid)
);
INSERT INTO consumers_before SELECT created_at, updated_at, id, uuid, project_id, user_id, generation FROM consumers;
DROP TABLE consumers;
ALTER TABLE consumers_before RENAME TO consumers;
CREATE INDEX consumers_project_id_user_id_uuid_idx ON consumers (project_id, user_id, uuid);
CREATE INDEX consumers_project_id_uuid_idx ON consumers (project_id, uuid);
DROP TABLE consumer_types;
";

/// Rows an older release left: provider 2 without its root provider id,
/// consumer c2's two allocations and c3's one without consumer records.
const OLD_ROWS: &str = "\
INSERT INTO projects (id, external_id) VALUES (1, 'p');
INSERT INTO users (id, external_id) VALUES (1, 'u');
INSERT INTO resource_providers (id, uuid, name, generation, root_provider_id) VALUES (1, 'r1', 'one', 0, 1);
INSERT INTO resource_providers (id, uuid, name, generation) VALUES (2, 'r2', 'two', 0);
INSERT INTO consumers (id, uuid, project_id, user_id) VALUES (1, 'c1', 1, 1);
INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES (1, 'c1', 0, 1);
INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES (1, 'c2', 0, 1);
INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES (1, 'c2', 1, 64);
INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used) VALUES (2, 'c3', 0, 1);
";

/// What a process printed and its exit code.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(binary: &str, conf: &Path, args: &[&str]) -> Run {
    let output = Command::new(binary)
        .arg("--config-file")
        .arg(conf)
        .args(args)
        .output()
        .expect("the binary runs");
    Run {
        code: output.status.code().expect("an exit code"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn version(db: &Db) -> String {
    let run = db.manage(&["db", "version"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout
}

#[test]
fn sync_creates_an_empty_database_and_finds_it_current() {
    let db = Db::new("manage-sync");
    assert_eq!(version(&db), "None\n");
    let sync = db.manage(&["db", "sync"]);
    assert_eq!((sync.code, sync.stdout.as_str()), (0, ""), "{sync:?}");
    assert_eq!(version(&db), format!("{HEAD}\n"));
    let again = db.manage(&["db", "sync"]);
    assert_eq!((again.code, again.stdout.as_str()), (0, ""), "{again:?}");
}

#[test]
fn sync_upgrades_each_earlier_revision_to_the_head_schema() {
    let fresh = Db::new("manage-fresh");
    assert_eq!(fresh.manage(&["db", "sync"]).code, 0);
    let head = fresh.schema();
    for revision in [
        "b4ed3a175331",
        "611cd6dffd7b",
        "b5c396305c25",
        "422ece571366",
    ] {
        let db = Db::at("manage-upgrade", revision);
        assert_ne!(db.schema(), head, "{revision} is not the head schema");
        db.sql(
            "INSERT INTO projects (id, external_id) VALUES (1, 'p');
             INSERT INTO users (id, external_id) VALUES (1, 'u');
             INSERT INTO consumers (uuid, project_id, user_id, generation) VALUES ('c1', 1, 1, 4);",
        );
        assert_eq!(version(&db), format!("{revision}\n"));
        let sync = db.manage(&["db", "sync"]);
        assert_eq!(
            (sync.code, sync.stdout.as_str()),
            (0, ""),
            "{revision}: {sync:?}"
        );
        assert_eq!(version(&db), format!("{HEAD}\n"), "{revision}");
        assert_eq!(db.schema(), head, "{revision}");
        // The consumers' rows survive the rebuilt table.
        assert_eq!(
            db.count(
                "SELECT generation FROM consumers WHERE uuid = 'c1' AND consumer_type_id IS NULL"
            ),
            4
        );
    }
}

#[test]
fn sync_refuses_until_the_online_migrations_ran() {
    let db = Db::at("manage-refusals", "b4ed3a175331");
    db.sql(OLD_ROWS);
    let sync = db.manage(&["db", "sync"]);
    assert_eq!(sync.code, 1, "{sync:?}");
    assert_eq!(
        sync.stderr,
        "Exception: There is at least one resource provider table record which is missing its \
         root provider id. Run the \"placement-manage db online_data_migrations\" command.\n"
    );
    assert_eq!(
        version(&db),
        "b4ed3a175331\n",
        "a refused sync changes nothing"
    );

    // One row: the provider's root id; the consumers wait.
    let one = db.manage(&["db", "online_data_migrations", "--max-count", "1"]);
    assert_eq!(one.code, 1, "{one:?}");
    assert_eq!(
        one.stdout,
        "1 rows matched query set_root_provider_ids, 1 migrated\n\
         +-----------------------+-------------+-----------+\n\
         |       Migration       | Total Found | Completed |\n\
         +-----------------------+-------------+-----------+\n\
         | set_root_provider_ids |      1      |     1     |\n\
         +-----------------------+-------------+-----------+\n"
    );
    assert_eq!(
        db.count("SELECT root_provider_id FROM resource_providers WHERE id = 2"),
        2
    );
    let sync = db.manage(&["db", "sync"]);
    assert_eq!(sync.code, 1, "{sync:?}");
    assert_eq!(
        sync.stderr,
        "Exception: There is at least one allocation record which is missing a consumer record. \
         Run the \"placement-manage db online_data_migrations\" command.\n"
    );

    // A batch of 1 leaves one consumer for the next run.
    let one = db.manage(&["db", "online_data_migrations", "--max-count", "1"]);
    assert_eq!(one.code, 1, "{one:?}");
    assert_eq!(
        one.stdout,
        "1 rows matched query create_incomplete_consumers, 1 migrated\n\
         +-----------------------------+-------------+-----------+\n\
         |          Migration          | Total Found | Completed |\n\
         +-----------------------------+-------------+-----------+\n\
         |    set_root_provider_ids    |      0      |     0     |\n\
         | create_incomplete_consumers |      1      |     1     |\n\
         +-----------------------------+-------------+-----------+\n"
    );
    let all = db.manage(&["db", "online_data_migrations"]);
    assert_eq!(all.code, 0, "{all:?}");
    assert_eq!(
        all.stdout,
        "Running batches of 50 until complete\n\
         1 rows matched query create_incomplete_consumers, 1 migrated\n\
         +-----------------------------+-------------+-----------+\n\
         |          Migration          | Total Found | Completed |\n\
         +-----------------------------+-------------+-----------+\n\
         |    set_root_provider_ids    |      0      |     0     |\n\
         | create_incomplete_consumers |      1      |     1     |\n\
         +-----------------------------+-------------+-----------+\n"
    );
    // Each consumer got one record, in the incomplete project and user.
    assert_eq!(
        db.count(
            "SELECT COUNT(*) FROM consumers JOIN projects ON projects.id = consumers.project_id \
             JOIN users ON users.id = consumers.user_id WHERE consumers.uuid IN ('c2', 'c3') \
             AND projects.external_id = '00000000-0000-0000-0000-000000000000' \
             AND users.external_id = '00000000-0000-0000-0000-000000000000' \
             AND consumers.generation = 0 AND consumers.created_at IS NOT NULL"
        ),
        2
    );
    let none = db.manage(&["db", "online_data_migrations", "--max-count", "10"]);
    assert_eq!(none.code, 0, "{none:?}");
    assert!(!none.stdout.contains("rows matched"), "{none:?}");
    let sync = db.manage(&["db", "sync"]);
    assert_eq!((sync.code, sync.stderr.as_str()), (0, ""), "{sync:?}");
    assert_eq!(version(&db), format!("{HEAD}\n"));
}

#[test]
fn incomplete_consumers_take_the_configured_project_and_user() {
    let db = Db::with_conf(
        "manage-incomplete-ids",
        "[placement]\nincomplete_consumer_project_id = proj-x\nincomplete_consumer_user_id = user-y\n",
    );
    assert_eq!(db.manage(&["db", "sync"]).code, 0);
    db.sql(OLD_ROWS);
    let all = db.manage(&["db", "online_data_migrations"]);
    assert_eq!(all.code, 0, "{all:?}");
    assert!(
        all.stdout
            .contains("1 rows matched query set_root_provider_ids, 1 migrated\n")
    );
    assert!(
        all.stdout
            .contains("2 rows matched query create_incomplete_consumers, 2 migrated\n")
    );
    assert_eq!(
        db.count(
            "SELECT COUNT(*) FROM consumers JOIN projects ON projects.id = consumers.project_id \
             JOIN users ON users.id = consumers.user_id \
             WHERE projects.external_id = 'proj-x' AND users.external_id = 'user-y'"
        ),
        2
    );
}

#[test]
fn a_failing_migration_exits_2_unless_a_limited_run_migrated_rows() {
    let db = Db::new("manage-failing");
    assert_eq!(db.manage(&["db", "sync"]).code, 0);
    db.sql(OLD_ROWS);
    db.sql(
        "CREATE TRIGGER no_consumers BEFORE INSERT ON consumers \
         BEGIN SELECT RAISE(ABORT, 'consumers are read only'); END;",
    );
    // Limited, and the root ids were migrated: work may remain, exit 1.
    let limited = db.manage(&["db", "online_data_migrations", "--max-count", "5"]);
    assert_eq!(limited.code, 1, "{limited:?}");
    assert!(
        limited
            .stdout
            .contains("Error attempting to run create_incomplete_consumers\n")
    );
    assert!(!limited.stdout.contains("Some migrations failed"));
    assert!(
        limited.stderr.contains("consumers are read only"),
        "{limited:?}"
    );
    // Nothing else to migrate: the failure decides.
    let all = db.manage(&["db", "online_data_migrations"]);
    assert_eq!(all.code, 2, "{all:?}");
    assert!(
        all.stdout
            .ends_with("Some migrations failed unexpectedly. Check log for details.\n"),
        "{all:?}"
    );
    assert!(
        all.stdout
            .contains("| create_incomplete_consumers |      0      |     0     |\n")
    );
}

#[test]
fn an_invalid_max_count_exits_127() {
    let db = Db::new("manage-max-count");
    assert_eq!(db.manage(&["db", "sync"]).code, 0);
    for bad in ["0", "-1", "x", "1.5", ""] {
        let run = db.manage(&["db", "online_data_migrations", "--max-count", bad]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (127, "Must supply a positive value for max_count\n"),
            "{bad:?}"
        );
    }
}

#[test]
fn stamp_records_a_revision_as_alembic_resolves_it() {
    let db = Db::new("manage-stamp");
    for (given, recorded) in [
        ("4", "422ece571366"),
        ("b5c", "b5c396305c25"),
        ("base", "None"),
        ("head", HEAD),
        ("611cd6dffd7b", "611cd6dffd7b"),
    ] {
        let run = db.manage(&["db", "stamp", given]);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{given}: {run:?}");
        assert_eq!(version(&db), format!("{recorded}\n"), "{given}");
    }
    for bad in ["b", "foo"] {
        let run = db.manage(&["db", "stamp", bad]);
        assert_eq!(run.code, 1, "{run:?}");
        assert!(
            run.stderr
                .contains(&format!("Can't locate revision identified by '{bad}'")),
            "{run:?}"
        );
    }
    assert_eq!(version(&db), "611cd6dffd7b\n");
    // The schema itself was never created: stamp only records.
    assert_eq!(
        db.count("SELECT COUNT(*) FROM sqlite_master WHERE name = 'consumers'"),
        0
    );
}

#[test]
fn usage() {
    let db = Db::new("manage-usage");
    assert_eq!(db.manage(&[]).code, 1);
    assert_eq!(db.manage(&["db"]).code, 0);
    assert_eq!(db.manage(&["db", "sync", "extra"]).code, 2);
    assert_eq!(db.manage(&["db", "stamp"]).code, 2);
    let unknown = db.manage(&["db", "frobnicate"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    // Nothing above touched the database.
    assert!(!db.file.exists());
}

#[test]
fn without_a_configured_database_nothing_is_created() {
    // oslo.config's search path outside the home directory: a machine
    // that has one is not a clean place for this test.
    if ["/etc/placement/placement.conf", "/etc/placement.conf"]
        .iter()
        .any(|f| Path::new(f).exists())
    {
        return;
    }
    let dir = Scratch::new("manage-no-config");
    let output = Command::new(env!("CARGO_BIN_EXE_placement-manage"))
        .args(["db", "sync"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env_remove("OS_PLACEMENT_CONFIG_DIR")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("value required for option connection in group [placement_database]"),
        "{output:?}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
