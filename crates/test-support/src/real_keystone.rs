//! The real Keystone of the CI run (scripts/keystone.sh) whose catalog
//! lists placement-api (scripts/keystone-catalog.sh), as the CLIs' tests
//! against it read it from the environment, and a `clouds.yaml` for its
//! demo member.

use crate::Scratch;

/// The Keystone and placement-api of the environment.
#[derive(Debug, Clone)]
pub struct RealKeystone {
    /// `KEYSTONE_URL`: Keystone's v3 endpoint.
    pub url: String,
    /// `KEYSTONE_MEMBER_USER`: a member of the `demo` project.
    pub member: String,
    /// `KEYSTONE_MEMBER_PASSWORD`.
    pub member_password: String,
    /// `MV_TEST_PLACEMENT_URL`: placement-api's endpoint in the catalog.
    pub placement: String,
}

impl RealKeystone {
    /// The environment's, or `None` (with "skipped: ..." on standard
    /// error) when `KEYSTONE_URL` or `MV_TEST_PLACEMENT_URL` is not set.
    ///
    /// # Panics
    ///
    /// When Keystone's other variables are missing.
    #[must_use]
    pub fn from_env() -> Option<RealKeystone> {
        let (Ok(url), Ok(placement)) = (
            std::env::var("KEYSTONE_URL"),
            std::env::var("MV_TEST_PLACEMENT_URL"),
        ) else {
            eprintln!("skipped: KEYSTONE_URL or MV_TEST_PLACEMENT_URL not set");
            return None;
        };
        let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
        Some(RealKeystone {
            url,
            member: var("KEYSTONE_MEMBER_USER"),
            member_password: var("KEYSTONE_MEMBER_PASSWORD"),
            placement,
        })
    }

    /// A directory with clouds.yaml naming two clouds: `member` (its
    /// password in secure.yaml, as a user keeps it) and `wrong` (a wrong
    /// password).
    ///
    /// # Panics
    ///
    /// When the files cannot be written.
    #[must_use]
    pub fn clouds(&self) -> Scratch {
        let dir = Scratch::new("cli-real-keystone");
        let cloud = |name: &str, password: &str| {
            format!(
                "  {name}:\n    auth:\n      auth_url: {}\n      username: {}\n{password}      \
                 project_name: demo\n      user_domain_name: Default\n      project_domain_name: Default\n",
                self.url, self.member
            )
        };
        let clouds = format!(
            "clouds:\n{}{}",
            cloud("member", ""),
            cloud("wrong", "      password: wrong-password\n")
        );
        std::fs::write(dir.join("clouds.yaml"), clouds).expect("clouds.yaml is written");
        std::fs::write(
            dir.join("secure.yaml"),
            format!(
                "clouds:\n  member:\n    auth:\n      password: {}\n",
                self.member_password
            ),
        )
        .expect("secure.yaml is written");
        dir
    }
}
