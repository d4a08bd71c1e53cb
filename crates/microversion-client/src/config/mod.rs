//! Cloud configuration as OpenStack users already write it: `clouds.yaml`
//! (with `secure.yaml`), the `OS_*` variables, and options.
//!
//! [`ConfigLoader`] finds the settings, [`CloudConfig`] is what they say,
//! checked: every wrong or missing setting is a [`ConfigError`] naming the
//! file, the cloud and the key (or the variable, or the option) before
//! any request is made.
//!
//! Precedence, lowest first, as `openstack` (osc) has it: the cloud of
//! clouds.yaml (named by [`ConfigLoader::cloud`] or `OS_CLOUD`) with its
//! secure.yaml entry merged in, then the `OS_*` variables, then options
//! ([`ConfigLoader::option`]). Without a cloud, the variables and options
//! alone describe it.
//!
//! ```
//! use microversion_client::config::{AuthConfig, ConfigLoader};
//! # let dir = std::env::temp_dir().join(format!("mv-config-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! std::fs::write(dir.join("clouds.yaml"), r#"
//! clouds:
//!   devstack:
//!     auth:
//!       auth_url: http://127.0.0.1/identity
//!       username: demo
//!       project_name: demo
//!       user_domain_name: Default
//!       project_domain_name: Default
//!     region_name: RegionOne
//!     placement_api_version: 1.20
//! "#)?;
//! std::fs::write(dir.join("secure.yaml"), "clouds: {devstack: {auth: {password: s3cret}}}")?;
//!
//! let config = ConfigLoader::new().search_dirs([&dir]).cloud("devstack").load()?;
//! assert_eq!(config.region_name(), Some("RegionOne"));
//! assert_eq!(config.api_version("placement").unwrap().to_string(), "1.20");
//! assert!(matches!(config.auth(), AuthConfig::Keystone { .. }));
//!
//! // Incomplete: the message names the file, the cloud and the key.
//! std::fs::remove_file(dir.join("secure.yaml"))?;
//! let err = ConfigLoader::new().search_dirs([&dir]).cloud("devstack").load().unwrap_err();
//! assert!(err.to_string().contains("clouds.yaml: cloud \"devstack\": missing auth.password"));
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod files;
mod keys;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use keystone_auth::DomainSpec;
use keystone_auth::Secret;
use keystone_auth::catalog::{Interface, service_type_family};
use keystone_auth::session::{
    ApplicationCredentialSpec, Credentials, ProjectSpec, ScopeSpec, UserSpec,
};
use microversion::VersionRequest;
use url::Url;

pub use self::error::{ConfigError, Source};

/// How requests are authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthConfig {
    /// A token from Keystone (auth types `password`,
    /// `v3applicationcredential`, `token`); endpoints come from its
    /// catalog.
    Keystone {
        /// Keystone's URL.
        auth_url: String,
        /// The credentials.
        credentials: Credentials,
    },
    /// `admin_token`: a fixed token sent to a fixed endpoint, no Keystone.
    AdminToken {
        /// The token.
        token: Secret,
        /// The endpoint (`endpoint`, `OS_ENDPOINT`), unless each service
        /// has its `<service>_endpoint_override`.
        endpoint: Option<Url>,
    },
    /// `none`: no token at all.
    None {
        /// The endpoint, as for `admin_token`.
        endpoint: Option<Url>,
    },
}

impl AuthConfig {
    /// The auth type's name: `password`, `v3applicationcredential`,
    /// `token`, `admin_token` or `none`.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Keystone { credentials, .. } => match credentials {
                Credentials::Password { .. } => "password",
                Credentials::ApplicationCredential { .. } => "v3applicationcredential",
                _ => "token",
            },
            Self::AdminToken { .. } => "admin_token",
            Self::None { .. } => "none",
        }
    }
}

/// One cloud's settings, checked.
#[derive(Debug, Clone)]
pub struct CloudConfig {
    name: Option<String>,
    files: Vec<PathBuf>,
    auth: AuthConfig,
    region_name: Option<String>,
    interface: Interface,
    verify: bool,
    cacert: Option<PathBuf>,
    api_versions: BTreeMap<String, VersionRequest>,
    endpoint_overrides: BTreeMap<String, Url>,
}

impl CloudConfig {
    /// The cloud's name in clouds.yaml, `None` for one made of `OS_*`
    /// variables and options.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The files read (clouds.yaml, then secure.yaml when it had the
    /// cloud).
    #[must_use]
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// How requests are authenticated.
    #[must_use]
    pub fn auth(&self) -> &AuthConfig {
        &self.auth
    }

    /// `region_name` (else the first of `regions`).
    #[must_use]
    pub fn region_name(&self) -> Option<&str> {
        self.region_name.as_deref()
    }

    /// `interface` of the endpoints: public unless set.
    #[must_use]
    pub fn interface(&self) -> Interface {
        self.interface
    }

    /// Whether TLS certificates are verified (`verify`, `insecure`).
    #[must_use]
    pub fn verify(&self) -> bool {
        self.verify
    }

    /// `cacert`: a PEM file of CA certificates to trust.
    #[must_use]
    pub fn cacert(&self) -> Option<&Path> {
        self.cacert.as_deref()
    }

    /// The API version configured for a service (`placement_api_version`,
    /// `OS_PLACEMENT_API_VERSION`); for an alias, the version set under
    /// any name of its family (`volume_api_version` for `block-storage`).
    #[must_use]
    pub fn api_version(&self, service_type: &str) -> Option<VersionRequest> {
        lookup(&self.api_versions, service_type).copied()
    }

    /// `<service>_endpoint_override`, by the same rule.
    #[must_use]
    pub fn endpoint_override(&self, service_type: &str) -> Option<&Url> {
        lookup(&self.endpoint_overrides, service_type)
    }
}

/// The entry for `service_type`, else for another name of its family.
fn lookup<'a, T>(map: &'a BTreeMap<String, T>, service_type: &str) -> Option<&'a T> {
    let key = service_type.replace('_', "-");
    map.get(&key).or_else(|| {
        service_type_family(&key)
            .iter()
            .find_map(|name| map.get(*name))
    })
}

/// Finds and checks a cloud's settings. See the [module](self) for the
/// precedence and an example.
#[must_use]
#[derive(Clone, Default)]
pub struct ConfigLoader {
    cloud: Option<String>,
    clouds_file: Option<PathBuf>,
    secure_file: Option<PathBuf>,
    dirs: Option<Vec<PathBuf>>,
    env: Vec<(String, String, String)>,
    options: Vec<(String, String, String)>,
}

impl fmt::Debug for ConfigLoader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names only: values may be secrets.
        let names = |v: &[(String, String, String)]| -> Vec<String> {
            v.iter().map(|(_, _, name)| name.clone()).collect()
        };
        f.debug_struct("ConfigLoader")
            .field("cloud", &self.cloud)
            .field("clouds_file", &self.clouds_file)
            .field("secure_file", &self.secure_file)
            .field("dirs", &self.dirs)
            .field("env", &names(&self.env))
            .field("options", &names(&self.options))
            .finish()
    }
}

impl ConfigLoader {
    /// A loader that reads no environment: only what is set on it, and
    /// the files.
    pub fn new() -> Self {
        Self::default()
    }

    /// A loader of the process environment: `OS_CLOUD`,
    /// `OS_CLIENT_CONFIG_FILE`, `OS_CLIENT_SECURE_FILE` and every `OS_*`
    /// setting.
    pub fn from_env() -> Self {
        Self::new().env_vars(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// Reads these variables as the environment (empty values are
    /// unset); other names than `OS_*` are ignored.
    pub fn env_vars<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        for (name, value) in vars {
            let (name, value) = (name.into(), value.into());
            if value.is_empty() {
                continue;
            }
            match name.as_str() {
                "OS_CLOUD" => self.cloud = self.cloud.or(Some(value)),
                "OS_CLIENT_CONFIG_FILE" => {
                    self.clouds_file = self.clouds_file.or(Some(value.into()));
                }
                "OS_CLIENT_SECURE_FILE" => {
                    self.secure_file = self.secure_file.or(Some(value.into()));
                }
                _ => {
                    if let Some(key) = keys::from_env_var(&name) {
                        self.env.push((key, value, name));
                    }
                }
            }
        }
        self
    }

    /// The cloud of clouds.yaml to use (`--os-cloud`); replaces
    /// `OS_CLOUD`.
    pub fn cloud(mut self, name: impl Into<String>) -> Self {
        self.cloud = Some(name.into());
        self
    }

    /// The clouds file to look at first (`OS_CLIENT_CONFIG_FILE`).
    pub fn clouds_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.clouds_file = Some(path.into());
        self
    }

    /// The secure file to look at first (`OS_CLIENT_SECURE_FILE`).
    pub fn secure_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.secure_file = Some(path.into());
        self
    }

    /// The directories to search instead of the current one,
    /// `~/.config/openstack` and `/etc/openstack`.
    pub fn search_dirs<I, P>(mut self, dirs: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        self.dirs = Some(dirs.into_iter().map(|d| d.as_ref().to_path_buf()).collect());
        self
    }

    /// A setting given as an option, such as `("password", "...")` for
    /// `--os-password` or `("placement_api_version", "1.20")`; it wins
    /// over files and variables. The key is clouds.yaml's, without
    /// `auth.` (dashes are read as underscores).
    pub fn option(mut self, key: &str, value: impl Into<String>) -> Self {
        let key = key.replace('-', "_");
        let key = keys::canonical(&key).to_owned();
        let flag = keys::option(&key);
        self.options.push((key, value.into(), flag));
        self
    }

    /// Finds the files, merges the settings and checks them.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`]: a file that cannot be read or is not YAML, an
    /// unknown cloud, nothing configured, a missing or invalid setting.
    pub fn load(&self) -> Result<CloudConfig, ConfigError> {
        let mut settings = Settings::default();
        let mut files = Vec::new();
        if let Some(cloud) = &self.cloud {
            let dirs = self.dirs.clone().unwrap_or_else(files::default_dirs);
            let candidates = files::candidates(self.clouds_file.as_deref(), &dirs, "clouds");
            let Some(path) = files::first_existing(&candidates) else {
                return Err(ConfigError::NoCloudsFile {
                    cloud: cloud.clone(),
                    looked: join_paths(&candidates),
                });
            };
            let mut clouds = files::read(path)?;
            let Some(entries) = clouds.clouds.remove(cloud) else {
                return Err(ConfigError::UnknownCloud {
                    cloud: cloud.clone(),
                    path: path.clone(),
                    available: if clouds.clouds.is_empty() {
                        "no clouds".to_owned()
                    } else {
                        clouds.clouds.keys().cloned().collect::<Vec<_>>().join(", ")
                    },
                });
            };
            settings.place = format!("{}: cloud {cloud:?}", path.display());
            settings.add_file(path, cloud, entries.0);
            files.push(path.clone());
            let secure = files::candidates(self.secure_file.as_deref(), &dirs, "secure");
            if let Some(secure_path) = files::first_existing(&secure) {
                if let Some(entries) = files::read(secure_path)?.clouds.remove(cloud) {
                    settings.add_file(secure_path, cloud, entries.0);
                    files.push(secure_path.clone());
                }
            }
        } else {
            settings.place = "the OS_* variables and options (no cloud named)".to_owned();
        }
        for (key, value, name) in &self.env {
            settings.set(key, value.clone(), Source::Env(name.clone()));
        }
        for (key, value, flag) in &self.options {
            settings.set(key, value.clone(), Source::Option(flag.clone()));
        }
        if self.cloud.is_none() && settings.values.is_empty() {
            return Err(ConfigError::NothingConfigured);
        }
        let mut config = settings.resolve()?;
        config.name.clone_from(&self.cloud);
        config.files = files;
        Ok(config)
    }
}

fn join_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The merged settings: canonical key to value and where it came from.
#[derive(Default)]
struct Settings {
    values: BTreeMap<String, (String, Source)>,
    /// Where the cloud is described, for "missing" messages.
    place: String,
}

impl Settings {
    fn add_file(&mut self, path: &Path, cloud: &str, entries: files::Entries) {
        for (written, value) in entries {
            if let Some(value) = value.0 {
                let source = Source::File {
                    path: path.to_path_buf(),
                    cloud: cloud.to_owned(),
                    key: written.clone(),
                };
                self.set(keys::canonical(&written), value, source);
            }
        }
    }

    fn set(&mut self, key: &str, value: String, source: Source) {
        self.values.insert(key.to_owned(), (value, source));
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|(v, _)| v.as_str())
    }

    fn source(&self, key: &str) -> Source {
        self.values
            .get(key)
            .map_or_else(|| Source::Option(keys::option(key)), |(_, s)| s.clone())
    }

    fn invalid(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        let value = if keys::SECRET_KEYS.contains(&key) {
            None
        } else {
            self.get(key).map(str::to_owned)
        };
        ConfigError::Invalid {
            origin: self.source(key),
            value,
            reason: reason.into(),
        }
    }

    fn missing(&self, keys: &[&str], why: &str) -> ConfigError {
        ConfigError::Missing {
            place: self.place.clone(),
            key: keys
                .iter()
                .map(|k| keys::file_key(k))
                .collect::<Vec<_>>()
                .join(" or "),
            why: why.to_owned(),
            hint: keys
                .iter()
                .map(|k| format!("{} / {}", keys::env_var(k), keys::option(k)))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    fn require(&self, key: &str, why: &str) -> Result<String, ConfigError> {
        self.get(key)
            .map(str::to_owned)
            .ok_or_else(|| self.missing(&[key], why))
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        self.get(key)
            .map(|v| match v.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" | "1" => Ok(true),
                "false" | "no" | "off" | "0" => Ok(false),
                _ => Err(self.invalid(key, "expected true or false")),
            })
            .transpose()
    }

    fn url(&self, key: &str) -> Result<Option<Url>, ConfigError> {
        self.get(key)
            .map(|text| match Url::parse(text) {
                Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
                    Ok(url)
                }
                Ok(_) => Err(self.invalid(key, "expected an http or https URL with a host")),
                Err(e) => Err(self.invalid(key, format!("not a URL ({e})"))),
            })
            .transpose()
    }

    fn domain(&self, id: &str, name: &str) -> Option<DomainSpec> {
        self.get(id)
            .map(|v| DomainSpec::Id(v.to_owned()))
            .or_else(|| self.get(name).map(|v| DomainSpec::Name(v.to_owned())))
    }

    fn resolve(mut self) -> Result<CloudConfig, ConfigError> {
        // A domain next to a project is the default of the user's and
        // the project's domains, not a domain scope (as openstacksdk).
        if self.get("project_id").is_some() || self.get("project_name").is_some() {
            for kind in ["id", "name"] {
                if let Some((value, source)) = self.values.remove(&format!("domain_{kind}")) {
                    for target in ["user_domain", "project_domain"] {
                        let key = format!("{target}_{kind}");
                        self.values
                            .entry(key)
                            .or_insert_with(|| (value.clone(), source.clone()));
                    }
                }
            }
        }
        let auth = self.auth()?;
        let interface = match self.get("interface") {
            Some(text) => text
                .parse::<Interface>()
                .map_err(|e| self.invalid("interface", e.to_string()))?,
            None => Interface::Public,
        };
        let verify = match (self.boolean("verify")?, self.boolean("insecure")?) {
            (Some(verify), _) => verify,
            (None, Some(insecure)) => !insecure,
            (None, None) => true,
        };
        let cacert = self.get("cacert").map(PathBuf::from);
        if let Some(path) = &cacert {
            if !path.is_file() {
                return Err(self.invalid("cacert", "no such file"));
            }
        }
        let mut api_versions = BTreeMap::new();
        let mut endpoint_overrides = BTreeMap::new();
        for (key, (value, _)) in &self.values {
            if let Some(service) = key.strip_suffix("_api_version") {
                let version = VersionRequest::parse_cli(value)
                    .map_err(|e| self.invalid(key, e.to_string()))?;
                api_versions.insert(service.replace('_', "-"), version);
            } else if let Some(service) = key.strip_suffix("_endpoint_override") {
                if let Some(url) = self.url(key)? {
                    endpoint_overrides.insert(service.replace('_', "-"), url);
                }
            }
        }
        Ok(CloudConfig {
            name: None,
            files: Vec::new(),
            auth,
            region_name: self
                .get("region_name")
                .or(self.get("regions"))
                .map(str::to_owned),
            interface,
            verify,
            cacert,
            api_versions,
            endpoint_overrides,
        })
    }

    /// The auth type, given or inferred as osc does.
    fn auth_type(&self) -> Result<&'static str, ConfigError> {
        if let Some(name) = self.get("auth_type") {
            return match name {
                "password" | "v3password" => Ok("password"),
                "v3applicationcredential" | "applicationcredential" => {
                    Ok("v3applicationcredential")
                }
                "token" | "v3token" => Ok("token"),
                "admin_token" | "token_endpoint" => Ok("admin_token"),
                "none" | "noauth" => Ok("none"),
                _ => Err(self.invalid(
                    "auth_type",
                    "expected password, v3applicationcredential, token, admin_token or none",
                )),
            };
        }
        Ok(
            if self.get("application_credential_secret").is_some()
                || self.get("application_credential_id").is_some()
            {
                "v3applicationcredential"
            } else if self.get("token").is_some() && self.get("endpoint").is_some() {
                "admin_token"
            } else if self.get("username").is_some() || self.get("user_id").is_some() {
                "password"
            } else if self.get("token").is_some() {
                "token"
            } else {
                "password"
            },
        )
    }

    fn auth(&self) -> Result<AuthConfig, ConfigError> {
        let auth_type = self.auth_type()?;
        let why = format!("by auth_type {auth_type}");
        let endpoint = self.url("endpoint")?;
        match auth_type {
            "admin_token" => {
                return Ok(AuthConfig::AdminToken {
                    token: Secret::new(self.require("token", &why)?),
                    endpoint,
                });
            }
            "none" => return Ok(AuthConfig::None { endpoint }),
            _ => {}
        }
        let auth_url = self.require("auth_url", &why)?;
        self.url("auth_url")?;
        let credentials = match auth_type {
            "password" => Credentials::Password {
                user: self.user(&why)?,
                password: Secret::new(self.require("password", &why)?),
                scope: self.scope(&why)?,
            },
            "v3applicationcredential" => {
                let credential = match (
                    self.get("application_credential_id"),
                    self.get("application_credential_name"),
                ) {
                    (Some(id), _) => ApplicationCredentialSpec::Id(id.to_owned()),
                    (None, Some(name)) => ApplicationCredentialSpec::Name {
                        name: name.to_owned(),
                        user: self.user(&format!("{why} with application_credential_name"))?,
                    },
                    (None, None) => {
                        return Err(self.missing(
                            &["application_credential_id", "application_credential_name"],
                            &why,
                        ));
                    }
                };
                Credentials::ApplicationCredential {
                    credential,
                    secret: Secret::new(self.require("application_credential_secret", &why)?),
                }
            }
            _ => Credentials::Token {
                token: Secret::new(self.require("token", &why)?),
                scope: self.scope(&why)?,
            },
        };
        Ok(AuthConfig::Keystone {
            auth_url,
            credentials,
        })
    }

    fn user(&self, why: &str) -> Result<UserSpec, ConfigError> {
        if let Some(id) = self.get("user_id") {
            return Ok(UserSpec::Id(id.to_owned()));
        }
        let Some(name) = self.get("username") else {
            return Err(self.missing(&["username", "user_id"], why));
        };
        let domain = self
            .domain("user_domain_id", "user_domain_name")
            .ok_or_else(|| {
                self.missing(&["user_domain_name", "user_domain_id"], "with username")
            })?;
        Ok(UserSpec::Name {
            name: name.to_owned(),
            domain,
        })
    }

    fn scope(&self, _why: &str) -> Result<ScopeSpec, ConfigError> {
        let project = self.get("project_id").is_some() || self.get("project_name").is_some();
        let domain = self.domain("domain_id", "domain_name");
        if let Some(system) = self.get("system_scope") {
            if system != "all" {
                return Err(self.invalid("system_scope", "the only system scope is all"));
            }
            if project || domain.is_some() {
                return Err(self.invalid(
                    "system_scope",
                    "a token has one scope: system, or a project, or a domain",
                ));
            }
            return Ok(ScopeSpec::System);
        }
        if let Some(id) = self.get("project_id") {
            return Ok(ScopeSpec::Project(ProjectSpec::Id(id.to_owned())));
        }
        if let Some(name) = self.get("project_name") {
            let domain = self
                .domain("project_domain_id", "project_domain_name")
                .ok_or_else(|| {
                    self.missing(
                        &["project_domain_name", "project_domain_id"],
                        "with project_name",
                    )
                })?;
            return Ok(ScopeSpec::Project(ProjectSpec::Name {
                name: name.to_owned(),
                domain,
            }));
        }
        Ok(domain.map_or(ScopeSpec::Unscoped, ScopeSpec::Domain))
    }
}

#[cfg(test)]
mod tests;
