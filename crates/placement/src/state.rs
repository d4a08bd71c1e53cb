//! The application's state: what every handler can reach (the
//! database, the settings, the policy, the versions document, the
//! Keystone layer, the metrics), made once when the service starts.

use std::sync::Arc;

use microversion_server::{Discovery, Microversions};

use crate::config::{AuthStrategy, Config, NOAUTH2_WARNING};
use crate::context::RequestContext;
use crate::db::Store;
use crate::error::Error;
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
    /// The versioning: the code's range and the range served of it
    /// (`[microversions]`, reloaded on SIGHUP). One value for the layer,
    /// the documents and the metrics, so that all follow a reload.
    pub api: Microversions,
    /// The versions document.
    pub discovery: Discovery,
    /// The versions document as `GET /` sends it.
    pub(crate) versions_body: Arc<crate::versioning::VersionsBody>,
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
                // Under the logger name it always had (the state was
                // made in `app` before): log filters may name it.
                tracing::warn!(target: "placement::app", "{NOAUTH2_WARNING}");
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
        // Counting only feeds the metrics: without them the layer skips it.
        let api = crate::versioning::build(config.metrics_bind.is_some(), config.microversions)?;
        let discovery = crate::versioning::discovery(&api)?;
        let versions_body = Arc::new(crate::versioning::VersionsBody::new(
            api.clone(),
            discovery.clone(),
        ));
        let metrics = config
            .metrics_bind
            .map(|_| crate::metrics::Metrics::new(api.clone(), store.clone(), keystone.clone()));
        Ok(AppState {
            store,
            config: Arc::new(config),
            policy: Arc::new(policy),
            api,
            discovery,
            versions_body,
            keystone,
            metrics,
            candidate_searches: Arc::new(tokio::sync::Semaphore::new(cores)),
            cores,
        })
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
