//! osc's cloud options as clap arguments: [`CloudArgs`], and the
//! `--timeout` value parser the OpenStack-style commands share.

use std::time::Duration;

use clap::Args;

use super::CommandError;
use crate::cloud::Cloud;
use crate::config::ConfigLoader;

/// osc's options naming the cloud and its credentials. Each one's
/// `OS_*` variable (`--os-password`: `OS_PASSWORD`) is read from the
/// environment when the option is not given; options win over variables,
/// which win over clouds.yaml.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Cloud options (osc's; each also read from its OS_* variable)")]
pub struct CloudArgs {
    /// The cloud of clouds.yaml (./, ~/.config/openstack/, /etc/openstack/,
    /// or OS_CLIENT_CONFIG_FILE), with secure.yaml merged [env: OS_CLOUD].
    #[arg(long, value_name = "NAME")]
    os_cloud: Option<String>,
    /// password, v3applicationcredential, token, admin_token or none
    /// [env: OS_AUTH_TYPE].
    #[arg(long, value_name = "TYPE")]
    os_auth_type: Option<String>,
    /// Keystone's URL [env: OS_AUTH_URL].
    #[arg(long, value_name = "URL")]
    os_auth_url: Option<String>,
    /// [env: OS_USERNAME]
    #[arg(long, value_name = "NAME")]
    os_username: Option<String>,
    /// [env: OS_USER_ID]
    #[arg(long, value_name = "ID")]
    os_user_id: Option<String>,
    /// [env: OS_PASSWORD]
    #[arg(long, value_name = "PASSWORD")]
    os_password: Option<String>,
    /// [env: OS_PROJECT_NAME]
    #[arg(long, value_name = "NAME")]
    os_project_name: Option<String>,
    /// [env: OS_PROJECT_ID]
    #[arg(long, value_name = "ID")]
    os_project_id: Option<String>,
    /// [env: OS_USER_DOMAIN_NAME]
    #[arg(long, value_name = "NAME")]
    os_user_domain_name: Option<String>,
    /// [env: OS_USER_DOMAIN_ID]
    #[arg(long, value_name = "ID")]
    os_user_domain_id: Option<String>,
    /// [env: OS_PROJECT_DOMAIN_NAME]
    #[arg(long, value_name = "NAME")]
    os_project_domain_name: Option<String>,
    /// [env: OS_PROJECT_DOMAIN_ID]
    #[arg(long, value_name = "ID")]
    os_project_domain_id: Option<String>,
    /// Domain scope, or with a project the default of both domains
    /// [env: OS_DOMAIN_NAME].
    #[arg(long, value_name = "NAME")]
    os_domain_name: Option<String>,
    /// [env: OS_DOMAIN_ID]
    #[arg(long, value_name = "ID")]
    os_domain_id: Option<String>,
    /// System scope: all [env: OS_SYSTEM_SCOPE].
    #[arg(long, value_name = "all")]
    os_system_scope: Option<String>,
    /// [env: OS_APPLICATION_CREDENTIAL_ID]
    #[arg(long, value_name = "ID")]
    os_application_credential_id: Option<String>,
    /// [env: OS_APPLICATION_CREDENTIAL_NAME]
    #[arg(long, value_name = "NAME")]
    os_application_credential_name: Option<String>,
    /// [env: OS_APPLICATION_CREDENTIAL_SECRET]
    #[arg(long, value_name = "SECRET")]
    os_application_credential_secret: Option<String>,
    /// A token: for auth types token and admin_token [env: OS_TOKEN].
    #[arg(long, value_name = "TOKEN")]
    os_token: Option<String>,
    /// The endpoint of auth types admin_token and none [env: OS_ENDPOINT].
    #[arg(long, value_name = "URL")]
    os_endpoint: Option<String>,
    /// [env: OS_REGION_NAME]
    #[arg(long, value_name = "REGION")]
    os_region_name: Option<String>,
    /// public (default), internal or admin [env: OS_INTERFACE].
    #[arg(long, value_name = "INTERFACE")]
    os_interface: Option<String>,
    /// CA certificates (PEM) to trust [env: OS_CACERT].
    #[arg(long, value_name = "FILE")]
    os_cacert: Option<String>,
    /// Do not verify TLS certificates.
    #[arg(long)]
    insecure: bool,
}

impl CloudArgs {
    /// The options given, as clouds.yaml keys and values.
    #[must_use]
    pub fn options(&self) -> Vec<(&'static str, &str)> {
        let all = [
            ("auth_type", &self.os_auth_type),
            ("auth_url", &self.os_auth_url),
            ("username", &self.os_username),
            ("user_id", &self.os_user_id),
            ("password", &self.os_password),
            ("project_name", &self.os_project_name),
            ("project_id", &self.os_project_id),
            ("user_domain_name", &self.os_user_domain_name),
            ("user_domain_id", &self.os_user_domain_id),
            ("project_domain_name", &self.os_project_domain_name),
            ("project_domain_id", &self.os_project_domain_id),
            ("domain_name", &self.os_domain_name),
            ("domain_id", &self.os_domain_id),
            ("system_scope", &self.os_system_scope),
            (
                "application_credential_id",
                &self.os_application_credential_id,
            ),
            (
                "application_credential_name",
                &self.os_application_credential_name,
            ),
            (
                "application_credential_secret",
                &self.os_application_credential_secret,
            ),
            ("token", &self.os_token),
            ("endpoint", &self.os_endpoint),
            ("region_name", &self.os_region_name),
            ("interface", &self.os_interface),
            ("cacert", &self.os_cacert),
        ];
        let mut options: Vec<(&'static str, &str)> = all
            .into_iter()
            .filter_map(|(key, value)| value.as_deref().map(|v| (key, v)))
            .collect();
        if self.insecure {
            options.push(("insecure", "true"));
        }
        options
    }

    /// Whether the command line names a cloud or a credential.
    #[must_use]
    pub fn given(&self) -> bool {
        self.os_cloud.is_some() || !self.options().is_empty()
    }

    /// A loader of the environment's `OS_*` variables with these options
    /// on top: the cloud named by `--os-cloud`, and each option given as
    /// its clouds.yaml key.
    pub fn loader(&self) -> ConfigLoader {
        let mut loader = ConfigLoader::from_env();
        if let Some(name) = &self.os_cloud {
            loader = loader.cloud(name);
        }
        for (key, value) in self.options() {
            loader = loader.option(key, value);
        }
        loader
    }

    /// The cloud these options and the environment name, with an HTTP
    /// client of `timeout` and `user_agent`; `None` when no cloud is named.
    ///
    /// A cloud is named by an option ([`CloudArgs::given`]), or, when
    /// `environment` is true, by one of `OS_CLOUD`, `OS_AUTH_URL`,
    /// `OS_AUTH_TYPE`, `OS_ENDPOINT` alone. Commands given URLs pass
    /// false: they never send a token of the environment to a URL unasked.
    ///
    /// # Errors
    ///
    /// clouds.yaml or the variables are invalid, or the HTTP client cannot
    /// be built (its certificate files, say).
    pub fn load_cloud(
        &self,
        environment: bool,
        timeout: Duration,
        user_agent: &str,
    ) -> Result<Option<Cloud>, CommandError> {
        let from_env = environment
            && CLOUD_VARIABLES
                .iter()
                .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
        if !self.given() && !from_env {
            return Ok(None);
        }
        let config = self
            .loader()
            .load()
            .map_err(|e| CommandError::new(format!("invalid cloud configuration: {e}")))?;
        let http = Cloud::http_client_builder(&config)
            .map_err(CommandError::from_client)?
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(user_agent)
            .build()
            .map_err(|e| CommandError::with_source("cannot build the HTTP client", e))?;
        Cloud::with_http_client(config, http)
            .map(Some)
            .map_err(CommandError::from_client)
    }
}

/// Variables that, alone, say a cloud is configured.
const CLOUD_VARIABLES: &[&str] = &["OS_CLOUD", "OS_AUTH_URL", "OS_AUTH_TYPE", "OS_ENDPOINT"];

/// The value parser of a `--timeout SECONDS` option: a finite number of
/// seconds above 0 and at most a day.
///
/// # Errors
///
/// Returns a message quoting the input and saying what is accepted.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err(format!(
            "expected a number of seconds above 0 and at most 86400, got {text:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Tool {
        #[command(flatten)]
        cloud: CloudArgs,
    }

    #[test]
    fn options_as_clouds_yaml_keys() {
        let tool = Tool::try_parse_from([
            "tool",
            "--os-cloud",
            "devstack",
            "--os-token",
            "admin",
            "--os-endpoint",
            "http://h/",
            "--insecure",
        ])
        .unwrap();
        assert_eq!(
            tool.cloud.options(),
            [
                ("token", "admin"),
                ("endpoint", "http://h/"),
                ("insecure", "true")
            ]
        );
        assert!(tool.cloud.given());
        let none = Tool::try_parse_from(["tool"]).unwrap();
        assert!(none.cloud.options().is_empty() && !none.cloud.given());
        let named = Tool::try_parse_from(["tool", "--os-cloud", "devstack"]).unwrap();
        assert!(named.cloud.given());
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("2.5"), Ok(2.5));
        for bad in ["0", "-1", "nan", "inf", "1e9", "soon", ""] {
            assert!(parse_seconds(bad).is_err(), "{bad:?}");
        }
    }
}
