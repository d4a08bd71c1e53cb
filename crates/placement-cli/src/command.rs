//! What every command is: a [`Plan`] made before anything is sent (its
//! name, columns, output options and the versions its values need), and
//! a run against the server. Each resource's module implements
//! [`Command`] for its subcommands; the command line's enums only pass
//! the call on.

use clap::ArgMatches;
use microversion::VersionSpan;
use serde::Serialize;
use serde_json::Value;

use crate::Failure;
use crate::api::Api;
use crate::args::Output;
use crate::error::Error;
use crate::output::Shown;

/// A command's columns, in osc-placement's order, with the versions that
/// have each.
pub(crate) type Columns = &'static [(&'static str, VersionSpan)];

/// Every version.
pub(crate) const ALL: VersionSpan = VersionSpan::ALL;

/// What a command needs before it runs.
#[derive(Debug)]
pub(crate) struct Plan<'a> {
    /// The command, as in messages.
    pub(crate) path: &'static str,
    /// Every column it can print, with the versions that have it.
    pub(crate) columns: Columns,
    /// Needs that depend on values, beyond the options' own spans.
    pub(crate) needs: Vec<(String, VersionSpan)>,
    /// How it prints; `None` for commands that print nothing.
    pub(crate) output: Option<&'a Output>,
    /// Whether it reads the server's versions afresh, never from the
    /// on-disk cache.
    pub(crate) fresh_versions: bool,
}

impl<'a> Plan<'a> {
    /// A command that prints `columns` as `output` says.
    pub(crate) fn printing(path: &'static str, columns: Columns, output: &'a Output) -> Self {
        Plan {
            path,
            columns,
            needs: Vec::new(),
            output: Some(output),
            fresh_versions: false,
        }
    }

    /// A command that prints nothing.
    pub(crate) fn quiet(path: &'static str) -> Self {
        Plan {
            path,
            columns: &[],
            needs: Vec::new(),
            output: None,
            fresh_versions: false,
        }
    }

    /// Adds a need: `feature` exists at `span` only.
    pub(crate) fn need(&mut self, feature: impl Into<String>, span: &'static str) {
        self.needs
            .push((feature.into(), VersionSpan::from_static(span)));
    }
}

/// A command of the command line.
pub(crate) trait Command {
    /// What it needs before anything is sent; `matches` is the whole
    /// command line's (for the order of options).
    fn plan(&self, matches: &ArgMatches) -> Result<Plan<'_>, Error>;

    /// Runs it; `None` for commands that print nothing.
    async fn run(&self, api: &Api, matches: &ArgMatches) -> Result<Option<Shown>, Failure>;
}

/// The columns of `catalog` the version in use has.
pub(crate) fn columns_at(api: &Api, catalog: Columns) -> Vec<&'static str> {
    catalog
        .iter()
        .filter(|(_, span)| span.contains(api.version))
        .map(|(name, _)| *name)
        .collect()
}

/// The `columns` of `item`, from its JSON form: a field it lacks is an
/// empty string, as osc prints a missing field.
pub(crate) fn cells<T: Serialize>(item: &T, columns: &[&str]) -> Vec<Value> {
    let value = serde_json::to_value(item).unwrap_or(Value::Null);
    columns
        .iter()
        .map(|c| {
            value
                .get(c)
                .cloned()
                .unwrap_or_else(|| Value::String(String::new()))
        })
        .collect()
}

/// One column of text values.
pub(crate) fn names(items: Vec<String>) -> Vec<Vec<Value>> {
    items.into_iter().map(|t| vec![Value::String(t)]).collect()
}

/// A query parameter.
pub(crate) fn q(key: &str, value: impl Into<String>) -> (String, String) {
    (key.to_owned(), value.into())
}

/// `required` values from required and forbidden traits, as osc-placement
/// builds them: one `in:` value per comma list, one for the rest.
pub(crate) fn required_params(required: &[String], forbidden: &[String]) -> Vec<String> {
    let mut params = Vec::new();
    let mut all = Vec::new();
    for r in required {
        if r.contains(',') {
            params.push(format!("in:{r}"));
        } else {
            all.push(r.clone());
        }
    }
    all.extend(forbidden.iter().map(|f| format!("!{f}")));
    if !all.is_empty() {
        params.push(all.join(","));
    }
    params
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn required_as_osc_placement_builds_it() {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            required_params(&s(&["A", "B,C", "D"]), &s(&["E"])),
            ["in:B,C", "A,D,!E"]
        );
        assert!(required_params(&[], &[]).is_empty());
        assert_eq!(required_params(&[], &s(&["E"])), ["!E"]);
    }

    #[test]
    fn missing_fields_are_empty_cells() {
        #[derive(Serialize)]
        struct Item {
            name: &'static str,
            parent: Option<&'static str>,
        }
        let item = Item {
            name: "a",
            parent: None,
        };
        assert_eq!(
            cells(&item, &["name", "parent", "nope"]),
            [json!("a"), json!(null), json!("")]
        );
    }
}
