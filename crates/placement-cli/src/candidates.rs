//! `allocation candidate list`: the allocation requests that would
//! satisfy a request, one row per provider of each, with request groups
//! made from the order of the options.

use clap::{ArgMatches, Args, Subcommand};
use indexmap::IndexMap;
use microversion::VersionSpan;
use microversion_client::cli::CliVersions;
use serde::Deserialize;
use serde_json::Value;

use crate::Failure;
use crate::api::Api;
use crate::args::{Output, parse_amount, parse_uuid_list};
use crate::command::{ALL, Columns, Command, Plan, columns_at, q, required_params};
use crate::error::Error;
use crate::output::Shown;

const CANDIDATE: Columns = &[
    ("#", ALL),
    ("allocation", ALL),
    ("resource provider", ALL),
    ("inventory used/capacity", ALL),
    ("traits", VersionSpan::from_static("1.17 - latest")),
];

/// `GET /allocation_candidates`.
#[derive(Debug, Deserialize)]
struct Candidates {
    #[serde(default)]
    allocation_requests: Vec<AllocationRequest>,
    provider_summaries: IndexMap<String, ProviderSummary>,
}

/// One allocation request.
#[derive(Debug, Deserialize)]
struct AllocationRequest {
    #[serde(default)]
    allocations: Option<RequestAllocations>,
}

/// From 1.12 a map of provider to resources; before, a list.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RequestAllocations {
    ByProvider(IndexMap<String, Amounts>),
    List(Vec<ListedAmounts>),
}

/// `{"resources": {CLASS: AMOUNT}}`.
#[derive(Debug, Deserialize)]
struct Amounts {
    resources: IndexMap<String, i64>,
}

/// One allocation of the list form.
#[derive(Debug, Deserialize)]
struct ListedAmounts {
    resource_provider: ProviderRef,
    resources: IndexMap<String, i64>,
}

#[derive(Debug, Deserialize)]
struct ProviderRef {
    uuid: String,
}

/// What a provider of the candidates has and uses.
#[derive(Debug, Deserialize)]
struct ProviderSummary {
    #[serde(default)]
    resources: IndexMap<String, Capacity>,
    /// From 1.17.
    #[serde(default)]
    traits: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Capacity {
    capacity: i64,
    used: i64,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Allocation {
    /// Allocation candidates.
    #[command(subcommand)]
    Candidate(Candidate),
}

#[derive(Debug, Subcommand)]
pub(crate) enum Candidate {
    /// List the allocation requests that would satisfy a request, and the
    /// providers they use.
    List(CandidateList),
}

#[derive(Debug, Args)]
pub(crate) struct CandidateList {
    /// CLASS=AMOUNT wanted; may be repeated; after --group, of that group.
    #[arg(long, value_name = "CLASS=AMOUNT", value_parser = parse_amount)]
    resource: Vec<(String, i64)>,
    /// At most this many allocation requests.
    #[arg(long, value_name = "INTEGER", value_parser = parse_limit)]
    limit: Option<u64>,
    /// A trait required (comma separated: any of them, from 1.39); may be
    /// repeated; after --group, of that group.
    #[arg(long, value_name = "TRAIT")]
    required: Vec<String>,
    /// A trait forbidden; may be repeated; after --group, of that group.
    #[arg(long, value_name = "TRAIT")]
    forbidden: Vec<String>,
    /// Comma separated aggregate UUIDs: any of them; may be repeated (all
    /// of the lists); after --group, of that group.
    #[arg(long, value_name = "UUIDS", value_parser = parse_uuid_list)]
    member_of: Vec<String>,
    /// Starts a request group with this suffix (a number, or up to 64
    /// letters, digits, _ and -); the options after it belong to it.
    #[arg(long, value_name = "SUFFIX", value_parser = parse_group)]
    group: Vec<String>,
    /// none or isolate: whether the groups may share a provider.
    #[arg(long, value_name = "POLICY", value_parser = ["none", "isolate"])]
    group_policy: Option<String>,
    /// Only candidates whose root provider has (or, with !, lacks) this
    /// trait; may be repeated.
    #[arg(long, value_name = "TRAIT")]
    root_required: Vec<String>,
    #[command(flatten)]
    output: Output,
}

/// One request group.
#[derive(Debug, Default, PartialEq)]
struct Group {
    suffix: String,
    resources: Vec<String>,
    required: Vec<String>,
    forbidden: Vec<String>,
    member_of: Vec<String>,
}

/// The versions of `allocation candidate list` and its options.
pub(crate) fn versions(v: CliVersions) -> CliVersions {
    const fn since(v: &'static str) -> VersionSpan {
        VersionSpan::from_static(v)
    }
    v.command("allocation candidate list", since("1.10 - latest"))
        .option("allocation candidate list", "limit", since("1.16 - latest"))
        .option(
            "allocation candidate list",
            "required",
            since("1.17 - latest"),
        )
        .option(
            "allocation candidate list",
            "forbidden",
            since("1.22 - latest"),
        )
        .option(
            "allocation candidate list",
            "member_of",
            since("1.21 - latest"),
        )
        .option("allocation candidate list", "group", since("1.25 - latest"))
        .option(
            "allocation candidate list",
            "group_policy",
            since("1.25 - latest"),
        )
        .option(
            "allocation candidate list",
            "root_required",
            since("1.35 - latest"),
        )
}

/// A positive integer.
fn parse_limit(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "invalid limit {text:?}: expected a whole number above 0"
        )),
    }
}

/// A request group suffix.
fn parse_group(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "invalid group {text:?}: expected a number, or up to 64 letters, digits, _ and -"
        ))
    }
}

impl Command for Allocation {
    fn plan(&self, matches: &ArgMatches) -> Result<Plan<'_>, Error> {
        let Allocation::Candidate(Candidate::List(a)) = self;
        let mut plan = Plan::printing("allocation candidate list", CANDIDATE, &a.output);
        for g in &groups(matches)? {
            let name = if g.suffix.is_empty() {
                "the unnamed group".to_owned()
            } else {
                format!("group {}", g.suffix)
            };
            if g.required.iter().any(|r| r.contains(',')) {
                plan.need(
                    format!("option --required with a comma (any of the traits) in {name}"),
                    "1.39 - latest",
                );
            }
            if g.member_of.len() > 1 {
                plan.need(
                    format!("option --member-of given more than once in {name}"),
                    "1.24 - latest",
                );
            }
            if !g.suffix.is_empty() && !g.suffix.bytes().all(|b| b.is_ascii_digit()) {
                plan.need(
                    format!("group {} (a suffix that is not a number)", g.suffix),
                    "1.33 - latest",
                );
            }
        }
        Ok(plan)
    }

    async fn run(&self, api: &Api, matches: &ArgMatches) -> Result<Option<Shown>, Failure> {
        let Allocation::Candidate(Candidate::List(a)) = self;
        let groups = groups(matches)?;
        let mut query = Vec::new();
        if let Some(limit) = a.limit {
            query.push(q("limit", limit.to_string()));
        }
        if groups.iter().any(|g| !g.suffix.is_empty()) {
            query.push(q(
                "group_policy",
                a.group_policy.as_deref().unwrap_or("none"),
            ));
        }
        for g in &groups {
            let key = |name: &str| format!("{name}{}", g.suffix);
            query.push(q(&key("resources"), g.resources.join(",")));
            for r in required_params(&g.required, &g.forbidden) {
                query.push(q(&key("required"), r));
            }
            for m in &g.member_of {
                query.push(q(&key("member_of"), format!("in:{m}")));
            }
        }
        if !a.root_required.is_empty() {
            query.push(q("root_required", a.root_required.join(",")));
        }
        let body: Candidates = api.get("allocation_candidates", &query).await?;
        Ok(Some(rows(api, &body)))
    }
}

/// One row per provider of each allocation request, numbered from 1.
fn rows(api: &Api, body: &Candidates) -> Shown {
    let with_traits = api.at_least("1.17");
    let capacity = |rp: &str| -> Value {
        let text = body
            .provider_summaries
            .get(rp)
            .map_or_else(String::new, |s| {
                s.resources
                    .iter()
                    .map(|(class, c)| format!("{class}={}/{}", c.used, c.capacity))
                    .collect::<Vec<_>>()
                    .join(",")
            });
        Value::String(text)
    };
    let traits = |rp: &str| -> Value {
        Value::String(
            body.provider_summaries
                .get(rp)
                .map_or_else(String::new, |s| s.traits.join(",")),
        )
    };
    let amounts = |resources: &IndexMap<String, i64>| -> String {
        resources
            .iter()
            .map(|(class, n)| format!("{class}={n}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut rows = Vec::new();
    for (i, request) in body.allocation_requests.iter().enumerate() {
        let per_provider: Vec<(&str, String)> = match &request.allocations {
            Some(RequestAllocations::ByProvider(map)) => map
                .iter()
                .map(|(rp, a)| (rp.as_str(), amounts(&a.resources)))
                .collect(),
            Some(RequestAllocations::List(list)) => list
                .iter()
                .map(|a| (a.resource_provider.uuid.as_str(), amounts(&a.resources)))
                .collect(),
            None => Vec::new(),
        };
        for (rp, allocation) in per_provider {
            let mut row = vec![
                Value::from(i + 1),
                Value::String(allocation),
                Value::from(rp),
                capacity(rp),
            ];
            if with_traits {
                row.push(traits(rp));
            }
            rows.push(row);
        }
    }
    Shown::list(&columns_at(api, CANDIDATE), rows)
}

/// The request groups of the command line: each option belongs to the
/// last `--group` before it, or to the unnamed group.
fn groups(matches: &ArgMatches) -> Result<Vec<Group>, Error> {
    let sub = matches
        .subcommand_matches("allocation")
        .and_then(|m| m.subcommand_matches("candidate"))
        .and_then(|m| m.subcommand_matches("list"));
    match sub {
        Some(sub) => candidate_groups(sub),
        None => Ok(Vec::new()),
    }
}

/// The request groups of `allocation candidate list`'s matches `m`.
fn candidate_groups(m: &ArgMatches) -> Result<Vec<Group>, Error> {
    let indexed = |id: &str| -> Vec<(usize, String)> {
        match (m.indices_of(id), m.get_many::<String>(id)) {
            (Some(i), Some(v)) => i.zip(v.cloned()).collect(),
            _ => Vec::new(),
        }
    };
    let starts = indexed("group");
    let mut groups = vec![Group::default()];
    for (_, suffix) in &starts {
        if groups.iter().any(|g| g.suffix == *suffix) {
            return Err(Error::new(format!("--group {suffix} is given twice")));
        }
        groups.push(Group {
            suffix: suffix.clone(),
            ..Group::default()
        });
    }
    let owner = |index: usize| starts.iter().filter(|(i, _)| *i < index).count();
    if let (Some(i), Some(v)) = (
        m.indices_of("resource"),
        m.get_many::<(String, i64)>("resource"),
    ) {
        for (index, (class, amount)) in i.zip(v) {
            groups[owner(index)]
                .resources
                .push(format!("{class}:{amount}"));
        }
    }
    for (index, value) in indexed("required") {
        groups[owner(index)].required.push(value);
    }
    for (index, value) in indexed("forbidden") {
        groups[owner(index)].forbidden.push(value);
    }
    for (index, value) in indexed("member_of") {
        groups[owner(index)].member_of.push(value);
    }
    if groups[0].resources.is_empty()
        && groups[0].required.is_empty()
        && groups[0].forbidden.is_empty()
        && groups[0].member_of.is_empty()
    {
        groups.remove(0);
    }
    if groups.is_empty() {
        return Err(Error::new(
            "`allocation candidate list` needs at least one --resource CLASS=AMOUNT",
        ));
    }
    for g in &groups {
        if g.resources.is_empty() {
            let name = if g.suffix.is_empty() {
                "the unnamed group (before any --group)".to_owned()
            } else {
                format!("group {}", g.suffix)
            };
            return Err(Error::new(format!(
                "{name} has no --resource CLASS=AMOUNT: each group needs one"
            )));
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked() {
        assert!(parse_limit("0").is_err());
        assert_eq!(parse_limit("5"), Ok(5));
        assert!(parse_group("1").is_ok() && parse_group("a b").is_err());
    }

    #[test]
    fn both_forms_of_allocation_requests_are_read() {
        let body: Candidates = serde_json::from_str(
            r#"{"allocation_requests": [
                 {"allocations": {"rp1": {"resources": {"VCPU": 1}}}},
                 {"allocations": [{"resource_provider": {"uuid": "rp2"}, "resources": {"DISK_GB": 5}}]}
               ],
               "provider_summaries": {"rp1": {"resources": {"VCPU": {"capacity": 8, "used": 2}}}}}"#,
        )
        .unwrap();
        assert!(matches!(
            body.allocation_requests[0].allocations,
            Some(RequestAllocations::ByProvider(_))
        ));
        assert!(matches!(
            body.allocation_requests[1].allocations,
            Some(RequestAllocations::List(_))
        ));
        assert_eq!(body.provider_summaries["rp1"].resources["VCPU"].capacity, 8);
    }
}
