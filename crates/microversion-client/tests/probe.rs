//! Probing many endpoints at once.

mod common;

use common::{server_with_range, unversioned_server};
use microversion::{ServerVersions, VersionRange};
use microversion_client::Probe;
use microversion_server::Profile;
use microversion_test_support::dead_base;

fn r(min: &'static str, max: &'static str) -> VersionRange {
    VersionRange::from_static(min, max)
}

#[tokio::test]
async fn each_range_and_the_common_one() {
    let a = server_with_range(Profile::Placement, Some(r("1.0", "1.39"))).await;
    let b = server_with_range(Profile::Placement, Some(r("1.4", "1.30"))).await;
    let c = server_with_range(Profile::ApiSig, Some(r("1.10", "1.50"))).await;
    let report = Probe::new()
        .endpoints([&a.endpoint, &b.endpoint, &c.endpoint])
        .header("x-auth-token", "admin")
        .run()
        .await
        .unwrap();
    let ranges: Vec<_> = report
        .endpoints()
        .iter()
        .map(microversion_client::EndpointReport::versions)
        .collect();
    assert_eq!(
        ranges,
        [
            Some(ServerVersions::Microversions(r("1.0", "1.39"))),
            Some(ServerVersions::Microversions(r("1.4", "1.30"))),
            Some(ServerVersions::Microversions(r("1.10", "1.50"))),
        ]
    );
    assert_eq!(report.common().unwrap(), r("1.10", "1.30"));
    // One discovery request each, sent with the extra header.
    for s in [&a, &b, &c] {
        assert_eq!(s.discoveries(), 1);
        assert_eq!(s.log.all()[0].header("x-auth-token"), Some("admin"));
    }
    // With the client's own range too.
    let report = Probe::new()
        .endpoints([&a.endpoint, &b.endpoint])
        .client_range(r("1.0", "1.20"))
        .run()
        .await
        .unwrap();
    assert_eq!(report.common().unwrap(), r("1.4", "1.20"));
}

#[tokio::test]
async fn no_common_version_names_each_range() {
    let a = server_with_range(Profile::Placement, Some(r("1.0", "1.10"))).await;
    let b = server_with_range(Profile::Placement, Some(r("1.20", "1.39"))).await;
    let u = unversioned_server().await;
    let report = Probe::new()
        .endpoint(&a.endpoint)
        .endpoint(&b.endpoint)
        .run()
        .await
        .unwrap();
    let err = report.common().unwrap_err();
    assert!(err.is_no_common_version());
    assert_eq!(
        err.to_string(),
        format!(
            "no common version: {}/ supports 1.0 - 1.10; {}/ supports 1.20 - 1.39",
            a.endpoint, b.endpoint
        )
    );
    let report = Probe::new()
        .endpoint(&a.endpoint)
        .endpoint(&u.endpoint)
        .run()
        .await
        .unwrap();
    assert!(
        report
            .common()
            .unwrap_err()
            .to_string()
            .ends_with(&format!("{} does not support microversions", u.endpoint)),
    );
}

#[tokio::test]
async fn failures_are_reported_per_endpoint() {
    let a = server_with_range(Profile::Placement, None).await;
    let closed = format!("{}/", dead_base());
    let report = Probe::new()
        .endpoint(&a.endpoint)
        .endpoint(&closed)
        .timeout(std::time::Duration::from_secs(5))
        .run()
        .await
        .unwrap();
    assert!(report.endpoints()[0].discovery().is_ok());
    let err = report.endpoints()[1].discovery().unwrap_err();
    assert!(err.is_connect(), "{err:?}");
    let err = report.common().unwrap_err();
    assert!(err.is_discovery());
    assert!(
        err.to_string().starts_with(&format!(
            "discovery failed: cannot compute the common range: {closed} could not be probed"
        )),
        "{err}"
    );
}
