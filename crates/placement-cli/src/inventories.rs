//! `resource provider inventory list/show/set/delete` and `inventory
//! class set`: a provider's inventories, with what is used of each.

use clap::{ArgMatches, Args, Subcommand};
use indexmap::IndexMap;
use microversion::VersionSpan;
use microversion_client::cli::CliVersions;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::Failure;
use crate::api::Api;
use crate::args::{Output, Uuid, WithOutput, parse_integer, parse_name, parse_ratio, parse_uuid};
use crate::command::{ALL, Columns, Command, Plan, q};
use crate::error::Error;
use crate::output::Shown;
use crate::providers::{self, ResourceProvider, ResourceProviders};
use crate::usages::Usages;

/// `inventory list`'s columns.
const INVENTORY_LIST: Columns = &[
    ("resource_class", ALL),
    ("allocation_ratio", ALL),
    ("min_unit", ALL),
    ("max_unit", ALL),
    ("reserved", ALL),
    ("step_size", ALL),
    ("total", ALL),
    ("used", ALL),
];
/// `inventory set`'s, the provider's only with `--aggregate`.
const INVENTORY_SET: Columns = &[
    ("resource_provider", ALL),
    ("resource_class", ALL),
    ("allocation_ratio", ALL),
    ("min_unit", ALL),
    ("max_unit", ALL),
    ("reserved", ALL),
    ("step_size", ALL),
    ("total", ALL),
];

/// One class's inventory, whole as the server sends it or the fields a
/// request sets; fields in osc-placement's column order.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub(crate) struct InventoryFields {
    /// A number as the server wrote it (`16.0`), or as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    allocation_ratio: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_unit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_unit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reserved: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    step_size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    total: Option<i64>,
}

impl InventoryFields {
    /// The field names, in column order.
    const NAMES: [&'static str; 6] = [
        "allocation_ratio",
        "min_unit",
        "max_unit",
        "reserved",
        "step_size",
        "total",
    ];

    /// The fields in column order; one the inventory lacks is an empty
    /// string, as osc prints it.
    fn cells(&self) -> Vec<Value> {
        let int = |v: Option<i64>| v.map_or_else(|| Value::String(String::new()), Value::from);
        vec![
            self.allocation_ratio
                .clone()
                .map_or_else(|| Value::String(String::new()), Value::Number),
            int(self.min_unit),
            int(self.max_unit),
            int(self.reserved),
            int(self.step_size),
            int(self.total),
        ]
    }

    /// Sets one field.
    fn set(&mut self, field: InventoryField) {
        match field {
            InventoryField::AllocationRatio(r) => self.allocation_ratio = Number::from_f64(r),
            InventoryField::MinUnit(n) => self.min_unit = Some(n),
            InventoryField::MaxUnit(n) => self.max_unit = Some(n),
            InventoryField::Reserved(n) => self.reserved = Some(n),
            InventoryField::StepSize(n) => self.step_size = Some(n),
            InventoryField::Total(n) => self.total = Some(n),
        }
    }
}

/// A provider's inventories: `GET` and `PUT
/// /resource_providers/{uuid}/inventories`.
#[derive(Debug, Deserialize, Serialize)]
struct Inventories {
    inventories: IndexMap<String, InventoryFields>,
    resource_provider_generation: i64,
}

/// `PUT /resource_providers/{uuid}/inventories/{class}`.
#[derive(Debug, Serialize)]
struct InventoryUpdate {
    resource_provider_generation: i64,
    total: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reserved: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_unit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_unit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    step_size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    allocation_ratio: Option<f64>,
}

/// One `--resource` of `inventory set`: `CLASS=TOTAL` or
/// `CLASS:FIELD=VALUE`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ResourceField {
    class: String,
    field: InventoryField,
}

/// An inventory field and its value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum InventoryField {
    AllocationRatio(f64),
    MinUnit(i64),
    MaxUnit(i64),
    Reserved(i64),
    StepSize(i64),
    Total(i64),
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

#[derive(Debug, Args)]
pub(crate) struct InventoryShow {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// The resource class (VCPU, MEMORY_MB, CUSTOM_...).
    #[arg(value_name = "CLASS", value_parser = parse_name)]
    resource_class: String,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct InventorySet {
    /// UUID of the resource provider (of the aggregate with --aggregate).
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// CLASS=TOTAL or CLASS:FIELD=VALUE, FIELD one of total, reserved,
    /// min_unit, max_unit, step_size (integers) or allocation_ratio (a
    /// number); may be repeated.
    #[arg(long, value_name = "CLASS[:FIELD]=VALUE", value_parser = parse_resource_field)]
    resource: Vec<ResourceField>,
    /// UUID names an aggregate: set the inventories of every provider in it.
    #[arg(long)]
    aggregate: bool,
    /// Keep the inventories not named, changing only those given.
    #[arg(long)]
    amend: bool,
    /// Print what would be set, and set nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    output: Output,
}

#[derive(Debug, Args)]
pub(crate) struct InventoryDelete {
    /// UUID of the resource provider.
    #[arg(value_name = "UUID", value_parser = parse_uuid)]
    uuid: String,
    /// The class whose inventory to delete; without it, every inventory of
    /// the provider (from version 1.5).
    #[arg(long, value_name = "CLASS", value_parser = parse_name)]
    resource_class: Option<String>,
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
    uuid: String,
    /// The resource class.
    #[arg(value_name = "CLASS", value_parser = parse_name)]
    resource_class: String,
    /// The amount the provider has.
    #[arg(long, value_name = "INTEGER", required = true, value_parser = parse_integer)]
    total: i64,
    /// The amount the provider keeps for itself.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    reserved: Option<i64>,
    /// The smallest amount of one allocation.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    min_unit: Option<i64>,
    /// The largest amount of one allocation.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    max_unit: Option<i64>,
    /// Allocations are multiples of this.
    #[arg(long, value_name = "INTEGER", value_parser = parse_integer)]
    step_size: Option<i64>,
    /// Capacity is (total - reserved) * this.
    #[arg(long, value_name = "NUMBER", value_parser = parse_ratio)]
    allocation_ratio: Option<f64>,
    #[command(flatten)]
    output: Output,
}

/// The versions of these commands' options.
pub(crate) fn versions(v: CliVersions) -> CliVersions {
    v.option(
        "resource provider inventory set",
        "aggregate",
        VersionSpan::from_static("1.3 - latest"),
    )
}

/// `CLASS=TOTAL` or `CLASS:FIELD=VALUE`.
fn parse_resource_field(text: &str) -> Result<ResourceField, String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "invalid {text:?}: expected CLASS=TOTAL or CLASS:FIELD=VALUE, such as VCPU=8 or \
             MEMORY_MB:reserved=512"
        ));
    };
    let (class, field) = name.split_once(':').unwrap_or((name, "total"));
    crate::args::check_class(class, text)?;
    if !InventoryFields::NAMES.contains(&field) {
        return Err(format!(
            "invalid inventory field {field:?} in {text:?}: expected total, reserved, min_unit, \
             max_unit, step_size or allocation_ratio"
        ));
    }
    let int = || parse_integer(value).map_err(|e| format!("in {text:?}: {e}"));
    let field = match field {
        "allocation_ratio" => InventoryField::AllocationRatio(
            parse_ratio(value).map_err(|e| format!("in {text:?}: {e}"))?,
        ),
        "min_unit" => InventoryField::MinUnit(int()?),
        "max_unit" => InventoryField::MaxUnit(int()?),
        "reserved" => InventoryField::Reserved(int()?),
        "step_size" => InventoryField::StepSize(int()?),
        _ => InventoryField::Total(int()?),
    };
    Ok(ResourceField {
        class: class.to_owned(),
        field,
    })
}

impl Command for Inventory {
    fn plan(&self, _: &ArgMatches) -> Result<Plan<'_>, Error> {
        Ok(match self {
            Inventory::List(a) => Plan::printing(
                "resource provider inventory list",
                INVENTORY_LIST,
                &a.output,
            ),
            Inventory::Show(a) => Plan::printing(
                "resource provider inventory show",
                &INVENTORY_LIST[1..],
                &a.output,
            ),
            Inventory::Set(a) => {
                Plan::printing("resource provider inventory set", INVENTORY_SET, &a.output)
            }
            Inventory::Delete(a) => {
                let mut plan = Plan::quiet("resource provider inventory delete");
                if a.resource_class.is_none() {
                    plan.need(
                        "`resource provider inventory delete` without --resource-class \
                         (all inventories)",
                        "1.5 - latest",
                    );
                }
                plan
            }
            Inventory::Class(InventoryClass::Set(a)) => Plan::printing(
                "resource provider inventory class set",
                &INVENTORY_SET[2..],
                &a.output,
            ),
        })
    }

    async fn run(&self, api: &Api, _: &ArgMatches) -> Result<Option<Shown>, Failure> {
        match self {
            Inventory::List(a) => {
                let path = format!("resource_providers/{}", a.args.uuid);
                let body: Inventories = api.get(&format!("{path}/inventories"), &[]).await?;
                let used: Usages = api.get(&format!("{path}/usages"), &[]).await?;
                let rows = body
                    .inventories
                    .iter()
                    .map(|(class, inventory)| {
                        let mut row = vec![Value::from(class.as_str())];
                        row.extend(inventory.cells());
                        row.push(used.of(class));
                        row
                    })
                    .collect();
                let columns: Vec<&str> = INVENTORY_LIST.iter().map(|(c, _)| *c).collect();
                Ok(Some(Shown::list(&columns, rows)))
            }
            Inventory::Show(a) => {
                let path = format!("resource_providers/{}", a.uuid);
                let inventory: InventoryFields = api
                    .get(&format!("{path}/inventories/{}", a.resource_class), &[])
                    .await?;
                let used: Usages = api.get(&format!("{path}/usages"), &[]).await?;
                let mut pairs: Vec<(&str, Value)> = InventoryFields::NAMES
                    .into_iter()
                    .zip(inventory.cells())
                    .collect();
                pairs.push(("used", used.of(&a.resource_class)));
                Ok(Some(Shown::one(pairs)))
            }
            Inventory::Set(a) => set(api, a).await.map(Some),
            Inventory::Delete(a) => {
                let mut path = format!("resource_providers/{}/inventories", a.uuid);
                if let Some(class) = &a.resource_class {
                    path = format!("{path}/{class}");
                }
                api.delete(&path).await?;
                Ok(None)
            }
            Inventory::Class(InventoryClass::Set(a)) => {
                let path = format!("resource_providers/{}", a.uuid);
                let provider = providers::get(api, &a.uuid).await?;
                let body = InventoryUpdate {
                    resource_provider_generation: provider.generation,
                    total: a.total,
                    reserved: a.reserved,
                    min_unit: a.min_unit,
                    max_unit: a.max_unit,
                    step_size: a.step_size,
                    allocation_ratio: a.allocation_ratio,
                };
                let inventory: InventoryFields = api
                    .put(&format!("{path}/inventories/{}", a.resource_class), &body)
                    .await?;
                Ok(Some(Shown::one(
                    InventoryFields::NAMES
                        .into_iter()
                        .zip(inventory.cells())
                        .collect(),
                )))
            }
        }
    }
}

/// `inventory set`: each provider's inventories replaced (or amended),
/// and the result as rows.
async fn set(api: &Api, a: &InventorySet) -> Result<Shown, Failure> {
    let providers = if a.aggregate {
        let query = [q("member_of", a.uuid.clone())];
        let body: ResourceProviders = api.get("resource_providers", &query).await?;
        if body.resource_providers.is_empty() {
            return Err(Error::new(format!(
                "no resource provider is in the aggregate {}",
                a.uuid
            ))
            .into());
        }
        body.resource_providers
    } else {
        vec![providers::get(api, &a.uuid).await?]
    };
    let mut rows = Vec::new();
    for ResourceProvider {
        uuid, generation, ..
    } in providers
    {
        let path = format!("resource_providers/{uuid}/inventories");
        let mut payload = if a.amend {
            api.get(&path, &[]).await?
        } else {
            Inventories {
                inventories: IndexMap::new(),
                resource_provider_generation: generation,
            }
        };
        for r in &a.resource {
            payload
                .inventories
                .entry(r.class.clone())
                .or_default()
                .set(r.field);
        }
        let result = if a.dry_run {
            payload
        } else {
            api.put(&path, &payload).await?
        };
        for (class, inventory) in &result.inventories {
            let mut row = Vec::with_capacity(8);
            if a.aggregate {
                row.push(Value::from(uuid.as_str()));
            }
            row.push(Value::from(class.as_str()));
            row.extend(inventory.cells());
            rows.push(row);
        }
    }
    let columns: Vec<&str> = INVENTORY_SET
        .iter()
        .map(|(c, _)| *c)
        .skip(usize::from(!a.aggregate))
        .collect();
    Ok(Shown::list(&columns, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_fields_are_checked() {
        let f = parse_resource_field("MEMORY_MB:allocation_ratio=1.5").unwrap();
        assert_eq!(f.field, InventoryField::AllocationRatio(1.5));
        let f = parse_resource_field("VCPU=8").unwrap();
        assert_eq!(
            (f.class.as_str(), f.field),
            ("VCPU", InventoryField::Total(8))
        );
        assert!(parse_resource_field("VCPU=x").is_err());
        assert!(parse_resource_field("VCPU:size=1").is_err());
        assert!(parse_resource_field("vcpu=1").is_err());
    }

    #[test]
    fn missing_fields_print_empty() {
        let mut fields = InventoryFields::default();
        fields.set(InventoryField::Total(8));
        fields.set(InventoryField::AllocationRatio(2.0));
        let cells = fields.cells();
        assert_eq!(cells[0].to_string(), "2.0");
        assert_eq!(cells[1], Value::from(""));
        assert_eq!(cells[5], Value::from(8));
        assert_eq!(
            serde_json::to_string(&fields).unwrap(),
            r#"{"allocation_ratio":2.0,"total":8}"#
        );
    }
}
