//! The cloud a command works with: osc's `--os-*` options, the `OS_*`
//! variables and clouds.yaml, through the client crate's
//! [`ConfigLoader`] and [`Cloud`].

use std::time::Duration;

use crate::error::Error;
use crate::net::USER_AGENT;
use microversion_client::cli::CloudArgs;
use microversion_client::cloud::Cloud;

/// Variables that, alone, say a cloud is configured.
const CLOUD_VARS: &[&str] = &["OS_CLOUD", "OS_AUTH_URL", "OS_AUTH_TYPE", "OS_ENDPOINT"];

/// When a command may use the cloud of the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// Only when the command line names a cloud or a credential: commands
    /// given URLs never send a token of the environment to them unasked.
    Explicit,
    /// Also when `OS_CLOUD`, `OS_AUTH_URL`, `OS_AUTH_TYPE` or
    /// `OS_ENDPOINT` is set: commands that find endpoints in the catalog.
    Environment,
}

/// The cloud of the command line and environment, if one is named;
/// checked before any request.
pub(crate) fn load(
    args: &CloudArgs,
    need: Need,
    timeout: Duration,
) -> Result<Option<Cloud>, Error> {
    let from_env = need == Need::Environment
        && CLOUD_VARS
            .iter()
            .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if !args.given() && !from_env {
        return Ok(None);
    }
    let config = args
        .loader()
        .load()
        .map_err(|e| Error::new(format!("invalid cloud configuration: {e}")))?;
    let http = Cloud::http_client_builder(&config)
        .map_err(Error::from_client)?
        .timeout(timeout)
        .connect_timeout(timeout)
        .user_agent(USER_AGENT)
        .build()
        .map_err(|e| Error::with_source("cannot build the HTTP client", e))?;
    Cloud::with_http_client(config, http)
        .map(Some)
        .map_err(Error::from_client)
}

/// The cloud, which the command cannot do without.
pub(crate) fn require(args: &CloudArgs, timeout: Duration, what: &str) -> Result<Cloud, Error> {
    load(args, Need::Environment, timeout)?.ok_or_else(|| {
        Error::new(format!(
            "{what} needs a cloud: --os-cloud NAME (or OS_CLOUD) from clouds.yaml, or \
             --os-auth-url (or OS_AUTH_URL) and the other credentials"
        ))
    })
}
