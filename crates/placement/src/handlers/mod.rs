//! The API's handlers, one module per resource.

pub(crate) mod resource_class;
pub(crate) mod root;
pub(crate) mod util;

use microversion_server::VersionedRouter;

use crate::app::AppState;

/// Every route of the API.
pub(crate) fn routes(router: VersionedRouter<AppState>) -> VersionedRouter<AppState> {
    let router = root::routes(router);
    resource_class::routes(router)
}
