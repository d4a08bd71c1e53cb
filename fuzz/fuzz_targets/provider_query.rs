//! Any bytes as the query string of `GET /resource_providers` (byte 0
//! picks the version, `1.<byte % 40>`; the rest is the query, with the
//! bytes a URI cannot hold percent-encoded as a client would): the
//! parsers of `member_of`, `required`, `resources`, `in_tree` and `uuid`
//! keep their properties (`microversion_fuzz::check_provider_query`),
//! and the whole request, through the service on the fixture database,
//! is answered 200 or a 4xx with an errors body, never a 5xx, writing
//! nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microversion::Version;
use microversion_fuzz::check_provider_query;
use microversion_fuzz::get_with_query;

// The service keeps state across inputs (its database, pools, runtime):
// leak checks after each input would only find that state, slowly.
microversion_fuzz::asan_default_options!(c"detect_odr_violation=0:detect_leaks=0");

fuzz_target!(|data: &[u8]| {
    let [minor, raw @ ..] = data else {
        return;
    };
    let version = Version::new(1, u32::from(*minor) % 40);
    get_with_query("/resource_providers", version, raw, check_provider_query);
});
