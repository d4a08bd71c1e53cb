//! The `placement` command against a real Keystone (scripts/keystone.sh)
//! whose catalog lists placement-api (scripts/keystone-catalog.sh): the
//! endpoint comes from the catalog, the token from Keystone.
//! Each test prints "skipped: ..." and passes when `KEYSTONE_URL` or
//! `MV_TEST_PLACEMENT_URL` is not set; CI sets both (scripts/test.sh).

mod placement_support;

use microversion_test_support::Scratch;
use placement_support::run_in;

struct Env {
    url: String,
    member: String,
    member_password: String,
    placement: String,
}

fn env() -> Option<Env> {
    let (Ok(url), Ok(placement)) = (
        std::env::var("KEYSTONE_URL"),
        std::env::var("MV_TEST_PLACEMENT_URL"),
    ) else {
        eprintln!("skipped: KEYSTONE_URL or MV_TEST_PLACEMENT_URL not set");
        return None;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    Some(Env {
        url,
        member: var("KEYSTONE_MEMBER_USER"),
        member_password: var("KEYSTONE_MEMBER_PASSWORD"),
        placement,
    })
}

/// A directory with clouds.yaml: `member` (password in secure.yaml) and
/// `wrong`.
fn clouds(env: &Env) -> Scratch {
    let dir = Scratch::new("cli-real-keystone");
    std::fs::write(
        dir.join("clouds.yaml"),
        format!(
            "clouds:
  member:
    auth:
      auth_url: {url}
      username: {member}
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
  wrong:
    auth:
      auth_url: {url}
      username: {member}
      password: wrong-password
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
",
            url = env.url,
            member = env.member
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("secure.yaml"),
        format!(
            "clouds:\n  member:\n    auth:\n      password: {}\n",
            env.member_password
        ),
    )
    .unwrap();
    dir
}

#[test]
fn the_placement_command_through_the_catalog() {
    let Some(env) = env() else { return };
    let dir = clouds(&env);
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
