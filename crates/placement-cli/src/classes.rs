//! `resource class create/list/show/set/delete`: resource classes.

use clap::{ArgMatches, Args, Subcommand};
use http::Method;
use microversion::VersionSpan;
use microversion_client::cli::CliVersions;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Failure;
use crate::api::Api;
use crate::args::{Output, WithOutput, parse_name};
use crate::command::{ALL, Columns, Command, Plan, names};
use crate::error::Error;
use crate::output::Shown;

const NAME: Columns = &[("name", ALL)];

/// A resource class: `GET /resource_classes/{name}`, and the body of
/// `POST /resource_classes`.
#[derive(Debug, Deserialize, Serialize)]
struct ResourceClass {
    name: String,
}

/// `GET /resource_classes`.
#[derive(Debug, Deserialize)]
struct ResourceClasses {
    resource_classes: Vec<ResourceClass>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Class {
    /// Create a custom resource class.
    Create(ClassName),
    /// List resource classes.
    List(Output),
    /// Show a resource class.
    Show(WithOutput<ClassName>),
    /// Create a custom resource class unless it exists.
    Set(ClassName),
    /// Delete a custom resource class.
    Delete(ClassName),
}

/// A resource class name.
#[derive(Debug, Args)]
pub(crate) struct ClassName {
    /// The resource class (CUSTOM_...).
    #[arg(value_name = "NAME", value_parser = parse_name)]
    name: String,
}

/// The versions of `resource class`.
pub(crate) fn versions(v: CliVersions) -> CliVersions {
    v.command("resource class", VersionSpan::from_static("1.2 - latest"))
        .command(
            "resource class set",
            VersionSpan::from_static("1.7 - latest"),
        )
}

impl Command for Class {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        Ok(match self {
            Class::Create(_) => Plan::quiet("resource class create"),
            Class::List(o) => Plan::printing("resource class list", NAME, o),
            Class::Show(a) => Plan::printing("resource class show", NAME, &a.output),
            Class::Set(_) => Plan::quiet("resource class set"),
            Class::Delete(_) => Plan::quiet("resource class delete"),
        })
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        match self {
            Class::Create(c) => {
                let body = ResourceClass {
                    name: c.name.clone(),
                };
                api.send(Method::POST, "resource_classes", &[], Some(&body))
                    .await?;
                Ok(None)
            }
            Class::Set(c) => {
                api.put_ignoring_answer::<()>(&format!("resource_classes/{}", c.name), None)
                    .await?;
                Ok(None)
            }
            Class::Delete(c) => {
                api.delete(&format!("resource_classes/{}", c.name)).await?;
                Ok(None)
            }
            Class::Show(c) => {
                let class: ResourceClass = api
                    .get(&format!("resource_classes/{}", c.args.name), &[])
                    .await?;
                Ok(Some(Shown::one(vec![("name", Value::String(class.name))])))
            }
            Class::List(_) => {
                let body: ResourceClasses = api.get("resource_classes", &[]).await?;
                let classes = body.resource_classes.into_iter().map(|c| c.name).collect();
                Ok(Some(Shown::list(&["name"], names(classes))))
            }
        }
    }
}
