//! Upstream's online data migrations (`placement-manage db
//! online_data_migrations`): rows older releases left incomplete, fixed
//! in batches while the service runs.

use anyhow::Context as _;

use crate::config::Config;
use crate::db::{Conn, Dialect, Store, now_text};

/// One migration: its name (upstream's function name, shown in the
/// table) and what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Migration {
    /// Providers without a root provider id become their own root.
    SetRootProviderIds,
    /// Allocations without a consumer record get one, in the incomplete
    /// consumer project and user.
    CreateIncompleteConsumers,
}

/// The migrations, in upstream's order.
pub(crate) const MIGRATIONS: [Migration; 2] = [
    Migration::SetRootProviderIds,
    Migration::CreateIncompleteConsumers,
];

impl Migration {
    /// Upstream's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Migration::SetRootProviderIds => "set_root_provider_ids",
            Migration::CreateIncompleteConsumers => "create_incomplete_consumers",
        }
    }

    /// Migrates at most `limit` rows in one transaction; returns how many
    /// rows it found and how many it migrated (the same: every row found
    /// is migrated).
    pub(crate) async fn run(
        self,
        store: &Store,
        config: &Config,
        limit: i64,
    ) -> anyhow::Result<(i64, i64)> {
        let dialect = store.dialect();
        let (project_id, user_id) = (
            config.incomplete_consumer_project_id.clone(),
            config.incomplete_consumer_user_id.clone(),
        );
        let done = store
            .transaction(move |_, tx| {
                Box::pin(async move {
                    match self {
                        Migration::SetRootProviderIds => {
                            // The nested select lets MySQL update the table
                            // it reads.
                            let now = now_literal(dialect);
                            let sql = format!(
                                "UPDATE resource_providers SET root_provider_id = id, updated_at = {now} \
                                 WHERE id IN (SELECT subq_1.id FROM (SELECT id FROM resource_providers \
                                 WHERE root_provider_id IS NULL LIMIT {limit}) AS subq_1)"
                            );
                            Ok::<_, anyhow::Error>(tx.execute(&sql, &[]).await?.rows_affected)
                        }
                        Migration::CreateIncompleteConsumers => {
                            let now = now_literal(dialect);
                            let project =
                                ensure(tx, dialect, "projects", &project_id, &now).await?;
                            let user = ensure(tx, dialect, "users", &user_id, &now).await?;
                            // Grouped: a consumer with several allocations
                            // gets one record.
                            let sql = format!(
                                "INSERT INTO consumers (uuid, project_id, user_id, created_at) \
                                 SELECT allocations.consumer_id, {project}, {user}, {now} FROM allocations \
                                 LEFT OUTER JOIN consumers ON allocations.consumer_id = consumers.uuid \
                                 WHERE consumers.id IS NULL GROUP BY allocations.consumer_id LIMIT {limit}"
                            );
                            Ok(tx.execute(&sql, &[]).await?.rows_affected)
                        }
                    }
                })
            })
            .await?;
        let done = i64::try_from(done).unwrap_or(i64::MAX);
        Ok((done, done))
    }
}

/// Now, as an SQL literal of a timestamp.
fn now_literal(dialect: Dialect) -> String {
    dialect
        .timestamp_param()
        .replace('?', &format!("'{}'", now_text()))
}

/// The id of the `projects` or `users` row of `external_id`, added when
/// missing.
async fn ensure(
    tx: &mut Conn<'_>,
    dialect: Dialect,
    table: &'static str,
    external_id: &str,
    now: &str,
) -> anyhow::Result<i64> {
    let insert = dialect.placeholders(dialect.insert_unless_present(
        table,
        &["external_id", "created_at"],
        &format!("?, {now}"),
    ));
    tx.execute(&insert, &[external_id.into()])
        .await
        .with_context(|| format!("adding the incomplete consumer's row to {table}"))?;
    let select = dialect.placeholders(format!(
        "SELECT {} AS id FROM {table} WHERE external_id = ?",
        dialect.int("id")
    ));
    tx.row(&select, &[external_id.into()], |row| row.required_int(0))
        .await?
        .ok_or_else(|| anyhow::anyhow!("the row of {table} just added cannot be read back"))
}

/// What one run of the migrations found and did, per migration, in
/// order.
pub(crate) type Totals = Vec<(&'static str, i64, i64)>;

/// Runs the migrations as upstream's command does: one batch of at most
/// `max_count` rows across them when `limited`, else batches until one
/// migrates nothing. Prints a line for each migration that found rows;
/// returns the totals, the rows the last batch migrated, and whether a
/// migration of the last batch failed.
pub(crate) async fn run(
    store: &Store,
    config: &Config,
    max_count: i64,
    limited: bool,
) -> (Totals, i64, bool) {
    let mut totals: Totals = Vec::new();
    loop {
        let mut ran = 0;
        let mut failed = false;
        for migration in MIGRATIONS {
            let name = migration.name();
            let (found, done) = match migration.run(store, config, max_count - ran).await {
                Ok(counts) => counts,
                Err(e) => {
                    println!("Error attempting to run {name}");
                    eprintln!("placement-manage: {name} failed: {e:#}");
                    failed = true;
                    (0, 0)
                }
            };
            if found != 0 {
                println!("{found} rows matched query {name}, {done} migrated");
            }
            match totals.iter_mut().find(|(n, _, _)| *n == name) {
                Some(total) => {
                    total.1 += found;
                    total.2 += done;
                }
                None => totals.push((name, found, done)),
            }
            ran += done;
            if ran >= max_count {
                break;
            }
        }
        if limited || ran == 0 {
            return (totals, ran, failed);
        }
    }
}
