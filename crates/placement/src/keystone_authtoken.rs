//! `[keystone_authtoken]`: keystonemiddleware's settings, as upstream's
//! `placement.conf` writes them, read into the Keystone layer's settings.
//!
//! Every key keystonemiddleware and its `password`, `v3password` and
//! `v3applicationcredential` plugins know is accepted, with the old names
//! deployment tools still write (`auth_uri` for `www_authenticate_uri`,
//! `auth_plugin` for `auth_type`, `memcache_servers`). The ones this
//! service does not implement either have no effect here and are named in
//! a warning at startup (memcached: validated tokens are cached in the
//! process; a swift cache, `service_type`), or would change who is let in
//! and are a startup error (a scope other than a project, a trust, token
//! binding, settings in another section). A key keystonemiddleware does
//! not know is named in a warning too, as a misspelt key would otherwise
//! leave a default in force unseen; it does not stop the start, as
//! oslo.config ignores it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use keystone_auth::{DomainSpec, Interface};

/// The settings of `[keystone_authtoken]`.
#[derive(Clone, PartialEq, Eq)]
pub struct KeystoneAuthtoken {
    /// Keystone's URL for the service's own token (`auth_url`).
    pub auth_url: String,
    /// How the service authenticates (`auth_type`).
    pub credential: ServiceCredential,
    /// `user_domain_name` / `user_domain_id` (or `default_domain_*`).
    pub user_domain: Option<DomainSpec>,
    /// `project_domain_name` / `project_domain_id` (or `default_domain_*`).
    pub project_domain: Option<DomainSpec>,
    /// What a 401 names in `WWW-Authenticate` (`auth_url` when unset, as
    /// keystonemiddleware falls back to).
    pub www_authenticate_uri: Option<String>,
    /// The identity endpoint of the catalog that validates tokens
    /// (`interface`, `internal` by default).
    pub interface: Interface,
    /// Its region (`region_name`); any when unset.
    pub region_name: Option<String>,
    /// Seconds a validated token is kept (`token_cache_time`, 300; -1 off).
    pub token_cache_time: i64,
    /// Roles one of which a service token must carry.
    pub service_token_roles: Vec<String>,
    /// Whether a service token without one of them is refused.
    pub service_token_roles_required: bool,
    /// CA certificates for Keystone's TLS (`cafile`).
    pub cafile: Option<PathBuf>,
    /// No TLS verification (`insecure`).
    pub insecure: bool,
    /// A client certificate and its key for Keystone's TLS (`certfile`,
    /// `keyfile`).
    pub client_certificate: Option<(PathBuf, PathBuf)>,
    /// Seconds allowed to connect to Keystone and for each of its answers
    /// (`http_connect_timeout`); keystonemiddleware waits forever when it
    /// is unset, this service 5 s to connect and 10 s for an answer.
    pub http_connect_timeout: Option<u64>,
    /// Resends of a request that could not connect
    /// (`http_request_max_retries`, 3).
    pub http_request_max_retries: u32,
    /// `memcached_servers`: accepted, not used (see [`Self::warnings`]).
    pub memcached_servers: Vec<String>,
    /// Keys set in the file that have no effect here.
    pub without_effect: Vec<String>,
    /// Keys set in the file that keystonemiddleware does not know.
    pub unknown: Vec<String>,
    /// The file the section was read from, for the warnings.
    pub file: PathBuf,
}

/// The service's own credentials.
#[derive(Clone, PartialEq, Eq)]
pub enum ServiceCredential {
    /// `auth_type = password` (or `v3password`): a user, its password and
    /// the project the service token is scoped to.
    Password {
        /// `username` or `user_id`.
        user: Named,
        /// `password`.
        password: String,
        /// `project_name` or `project_id`.
        project: Named,
    },
    /// `auth_type = v3applicationcredential`: an application credential,
    /// which carries its project.
    ApplicationCredential {
        /// `application_credential_id`, or `application_credential_name`.
        credential: Named,
        /// `username` or `user_id`, needed with the credential's name.
        user: Option<Named>,
        /// `application_credential_secret`.
        secret: String,
    },
}

impl fmt::Debug for ServiceCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the password or the secret.
        match self {
            Self::Password { user, project, .. } => f
                .debug_struct("Password")
                .field("user", user)
                .field("project", project)
                .finish_non_exhaustive(),
            Self::ApplicationCredential {
                credential, user, ..
            } => f
                .debug_struct("ApplicationCredential")
                .field("credential", credential)
                .field("user", user)
                .finish_non_exhaustive(),
        }
    }
}

/// A user or project given by name or by id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    /// `username` / `project_name`.
    Name(String),
    /// `user_id` / `project_id`.
    Id(String),
}

impl fmt::Debug for KeystoneAuthtoken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the password.
        f.debug_struct("KeystoneAuthtoken")
            .field("auth_url", &self.auth_url)
            .field("credential", &self.credential)
            .field("interface", &self.interface)
            .field("region_name", &self.region_name)
            .field("token_cache_time", &self.token_cache_time)
            .finish_non_exhaustive()
    }
}

/// Keys of keystonemiddleware that have no effect in this service; a
/// warning at startup names the ones set.
const WITHOUT_EFFECT: &[&str] = &[
    "include_service_catalog",
    "cache",
    "service_type",
    "delay_auth_decision",
    "memcache_security_strategy",
    "memcache_secret_key",
    "memcache_tls_enabled",
    "memcache_tls_cafile",
    "memcache_tls_certfile",
    "memcache_tls_keyfile",
    "memcache_tls_allowed_ciphers",
    "memcache_pool_dead_retry",
    "memcache_pool_maxsize",
    "memcache_pool_socket_timeout",
    "memcache_pool_unused_timeout",
    "memcache_pool_conn_get_timeout",
    "memcache_use_advanced_pool",
    "memcache_sasl_enabled",
    "memcache_username",
    "memcache_password",
];

/// Keys that would change who is let in, and that this service does not
/// implement: refused with the reason.
const REFUSED: &[(&str, &str)] = &[
    (
        "auth_section",
        "put the service user's settings in [keystone_authtoken] itself",
    ),
    (
        "system_scope",
        "the service token is project-scoped: set project_name or project_id",
    ),
    (
        "domain_id",
        "the service token is project-scoped: set project_name or project_id",
    ),
    (
        "domain_name",
        "the service token is project-scoped: set project_name or project_id",
    ),
    ("trust_id", "trust-scoped service tokens are not supported"),
];

impl KeystoneAuthtoken {
    /// Reads the section of `path` (for messages).
    ///
    /// # Errors
    ///
    /// A missing required key, a refused key or a bad value, naming the
    /// file, the section and the key.
    pub fn read(section: &ini::Properties, path: &Path) -> anyhow::Result<KeystoneAuthtoken> {
        let at = |key: &str| format!("{}: [keystone_authtoken] {key}", path.display());
        let mut unknown = Vec::new();
        for (key, _) in section.iter() {
            if let Some((_, why)) = REFUSED.iter().find(|(k, _)| *k == key) {
                bail!("{} is not supported: {why}", at(key));
            }
            let known = KNOWN.contains(&key)
                || WITHOUT_EFFECT.contains(&key)
                || OLD_NAMES.iter().any(|(old, _)| *old == key);
            if !known && !unknown.iter().any(|k| k == key) {
                unknown.push(key.to_owned());
            }
        }
        // A key given twice: the last one counts, as in oslo.config; an
        // old name counts where the new one is not set.
        let value = |key: &str| {
            section
                .get_all(key)
                .last()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let get = |key: &str| {
            value(key).or_else(|| {
                OLD_NAMES
                    .iter()
                    .filter(|(_, new)| *new == key)
                    .find_map(|(old, _)| value(old))
            })
        };
        let required = |key: &str, alternative: &str| {
            get(key).or_else(|| get(alternative)).with_context(|| {
                format!(
                    "{} is required with [api] auth_strategy = keystone (or {alternative})",
                    at(key)
                )
            })
        };
        let boolean = |key: &str, default: bool| -> anyhow::Result<bool> {
            match get(key).map(|v| v.to_ascii_lowercase()) {
                None => Ok(default),
                Some(v) if matches!(v.as_str(), "true" | "1" | "yes" | "on") => Ok(true),
                Some(v) if matches!(v.as_str(), "false" | "0" | "no" | "off") => Ok(false),
                Some(v) => bail!("{} = {v} is not a boolean; use true or false", at(key)),
            }
        };
        let integer = |key: &str| -> anyhow::Result<Option<i64>> {
            get(key)
                .map(|v| {
                    v.parse::<i64>()
                        .with_context(|| format!("{} = {v} is not an integer", at(key)))
                })
                .transpose()
        };
        let domain = |name: &str, id: &str| {
            get(id)
                .map(DomainSpec::Id)
                .or_else(|| get(name).map(DomainSpec::Name))
                .or_else(|| get("default_domain_id").map(DomainSpec::Id))
                .or_else(|| get("default_domain_name").map(DomainSpec::Name))
        };

        let application_credential = match get("auth_type").as_deref() {
            Some("password" | "v3password") => false,
            Some("v3applicationcredential") => true,
            Some(other) => bail!(
                "{} = {other} is not supported; the accepted values are password, v3password and v3applicationcredential",
                at("auth_type")
            ),
            None => bail!(
                "{} is required with [api] auth_strategy = keystone; set it to password",
                at("auth_type")
            ),
        };
        if let Some(version) = get("auth_version") {
            if !matches!(version.as_str(), "v3" | "3" | "v3.0" | "3.0") {
                bail!(
                    "{} = {version} is not supported; only Keystone's v3 API is",
                    at("auth_version")
                );
            }
        }
        if let Some(bind) = get("enforce_token_bind") {
            if !matches!(bind.as_str(), "disabled" | "permissive") {
                bail!(
                    "{} = {bind} is not supported; token binding is not checked, so only disabled or permissive are accepted",
                    at("enforce_token_bind")
                );
            }
        }
        let named = |id: &str, name: &str| {
            get(id)
                .map(Named::Id)
                .or_else(|| get(name).map(Named::Name))
        };
        let credential = if application_credential {
            let credential = named("application_credential_id", "application_credential_name")
                .with_context(|| {
                    format!(
                        "{} (or application_credential_name) is required with auth_type = v3applicationcredential",
                        at("application_credential_id")
                    )
                })?;
            let secret = section
                .get_all("application_credential_secret")
                .last()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .with_context(|| {
                    format!(
                        "{} is required with auth_type = v3applicationcredential",
                        at("application_credential_secret")
                    )
                })?;
            let user = named("user_id", "username");
            if matches!(credential, Named::Name(_)) && user.is_none() {
                bail!(
                    "{} (or user_id) is required with application_credential_name",
                    at("username")
                );
            }
            ServiceCredential::ApplicationCredential {
                credential,
                user,
                secret,
            }
        } else {
            let user = match get("user_id") {
                Some(id) => Named::Id(id),
                None => Named::Name(required("username", "user_id")?),
            };
            let project = match get("project_id") {
                Some(id) => Named::Id(id),
                None => Named::Name(required("project_name", "project_id")?),
            };
            let password = section
                .get_all("password")
                .last()
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .with_context(|| {
                    format!(
                        "{} is required with [api] auth_strategy = keystone",
                        at("password")
                    )
                })?;
            ServiceCredential::Password {
                user,
                password,
                project,
            }
        };
        let user_domain = domain("user_domain_name", "user_domain_id");
        let by_user_name = match &credential {
            ServiceCredential::Password { user, .. } => matches!(user, Named::Name(_)),
            ServiceCredential::ApplicationCredential {
                credential: Named::Name(_),
                user,
                ..
            } => matches!(user, Some(Named::Name(_))),
            ServiceCredential::ApplicationCredential { .. } => false,
        };
        if by_user_name && user_domain.is_none() {
            bail!(
                "{} (or user_domain_id) is required with username",
                at("user_domain_name")
            );
        }
        let project_domain = domain("project_domain_name", "project_domain_id");
        let by_project_name = matches!(
            &credential,
            ServiceCredential::Password {
                project: Named::Name(_),
                ..
            }
        );
        if by_project_name && project_domain.is_none() {
            bail!(
                "{} (or project_domain_id) is required with project_name",
                at("project_domain_name")
            );
        }
        let relative_to_file = |file: String| {
            let file = PathBuf::from(file);
            match (file.is_relative(), path.parent()) {
                (true, Some(dir)) => dir.join(file),
                _ => file,
            }
        };
        let client_certificate = match (get("certfile"), get("keyfile")) {
            (Some(cert), Some(key)) => Some((relative_to_file(cert), relative_to_file(key))),
            (None, None) => None,
            (Some(_), None) => bail!("{} is required with certfile", at("keyfile")),
            (None, Some(_)) => bail!("{} is required with keyfile", at("certfile")),
        };
        let interface = match get("interface") {
            Some(v) => v.parse::<Interface>().map_err(|_| {
                anyhow::anyhow!("{} = {v} is not public, internal or admin", at("interface"))
            })?,
            None => Interface::Internal,
        };
        let token_cache_time = integer("token_cache_time")?.unwrap_or(300);
        if token_cache_time < -1 {
            bail!(
                "{} = {token_cache_time} is not -1 (off) or a number of seconds",
                at("token_cache_time")
            );
        }
        let http_connect_timeout = match integer("http_connect_timeout")? {
            None => None,
            Some(t) if t > 0 => Some(t.unsigned_abs()),
            Some(t) => bail!(
                "{} = {t} is not a positive number of seconds",
                at("http_connect_timeout")
            ),
        };
        let http_request_max_retries = match integer("http_request_max_retries")? {
            None => 3,
            Some(n) => u32::try_from(n).with_context(|| {
                format!(
                    "{} = {n} is not a non-negative integer",
                    at("http_request_max_retries")
                )
            })?,
        };
        let list = |key: &str| -> Option<Vec<String>> {
            get(key).map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
        };
        let cafile = get("cafile").map(relative_to_file);
        Ok(KeystoneAuthtoken {
            auth_url: required("auth_url", "auth_url")?,
            credential,
            user_domain,
            project_domain,
            www_authenticate_uri: get("www_authenticate_uri"),
            interface,
            region_name: get("region_name"),
            token_cache_time,
            service_token_roles: list("service_token_roles")
                .unwrap_or_else(|| vec!["service".to_owned()]),
            service_token_roles_required: boolean("service_token_roles_required", true)?,
            cafile,
            insecure: boolean("insecure", false)?,
            client_certificate,
            http_connect_timeout,
            http_request_max_retries,
            memcached_servers: list("memcached_servers").unwrap_or_default(),
            without_effect: WITHOUT_EFFECT
                .iter()
                .filter(|k| section.contains_key(k))
                .map(|k| (*k).to_owned())
                .collect(),
            unknown,
            file: path.to_owned(),
        })
    }

    /// What the operator should hear at startup: settings accepted that
    /// change nothing here.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if !self.memcached_servers.is_empty() {
            warnings.push(format!(
                "[keystone_authtoken] memcached_servers = {} is not used: placement-api keeps validated tokens in its own memory, one cache per process (token_cache_time still applies)",
                self.memcached_servers.join(",")
            ));
        }
        if !self.without_effect.is_empty() {
            warnings.push(format!(
                "[keystone_authtoken] {} {} no effect in placement-api",
                self.without_effect.join(", "),
                if self.without_effect.len() == 1 {
                    "has"
                } else {
                    "have"
                }
            ));
        }
        for key in &self.unknown {
            warnings.push(format!(
                "{}: [keystone_authtoken] {key} is not a keystonemiddleware setting: ignored",
                self.file.display()
            ));
        }
        if self.www_authenticate_uri.is_none() {
            warnings.push(format!(
                "[keystone_authtoken] www_authenticate_uri is not set; 401 answers name auth_url ({}), which should be Keystone's public endpoint",
                self.auth_url
            ));
        }
        warnings
    }

    /// The Keystone client these settings describe.
    ///
    /// # Errors
    ///
    /// A setting the client refuses (a bad URL, an unreadable `cafile`),
    /// named.
    pub fn client(&self) -> Result<keystone_auth::KeystoneClient, keystone_auth::ConfigError> {
        let mut builder = keystone_auth::KeystoneClient::builder()
            .auth_url(&self.auth_url)
            .interface(self.interface)
            // Only X-Service-Catalog would carry it, and placement-api
            // writes no identity headers.
            .include_catalog(false)
            .max_retries(self.http_request_max_retries);
        if let Some(region) = &self.region_name {
            builder = builder.region_name(region);
        }
        let user = match &self.credential {
            ServiceCredential::Password {
                user,
                password,
                project,
            } => {
                builder = builder.password(password);
                builder = match project {
                    Named::Name(name) => builder.project_name(name),
                    Named::Id(id) => builder.project_id(id),
                };
                Some(user)
            }
            ServiceCredential::ApplicationCredential {
                credential,
                user,
                secret,
            } => {
                builder = builder.application_credential_secret(secret);
                builder = match credential {
                    Named::Name(name) => builder.application_credential_name(name),
                    Named::Id(id) => builder.application_credential_id(id),
                };
                user.as_ref()
            }
        };
        builder = match user {
            Some(Named::Name(name)) => builder.username(name),
            Some(Named::Id(id)) => builder.user_id(id),
            None => builder,
        };
        if let Some(domain) = &self.user_domain {
            builder = builder.user_domain(domain.clone());
        }
        if let Some(domain) = &self.project_domain {
            builder = builder.project_domain(domain.clone());
        }
        if let Some(seconds) = self.http_connect_timeout {
            let timeout = Duration::from_secs(seconds);
            builder = builder.connect_timeout(timeout).request_timeout(timeout);
        }
        if let Some(cafile) = &self.cafile {
            builder = builder.ca_file(cafile);
        }
        if let Some((certificate, key)) = &self.client_certificate {
            builder = builder.client_identity(certificate, key);
        }
        builder.insecure(self.insecure).build()
    }
}

/// Old names keystonemiddleware and keystoneauth read (or read once),
/// which deployment tools still write, and the keys they stand for: read
/// where the new key is not set (openstack-helm writes `auth_uri`).
const OLD_NAMES: &[(&str, &str)] = &[
    ("auth_uri", "www_authenticate_uri"),
    ("auth_plugin", "auth_type"),
    ("memcache_servers", "memcached_servers"),
];

/// The keys read above, in the order an operator finds them in
/// keystonemiddleware's documentation.
const KNOWN: &[&str] = &[
    "auth_type",
    "auth_url",
    "username",
    "user_id",
    "password",
    "project_name",
    "project_id",
    "user_domain_name",
    "user_domain_id",
    "project_domain_name",
    "project_domain_id",
    "default_domain_name",
    "default_domain_id",
    "www_authenticate_uri",
    "auth_version",
    "interface",
    "region_name",
    "token_cache_time",
    "memcached_servers",
    "service_token_roles",
    "service_token_roles_required",
    "enforce_token_bind",
    "cafile",
    "certfile",
    "keyfile",
    "insecure",
    "application_credential_id",
    "application_credential_name",
    "application_credential_secret",
    "http_connect_timeout",
    "http_request_max_retries",
];

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "[keystone_authtoken]\nauth_type = password\nauth_url = http://k:5000\n\
        username = placement\npassword = s3cret\nproject_name = service\n\
        user_domain_name = Default\nproject_domain_name = Default\n";

    fn read(text: &str) -> anyhow::Result<KeystoneAuthtoken> {
        let ini = ini::Ini::load_from_str(text).unwrap();
        let section = ini.section(Some("keystone_authtoken")).unwrap();
        KeystoneAuthtoken::read(section, Path::new("/etc/placement/placement.conf"))
    }

    fn error(text: &str) -> String {
        format!("{:#}", read(text).unwrap_err())
    }

    #[test]
    fn defaults_are_keystonemiddleware_s() {
        let k = read(MINIMAL).unwrap();
        assert_eq!(
            k.credential,
            ServiceCredential::Password {
                user: Named::Name("placement".into()),
                password: "s3cret".into(),
                project: Named::Name("service".into()),
            }
        );
        assert_eq!(k.user_domain, Some(DomainSpec::Name("Default".into())));
        assert_eq!(k.interface, Interface::Internal);
        assert_eq!(k.token_cache_time, 300);
        assert_eq!(k.service_token_roles, ["service"]);
        assert!(k.service_token_roles_required);
        assert_eq!(k.http_request_max_retries, 3);
        assert_eq!(k.http_connect_timeout, None);
        assert!(k.client().is_ok());
        // The only warning: www_authenticate_uri falls back to auth_url.
        let warnings = k.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("www_authenticate_uri"), "{warnings:?}");
        assert!(!format!("{k:?}").contains("s3cret"));
    }

    #[test]
    fn every_setting_is_read() {
        let k = read(&format!(
            "{MINIMAL}www_authenticate_uri = http://public:5000\ninterface = public\n\
             region_name = RegionTwo\ntoken_cache_time = -1\nservice_token_roles = service, nova\n\
             service_token_roles_required = false\n\
             cafile = ca.pem\ninsecure = true\nhttp_connect_timeout = 4\n\
             http_request_max_retries = 0\nauth_version = v3\nenforce_token_bind = permissive\n"
        ))
        .unwrap();
        assert_eq!(
            k.www_authenticate_uri.as_deref(),
            Some("http://public:5000")
        );
        assert_eq!(k.interface, Interface::Public);
        assert_eq!(k.region_name.as_deref(), Some("RegionTwo"));
        assert_eq!(k.token_cache_time, -1);
        assert_eq!(k.service_token_roles, ["service", "nova"]);
        assert!(!k.service_token_roles_required);
        assert_eq!(k.cafile, Some(PathBuf::from("/etc/placement/ca.pem")));
        assert!(k.insecure);
        assert_eq!(k.http_connect_timeout, Some(4));
        assert_eq!(k.http_request_max_retries, 0);
        assert!(k.warnings().is_empty());
    }

    #[test]
    fn ids_stand_in_for_names_and_default_domains_for_both() {
        let k = read(
            "[keystone_authtoken]\nauth_type = v3password\nauth_url = http://k:5000/v3\n\
             user_id = u1\npassword = p\nproject_id = p1\n",
        )
        .unwrap();
        assert_eq!(
            k.credential,
            ServiceCredential::Password {
                user: Named::Id("u1".into()),
                password: "p".into(),
                project: Named::Id("p1".into()),
            }
        );
        let k = read(
            "[keystone_authtoken]\nauth_type = password\nauth_url = http://k:5000\n\
             username = placement\npassword = p\nproject_name = service\ndefault_domain_id = default\n",
        )
        .unwrap();
        assert_eq!(k.user_domain, Some(DomainSpec::Id("default".into())));
        assert_eq!(k.project_domain, Some(DomainSpec::Id("default".into())));
    }

    #[test]
    fn missing_and_bad_keys_are_named() {
        let without = |key: &str| {
            MINIMAL
                .lines()
                .filter(|l| !l.starts_with(&format!("{key} =")))
                .collect::<Vec<_>>()
                .join("\n")
        };
        for key in [
            "auth_type",
            "auth_url",
            "username",
            "password",
            "project_name",
        ] {
            let e = error(&without(key));
            assert!(
                e.contains(&format!(
                    "/etc/placement/placement.conf: [keystone_authtoken] {key}"
                )),
                "{key}: {e}"
            );
            assert!(e.contains("required"), "{e}");
        }
        let e = error(&without("user_domain_name"));
        assert!(
            e.contains("user_domain_name (or user_domain_id) is required"),
            "{e}"
        );
        for (line, wanted) in [
            (
                "auth_type = token",
                "auth_type = token is not supported; the accepted values are password, v3password and v3applicationcredential",
            ),
            (
                "interface = private",
                "interface = private is not public, internal or admin",
            ),
            (
                "token_cache_time = soon",
                "token_cache_time = soon is not an integer",
            ),
            (
                "token_cache_time = -5",
                "is not -1 (off) or a number of seconds",
            ),
            (
                "http_connect_timeout = 0",
                "is not a positive number of seconds",
            ),
            (
                "http_request_max_retries = -1",
                "is not a non-negative integer",
            ),
            ("insecure = maybe", "insecure = maybe is not a boolean"),
            ("auth_version = v2.0", "only Keystone's v3 API is"),
            (
                "enforce_token_bind = strict",
                "only disabled or permissive are accepted",
            ),
            ("certfile = c.pem", "keyfile is required with certfile"),
            ("keyfile = c.key", "certfile is required with keyfile"),
            ("system_scope = all", "the service token is project-scoped"),
            (
                "auth_section = other",
                "put the service user's settings in [keystone_authtoken]",
            ),
        ] {
            let e = error(&format!("{MINIMAL}{line}\n"));
            assert!(e.contains(wanted), "{line}: {e}");
        }
    }

    #[test]
    fn memcached_and_other_keys_without_effect_are_warned_about() {
        let k = read(&format!(
            "{MINIMAL}www_authenticate_uri = http://k:5000\nmemcached_servers = 10.0.0.1:11211,10.0.0.2:11211\n\
             memcache_security_strategy = ENCRYPT\nservice_type = placement\ninclude_service_catalog = false\n"
        ))
        .unwrap();
        let warnings = k.warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("memcached_servers = 10.0.0.1:11211,10.0.0.2:11211 is not used"),
            "{warnings:?}"
        );
        assert!(
            warnings[1].contains(
                "include_service_catalog, service_type, memcache_security_strategy have no effect"
            ),
            "{warnings:?}"
        );
        // The deprecated name of memcached_servers is read too.
        let k = read(&format!("{MINIMAL}memcache_servers = m:11211\n")).unwrap();
        assert_eq!(k.memcached_servers, ["m:11211"]);
    }

    #[test]
    fn unknown_keys_are_warnings_and_old_names_are_read() {
        // keystonemiddleware's old names, as openstack-helm and older
        // templates write them; a key it does not know is named, once.
        let text = MINIMAL.replace("auth_type = password", "auth_plugin = password");
        let k = read(&format!(
            "{text}auth_uri = http://public:5000/v3\nadmin_password = x\nusernme = typo\nadmin_password = y\n"
        ))
        .unwrap();
        assert_eq!(
            k.www_authenticate_uri.as_deref(),
            Some("http://public:5000/v3")
        );
        assert_eq!(
            k.warnings(),
            [
                "/etc/placement/placement.conf: [keystone_authtoken] admin_password is not a keystonemiddleware setting: ignored",
                "/etc/placement/placement.conf: [keystone_authtoken] usernme is not a keystonemiddleware setting: ignored",
            ]
        );
        // The new name wins over the old one.
        let k = read(&format!(
            "{MINIMAL}auth_uri = http://old:5000\nwww_authenticate_uri = http://new:5000\n"
        ))
        .unwrap();
        assert_eq!(k.www_authenticate_uri.as_deref(), Some("http://new:5000"));
    }

    #[test]
    fn application_credentials_and_client_certificates() {
        let k = read(
            "[keystone_authtoken]\nauth_type = v3applicationcredential\nauth_url = http://k:5000/v3\n\
             application_credential_id = ac1\napplication_credential_secret = s\n\
             certfile = tls/placement.pem\nkeyfile = /etc/ssl/placement.key\n",
        )
        .unwrap();
        assert_eq!(
            k.credential,
            ServiceCredential::ApplicationCredential {
                credential: Named::Id("ac1".into()),
                user: None,
                secret: "s".into(),
            }
        );
        assert_eq!(
            k.client_certificate,
            Some((
                PathBuf::from("/etc/placement/tls/placement.pem"),
                PathBuf::from("/etc/ssl/placement.key")
            ))
        );
        assert!(!format!("{k:?}").contains("secret: \"s\""), "{k:?}");
        let named = "[keystone_authtoken]\nauth_type = v3applicationcredential\n\
             auth_url = http://k:5000/v3\napplication_credential_name = placement\n\
             application_credential_secret = s\n";
        let k = read(&format!(
            "{named}username = placement\nuser_domain_name = Default\n"
        ))
        .unwrap();
        assert_eq!(
            k.credential,
            ServiceCredential::ApplicationCredential {
                credential: Named::Name("placement".into()),
                user: Some(Named::Name("placement".into())),
                secret: "s".into(),
            }
        );
        assert!(k.client().is_ok());
        for (text, wanted) in [
            (
                named.to_owned(),
                "username (or user_id) is required with application_credential_name",
            ),
            (
                format!("{named}username = placement\n"),
                "user_domain_name (or user_domain_id) is required with username",
            ),
            (
                named.replace("application_credential_secret = s\n", "user_id = u\n"),
                "application_credential_secret is required with auth_type = v3applicationcredential",
            ),
            (
                named.replace("application_credential_name = placement\n", ""),
                "application_credential_id (or application_credential_name) is required",
            ),
        ] {
            let e = error(&text);
            assert!(e.contains(wanted), "{text}: {e}");
        }
    }
}
