//! Parse and decode costs: the work a server does on every request.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use http::HeaderValue;
use microversion::{Version, VersionHeader, VersionRange, VersionRequest};

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group.bench_function("version 1.39", |b| {
        b.iter(|| black_box("1.39").parse::<Version>());
    });
    group.bench_function("version invalid", |b| {
        b.iter(|| black_box("pony.horse").parse::<Version>());
    });
    group.bench_function("request 2.latest", |b| {
        b.iter(|| black_box("2.latest").parse::<VersionRequest>());
    });
    group.finish();
}

fn decode(c: &mut Criterion) {
    let codec = VersionHeader::new("placement");
    let range = VersionRange::from_static("1.0", "1.39");
    let single = [HeaderValue::from_static("placement 1.20")];
    let folded = [
        HeaderValue::from_static("compute 2.1, volume 3.10"),
        HeaderValue::from_static("network 2.0, placement latest"),
    ];
    let mut group = c.benchmark_group("decode");
    group.bench_function("single", |b| b.iter(|| codec.decode(black_box(&single))));
    group.bench_function("folded, four services", |b| {
        b.iter(|| codec.decode(black_box(&folded)));
    });
    group.bench_function("decode and resolve", |b| {
        b.iter(|| match codec.decode(black_box(&single)) {
            microversion::Decoded::Present(r) => range.resolve(r).ok(),
            _ => None,
        });
    });
    group.bench_function("encode", |b| {
        b.iter(|| codec.encode(black_box(Version::new(1, 39))));
    });
    group.finish();
}

criterion_group!(benches, parse, decode);
criterion_main!(benches);
