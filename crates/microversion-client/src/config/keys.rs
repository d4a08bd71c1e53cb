//! The settings' names: in clouds.yaml (`auth.password`), as `OS_*`
//! variables (`OS_PASSWORD`) and as options (`--os-password`).

/// Keys that belong under `auth:` (openstacksdk also accepts them at the
/// top of a cloud, and the `OS_*` variables name them without `auth`).
pub(crate) const AUTH_KEYS: &[&str] = &[
    "auth_url",
    "username",
    "user_id",
    "password",
    "project_name",
    "project_id",
    "tenant_name",
    "tenant_id",
    "user_domain_name",
    "user_domain_id",
    "project_domain_name",
    "project_domain_id",
    "domain_name",
    "domain_id",
    "system_scope",
    "application_credential_id",
    "application_credential_name",
    "application_credential_secret",
    "token",
    "endpoint",
    "url",
];

/// Keys of a cloud outside `auth:`.
const CLOUD_KEYS: &[&str] = &[
    "auth_type",
    "region_name",
    "interface",
    "endpoint_type",
    "cacert",
    "verify",
    "insecure",
];

/// Variables that choose files or the cloud, not settings.
const NOT_SETTINGS: &[&str] = &[
    "OS_CLOUD",
    "OS_CLOUD_NAME",
    "OS_CLIENT_CONFIG_FILE",
    "OS_CLIENT_SECURE_FILE",
];

/// Keys whose values are never shown in messages.
pub(crate) const SECRET_KEYS: &[&str] = &["password", "application_credential_secret", "token"];

/// Whether a cloud's key (outside `auth:`) is read.
pub(crate) fn is_known(key: &str) -> bool {
    CLOUD_KEYS.contains(&key)
        || AUTH_KEYS.contains(&key)
        || key.ends_with("_api_version")
        || key.ends_with("_endpoint_override")
}

/// The one name of a key: aliases of old clients mapped to today's
/// names, `auth.` removed.
pub(crate) fn canonical(key: &str) -> &str {
    match key.strip_prefix("auth.").unwrap_or(key) {
        "tenant_name" => "project_name",
        "tenant_id" => "project_id",
        "url" => "endpoint",
        "endpoint_type" => "interface",
        other => other,
    }
}

/// The key of an `OS_*` variable, if it names a setting.
pub(crate) fn from_env_var(name: &str) -> Option<String> {
    if NOT_SETTINGS.contains(&name) {
        return None;
    }
    let key = name.strip_prefix("OS_")?.to_ascii_lowercase();
    is_known(&key).then(|| canonical(&key).to_owned())
}

/// How clouds.yaml writes a key: `auth.password`, `region_name`.
pub(crate) fn file_key(key: &str) -> String {
    if AUTH_KEYS.contains(&key) {
        format!("auth.{key}")
    } else {
        key.to_owned()
    }
}

/// The variable of a key: `OS_PASSWORD`.
pub(crate) fn env_var(key: &str) -> String {
    format!("OS_{}", key.to_ascii_uppercase())
}

/// The option of a key: `--os-password`.
pub(crate) fn option(key: &str) -> String {
    format!("--os-{}", key.replace('_', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(from_env_var("OS_PASSWORD").as_deref(), Some("password"));
        assert_eq!(
            from_env_var("OS_TENANT_NAME").as_deref(),
            Some("project_name")
        );
        assert_eq!(from_env_var("OS_URL").as_deref(), Some("endpoint"));
        assert_eq!(
            from_env_var("OS_PLACEMENT_API_VERSION").as_deref(),
            Some("placement_api_version")
        );
        assert_eq!(from_env_var("OS_CLOUD"), None);
        assert_eq!(from_env_var("OS_SOMETHING_ELSE"), None);
        assert_eq!(from_env_var("HOME"), None);
        assert_eq!(canonical("auth.tenant_id"), "project_id");
        assert_eq!(file_key("password"), "auth.password");
        assert_eq!(file_key("region_name"), "region_name");
        assert_eq!(env_var("user_domain_name"), "OS_USER_DOMAIN_NAME");
        assert_eq!(option("user_domain_name"), "--os-user-domain-name");
    }
}
