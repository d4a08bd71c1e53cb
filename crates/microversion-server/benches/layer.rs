//! What the microversion layer costs per request, in process (no sockets):
//! one request through `tower::ServiceExt::oneshot` on
//!
//! - `bare`: an axum route, no layer;
//! - `layer`: the same route behind `MicroversionLayer` (placement profile,
//!   `OpenStack-API-Version: placement 1.20`);
//! - `versioned`: the layer and a `VersionedRouter` choosing between two
//!   handlers by version;
//! - `wrapped`: the same, the layer wrapped around the whole router
//!   instead of applied with `Router::layer`;
//! - `not_acceptable`: the layer answering a version out of range (406);
//!
//! every router after `with_state`, as `axum::serve` runs it;
//! then (features `openapi` and `json-schema`) responses checked against
//! the documents: `validation/none` (a JSON route behind the layer),
//! `validation/off` (the same with `ResponseValidationLayer` off) and
//! `validation/error` (every response's status and body checked);
//! then the same route behind the layer in each profile,
//! `Microversions::negotiate` alone on typical headers, and the request id
//! the layer makes for every request.
//!
//! `cargo bench -p microversion-server --bench layer`

use std::convert::Infallible;
use std::hint::black_box;

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use criterion::{Criterion, criterion_group, criterion_main};
use http::{Request, StatusCode};
use microversion::{VersionRange, VersionSpan};
use microversion_server::{MicroversionLayer, Microversions, Profile, RequestId, VersionedRouter};
use microversion_test_support::header_map;
use tower::{Layer, Service, ServiceExt};

const BODY: &str = r#"{"resource_providers": []}"#;

async fn handler() -> &'static str {
    BODY
}

async fn handler_new() -> &'static str {
    BODY
}

fn api(profile: Profile, service: &str, min: &'static str, max: &'static str) -> Microversions {
    Microversions::builder(service, VersionRange::from_static(min, max))
        .profile(profile)
        .build()
        .expect("valid configuration")
}

fn placement() -> Microversions {
    api(Profile::Placement, "placement", "1.0", "1.39")
}

fn request(version: Option<&'static str>) -> Request<Body> {
    let mut builder = Request::get("/resource_providers");
    if let Some(version) = version {
        builder = builder.header("openstack-api-version", version);
    }
    builder.body(Body::empty()).expect("valid request")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime")
}

/// Sends one request through `app` and checks the status.
async fn call<S>(app: &S, version: Option<&'static str>, want: StatusCode)
where
    S: Service<Request<Body>, Response = axum::response::Response, Error = Infallible> + Clone,
{
    let response = app
        .clone()
        .oneshot(request(version))
        .await
        .expect("infallible");
    assert_eq!(response.status(), want);
    black_box(response);
}

fn bench_layer(c: &mut Criterion) {
    let rt = runtime();
    let bare: Router = Router::new()
        .route("/resource_providers", get(handler))
        .with_state(());
    let layered: Router = Router::new()
        .route("/resource_providers", get(handler))
        .layer(MicroversionLayer::new(placement()))
        .with_state(());
    let routes = || {
        VersionedRouter::new()
            .get(
                "/resource_providers",
                VersionSpan::from_static("1.0 - 1.13"),
                handler,
            )
            .get(
                "/resource_providers",
                VersionSpan::from_static("1.14 - latest"),
                handler_new,
            )
            .build()
            .expect("no overlap")
    };
    let versioned: Router = routes()
        .layer(MicroversionLayer::new(placement()))
        .with_state(());
    let wrapped = MicroversionLayer::new(placement()).layer(routes().with_state(()));

    let mut group = c.benchmark_group("request");
    group.bench_function("bare", |b| {
        b.to_async(&rt)
            .iter(|| call(&bare, Some("placement 1.20"), StatusCode::OK));
    });
    group.bench_function("layer", |b| {
        b.to_async(&rt)
            .iter(|| call(&layered, Some("placement 1.20"), StatusCode::OK));
    });
    group.bench_function("layer_no_header", |b| {
        b.to_async(&rt)
            .iter(|| call(&layered, None, StatusCode::OK));
    });
    group.bench_function("versioned", |b| {
        b.to_async(&rt)
            .iter(|| call(&versioned, Some("placement 1.20"), StatusCode::OK));
    });
    group.bench_function("wrapped", |b| {
        b.to_async(&rt)
            .iter(|| call(&wrapped, Some("placement 1.20"), StatusCode::OK));
    });
    group.bench_function("not_acceptable", |b| {
        b.to_async(&rt).iter(|| {
            call(
                &layered,
                Some("placement 1.999"),
                StatusCode::NOT_ACCEPTABLE,
            )
        });
    });
    group.finish();

    let mut group = c.benchmark_group("layer_by_profile");
    for (profile, service, min, max, header) in [
        (
            Profile::ApiSig,
            "placement",
            "1.0",
            "1.39",
            "placement 1.20",
        ),
        (
            Profile::Placement,
            "placement",
            "1.0",
            "1.39",
            "placement 1.20",
        ),
        (Profile::Nova, "compute", "2.1", "2.104", "compute 2.20"),
        (
            Profile::Ironic,
            "baremetal",
            "1.1",
            "1.115",
            "baremetal 1.20",
        ),
        (Profile::Cinder, "volume", "3.0", "3.71", "volume 3.20"),
    ] {
        let app: Router = Router::new()
            .route("/resource_providers", get(handler))
            .layer(MicroversionLayer::new(api(profile, service, min, max)))
            .with_state(());
        group.bench_function(profile.name(), |b| {
            b.to_async(&rt)
                .iter(|| call(&app, Some(header), StatusCode::OK));
        });
    }
    group.finish();
}

/// A response checked against the documents, or not.
#[cfg(all(feature = "openapi", feature = "json-schema"))]
fn bench_validation(c: &mut Criterion) {
    use microversion_server::openapi::{
        ApiDescription, OperationDoc, ResponseDoc, ResponseValidation, ResponseValidationLayer,
    };
    use serde_json::json;

    async fn json_handler() -> impl axum::response::IntoResponse {
        ([(http::header::CONTENT_TYPE, "application/json")], BODY)
    }
    let rt = runtime();
    let routes =
        || VersionedRouter::new().get("/resource_providers", VersionSpan::ALL, json_handler);
    let description = ApiDescription::builder(&placement())
        .routes(&routes())
        .operation(OperationDoc::get("/resource_providers").response(
            VersionSpan::ALL,
            StatusCode::OK,
            ResponseDoc::json(
                "The providers",
                json!({
                    "type": "object",
                    "required": ["resource_providers"],
                    "properties": {"resource_providers": {"type": "array"}},
                    "additionalProperties": false
                }),
            ),
        ))
        .build()
        .expect("documented");
    let app = |validation: Option<ResponseValidation>| {
        let router = routes().build().expect("no overlap");
        let router = match validation {
            Some(mode) => router.layer(ResponseValidationLayer::new(&description, mode)),
            None => router,
        };
        MicroversionLayer::new(placement()).layer(router.with_state(()))
    };
    let mut group = c.benchmark_group("validation");
    for (name, mode) in [
        ("none", None),
        ("off", Some(ResponseValidation::Off)),
        ("error", Some(ResponseValidation::Error)),
    ] {
        let app = app(mode);
        group.bench_function(name, |b| {
            b.to_async(&rt)
                .iter(|| call(&app, Some("placement 1.20"), StatusCode::OK));
        });
    }
    group.finish();
}

#[cfg(not(all(feature = "openapi", feature = "json-schema")))]
fn bench_validation(_: &mut Criterion) {}

fn bench_negotiate(c: &mut Criterion) {
    let placement = placement();
    let nova = api(Profile::Nova, "compute", "2.1", "2.104");
    let std = "openstack-api-version";
    let cases = [
        ("absent", &placement, header_map(&[])),
        ("exact", &placement, header_map(&[(std, "placement 1.20")])),
        (
            "latest",
            &placement,
            header_map(&[(std, "placement latest")]),
        ),
        (
            "folded",
            &placement,
            header_map(&[(std, "compute 2.1, placement 1.14, volume 3.5")]),
        ),
        (
            "nova_legacy",
            &nova,
            header_map(&[("x-openstack-nova-api-version", "2.53")]),
        ),
        (
            "out_of_range",
            &placement,
            header_map(&[(std, "placement 1.999")]),
        ),
        (
            "malformed",
            &placement,
            header_map(&[(std, "placement 1.2.3")]),
        ),
    ];
    let mut group = c.benchmark_group("negotiate");
    for (name, api, headers) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| api.negotiate(black_box(headers)));
        });
    }
    group.finish();
}

/// The layer makes a request id (`req-<uuid4>`) for every request.
fn bench_request_id(c: &mut Criterion) {
    c.bench_function("request_id/generate", |b| b.iter(RequestId::generate));
}

criterion_group!(
    benches,
    bench_layer,
    bench_validation,
    bench_negotiate,
    bench_request_id
);
criterion_main!(benches);
