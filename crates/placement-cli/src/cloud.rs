//! The cloud the command works with: osc's `--os-*` options, the `OS_*`
//! variables and clouds.yaml, through the client crate's
//! [`CloudArgs`] and [`Cloud`].

use std::time::Duration;

use microversion_client::cli::CloudArgs;
use microversion_client::cloud::Cloud;

use crate::error::Error;

/// The `User-Agent` of every request.
const USER_AGENT: &str = concat!("placement-cli/", env!("CARGO_PKG_VERSION"));

/// The cloud of the command line and environment, if one is named (by an
/// option, or by one of `OS_CLOUD`, `OS_AUTH_URL`, `OS_AUTH_TYPE`,
/// `OS_ENDPOINT`); checked before any request.
pub(crate) fn load(args: &CloudArgs, timeout: Duration) -> Result<Option<Cloud>, Error> {
    args.load_cloud(true, timeout, USER_AGENT)
}
