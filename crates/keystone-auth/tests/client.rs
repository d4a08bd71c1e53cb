//! KeystoneClient against a fake Keystone on loopback: error kinds and the
//! renewal of the service token.

mod support;

use std::time::Duration;

use http::StatusCode;
use keystone_auth::{ErrorKind, Scope};
use support::{FakeKeystone, Mode};

#[tokio::test]
async fn validate_returns_the_identity() {
    let ks = FakeKeystone::start().await;
    let client = ks.client_builder().build().unwrap();
    let token = ks.project_token("alice", "p1", &["reader", "member"]);
    let id = client.validate(&token).await.unwrap();
    assert_eq!(id.user_id, "alice-id");
    assert_eq!(id.project_id(), Some("p1"));
    assert!(matches!(id.scope, Scope::Project { .. }));
    assert_eq!(id.roles, ["reader", "member"]);
    assert!(id.catalog.is_none(), "?nocatalog by default");
}

#[tokio::test]
async fn error_kinds_say_what_went_wrong() {
    let ks = FakeKeystone::start().await;
    // A timeout long enough for an 8 MiB answer on a busy machine; the
    // timeout case below uses a client of its own.
    let client = ks
        .client_builder()
        .request_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let token = ks.project_token("bob", "p1", &["member"]);

    let e = client.validate("gAAAAAB-unknown").await.unwrap_err();
    assert!(e.is_invalid_token(), "{e:?}");

    ks.set_mode(Mode::ServerError);
    let e = client.validate(&token).await.unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::ServerError(StatusCode::INTERNAL_SERVER_ERROR)
    );
    assert!(e.is_unavailable());

    ks.set_mode(Mode::NotJson);
    let e = client.validate(&token).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidResponse);
    assert!(
        std::error::Error::source(&e).is_some(),
        "the parse error is kept"
    );

    ks.set_mode(Mode::MissingFields);
    assert_eq!(
        client.validate(&token).await.unwrap_err().kind(),
        ErrorKind::InvalidResponse
    );

    ks.set_mode(Mode::HugeBody);
    assert_eq!(
        client.validate(&token).await.unwrap_err().kind(),
        ErrorKind::InvalidResponse
    );

    ks.set_mode(Mode::Normal);
    ks.set_delay(Duration::from_secs(3));
    let client = ks
        .client_builder()
        .request_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let e = client.validate(&token).await.unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
    assert_eq!(e.to_string(), "keystone did not answer in time");
}

#[tokio::test]
async fn service_token_is_renewed_before_it_expires() {
    let ks = FakeKeystone::start().await;
    let token = ks.project_token("carol", "p1", &["member"]);

    // Renewed `renew_before` ahead of the expiry.
    let client = ks
        .client_builder()
        .renew_before(Duration::from_secs(3599))
        .build()
        .unwrap();
    ks.set_service_token_lifetime(Duration::from_secs(7200));
    client.validate(&token).await.unwrap();
    // 7200 s less 3599 s: not yet due.
    client.validate(&token).await.unwrap();
    assert_eq!(ks.auths(), 1);

    // A token living less than twice `renew_before` is renewed half way.
    let client = ks.client_builder().build().unwrap();
    ks.set_service_token_lifetime(Duration::from_secs(2));
    client.validate(&token).await.unwrap();
    client.validate(&token).await.unwrap();
    assert_eq!(ks.auths(), 2, "fresh for the first second");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    client.validate(&token).await.unwrap();
    assert_eq!(
        ks.auths(),
        3,
        "renewed after half its life, before it expired"
    );
}

#[tokio::test]
async fn renew_before_margin_is_honoured() {
    let ks = FakeKeystone::start().await;
    let token = ks.project_token("dora", "p1", &["member"]);
    // Lives 4 s, renewed 1 s ahead: fresh at 2.2 s (half way would renew).
    ks.set_service_token_lifetime(Duration::from_secs(4));
    let client = ks
        .client_builder()
        .renew_before(Duration::from_secs(1))
        .build()
        .unwrap();
    client.validate(&token).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2200)).await;
    client.validate(&token).await.unwrap();
    assert_eq!(ks.auths(), 1);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    client.validate(&token).await.unwrap();
    assert_eq!(ks.auths(), 2);
}

#[tokio::test]
async fn concurrent_first_validations_authenticate_once() {
    let ks = FakeKeystone::start().await;
    let client = ks.client_builder().build().unwrap();
    let mut tasks = Vec::new();
    for i in 0..10 {
        let token = ks.project_token(&format!("u{i}"), "p1", &["member"]);
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            client.validate(&token).await.map(|_| ())
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(ks.auths(), 1);
    assert_eq!(ks.validations(), 10);
}

/// An application credential, by id or by name and user, authenticates
/// without a password or a scope; a wrong secret is refused as Keystone
/// refuses it; the settings missing for one are named.
#[tokio::test]
async fn application_credentials_authenticate() {
    use keystone_auth::{DomainSpec, KeystoneClient};
    use support::{APP_CREDENTIAL_ID, APP_CREDENTIAL_NAME, APP_CREDENTIAL_SECRET, SERVICE_USER};
    let ks = FakeKeystone::start().await;
    let base = || {
        KeystoneClient::builder()
            .auth_url(format!("{}/v3", ks.url))
            .connect_timeout(Duration::from_secs(1))
            .request_timeout(Duration::from_secs(2))
    };
    let token = ks.project_token("alice", "p1", &["member"]);
    let by_id = base()
        .application_credential_id(APP_CREDENTIAL_ID)
        .application_credential_secret(APP_CREDENTIAL_SECRET)
        .build()
        .unwrap();
    assert_eq!(by_id.validate(&token).await.unwrap().user_id, "alice-id");
    let by_name = base()
        .application_credential_name(APP_CREDENTIAL_NAME)
        .username(SERVICE_USER)
        .user_domain(DomainSpec::Name("Default".into()))
        .application_credential_secret(APP_CREDENTIAL_SECRET)
        .build()
        .unwrap();
    assert_eq!(by_name.validate(&token).await.unwrap().user_id, "alice-id");
    let wrong = base()
        .application_credential_id(APP_CREDENTIAL_ID)
        .application_credential_secret("not-it")
        .build()
        .unwrap();
    let e = wrong.authenticate().await.unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::ServiceAuthRefused(StatusCode::UNAUTHORIZED),
        "{e:?}"
    );
    let e = base()
        .application_credential_secret(APP_CREDENTIAL_SECRET)
        .build()
        .unwrap_err();
    assert_eq!(e.setting(), "application_credential_id");
    let e = base()
        .application_credential_name(APP_CREDENTIAL_NAME)
        .application_credential_secret(APP_CREDENTIAL_SECRET)
        .build()
        .unwrap_err();
    assert_eq!(e.setting(), "username");
}
