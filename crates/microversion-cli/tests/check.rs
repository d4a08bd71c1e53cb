//! The checker against the server crate's demo service in every profile
//! (every check passes), and against servers with one fault each (the
//! check of that rule fails).

mod common;

use std::time::Duration;

use common::{API_SIG, CINDER, DEMOS, Demo, Fault, IRONIC, NOVA, PLACEMENT};
use microversion_cli::check::{Check, Report, Status};
use microversion_server::Profile;

async fn check(demo: &Demo, url: &str, profile: Option<Profile>, path: Option<&str>) -> Report {
    let mut check = Check::new(url, demo.service)
        .timeout(Duration::from_secs(10))
        .no_proxy();
    if let Some(p) = profile {
        check = check.profile(p);
    }
    if let Some(path) = path {
        check = check.path(path);
    }
    check.run().await.expect("the check runs")
}

/// The rows that are not PASS, for assertion messages.
fn not_passing(report: &Report) -> Vec<String> {
    report
        .rows()
        .iter()
        .filter(|r| r.status() != Status::Pass)
        .map(|r| {
            format!(
                "{} {} [{}]: {} / {}",
                r.status(),
                r.rule(),
                r.id(),
                r.seen(),
                r.expected()
            )
        })
        .collect()
}

fn assert_all_pass(report: &Report, what: &str) {
    let bad = not_passing(report);
    assert!(
        bad.is_empty(),
        "{what}:\n{}\n{}",
        bad.join("\n"),
        report.to_table()
    );
    assert!(
        report.rows().len() > 30,
        "{what}: only {} rows",
        report.rows().len()
    );
}

#[tokio::test]
async fn every_profile_passes_its_own_checks() {
    for demo in DEMOS {
        let server = demo.start();
        let widgets = demo.widgets();
        let report = check(&demo, &server.url, Some(demo.profile), Some(&widgets)).await;
        assert_all_pass(&report, &format!("{} at {}", demo.profile, widgets));
        assert_eq!(report.range(), Some(demo.range()), "{}", demo.profile);
        assert_eq!(report.judge(), format!("the {} profile", demo.profile));
        let alias = match demo.profile {
            Profile::Nova => Some("request-id-alias x-compute-request-id"),
            Profile::Ironic => Some("request-id-alias openstack-request-id"),
            _ => None,
        };
        if let Some(alias) = alias {
            assert_eq!(report.row(alias).unwrap().status(), Status::Pass, "{alias}");
        }
        // Nova's v2.0 at /v2/: the version headers ignored, none answered.
        let legacy = report.row("legacy-root v2.0");
        assert_eq!(
            legacy.map(microversion_cli::check::Row::status),
            (demo.profile == Profile::Nova).then_some(Status::Pass),
            "{}",
            report.to_table()
        );
        // Every rule of docs/wire.md that can be observed from outside has rows.
        let rules: std::collections::BTreeSet<u8> = report
            .rows()
            .iter()
            .map(microversion_cli::check::Row::rule)
            .collect();
        let mut want: Vec<u8> = (1..=12).collect();
        if demo.root.is_some() {
            want.push(13);
        }
        if demo.profile == Profile::ApiSig || demo.profile == Profile::Placement {
            want.retain(|r| *r != 7); // no legacy header in these profiles
        }
        assert_eq!(
            rules.into_iter().collect::<Vec<_>>(),
            want,
            "{}",
            demo.profile
        );
    }
}

#[tokio::test]
async fn the_root_is_checked_where_it_is_versioned() {
    for demo in [API_SIG, PLACEMENT, IRONIC, CINDER] {
        let server = demo.start();
        let report = check(&demo, &server.url, Some(demo.profile), None).await;
        assert_all_pass(&report, &format!("{} at /", demo.profile));
        assert_eq!(report.row("root-versioned").unwrap().status(), Status::Pass);
    }
}

#[tokio::test]
async fn without_a_profile_the_api_sig_demo_follows_wire_md() {
    let server = API_SIG.start();
    let report = check(&API_SIG, &server.url, None, Some("/widgets")).await;
    assert_all_pass(&report, "wire.md");
    assert_eq!(report.judge(), "wire.md");
}

#[tokio::test]
async fn without_a_profile_a_legacy_header_is_detected_and_judged() {
    // Nova reads X-OpenStack-Nova-API-Version: docs/wire.md 7 and 9 apply to it.
    let server = NOVA.start();
    let report = check(&NOVA, &server.url, None, Some("/v2.1/widgets")).await;
    assert!(
        report
            .notes()
            .iter()
            .any(|n| n.contains("reads the legacy header x-openstack-nova-api-version")),
        "{:?}",
        report.notes()
    );
    for id in [
        "legacy-alone",
        "legacy-standard-wins",
        "legacy-no-entry",
        "legacy-folded",
        "echo-default",
    ] {
        assert_eq!(
            report.row(id).unwrap().status(),
            Status::Pass,
            "{id}: {}",
            report.to_table()
        );
    }
    // Nova's GET / ignores the header, which docs/wire.md does not allow.
    assert_eq!(report.row("root-versioned").unwrap().status(), Status::Fail);
}

#[tokio::test]
async fn a_server_is_judged_by_the_profile_given() {
    // Ironic sends neither Vary nor the standard header, and a 406 for a
    // malformed version: the api-sig rules fail it, the ironic ones pass.
    let server = IRONIC.start();
    let report = check(
        &IRONIC,
        &server.url,
        Some(Profile::ApiSig),
        Some("/widgets"),
    )
    .await;
    for id in ["vary-default", "echo-default", "malformed pony.horse"] {
        assert_eq!(
            report.row(id).unwrap().status(),
            Status::Fail,
            "{id}: {}",
            report.to_table()
        );
    }
    assert!(report.has_failures());
    // Placement's 406 carries no Vary; the api-sig rules want it.
    let server = PLACEMENT.start();
    let report = check(&PLACEMENT, &server.url, Some(Profile::ApiSig), None).await;
    let row = report.row("headers-406").unwrap();
    assert_eq!(row.status(), Status::Fail, "{}", report.to_table());
    assert!(row.seen().contains("no Vary header"), "{}", row.seen());
    // And `0.5` is a 406 in Placement, a 400 under api-sig.
    assert_eq!(report.row("malformed 0.5").unwrap().status(), Status::Fail);
}

#[tokio::test]
async fn nova_root_needs_a_path() {
    let server = NOVA.start();
    let report = check(&NOVA, &server.url, Some(Profile::Nova), None).await;
    assert_eq!(report.row("root-versioned").unwrap().status(), Status::Pass);
    let skipped = report.row("default").unwrap();
    assert_eq!(skipped.status(), Status::Skip);
    assert!(skipped.seen().contains("give --path"), "{}", skipped.seen());
    assert!(!report.has_failures(), "{}", report.to_table());
}

/// Each fault, the server it is injected into, and the check that must
/// fail because of it.
const FAULTS: &[(Fault, Demo, &str)] = &[
    (Fault::NoVary, API_SIG, "vary-default"),
    (Fault::WrongEcho, API_SIG, "latest"),
    (Fault::EchoLatestLiterally, API_SIG, "latest-concrete"),
    (Fault::ServerErrorOnBadHeader, API_SIG, "malformed 1.01"),
    (
        Fault::ServerErrorOnBadHeader,
        API_SIG,
        "malformed pony.horse",
    ),
    (Fault::OkInsteadOf406, API_SIG, "above-max"),
    (Fault::DefaultIsMax, API_SIG, "default"),
    (Fault::FirstEntryWins, API_SIG, "last-entry-wins-higher"),
    (Fault::LastLineOnly, API_SIG, "repeated"),
    (Fault::TypeBlind, API_SIG, "other-service-only"),
    (Fault::TypeBlind, API_SIG, "folded"),
    (Fault::CaseSensitiveType, API_SIG, "service-type-case"),
    (Fault::TypeOnlyIs400, API_SIG, "type-only-skipped"),
    (Fault::StrictSpacing, API_SIG, "whitespace"),
    (Fault::StrictSpacing, API_SIG, "whitespace-tab"),
    (Fault::LatestAnyCase, API_SIG, "latest-case"),
    (Fault::LeadingZeros, API_SIG, "malformed 1.01"),
    (Fault::TextOrder, API_SIG, "numeric-order"),
    (Fault::LegacyWins, NOVA, "legacy-standard-wins"),
    (Fault::NoLegacyEcho, NOVA, "echo-default"),
    (Fault::NoRangeHeaders, IRONIC, "range-headers-default"),
    (Fault::NoRangeHeaders, IRONIC, "range-headers-406"),
    (Fault::BareNotFound, API_SIG, "unknown-path"),
    (Fault::NoRequestId, API_SIG, "request-id"),
    (
        Fault::NoComputeRequestId,
        NOVA,
        "request-id-alias x-compute-request-id",
    ),
    (Fault::TextErrors, API_SIG, "body-malformed"),
    (Fault::No406Range, API_SIG, "body-406"),
    (Fault::TwoCurrent, API_SIG, "versions-document-statuses"),
    (
        Fault::AuthOnRoot,
        API_SIG,
        "versions-document-unauthenticated",
    ),
    (Fault::RootIsList, CINDER, "versioned-root"),
    (Fault::LegacyEchoes, NOVA, "legacy-root v2.0"),
];

#[tokio::test]
async fn each_fault_fails_its_rule() {
    for (fault, demo, id) in FAULTS {
        let server = demo.start_broken(*fault);
        let widgets = demo.widgets();
        let mut check = Check::new(&server.url, demo.service)
            .profile(demo.profile)
            .path(&widgets)
            .timeout(Duration::from_secs(10))
            .no_proxy();
        if *fault == Fault::AuthOnRoot {
            check = check.token("admin");
        }
        let report = check.run().await.expect("the check runs");
        let row = report
            .row(id)
            .unwrap_or_else(|| panic!("{fault:?}: no row {id}:\n{}", report.to_table()));
        assert_eq!(
            row.status(),
            Status::Fail,
            "{fault:?}: {id}:\n{}",
            report.to_table()
        );
        assert!(report.has_failures());
    }
}

#[tokio::test]
async fn without_a_versions_document_the_range_comes_from_a_406() {
    // API-SIG: min_version and max_version in the error body; Nova: the
    // message; Ironic: the range headers.
    for demo in [API_SIG, NOVA, IRONIC] {
        let server = demo.start_broken(Fault::NoDocument);
        let widgets = demo.widgets();
        let report = check(&demo, &server.url, Some(demo.profile), Some(&widgets)).await;
        assert_eq!(report.range(), Some(demo.range()), "{}", report.to_table());
        let json = report.to_json();
        assert_eq!(
            json["range"]["source"], "a 406 answer (no usable versions document)",
            "{}",
            demo.profile
        );
        let document = report.row("versions-document").unwrap();
        assert_eq!(document.status(), Status::Fail);
        assert!(
            document.seen().ends_with("answered 404 Not Found"),
            "{}",
            document.seen()
        );
        // Everything else still runs and passes (but Nova's `GET /` must
        // answer 200 while ignoring the header, and here it answers 404).
        let consequence = |id: &str| id == "root-versioned" && demo.profile == Profile::Nova;
        let others: Vec<_> = report
            .rows()
            .iter()
            .filter(|r| {
                r.status() != Status::Pass && r.id() != "versions-document" && !consequence(r.id())
            })
            .map(|r| format!("{} {}: {}", r.status(), r.id(), r.seen()))
            .collect();
        assert!(others.is_empty(), "{}: {others:#?}", demo.profile);
    }
}

#[tokio::test]
async fn a_path_that_is_not_a_route_is_noted() {
    let server = API_SIG.start();
    let report = check(&API_SIG, &server.url, None, Some("/nowhere")).await;
    assert!(
        report
            .notes()
            .contains(&"GET /nowhere (no version header) answered 404 Not Found: is --path a route of the API?".to_owned()),
        "{:?}",
        report.notes()
    );
    // The layer still names the version on the 404s: the checks hold.
    assert!(!report.has_failures(), "{}", report.to_table());
}

#[tokio::test]
async fn a_single_version_server_skips_what_needs_two() {
    let single = Demo {
        min: microversion::Version::new(1, 0),
        max: microversion::Version::new(1, 0),
        ..API_SIG
    };
    let server = single.start();
    let report = check(&single, &server.url, None, Some("/widgets")).await;
    assert!(!report.has_failures(), "{}", report.to_table());
    for id in ["last-entry-wins", "whitespace", "unknown-path"] {
        let row = report.row(id).unwrap();
        assert_eq!(row.status(), Status::Skip, "{id}");
        assert_eq!(
            row.seen(),
            "needs two versions; the server supports only 1.0"
        );
    }
    for id in [
        "default",
        "latest",
        "malformed pony.horse",
        "above-max",
        "body-406",
    ] {
        assert_eq!(report.row(id).unwrap().status(), Status::Pass, "{id}");
    }
}

#[tokio::test]
async fn a_document_without_version_is_a_warning() {
    let server = API_SIG.start_broken(Fault::NoVersionField);
    let report = check(&API_SIG, &server.url, None, Some("/widgets")).await;
    let row = report.row("versions-document-fields").unwrap();
    assert_eq!(row.status(), Status::Warn, "{}", report.to_table());
    assert_eq!(row.seen(), "v1.0: max_version only");
    assert!(!report.has_failures(), "{}", report.to_table());
}

#[tokio::test]
async fn a_server_that_cannot_be_reached_is_an_error() {
    let err = Check::new(common::dead_url(), "placement")
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .run()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot reach http://127.0.0.1:"),
        "{err}"
    );
}

#[tokio::test]
async fn bad_input_is_an_error() {
    for (url, service, path, message) in [
        (
            "ftp://h/",
            "placement",
            None,
            "invalid URL \"ftp://h/\": expected an http or https URL",
        ),
        (
            "http://h/",
            "two words",
            None,
            "invalid service type \"two words\"",
        ),
        (
            "http://h/",
            "placement",
            Some("http://other/x"),
            "leads to another server",
        ),
    ] {
        let mut check = Check::new(url, service).no_proxy();
        if let Some(path) = path {
            check = check.path(path);
        }
        let err = check.run().await.unwrap_err();
        assert!(err.to_string().contains(message), "{err}");
    }
}
