//! docs/wire.md 14-17, versioned behaviour inside the API, in every profile:
//! one version for the whole API, routes missing at a version answer
//! exactly as unknown paths, gaps in the route table, handlers branching.

use http::Method;
use microversion::VersionSpan;
use microversion_server::{BuildError, VersionedRouter};
use serde_json::Value;

use crate::support::{Resp, SERVICES, Svc, get, send};

/// What a client can compare between two error answers: the status, the
/// body with the request id taken out, and every header but those that
/// change per request or per body.
fn comparable(r: &Resp) -> (u16, Value, Vec<(String, String)>) {
    let id = r.request_id();
    let body = serde_json::from_str(&r.body.replace(id, "REQ")).unwrap();
    let mut headers: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(name, _)| {
            !["date", "content-length"].contains(&name.as_str())
                && !name.as_str().contains("request-id")
        })
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
        .collect();
    headers.sort();
    (r.status, body, headers)
}

fn at(svc: &Svc, minor: u32) -> String {
    svc.ask(svc.v(minor))
}

/// 14. One version for the whole API: every resource, and every error,
///     is served at the one negotiated version.
#[tokio::test]
async fn rule14_one_version_for_the_whole_api() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let value = at(&svc, 12);
        let h = [("OpenStack-API-Version", value.as_str())];
        for path in ["/echo", "/things", "/new", "/gap", "/branch"] {
            let r = get(&base, path, &h).await;
            assert_eq!(r.served(), svc.v(12).to_string(), "{p}: {path}");
            svc.assert_served_headers(
                &r,
                svc.v(12),
                if path == "/echo" { &["accept"] } else { &[] },
            );
        }
    }
}

/// 15. A route that does not exist at the requested version answers 404
///     exactly as a path that never existed: same status, same headers,
///     same body.
#[tokio::test]
async fn rule15_route_missing_at_the_version_is_an_unknown_path() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        // /gone: removed after X.2; /new: added in X.10; /gap: absent in
        // X.3 - X.4.
        for (path, minor) in [
            ("/gone", 3),
            ("/gone", svc.max.minor()),
            ("/new", 9),
            ("/gap", 4),
        ] {
            let value = at(&svc, minor);
            let h = [("OpenStack-API-Version", value.as_str())];
            let missing = get(&base, path, &h).await;
            let unknown = get(&base, "/never-existed", &h).await;
            assert_eq!(missing.status, 404, "{p}: {path} at {value}");
            assert_eq!(
                comparable(&missing),
                comparable(&unknown),
                "{p}: {path} at {value}"
            );
            svc.assert_served_headers(&missing, svc.v(minor), &[]);
        }
        // Where they exist, they answer.
        for (path, minor) in [("/gone", 2), ("/new", 10), ("/gap", 2), ("/gap", 5)] {
            let value = at(&svc, minor);
            let r = get(&base, path, &[("OpenStack-API-Version", &value)]).await;
            assert_eq!(r.served(), svc.v(minor).to_string(), "{p}: {path}");
        }
    }
}

/// 15. A path that has no handler at all at the requested version is
///     unknown for every method: another method gets the same 404 as on
///     a path that never existed, not a 405 that reveals the path.
#[tokio::test]
async fn rule15_other_methods_on_a_path_missing_at_the_version() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let value = at(&svc, 3);
        let h = [("OpenStack-API-Version", value.as_str())];
        for method in [Method::DELETE, Method::POST, Method::PUT] {
            let missing = send(&base, method.clone(), "/gone", &h).await;
            let unknown = send(&base, method.clone(), "/never-existed", &h).await;
            assert_eq!(missing.status, 404, "{p}: {method} /gone: {}", missing.body);
            assert_eq!(comparable(&missing), comparable(&unknown), "{p}: {method}");
        }
        // At a version where /gone exists, other methods get 405 naming
        // only GET (and HEAD).
        let value = at(&svc, 2);
        let r = send(
            &base,
            Method::DELETE,
            "/gone",
            &[("OpenStack-API-Version", &value)],
        )
        .await;
        assert_eq!(r.status, 405, "{p}: {}", r.body);
        assert_eq!(r.header("allow"), Some("GET"), "{p}");
        svc.assert_served_headers(&r, svc.v(2), &[]);
    }
}

/// 405 from the router: an `Allow` header naming the methods that exist
/// at the requested version, the version headers, and the profile's
/// error body.
#[tokio::test]
async fn router_405_names_the_methods_available_at_the_version() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        // /things has GET (two ranges) and POST at every version.
        for minor in [2, 20] {
            let value = at(&svc, minor);
            let r = send(
                &base,
                Method::PUT,
                "/things",
                &[("OpenStack-API-Version", &value)],
            )
            .await;
            assert_eq!(r.status, 405, "{p}");
            assert_eq!(r.header("allow"), Some("GET, POST"), "{p}");
            svc.assert_served_headers(&r, svc.v(minor), &[]);
            let e = svc.error(&r);
            assert_eq!(e.status, 405, "{p}");
            if let Some(fault) = e
                .fault
                .as_deref()
                .filter(|_| svc.shape == crate::support::Shape::Fault)
            {
                assert_eq!(fault, "badMethod", "{p}");
            }
        }
        // /gap has GET up to X.2 and from X.5: in between, a 404 for
        // every method.
        let value = at(&svc, 4);
        let r = send(
            &base,
            Method::PUT,
            "/gap",
            &[("OpenStack-API-Version", &value)],
        )
        .await;
        assert_eq!(r.status, 404, "{p}");
        assert_eq!(r.header("allow"), None, "{p}");
    }
}

/// 16. Gaps show in the route table, which lists every handler's range.
#[test]
fn rule16_gaps_are_visible_in_the_route_table() {
    for svc in SERVICES {
        let p = svc.profile;
        let table = svc.routes().table();
        let gap: Vec<(&str, &str, Option<&str>)> = table
            .rows()
            .iter()
            .filter(|r| r.path == "/gap")
            .map(|r| {
                (
                    r.method.as_str(),
                    r.min_version.as_str(),
                    r.max_version.as_deref(),
                )
            })
            .collect();
        let (min, x2, x5) = (
            svc.min.to_string(),
            svc.v(2).to_string(),
            svc.v(5).to_string(),
        );
        assert_eq!(
            gap,
            [
                ("GET", min.as_str(), Some(x2.as_str())),
                ("GET", x5.as_str(), None)
            ],
            "{p}"
        );
        // The plain-text table: one line per handler, `METHOD PATH RANGE`.
        let text = table.to_string();
        let lines: Vec<String> = text
            .lines()
            .filter(|l| l.split_whitespace().nth(1) == Some("/gap"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            lines,
            [
                format!("GET /gap {min} - {x2}"),
                format!("GET /gap {x5} - latest")
            ],
            "{p}:\n{text}"
        );
        let markdown = table.to_markdown();
        assert!(
            markdown.contains(&format!("| GET | `/gap` | {min} - {x2} |")),
            "{p}:\n{markdown}"
        );
        assert!(
            markdown.contains(&format!("| GET | `/gap` | {x5} - latest |")),
            "{p}:\n{markdown}"
        );
        // Every registered handler is a row.
        assert_eq!(table.rows().len(), 10, "{p}:\n{text}");
        let json = serde_json::to_value(&table).unwrap();
        assert_eq!(json.as_array().unwrap().len(), 10, "{p}");
    }
}

/// 16. Overlapping ranges for one operation fail when the router is built,
///     naming the operation and both ranges; gaps and other methods do
///     not.
#[test]
fn rule16_overlaps_fail_the_build() {
    let err = VersionedRouter::<()>::new()
        .get("/a", VersionSpan::from_static("1.0 - 1.9"), || async {
            "a"
        })
        .get("/a", VersionSpan::from_static("1.12 - 1.20"), || async {
            "b"
        })
        .get("/a", VersionSpan::from_static("1.9 - latest"), || async {
            "c"
        })
        .build()
        .unwrap_err();
    let BuildError::Overlap(conflict) = &err else {
        panic!("expected an overlap, got {err:?}");
    };
    assert_eq!(conflict.path, "/a");
    assert_eq!(conflict.method, Some(Method::GET));
    assert_eq!(conflict.first, VersionSpan::from_static("1.0 - 1.9"));
    assert_eq!(conflict.second, VersionSpan::from_static("1.9 - latest"));
    assert_eq!(
        err.to_string(),
        "overlapping version ranges for GET /a: 1.0 - 1.9 and 1.9 - latest"
    );
    // VersionSpan::ALL overlaps everything.
    let err = VersionedRouter::<()>::new()
        .post("/b", VersionSpan::from_static("1.5 - 1.6"), || async {
            "a"
        })
        .post("/b", VersionSpan::ALL, || async { "b" })
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "overlapping version ranges for POST /b: 1.5 - 1.6 and all"
    );
    // Every profile's routes, gaps included, build.
    for svc in SERVICES {
        assert!(svc.routes().build().is_ok(), "{}", svc.profile);
    }
}

/// 17. One handler branches with `VersionSpan::contains`: inclusive ends, open end.
#[tokio::test]
async fn rule17_handlers_branch_with_matches() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let mut minors = vec![4, 5, 7, 8, svc.max.minor()];
        if svc.min.minor() < 4 {
            minors.insert(0, svc.min.minor());
        }
        for minor in minors {
            let value = at(&svc, minor);
            let body = get(&base, "/branch", &[("OpenStack-API-Version", &value)])
                .await
                .json();
            let middle = (5..=7).contains(&minor);
            let added = minor >= 8;
            assert_eq!(body["version"], svc.v(minor).to_string(), "{p}");
            assert_eq!(body.get("middle").is_some(), middle, "{p}: {minor}: {body}");
            assert_eq!(
                body.get("added_in_8").is_some(),
                added,
                "{p}: {minor}: {body}"
            );
        }
    }
}

/// HEAD is answered by the GET handler of the served version, without a
/// body, with the same headers.
#[tokio::test]
async fn head_is_answered_by_get() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        for (minor, status) in [(9, 200), (20, 200), (3, 404)] {
            let value = at(&svc, minor);
            let path = if status == 200 { "/things" } else { "/gone" };
            let r = send(
                &base,
                Method::HEAD,
                path,
                &[("OpenStack-API-Version", &value)],
            )
            .await;
            assert_eq!(r.status, status, "{p}: HEAD {path} at {value}");
            assert_eq!(r.body, "", "{p}");
            svc.assert_served_headers(&r, svc.v(minor), &[]);
        }
    }
}

/// An operation whose missing versions answer 405 instead of 404
/// (`unavailable_status`, as Placement does for some): the 405 names, in
/// `Allow`, the methods served at that version.
#[tokio::test]
async fn unavailable_status_405_names_the_methods_served() {
    let svc = crate::support::API_SIG;
    let app = VersionedRouter::new()
        .get("/x", VersionSpan::from_static("1.0 - 1.4"), || async {
            "get"
        })
        .post("/x", VersionSpan::ALL, || async { "post" })
        .unavailable_status("/x", &Method::GET, http::StatusCode::METHOD_NOT_ALLOWED)
        .build()
        .unwrap()
        .layer(microversion_server::MicroversionLayer::new(svc.api()));
    let base = microversion_test_support::serve(app).await;
    let at = |v: &'static str| [("OpenStack-API-Version", v)];
    let r = get(&base, "/x", &at("placement 1.4")).await;
    assert_eq!((r.status, r.body.as_str()), (200, "get"));
    let r = get(&base, "/x", &at("placement 1.5")).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("POST"));
    svc.assert_served_headers(&r, svc.v(5), &[]);
    assert_eq!(svc.error(&r).status, 405);
    let r = send(&base, Method::PUT, "/x", &at("placement 1.2")).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, POST"));
}

/// A path whose methods exist at every version (Placement's `/allocations`,
/// where POST arrives at 1.13 but GET is 405 at 1.0 too): an unregistered
/// method is 405 naming every registered method at any version, while a
/// registered method outside its versions is still 404.
#[tokio::test]
async fn methods_at_every_version_405_at_any_version() {
    let svc = crate::support::API_SIG;
    let app = VersionedRouter::new()
        .post("/y", VersionSpan::from_static("1.5 - latest"), || async {
            "post"
        })
        .get("/z", VersionSpan::from_static("1.5 - latest"), || async {
            "z"
        })
        .methods_at_every_version("/y")
        .build()
        .unwrap()
        .layer(microversion_server::MicroversionLayer::new(svc.api()));
    let base = microversion_test_support::serve(app).await;
    let at = |v: &'static str| [("OpenStack-API-Version", v)];
    for version in ["placement 1.0", "placement 1.5"] {
        let r = get(&base, "/y", &at(version)).await;
        assert_eq!(r.status, 405, "{version}");
        assert_eq!(r.header("allow"), Some("POST"), "{version}");
        assert_eq!(svc.error(&r).status, 405);
    }
    let r = send(&base, Method::POST, "/y", &at("placement 1.4")).await;
    assert_eq!(r.status, 404);
    let r = send(&base, Method::POST, "/y", &at("placement 1.5")).await;
    assert_eq!((r.status, r.body.as_str()), (200, "post"));
    // Other paths keep docs/wire.md 15: nothing served at 1.0, so 404.
    let r = send(&base, Method::POST, "/z", &at("placement 1.0")).await;
    assert_eq!(r.status, 404);
}
