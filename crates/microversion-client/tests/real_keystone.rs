//! Against a real Keystone (scripts/keystone.sh) whose catalog lists
//! placement-api, compute and volumev3 (scripts/keystone-catalog.sh).
//! Each test prints "skipped: ..." and passes when `KEYSTONE_URL` or
//! `MV_TEST_PLACEMENT_URL` is not set; CI sets both (scripts/test.sh).
//!
//! The token-renewal test runs only when `KEYSTONE_TOKEN_EXPIRATION`
//! (the `[token] expiration` Keystone was started with, at most 30 s) is
//! set.

use std::time::Duration;

use microversion::{Version, VersionRange};
use microversion_client::cloud::Cloud;
use microversion_client::config::ConfigLoader;
use microversion_test_support::Scratch;
use serde_json::{Value, json};

struct Env {
    /// The identity root, without `/v3`.
    url: String,
    member: String,
    member_password: String,
    member_id: String,
    reader: String,
    reader_password: String,
    system_reader: String,
    system_reader_password: String,
    placement: String,
    compute: String,
    volume: String,
}

fn env() -> Option<Env> {
    let (Ok(url), Ok(placement)) = (
        std::env::var("KEYSTONE_URL"),
        std::env::var("MV_TEST_PLACEMENT_URL"),
    ) else {
        eprintln!("skipped: KEYSTONE_URL or MV_TEST_PLACEMENT_URL not set");
        return None;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    Some(Env {
        url: url.trim_end_matches('/').trim_end_matches("/v3").to_owned(),
        member: var("KEYSTONE_MEMBER_USER"),
        member_password: var("KEYSTONE_MEMBER_PASSWORD"),
        member_id: var("KEYSTONE_MEMBER_USER_ID"),
        reader: var("KEYSTONE_READER_USER"),
        reader_password: var("KEYSTONE_READER_PASSWORD"),
        system_reader: var("KEYSTONE_SYSTEM_READER_USER"),
        system_reader_password: var("KEYSTONE_SYSTEM_READER_PASSWORD"),
        placement,
        compute: var("MV_TEST_COMPUTE_URL"),
        volume: var("MV_TEST_VOLUME_URL"),
    })
}

/// clouds.yaml with the member (password in secure.yaml), the system
/// reader, and a wrong password.
fn clouds(env: &Env) -> Scratch {
    let dir = Scratch::new("real-keystone");
    std::fs::write(
        dir.join("clouds.yaml"),
        format!(
            "clouds:
  member:
    auth:
      auth_url: {url}/v3
      username: {member}
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
  system:
    auth:
      auth_url: {url}
      username: {sys}
      password: {sys_pw}
      user_domain_id: default
      system_scope: all
  wrong:
    auth:
      auth_url: {url}
      username: {member}
      password: wrong-password
      project_name: demo
      domain_name: Default
",
            url = env.url,
            member = env.member,
            sys = env.system_reader,
            sys_pw = env.system_reader_password,
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("secure.yaml"),
        format!(
            "clouds:\n  member:\n    auth:\n      password: {}\n",
            env.member_password
        ),
    )
    .unwrap();
    dir
}

fn cloud(dir: &Scratch, name: &str) -> Cloud {
    Cloud::new(
        ConfigLoader::new()
            .search_dirs([dir.path()])
            .cloud(name)
            .load()
            .unwrap(),
    )
    .unwrap()
}

/// The cloud's placement client, speaking 1.0 - 1.99.
async fn placement_client(cloud: &Cloud) -> microversion_client::Client {
    cloud
        .client("placement")
        .await
        .unwrap()
        .supported_versions(VersionRange::from_static("1.0", "1.99"))
        .build()
        .unwrap()
}

fn slash(url: &str) -> String {
    format!("{}/", url.trim_end_matches('/'))
}

#[tokio::test]
async fn clouds_yaml_password_finds_every_service() {
    let Some(env) = env() else { return };
    let dir = clouds(&env);
    let c = cloud(&dir, "member");
    let token = c.token().await.unwrap().unwrap();
    assert!(token.identity().has_role("member"));
    assert_eq!(
        c.endpoint("placement").await.unwrap().as_str(),
        slash(&env.placement)
    );
    assert_eq!(
        c.endpoint("compute").await.unwrap().as_str(),
        slash(&env.compute)
    );
    for alias in ["block-storage", "volume", "volumev3"] {
        assert_eq!(
            c.endpoint(alias).await.unwrap().as_str(),
            slash(&env.volume),
            "{alias}"
        );
    }
    // Discovery and negotiation on the catalog's endpoint: the highest
    // version both sides support.
    let placement = placement_client(&c).await;
    assert_eq!(
        placement.version().await.unwrap().header(),
        Some(Version::new(1, 39))
    );
    // noauth2 placement-api honours X-Roles: an admin call at 1.39.
    let response = placement
        .get("resource_providers")
        .header("x-roles", "admin")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.version(), Some(Version::new(1, 39)));
    let body: Value = response.json().await.unwrap();
    assert!(body["resource_providers"].is_array(), "{body}");
    // One authentication for all of it.
    assert_eq!(
        c.auth()
            .unwrap()
            .keystone_session()
            .unwrap()
            .authentications(),
        1
    );
}

#[tokio::test]
async fn the_os_variables_and_each_scope() {
    let Some(env) = env() else { return };
    let reader = Cloud::new(
        ConfigLoader::new()
            .env_vars([
                ("OS_AUTH_URL", format!("{}/v3", env.url)),
                ("OS_USERNAME", env.reader.clone()),
                ("OS_PASSWORD", env.reader_password.clone()),
                ("OS_PROJECT_NAME", "demo".to_owned()),
                ("OS_USER_DOMAIN_NAME", "Default".to_owned()),
                ("OS_PROJECT_DOMAIN_ID", "default".to_owned()),
                ("OS_INTERFACE", "internal".to_owned()),
            ])
            .load()
            .unwrap(),
    )
    .unwrap();
    let token = reader.token().await.unwrap().unwrap();
    assert!(token.identity().project_id().is_some());
    assert!(token.identity().has_role("reader") && !token.identity().has_role("member"));
    assert_eq!(
        reader.endpoint("placement").await.unwrap().as_str(),
        slash(&env.placement)
    );

    let dir = clouds(&env);
    let system = cloud(&dir, "system");
    let token = system.token().await.unwrap().unwrap();
    assert!(token.identity().is_system_scope());

    // token: the member's token exchanged for a new one.
    let member = cloud(&dir, "member").token().await.unwrap().unwrap();
    let exchanged = Cloud::new(
        ConfigLoader::new()
            .option("auth_type", "token")
            .option("auth_url", &env.url)
            .option("token", member.header_value().to_str().unwrap())
            .option("project_name", "demo")
            .option("project_domain_id", "default")
            .load()
            .unwrap(),
    )
    .unwrap();
    let token = exchanged.token().await.unwrap().unwrap();
    assert_ne!(token.header_value(), member.header_value());
    assert_eq!(token.identity().user_id, env.member_id);

    // v3applicationcredential: one made now with the member's token.
    let name = format!("mv-test-{}", std::process::id());
    let made: Value = reqwest::Client::new()
        .post(format!(
            "{}/v3/users/{}/application_credentials",
            env.url, env.member_id
        ))
        .header("x-auth-token", member.header_value().to_str().unwrap())
        .json(&json!({"application_credential": {"name": name}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let credential = &made["application_credential"];
    let app = Cloud::new(
        ConfigLoader::new()
            .env_vars([
                ("OS_AUTH_TYPE", "v3applicationcredential".to_owned()),
                ("OS_AUTH_URL", env.url.clone()),
                (
                    "OS_APPLICATION_CREDENTIAL_ID",
                    credential["id"].as_str().unwrap().to_owned(),
                ),
                (
                    "OS_APPLICATION_CREDENTIAL_SECRET",
                    credential["secret"].as_str().unwrap().to_owned(),
                ),
            ])
            .load()
            .unwrap(),
    )
    .unwrap();
    let token = app.token().await.unwrap().unwrap();
    assert_eq!(token.identity().user_id, env.member_id);
    assert_eq!(
        app.endpoint("compute").await.unwrap().as_str(),
        slash(&env.compute)
    );
}

#[tokio::test]
async fn admin_token_and_none_go_to_their_endpoint() {
    let Some(env) = env() else { return };
    for auth_type in ["admin_token", "none"] {
        let c = Cloud::new(
            ConfigLoader::new()
                .option("auth_type", auth_type)
                .option("token", "admin")
                .option("endpoint", &env.placement)
                .load()
                .unwrap(),
        )
        .unwrap();
        let client = placement_client(&c).await;
        // noauth2's admin token is "admin"; without a token, 401.
        let status = client
            .get("resource_providers")
            .send()
            .await
            .unwrap()
            .status();
        let want = if auth_type == "none" { 401 } else { 200 };
        assert_eq!(status, want, "{auth_type}");
    }
}

#[tokio::test]
async fn wrong_password_unknown_cloud_and_missing_service() {
    let Some(env) = env() else { return };
    let dir = clouds(&env);
    let e = cloud(&dir, "wrong").token().await.unwrap_err();
    assert!(e.is_auth_refused(), "{e:?}");
    assert!(
        e.to_string().contains(&format!(
            "refused the password of user \"{}\" (domain \"Default\"): 401 Unauthorized",
            env.member
        )),
        "{e}"
    );
    assert!(!e.to_string().contains("wrong-password"));
    let e = ConfigLoader::new()
        .search_dirs([dir.path()])
        .cloud("nope")
        .load()
        .unwrap_err();
    assert!(
        e.to_string().contains("(it has: member, system, wrong)"),
        "{e}"
    );
    let e = cloud(&dir, "member")
        .endpoint("baremetal")
        .await
        .unwrap_err();
    assert!(e.is_catalog());
    let text = e.to_string();
    assert!(
        text.contains("no public endpoint for service type \"baremetal\"")
            && text.contains("identity (")
            && text.contains("placement (public in RegionOne"),
        "{text}"
    );
}

#[tokio::test]
async fn short_lived_tokens_are_renewed() {
    let Some(env) = env() else { return };
    let Some(expiration) = std::env::var("KEYSTONE_TOKEN_EXPIRATION")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|s| *s <= 30)
    else {
        eprintln!("skipped: KEYSTONE_TOKEN_EXPIRATION (30 s at most) not set");
        return;
    };
    let dir = clouds(&env);
    let c = cloud(&dir, "member");
    let placement = placement_client(&c).await;
    let first = c.token().await.unwrap().unwrap();
    let life = first.identity().expires_at - time::OffsetDateTime::now_utc();
    assert!(
        life <= time::Duration::seconds(i64::try_from(expiration).unwrap()),
        "{life}"
    );
    // Past half the token's life it is renewed before use, and past its
    // expiry calls still work.
    tokio::time::sleep(Duration::from_secs(expiration + 1)).await;
    let response = placement
        .get("resource_providers")
        .header("x-roles", "admin")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let second = c.token().await.unwrap().unwrap();
    assert_ne!(second.header_value(), first.header_value());
    assert!(second.identity().expires_at > first.identity().expires_at);
    assert_eq!(
        c.auth()
            .unwrap()
            .keystone_session()
            .unwrap()
            .authentications(),
        2
    );
}
