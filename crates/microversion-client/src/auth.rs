//! [`Auth`]: the token a [`Client`](crate::Client) sends, from a Keystone
//! [`Session`] (renewed before it expires, got again once after a 401) or
//! fixed (`admin_token`).

use std::fmt;
use std::sync::Arc;

use http::HeaderValue;
use keystone_auth::session::{Session, UserToken};

use crate::error::Error;

/// The header tokens travel in.
pub(crate) const X_AUTH_TOKEN: &str = "x-auth-token";

/// How a client authenticates its requests: its `X-Auth-Token`.
///
/// Cheap to clone; clones (and the clients given one) share the session,
/// so concurrent requests cause one authentication.
///
/// ```
/// use microversion_client::Auth;
///
/// // admin_token: a fixed token, no Keystone.
/// let auth = Auth::fixed_token("admin")?;
/// assert!(!format!("{auth:?}").contains("admin"));
/// assert!(Auth::fixed_token("two\nlines").is_err());
/// # Ok::<(), microversion_client::Error>(())
/// ```
#[derive(Clone)]
pub struct Auth(Kind);

#[derive(Clone)]
enum Kind {
    Session(Session),
    Fixed(HeaderValue),
}

/// The token a request carries, and what it came from.
#[derive(Clone)]
pub(crate) struct Credential {
    pub(crate) value: HeaderValue,
    token: Option<Arc<UserToken>>,
}

impl Auth {
    /// Tokens from Keystone, through `session`.
    #[must_use]
    pub fn session(session: Session) -> Self {
        Self(Kind::Session(session))
    }

    /// A fixed token (osc's `admin_token`).
    ///
    /// # Errors
    ///
    /// A builder error when the token cannot be sent in a header.
    pub fn fixed_token(token: &str) -> Result<Self, Error> {
        let mut value = HeaderValue::try_from(token.trim())
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| Error::builder("the token is empty or cannot be sent in a header"))?;
        value.set_sensitive(true);
        Ok(Self(Kind::Fixed(value)))
    }

    /// The Keystone session, if the tokens come from one.
    #[must_use]
    pub fn keystone_session(&self) -> Option<&Session> {
        match &self.0 {
            Kind::Session(session) => Some(session),
            Kind::Fixed(_) => None,
        }
    }

    /// The token to send now: the session's current one (got or renewed
    /// when needed), or the fixed one.
    pub(crate) async fn credential(&self) -> Result<Credential, Error> {
        match &self.0 {
            Kind::Fixed(value) => Ok(Credential {
                value: value.clone(),
                token: None,
            }),
            Kind::Session(session) => {
                let token = session.token().await.map_err(Error::auth)?;
                Ok(Credential {
                    value: token.header_value().clone(),
                    token: Some(token),
                })
            }
        }
    }

    /// A service answered 401 to `used`: forgets it. Whether getting a
    /// new one may help (not for a fixed token).
    pub(crate) fn refused(&self, used: &Credential) -> bool {
        match (&self.0, &used.token) {
            (Kind::Session(session), Some(token)) => {
                tracing::info!("the service refused the token (401): authenticating again");
                session.invalidate(token);
                true
            }
            _ => false,
        }
    }
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Session(session) => f.debug_tuple("Auth::Session").field(session).finish(),
            Kind::Fixed(_) => f.write_str("Auth::Fixed(***)"),
        }
    }
}
