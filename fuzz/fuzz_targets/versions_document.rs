//! Any bytes as a versions document: an error or a document whose ranges
//! are well ordered, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microversion::VersionsDocument;

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = serde_json::from_slice::<VersionsDocument>(data) {
        for v in &doc.versions {
            if let (Some(min), Some(max)) = (v.min_version, v.max_version) {
                assert!(min <= max);
            }
            let _ = v.microversions();
        }
        let _ = doc.current();
    }
});
