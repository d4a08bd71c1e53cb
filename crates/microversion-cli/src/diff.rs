//! `microversion diff`: what differs between two OpenAPI documents of an
//! API, as `microversion-contract` compares them.

use std::time::Duration;

use microversion_contract::{Delta, Kind};
use serde_json::{Value, json};

use crate::args::{DiffArgs, ListFormat};
use crate::error::Error;

/// The report, and whether the documents differ.
pub(crate) async fn run(args: &DiffArgs, timeout: Duration) -> Result<(String, bool), Error> {
    let (old_source, new_source) = match &args.url {
        Some(url) => (document_url(url, &args.old)?, document_url(url, &args.new)?),
        None => (args.old.clone(), args.new.clone()),
    };
    let old = document(&old_source, timeout).await?;
    let new = document(&new_source, timeout).await?;
    let deltas = microversion_contract::compare(&old, &new);
    let differ = !deltas.is_empty();
    let text = match args.format {
        ListFormat::Table => table(&deltas, &args.old, &args.new),
        ListFormat::Json => {
            let mut text = serde_json::to_string_pretty(&to_json(&deltas)).unwrap_or_default();
            text.push('\n');
            text
        }
    };
    Ok((text, differ))
}

/// The URL of `version`'s document on the server at `base`.
fn document_url(base: &str, version: &str) -> Result<String, Error> {
    let mut url = crate::net::parse_url(base)?;
    if version.parse::<microversion::Version>().is_err() && version != "latest" {
        return Err(Error::new(format!(
            "with --url, OLD and NEW are versions (X.Y or latest), not {version:?}"
        )));
    }
    let path = format!("{}/openapi.json", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(Some(&format!("version={version}")));
    Ok(url.to_string())
}

/// A document read from `source` and parsed, or why not.
async fn document(source: &str, timeout: Duration) -> Result<Value, Error> {
    let text = crate::net::read_source(source, timeout).await?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Error::new(format!("{source} is not a JSON document: {e}")))?;
    if value.get("openapi").is_none() || value.get("paths").is_none() {
        return Err(Error::new(format!(
            "{source} is not an OpenAPI document: it has no \"openapi\" and \"paths\""
        )));
    }
    Ok(value)
}

/// One line per difference (`+` added, `-` removed, `~` changed), then
/// a count.
fn table(deltas: &[Delta], old: &str, new: &str) -> String {
    let mut out = String::new();
    for delta in deltas {
        let sign = match delta.kind {
            Kind::Added => '+',
            Kind::Removed => '-',
            _ => '~',
        };
        let breaking = if delta.breaking {
            "  [breaks clients of OLD]"
        } else {
            ""
        };
        out.push_str(&format!("{sign} {delta}{breaking}\n"));
    }
    let breaking = deltas.iter().filter(|d| d.breaking).count();
    out.push_str(&match deltas.len() {
        0 => format!("{old} and {new} describe the same API\n"),
        n => format!(
            "{n} difference{} from {old} to {new}; {breaking} break{} clients of {old}\n",
            if n == 1 { "" } else { "s" },
            if breaking == 1 { "s" } else { "" }
        ),
    });
    out
}

fn to_json(deltas: &[Delta]) -> Value {
    Value::Array(
        deltas
            .iter()
            .map(|d| {
                let mut entry = json!({
                    "operation": d.operation,
                    "part": d.part,
                    "breaking": d.breaking,
                    "text": d.to_string(),
                });
                match &d.kind {
                    Kind::Added => entry["change"] = json!("added"),
                    Kind::Removed => entry["change"] = json!("removed"),
                    Kind::Changed { keyword, old, new } => {
                        entry["change"] = json!("changed");
                        entry["keyword"] = json!(keyword);
                        entry["old"] = old.clone().unwrap_or(Value::Null);
                        entry["new"] = new.clone().unwrap_or(Value::Null);
                    }
                    _ => entry["change"] = json!("other"),
                }
                entry
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_urls_name_the_version() {
        assert_eq!(
            document_url("http://127.0.0.1:8778/placement/", "1.20").unwrap(),
            "http://127.0.0.1:8778/placement/openapi.json?version=1.20"
        );
        assert_eq!(
            document_url("http://127.0.0.1:8778", "latest").unwrap(),
            "http://127.0.0.1:8778/openapi.json?version=latest"
        );
        assert_eq!(
            document_url("http://127.0.0.1:8778", "old.json")
                .unwrap_err()
                .to_string(),
            "with --url, OLD and NEW are versions (X.Y or latest), not \"old.json\""
        );
    }
}
