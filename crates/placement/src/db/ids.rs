//! Typed row ids: a provider's id cannot be bound where a resource
//! class's is expected.
//!
//! Each id is a `Copy` newtype over the row's `i64`, as cheap to hash,
//! compare and sort as the integer. Sets of them ([`IdSet`]) and maps by
//! them use the fast hasher (foldhash): the ids are the database's own,
//! not chosen by a client.

use super::Result;
use super::{Bind, Columns};

/// Defines an id type: its constructor from the raw value, the raw value
/// back, its bind, its column reads and its `Display` (the integer).
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub(crate) struct $name(i64);

        // Not every id is built from a raw value or read optionally.
        #[allow(dead_code)]
        impl $name {
            /// The id whose value in the database is `raw`.
            pub(crate) const fn new(raw: i64) -> Self {
                Self(raw)
            }

            /// The value in the database.
            pub(crate) const fn get(self) -> i64 {
                self.0
            }

            /// The id in `column` of `row`, which is never NULL.
            ///
            /// # Errors
            ///
            /// The column is NULL or not an integer.
            // Inlined into the row loops, where the row's type is known and
            // the column read is then a direct call.
            #[inline]
            pub(crate) fn read(row: &dyn Columns, column: usize) -> Result<Self> {
                row.required_int(column).map(Self)
            }

            /// The id in `column` of `row`; `None` for NULL.
            ///
            /// # Errors
            ///
            /// The column is not an integer.
            #[inline]
            pub(crate) fn read_optional(row: &dyn Columns, column: usize) -> Result<Option<Self>> {
                Ok(row.int(column)?.map(Self))
            }

            /// A [`super::Store::fold_rows`] step adding the id in the
            /// row's first column to a set.
            ///
            /// # Errors
            ///
            /// The column is NULL or not an integer.
            #[inline]
            pub(crate) fn insert_first(ids: &mut IdSet<Self>, row: &dyn Columns) -> Result<()> {
                ids.insert(Self::read(row, 0)?);
                Ok(())
            }
        }

        impl RowId for $name {
            #[inline]
            fn read(row: &dyn Columns, column: usize) -> Result<Self> {
                // The inherent function, which paths prefer.
                Self::read(row, column)
            }
        }

        impl From<$name> for Bind {
            fn from(id: $name) -> Bind {
                Bind::Int(id.0)
            }
        }

        impl From<Option<$name>> for Bind {
            /// NULL for `None`.
            fn from(id: Option<$name>) -> Bind {
                id.map_or(Bind::Null, Bind::from)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

id_type! {
    /// `resource_providers.id`.
    ProviderId
}

id_type! {
    /// `resource_classes.id`.
    ResourceClassId
}

id_type! {
    /// `consumers.id` (allocations name their consumer by uuid).
    ConsumerId
}

id_type! {
    /// `projects.id`.
    ProjectId
}

id_type! {
    /// `users.id`.
    UserId
}

id_type! {
    /// `consumer_types.id`.
    ConsumerTypeId
}

id_type! {
    /// `traits.id`.
    TraitId
}

id_type! {
    /// `placement_aggregates.id`.
    AggregateId
}

id_type! {
    /// `allocations.id`.
    AllocationId
}

/// An id read from a row, for code generic over the table.
pub(crate) trait RowId: Sized {
    /// The id in `column` of `row`, which is never NULL.
    ///
    /// # Errors
    ///
    /// The column is NULL or not an integer.
    fn read(row: &dyn Columns, column: usize) -> Result<Self>;
}

/// A set of ids, hashed with a fast hasher.
pub(crate) type IdSet<T> = foldhash::HashSet<T>;

#[cfg(test)]
mod tests {
    use super::*;

    /// An id binds as its integer, `None` as NULL, and shows as the
    /// integer.
    #[test]
    fn ids_bind_and_show_as_their_integers() {
        assert_eq!(Bind::from(ProviderId::new(7)), Bind::Int(7));
        assert_eq!(Bind::from(Some(ConsumerTypeId::new(3))), Bind::Int(3));
        assert_eq!(Bind::from(None::<ConsumerTypeId>), Bind::Null);
        assert_eq!(TraitId::new(-2).to_string(), "-2");
        assert_eq!(ResourceClassId::new(10_000).get(), 10_000);
    }

    /// Newtypes cost nothing: the size of the integer, ordered as it.
    #[test]
    fn ids_are_their_integers() {
        assert_eq!(std::mem::size_of::<ProviderId>(), 8);
        assert_eq!(std::mem::size_of::<Option<ProviderId>>(), 16);
        let mut ids = [ProviderId::new(3), ProviderId::new(-1), ProviderId::new(2)];
        ids.sort_unstable();
        assert_eq!(ids.map(ProviderId::get), [-1, 2, 3]);
    }
}
