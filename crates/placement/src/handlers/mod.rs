//! The API's handlers, one module per resource.

pub(crate) mod aggregate;
pub(crate) mod allocation;
pub(crate) mod allocation_candidate;
pub(crate) mod inventory;
mod pieces;
pub(crate) mod query;
pub(crate) mod reshaper;
pub(crate) mod resource_class;
pub(crate) mod resource_provider;
pub(crate) mod root;
pub(crate) mod trait_;
pub(crate) mod usage;
pub(crate) mod util;

use std::sync::Arc;

use axum::extract::FromRef;
use microversion_server::{BuildError, VersionedRouter};

use crate::state::AppState;

/// The state of the routes: the application's, and the request schemas
/// built with the router. Handlers take either part with `State`.
#[derive(Clone, Debug)]
pub(crate) struct RouterState {
    pub(crate) app: AppState,
    pub(crate) schemas: Arc<RequestSchemas>,
}

impl FromRef<RouterState> for AppState {
    fn from_ref(state: &RouterState) -> AppState {
        state.app.clone()
    }
}

impl FromRef<RouterState> for Arc<RequestSchemas> {
    fn from_ref(state: &RouterState) -> Arc<RequestSchemas> {
        Arc::clone(&state.schemas)
    }
}

/// The schemas of every request body and query string, by resource:
/// compiled once, when the router is built, so that an invalid one stops
/// the service from starting instead of failing its first request.
#[derive(Debug)]
pub(crate) struct RequestSchemas {
    pub(crate) aggregate: aggregate::Schemas,
    pub(crate) allocation: allocation::Schemas,
    pub(crate) allocation_candidate: allocation_candidate::Schemas,
    pub(crate) inventory: inventory::Schemas,
    pub(crate) reshaper: reshaper::Schemas,
    pub(crate) resource_class: resource_class::Schemas,
    pub(crate) resource_provider: resource_provider::Schemas,
    pub(crate) trait_: trait_::Schemas,
    pub(crate) usage: usage::Schemas,
}

impl RequestSchemas {
    /// Compiles every schema.
    ///
    /// # Errors
    ///
    /// Returns the first [`BuildError`]: a schema that is not valid JSON
    /// Schema, or two schemas of one operation with overlapping versions.
    pub(crate) fn build() -> Result<RequestSchemas, BuildError> {
        Ok(RequestSchemas {
            aggregate: aggregate::Schemas::build()?,
            allocation: allocation::Schemas::build()?,
            allocation_candidate: allocation_candidate::Schemas::build()?,
            inventory: inventory::Schemas::build()?,
            reshaper: reshaper::Schemas::build()?,
            resource_class: resource_class::Schemas::build()?,
            resource_provider: resource_provider::Schemas::build()?,
            trait_: trait_::Schemas::build()?,
            usage: usage::Schemas::build()?,
        })
    }
}

/// Every route of the API.
pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    let router = root::routes(router);
    let router = resource_class::routes(router);
    let router = resource_provider::routes(router);
    let router = inventory::routes(router);
    let router = aggregate::routes(router);
    let router = trait_::routes(router);
    let router = allocation::routes(router);
    let router = allocation_candidate::routes(router);
    let router = usage::routes(router);
    reshaper::routes(router)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_schema_compiles() {
        if let Err(e) = RequestSchemas::build() {
            panic!("{e}");
        }
    }
}
