//! The `placement` command line, as clap derives it, and the API versions
//! of its commands and options. Values are checked while clap parses (a
//! UUID, an integer, a `CLASS=AMOUNT` pair), so bad input fails with exit
//! code 2 before any request.

use clap::{Args, Parser, Subcommand, ValueEnum};
use microversion::{VersionRequest, VersionSpan};
use microversion_client::cli::{CliVersions, CloudArgs};

/// The exit codes, shown at the end of every `--help`.
pub(crate) const EXIT_CODES: &str = "\
Without --os-placement-api-version, each command sends the lowest API version
that has everything it was asked for (options, columns), within the server's
range (read once and kept for five minutes in ~/.cache/microversion).

Exit codes:
  0  success
  1  the server refused the request (its error detail is printed)
  2  usage, input, version, configuration or connection error";

/// A command-line client of the Placement API: resource providers, their
/// inventories, usages, allocations, traits and aggregates, resource
/// classes and allocation candidates, with osc-placement's command and
/// option names.
#[derive(Debug, Parser)]
#[command(name = "placement", version, after_help = EXIT_CODES)]
pub(crate) struct Cli {
    /// The Placement API version to send: X.Y, latest, or 1 / None (1.0)
    /// [default: the lowest version the command needs].
    #[arg(long = "os-placement-api-version", env = "OS_PLACEMENT_API_VERSION", hide_env_values = true,
          value_name = "VERSION", value_parser = microversion_client::cli::parse_api_version)]
    pub(crate) api_version: Option<VersionRequest>,

    /// Time limit of each HTTP request, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0,
          value_parser = microversion_client::cli::parse_seconds)]
    pub(crate) timeout: f64,

    /// Ask the server for its versions, not the on-disk cache.
    #[arg(long)]
    pub(crate) no_cache: bool,

    /// Print the API version sent, and why, on standard error.
    #[arg(short = 'v', long)]
    pub(crate) verbose: bool,

    #[command(flatten)]
    pub(crate) cloud: CloudArgs,

    #[command(subcommand)]
    pub(crate) command: Top,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Top {
    /// Resource providers, resource classes and usages.
    #[command(subcommand)]
    Resource(Resource),
    /// Allocation candidates.
    #[command(subcommand)]
    Allocation(Allocation),
    /// Traits.
    #[command(subcommand)]
    Trait(Trait),
    /// The Placement API versions of the server and of this client.
    VersionList(Output),
}

#[derive(Debug, Subcommand)]
pub(crate) enum Resource {
    /// Resource providers.
    #[command(subcommand)]
    Provider(Provider),
    /// Resource classes.
    #[command(subcommand)]
    Class(Class),
    /// Usages of a project (and user).
    #[command(subcommand)]
    Usage(ResourceUsage),
}

#[derive(Debug, Subcommand)]
pub(crate) enum Provider {
    /// Create a resource provider.
    Create(ProviderCreate),
    /// List resource providers.
    List(ProviderList),
    /// Show a resource provider.
    Show(ProviderShow),
    /// Rename a resource provider (and set its parent).
    Set(ProviderSet),
    /// Delete a resource provider.
    Delete(Uuid),
    /// A provider's inventories.
    #[command(subcommand)]
    Inventory(Inventory),
    /// A provider's usages.
    #[command(subcommand)]
    Usage(ProviderUsage),
    /// A consumer's allocations.
    #[command(subcommand)]
    Allocation(ConsumerAllocation),
    /// A provider's traits.
    #[command(subcommand)]
    Trait(ProviderTrait),
    /// A provider's aggregates.
    #[command(subcommand)]
    Aggregate(Aggregate),
}

/// How a command prints: osc's `-f` and `-c`.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Output options")]
pub(crate) struct Output {
    /// Output format.
    #[arg(short = 'f', long = "format", value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
    /// A column to print (may be repeated) [default: all of the version in
    /// use]. A column that only newer versions have raises the version
    /// sent.
    #[arg(short = 'c', long = "column", value_name = "COLUMN")]
    pub(crate) columns: Vec<String>,
}

/// osc's output formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A table with borders.
    #[default]
    Table,
    /// JSON, as osc prints it.
    Json,
    /// YAML.
    Yaml,
    /// The values only, space separated.
    Value,
}

/// A resource provider UUID.
#[derive(Debug, Args)]
pub(crate) struct Uuid {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
}

#[derive(Debug, Args)]
pub(crate) struct ProviderCreate {
    /// Name of the resource provider.
    #[arg(value_name = "NAME")]
    pub(crate) name: String,
    /// UUID of the resource provider [default: chosen by the server].
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: Option<String>,
    /// UUID of the parent provider.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) parent_provider: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct ProviderList {
    /// UUID of the resource provider.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: Option<String>,
    /// Name of the resource provider.
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// CLASS=AMOUNT: providers with the capacity for it; may be repeated.
    #[arg(long, value_name = "CLASS=AMOUNT", value_parser = parse_amount)]
    pub(crate) resource: Vec<(String, i64)>,
    /// Only providers in the tree of this provider.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) in_tree: Option<String>,
    /// A trait every provider must have; may be repeated. A comma
    /// separated list (any of them) needs version 1.39.
    #[arg(long, value_name = "TRAIT")]
    pub(crate) required: Vec<String>,
    /// A trait no provider may have; may be repeated.
    #[arg(long, value_name = "TRAIT")]
    pub(crate) forbidden: Vec<String>,
    /// Comma separated aggregate UUIDs: providers in any of them; repeated
    /// (all of the lists) needs version 1.24.
    #[arg(long, value_name = "UUIDS", value_parser = parse_uuid_list)]
    pub(crate) member_of: Vec<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct ProviderShow {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// Also show the provider's allocations.
    #[arg(long)]
    pub(crate) allocations: bool,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct ProviderSet {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// The new name.
    #[arg(long, value_name = "NAME", required = true)]
    pub(crate) name: String,
    /// UUID of the parent provider (only for a provider without one).
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) parent_provider: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Inventory {
    /// List a provider's inventories, with what is used of each.
    List(WithOutput<Uuid>),
    /// Show one inventory of a provider, with what is used of it.
    Show(InventoryShow),
    /// Replace a provider's inventories (all of them unless --amend).
    Set(InventorySet),
    /// Delete one inventory of a provider, or all of them.
    Delete(InventoryDelete),
    /// One class's inventory.
    #[command(subcommand)]
    Class(InventoryClass),
}

/// A command's arguments and its output options.
#[derive(Debug, Args)]
pub(crate) struct WithOutput<T: Args> {
    #[command(flatten)]
    pub(crate) args: T,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct InventoryShow {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// The resource class (VCPU, MEMORY_MB, CUSTOM_...).
    #[arg(value_name = "CLASS", value_parser = parse_name)]
    pub(crate) resource_class: String,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct InventorySet {
    /// UUID of the resource provider (of the aggregate with --aggregate).
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// CLASS=TOTAL or CLASS:FIELD=VALUE, FIELD one of total, reserved,
    /// min_unit, max_unit, step_size (integers) or allocation_ratio (a
    /// number); may be repeated.
    #[arg(long, value_name = "CLASS[:FIELD]=VALUE", value_parser = parse_inventory_field)]
    pub(crate) resource: Vec<InventoryField>,
    /// UUID names an aggregate: set the inventories of every provider in it.
    #[arg(long)]
    pub(crate) aggregate: bool,
    /// Keep the inventories not named, changing only those given.
    #[arg(long)]
    pub(crate) amend: bool,
    /// Print what would be set, and set nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct InventoryDelete {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// The class whose inventory to delete; without it, every inventory of
    /// the provider (from version 1.5).
    #[arg(long, value_name = "CLASS", value_parser = parse_name)]
    pub(crate) resource_class: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum InventoryClass {
    /// Replace the inventory of one class of a provider.
    Set(InventoryClassSet),
}

#[derive(Debug, Args)]
pub(crate) struct InventoryClassSet {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// The resource class.
    #[arg(value_name = "CLASS", value_parser = parse_name)]
    pub(crate) resource_class: String,
    /// The amount the provider has.
    #[arg(long, value_name = "INTEGER", required = true, value_parser = parse_integer)]
    pub(crate) total: i64,
    /// The amount the provider keeps for itself.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    pub(crate) reserved: Option<i64>,
    /// The smallest amount of one allocation.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    pub(crate) min_unit: Option<i64>,
    /// The largest amount of one allocation.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    pub(crate) max_unit: Option<i64>,
    /// Allocations are multiples of this.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    pub(crate) step_size: Option<i64>,
    /// Capacity is (total - reserved) * this.
    #[arg(long, value_name = "NUMBER", value_parser = parse_ratio)]
    pub(crate) allocation_ratio: Option<f64>,
    #[command(flatten)]
    pub(crate) output: Output,
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
    pub(crate) project_id: String,
    /// ID of the user.
    #[arg(long, value_name = "USER_ID")]
    pub(crate) user_id: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
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
    pub(crate) uuid: String,
}

#[derive(Debug, Args)]
pub(crate) struct AllocationSet {
    /// UUID of the consumer.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// rp=PROVIDER_UUID,CLASS=AMOUNT[,CLASS=AMOUNT...]; may be repeated.
    #[arg(long, value_name = "rp=UUID,CLASS=AMOUNT", required = true,
          value_parser = parse_allocation)]
    pub(crate) allocation: Vec<AllocationArg>,
    /// ID of the consuming project.
    #[arg(long, value_name = "PROJECT_ID", requires = "user_id")]
    pub(crate) project_id: Option<String>,
    /// ID of the consuming user.
    #[arg(long, value_name = "USER_ID", requires = "project_id")]
    pub(crate) user_id: Option<String>,
    /// The type of the consumer (INSTANCE, MIGRATION, ...).
    #[arg(long, value_name = "TYPE")]
    pub(crate) consumer_type: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct AllocationUnset {
    /// UUID of the consumer.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// Only the allocations against this provider; may be repeated.
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) provider: Vec<String>,
    /// Only the allocations of this class; may be repeated.
    #[arg(long, value_name = "CLASS", value_parser = parse_name)]
    pub(crate) resource_class: Vec<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ProviderTrait {
    /// List a provider's traits.
    List(WithOutput<Uuid>),
    /// Replace a provider's traits.
    Set(TraitSet),
    /// Remove every trait of a provider.
    Delete(Uuid),
}

#[derive(Debug, Args)]
pub(crate) struct TraitSet {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// A trait; may be repeated (none: remove them all).
    #[arg(long = "trait", value_name = "TRAIT")]
    pub(crate) traits: Vec<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Aggregate {
    /// List a provider's aggregates.
    List(WithOutput<Uuid>),
    /// Replace a provider's aggregates.
    Set(AggregateSet),
}

#[derive(Debug, Args)]
pub(crate) struct AggregateSet {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) uuid: String,
    /// UUID of an aggregate; may be repeated (none: remove them all).
    #[arg(long, value_name = "UUID", value_parser = parse_uuid)]
    pub(crate) aggregate: Vec<String>,
    /// The provider's generation, which must match the server's.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    pub(crate) generation: Option<i64>,
    #[command(flatten)]
    pub(crate) output: Output,
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
    pub(crate) name: String,
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
    pub(crate) resource: Vec<(String, i64)>,
    /// At most this many allocation requests.
    #[arg(long, value_name = "INTEGER", value_parser = parse_limit)]
    pub(crate) limit: Option<u64>,
    /// A trait required (comma separated: any of them, from 1.39); may be
    /// repeated; after --group, of that group.
    #[arg(long, value_name = "TRAIT")]
    pub(crate) required: Vec<String>,
    /// A trait forbidden; may be repeated; after --group, of that group.
    #[arg(long, value_name = "TRAIT")]
    pub(crate) forbidden: Vec<String>,
    /// Comma separated aggregate UUIDs: any of them; may be repeated (all
    /// of the lists); after --group, of that group.
    #[arg(long, value_name = "UUIDS", value_parser = parse_uuid_list)]
    pub(crate) member_of: Vec<String>,
    /// Starts a request group with this suffix (a number, or up to 64
    /// letters, digits, _ and -); the options after it belong to it.
    #[arg(long, value_name = "SUFFIX", value_parser = parse_group)]
    pub(crate) group: Vec<String>,
    /// none or isolate: whether the groups may share a provider.
    #[arg(long, value_name = "POLICY", value_parser = ["none", "isolate"])]
    pub(crate) group_policy: Option<String>,
    /// Only candidates whose root provider has (or, with !, lacks) this
    /// trait; may be repeated.
    #[arg(long, value_name = "TRAIT")]
    pub(crate) root_required: Vec<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Trait {
    /// Create a custom trait.
    Create(TraitName),
    /// List traits.
    List(TraitList),
    /// Show whether a trait exists.
    Show(WithOutput<TraitName>),
    /// Delete a custom trait.
    Delete(TraitName),
}

/// A trait name.
#[derive(Debug, Args)]
pub(crate) struct TraitName {
    /// The trait (CUSTOM_... to create or delete).
    #[arg(value_name = "NAME", value_parser = parse_name)]
    pub(crate) name: String,
}

#[derive(Debug, Args)]
pub(crate) struct TraitList {
    /// A filter: startswith:PREFIX or in:A,B,C.
    #[arg(long, value_name = "FILTER")]
    pub(crate) name: Option<String>,
    /// Only traits some provider has.
    #[arg(long)]
    pub(crate) associated: bool,
    #[command(flatten)]
    pub(crate) output: Output,
}

/// One `--resource` of `inventory set`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InventoryField {
    pub(crate) class: String,
    pub(crate) field: &'static str,
    pub(crate) value: serde_json::Value,
}

/// One `--allocation` of `allocation set`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AllocationArg {
    pub(crate) provider: String,
    pub(crate) resources: Vec<(String, i64)>,
}

/// The versions of commands and options, shown in `--help` and checked
/// against the version in use. Options whose need depends on their value
/// (a comma in `--required`) are checked by the commands.
pub(crate) fn versions() -> CliVersions {
    const fn since(v: &'static str) -> VersionSpan {
        VersionSpan::from_static(v)
    }
    CliVersions::new()
        .option(
            "resource provider create",
            "parent_provider",
            since("1.14 - latest"),
        )
        .option(
            "resource provider set",
            "parent_provider",
            since("1.14 - latest"),
        )
        .option("resource provider list", "resource", since("1.4 - latest"))
        .option("resource provider list", "in_tree", since("1.14 - latest"))
        .option("resource provider list", "required", since("1.18 - latest"))
        .option(
            "resource provider list",
            "forbidden",
            since("1.22 - latest"),
        )
        .option("resource provider list", "member_of", since("1.3 - latest"))
        .option(
            "resource provider inventory set",
            "aggregate",
            since("1.3 - latest"),
        )
        .command("resource provider allocation unset", since("1.12 - latest"))
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
        .command("resource provider trait", since("1.6 - latest"))
        .command("resource provider aggregate", since("1.1 - latest"))
        .option(
            "resource provider aggregate set",
            "generation",
            since("1.19 - latest"),
        )
        .command("resource class", since("1.2 - latest"))
        .command("resource class set", since("1.7 - latest"))
        .command("resource usage", since("1.9 - latest"))
        .command("allocation candidate list", since("1.10 - latest"))
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
        .command("trait", since("1.6 - latest"))
        .option("trait list", "associated", since("1.6 - latest"))
}

const UUID_FORM: &str = "expected a UUID such as 4e8e5957-649f-477b-9e5b-f1f75b21c03c";

/// A UUID, in any of the forms Placement accepts, as its hyphenated
/// lower-case form.
pub(crate) fn parse_uuid(text: &str) -> Result<String, String> {
    uuid::Uuid::try_parse(text.trim())
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| format!("invalid UUID {text:?}: {UUID_FORM}"))
}

/// Comma separated UUIDs.
fn parse_uuid_list(text: &str) -> Result<String, String> {
    let uuids = text
        .split(',')
        .map(parse_uuid)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(uuids.join(","))
}

/// A non-negative integer that fits Placement's columns.
fn parse_integer(text: &str) -> Result<i64, String> {
    match text.trim().parse::<i64>() {
        Ok(n) if (0..=i64::from(i32::MAX)).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid integer {text:?}: expected a whole number from 0 to {}",
            i32::MAX
        )),
    }
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

/// A finite positive number.
fn parse_ratio(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!(
            "invalid ratio {text:?}: expected a number above 0, such as 16.0"
        )),
    }
}

/// A resource class name: upper-case letters, digits and `_`.
fn check_class(class: &str, whole: &str) -> Result<(), String> {
    let ok = !class.is_empty()
        && class.len() <= 255
        && class
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid resource class {class:?} in {whole:?}: expected upper-case letters, digits \
             and _, such as VCPU or CUSTOM_GPU"
        ))
    }
}

/// A resource class or trait name, as a path segment.
fn parse_name(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 255
        && text
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "invalid name {text:?}: expected upper-case letters, digits and _, such as VCPU, \
             CUSTOM_GPU or HW_CPU_X86_AVX2"
        ))
    }
}

/// `CLASS=AMOUNT`.
fn parse_amount(text: &str) -> Result<(String, i64), String> {
    let Some((class, amount)) = text.split_once('=') else {
        return Err(format!(
            "invalid {text:?}: expected CLASS=AMOUNT, such as VCPU=2"
        ));
    };
    let class = class.trim();
    check_class(class, text)?;
    let amount = parse_integer(amount).map_err(|e| format!("in {text:?}: {e}"))?;
    Ok((class.to_owned(), amount))
}

/// The inventory fields and whether each is an integer.
pub(crate) const INVENTORY_FIELDS: [(&str, bool); 6] = [
    ("allocation_ratio", false),
    ("min_unit", true),
    ("max_unit", true),
    ("reserved", true),
    ("step_size", true),
    ("total", true),
];

/// `CLASS=TOTAL` or `CLASS:FIELD=VALUE`.
fn parse_inventory_field(text: &str) -> Result<InventoryField, String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "invalid {text:?}: expected CLASS=TOTAL or CLASS:FIELD=VALUE, such as VCPU=8 or \
             MEMORY_MB:reserved=512"
        ));
    };
    let (class, field) = name.split_once(':').unwrap_or((name, "total"));
    check_class(class, text)?;
    let Some(&(field, integer)) = INVENTORY_FIELDS.iter().find(|(f, _)| *f == field) else {
        return Err(format!(
            "invalid inventory field {field:?} in {text:?}: expected total, reserved, min_unit, \
             max_unit, step_size or allocation_ratio"
        ));
    };
    let value = if integer {
        serde_json::Value::from(parse_integer(value).map_err(|e| format!("in {text:?}: {e}"))?)
    } else {
        serde_json::Value::from(parse_ratio(value).map_err(|e| format!("in {text:?}: {e}"))?)
    };
    Ok(InventoryField {
        class: class.to_owned(),
        field,
        value,
    })
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
        versions().apply(Cli::command()).unwrap();
    }

    #[test]
    fn values_are_checked() {
        assert_eq!(
            parse_uuid("4E8E5957649F477B9E5BF1F75B21C03C").unwrap(),
            "4e8e5957-649f-477b-9e5b-f1f75b21c03c"
        );
        assert_eq!(
            parse_uuid("nope").unwrap_err(),
            format!("invalid UUID \"nope\": {UUID_FORM}")
        );
        assert_eq!(parse_amount("VCPU=2"), Ok(("VCPU".to_owned(), 2)));
        assert!(parse_amount("VCPU=2.5").is_err());
        assert!(parse_amount("vcpu=2").is_err());
        assert!(parse_amount("VCPU").is_err());
        let f = parse_inventory_field("MEMORY_MB:allocation_ratio=1.5").unwrap();
        assert_eq!(
            (f.field, f.value),
            ("allocation_ratio", serde_json::json!(1.5))
        );
        let f = parse_inventory_field("VCPU=8").unwrap();
        assert_eq!((f.field, f.value), ("total", serde_json::json!(8)));
        assert!(parse_inventory_field("VCPU=x").is_err());
        assert!(parse_inventory_field("VCPU:size=1").is_err());
        let a = parse_allocation("rp=4e8e5957-649f-477b-9e5b-f1f75b21c03c,VCPU=2").unwrap();
        assert_eq!(a.resources, [("VCPU".to_owned(), 2)]);
        assert!(parse_allocation("VCPU=2").is_err());
        assert!(parse_allocation("rp=x,VCPU=2").is_err());
        assert!(parse_limit("0").is_err());
        assert!(parse_integer("-1").is_err());
        assert!(parse_group("1").is_ok() && parse_group("a b").is_err());
    }
}
