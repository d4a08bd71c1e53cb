//! `GET /`: the versions document.

use axum::extract::State;
use axum::response::Response;
use http::StatusCode;
use microversion_server::{ServedVersion, VersionedRouter, Versions};

use crate::app::AppState;
use crate::handlers::util::json_response;

pub(crate) fn routes(router: VersionedRouter<AppState>) -> VersionedRouter<AppState> {
    router.get("/", Versions::all(), home)
}

async fn home(State(state): State<AppState>, version: ServedVersion) -> Response {
    let body = serde_json::to_value(state.discovery.document(None)).unwrap_or_default();
    json_response(*version, StatusCode::OK, &body, None)
}
