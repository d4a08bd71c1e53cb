//! The standard resource classes and traits (os-resource-classes 1.1.0,
//! os-traits 3.9.0), kept in the database as upstream keeps them.

use std::collections::HashSet;

use super::{Columns, Conn, Result, Store};

/// Standard resource classes, in order: the position is the id.
pub(crate) fn resource_classes() -> impl Iterator<Item = &'static str> {
    names(include_str!("../../data/resource_classes.txt"))
}

/// Standard traits.
pub(crate) fn traits() -> impl Iterator<Item = &'static str> {
    names(include_str!("../../data/traits.txt"))
}

fn names(text: &'static str) -> impl Iterator<Item = &'static str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Custom resource classes get ids from here up.
pub(crate) const MIN_CUSTOM_RESOURCE_CLASS_ID: i64 = 10_000;

/// Whether `name` is a standard resource class.
pub(crate) fn is_standard_resource_class(name: &str) -> bool {
    resource_classes().any(|n| n == name)
}

/// Adds the standard resource classes and traits the database lacks.
///
/// # Errors
///
/// Fails when the database does.
pub async fn sync(store: &Store) -> Result<()> {
    store
        .transaction(|store, conn| Box::pin(add_missing(store, conn)))
        .await
}

/// [`sync`] within its transaction.
async fn add_missing(store: &Store, conn: &mut Conn<'_>) -> Result<()> {
    let now = super::now_text();
    let name = |row: &dyn Columns| Ok(row.required_text(0)?.to_owned());
    let have: HashSet<String> = conn
        .rows("SELECT name FROM resource_classes", &[], name)
        .await?
        .into_iter()
        .collect();
    // Servers starting at once on one database may race to add the same
    // rows: whoever comes second adds nothing, and does not fail.
    let d = store.dialect();
    let insert_rc = d.placeholders(d.insert_unless_present(
        "resource_classes",
        &["id", "name", "created_at"],
        &format!("?, ?, {}", d.timestamp_param()),
    ));
    for (id, name) in resource_classes().enumerate() {
        if !have.contains(name) {
            let id = i64::try_from(id).unwrap_or(i64::MAX);
            conn.execute(&insert_rc, &[id.into(), name.into(), now.as_str().into()])
                .await?;
        }
    }
    let have: HashSet<String> = conn
        .rows("SELECT name FROM traits", &[], name)
        .await?
        .into_iter()
        .collect();
    let insert_trait = d.placeholders(d.insert_unless_present(
        "traits",
        &["name", "created_at"],
        &format!("?, {}", d.timestamp_param()),
    ));
    for name in traits() {
        if !have.contains(name) {
            conn.execute(&insert_trait, &[name.into(), now.as_str().into()])
                .await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_complete() {
        assert_eq!(resource_classes().count(), 21);
        assert_eq!(resource_classes().next(), Some("VCPU"));
        assert_eq!(traits().count(), 377);
        assert!(is_standard_resource_class("DISK_GB"));
        assert!(!is_standard_resource_class("CUSTOM_X"));
    }
}
