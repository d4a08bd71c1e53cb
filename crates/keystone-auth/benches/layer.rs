//! What a request with a cached token costs in the layer: the same
//! trivial route bare, behind the layer writing keystonemiddleware's
//! headers, and behind it with the headers off; and a cache hit alone.
//! One request is one `oneshot` through the router, in process.

#![allow(missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use axum::routing::get;
use criterion::{Criterion, criterion_group, criterion_main};
use http::Method;
use keystone_auth::{KeystoneAuthLayer, TokenCache};
use tower::ServiceExt;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ks = rt.block_on(support::FakeKeystone::start());
    let token = ks.project_token("alice", "p1", &["reader", "member"]);
    let route = || Router::new().route("/r", get(|| async { "ok" }));
    let layered = |headers: bool| {
        let client = ks.client_builder().build().unwrap();
        let auth = KeystoneAuthLayer::builder(client)
            .www_authenticate_uri("http://127.0.0.1:5000")
            .public_route(Method::GET, "/")
            .identity_headers(headers)
            .build()
            .unwrap();
        route().layer(auth)
    };
    let request = |token: &str| {
        Request::get("/r")
            .header("x-auth-token", token)
            .header("user-agent", "bench")
            .header("accept", "application/json")
            .body(Body::empty())
            .unwrap()
    };
    let mut group = c.benchmark_group("request");
    for (name, app) in [
        ("bare", route()),
        ("keystone_headers", layered(true)),
        ("keystone_no_headers", layered(false)),
    ] {
        // Warm: the token validated once and cached.
        rt.block_on(app.clone().oneshot(request(&token))).unwrap();
        group.bench_function(name, |b| {
            b.to_async(&rt)
                .iter(|| app.clone().oneshot(request(&token)));
        });
    }
    group.finish();
    let cache = TokenCache::new(ks.client_builder().build().unwrap(), 300, 10_000).unwrap();
    rt.block_on(cache.identity(&token)).unwrap();
    c.bench_function("cache_hit", |b| {
        b.to_async(&rt).iter(|| cache.identity(&token));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
