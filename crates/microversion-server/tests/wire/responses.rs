//! docs/wire.md 9-11, the response side, in every profile: version headers on
//! every response, `Vary`, the range on 406, error bodies, request ids.

use std::collections::HashSet;

use http::Method;
use serde_json::{Value, json};

use crate::support::{
    API_SIG, CINDER, IRONIC, NOVA, PLACEMENT, SERVICES, Shape, Svc, Wording, ask, get, send,
};

/// The body with the response's request id replaced by `REQ`.
fn body_without_id(r: &crate::support::Resp) -> Value {
    serde_json::from_str(&r.body.replace(r.request_id(), "REQ")).unwrap()
}

/// Ironic's `error_message` holds JSON as text: parse it.
fn ironic_inner(body: &Value) -> Value {
    serde_json::from_str(body["error_message"].as_str().unwrap()).unwrap()
}

/// 9. Every response served at a version carries the version headers the
///    profile echoes, `Vary` and the request id: successes, router 404s
///    and 405s, handler errors, and routes missing at that version.
#[tokio::test]
async fn rule9_every_response_carries_the_version_headers() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let v = svc.v(20);
        let value = svc.ask(v);
        let h = [("OpenStack-API-Version", value.as_str())];
        // Placement's details are webob's pages (see rule 11's test).
        let placement = svc.wording == Wording::Placement;
        let (not_found, not_allowed, busy) = if placement {
            (
                "The resource could not be found.\n\n   ",
                "The method DELETE is not allowed for this resource. \n\n The method specified is not allowed for this resource.",
                "There was a conflict when trying to complete your request.\n\n busy  ",
            )
        } else {
            (
                "The resource could not be found.",
                "The method DELETE is not allowed for this resource.",
                "busy",
            )
        };
        let cases: [(Method, &str, u16, &str, &[&str]); 6] = [
            (Method::GET, "/echo", 200, "", &["accept"]),
            (Method::GET, "/things", 200, "", &[]),
            (Method::GET, "/nowhere", 404, not_found, &[]),
            (Method::GET, "/gone", 404, not_found, &[]),
            (Method::DELETE, "/things", 405, not_allowed, &[]),
            (Method::POST, "/things", 409, busy, &[]),
        ];
        for (method, path, status, message, own_vary) in cases {
            let r = send(&base, method.clone(), path, &h).await;
            assert_eq!(r.status, status, "{p}: {method} {path}: {}", r.body);
            svc.assert_served_headers(&r, v, own_vary);
            if status >= 400 {
                let e = svc.error(&r);
                assert_eq!(e.status, u64::from(status), "{p}: {method} {path}");
                assert_eq!(e.message, message, "{p}: {method} {path}");
            }
        }
    }
}

/// 9. The layer appends its `Vary` after the handler's own, as another
///    line; the handler's value is kept as it was. Ironic sends none.
#[tokio::test]
async fn rule9_vary_is_appended_to_the_handlers_vary() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let r = get(&base, "/echo", &[]).await;
        let values = r.values("vary");
        assert_eq!(values[0], "Accept", "{p}: {values:?}");
        let ours: Vec<String> = values[1..]
            .iter()
            .flat_map(|v| v.split(','))
            .map(|n| n.trim().to_ascii_lowercase())
            .collect();
        assert_eq!(ours, svc.vary, "{p}: {values:?}");
        // Without a handler Vary, only ours.
        let r = get(&base, "/things", &[]).await;
        assert_eq!(r.vary_names(), svc.vary, "{p}");
    }
}

/// 9. Where a legacy header is echoed, `Vary` names it too.
#[tokio::test]
async fn rule9_echoed_legacy_header_is_named_in_vary() {
    for svc in [NOVA, CINDER] {
        let base = svc.start().await;
        let r = get(&base, "/things", &[]).await;
        let legacy = svc.legacy.unwrap();
        assert_eq!(r.header(legacy), Some(svc.min.to_string().as_str()));
        assert!(
            r.vary_names().contains(&legacy.to_ascii_lowercase()),
            "{}: {:?}",
            svc.profile,
            r.values("vary")
        );
    }
    // Ironic echoes only its legacy header, and sends no Vary at all.
    let base = IRONIC.start().await;
    let r = get(
        &base,
        "/things",
        &[("OpenStack-API-Version", "baremetal 1.20")],
    )
    .await;
    assert_eq!(r.header("x-openstack-ironic-api-version"), Some("1.20"));
    assert_eq!(r.header("openstack-api-version"), None);
    assert!(r.values("vary").is_empty());
}

/// 10, 11. The whole 406 body in each profile: the version asked and the
///         range, in the detail and (API-SIG shape) in `min_version` and
///         `max_version`; Ironic's range headers.
#[tokio::test]
async fn rule10_406_bodies_name_the_version_and_the_range() {
    let expected: [(Svc, Value); 5] = [
        (
            API_SIG,
            json!({"errors": [{"status": 406, "title": "Not Acceptable",
                "detail": "Version 1.999 is not supported by the API. Minimum is 1.0 and maximum is 1.39.",
                "request_id": "REQ", "min_version": "1.0", "max_version": "1.39"}]}),
        ),
        (
            PLACEMENT,
            json!({"errors": [{"status": 406, "title": "Not Acceptable",
                "detail": "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: 1.999",
                "request_id": "REQ", "min_version": "1.0", "max_version": "1.39"}]}),
        ),
        (
            NOVA,
            json!({"computeFault": {"code": 406,
                "message": "Version 2.999 is not supported by the API. Minimum is 2.1 and maximum is 2.104."}}),
        ),
        (
            IRONIC,
            json!({"faultstring": "Version 1.999 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.115].",
                "faultcode": "Client", "debuginfo": null}),
        ),
        (
            CINDER,
            json!({"computeFault": {"code": 406,
                "message": "Version 3.999 is not supported by the API. Minimum is 3.0 and maximum is 3.71."}}),
        ),
    ];
    for (svc, want) in expected {
        let p = svc.profile;
        let base = svc.start().await;
        let asked = svc.v(999);
        let r = ask(&base, &svc.ask(asked)).await;
        assert_eq!(r.status, 406, "{p}");
        let body = body_without_id(&r);
        let got = if svc.shape == Shape::Ironic {
            ironic_inner(&body)
        } else {
            body
        };
        assert_eq!(got, want, "{p}");
        let range_headers = (
            r.header("x-openstack-ironic-api-minimum-version"),
            r.header("x-openstack-ironic-api-maximum-version"),
        );
        if svc.range_headers.is_some() {
            assert_eq!(range_headers, (Some("1.1"), Some("1.115")), "{p}");
        } else {
            assert_eq!(range_headers, (None, None), "{p}");
        }
    }
}

/// 11. A handler's error, rendered whole in each profile's format.
#[tokio::test]
async fn rule11_handler_error_bodies_per_profile() {
    let fault = json!({"conflictingRequest": {"code": 409, "message": "busy"}});
    let api_sig = json!({"errors": [{"status": 409, "title": "Conflict", "detail": "busy",
        "code": "example.busy", "request_id": "REQ"}]});
    let expected: [(Svc, Value); 4] = [
        (API_SIG, api_sig),
        (NOVA, fault.clone()),
        (
            IRONIC,
            json!({"faultstring": "busy", "faultcode": "Client", "debuginfo": null}),
        ),
        (CINDER, fault),
    ];
    for (svc, want) in expected {
        let p = svc.profile;
        let base = svc.start().await;
        let r = send(&base, Method::POST, "/things", &[]).await;
        assert_eq!(r.status, 409, "{p}");
        let body = body_without_id(&r);
        let got = if svc.shape == Shape::Ironic {
            ironic_inner(&body)
        } else {
            body
        };
        assert_eq!(got, want, "{p}");
    }
}

/// 11. Placement: errors carry `code` only from 1.23, and errors without
///     their own code then get `placement.undefined_code`; the detail is
///     webob's page (the status's explanation, a blank line, the message
///     on one line), byte for byte as upstream's.
#[tokio::test]
async fn rule11_placement_error_codes_from_1_23() {
    let base = PLACEMENT.start().await;
    let at = |v: &'static str| [("OpenStack-API-Version", v)];
    let error = |code: Option<&str>, status: u16, title: &str, detail: &str| {
        let mut entry = json!({"status": status, "title": title, "detail": detail,
            "request_id": "REQ"});
        if let Some(code) = code {
            entry["code"] = json!(code);
        }
        json!({"errors": [entry]})
    };
    let busy = "There was a conflict when trying to complete your request.\n\n busy  ";
    let r = send(&base, Method::POST, "/things", &at("placement 1.22")).await;
    assert_eq!(body_without_id(&r), error(None, 409, "Conflict", busy));
    let r = send(&base, Method::POST, "/things", &at("placement 1.23")).await;
    assert_eq!(
        body_without_id(&r),
        error(Some("example.busy"), 409, "Conflict", busy)
    );
    // A router 404 has no message of its own.
    let not_found = "The resource could not be found.\n\n   ";
    let r = get(&base, "/nowhere", &at("placement 1.22")).await;
    assert_eq!(
        body_without_id(&r),
        error(None, 404, "Not Found", not_found)
    );
    let r = get(&base, "/nowhere", &at("placement latest")).await;
    assert_eq!(
        body_without_id(&r),
        error(
            Some("placement.undefined_code"),
            404,
            "Not Found",
            not_found
        )
    );
    // The layer's own version errors never have a code.
    let r = ask(&base, "placement 1.999").await;
    assert_eq!(PLACEMENT.error(&r).code, None);
}

/// 11. Every response has a fresh request id, in the profile's alias
///     headers too, and the same id in the body and for the handler.
#[tokio::test]
async fn rule11_every_response_has_a_request_id() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let bad = svc.ask("1.2.3");
        let too_new = svc.ask(svc.v(999));
        let requests: [(Method, &str, &str); 7] = [
            (Method::GET, "/echo", ""),
            (Method::GET, "/", ""),
            (Method::GET, "/nowhere", ""),
            (Method::DELETE, "/things", ""),
            (Method::POST, "/things", ""),
            (Method::GET, "/echo", &bad),
            (Method::GET, "/echo", &too_new),
        ];
        let mut seen = HashSet::new();
        for (method, path, value) in requests {
            let headers: Vec<(&str, &str)> = if value.is_empty() {
                Vec::new()
            } else {
                vec![("OpenStack-API-Version", value)]
            };
            let r = send(&base, method.clone(), path, &headers).await;
            svc.assert_request_ids(&r);
            let id = r.request_id().to_owned();
            assert!(seen.insert(id.clone()), "{p}: {id} repeated");
            if path == "/echo" && r.status == 200 {
                assert_eq!(r.json()["request_id"], id.as_str(), "{p}");
            }
            if r.status >= 400 && svc.shape == Shape::ApiSig {
                assert_eq!(svc.error(&r).request_id, Some(id), "{p}: {method} {path}");
            }
        }
    }
}

/// The profile table's `GET /` row: API-SIG, Placement, Ironic and Cinder
/// version the root like any path; Nova serves it without reading the
/// header, and without version headers, but with a request id.
#[tokio::test]
async fn root_reads_the_header_only_where_the_profile_does() {
    for svc in SERVICES {
        let p = svc.profile;
        let base = svc.start().await;
        let latest = svc.ask("latest");
        let bad = svc.ask("1.2.3");
        let too_new = svc.ask(svc.v(999));
        if svc.root_versioned {
            let r = get(&base, "/", &[("OpenStack-API-Version", &latest)]).await;
            assert_eq!(r.status, 200, "{p}");
            svc.assert_served_headers(&r, svc.max, &[]);
            let r = get(&base, "/", &[("OpenStack-API-Version", &bad)]).await;
            svc.assert_malformed(&r, "1.2.3");
            let r = get(&base, "/", &[("OpenStack-API-Version", &too_new)]).await;
            svc.assert_unsupported(&r, &svc.v(999).to_string());
        } else {
            for value in [&latest, &bad, &too_new] {
                let r = get(&base, "/", &[("OpenStack-API-Version", value)]).await;
                assert_eq!(r.status, 200, "{p}: {value}");
                assert!(r.json()["versions"].is_array(), "{p}");
                svc.assert_no_version_headers(&r);
            }
            // Only the root: other paths still read the header.
            let r = get(&base, "/echo", &[("OpenStack-API-Version", &bad)]).await;
            svc.assert_malformed(&r, "1.2.3");
        }
    }
}
