//! A `Versioned` body is written straight through serde: at any version,
//! into a buffer large enough, it allocates nothing (no intermediate
//! `serde_json::Value`, no per-field strings).
//!
//! The counting allocator counts the whole process, so this binary holds
//! ONE test (see tests/alloc.rs).

use std::alloc::System;
use std::hint::black_box;

use microversion::Version;
use microversion_server::versioned::Versioned;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(Versioned)]
#[versioned(response)]
struct Part {
    weight: u32,
    #[versioned(since = "1.2")]
    label: String,
}

#[derive(Versioned)]
#[versioned(response)]
struct Widget {
    id: u64,
    #[versioned(form(versions = "1.0 - 1.2", rename = "title"))]
    name: String,
    #[versioned(since = "1.1")]
    color: Option<String>,
    #[versioned(until = "1.3")]
    legacy: bool,
    #[versioned(nested)]
    parts: Vec<Part>,
}

#[test]
fn writing_a_versioned_body_allocates_nothing() {
    let widget = Widget {
        id: 7,
        name: "w".into(),
        color: Some("red".into()),
        legacy: true,
        parts: (0..8)
            .map(|weight| Part {
                weight,
                label: "p".into(),
            })
            .collect(),
    };
    let mut buffer = Vec::with_capacity(4096);
    for minor in 0..=5 {
        buffer.clear();
        let region = Region::new(GLOBAL);
        serde_json::to_writer(
            &mut buffer,
            black_box(&Versioned::new(Version::new(1, minor), &widget)),
        )
        .unwrap();
        let change = region.change();
        assert_eq!(
            change.allocations + change.reallocations,
            0,
            "1.{minor}: {}",
            String::from_utf8_lossy(&buffer)
        );
        assert!(buffer.starts_with(br#"{"id":7,"#));
    }
}
