//! Prometheus metrics, served at `/metrics` on an address of their own
//! (`[metrics] bind`, `--metrics-bind`; off by default).
//!
//! A separate listener rather than a path of the API: the API's port is
//! the one load balancers publish and Keystone guards, while a scraper
//! needs no token and the metrics (client names, request counts) are for
//! operators only; a port of their own is firewalled apart.
//!
//! The text holds the framework's families (`microversion_*`: see
//! `microversion_server::telemetry`: requests by route template, method,
//! status and served version, latency histograms per route, versions by
//! client) and the service's own:
//!
//! | family | type | labels |
//! |---|---|---|
//! | `placement_db_pool_connections` | gauge | `pool`, `state` (`in_use`, `idle`) |
//! | `placement_db_pool_max_connections` | gauge | `pool` |
//! | `placement_db_pool_waits_total` | counter | `pool` (`write`, `main`, `sqlite_read`) |
//! | `placement_allocation_write_conflicts_total` | counter | |
//! | `placement_allocation_write_retries_total` | counter | |
//! | `placement_allocation_write_failures_total` | counter | |
//! | `placement_keystone_token_cache_lookups_total` | counter | `result` (`hit`, `miss`); with Keystone only |
//!
//! Pools: on SQLite `write` (the one write connection, `in_use` while a
//! write holds it) and, for a file, `sqlite_read` (its read connections;
//! `in_use` counts reads running); on PostgreSQL and MySQL `main` and
//! `server_read`. A wait is an
//! acquisition that found every connection of its pool busy. An
//! allocation write conflict is an attempt that met a concurrent writer
//! (a generation changed, a deadlock); a retry is an attempt after the
//! first; a failure is a write whose every attempt met one
//! (`[placement] allocation_conflict_retry_count`), answered 409.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::response::IntoResponse;
use axum::routing::get;
use microversion_server::Microversions;

use crate::db::Store;

/// What `/metrics` reads: the API's counters, the database's, the token
/// cache's. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Metrics {
    pub(crate) api: Microversions,
    store: Store,
    keystone: Option<keystone_auth::KeystoneAuthLayer>,
}

impl Metrics {
    pub(crate) fn new(
        api: Microversions,
        store: Store,
        keystone: Option<keystone_auth::KeystoneAuthLayer>,
    ) -> Self {
        Metrics {
            api,
            store,
            keystone,
        }
    }

    /// Every family in the Prometheus text exposition format (0.0.4).
    #[must_use]
    pub fn render(&self) -> String {
        let mut out = self.api.telemetry().render_prometheus();
        let pools = self.store.pool_usage();
        family(
            &mut out,
            "placement_db_pool_connections",
            "gauge",
            "Database connections open, by pool and state.",
        );
        for pool in &pools {
            for (state, n) in [("in_use", pool.in_use), ("idle", pool.idle)] {
                let _ = writeln!(
                    out,
                    "placement_db_pool_connections{{pool=\"{}\",state=\"{state}\"}} {n}",
                    pool.name
                );
            }
        }
        family(
            &mut out,
            "placement_db_pool_max_connections",
            "gauge",
            "The most connections each database pool opens.",
        );
        for pool in &pools {
            let _ = writeln!(
                out,
                "placement_db_pool_max_connections{{pool=\"{}\"}} {}",
                pool.name, pool.max
            );
        }
        family(
            &mut out,
            "placement_db_pool_waits_total",
            "counter",
            "Acquisitions that found every connection of the pool busy and waited.",
        );
        for pool in &pools {
            if let Some(waits) = pool.waits {
                let _ = writeln!(
                    out,
                    "placement_db_pool_waits_total{{pool=\"{}\"}} {waits}",
                    pool.name
                );
            }
        }
        let stats = &self.store.stats;
        for (name, help, counter) in [
            (
                "placement_allocation_write_conflicts_total",
                "Allocation write attempts that met a concurrent writer.",
                &stats.allocation_conflicts,
            ),
            (
                "placement_allocation_write_retries_total",
                "Allocation write attempts after the first.",
                &stats.allocation_retries,
            ),
            (
                "placement_allocation_write_failures_total",
                "Allocation writes whose every attempt met a concurrent writer (409).",
                &stats.allocation_gave_up,
            ),
        ] {
            family(&mut out, name, "counter", help);
            let _ = writeln!(out, "{name} {}", counter.load(Ordering::Relaxed));
        }
        if let Some(keystone) = &self.keystone {
            let cache = keystone.cache().stats();
            family(
                &mut out,
                "placement_keystone_token_cache_lookups_total",
                "counter",
                "Token lookups, by result: hit (cached) or miss (validated by Keystone).",
            );
            for (result, n) in [("hit", cache.hits), ("miss", cache.misses)] {
                let _ = writeln!(
                    out,
                    "placement_keystone_token_cache_lookups_total{{result=\"{result}\"}} {n}"
                );
            }
        }
        out
    }

    /// The router of the metrics listener: `GET /metrics`.
    pub fn router(self) -> Router {
        Router::new().route(
            "/metrics",
            get(move || {
                let text = self.render();
                async move {
                    (
                        [(
                            http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        text,
                    )
                        .into_response()
                }
            }),
        )
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}
