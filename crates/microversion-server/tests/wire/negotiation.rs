//! docs/wire.md 1-8, the request side, in every profile.

use http::Method;

use crate::support::{SERVICES, ask, get, send_with};

/// 1. Header names are case-insensitive on the wire, and so is the service
///    type.
#[tokio::test]
async fn rule1_header_name_and_service_type_are_case_insensitive() {
    // A client that sends `Openstack-Api-Version`, not the lower-case name.
    let title_case = reqwest::Client::builder()
        .no_proxy()
        .http1_title_case_headers()
        .build()
        .unwrap();
    for svc in SERVICES {
        let base = svc.start().await;
        let upper = svc.service.to_ascii_uppercase();
        let mut mixed = svc.service.to_owned();
        mixed[..1].make_ascii_uppercase();
        for service in [upper, mixed] {
            let value = format!("{service} {}", svc.v(20));
            let r = ask(&base, &value).await;
            assert_eq!(
                r.served(),
                svc.v(20).to_string(),
                "{}: {value}",
                svc.profile
            );
            // The response names the service as configured.
            svc.assert_served_headers(&r, svc.v(20), &["accept"]);
        }
        let value = svc.ask(svc.v(20));
        let r = send_with(
            &title_case,
            &base,
            Method::GET,
            "/echo",
            &[("OpenStack-API-Version", &value)],
        )
        .await;
        assert_eq!(r.served(), svc.v(20).to_string(), "{}", svc.profile);
    }
}

/// 2. Entries for other services are ignored, before or after ours.
#[tokio::test]
async fn rule2_folded_header_entries_for_other_services_are_ignored() {
    for svc in SERVICES {
        let base = svc.start().await;
        let ours = svc.ask(svc.v(14));
        let other = format!("{} 9.9", svc.other());
        for value in [format!("{other}, {ours}"), format!("{ours}, {other}")] {
            let r = ask(&base, &value).await;
            assert_eq!(
                r.served(),
                svc.v(14).to_string(),
                "{}: {value}",
                svc.profile
            );
            svc.assert_served_headers(&r, svc.v(14), &["accept"]);
        }
    }
}

/// 2. Repeated header lines read as one folded header.
#[tokio::test]
async fn rule2_repeated_headers_are_read_as_folded() {
    for svc in SERVICES {
        let base = svc.start().await;
        let ours = svc.ask(svc.v(14));
        let other = format!("{} 9.9", svc.other());
        for lines in [[&other, &ours], [&ours, &other]] {
            let headers = [
                ("OpenStack-API-Version", lines[0].as_str()),
                ("OpenStack-API-Version", lines[1].as_str()),
            ];
            let r = get(&base, "/echo", &headers).await;
            assert_eq!(
                r.served(),
                svc.v(14).to_string(),
                "{}: {lines:?}",
                svc.profile
            );
        }
    }
}

/// 2. When the service appears more than once, the last entry wins, within
///    one value and across lines, whatever it holds.
#[tokio::test]
async fn rule2_last_entry_wins() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let (a, b) = (svc.ask(svc.v(2)), svc.ask(svc.v(20)));
        let r = ask(&base, &format!("{a}, {b}")).await;
        assert_eq!(r.served(), svc.v(20).to_string(), "{p}");
        let r = ask(&base, &format!("{b}, {a}")).await;
        assert_eq!(r.served(), svc.v(2).to_string(), "{p}");
        let lines = [
            ("OpenStack-API-Version", b.as_str()),
            ("OpenStack-API-Version", a.as_str()),
        ];
        let r = get(&base, "/echo", &lines).await;
        assert_eq!(r.served(), svc.v(2).to_string(), "{p}");
        // The last entry decides even when it is bad.
        let r = ask(&base, &format!("{b}, {}", svc.ask("1.2.3"))).await;
        svc.assert_malformed(&r, "1.2.3");
        let too_new = svc.v(999).to_string();
        let r = ask(&base, &format!("{b}, {}", svc.ask(&too_new))).await;
        svc.assert_unsupported(&r, &too_new);
        // ... and a good last entry hides a bad earlier one.
        let r = ask(&base, &format!("{}, {b}", svc.ask("1.2.3"))).await;
        assert_eq!(r.served(), svc.v(20).to_string(), "{p}");
    }
}

/// 2. An entry with the service type but no version is skipped.
#[tokio::test]
async fn rule2_entry_without_version_is_skipped() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let r = ask(&base, svc.service).await;
        assert_eq!(r.served(), svc.min.to_string(), "{p}");
        let ours = svc.ask(svc.v(20));
        for value in [
            format!("{}, {ours}", svc.service),
            format!("{ours}, {}", svc.service),
        ] {
            let r = ask(&base, &value).await;
            assert_eq!(r.served(), svc.v(20).to_string(), "{p}: {value}");
        }
        // No space, so no version: `placement1.20` names no service of ours.
        let r = ask(&base, &format!("{}{}", svc.service, svc.v(20))).await;
        assert_eq!(r.served(), svc.min.to_string(), "{p}");
    }
}

/// 3. No header, an empty one, or only other services: the minimum.
#[tokio::test]
async fn rule3_no_entry_serves_the_minimum() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let r = get(&base, "/echo", &[]).await;
        assert_eq!(r.served(), svc.min.to_string(), "{p}");
        svc.assert_served_headers(&r, svc.min, &["accept"]);
        for value in [
            String::new(),
            format!("{} 9.9", svc.other()),
            "dogs 1.9".into(),
        ] {
            let r = ask(&base, &value).await;
            assert_eq!(r.served(), svc.min.to_string(), "{p}: {value:?}");
            svc.assert_served_headers(&r, svc.min, &["accept"]);
        }
    }
}

/// 4. `latest` is the maximum, and the response names the concrete
///    version. Other spellings are malformed, except in Ironic.
#[tokio::test]
async fn rule4_latest_is_the_maximum_named_concretely() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let r = ask(&base, &svc.ask("latest")).await;
        assert_eq!(r.served(), svc.max.to_string(), "{p}");
        svc.assert_served_headers(&r, svc.max, &["accept"]);
        assert!(
            r.headers
                .values()
                .all(|v| !v.to_str().unwrap().contains("latest")),
            "{p}: {:?}",
            r.headers
        );
        for spelling in ["LATEST", "Latest"] {
            let r = ask(&base, &svc.ask(spelling)).await;
            if svc.latest_any_case {
                assert_eq!(r.served(), svc.max.to_string(), "{p}: {spelling}");
                svc.assert_served_headers(&r, svc.max, &["accept"]);
            } else {
                svc.assert_malformed(&r, spelling);
            }
        }
    }
}

/// 5. Every malformed input docs/wire.md names: 400 (406 in Ironic), with no
///    panic and a message naming the text sent.
#[tokio::test]
async fn rule5_malformed_versions_are_rejected() {
    let thirty = "123456789012345678901234567890";
    let long_minor = format!("1.{thirty}");
    let long_major = format!("{thirty}.1");
    let cases = [
        "1.01",
        "01.1",
        "1 .1",
        "1. 1",
        "1.1 1.2",
        "1",
        "1.",
        ".1",
        "1.2.3",
        "-1.5",
        "+1.2",
        "1.a",
        "pony.horse",
        "1.1_0",
        "v1.1",
        thirty,
        &long_minor,
        &long_major,
        "4294967296.0",
    ];
    for svc in SERVICES {
        let base = svc.start().await;
        for raw in cases {
            let r = ask(&base, &svc.ask(raw)).await;
            svc.assert_malformed(&r, raw);
        }
    }
}

/// 5. Outer whitespace, and whitespace between the type and the version,
///    are allowed.
#[tokio::test]
async fn rule5_outer_whitespace_is_allowed() {
    for svc in SERVICES {
        let base = svc.start().await;
        let v = svc.v(20);
        for value in [
            format!("{}  {v}", svc.service),
            format!("{}\t{v}", svc.service),
            format!("  {} {v}  ", svc.service),
            format!("{} 9.9 ,  {}   {v}  , ", svc.other(), svc.service),
        ] {
            let r = ask(&base, &value).await;
            assert_eq!(r.served(), v.to_string(), "{}: {value:?}", svc.profile);
        }
    }
}

/// 5/6. `0.5` is malformed by the grammar (major 0), but Placement and
///      Ironic read it as a version below the range.
#[tokio::test]
async fn rule5_zero_major() {
    for svc in SERVICES {
        let base = svc.start().await;
        for raw in ["0.5", "0.0"] {
            let r = ask(&base, &svc.ask(raw)).await;
            if svc.zero_major_is_406 {
                svc.assert_unsupported(&r, raw);
            } else {
                svc.assert_malformed(&r, raw);
            }
        }
    }
}

/// 6. A well-formed version outside the range: 406, with the range.
#[tokio::test]
async fn rule6_out_of_range_is_406() {
    for svc in SERVICES {
        let base = svc.start().await;
        let just_above = svc.v(svc.max.minor() + 1).to_string();
        let next_major = format!("{}.0", svc.min.major() + 1);
        let mut cases = vec![just_above, svc.v(999).to_string(), next_major];
        // Just below the minimum, where that is a version (not `0.Y`).
        if svc.min.minor() > 0 {
            cases.push(svc.v(svc.min.minor() - 1).to_string());
        } else if svc.min.major() > 1 {
            cases.push(format!("{}.99", svc.min.major() - 1));
        }
        for requested in cases {
            let r = ask(&base, &svc.ask(&requested)).await;
            svc.assert_unsupported(&r, &requested);
        }
    }
}

/// 7. The legacy header: read only when the standard header has no entry
///    for the service; echoed where the profile echoes it.
#[tokio::test]
async fn rule7_legacy_header_is_read_only_without_a_standard_entry() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let (v10, v20) = (svc.v(10).to_string(), svc.v(20).to_string());
        let Some(legacy) = svc.legacy else {
            // No legacy header: a look-alike is ignored.
            for name in [
                "X-OpenStack-Placement-API-Version",
                "X-OpenStack-Nova-API-Version",
            ] {
                let r = get(&base, "/echo", &[(name, &v20)]).await;
                assert_eq!(r.served(), svc.min.to_string(), "{p}: {name}");
                svc.assert_served_headers(&r, svc.min, &["accept"]);
            }
            continue;
        };
        let std = "OpenStack-API-Version";
        // Legacy alone.
        let r = get(&base, "/echo", &[(legacy, &v20)]).await;
        assert_eq!(r.served(), v20, "{p}");
        svc.assert_served_headers(&r, svc.v(20), &["accept"]);
        let r = get(&base, "/echo", &[(legacy, "latest")]).await;
        assert_eq!(r.served(), svc.max.to_string(), "{p}");
        // The standard header wins, even when it is bad.
        let r = get(&base, "/echo", &[(std, &svc.ask(&v10)), (legacy, &v20)]).await;
        assert_eq!(r.served(), v10, "{p}");
        svc.assert_served_headers(&r, svc.v(10), &["accept"]);
        let too_new = svc.v(999).to_string();
        let r = get(&base, "/echo", &[(std, &svc.ask(&too_new)), (legacy, &v20)]).await;
        svc.assert_unsupported(&r, &too_new);
        let r = get(&base, "/echo", &[(std, &svc.ask("1.01")), (legacy, &v20)]).await;
        svc.assert_malformed(&r, "1.01");
        let r = get(&base, "/echo", &[(std, &svc.ask(&v10)), (legacy, "1.01")]).await;
        assert_eq!(r.served(), v10, "{p}");
        // No entry for this service (another service, a type without a
        // version): the legacy header is read.
        for value in [format!("{} 9.9", svc.other()), svc.service.to_owned()] {
            let r = get(&base, "/echo", &[(std, &value), (legacy, &v20)]).await;
            assert_eq!(r.served(), v20, "{p}: {value}");
        }
        // Folded: the last comma value; repeated: the last line.
        let r = get(&base, "/echo", &[(legacy, &format!("{v10}, {v20}"))]).await;
        assert_eq!(r.served(), v20, "{p}");
        let r = get(&base, "/echo", &[(legacy, &v20), (legacy, &v10)]).await;
        assert_eq!(r.served(), v10, "{p}");
        // Bad values in the legacy header: the same answers.
        let r = get(&base, "/echo", &[(legacy, "1.2.3")]).await;
        svc.assert_malformed(&r, "1.2.3");
        let with_type = svc.ask(&v20);
        let r = get(&base, "/echo", &[(legacy, &with_type)]).await;
        svc.assert_malformed(&r, &with_type);
        let r = get(&base, "/echo", &[(legacy, &too_new)]).await;
        svc.assert_unsupported(&r, &too_new);
    }
}

/// 8. VersionSpan compare as numbers (X.10 > X.9) and ranges include both
///    ends, in the service's range and in route ranges.
#[tokio::test]
async fn rule8_numeric_order_and_inclusive_ranges() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let things = |version: String| {
            let base = base.clone();
            let value = svc.ask(version);
            async move {
                get(&base, "/things", &[("OpenStack-API-Version", &value)])
                    .await
                    .json()
            }
        };
        // /things: old handler up to X.9, new one from X.10.
        assert_eq!(things(svc.v(9).to_string()).await["handler"], "old", "{p}");
        assert_eq!(things(svc.v(10).to_string()).await["handler"], "new", "{p}");
        assert_eq!(things(svc.v(11).to_string()).await["handler"], "new", "{p}");
        assert_eq!(things(svc.max.to_string()).await["handler"], "new", "{p}");
        assert_eq!(things(svc.min.to_string()).await["handler"], "old", "{p}");
        // The service range includes both ends.
        for v in [svc.min, svc.max] {
            let r = ask(&base, &svc.ask(v)).await;
            assert_eq!(r.served(), v.to_string(), "{p}");
        }
    }
}
