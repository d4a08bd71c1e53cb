//! The cloud a command works with: osc's `--os-*` options, the `OS_*`
//! variables and clouds.yaml, through the client crate's
//! [`CloudArgs`] and [`Cloud`].

use std::time::Duration;

use crate::error::Error;
use crate::net::USER_AGENT;
use microversion_client::cli::CloudArgs;
use microversion_client::cloud::Cloud;

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
    args.load_cloud(need == Need::Environment, timeout, USER_AGENT)
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
