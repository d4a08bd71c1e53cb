//! Any bytes as the query string of `GET /allocation_candidates` (byte 0
//! picks the version: `1.<10 + byte % 30>`, from 240 on `1.<byte % 10>`,
//! before the route; the rest is the query, percent-encoded where a URI
//! needs it): the parsers of `resources`, `required`, `member_of` and
//! `in_tree` with any group suffix, `root_required` and `limit` keep
//! their properties (`microversion_fuzz::check_candidate_query`), and the
//! whole request, through the service on the fixture database (the
//! handler's own group and request-wide checks, the search), is answered
//! 200 or a 4xx with an errors body, never a 5xx, writing nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microversion::Version;
use microversion_fuzz::check_candidate_query;
use microversion_fuzz::get_with_query;

// The service keeps state across inputs (its database, pools, runtime):
// leak checks after each input would only find that state, slowly.
microversion_fuzz::asan_default_options!(c"detect_odr_violation=0:detect_leaks=0");

fuzz_target!(|data: &[u8]| {
    let [minor, raw @ ..] = data else {
        return;
    };
    let minor = u32::from(*minor);
    let version = Version::new(
        1,
        if minor < 240 {
            10 + minor % 30
        } else {
            minor % 10
        },
    );
    get_with_query(
        "/allocation_candidates",
        version,
        raw,
        check_candidate_query,
    );
});
