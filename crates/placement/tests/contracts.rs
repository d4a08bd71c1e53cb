//! Released versions frozen: the OpenAPI document of each version, 1.0 to
//! 1.39, is committed in `crates/placement/contracts/`, and the code must
//! still make it. A difference fails with each one named and marked
//! BREAKING (it belongs in a new microversion) or compatible; an intended
//! change is accepted with `scripts/accept-contracts.sh`, which writes the
//! documents again, to be committed with the change.

use microversion_server::openapi::Contracts;

#[test]
fn released_versions_keep_their_documents() {
    let description = placement::openapi::description().unwrap();
    let contracts = Contracts::in_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/contracts"));
    if let Err(report) = contracts.verify(&description) {
        panic!("{report}");
    }
}
