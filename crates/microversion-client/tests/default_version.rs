//! The default negotiation (docs/client.md and the crate README): with no
//! version named, a call that needs a feature is sent at the highest
//! version both sides support, never above the server's maximum, and
//! never the server's minimum by default; other calls send no header.

mod common;

use microversion::{Version, VersionRange};
use microversion_client::Client;
use microversion_server::Profile;

fn client(endpoint: &str, client_max: &'static str) -> Client {
    Client::builder()
        .endpoint(endpoint)
        .service_type("placement")
        .supported_versions(VersionRange::from_static("1.0", client_max))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_call_that_needs_a_feature_gets_the_highest_common_version() {
    let s = common::server(Profile::Placement).await; // 1.0 - 1.39
    let c = client(&s.endpoint, "1.50");
    let r = c.get(s.resource).require("1.14").send().await.unwrap();
    assert_eq!(r.sent_version(), Some(Version::new(1, 39)));
    assert_eq!(
        s.resource_requests()[0].header("openstack-api-version"),
        Some("placement 1.39")
    );
    // The client's own maximum bounds it too.
    let c = client(&s.endpoint, "1.20");
    let r = c.get(s.resource).require("1.14").send().await.unwrap();
    assert_eq!(r.sent_version(), Some(Version::new(1, 20)));
    let v = c.require("1.14").await.unwrap();
    assert_eq!(v.header(), Some(Version::new(1, 20)));
}

#[tokio::test]
async fn a_feature_the_server_lacks_fails_before_sending() {
    let s = common::server_with_range(
        Profile::Placement,
        Some(VersionRange::from_static("1.0", "1.10")),
    )
    .await;
    let c = client(&s.endpoint, "1.50");
    let e = c.get(s.resource).require("1.14").send().await.unwrap_err();
    assert!(e.is_gate(), "{e}");
    assert!(
        e.to_string().contains("1.14") && e.to_string().contains("1.10"),
        "{e}"
    );
    assert!(s.resource_requests().is_empty());
}

#[tokio::test]
async fn other_calls_send_no_header() {
    let s = common::server(Profile::Placement).await;
    let c = client(&s.endpoint, "1.50");
    let r = c.get(s.resource).send().await.unwrap();
    assert_eq!(r.sent_version(), None);
    assert_eq!(
        s.resource_requests()[0].header("openstack-api-version"),
        None
    );
    // A version named on the client wins over the default.
    let named = Client::builder()
        .endpoint(&s.endpoint)
        .service_type("placement")
        .supported_versions(VersionRange::from_static("1.0", "1.50"))
        .version("1.20")
        .build()
        .unwrap();
    let r = named.get(s.resource).require("1.14").send().await.unwrap();
    assert_eq!(r.sent_version(), Some(Version::new(1, 20)));
}
