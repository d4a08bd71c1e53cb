//! A clap CLI end to end: the version option, negotiation against a
//! loopback server, and validating the command line against the result.

mod common;

use clap::{Arg, Command};
use common::server;
use microversion::{VersionRange, VersionRequest, VersionSpan};
use microversion_client::Client;
use microversion_client::cli::{CliVersions, api_version_arg};
use microversion_server::Profile;

fn cli() -> Command {
    Command::new("placement")
        .arg(api_version_arg("placement"))
        .subcommand(
            Command::new("resource-provider").subcommand(
                Command::new("list").about("List resource providers").arg(
                    Arg::new("in_tree")
                        .long("in-tree")
                        .help("Providers in this tree"),
                ),
            ),
        )
        .subcommand(Command::new("trait").subcommand(Command::new("list").about("List traits")))
}

fn versions() -> CliVersions {
    CliVersions::new()
        .command("trait list", VersionSpan::from_static("1.6 - latest"))
        .option(
            "resource-provider list",
            "in_tree",
            VersionSpan::from_static("1.14 - latest"),
        )
}

/// Parses `args`, negotiates with the server, validates: what a CLI's
/// `main` does.
async fn run(endpoint: &str, args: &[&str]) -> Result<String, String> {
    let mut versions = versions();
    let cmd = versions.apply(cli()).map_err(|e| e.to_string())?;
    let matches = cmd.try_get_matches_from(args).map_err(|e| e.to_string())?;
    let requested = *matches
        .get_one::<VersionRequest>("os_placement_api_version")
        .expect("has a default");
    let client = Client::builder()
        .endpoint(endpoint)
        .service_type("placement")
        .supported_versions(VersionRange::from_static("1.0", "1.36"))
        .version(requested)
        .build()
        .map_err(|e| e.to_string())?;
    let negotiated = client.version().await.map_err(|e| e.to_string())?;
    let effective = negotiated.effective().ok_or("unknown version")?;
    versions
        .validate(&matches, effective)
        .map_err(|e| e.to_string())?;
    Ok(effective.to_string())
}

#[tokio::test]
async fn commands_and_options_are_checked_against_the_negotiated_version() {
    let s = server(Profile::Placement).await;
    let e = s.endpoint.as_str();
    // Default `latest`: min(1.36, 1.39).
    assert_eq!(
        run(e, &["placement", "trait", "list"]).await,
        Ok("1.36".to_owned())
    );
    assert_eq!(
        run(
            e,
            &["placement", "resource-provider", "list", "--in-tree", "x"]
        )
        .await,
        Ok("1.36".to_owned())
    );
    assert_eq!(
        run(e, &["placement", "--os-placement-api-version", "1.10", "resource-provider", "list", "--in-tree", "x"])
            .await,
        Err("option --in-tree of `resource-provider list` is supported by API versions 1.14 - latest; \
             the version in use is 1.10"
            .to_owned())
    );
    assert_eq!(
        run(e, &["placement", "--os-placement-api-version", "1.5", "trait", "list"]).await,
        Err("command `trait list` is supported by API versions 1.6 - latest; the version in use is 1.5"
            .to_owned())
    );
    // No microversion: the server's minimum.
    assert_eq!(
        run(
            e,
            &[
                "placement",
                "--os-placement-api-version",
                "None",
                "resource-provider",
                "list"
            ]
        )
        .await,
        Ok("1.0".to_owned())
    );
    // Validated by clap before anything else: no request is made.
    let before = s.log.all().len();
    let err = run(
        e,
        &[
            "placement",
            "--os-placement-api-version",
            "1.01",
            "trait",
            "list",
        ],
    )
    .await
    .unwrap_err();
    assert!(err.contains("invalid version \"1.01\""), "{err}");
    assert!(err.contains("expected X.Y, X.latest or latest"), "{err}");
    // Outside the client's own range: named before any request.
    let err = run(
        e,
        &[
            "placement",
            "--os-placement-api-version",
            "1.37",
            "trait",
            "list",
        ],
    )
    .await
    .unwrap_err();
    assert!(
        err.ends_with("version 1.37 is outside the range this client supports (1.0 - 1.36)"),
        "{err}"
    );
    assert_eq!(s.log.all().len(), before);
}

#[test]
fn help_shows_each_range() {
    let mut versions = versions();
    let mut cmd = versions.apply(cli()).unwrap();
    let rp = cmd.find_subcommand_mut("resource-provider").unwrap();
    let help = rp
        .find_subcommand_mut("list")
        .unwrap()
        .render_long_help()
        .to_string();
    assert!(
        help.contains("Providers in this tree (supported by API versions 1.14 - latest)"),
        "{help}"
    );
    let traits = cmd.find_subcommand_mut("trait").unwrap();
    let help = traits.render_long_help().to_string();
    assert!(
        help.contains("List traits (supported by API versions 1.6 - latest)"),
        "{help}"
    );
}
