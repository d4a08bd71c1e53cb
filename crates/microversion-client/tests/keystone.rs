//! Clouds against a fake Keystone and token-checking services on
//! loopback: every auth type, the token's renewal, one authentication for
//! concurrent callers, the retry after a 401, the catalog (aliases, a
//! missing service, a broken URL) and Keystone's bad answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Json;
use axum::routing::get;
use microversion::{VersionRange, VersionSpan};
use microversion_client::cloud::Cloud;
use microversion_client::config::ConfigLoader;
use microversion_server::{
    MicroversionLayer, Microversions, Profile, ServedVersion, VersionedRouter,
};
use microversion_test_support::keystone::{self, Answer, FakeKeystone, require_token};
use microversion_test_support::{RequestLog, Scratch, serve};
use serde_json::{Value, json};

/// A Placement-like service (1.0 - 1.39) that wants Keystone's tokens.
struct Service {
    url: String,
    log: RequestLog,
    refused: Arc<AtomicUsize>,
}

async fn echo(version: ServedVersion) -> Json<Value> {
    Json(json!({"version": version.to_string()}))
}

async fn service(keystone: &FakeKeystone, service_type: &str, max: &'static str) -> Service {
    let range = VersionRange::from_static("1.0", max);
    let root = json!({"versions": [{"id": "v1.0", "min_version": "1.0", "max_version": max,
        "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}]});
    let api = Microversions::builder(service_type, range)
        .profile(Profile::Placement)
        .build()
        .unwrap();
    let app = VersionedRouter::new()
        .get("/resource_providers", VersionSpan::ALL, echo)
        .build()
        .unwrap()
        .route("/", get(move || async move { Json(root.clone()) }))
        .layer(MicroversionLayer::new(api));
    let refused = Arc::new(AtomicUsize::new(0));
    let log = RequestLog::default();
    let app = log.recording(require_token(app, keystone, Arc::clone(&refused)));
    Service {
        url: serve(app).await,
        log,
        refused,
    }
}

/// A fake Keystone whose catalog has placement (as `placement`), a
/// block-storage service under its alias `volumev3`, and a broken entry.
async fn cloud_setup() -> (FakeKeystone, Service, Service) {
    let keystone = FakeKeystone::start().await;
    let placement = service(&keystone, "placement", "1.39").await;
    let volume = service(&keystone, "volume", "3.70").await;
    keystone.set_catalog(&[
        ("identity", keystone.url.as_str()),
        ("placement", placement.url.as_str()),
        ("volumev3", volume.url.as_str()),
        ("broken", "http//no-scheme"),
    ]);
    (keystone, placement, volume)
}

fn clouds_yaml(keystone: &FakeKeystone, extra: &str) -> Scratch {
    let dir = Scratch::new("keystone-clouds");
    let text = format!(
        "clouds:
  pw:
    auth:
      auth_url: {url}/v3
      username: demo
      password: {pw}
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
  system:
    auth:
      auth_url: {url}
      user_id: {uid}
      password: {pw}
      system_scope: all
  app:
    auth_type: v3applicationcredential
    auth:
      auth_url: {url}
      application_credential_id: {app}
      application_credential_secret: {secret}
  wrong:
    auth:
      auth_url: {url}
      username: demo
      password: not-the-password
      user_domain_id: default
      project_id: p-demo
{extra}",
        url = keystone.url,
        pw = keystone::PASSWORD,
        uid = keystone::USER_ID,
        app = keystone::APP_CREDENTIAL_ID,
        secret = keystone::APP_CREDENTIAL_SECRET,
    );
    std::fs::write(dir.join("clouds.yaml"), text).unwrap();
    dir
}

fn cloud(dir: &Scratch, name: &str) -> Cloud {
    let config = ConfigLoader::new()
        .search_dirs([dir.path()])
        .cloud(name)
        .load()
        .unwrap();
    Cloud::new(config).unwrap()
}

fn placement_range() -> VersionRange {
    VersionRange::from_static("1.0", "1.99")
}

/// The cloud's placement client, speaking 1.0 - 1.99.
async fn placement_client(cloud: &Cloud) -> microversion_client::Client {
    cloud
        .client("placement")
        .await
        .unwrap()
        .supported_versions(placement_range())
        .build()
        .unwrap()
}

#[tokio::test]
async fn password_cloud_gets_a_token_and_the_endpoint_from_the_catalog() {
    let (keystone, placement, _) = cloud_setup().await;
    let dir = clouds_yaml(&keystone, "");
    let cloud = cloud(&dir, "pw");
    let client = placement_client(&cloud).await;
    assert_eq!(client.endpoint().as_str(), format!("{}/", placement.url));
    let response = client.get("resource_providers").send().await.unwrap();
    assert_eq!(response.status(), 200);
    // No version named: the highest both sides support, the server's 1.39
    // (the client could speak up to 1.99).
    assert_eq!(response.sent_version().unwrap().to_string(), "1.39");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["version"], "1.39");
    let seen = placement.log.to(&["/resource_providers"]);
    assert_eq!(seen[0].header("x-auth-token"), Some("tok-1"));
    assert_eq!(keystone.issued(), 1);
    let request = &keystone.requests()[0]["auth"];
    assert_eq!(
        request["identity"]["password"]["user"],
        json!({"name": "demo", "domain": {"name": "Default"}, "password": keystone::PASSWORD})
    );
    assert_eq!(
        request["scope"],
        json!({"project": {"name": "demo", "domain": {"name": "Default"}}})
    );
}

#[tokio::test]
async fn other_auth_types_send_their_bodies() {
    let (keystone, placement, _) = cloud_setup().await;
    let dir = clouds_yaml(&keystone, "");
    for name in ["system", "app"] {
        let c = cloud(&dir, name);
        let client = placement_client(&c).await;
        let r = client.get("resource_providers").send().await.unwrap();
        assert_eq!(r.status(), 200, "{name}");
    }
    let bodies = keystone.requests();
    assert_eq!(bodies[0]["auth"]["scope"], json!({"system": {"all": true}}));
    assert_eq!(
        bodies[1]["auth"]["identity"]["application_credential"],
        json!({"id": keystone::APP_CREDENTIAL_ID, "secret": keystone::APP_CREDENTIAL_SECRET})
    );
    assert!(bodies[1]["auth"].get("scope").is_none());

    // token: an existing token exchanged for a scoped one.
    let config = ConfigLoader::new()
        .option("auth_type", "token")
        .option("auth_url", &keystone.url)
        .option("token", "tok-1")
        .option("project_id", "p-demo")
        .load()
        .unwrap();
    let c = Cloud::new(config).unwrap();
    let token = c.token().await.unwrap().unwrap();
    assert_eq!(token.header_value(), "tok-3");
    assert_eq!(
        keystone.requests()[2]["auth"]["identity"],
        json!({"methods": ["token"], "token": {"id": "tok-1"}})
    );
    assert_eq!(
        c.endpoint("placement").await.unwrap().as_str(),
        format!("{}/", placement.url)
    );
}

#[tokio::test]
async fn admin_token_and_none_need_no_keystone() {
    let (keystone, placement, _) = cloud_setup().await;
    keystone.set_catalog(&[]);
    let config = ConfigLoader::new()
        .env_vars([
            ("OS_AUTH_TYPE", "admin_token"),
            ("OS_TOKEN", "tok-admin"),
            ("OS_ENDPOINT", placement.url.as_str()),
        ])
        .load()
        .unwrap();
    let c = Cloud::new(config).unwrap();
    let client = placement_client(&c).await;
    // The fake service only knows Keystone's tokens: 401, and a fixed
    // token is not got again.
    let r = client.get("resource_providers").send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(placement.refused.load(Ordering::SeqCst), 1);
    let seen = placement.log.to(&["/resource_providers"]);
    assert_eq!(seen[0].header("x-auth-token"), Some("tok-admin"));
    assert_eq!(keystone.issued(), 0);

    let config = ConfigLoader::new()
        .option("auth_type", "none")
        .option("placement_endpoint_override", &placement.url)
        .load()
        .unwrap();
    let c = Cloud::new(config).unwrap();
    let client = placement_client(&c).await;
    client.get("resource_providers").send().await.unwrap();
    let seen = placement.log.to(&["/resource_providers"]);
    assert_eq!(seen[1].header("x-auth-token"), None);
    // Nothing says where compute is.
    let e = c.endpoint("compute").await.unwrap_err();
    assert!(e.is_catalog());
    assert_eq!(
        e.to_string(),
        "no endpoint for compute: auth_type none has no catalog; set endpoint (OS_ENDPOINT, \
         --os-endpoint) or compute_endpoint_override"
    );
}

#[tokio::test]
async fn concurrent_callers_share_one_authentication() {
    let (keystone, placement, _) = cloud_setup().await;
    keystone.set_delay(Duration::from_millis(200));
    let dir = clouds_yaml(&keystone, "");
    let c = cloud(&dir, "pw");
    let client = placement_client(&c).await;
    // `client` got the first token to find the endpoint; a new cloud
    // starts with none.
    let fresh = cloud(&dir, "pw");
    let before = keystone.issued();
    let tasks: Vec<_> = (0..30)
        .map(|_| {
            let fresh = fresh.clone();
            tokio::spawn(async move { fresh.token().await.unwrap().unwrap() })
        })
        .collect();
    let mut tokens = Vec::new();
    for task in tasks {
        tokens.push(task.await.unwrap().header_value().clone());
    }
    assert_eq!(keystone.issued(), before + 1);
    assert!(tokens.iter().all(|t| t == tokens[0]));
    // And requests through one client: still the one token.
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .get("resource_providers")
                    .send()
                    .await
                    .unwrap()
                    .status()
            })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap(), 200);
    }
    assert_eq!(keystone.issued(), before + 1);
    assert_eq!(placement.refused.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_token_is_renewed_before_it_expires() {
    let (keystone, placement, _) = cloud_setup().await;
    // A 2 s token is renewed half way, after 1 s.
    keystone.set_lifetime(Duration::from_secs(2));
    let dir = clouds_yaml(&keystone, "");
    let c = cloud(&dir, "pw");
    let client = placement_client(&c).await;
    client.get("resource_providers").send().await.unwrap();
    assert_eq!(keystone.issued(), 1);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let r = client.get("resource_providers").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(keystone.issued(), 2);
    let seen = placement.log.to(&["/resource_providers"]);
    assert_eq!(seen[1].header("x-auth-token"), Some("tok-2"));
    assert_eq!(placement.refused.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_401_gets_a_new_token_and_one_retry() {
    let (keystone, placement, _) = cloud_setup().await;
    let dir = clouds_yaml(&keystone, "");
    let c = cloud(&dir, "pw");
    let client = placement_client(&c).await;
    assert_eq!(
        client
            .get("resource_providers")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    keystone.revoke_all();
    let r = client.get("resource_providers").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.attempts(), 1);
    assert_eq!(placement.refused.load(Ordering::SeqCst), 1);
    assert_eq!(keystone.issued(), 2);
    let seen = placement.log.to(&["/resource_providers"]);
    let tokens: Vec<_> = seen
        .iter()
        .map(|s| s.header("x-auth-token").unwrap().to_owned())
        .collect();
    assert_eq!(tokens, ["tok-1", "tok-1", "tok-2"]);
    // A caller's own X-Auth-Token is kept, and not retried.
    let r = client
        .get("resource_providers")
        .header("x-auth-token", "mine")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(keystone.issued(), 2);
}

#[tokio::test]
async fn a_wrong_password_is_a_clear_error() {
    let (keystone, placement, _) = cloud_setup().await;
    let dir = clouds_yaml(&keystone, "");
    let c = cloud(&dir, "wrong");
    let e = c.client("placement").await.unwrap_err();
    assert!(e.is_auth() && e.is_auth_refused(), "{e:?}");
    let text = e.to_string();
    assert_eq!(
        text,
        format!(
            "authentication failed: keystone at {}/v3/auth/tokens refused the password of user \
             \"demo\" (domain id \"default\"): 401 Unauthorized: The request you have made \
             requires authentication.",
            keystone.url
        )
    );
    assert!(!text.contains("not-the-password") && !format!("{e:?}").contains("not-the-password"));
    assert!(placement.log.is_empty());
}

#[tokio::test]
async fn keystone_answers_without_a_token() {
    let (keystone, _, _) = cloud_setup().await;
    let dir = clouds_yaml(&keystone, "");
    for (answer, reason) in [
        (
            Answer::NoTokenHeader,
            "gave no usable token: the answer has no X-Subject-Token header",
        ),
        (
            Answer::NotJson,
            "gave no usable token: the body is not a token",
        ),
        (Answer::Unavailable, "answered 503"),
    ] {
        keystone.set_answer(answer);
        let e = cloud(&dir, "pw").token().await.unwrap_err();
        assert!(e.is_auth() && !e.is_auth_refused(), "{e:?}");
        assert!(e.to_string().contains(reason), "{answer:?}: {e}");
    }
    let dead = microversion_test_support::dead_base();
    let config = ConfigLoader::new()
        .option("auth_url", &dead)
        .option("user_id", "u")
        .option("password", "p")
        .load()
        .unwrap();
    let e = Cloud::new(config).unwrap().token().await.unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "authentication failed: keystone at {dead}/v3/auth/tokens could not be reached: "
        )),
        "{e}"
    );
}

#[tokio::test]
async fn the_catalog_by_type_alias_interface_and_region() {
    let (keystone, _, volume) = cloud_setup().await;
    let dir = clouds_yaml(
        &keystone,
        &format!(
            "  pw-internal:
    auth:
      auth_url: {url}
      user_id: {uid}
      password: {pw}
    interface: internal
    region_name: RegionTwo
",
            url = keystone.url,
            uid = keystone::USER_ID,
            pw = keystone::PASSWORD
        ),
    );
    let c = cloud(&dir, "pw");
    for alias in ["block-storage", "volume", "volumev3"] {
        assert_eq!(
            c.endpoint(alias).await.unwrap().as_str(),
            format!("{}/", volume.url),
            "{alias}"
        );
    }
    let e = c.endpoint("compute").await.unwrap_err();
    assert!(e.is_catalog());
    assert!(
        e.to_string().starts_with(
            "no public endpoint for service type \"compute\" in region \"RegionOne\" in the \
             catalog; the catalog offers: identity (public in RegionOne, internal in RegionOne, \
             admin in RegionOne), placement ("
        ),
        "{e}"
    );
    let e = c.endpoint("broken").await.unwrap_err();
    assert!(
        e.to_string().starts_with(
            "the catalog's public endpoint of \"broken\" has an invalid URL \"http//no-scheme\""
        ),
        "{e}"
    );
    let all = c.catalog_endpoints().await.unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all[3].0, "broken");
    assert!(all[3].1.is_err());
    assert_eq!(all[1].0, "placement");
    let other_region = cloud(&dir, "pw-internal");
    let e = other_region.endpoint("placement").await.unwrap_err();
    assert!(
        e.to_string().starts_with(
            "no internal endpoint for service type \"placement\" in region \"RegionTwo\""
        ),
        "{e}"
    );
}
