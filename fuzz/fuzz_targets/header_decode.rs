//! Any bytes as one or more header values (split at NUL) into the standard
//! and legacy decoders, in both `latest` modes: never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microversion::{Decoded, VersionHeader};

fuzz_target!(|data: &[u8]| {
    let values: Vec<&[u8]> = data.split(|&b| b == 0).collect();
    for any_case in [false, true] {
        let codec = VersionHeader::new("placement").latest_any_case(any_case);
        if let Decoded::Malformed(m) = codec.decode_bytes(values.iter().copied()) {
            let _ = m.error().to_string();
        }
        let _ = codec.decode_legacy_bytes(values.iter().copied());
    }
});
