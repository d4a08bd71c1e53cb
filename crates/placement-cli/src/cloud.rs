//! The cloud the command works with: osc's `--os-*` options, the `OS_*`
//! variables and clouds.yaml, through the client crate's
//! [`CloudArgs`] and [`Cloud`].

use std::time::Duration;

use microversion_client::cli::CloudArgs;
use microversion_client::cloud::Cloud;

use crate::error::Error;

/// The `User-Agent` of every request.
const USER_AGENT: &str = concat!("placement-cli/", env!("CARGO_PKG_VERSION"));

/// Variables that, alone, say a cloud is configured.
const CLOUD_VARS: &[&str] = &["OS_CLOUD", "OS_AUTH_URL", "OS_AUTH_TYPE", "OS_ENDPOINT"];

/// The cloud of the command line and environment, if one is named (by an
/// option, or by one of `OS_CLOUD`, `OS_AUTH_URL`, `OS_AUTH_TYPE`,
/// `OS_ENDPOINT`); checked before any request.
pub(crate) fn load(args: &CloudArgs, timeout: Duration) -> Result<Option<Cloud>, Error> {
    let from_env = CLOUD_VARS
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
