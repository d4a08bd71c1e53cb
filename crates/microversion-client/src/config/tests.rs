//! Unit tests of the loader: files, variables, options and every check.

use microversion_test_support::Scratch;

use super::*;

const CLOUDS: &str = r"
clouds:
  devstack:
    auth:
      auth_url: http://127.0.0.1/identity
      username: demo
      project_name: demo
      user_domain_name: Default
      project_domain_id: default
    region_name: RegionOne
    interface: internal
    placement_api_version: 1.20
    volume_api_version: 3.0
    compute_endpoint_override: http://nova.local:8774/v2.1
  system:
    auth:
      auth_url: http://127.0.0.1/identity
      user_id: 0123
      password: p
      system_scope: all
  app:
    auth_type: v3applicationcredential
    auth:
      auth_url: http://127.0.0.1/identity
      application_credential_id: abc
      application_credential_secret: shh
  fixed:
    auth_type: admin_token
    auth:
      token: ADMIN
      endpoint: http://127.0.0.1:8778
  open:
    auth_type: none
    regions: [RegionTwo, RegionThree]
";

fn dir(clouds: &str, secure: Option<&str>) -> Scratch {
    let scratch = Scratch::new("cloud-config");
    std::fs::write(scratch.join("clouds.yaml"), clouds).unwrap();
    if let Some(secure) = secure {
        std::fs::write(scratch.join("secure.yaml"), secure).unwrap();
    }
    scratch
}

fn load(scratch: &Scratch, cloud: &str) -> Result<CloudConfig, ConfigError> {
    ConfigLoader::new()
        .search_dirs([scratch.path()])
        .cloud(cloud)
        .load()
}

#[test]
fn clouds_yaml_with_secure_yaml_merged() {
    let s = dir(
        CLOUDS,
        Some("clouds:\n  devstack:\n    auth:\n      password: s3cret\n"),
    );
    let c = load(&s, "devstack").unwrap();
    assert_eq!(c.name(), Some("devstack"));
    assert_eq!(c.files().len(), 2);
    assert_eq!(c.region_name(), Some("RegionOne"));
    assert_eq!(c.interface(), Interface::Internal);
    assert!(c.verify());
    // 1.20 stays 1.20 (YAML would read the float 1.2).
    assert_eq!(c.api_version("placement").unwrap().to_string(), "1.20");
    // volume_api_version serves every name of the family.
    assert_eq!(c.api_version("block-storage").unwrap().to_string(), "3.0");
    assert_eq!(c.api_version("compute"), None);
    assert_eq!(
        c.endpoint_override("compute").unwrap().as_str(),
        "http://nova.local:8774/v2.1"
    );
    let AuthConfig::Keystone {
        auth_url,
        credentials,
    } = c.auth()
    else {
        panic!("{:?}", c.auth())
    };
    assert_eq!(auth_url, "http://127.0.0.1/identity");
    assert_eq!(
        credentials,
        &Credentials::Password {
            user: UserSpec::Name {
                name: "demo".into(),
                domain: DomainSpec::Name("Default".into())
            },
            password: "s3cret".into(),
            scope: ScopeSpec::Project(ProjectSpec::Name {
                name: "demo".into(),
                domain: DomainSpec::Id("default".into())
            }),
        }
    );
    assert!(!format!("{c:?}").contains("s3cret"));
}

#[test]
fn every_auth_type() {
    let s = dir(CLOUDS, None);
    let system = load(&s, "system").unwrap();
    assert_eq!(system.auth().type_name(), "password");
    let AuthConfig::Keystone { credentials, .. } = system.auth() else {
        panic!()
    };
    assert!(matches!(
        credentials,
        Credentials::Password { user: UserSpec::Id(id), scope: ScopeSpec::System, .. } if id == "0123"
    ));
    let app = load(&s, "app").unwrap();
    assert_eq!(app.auth().type_name(), "v3applicationcredential");
    let fixed = load(&s, "fixed").unwrap();
    assert!(matches!(
        fixed.auth(),
        AuthConfig::AdminToken { token, endpoint: Some(e) }
            if token.expose() == "ADMIN" && e.as_str() == "http://127.0.0.1:8778/"
    ));
    let open = load(&s, "open").unwrap();
    assert_eq!(open.auth(), &AuthConfig::None { endpoint: None });
    assert_eq!(open.region_name(), Some("RegionTwo"));
}

#[test]
fn variables_alone_and_over_a_cloud() {
    let env = [
        ("OS_AUTH_URL", "http://k:5000/v3"),
        ("OS_USERNAME", "alice"),
        ("OS_PASSWORD", "pw"),
        ("OS_PROJECT_NAME", "demo"),
        ("OS_USER_DOMAIN_NAME", "Default"),
        ("OS_PROJECT_DOMAIN_NAME", "Default"),
        ("OS_REGION_NAME", "RegionTwo"),
        ("OS_PLACEMENT_API_VERSION", "1.10"),
        ("OS_INTERFACE", "admin"),
        ("HOME", "/ignored"),
        ("OS_EMPTY", ""),
    ];
    let c = ConfigLoader::new().env_vars(env).load().unwrap();
    assert_eq!(c.name(), None);
    assert_eq!(c.region_name(), Some("RegionTwo"));
    assert_eq!(c.interface(), Interface::Admin);
    assert_eq!(c.api_version("placement").unwrap().to_string(), "1.10");

    // OS_CLOUD picks the cloud; the variables win over its file; options
    // win over both.
    let s = dir(CLOUDS, None);
    let c = ConfigLoader::new()
        .search_dirs([s.path()])
        .env_vars([("OS_CLOUD", "devstack"), ("OS_PASSWORD", "from-env")])
        .env_vars([("OS_REGION_NAME", "RegionTwo")])
        .option("region-name", "RegionNine")
        .load()
        .unwrap();
    assert_eq!(c.name(), Some("devstack"));
    assert_eq!(c.region_name(), Some("RegionNine"));
    let AuthConfig::Keystone {
        credentials: Credentials::Password { password, .. },
        ..
    } = c.auth()
    else {
        panic!()
    };
    assert_eq!(password.expose(), "from-env");
}

#[test]
fn os_client_config_file_is_looked_at_first() {
    let s = dir("clouds: {}", None);
    let other = s.join("elsewhere.yaml");
    std::fs::write(&other, CLOUDS).unwrap();
    let c = ConfigLoader::new()
        .search_dirs([s.path()])
        .env_vars([
            ("OS_CLIENT_CONFIG_FILE", other.to_str().unwrap()),
            ("OS_CLOUD", "fixed"),
        ])
        .load()
        .unwrap();
    assert_eq!(c.files(), [other]);
}

#[test]
fn unknown_cloud_names_the_file_and_the_clouds() {
    let s = dir(CLOUDS, None);
    let e = load(&s, "nope").unwrap_err().to_string();
    assert!(e.starts_with("cloud \"nope\" is not in "), "{e}");
    assert!(
        e.ends_with("clouds.yaml (it has: app, devstack, fixed, open, system)"),
        "{e}"
    );
    let empty = Scratch::new("no-clouds");
    let e = ConfigLoader::new()
        .search_dirs([empty.path()])
        .cloud("x")
        .load()
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cloud \"x\": no clouds.yaml found (looked for "),
        "{e}"
    );
    assert!(matches!(
        ConfigLoader::new().load().unwrap_err(),
        ConfigError::NothingConfigured
    ));
}

#[test]
fn a_file_that_is_not_yaml() {
    for text in [
        "clouds: [unclosed",
        "clouds:\n  x: 3\n",
        "\t- nope: [",
        "just text",
    ] {
        let s = dir(text, None);
        let e = load(&s, "x").unwrap_err();
        assert!(matches!(e, ConfigError::Parse { .. }), "{text:?}: {e}");
        assert!(
            e.to_string()
                .contains("clouds.yaml is not a valid clouds file: "),
            "{e}"
        );
    }
    let s = dir(
        "clouds:\n  x:\n    auth:\n      password: {nested: 1}\n",
        None,
    );
    let e = load(&s, "x").unwrap_err().to_string();
    assert!(e.contains("auth.password"), "{e}");
}

#[test]
fn missing_keys_name_file_cloud_and_key() {
    let s = dir(CLOUDS, None);
    let e = load(&s, "devstack").unwrap_err().to_string();
    let file = s.join("clouds.yaml");
    assert_eq!(
        e,
        format!(
            "{}: cloud \"devstack\": missing auth.password (needed by auth_type password); \
             it may also be given as OS_PASSWORD / --os-password",
            file.display()
        )
    );
    let cases = [
        (
            "clouds: {x: {auth: {username: u, password: p}}}",
            "missing auth.auth_url",
        ),
        (
            "clouds: {x: {auth: {auth_url: 'http://k', password: p}}}",
            "missing auth.username or auth.user_id",
        ),
        (
            "clouds: {x: {auth: {auth_url: 'http://k', username: u, password: p}}}",
            "missing auth.user_domain_name or auth.user_domain_id (needed with username)",
        ),
        (
            "clouds: {x: {auth: {auth_url: 'http://k', user_id: u, password: p, project_name: d}}}",
            "missing auth.project_domain_name or auth.project_domain_id",
        ),
        (
            "clouds: {x: {auth_type: v3applicationcredential, auth: {auth_url: 'http://k', application_credential_secret: s}}}",
            "missing auth.application_credential_id or auth.application_credential_name",
        ),
        (
            "clouds: {x: {auth_type: admin_token}}",
            "missing auth.token",
        ),
    ];
    for (text, want) in cases {
        let s = dir(text, None);
        let e = load(&s, "x").unwrap_err().to_string();
        assert!(
            e.contains("cloud \"x\": ") && e.contains(want),
            "{text}: {e}"
        );
    }
}

#[test]
fn bad_values_name_their_source() {
    let cases = [
        (
            "auth_type: kerberos",
            "key auth_type: invalid value \"kerberos\": expected password, v3applicationcredential, token, admin_token or none",
        ),
        (
            "interface: private",
            "key interface: invalid value \"private\": invalid interface",
        ),
        (
            "verify: maybe",
            "key verify: invalid value \"maybe\": expected true or false",
        ),
        (
            "cacert: /nonexistent/ca.pem",
            "key cacert: invalid value \"/nonexistent/ca.pem\": no such file",
        ),
        (
            "placement_api_version: 1.2.3",
            "key placement_api_version: invalid value \"1.2.3\": invalid version",
        ),
        (
            "compute_endpoint_override: 'ftp://x/'",
            "key compute_endpoint_override: invalid value \"ftp://x/\": expected an http or https URL",
        ),
        (
            "auth: {auth_url: 'not a url', token: t}",
            "key auth.auth_url: invalid value \"not a url\": not a URL",
        ),
        (
            "auth: {auth_url: 'http://k', user_id: u, password: p, system_scope: project}",
            "key auth.system_scope: invalid value \"project\": the only system scope is all",
        ),
    ];
    for (entry, want) in cases {
        let text = if entry.starts_with("auth") {
            format!("clouds:\n  x:\n    {entry}\n")
        } else {
            format!("clouds:\n  x:\n    auth_type: none\n    {entry}\n")
        };
        let s = dir(&text, None);
        let e = load(&s, "x").unwrap_err().to_string();
        assert!(
            e.contains("cloud \"x\": ") && e.contains(want),
            "{entry}: {e}"
        );
    }
    let e = ConfigLoader::new()
        .env_vars([("OS_AUTH_TYPE", "none"), ("OS_INSECURE", "sometimes")])
        .load()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "environment variable OS_INSECURE: invalid value \"sometimes\": expected true or false"
    );
    let e = ConfigLoader::new()
        .option("auth_type", "admin_token")
        .option("token", "SECRET-TOKEN")
        .option("endpoint", "nope")
        .load()
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "option --os-endpoint: invalid value \"nope\": not a URL (relative URL without a base)"
    );
}

#[test]
fn secrets_are_never_quoted() {
    let e = ConfigLoader::new()
        .option("auth_type", "password")
        .option("auth_url", "http://k")
        .option("user_id", "u")
        .option("password", "hunter2")
        .option("system_scope", "nope")
        .load()
        .unwrap_err();
    assert!(!e.to_string().contains("hunter2"));
    let loader = ConfigLoader::new()
        .env_vars([("OS_PASSWORD", "hunter2")])
        .option("token", "hunter3");
    let shown = format!("{loader:?}");
    assert!(!shown.contains("hunter"), "{shown}");
}

#[test]
fn inferred_auth_types() {
    let base = || ConfigLoader::new().option("auth_url", "http://k:5000");
    let c = base().option("token", "t").load().unwrap();
    assert_eq!(c.auth().type_name(), "token");
    let c = base()
        .option("token", "t")
        .option("endpoint", "http://p:8778")
        .load()
        .unwrap();
    assert_eq!(c.auth().type_name(), "admin_token");
    let c = base()
        .option("application_credential_name", "ci")
        .option("application_credential_secret", "s")
        .option("user_id", "u1")
        .load()
        .unwrap();
    assert_eq!(c.auth().type_name(), "v3applicationcredential");
    // A domain next to a project is the default of both domains.
    let c = base()
        .option("username", "u")
        .option("password", "p")
        .option("project_name", "demo")
        .option("domain_name", "Default")
        .load()
        .unwrap();
    let AuthConfig::Keystone {
        credentials: Credentials::Password { user, scope, .. },
        ..
    } = c.auth()
    else {
        panic!()
    };
    assert!(matches!(user, UserSpec::Name { domain: DomainSpec::Name(d), .. } if d == "Default"));
    assert!(
        matches!(scope, ScopeSpec::Project(ProjectSpec::Name { domain: DomainSpec::Name(d), .. }) if d == "Default")
    );
    // A domain alone is a domain scope.
    let c = base()
        .option("user_id", "u")
        .option("password", "p")
        .option("domain_id", "d1")
        .load()
        .unwrap();
    let AuthConfig::Keystone {
        credentials: Credentials::Password { scope, .. },
        ..
    } = c.auth()
    else {
        panic!()
    };
    assert_eq!(scope, &ScopeSpec::Domain(DomainSpec::Id("d1".into())));
}

#[test]
fn json_clouds_file() {
    let s = Scratch::new("clouds-json");
    std::fs::write(
        s.join("clouds.json"),
        r#"{"clouds": {"j": {"auth_type": "none", "placement_api_version": 1.20}}}"#,
    )
    .unwrap();
    let c = load(&s, "j").unwrap();
    assert_eq!(c.api_version("placement").unwrap().to_string(), "1.20");
}
