//! [`StrictQuery`]: query parameters that refuse the ones they do not know,
//! except under the legacy root, where those are ignored.

use axum::extract::FromRequestParts;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::extract::LegacyRequest;
use crate::schema::relax;

/// A request's query parameters as a `T` (a struct deriving
/// `Deserialize`), refusing with 400 a parameter `T` has no field for,
/// naming it and the accepted ones. Under the legacy root
/// ([`MicroversionsBuilder::legacy_root`](crate::MicroversionsBuilder::legacy_root))
/// such parameters are ignored instead, as Nova's v2.0 API ignores them.
///
/// ```
/// use microversion_server::StrictQuery;
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct ListQuery {
///     name: Option<String>,
///     limit: Option<u32>,
/// }
///
/// async fn list(StrictQuery(query): StrictQuery<ListQuery>) -> String {
///     format!("{:?} {:?}", query.name, query.limit)
/// }
/// ```
///
/// A `T` whose fields serde does not declare (a map, a struct with a
/// flattened field) accepts every parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for StrictQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let invalid = |e: &dyn std::fmt::Display| {
            ApiError::bad_request(format!("Invalid query string: {e}")).into_response()
        };
        let Some(fields) = relax::struct_fields::<T>() else {
            return serde_urlencoded::from_str(query)
                .map(StrictQuery)
                .map_err(|e| invalid(&e));
        };
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(query).map_err(|e| invalid(&e))?;
        let (known, unknown): (Vec<_>, Vec<_>) = pairs
            .into_iter()
            .partition(|(name, _)| fields.contains(&name.as_str()));
        if !unknown.is_empty() && !LegacyRequest::from_extensions(&parts.extensions) {
            let mut names: Vec<String> = Vec::new();
            for (name, _) in unknown {
                let quoted = format!("'{name}'");
                if !names.contains(&quoted) {
                    names.push(quoted);
                }
            }
            let accepted = if fields.is_empty() {
                "none".to_owned()
            } else {
                fields.join(", ")
            };
            let verb = if names.len() == 1 { "is" } else { "are" };
            return Err(ApiError::bad_request(format!(
                "Invalid query parameters: {} {verb} not accepted here; accepted: {accepted}.",
                names.join(", ")
            ))
            .into_response());
        }
        let kept = serde_urlencoded::to_string(&known).map_err(|e| invalid(&e))?;
        serde_urlencoded::from_str(&kept)
            .map(StrictQuery)
            .map_err(|e| invalid(&e))
    }
}
