//! `resource provider usage show` and `resource usage show`: what is used
//! of each resource class, by a provider's consumers or by a project.

use clap::{ArgMatches, Args, Subcommand};
use indexmap::IndexMap;
use microversion::VersionSpan;
use microversion_client::cli::CliVersions;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Failure;
use crate::api::Api;
use crate::args::{Output, Uuid, WithOutput};
use crate::command::{ALL, Columns, Command, Plan, q};
use crate::error::Error;
use crate::output::Shown;

const USAGE: Columns = &[("resource_class", ALL), ("usage", ALL)];

/// `GET /resource_providers/{uuid}/usages` and `GET /usages`.
#[derive(Debug, Deserialize)]
pub(crate) struct Usages {
    usages: IndexMap<String, Usage>,
}

/// What is used of one class; from 1.38 a project's usages are grouped
/// by consumer type instead.
#[derive(Debug, Deserialize, Serialize)]
#[serde(untagged)]
enum Usage {
    Amount(i64),
    ByConsumerType(IndexMap<String, i64>),
}

impl Usages {
    /// What is used of `class`; an empty string when nothing is, as osc
    /// prints it.
    pub(crate) fn of(&self, class: &str) -> Value {
        self.usages
            .get(class)
            .map_or_else(|| Value::String(String::new()), Usage::value)
    }

    fn shown(&self) -> Shown {
        let rows = self
            .usages
            .iter()
            .map(|(class, usage)| vec![Value::from(class.as_str()), usage.value()])
            .collect();
        Shown::list(&["resource_class", "usage"], rows)
    }
}

impl Usage {
    fn value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum ProviderUsage {
    /// Show a provider's usages per resource class.
    Show(WithOutput<Uuid>),
}

#[derive(Debug, Subcommand)]
pub(crate) enum ResourceUsage {
    /// Show the usages of a project (and user) per resource class.
    Show(UsageShow),
}

#[derive(Debug, Args)]
pub(crate) struct UsageShow {
    /// ID of the project.
    #[arg(value_name = "PROJECT_ID")]
    project_id: String,
    /// ID of the user.
    #[arg(long, value_name = "USER_ID")]
    user_id: Option<String>,
    #[command(flatten)]
    output: Output,
}

/// The versions of `resource usage`.
pub(crate) fn versions(v: CliVersions) -> CliVersions {
    v.command("resource usage", VersionSpan::from_static("1.9 - latest"))
}

impl Command for ProviderUsage {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        let ProviderUsage::Show(a) = self;
        Ok(Plan::printing(
            "resource provider usage show",
            USAGE,
            &a.output,
        ))
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        let ProviderUsage::Show(a) = self;
        let body: Usages = api
            .get(&format!("resource_providers/{}/usages", a.args.uuid), &[])
            .await?;
        Ok(Some(body.shown()))
    }
}

impl Command for ResourceUsage {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        let ResourceUsage::Show(a) = self;
        Ok(Plan::printing("resource usage show", USAGE, &a.output))
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        let ResourceUsage::Show(a) = self;
        let mut query = vec![q("project_id", a.project_id.clone())];
        if let Some(user) = &a.user_id {
            query.push(q("user_id", user.clone()));
        }
        let body: Usages = api.get("usages", &query).await?;
        Ok(Some(body.shown()))
    }
}
