//! What a request through the layer and a `VersionedRouter` allocates
//! beyond the same handler on a bare axum route: a budget, counted.
//!
//! The layer and the versioned dispatch run on every request of every
//! service built on them, so each allocation they add is paid everywhere.
//! The count is global (a counting global allocator, as in `alloc.rs`), so
//! this binary holds ONE test.

use std::alloc::System;

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use http::{Request, StatusCode};
use microversion::{VersionRange, VersionSpan};
use microversion_server::{
    MicroversionLayer, Microversions, Profile, RequestId, ServedVersion, VersionedRouter,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tower::{Layer, Service, ServiceExt};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

async fn handler() -> &'static str {
    "{}"
}

async fn reads_both(version: ServedVersion, id: RequestId) -> String {
    format!("{} {}", *version, id.as_str())
}

/// Allocations made by one request to `app` (after warm-up), the request
/// itself built beforehand and the response dropped inside the count.
fn allocations_per_request<S>(app: &S, version: &'static str) -> usize
where
    S: Service<Request<Body>, Response = axum::response::Response> + Clone,
    S::Error: std::fmt::Debug,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let request = || {
        Request::get("/resource")
            .header("openstack-api-version", version)
            .body(Body::empty())
            .unwrap()
    };
    let mut last = 0;
    for _ in 0..20 {
        let request = request();
        let app = app.clone();
        let region = Region::new(GLOBAL);
        let response = runtime.block_on(app.oneshot(request)).unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        drop(response);
        let change = region.change();
        last = change.allocations + change.reallocations;
    }
    // Every request after the first few allocates the same.
    last
}

fn api() -> Microversions {
    Microversions::builder("placement", VersionRange::from_static("1.0", "1.39"))
        .profile(Profile::Placement)
        .build()
        .unwrap()
}

#[test]
fn the_layer_and_versioned_dispatch_stay_within_their_allocation_budget() {
    // `with_state` turns the handlers into services once, as `axum::serve`
    // does for each connection; without it axum does so on every request.
    let bare: Router = Router::new()
        .route("/resource", get(handler))
        .with_state(());
    let bare = allocations_per_request(&bare, "placement 1.20");

    let versioned: Router = VersionedRouter::new()
        .get("/resource", VersionSpan::from_static("1.0 - 1.19"), handler)
        .get(
            "/resource",
            VersionSpan::from_static("1.20 - latest"),
            handler,
        )
        .build()
        .unwrap()
        .with_state(());
    let wrapped = MicroversionLayer::new(api()).layer(versioned);
    let layered = allocations_per_request(&wrapped, "placement 1.20");

    // The layer: the request id's bytes, the one request extension that
    // holds it with the served version, and the extension map growing past
    // the three entries axum adds. The dispatch: axum clones a route's
    // service for each request, which allocates unless the service is
    // zero-sized as a plain `async fn` handler is; the chosen handler's
    // future, already boxed by axum, is not boxed again.
    assert!(
        layered <= bare + 4,
        "bare route {bare} allocations, layer + versioned dispatch {layered}: \
         more than the 4 they need"
    );

    // Handlers that read both: still one extension, no copy of the id.
    let reading: Router = VersionedRouter::new()
        .get("/resource", VersionSpan::ALL, reads_both)
        .build()
        .unwrap()
        .with_state(());
    let reading = MicroversionLayer::new(api()).layer(reading);
    let both = allocations_per_request(&reading, "placement 1.20");
    let plain: Router = VersionedRouter::new()
        .get("/resource", VersionSpan::ALL, handler)
        .build()
        .unwrap()
        .with_state(());
    let plain = allocations_per_request(
        &MicroversionLayer::new(api()).layer(plain),
        "placement 1.20",
    );
    // `format!`'s String, and the response body made from it.
    assert!(
        both <= plain + 2,
        "reading ServedVersion and RequestId cost {} allocations",
        both - plain
    );
}
