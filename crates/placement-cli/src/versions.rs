//! `version-list`: the server's range of versions and this client's.

use clap::{ArgMatches, Args};
use microversion::ServerVersions;
use serde_json::Value;

use crate::Failure;
use crate::api::{Api, CLIENT_RANGE};
use crate::args::Output;
use crate::command::{ALL, Columns, Command, Plan};
use crate::error::Error;
use crate::output::Shown;

const VERSIONS: Columns = &[
    ("endpoint", ALL),
    ("min_version", ALL),
    ("max_version", ALL),
    ("client_min_version", ALL),
    ("client_max_version", ALL),
];

/// `version-list`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct VersionList {
    #[command(flatten)]
    output: Output,
}

impl Command for VersionList {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        let mut plan = Plan::printing("version-list", VERSIONS, &self.output);
        plan.fresh_versions = true;
        Ok(plan)
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        let (min, max) = match api.server_versions().await? {
            ServerVersions::Microversions(r) => (
                Value::String(r.min().to_string()),
                Value::String(r.max().to_string()),
            ),
            ServerVersions::Unversioned => (Value::Null, Value::Null),
        };
        Ok(Some(Shown::one(vec![
            ("endpoint", Value::String(api.endpoint.clone())),
            ("min_version", min),
            ("max_version", max),
            (
                "client_min_version",
                Value::String(CLIENT_RANGE.0.to_string()),
            ),
            (
                "client_max_version",
                Value::String(CLIENT_RANGE.1.to_string()),
            ),
        ])))
    }
}
