//! `Microversions::negotiate` allocates nothing for a well-formed request:
//! it runs on every request, before any handler.
//!
//! A counting global allocator (`stats_alloc`: the workspace forbids
//! `unsafe`, which a `GlobalAlloc` impl needs) counts every allocation in
//! the process. The count is global, so this binary holds ONE test: no
//! other test thread allocates while it measures, and the harness's main
//! thread only waits.

use std::alloc::System;
use std::hint::black_box;

use http::HeaderMap;
use microversion::{Version, VersionRange};
use microversion_server::{Microversions, NegotiationOutcome, Profile};
use microversion_test_support::header_map;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocations and reallocations made while `f` runs.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let region = Region::new(GLOBAL);
    let out = black_box(f());
    let change = region.change();
    (out, change.allocations + change.reallocations)
}

fn api(profile: Profile, service: &str, min: &'static str, max: &'static str) -> Microversions {
    Microversions::builder(service, VersionRange::from_static(min, max))
        .profile(profile)
        .build()
        .unwrap()
}

fn served(s: &'static str) -> NegotiationOutcome {
    NegotiationOutcome::Served(Version::from_static(s))
}

#[test]
fn negotiation_of_well_formed_headers_does_not_allocate() {
    const STD: &str = "openstack-api-version";
    const NOVA: &str = "x-openstack-nova-api-version";
    let placement = api(Profile::Placement, "placement", "1.0", "1.39");
    let api_sig = api(Profile::ApiSig, "placement", "1.0", "1.39");
    let nova = api(Profile::Nova, "compute", "2.1", "2.104");
    let ironic = api(Profile::Ironic, "baremetal", "1.1", "1.115");
    let cinder = api(Profile::Cinder, "volume", "3.0", "3.71");

    let cases: Vec<(&str, &Microversions, HeaderMap, NegotiationOutcome)> = vec![
        ("absent", &placement, HeaderMap::new(), served("1.0")),
        (
            "other headers only",
            &placement,
            header_map(&[("accept", "application/json"), ("x-auth-token", "admin")]),
            served("1.0"),
        ),
        (
            "latest",
            &placement,
            header_map(&[(STD, "placement latest")]),
            served("1.39"),
        ),
        (
            "exact",
            &placement,
            header_map(&[(STD, "placement 1.20")]),
            served("1.20"),
        ),
        (
            "exact, api-sig",
            &api_sig,
            header_map(&[(STD, "placement 1.20")]),
            served("1.20"),
        ),
        (
            "folded, several services",
            &placement,
            header_map(&[(STD, "compute 2.1, placement 1.14, volume 3.5")]),
            served("1.14"),
        ),
        (
            "repeated lines, last entry wins",
            &placement,
            header_map(&[(STD, "placement 1.2"), (STD, "compute 2.1, placement 1.30")]),
            served("1.30"),
        ),
        (
            "only another service",
            &placement,
            header_map(&[(STD, "compute 2.1")]),
            served("1.0"),
        ),
        (
            "type without version, then one",
            &placement,
            header_map(&[(STD, "placement, placement 1.7")]),
            served("1.7"),
        ),
        (
            "outer whitespace",
            &placement,
            header_map(&[(STD, "  placement \t 1.9  ")]),
            served("1.9"),
        ),
        (
            "out of range",
            &placement,
            header_map(&[(STD, "placement 1.999")]),
            NegotiationOutcome::Unsupported(Version::new(1, 999)),
        ),
        (
            "zero major read as below the range",
            &placement,
            header_map(&[(STD, "placement 0.5")]),
            NegotiationOutcome::Unsupported(Version::new(0, 5)),
        ),
        (
            "nova: standard header",
            &nova,
            header_map(&[(STD, "compute 2.20")]),
            served("2.20"),
        ),
        (
            "nova: legacy header only",
            &nova,
            header_map(&[(NOVA, "2.53")]),
            served("2.53"),
        ),
        (
            "nova: legacy latest",
            &nova,
            header_map(&[(NOVA, "latest")]),
            served("2.104"),
        ),
        (
            "nova: folded legacy",
            &nova,
            header_map(&[(NOVA, "2.10, 2.60")]),
            served("2.60"),
        ),
        (
            "nova: standard wins over legacy",
            &nova,
            header_map(&[(STD, "compute 2.20"), (NOVA, "2.60")]),
            served("2.20"),
        ),
        (
            "nova: other service, then legacy",
            &nova,
            header_map(&[(STD, "placement 1.5"), (NOVA, "2.60")]),
            served("2.60"),
        ),
        (
            "ironic: LATEST, legacy",
            &ironic,
            header_map(&[("x-openstack-ironic-api-version", "LATEST")]),
            served("1.115"),
        ),
        (
            "cinder: legacy",
            &cinder,
            header_map(&[("openstack-volume-microversion", "3.44")]),
            served("3.44"),
        ),
    ];
    for (name, api, headers, want) in &cases {
        let (got, count) = allocations(|| api.negotiate(headers));
        assert_eq!(&got, want, "{name}");
        assert_eq!(count, 0, "{name}: {count} allocation(s) in negotiate");
    }

    // The counter works: a malformed version keeps its text for the error
    // message, which allocates.
    let bad = header_map(&[(STD, "placement 1.2.3")]);
    let (got, count) = allocations(|| placement.negotiate(&bad));
    assert!(matches!(got, NegotiationOutcome::Malformed(_)), "{got:?}");
    assert!(count > 0, "the counting allocator counted nothing");
}
