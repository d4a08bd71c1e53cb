//! The `placement` command against a real Keystone (scripts/keystone.sh)
//! whose catalog lists placement-api (scripts/keystone-catalog.sh): the
//! endpoint comes from the catalog, the token from Keystone.
//! Each test prints "skipped: ..." and passes when `KEYSTONE_URL` or
//! `MV_TEST_PLACEMENT_URL` is not set; CI sets both (scripts/test.sh).

mod placement_support;

use microversion_test_support::RealKeystone;
use placement_support::run_in;

#[test]
fn the_placement_command_through_the_catalog() {
    let Some(env) = RealKeystone::from_env() else {
        return;
    };
    let dir = env.clouds();
    let placement = |cloud: &str, args: &[&str]| run_in(dir.path(), args, &[("OS_CLOUD", cloud)]);
    // The member's token, from Keystone, goes to the placement-api of the
    // catalog; that one runs noauth2, where only the token `admin` is an
    // administrator, so it refuses: the command prints the server's
    // detail in full and exits 1.
    let r = placement("member", &["resource", "provider", "list"]);
    assert_eq!(r.code, 1, "{r:?}");
    let url = format!("GET {}/resource_providers: 403 Forbidden", env.placement);
    assert!(r.stderr.contains(&url), "{r:?}");
    assert!(
        r.stderr
            .contains("Policy does not allow placement:resource_providers:list to be performed."),
        "{r:?}"
    );
    // Refused credentials: Keystone's answer, before any Placement request.
    let r = placement("wrong", &["resource", "provider", "list"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("authentication failed") && r.stderr.contains("401 Unauthorized"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("resource_providers"), "{r:?}");
}
