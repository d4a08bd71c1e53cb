//! Resource providers, inventories, aggregates and traits over a real
//! loopback server, at the versions where their behaviour changes.
//!
//! Each test starts its own service on a fresh temporary SQLite file, or on
//! the database `PLACEMENT_TEST_DATABASE` names (upstream's schema; tests
//! then use fresh uuids and names only). Servers listen on an ephemeral
//! port, or on the first free one of `PLACEMENT_TEST_PORTS` (`FIRST-LAST`).

mod aggregates;
mod concurrency;
mod inventories;
mod resource_providers;
#[path = "../support/mod.rs"]
mod support;
mod traits;
