//! `db sync` run by several services at once on one new database: they
//! take turns, one creates the schema and the others find it current.
//!
//! On a temporary SQLite file always; on the empty database that
//! `PLACEMENT_TEST_EMPTY_DATABASE` names when set (scripts/test.sh sets it
//! to a new PostgreSQL and a new MariaDB database).

use microversion_test_support::Scratch;
use placement::db::Store;
use placement::db::schema::{Synced, sync};

const SERVICES: usize = 4;

/// Syncs `url` from `SERVICES` stores at once (each its own pools, as
/// separate processes would have) and checks what each one did.
async fn concurrent_syncs(url: &str) {
    let mut stores = Vec::new();
    for _ in 0..SERVICES {
        stores.push(Store::connect(url).await.expect("the database opens"));
    }
    let mut tasks = Vec::new();
    for store in stores.clone() {
        tasks.push(tokio::spawn(async move { sync(&store).await }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(
            task.await
                .expect("the sync task ends")
                .map_err(|e| format!("{e:#}")),
        );
    }
    let created = outcomes
        .iter()
        .filter(|o| *o == &Ok(Synced::Created))
        .count();
    let current = outcomes
        .iter()
        .filter(|o| *o == &Ok(Synced::AlreadyCurrent))
        .count();
    assert_eq!((created, current), (1, SERVICES - 1), "{outcomes:?}");
    // And the schema is there, at the head revision, for a later sync.
    assert_eq!(sync(&stores[0]).await.unwrap(), Synced::AlreadyCurrent);
    for store in &stores {
        store.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_syncs_on_a_new_sqlite_file() {
    let dir = Scratch::new("placement-db-sync");
    let file = dir.join("placement.db");
    concurrent_syncs(&format!("sqlite:///{}", file.display())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_syncs_on_the_empty_database_given() {
    match std::env::var("PLACEMENT_TEST_EMPTY_DATABASE") {
        Ok(url) if !url.is_empty() => concurrent_syncs(&url).await,
        _ => eprintln!("PLACEMENT_TEST_EMPTY_DATABASE not set: only SQLite was tried"),
    }
}
