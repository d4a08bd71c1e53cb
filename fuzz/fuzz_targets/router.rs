//! Any bytes as a whole request (method, target, headers, body; the
//! format is `microversion_fuzz::RouterInput`'s) through placement-api's
//! router in process, on a temporary SQLite database with a small fixture
//! that lives across inputs (replaced every 5,000 requests or 500 writes):
//! never a panic or a 5xx, a 4xx leaves every table as it was, and a 4xx
//! to `accept: application/json` has an errors body of its status.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microversion_fuzz::RouterInput;
use microversion_fuzz::send;

// The service keeps state across inputs (its database, pools, runtime):
// leak checks after each input would only find that state, slowly.
microversion_fuzz::asan_default_options!(c"detect_odr_violation=0:detect_leaks=0");

fuzz_target!(|data: &[u8]| {
    if let Some(request) = RouterInput::parse(data).to_request() {
        send(request);
    }
});
