//! Keystone v3 token bodies and the typed [`Identity`] built from them.
//!
//! The serde types follow the body of `GET /v3/auth/tokens` and
//! `POST /v3/auth/tokens`: `{"token": {"user": ..., "project": ..., ...}}`.
//! Fields a service does not need are not modelled and unknown fields are
//! ignored, so newer Keystone releases still parse.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The body of a token response: `{"token": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenResponse {
    /// The token itself.
    pub token: Token,
}

/// A Keystone v3 token as the identity API describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Token {
    /// The user the token was issued to.
    pub user: TokenUser,
    /// Project scope, when the token is project-scoped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<TokenProject>,
    /// Domain scope, when the token is domain-scoped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<NamedRef>,
    /// System scope, when the token is system-scoped (`{"all": true}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemScope>,
    /// Roles of the token, implied roles included. Empty when unscoped.
    #[serde(default)]
    pub roles: Vec<RoleRef>,
    /// When the token stops being valid, RFC 3339 (`2026-11-24T03:46:51.000000Z`).
    pub expires_at: String,
    /// When the token was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<String>,
    /// Whether the project is the cloud's admin project. Keystone leaves it
    /// out when no admin project is configured, which means `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_admin_project: Option<bool>,
    /// The service catalog, absent with `?nocatalog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<Vec<CatalogService>>,
}

/// The `user` of a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenUser {
    /// User id.
    pub id: String,
    /// User name.
    pub name: String,
    /// The user's domain.
    pub domain: NamedRef,
}

/// The `project` of a project-scoped token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenProject {
    /// Project id.
    pub id: String,
    /// Project name.
    pub name: String,
    /// The project's domain.
    pub domain: NamedRef,
}

/// An id and a name: a domain, or a project's or user's domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NamedRef {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
}

impl NamedRef {
    /// An id and a name.
    #[must_use]
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
        }
    }
}

/// A role of a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RoleRef {
    /// Role id.
    pub id: String,
    /// Role name, what policies check (`reader`, `member`, `admin`).
    pub name: String,
}

/// The `system` scope of a token: `{"all": true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SystemScope {
    /// The whole deployment.
    #[serde(default)]
    pub all: bool,
}

/// One service of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CatalogService {
    /// Service type (`placement`, `compute`, `identity`).
    #[serde(rename = "type")]
    pub service_type: String,
    /// Service name.
    #[serde(default)]
    pub name: String,
    /// Service id.
    #[serde(default)]
    pub id: String,
    /// Its endpoints.
    #[serde(default)]
    pub endpoints: Vec<CatalogEndpoint>,
}

/// One endpoint of a catalog service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CatalogEndpoint {
    /// Endpoint id.
    #[serde(default)]
    pub id: String,
    /// `public`, `internal` or `admin`.
    pub interface: String,
    /// Region id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_id: Option<String>,
    /// Region name (same as the id in current Keystone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Base URL.
    pub url: String,
}

/// A token body that cannot become an [`Identity`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTokenBody {
    reason: &'static str,
}

impl fmt::Display for InvalidTokenBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid token body: {}", self.reason)
    }
}

impl std::error::Error for InvalidTokenBody {}

/// What a token is scoped to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// A project (the usual scope of a service's users).
    Project {
        /// Project id and name.
        project: NamedRef,
        /// The project's domain.
        domain: NamedRef,
    },
    /// A domain.
    Domain(NamedRef),
    /// The whole deployment (`OpenStack-System-Scope: all`).
    System,
    /// No scope: the token carries no roles.
    Unscoped,
}

/// Who made a request, from a validated token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// User id.
    pub user_id: String,
    /// User name.
    pub user_name: String,
    /// The user's domain.
    pub user_domain: NamedRef,
    /// What the token is scoped to.
    pub scope: Scope,
    /// Role names, implied roles included, in Keystone's order.
    pub roles: Vec<String>,
    /// Whether the project is the cloud's admin project.
    pub is_admin_project: bool,
    /// When the token expires.
    pub expires_at: OffsetDateTime,
    /// The catalog, when it was asked for.
    pub catalog: Option<Vec<CatalogService>>,
}

impl Identity {
    /// The project id, for a project-scoped token.
    #[must_use]
    pub fn project_id(&self) -> Option<&str> {
        match &self.scope {
            Scope::Project { project, .. } => Some(&project.id),
            _ => None,
        }
    }

    /// Whether the token is system-scoped.
    #[must_use]
    pub fn is_system_scope(&self) -> bool {
        matches!(self.scope, Scope::System)
    }

    /// Whether the token has the role `name` (case-insensitive, as oslo.policy).
    #[must_use]
    pub fn has_role(&self, name: &str) -> bool {
        self.roles.iter().any(|r| r.eq_ignore_ascii_case(name))
    }

    /// Whether the token has expired at `now`.
    #[must_use]
    pub fn is_expired_at(&self, now: OffsetDateTime) -> bool {
        self.expires_at <= now
    }

    /// Whether the token has expired now.
    #[must_use]
    pub fn is_expired(&self) -> bool {
        self.is_expired_at(OffsetDateTime::now_utc())
    }
}

impl TryFrom<Token> for Identity {
    type Error = InvalidTokenBody;

    fn try_from(token: Token) -> Result<Self, Self::Error> {
        let expires_at = parse_time(&token.expires_at)?;
        let scope = match (token.project, token.domain, token.system) {
            (Some(p), None, None) => Scope::Project {
                project: NamedRef::new(p.id, p.name),
                domain: p.domain,
            },
            (None, Some(d), None) => Scope::Domain(d),
            (None, None, Some(s)) if s.all => Scope::System,
            (None, None, Some(_)) => {
                return Err(InvalidTokenBody {
                    reason: "system scope other than all",
                });
            }
            (None, None, None) => Scope::Unscoped,
            _ => {
                return Err(InvalidTokenBody {
                    reason: "more than one scope",
                });
            }
        };
        if token.user.id.is_empty() {
            return Err(InvalidTokenBody {
                reason: "empty user id",
            });
        }
        Ok(Self {
            user_id: token.user.id,
            user_name: token.user.name,
            user_domain: token.user.domain,
            scope,
            roles: token.roles.into_iter().map(|r| r.name).collect(),
            is_admin_project: token.is_admin_project.unwrap_or(true),
            expires_at,
            catalog: token.catalog,
        })
    }
}

/// Parses Keystone's `expires_at` (RFC 3339, fractional seconds, `Z`).
pub(crate) fn parse_time(s: &str) -> Result<OffsetDateTime, InvalidTokenBody> {
    OffsetDateTime::parse(s, &Rfc3339).map_err(|_| InvalidTokenBody {
        reason: "expires_at is not an RFC 3339 time",
    })
}

/// The identity of a request: the user's token and, when the request also
/// carried a valid `X-Service-Token`, the calling service's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestIdentity {
    /// From `X-Auth-Token`.
    pub user: std::sync::Arc<Identity>,
    /// From `X-Service-Token`, when present and valid.
    pub service: Option<std::sync::Arc<Identity>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROJECT_TOKEN: &str = r#"{"token": {
        "methods": ["password"],
        "user": {"id": "u1", "name": "alice", "domain": {"id": "default", "name": "Default"},
                 "password_expires_at": null},
        "audit_ids": ["x"],
        "expires_at": "2036-11-24T03:46:51.000000Z",
        "issued_at": "2026-11-24T02:46:51.000000Z",
        "project": {"id": "p1", "name": "demo", "domain": {"id": "default", "name": "Default"}},
        "is_domain": false,
        "roles": [{"id": "r1", "name": "reader"}, {"id": "r2", "name": "member"}],
        "is_admin_project": false
    }}"#;

    fn parse(body: &str) -> Result<Identity, InvalidTokenBody> {
        let t: TokenResponse = serde_json::from_str(body).unwrap();
        Identity::try_from(t.token)
    }

    #[test]
    fn project_token_becomes_project_identity() {
        let id = parse(PROJECT_TOKEN).unwrap();
        assert_eq!(id.user_id, "u1");
        assert_eq!(id.user_domain, NamedRef::new("default", "Default"));
        assert_eq!(id.project_id(), Some("p1"));
        assert_eq!(id.roles, ["reader", "member"]);
        assert!(!id.is_admin_project);
        assert!(id.has_role("MEMBER"));
        assert!(!id.has_role("admin"));
        assert_eq!(id.expires_at.year(), 2036);
        assert!(!id.is_expired());
        assert!(id.catalog.is_none());
    }

    #[test]
    fn system_and_domain_scopes() {
        let sys = PROJECT_TOKEN.replace(
            r#""project": {"id": "p1", "name": "demo", "domain": {"id": "default", "name": "Default"}},"#,
            r#""system": {"all": true},"#,
        );
        let id = parse(&sys).unwrap();
        assert!(id.is_system_scope());
        assert_eq!(id.project_id(), None);
        let dom = PROJECT_TOKEN.replace(
            r#""project": {"id": "p1", "name": "demo", "domain": {"id": "default", "name": "Default"}},"#,
            r#""domain": {"id": "d1", "name": "D"},"#,
        );
        assert_eq!(
            parse(&dom).unwrap().scope,
            Scope::Domain(NamedRef::new("d1", "D"))
        );
    }

    #[test]
    fn missing_admin_project_flag_means_true() {
        let body = PROJECT_TOKEN.replace(
            r#",
        "is_admin_project": false"#,
            "",
        );
        assert!(!body.contains("is_admin_project"));
        assert!(parse(&body).unwrap().is_admin_project);
    }

    #[test]
    fn bad_bodies_are_errors_not_panics() {
        let bad_time = PROJECT_TOKEN.replace("2036-11-24T03:46:51.000000Z", "tomorrow");
        assert!(parse(&bad_time).is_err());
        let two_scopes =
            PROJECT_TOKEN.replace(r#""is_domain": false"#, r#""system": {"all": true}"#);
        assert_eq!(
            parse(&two_scopes).unwrap_err().to_string(),
            "invalid token body: more than one scope"
        );
        let missing_user = r#"{"token": {"expires_at": "2036-11-24T03:46:51Z"}}"#;
        assert!(serde_json::from_str::<TokenResponse>(missing_user).is_err());
    }

    #[test]
    fn catalog_parses() {
        let body = PROJECT_TOKEN.replace(
            r#""is_domain": false"#,
            r#""catalog": [{"type": "placement", "name": "placement", "id": "s1",
                "endpoints": [{"id": "e1", "interface": "public", "region_id": "RegionOne",
                               "region": "RegionOne", "url": "http://127.0.0.1/placement"}]}]"#,
        );
        let id = parse(&body).unwrap();
        let cat = id.catalog.unwrap();
        assert_eq!(cat[0].service_type, "placement");
        assert_eq!(cat[0].endpoints[0].interface, "public");
    }

    proptest::proptest! {
        #[test]
        fn any_expiry_text_is_an_error_or_a_time(expires in ".*") {
            let body = PROJECT_TOKEN.replace("2036-11-24T03:46:51.000000Z", &expires.replace(['"', '\\'], ""));
            if let Ok(t) = serde_json::from_str::<TokenResponse>(&body) {
                let _ = Identity::try_from(t.token);
            }
        }

        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            if let Ok(t) = serde_json::from_slice::<TokenResponse>(&bytes) {
                let _ = Identity::try_from(t.token);
            }
        }
    }
}
