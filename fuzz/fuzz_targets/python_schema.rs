//! Any bytes as the JSON body of one of Placement's write operations, at
//! any version, through the whole service (`microversion_fuzz::Harness`):
//! upstream's request schemas, validated with Python's messages, and the
//! handlers behind them. Byte 0 picks the operation, byte 1 the version
//! (`1.<byte % 40>`), the rest is the body. No 5xx, no row written on a
//! 4xx, every 4xx with an errors body, and a body serde reads (at most
//! 1000 deep) is never answered `Malformed JSON`.
#![no_main]

use http::Method;
use libfuzzer_sys::fuzz_target;
use microversion::Version;
use microversion_fuzz::{admin_request, fixture};
use microversion_fuzz::{send, serde_reads};

fn operation(which: u8) -> (Method, String) {
    use fixture::{CN1, CN2, CONSUMER1, CUSTOM, EMPTY};
    match which % 13 {
        0 => (Method::POST, "/resource_providers".into()),
        1 => (Method::PUT, format!("/resource_providers/{EMPTY}")),
        2 => (
            Method::PUT,
            format!("/resource_providers/{CN2}/inventories"),
        ),
        3 => (
            Method::POST,
            format!("/resource_providers/{CN2}/inventories"),
        ),
        4 => (
            Method::PUT,
            format!("/resource_providers/{CN1}/inventories/VCPU"),
        ),
        5 => (Method::PUT, format!("/resource_providers/{CN1}/aggregates")),
        6 => (Method::PUT, format!("/resource_providers/{CN1}/traits")),
        7 => (Method::POST, "/resource_classes".into()),
        8 => (Method::PUT, format!("/resource_classes/{CUSTOM}")),
        9 => (Method::PUT, format!("/allocations/{CONSUMER1}")),
        10 => (Method::POST, "/allocations".into()),
        11 => (Method::POST, "/reshaper".into()),
        _ => (Method::PUT, format!("/resource_providers/{CN1}")),
    }
}

// The service keeps state across inputs (its database, pools, runtime):
// leak checks after each input would only find that state, slowly.
microversion_fuzz::asan_default_options!(c"detect_odr_violation=0:detect_leaks=0");

fuzz_target!(|data: &[u8]| {
    let [which, minor, body @ ..] = data else {
        return;
    };
    let (method, path) = operation(*which);
    let version = Version::new(1, u32::from(*minor) % 40);
    let request = admin_request(method, &path, version, Some(body)).expect("a valid request");
    let answer = send(request);
    if answer.status == 400 {
        let detail = answer.detail().unwrap_or_default();
        if detail.starts_with("Malformed JSON") {
            assert!(
                serde_reads(body).is_none(),
                "valid JSON answered {detail:?}"
            );
        }
    }
});
