//! Database access shared by several handlers.

pub(crate) mod aggregate;
pub(crate) mod allocation;
pub(crate) mod candidate;
pub(crate) mod consumer;
pub(crate) mod inventory;
pub(crate) mod provider;
pub(crate) mod reshaper;
pub(crate) mod resource_class;
pub(crate) mod traits;
pub(crate) mod usage;
