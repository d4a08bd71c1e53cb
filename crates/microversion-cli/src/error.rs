//! [`Error`]: why a command could not do its work (exit code 2, or 1
//! when Keystone refused the credentials): the client crate's
//! [`CommandError`](microversion_client::cli::CommandError), which the
//! `placement` command shares.

pub use microversion_client::cli::CommandError as Error;

/// `text` followed by the causes from `cause` on, on one line
/// ([`error_chain`](microversion_client::cli::error_chain)).
pub(crate) use microversion_client::cli::error_chain as chain;
