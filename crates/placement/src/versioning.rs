//! The versioning of the API: Placement's microversions (1.0 to 1.39,
//! from [`crate::history`]) and the versions document of `GET /`.

use microversion::VersionStatus;
use microversion_server::{ApiVersionSpec, BuildError, Discovery, Microversions, Profile};

/// The service type of Placement.
pub const SERVICE_TYPE: &str = "placement";

/// The versioning of the API: Placement's profile over 1.0 to 1.39.
///
/// # Errors
///
/// Never in practice: the history and profile are fixed.
pub fn microversions() -> Result<Microversions, BuildError> {
    build(true)
}

/// [`microversions`], counting negotiations for the metrics or not.
pub(crate) fn build(count_requests: bool) -> Result<Microversions, BuildError> {
    let history = crate::history::history()?;
    Microversions::builder(SERVICE_TYPE, history.range())
        .profile(Profile::Placement)
        .count_requests(count_requests)
        .build()
}

/// The versions document of `GET /`: one API version, `v1.0`, whose
/// `self` link is the empty relative URL, as upstream writes it.
///
/// # Errors
///
/// Never in practice.
pub fn discovery() -> Result<Discovery, BuildError> {
    let api = microversions()?;
    Discovery::builder()
        .version(
            ApiVersionSpec::new(
                format!("v{}", api.range().min()),
                "/",
                VersionStatus::Current,
            )
            .microversions(api.range())
            .literal_self_href(""),
        )
        .build()
}
