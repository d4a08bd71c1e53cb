//! The application: state, routes and middleware.

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use microversion::VersionStatus;
use microversion_server::telemetry::HttpMetricsLayer;
use microversion_server::{
    ApiVersionSpec, BuildError, Discovery, MicroversionLayer, Microversions, Profile,
    VersionedRouter,
};
use tower::ServiceBuilder;

use crate::config::{AuthStrategy, Config, NOAUTH2_WARNING};
use crate::context::RequestContext;
use crate::db::Store;
use crate::error::Error;
use crate::handlers::{self, RequestSchemas, RouterState};
use crate::policy::{Action, LivePolicy, Target};

/// What every handler can reach.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// The settings.
    pub config: Arc<Config>,
    /// The policy in force, reloaded when its file changes.
    pub policy: Arc<LivePolicy>,
    /// The versions document.
    pub discovery: Discovery,
    /// The versions document as `GET /` sends it, serialized once.
    pub(crate) versions_body: bytes::Bytes,
    /// The Keystone layer (with its token cache), when the auth strategy
    /// is `keystone`.
    pub(crate) keystone: Option<keystone_auth::KeystoneAuthLayer>,
    /// The metrics, when `[metrics] bind` turns them on.
    pub metrics: Option<crate::metrics::Metrics>,
    /// Allocation candidate searches that may run at once (one per core):
    /// each holds megabytes while it runs and is bound by the cores, so
    /// more at once add memory, not answers (docs/decisions.md).
    pub(crate) candidate_searches: Arc<tokio::sync::Semaphore>,
    /// The cores this process may run on.
    pub(crate) cores: usize,
}

impl AppState {
    /// Connects to the configured database and loads the policy.
    ///
    /// With the keystone strategy (the default) the `[keystone_authtoken]`
    /// settings are required: without them the service refuses to start
    /// rather than serve open. noauth2 is logged at warning level.
    ///
    /// # Errors
    ///
    /// Fails when the keystone strategy has no settings, the database
    /// cannot be reached or the policy file is invalid.
    pub async fn new(config: Config) -> anyhow::Result<AppState> {
        config.check_auth()?;
        let keystone = match config.auth_strategy {
            AuthStrategy::Keystone => config
                .keystone
                .as_ref()
                .map(crate::auth::keystone_layer)
                .transpose()?,
            AuthStrategy::Noauth2 => {
                tracing::warn!("{NOAUTH2_WARNING}");
                None
            }
        };
        let policy = LivePolicy::load(
            config.enforce_new_defaults,
            config.enforce_scope,
            config.policy_file.as_deref(),
        )?;
        let store = Store::connect_with(&config.database, &config.database_pool).await?;
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let discovery = discovery()?;
        // As the handler serialized it per request before: through a
        // `Value`, so the bytes stay the same.
        let versions_body = serde_json::to_vec(&serde_json::to_value(discovery.document(None))?)?;
        let metrics = match config.metrics_bind {
            Some(_) => Some(crate::metrics::Metrics::new(
                versioning(true)?,
                store.clone(),
                keystone.clone(),
            )),
            None => None,
        };
        Ok(AppState {
            store,
            config: Arc::new(config),
            policy: Arc::new(policy),
            discovery,
            versions_body: versions_body.into(),
            keystone,
            metrics,
            candidate_searches: Arc::new(tokio::sync::Semaphore::new(cores)),
            cores,
        })
    }

    /// The service ready to serve `config`: the state on its database
    /// ([`AppState::new`]); when the auth strategy is `keystone`, the
    /// service user's token got once (see below); the schema created or
    /// checked and the standard resource classes and traits added; and
    /// the routes ([`router`]). What `placement-api` serves, and what the
    /// tests, the fuzz targets and the benchmarks run in process.
    ///
    /// Credentials Keystone refuses, or a catalog without the configured
    /// identity endpoint, stop the start with the reason instead of
    /// turning every request into a 503; a Keystone that cannot be
    /// reached does not (the service answers 503 until it can). Services
    /// starting at once on one database race to add the standard rows:
    /// the loser tries again (five times at most, 50 ms apart) and finds
    /// them there.
    ///
    /// # Errors
    ///
    /// Fails when the database cannot be reached or is not one this
    /// service can use, the policy file is invalid, Keystone refuses the
    /// service user, or the routes are inconsistent.
    pub async fn ready(config: Config) -> anyhow::Result<(AppState, Router)> {
        let state = AppState::new(config).await?;
        if let Some(keystone) = &state.keystone {
            check_keystone(keystone).await?;
        }
        crate::db::schema::sync(&state.store).await?;
        let mut synced = crate::db::standard::sync(&state.store).await;
        for _ in 0..5 {
            if synced.is_ok() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            synced = crate::db::standard::sync(&state.store).await;
        }
        synced?;
        let router = router(state.clone())?;
        Ok((state, router))
    }

    /// Checks `action` for the caller against the caller's own project
    /// and user.
    pub(crate) fn authorize(&self, ctx: &RequestContext, action: Action) -> Result<(), Error> {
        self.authorize_on(ctx, action, &Target::of_caller(ctx))
    }

    /// Checks `action` for the caller against `target`.
    pub(crate) fn authorize_on(
        &self,
        ctx: &RequestContext,
        action: Action,
        target: &Target,
    ) -> Result<(), Error> {
        Ok(self.policy.current().authorize(action, ctx, target)?)
    }
}

/// Gets the service's own token once before serving (see
/// [`AppState::ready`]).
async fn check_keystone(layer: &keystone_auth::KeystoneAuthLayer) -> anyhow::Result<()> {
    use keystone_auth::ErrorKind;
    match layer.cache().client().authenticate().await {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::Connect | ErrorKind::Timeout) => {
            eprintln!(
                "placement-api: warning: {e}; serving anyway, requests needing a token get 503 until it answers"
            );
            Ok(())
        }
        Err(e) => Err(anyhow::Error::new(e)
            .context("[keystone_authtoken]: the service user could not get its token")),
    }
}

/// The longest query string a request may carry, in bytes as sent
/// (percent-encoded): 32 KiB. Apache's and nginx's default limits on a
/// whole request line are 8 KiB, so no client of a Placement deployed
/// behind either ever sent more; Nova's largest requests (many request
/// groups, `member_of=in:` lists of aggregates) stay within a few KiB.
/// Half of the 64 KiB URI that the HTTP server (hyper) takes at all: a
/// longer query string is answered 414 with an errors body, up to that
/// cap, and past it by the HTTP server with an empty 414.
pub const MAX_QUERY_STRING_BYTES: usize = 32 * 1024;

/// The most parameters (`name=value` pairs, blank ones not counted) a
/// query string may carry: 1,000, against 14 at most in upstream's own
/// tests and about four per request group in Nova's requests.
pub const MAX_QUERY_PARAMS: usize = 1_000;

/// The most request groups of one `GET /allocation_candidates`: the
/// unsuffixed group and one per suffix of `resources`, `required`,
/// `member_of` and `in_tree`. Each group costs a read of every provider
/// with room for each of its classes, and multiplies the combinations;
/// Nova asks one per flavor group, port resource request, PCI device and
/// accelerator, dozens at the very most.
pub const MAX_REQUEST_GROUPS: usize = 128;

/// The service type of Placement.
pub const SERVICE_TYPE: &str = "placement";

/// The versioning of the API: Placement's profile over 1.0 to 1.39.
///
/// # Errors
///
/// Never in practice: the history and profile are fixed.
pub fn microversions() -> Result<Microversions, BuildError> {
    versioning(true)
}

/// [`microversions`], counting negotiations for the metrics or not.
fn versioning(count_requests: bool) -> Result<Microversions, BuildError> {
    let history = crate::history::history()?;
    Microversions::builder(SERVICE_TYPE, history.range())
        .profile(Profile::Placement)
        .count_requests(count_requests)
        .build()
}

/// The application's routes behind the microversion layer, with every
/// request schema compiled.
///
/// # Errors
///
/// Fails when the routes or schemas are inconsistent (overlapping
/// version ranges, a schema that is not valid JSON Schema): a programming
/// error found at start-up.
pub fn router(state: AppState) -> Result<Router, BuildError> {
    // Counting only feeds the metrics: without them the layer skips it.
    let metrics = state.metrics.clone();
    let api = match &metrics {
        Some(metrics) => metrics.api.clone(),
        None => versioning(false)?,
    };
    let limit = state.config.max_body_size;
    let mount = crate::proxy::Mount::of(&state.config);
    let state_cors = state.config.cors.clone();
    let keystone = state.keystone.clone();
    let request_log = crate::requestlog::enabled().then_some(if keystone.is_some() {
        crate::requestlog::Identities::Keystone
    } else {
        crate::requestlog::Identities::Noauth2
    });
    let noauth2 = keystone
        .is_none()
        .then(|| middleware::from_fn(crate::auth::noauth2));
    let log_caller = request_log.is_some();
    let keystone_context = keystone.is_some().then(|| {
        middleware::from_fn(move |req, next| crate::auth::keystone_context(log_caller, req, next))
    });
    let database_gate = state.store.health().map(|health| {
        let health = Arc::clone(health);
        middleware::from_fn(move |req, next| database_gate(Arc::clone(&health), req, next))
    });
    let documents = crate::openapi::served(&state.config)?;
    let schemas = Arc::new(RequestSchemas::build()?);
    let routes = handlers::routes(VersionedRouter::new())
        .build()?
        .with_state(RouterState {
            app: state,
            schemas,
        });
    // Outside everything, as upstream puts oslo.middleware's CORS: a
    // preflight is answered before authentication or versioning.
    let cors = state_cors.map(|cors| {
        let cors = Arc::new(cors);
        middleware::from_fn(move |req, next| {
            let cors = Arc::clone(&cors);
            async move { crate::cors::cors(&cors, req, next).await }
        })
    });
    // One stack around the whole router, outermost first. `Router::layer`
    // would wrap every route apart, and each request would pay a clone of
    // the wrapped route and a boxed future for every layer.
    let stack = ServiceBuilder::new()
        .option_layer(cors)
        // The body is read before a version or auth check can refuse the
        // request.
        .layer(middleware::from_fn(move |req, next| {
            read_body(limit, req, next)
        }))
        // Keystone's refusals come before the version is looked at, as
        // keystonemiddleware sits outside upstream's microversion
        // middleware; so does the context of the identity it found (the
        // request log shows it for a refused version too).
        .option_layer(keystone)
        .option_layer(keystone_context)
        .layer(MicroversionLayer::new(api))
        .option_layer(noauth2)
        .layer(middleware::from_fn(refuse_large_body))
        .layer(middleware::from_fn(refuse_large_query))
        .layer(middleware::from_fn(require_content_type))
        .option_layer(database_gate)
        .service(routes);
    let app = documents.unwrap_or_default().fallback_service(stack);
    if metrics.is_none() && request_log.is_none() && mount.is_none() {
        return Ok(app);
    }
    // Outside everything that answers, the OpenAPI documents too: the
    // mount (proxy headers and root path: the paths inside are the
    // service's own), the request log (outside CORS, as upstream's) and
    // the counters.
    let outer = ServiceBuilder::new()
        .option_layer(mount.map(|mount| {
            middleware::from_fn(move |req, next| crate::proxy::mount(Arc::clone(&mount), req, next))
        }))
        .option_layer(metrics.map(|m| HttpMetricsLayer::new(m.api.telemetry().clone())))
        .option_layer(request_log.map(|identities| {
            middleware::from_fn(move |req, next| crate::requestlog::log(identities, req, next))
        }))
        .service(app);
    Ok(Router::new().fallback_service(outer))
}

/// The versions document of `GET /`: one API version, `v1.0`, whose
/// `self` link is the empty relative URL, as upstream writes it.
///
/// # Errors
///
/// Never in practice.
pub fn discovery() -> Result<Discovery, BuildError> {
    let api = microversions()?;
    Discovery::builder()
        .version(
            ApiVersionSpec::new(
                format!("v{}", api.range().min()),
                "/",
                VersionStatus::Current,
            )
            .microversions(api.range())
            .literal_self_href(""),
        )
        .build()
}

/// While the database server is known to be unreachable, a request that
/// would use it is answered 503 at once, and one waiting for it when it
/// becomes so is answered 503 then, instead of after the pool's acquire
/// timeout. A request that meets the database unreachable, or takes
/// longer than [`PROBE_SLOW_REQUEST`], has it probed (see
/// [`crate::db::Health`]): after a crash of the server, the first request
/// may find only a pool retrying refused connections. `GET /` (the
/// versions document) does not use the database and is served as usual.
async fn database_gate(
    health: Arc<crate::db::Health>,
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use crate::error::{DatabaseUnreachable, unreachable_response};
    if req.uri().path() == "/" {
        return next.run(req).await;
    }
    if health.is_down() {
        return unreachable_response();
    }
    let work = next.run(req);
    let went_down = health.went_down();
    let slow = tokio::time::sleep(PROBE_SLOW_REQUEST);
    tokio::pin!(work, went_down, slow);
    let mut probed = false;
    let response = loop {
        tokio::select! {
            response = &mut work => break response,
            // The request's work is dropped: its transaction, if any, is
            // rolled back by the server when the connection goes.
            () = &mut went_down => break unreachable_response(),
            () = &mut slow, if !probed => {
                probed = true;
                health.suspect();
            }
        }
    };
    if response.extensions().get::<DatabaseUnreachable>().is_some() {
        health.suspect();
    }
    response
}

/// How long a request runs before the database is probed (a probe is one
/// connection and `SELECT 1`; a slow request on a reachable database
/// goes on as before).
const PROBE_SLOW_REQUEST: std::time::Duration = std::time::Duration::from_secs(1);

/// A request with a body must say what the body is, as upstream checks
/// before any handler: 400 when `Content-Length` is above zero and
/// `Content-Type` is missing or empty.
async fn require_content_type(
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
    let has_body = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > 0);
    let has_type = req
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| !v.as_bytes().iter().all(u8::is_ascii_whitespace));
    if has_body && !has_type {
        return Error::bad_request("content-type header required when content-length > 0")
            .into_response();
    }
    next.run(req).await
}

/// Marks a request whose body was over the limit (and not read whole).
#[derive(Clone, Copy, Debug)]
struct BodyTooLarge(usize);

/// Reads the whole request body, up to `limit` bytes, before anything else
/// looks at the request: a response sent while the body is still unread
/// (a version or auth refusal) makes the HTTP server close the connection
/// without a `Connection: close`, and a keep-alive client's next request
/// on it fails. A body larger than `limit` (by `Content-Length`, or as
/// soon as the bytes of a chunked body pass it) is not read further: the
/// request goes on with an empty body and a [`BodyTooLarge`] mark, which
/// [`refuse_large_body`] answers with 413 inside the microversion layer
/// (so with an errors body), and the response says `Connection: close`.
async fn read_body(
    limit: usize,
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use http::header::CONTENT_LENGTH;
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let (mut parts, body) = req.into_parts();
    let body = if declared.is_some_and(|n| n > limit as u64) {
        None
    } else {
        match axum::body::to_bytes(body, limit).await {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                let source = std::error::Error::source(&e);
                if source
                    .is_some_and(<dyn std::error::Error>::is::<http_body_util::LengthLimitError>)
                {
                    None
                } else {
                    // The client broke the body off.
                    return Error::bad_request(format!("The request body could not be read: {e}"))
                        .into_response();
                }
            }
        }
    };
    let Some(bytes) = body else {
        parts.extensions.insert(BodyTooLarge(limit));
        let req = axum::extract::Request::from_parts(parts, axum::body::Body::empty());
        let mut response = next.run(req).await;
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
        return response;
    };
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
}

/// 413 with an errors body for a request [`read_body`] marked.
async fn refuse_large_body(
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let Some(BodyTooLarge(limit)) = req.extensions().get::<BodyTooLarge>().copied() {
        return Error::new(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body is larger than the limit of {limit} bytes."),
        )
        .into_response();
    }
    next.run(req).await
}

/// Refuses a query string past [`MAX_QUERY_STRING_BYTES`] (414) or with
/// more than [`MAX_QUERY_PARAMS`] parameters (400), with an errors body,
/// before a handler parses it.
async fn refuse_large_query(
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let Err(e) = check_query(req.uri().query()) {
        return e.into_response();
    }
    next.run(req).await
}

/// The bounds of [`refuse_large_query`] on a raw query string.
fn check_query(query: Option<&str>) -> Result<(), Error> {
    let Some(query) = query else {
        return Ok(());
    };
    if query.len() > MAX_QUERY_STRING_BYTES {
        return Err(Error::new(
            http::StatusCode::URI_TOO_LONG,
            format!(
                "The query string is {} bytes long; at most {MAX_QUERY_STRING_BYTES} bytes are accepted.",
                query.len()
            ),
        ));
    }
    // As `QueryParams::parse` splits it: blank parts are no parameter.
    let params = query.split('&').filter(|part| !part.is_empty()).count();
    if params > MAX_QUERY_PARAMS {
        return Err(crate::handlers::query::invalid(&format!(
            "The query string has {params} parameters; at most {MAX_QUERY_PARAMS} are accepted."
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(query: &str) -> Option<(http::StatusCode, String)> {
        match check_query(Some(query)) {
            Ok(()) => None,
            Err(Error::Api(e)) => Some((e.status(), e.detail().to_owned())),
            Err(other) => panic!("unexpected error {other}"),
        }
    }

    #[test]
    fn query_strings_up_to_the_bounds_pass() {
        assert!(check_query(None).is_ok());
        assert_eq!(refusal(""), None);
        assert_eq!(refusal(&"a".repeat(MAX_QUERY_STRING_BYTES)), None);
        let params = vec!["a=1"; MAX_QUERY_PARAMS].join("&");
        assert_eq!(refusal(&params), None);
        // Blank parts are not parameters.
        let blanks = format!("{params}&&&");
        assert_eq!(refusal(&blanks), None);
    }

    #[test]
    fn query_strings_past_the_bounds_are_refused() {
        let long = "a".repeat(MAX_QUERY_STRING_BYTES + 1);
        assert_eq!(
            refusal(&long),
            Some((
                http::StatusCode::URI_TOO_LONG,
                "The query string is 32769 bytes long; at most 32768 bytes are accepted."
                    .to_owned()
            ))
        );
        let many = vec!["a"; MAX_QUERY_PARAMS + 1].join("&");
        assert_eq!(
            refusal(&many),
            Some((
                http::StatusCode::BAD_REQUEST,
                "Invalid query string parameters: The query string has 1001 parameters; \
                 at most 1000 are accepted."
                    .to_owned()
            ))
        );
        // Length is checked first: a long string of many parameters is a 414.
        let both = vec!["a"; MAX_QUERY_STRING_BYTES].join("&");
        assert_eq!(
            refusal(&both).map(|(status, _)| status),
            Some(http::StatusCode::URI_TOO_LONG)
        );
    }
}
