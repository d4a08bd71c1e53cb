//! `GET /`: the versions document.

use axum::extract::State;
use axum::response::Response;
use http::StatusCode;
use microversion::VersionSpan;
use microversion_server::{ServedVersion, VersionedRouter};

use crate::handlers::RouterState;
use crate::handlers::util::json_bytes_response;
use crate::state::AppState;

pub(crate) fn routes(router: VersionedRouter<RouterState>) -> VersionedRouter<RouterState> {
    router.get("/", VersionSpan::ALL, home)
}

/// The document is the same on every request while the served range
/// stays: serialized once for it.
async fn home(State(state): State<AppState>, version: ServedVersion) -> Response {
    json_bytes_response(*version, StatusCode::OK, state.versions_body.get(), None)
}
