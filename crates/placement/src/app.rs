//! The application: the router assembled from the state
//! ([`crate::state`]), the versioning ([`crate::versioning`]), the
//! middleware (the service's own, authentication, CORS, the request log)
//! and the handlers' routes.

use std::sync::Arc;

use axum::Router;
use axum::middleware::from_fn;
use microversion_server::openapi::{ResponseValidation, ResponseValidationLayer};
use microversion_server::telemetry::HttpMetricsLayer;
use microversion_server::{BuildError, MicroversionLayer, VersionedRouter};
use tower::ServiceBuilder;

use crate::config::Config;
use crate::handlers::{self, RequestSchemas, RouterState};
use crate::middleware;
use crate::state::AppState;

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

/// Gets the service's own token once before serving (see
/// [`ready`]).
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

/// The application's routes behind the microversion layer, with every
/// request schema compiled.
///
/// # Errors
///
/// Fails when the routes or schemas are inconsistent (overlapping
/// version ranges, a schema that is not valid JSON Schema): a programming
/// error found at start-up.
pub fn router(state: AppState) -> Result<Router, BuildError> {
    let metrics = state.metrics.clone();
    let api = state.api.clone();
    let limit = state.config.max_body_size;
    let mount = crate::proxy::Mount::of(&state.config);
    let state_cors = state.config.cors.clone();
    let keystone = state.keystone.clone();
    let log_caller = crate::requestlog::enabled();
    let noauth2_context = keystone
        .is_none()
        .then(|| from_fn(move |req, next| crate::auth::noauth2_context(log_caller, req, next)));
    let require_token = keystone
        .is_none()
        .then(|| from_fn(crate::auth::require_token));
    let keystone_context = keystone
        .is_some()
        .then(|| from_fn(move |req, next| crate::auth::keystone_context(log_caller, req, next)));
    let database_gate = state.store.health().map(|health| {
        let health = Arc::clone(health);
        from_fn(move |req, next| middleware::database_gate(Arc::clone(&health), req, next))
    });
    let documents = crate::openapi::served(&state.config, &api)?;
    // Every answer the service gives at a version, checked against that
    // version's document (`[api] response_validation`; off by default).
    let validation = match state.config.response_validation {
        ResponseValidation::Off => None,
        mode => Some(ResponseValidationLayer::new(
            &crate::openapi::description()?,
            mode,
        )),
    };
    let schemas = Arc::new(RequestSchemas::build()?);
    let routes = handlers::routes(VersionedRouter::new())
        .build_for(&api)?
        .with_state(RouterState {
            app: state,
            schemas,
        });
    // Outside everything, as upstream puts oslo.middleware's CORS: a
    // preflight is answered before authentication or versioning.
    let cors = state_cors.map(|cors| {
        let cors = Arc::new(cors);
        from_fn(move |req, next| {
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
        .layer(from_fn(move |req, next| {
            middleware::read_body(limit, req, next)
        }))
        // Keystone's refusals come before the version is looked at, as
        // keystonemiddleware sits outside upstream's microversion
        // middleware; so does the context of the identity it found (the
        // request log shows it for a refused version too).
        .option_layer(keystone)
        .option_layer(keystone_context)
        .layer(MicroversionLayer::new(api))
        .option_layer(validation)
        // `noauth2`'s refusal comes after the version check (its context
        // is made outside everything, below).
        .option_layer(require_token)
        .layer(from_fn(middleware::refuse_large_body))
        .layer(from_fn(middleware::refuse_large_query))
        .layer(from_fn(middleware::require_content_type))
        .option_layer(database_gate)
        .service(routes);
    let app = documents.unwrap_or_default().fallback_service(stack);
    if metrics.is_none() && !log_caller && mount.is_none() && noauth2_context.is_none() {
        return Ok(app);
    }
    // Outside everything that answers, the OpenAPI documents too: the
    // mount (proxy headers and root path: the paths inside are the
    // service's own), the request log (outside CORS, as upstream's), the
    // counters, and `noauth2`'s context (the log shows its caller for
    // every request, as upstream's).
    let outer = ServiceBuilder::new()
        .option_layer(mount.map(|mount| {
            from_fn(move |req, next| crate::proxy::mount(Arc::clone(&mount), req, next))
        }))
        .option_layer(metrics.map(|m| HttpMetricsLayer::new(m.api.telemetry().clone())))
        .option_layer(log_caller.then(|| from_fn(crate::requestlog::log)))
        .option_layer(noauth2_context)
        .service(app);
    Ok(Router::new().fallback_service(outer))
}
