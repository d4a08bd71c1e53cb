//! [`Error`]: why a command could not do its work, before or instead of
//! the request (exit code 2, or 1 when Keystone refused the credentials):
//! the client crate's
//! [`CommandError`](microversion_client::cli::CommandError), which the
//! `microversion` command shares.

pub(crate) use microversion_client::cli::CommandError as Error;
