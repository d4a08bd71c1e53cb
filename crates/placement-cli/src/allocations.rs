//! `resource provider allocation show/set/unset/delete`: a consumer's
//! allocations, one row per provider.

use clap::{ArgMatches, Args, Subcommand};
use indexmap::IndexMap;
use microversion::VersionSpan;
use microversion_client::cli::CliVersions;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::Failure;
use crate::api::Api;
use crate::args::{Output, WithOutput, parse_amount, parse_name, parse_uuid};
use crate::command::{ALL, Columns, Command, Plan};
use crate::error::Error;
use crate::output::Shown;

const V1_12: VersionSpan = VersionSpan::from_static("1.12 - latest");
const V1_38: VersionSpan = VersionSpan::from_static("1.38 - latest");

const ALLOCATION: Columns = &[
    ("resource_provider", ALL),
    ("generation", ALL),
    ("resources", ALL),
    ("project_id", V1_12),
    ("user_id", V1_12),
    ("consumer_type", V1_38),
];

/// Amounts per resource class, in the order given.
type Amounts = IndexMap<String, i64>;

/// `GET /allocations/{consumer}`.
#[derive(Debug, Deserialize)]
struct ConsumerAllocations {
    allocations: IndexMap<String, ProviderEntry>,
    /// From 1.28.
    #[serde(default)]
    consumer_generation: Option<i64>,
    /// From 1.12.
    #[serde(default)]
    project_id: Option<String>,
    /// From 1.12.
    #[serde(default)]
    user_id: Option<String>,
    /// From 1.38.
    #[serde(default)]
    consumer_type: Option<String>,
}

/// A consumer's allocation against one provider.
#[derive(Debug, Deserialize)]
struct ProviderEntry {
    /// The provider's generation.
    #[serde(default)]
    generation: Option<i64>,
    resources: Amounts,
}

/// `GET /resource_providers/{uuid}/allocations`: each consumer's
/// allocation against the provider.
#[derive(Debug, Deserialize)]
pub(crate) struct ProviderAllocations {
    pub(crate) allocations: IndexMap<String, Resources>,
}

/// `{"resources": {CLASS: AMOUNT}}`.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct Resources {
    resources: Amounts,
}

/// `PUT /allocations/{consumer}` by `allocation set`: only what the
/// version in use has.
#[derive(Debug, Serialize)]
struct AllocationsUpdate<'a> {
    allocations: AllocationsBody<'a>,
    /// From 1.28: the consumer's generation, `null` for a new consumer.
    #[serde(skip_serializing_if = "Option::is_none")]
    consumer_generation: Option<Option<i64>>,
    /// From 1.8.
    #[serde(skip_serializing_if = "Option::is_none")]
    project_id: Option<&'a str>,
    /// From 1.8.
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<&'a str>,
    /// From 1.38.
    #[serde(skip_serializing_if = "Option::is_none")]
    consumer_type: Option<&'a str>,
}

/// The allocations of a `PUT`: from 1.12 a map of provider to resources,
/// before a list.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum AllocationsBody<'a> {
    ByProvider(IndexMap<&'a str, Resources>),
    List(Vec<ListedAllocation<'a>>),
}

/// One allocation of the list form (before 1.12).
#[derive(Debug, Serialize)]
struct ListedAllocation<'a> {
    resource_provider: ProviderRef<'a>,
    resources: Amounts,
}

#[derive(Debug, Serialize)]
struct ProviderRef<'a> {
    uuid: &'a str,
}

/// `PUT /allocations/{consumer}` by `allocation unset`: what is left,
/// with the consumer's fields as the server sent them.
#[derive(Debug, Serialize)]
struct AllocationsRewrite {
    allocations: IndexMap<String, Resources>,
    project_id: Echo<String>,
    user_id: Echo<String>,
    /// From 1.28.
    #[serde(skip_serializing_if = "Option::is_none")]
    consumer_generation: Option<Echo<i64>>,
    /// From 1.38.
    #[serde(skip_serializing_if = "Option::is_none")]
    consumer_type: Option<Echo<String>>,
}

/// A field read from the server and sent back: one it did not send goes
/// back as an empty string, as osc prints a missing field.
#[derive(Debug)]
struct Echo<T>(Option<T>);

impl<T: Serialize> Serialize for Echo<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(value) => value.serialize(serializer),
            None => serializer.serialize_str(""),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConsumerAllocation {
    /// Show a consumer's allocations.
    Show(WithOutput<Consumer>),
    /// Replace a consumer's allocations.
    Set(AllocationSet),
    /// Remove some of a consumer's allocations.
    Unset(AllocationUnset),
    /// Delete all of a consumer's allocations.
    Delete(Consumer),
}

/// A consumer UUID.
#[derive(Debug, Args)]
pub(crate) struct Consumer {
    /// UUID of the consumer.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
}

#[derive(Debug, Args)]
pub(crate) struct AllocationSet {
    /// UUID of the consumer.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// rp=PROVIDER_UUID,CLASS=AMOUNT[,CLASS=AMOUNT...]; may be repeated.
    #[arg(long, value_name = "rp=UUID,CLASS=AMOUNT", required = true,
          value_parser = parse_allocation)]
    allocation: Vec<AllocationArg>,
    /// ID of the consuming project.
    #[arg(long, value_name = "PROJECT_ID", requires = "user_id")]
    project_id: Option<String>,
    /// ID of the consuming user.
    #[arg(long, value_name = "USER_ID", requires = "project_id")]
    user_id: Option<String>,
    /// The type of the consumer (INSTANCE, MIGRATION, ...).
    #[arg(long, value_name = "TYPE")]
    consumer_type: Option<String>,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct AllocationUnset {
    /// UUID of the consumer.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// Only the allocations against this provider; may be repeated.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    provider: Vec<String>,
    /// Only the allocations of this class; may be repeated.
    #[arg(long, value_name = "CLASS", value_parser = parse_name)]
    resource_class: Vec<String>,
    #[command(flatten)]
    output: Output,
}

/// One `--allocation` of `allocation set`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AllocationArg {
    provider: String,
    resources: Vec<(String, i64)>,
}

/// `rp=UUID,CLASS=AMOUNT,...`.
fn parse_allocation(text: &str) -> Result<AllocationArg, String> {
    let mut provider = None;
    let mut resources = Vec::new();
    for part in text.split(',') {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!(
                "invalid allocation {text:?}: expected rp=PROVIDER_UUID,CLASS=AMOUNT[,...]"
            ));
        };
        if key.trim() == "rp" {
            provider = Some(parse_uuid(value)?);
        } else {
            resources.push(parse_amount(part)?);
        }
    }
    let Some(provider) = provider else {
        return Err(format!(
            "invalid allocation {text:?}: it names no provider (rp=UUID)"
        ));
    };
    if resources.is_empty() {
        return Err(format!(
            "invalid allocation {text:?}: it names no CLASS=AMOUNT"
        ));
    }
    Ok(AllocationArg {
        provider,
        resources,
    })
}

/// The versions of these commands and options.
pub(crate) fn versions(v: CliVersions) -> CliVersions {
    const fn since(v: &'static str) -> VersionSpan {
        VersionSpan::from_static(v)
    }
    v.command("resource provider allocation unset", since("1.12 - latest"))
        .option(
            "resource provider allocation set",
            "project_id",
            since("1.8 - latest"),
        )
        .option(
            "resource provider allocation set",
            "user_id",
            since("1.8 - latest"),
        )
        .option(
            "resource provider allocation set",
            "consumer_type",
            since("1.38 - latest"),
        )
}

impl Command for ConsumerAllocation {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        Ok(match self {
            ConsumerAllocation::Show(a) => {
                Plan::printing("resource provider allocation show", ALLOCATION, &a.output)
            }
            ConsumerAllocation::Set(a) => {
                Plan::printing("resource provider allocation set", ALLOCATION, &a.output)
            }
            ConsumerAllocation::Unset(a) => {
                Plan::printing("resource provider allocation unset", ALLOCATION, &a.output)
            }
            ConsumerAllocation::Delete(_) => Plan::quiet("resource provider allocation delete"),
        })
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        match self {
            ConsumerAllocation::Show(a) => {
                let body = api
                    .get(&format!("allocations/{}", a.args.uuid), &[])
                    .await?;
                Ok(Some(rows(api, &body, false)))
            }
            ConsumerAllocation::Delete(a) => {
                api.delete(&format!("allocations/{}", a.uuid)).await?;
                Ok(None)
            }
            ConsumerAllocation::Set(a) => set(api, a).await.map(Some),
            ConsumerAllocation::Unset(a) => unset(api, a).await.map(Some),
        }
    }
}

/// A consumer's allocations as rows, with the columns of the version in
/// use (`unset` always shows the project and user).
fn rows(api: &Api, body: &ConsumerAllocations, owner_always: bool) -> Shown {
    let columns: Vec<&str> = ALLOCATION
        .iter()
        .filter(|(c, span)| {
            span.contains(api.version) || (owner_always && matches!(*c, "project_id" | "user_id"))
        })
        .map(|(c, _)| *c)
        .collect();
    let text = |v: &Option<String>| v.as_deref().map_or(Value::Null, Value::from);
    let rows = body
        .allocations
        .iter()
        .map(|(rp, a)| {
            columns
                .iter()
                .map(|c| match *c {
                    "resource_provider" => Value::from(rp.as_str()),
                    "generation" => a
                        .generation
                        .map_or_else(|| Value::String(String::new()), Value::from),
                    "resources" => serde_json::to_value(&a.resources).unwrap_or(Value::Null),
                    "project_id" => text(&body.project_id),
                    "user_id" => text(&body.user_id),
                    _ => text(&body.consumer_type),
                })
                .collect()
        })
        .collect();
    Shown::list(&columns, rows)
}

async fn set(api: &Api, a: &AllocationSet) -> Result<Shown, Failure> {
    if api.at_least("1.8") && (a.project_id.is_none() || a.user_id.is_none()) {
        return Err(Error::new(format!(
            "`resource provider allocation set` needs --project-id and --user-id from API \
             version 1.8; the version in use is {}",
            api.version
        ))
        .into());
    }
    if api.at_least("1.38") && a.consumer_type.is_none() {
        return Err(Error::new(format!(
            "`resource provider allocation set` needs --consumer-type from API version 1.38; \
             the version in use is {}",
            api.version
        ))
        .into());
    }
    // One entry per provider; the same class twice must agree.
    let mut merged: IndexMap<&str, Amounts> = IndexMap::new();
    for alloc in &a.allocation {
        let resources = merged.entry(alloc.provider.as_str()).or_default();
        for (class, amount) in &alloc.resources {
            if let Some(old) = resources.get(class) {
                if old != amount {
                    return Err(Error::new(format!(
                        "--allocation gives {class} of provider {} twice, as {old} and {amount}",
                        alloc.provider
                    ))
                    .into());
                }
            }
            resources.insert(class.clone(), *amount);
        }
    }
    let path = format!("allocations/{}", a.uuid);
    let allocations = if api.at_least("1.12") {
        AllocationsBody::ByProvider(
            merged
                .into_iter()
                .map(|(rp, resources)| (rp, Resources { resources }))
                .collect(),
        )
    } else {
        AllocationsBody::List(
            merged
                .into_iter()
                .map(|(uuid, resources)| ListedAllocation {
                    resource_provider: ProviderRef { uuid },
                    resources,
                })
                .collect(),
        )
    };
    let consumer_generation = if api.at_least("1.28") {
        let current: ConsumerAllocations = api.get(&path, &[]).await?;
        Some(current.consumer_generation)
    } else {
        None
    };
    let owner = api.at_least("1.8");
    let body = AllocationsUpdate {
        allocations,
        consumer_generation,
        project_id: a.project_id.as_deref().filter(|_| owner),
        user_id: a.user_id.as_deref().filter(|_| owner),
        consumer_type: a.consumer_type.as_deref().filter(|_| api.at_least("1.38")),
    };
    api.put_ignoring_answer(&path, Some(&body)).await?;
    let body = api.get(&path, &[]).await?;
    Ok(rows(api, &body, false))
}

async fn unset(api: &Api, a: &AllocationUnset) -> Result<Shown, Failure> {
    let path = format!("allocations/{}", a.uuid);
    let current: ConsumerAllocations = api.get(&path, &[]).await?;
    let mut allocations: IndexMap<String, Amounts> = current
        .allocations
        .into_iter()
        .map(|(rp, entry)| (rp, entry.resources))
        .collect();
    if a.resource_class.is_empty() {
        if a.provider.is_empty() {
            allocations.clear();
        } else {
            for rp in &a.provider {
                allocations.shift_remove(rp);
            }
        }
    } else {
        allocations.retain(|rp, resources| {
            if !a.provider.is_empty() && !a.provider.contains(rp) {
                return true;
            }
            for class in &a.resource_class {
                resources.shift_remove(class);
            }
            !resources.is_empty()
        });
    }
    if allocations.is_empty() && !api.at_least("1.28") {
        // Before 1.28 an empty set cannot be PUT.
        api.delete(&path).await?;
    } else {
        let body = AllocationsRewrite {
            allocations: allocations
                .into_iter()
                .map(|(rp, resources)| (rp, Resources { resources }))
                .collect(),
            project_id: Echo(current.project_id),
            user_id: Echo(current.user_id),
            consumer_generation: api
                .at_least("1.28")
                .then_some(Echo(current.consumer_generation)),
            consumer_type: api.at_least("1.38").then_some(Echo(current.consumer_type)),
        };
        api.put_ignoring_answer(&path, Some(&body)).await?;
    }
    let body = api.get(&path, &[]).await?;
    Ok(rows(api, &body, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_checked() {
        let a = parse_allocation("rp=4e8e5957-649f-477b-9e5b-f1f75b21c03c,VCPU=2").unwrap();
        assert_eq!(a.resources, [("VCPU".to_owned(), 2)]);
        assert!(parse_allocation("VCPU=2").is_err());
        assert!(parse_allocation("rp=x,VCPU=2").is_err());
    }

    #[test]
    fn fields_the_server_did_not_send_go_back_empty() {
        let body = AllocationsRewrite {
            allocations: IndexMap::new(),
            project_id: Echo(Some("p".to_owned())),
            user_id: Echo(None),
            consumer_generation: Some(Echo(Some(3))),
            consumer_type: None,
        };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"allocations":{},"project_id":"p","user_id":"","consumer_generation":3}"#
        );
    }
}
