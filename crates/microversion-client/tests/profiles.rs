//! The client against a loopback server of every profile of the server
//! crate (api-sig, placement, nova, ironic, cinder): discovery, `latest`,
//! exact versions, the headers sent, the response check, and the
//! 406-driven mode with each way a server tells its range.

mod common;

use common::{Server, server};
use microversion::{ServerVersions, Version, VersionRange};
use microversion_client::{Client, NegotiationMode};
use microversion_server::Profile;

/// A client that supports the server's range and ten versions more.
fn wide(s: &Server) -> VersionRange {
    let max = s.range.max();
    VersionRange::new(s.range.min(), Version::new(max.major(), max.minor() + 10)).unwrap()
}

fn client(s: &Server, supported: VersionRange, mode: NegotiationMode) -> Client {
    Client::builder()
        .endpoint(&s.endpoint)
        .service_type(s.client_service_type)
        .supported_versions(supported)
        .version("latest")
        .negotiation(mode)
        .build()
        .unwrap()
}

fn middle(range: VersionRange) -> Version {
    let (min, max) = (range.min(), range.max());
    Version::new(max.major(), (min.minor() + max.minor()) / 2)
}

#[tokio::test]
async fn every_profile_discovers_and_negotiates_latest() {
    for profile in Profile::ALL {
        let s = server(profile).await;
        let c = client(&s, wide(&s), NegotiationMode::Discovery);

        let res = c.get(s.resource).send().await.unwrap();
        assert_eq!(res.status(), 200, "{profile}");
        assert_eq!(res.version(), Some(s.range.max()), "{profile}");
        assert_eq!(res.sent_version(), Some(s.range.max()), "{profile}");
        assert_eq!(res.attempts(), 1, "{profile}");
        let body: serde_json::Value = res.json().await.unwrap();
        assert_eq!(body["version"], s.range.max().to_string(), "{profile}");
        assert_eq!(s.discoveries(), 1, "{profile}");
        assert_eq!(
            c.known_server_versions(),
            Some(ServerVersions::Microversions(s.range)),
            "{profile}"
        );

        // The headers sent: the standard one with the service type the
        // server reads (Cinder: `volume` for `block-storage`), and the
        // legacy one where the service reads one.
        let sent = s.resource_requests();
        assert_eq!(sent.len(), 1, "{profile}");
        let expected = format!("{} {}", s.service_type, s.range.max());
        assert_eq!(
            sent[0].header("openstack-api-version"),
            Some(expected.as_str()),
            "{profile}"
        );
        match s.legacy {
            Some(legacy) => assert_eq!(
                sent[0].header(legacy),
                Some(s.range.max().to_string().as_str()),
                "{profile}"
            ),
            None => {
                for name in [
                    "x-openstack-nova-api-version",
                    "x-openstack-ironic-api-version",
                ] {
                    assert_eq!(sent[0].header(name), None, "{profile}");
                }
            }
        }
        assert_eq!(
            sent[0].header("accept"),
            Some("application/json"),
            "{profile}"
        );
    }
}

#[tokio::test]
async fn every_profile_serves_an_exact_version_and_refuses_one_outside() {
    for profile in Profile::ALL {
        let s = server(profile).await;
        let c = client(&s, wide(&s), NegotiationMode::Discovery);
        let mid = middle(s.range);
        let res = c.get(s.resource).version(mid).send().await.unwrap();
        assert_eq!(res.version(), Some(mid), "{profile}");

        // Above the server's maximum, inside the client's range: refused
        // before sending, naming both ranges.
        let above = Version::new(s.range.max().major(), s.range.max().minor() + 1);
        let before = s.resource_requests().len();
        let err = c.get(s.resource).version(above).send().await.unwrap_err();
        assert!(err.is_negotiation(), "{profile}: {err}");
        let message = err.to_string();
        assert!(
            message.ends_with(&format!(
                "version {above} is not supported by the server (it supports {}; this client supports {})",
                s.range,
                wide(&s)
            )),
            "{profile}: {message}"
        );
        assert_eq!(s.resource_requests().len(), before, "{profile}");
    }
}

#[tokio::test]
async fn every_profile_caps_latest_at_the_client_maximum() {
    for profile in Profile::ALL {
        let s = server(profile).await;
        let narrow = VersionRange::new(s.range.min(), middle(s.range)).unwrap();
        let c = client(&s, narrow, NegotiationMode::Discovery);
        let res = c.get(s.resource).send().await.unwrap();
        assert_eq!(res.version(), Some(middle(s.range)), "{profile}");
    }
}

#[tokio::test]
async fn every_profile_teaches_its_range_in_the_optimistic_mode() {
    for profile in Profile::ALL {
        let s = server(profile).await;
        let c = client(&s, wide(&s), NegotiationMode::Optimistic);
        let res = c.get(s.resource).send().await.unwrap();
        assert_eq!(res.status(), 200, "{profile}");
        assert_eq!(res.version(), Some(s.range.max()), "{profile}");
        assert_eq!(res.attempts(), 2, "{profile}");

        let sent = s.resource_requests();
        let versions: Vec<_> = sent
            .iter()
            .map(|r| r.header("openstack-api-version").unwrap().to_owned())
            .collect();
        assert_eq!(
            versions,
            [
                format!("{} {}", s.service_type, wide(&s).max()),
                format!("{} {}", s.service_type, s.range.max()),
            ],
            "{profile}"
        );
        // How the range was learned: Ironic's range headers, the API-SIG
        // error body (api-sig, placement), or discovery when the 406 says
        // nothing usable (nova and cinder fault bodies).
        let discovered = matches!(profile, Profile::Nova | Profile::Cinder);
        assert_eq!(s.discoveries(), usize::from(discovered), "{profile}");

        // Remembered: the next call goes straight to the right version.
        let res = c.get(s.resource).send().await.unwrap();
        assert_eq!(res.attempts(), 1, "{profile}");
        assert_eq!(s.resource_requests().len(), 3, "{profile}");
        assert_eq!(s.discoveries(), usize::from(discovered), "{profile}");
    }
}

#[tokio::test]
async fn every_profile_passes_the_response_check() {
    // Ironic echoes only its legacy header; the check must accept it.
    for profile in Profile::ALL {
        let s = server(profile).await;
        for mode in [
            NegotiationMode::Discovery,
            NegotiationMode::Optimistic,
            NegotiationMode::Off,
        ] {
            let c = Client::builder()
                .endpoint(&s.endpoint)
                .service_type(s.client_service_type)
                .supported_versions(s.range)
                .version("latest")
                .negotiation(mode)
                .build()
                .unwrap();
            let res = c.get(s.resource).send().await.unwrap();
            assert_eq!(res.version(), Some(s.range.max()), "{profile} {mode:?}");
        }
    }
}

#[tokio::test]
async fn no_version_requested_sends_no_header() {
    for profile in Profile::ALL {
        let s = server(profile).await;
        let c = Client::builder()
            .endpoint(&s.endpoint)
            .service_type(s.client_service_type)
            .supported_versions(s.range)
            .build()
            .unwrap();
        let res = c.get(s.resource).send().await.unwrap();
        // The server serves its minimum and says so.
        assert_eq!(res.version(), Some(s.range.min()), "{profile}");
        assert_eq!(res.sent_version(), None, "{profile}");
        let sent = s.resource_requests();
        assert_eq!(sent[0].header("openstack-api-version"), None, "{profile}");
        // Nothing needed discovery.
        assert_eq!(s.discoveries(), 0, "{profile}");
        // Asking for the version in use discovers the server's minimum.
        let v = c.version().await.unwrap();
        assert_eq!(
            (v.header(), v.effective()),
            (None, Some(s.range.min())),
            "{profile}"
        );
    }
}

#[tokio::test]
async fn cinder_discovery_falls_back_to_the_parent_and_matches_the_self_link() {
    let s = server(Profile::Cinder).await;
    let c = client(&s, wide(&s), NegotiationMode::Discovery);
    let d = c.discover().await.unwrap();
    let paths: Vec<_> = s.log.all().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v3/", "/"]);
    assert_eq!(d.document_url().path(), "/");
    assert_eq!(d.selected().id, "v3.0");
    assert_eq!(d.matched_by(), microversion_client::MatchedBy::SelfLink);
    assert_eq!(d.entries()[0].microversions(), None);
}
