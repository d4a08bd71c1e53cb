//! The API's handlers, one module per resource.

pub(crate) mod aggregate;
pub(crate) mod allocation;
pub(crate) mod allocation_candidate;
pub(crate) mod inventory;
pub(crate) mod query;
pub(crate) mod reshaper;
pub(crate) mod resource_class;
pub(crate) mod resource_provider;
pub(crate) mod root;
pub(crate) mod trait_;
pub(crate) mod usage;
pub(crate) mod util;

use microversion_server::VersionedRouter;

use crate::app::AppState;

/// Every route of the API.
pub(crate) fn routes(router: VersionedRouter<AppState>) -> VersionedRouter<AppState> {
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
