//! Any bytes into every text grammar of the core crate: errors, never panics,
//! and whatever parses prints back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microversion::{Version, VersionRequest};

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = Version::try_from_bytes(data) {
        assert_eq!(v.to_string().as_bytes(), data);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(req) = text.parse::<VersionRequest>() {
            assert_eq!(req.to_string().parse::<VersionRequest>(), Ok(req));
        }
        let _ = VersionRequest::parse_cli(text);
    }
});
