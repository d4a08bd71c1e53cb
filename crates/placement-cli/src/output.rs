//! What a command prints, in osc's four forms: `table` (bordered, numbers
//! to the right), `json` (indented by two, as osc), `yaml` and `value`
//! (the values alone), restricted to the `-c` columns in the command's
//! own column order. Values that are not text are written as osc writes
//! them in tables: `None`, `True`, `{'VCPU': 2}`.

use serde_json::{Map, Value};

use crate::args::Format;
use crate::error::Error;

/// A command's result.
#[derive(Debug, PartialEq)]
pub(crate) enum Shown {
    /// One object: a column per field (osc's "show one").
    One {
        columns: Vec<String>,
        values: Vec<Value>,
    },
    /// Rows of the same columns (osc's "lister").
    List {
        columns: Vec<String>,
        rows: Vec<Vec<Value>>,
    },
}

impl Shown {
    /// One object of these columns and values.
    pub(crate) fn one(pairs: Vec<(&str, Value)>) -> Shown {
        let (columns, values) = pairs.into_iter().map(|(c, v)| (c.to_owned(), v)).unzip();
        Shown::One { columns, values }
    }

    /// Rows of these columns.
    pub(crate) fn list(columns: &[&str], rows: Vec<Vec<Value>>) -> Shown {
        Shown::List {
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            rows,
        }
    }

    /// Keeps the `wanted` columns (all when empty), in this result's order.
    fn select(self, wanted: &[String]) -> Shown {
        if wanted.is_empty() {
            return self;
        }
        let keep = |columns: &[String]| -> Vec<bool> {
            columns.iter().map(|c| wanted.contains(c)).collect()
        };
        match self {
            Shown::One { columns, values } => {
                let k = keep(&columns);
                Shown::One {
                    columns: kept(columns, &k),
                    values: kept(values, &k),
                }
            }
            Shown::List { columns, rows } => {
                let k = keep(&columns);
                Shown::List {
                    columns: kept(columns, &k),
                    rows: rows.into_iter().map(|r| kept(r, &k)).collect(),
                }
            }
        }
    }

    /// The text to print.
    pub(crate) fn render(self, format: Format, wanted: &[String]) -> Result<String, Error> {
        let shown = self.select(wanted);
        Ok(match format {
            Format::Table => table(&shown),
            Format::Json => {
                let mut text = serde_json::to_string_pretty(&shown.to_json()).unwrap_or_default();
                text.push('\n');
                text
            }
            Format::Yaml => serde_yaml_ng::to_string(&shown.to_json())
                .map_err(|e| Error::with_source("cannot write YAML", e))?,
            Format::Value => value_lines(&shown),
        })
    }

    /// An object, or an array of objects, keys in column order.
    pub(crate) fn to_json(&self) -> Value {
        let object = |columns: &[String], values: &[Value]| {
            Value::Object(
                columns
                    .iter()
                    .cloned()
                    .zip(values.iter().cloned())
                    .collect::<Map<String, Value>>(),
            )
        };
        match self {
            Shown::One { columns, values } => object(columns, values),
            Shown::List { columns, rows } => {
                Value::Array(rows.iter().map(|r| object(columns, r)).collect())
            }
        }
    }
}

/// A value as osc prints it in tables and `-f value`.
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => repr(other),
    }
}

/// Python's `repr` of the value's Python form.
fn repr(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let mut out = String::from("'");
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("\\'"),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    c => out.push(c),
                }
            }
            out.push('\'');
            out
        }
        Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(repr).collect::<Vec<_>>().join(", ")
            )
        }
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", repr(&Value::String(k.clone())), repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn value_lines(shown: &Shown) -> String {
    let mut out = String::new();
    match shown {
        Shown::One { values, .. } => {
            for v in values {
                out.push_str(&text(v));
                out.push('\n');
            }
        }
        Shown::List { rows, .. } => {
            for row in rows {
                out.push_str(&row.iter().map(text).collect::<Vec<_>>().join(" "));
                out.push('\n');
            }
        }
    }
    out
}

/// A bordered table; a list without rows prints nothing, as osc.
fn table(shown: &Shown) -> String {
    match shown {
        Shown::One { columns, values } => {
            let rows = columns
                .iter()
                .zip(values)
                .map(|(c, v)| vec![c.clone(), text(v)])
                .collect::<Vec<_>>();
            draw(
                &["Field".to_owned(), "Value".to_owned()],
                &rows,
                &[false, false],
            )
        }
        Shown::List { columns, rows } => {
            if rows.is_empty() {
                return String::new();
            }
            let right: Vec<bool> = (0..columns.len())
                .map(|i| rows[0].get(i).is_some_and(Value::is_number))
                .collect();
            let cells = rows
                .iter()
                .map(|r| r.iter().map(text).collect())
                .collect::<Vec<Vec<String>>>();
            draw(columns, &cells, &right)
        }
    }
}

fn draw(header: &[String], rows: &[Vec<String>], right: &[bool]) -> String {
    let width = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(width(cell));
        }
    }
    let rule = {
        let mut line = String::from("+");
        for w in &widths {
            line.push_str(&"-".repeat(w + 2));
            line.push('+');
        }
        line.push('\n');
        line
    };
    let line = |cells: &[String], right: &[bool], out: &mut String| {
        let height = cells
            .iter()
            .map(|c| c.lines().count().max(1))
            .max()
            .unwrap_or(1);
        for n in 0..height {
            out.push('|');
            for (i, cell) in cells.iter().enumerate() {
                let part = cell.lines().nth(n).unwrap_or("");
                let pad = widths[i] - part.chars().count();
                if right.get(i).copied().unwrap_or(false) {
                    out.push_str(&format!(" {}{part} |", " ".repeat(pad)));
                } else {
                    out.push_str(&format!(" {part}{} |", " ".repeat(pad)));
                }
            }
            out.push('\n');
        }
    };
    let mut out = rule.clone();
    line(header, &[], &mut out);
    out.push_str(&rule);
    for row in rows {
        line(row, right, &mut out);
    }
    out.push_str(&rule);
    out
}

/// The `items` whose place in `keep` is true.
fn kept<T>(items: Vec<T>, keep: &[bool]) -> Vec<T> {
    items
        .into_iter()
        .zip(keep)
        .filter_map(|(item, k)| k.then_some(item))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn list() -> Shown {
        Shown::list(
            &["uuid", "name", "generation"],
            vec![vec![json!("u1"), json!("compute1"), json!(3)]],
        )
    }

    #[test]
    fn tables_as_osc() {
        assert_eq!(
            list().render(Format::Table, &[]).unwrap(),
            "+------+----------+------------+\n\
             | uuid | name     | generation |\n\
             +------+----------+------------+\n\
             | u1   | compute1 |          3 |\n\
             +------+----------+------------+\n"
        );
        let one = Shown::one(vec![
            ("name", json!("a")),
            ("resources", json!({"VCPU": 2})),
        ]);
        assert_eq!(
            one.render(Format::Table, &[]).unwrap(),
            "+-----------+-------------+\n\
             | Field     | Value       |\n\
             +-----------+-------------+\n\
             | name      | a           |\n\
             | resources | {'VCPU': 2} |\n\
             +-----------+-------------+\n"
        );
        assert_eq!(
            Shown::list(&["a"], vec![])
                .render(Format::Table, &[])
                .unwrap(),
            ""
        );
    }

    #[test]
    fn other_forms_and_columns() {
        assert_eq!(
            list().render(Format::Json, &[]).unwrap(),
            "[\n  {\n    \"uuid\": \"u1\",\n    \"name\": \"compute1\",\n    \"generation\": 3\n  }\n]\n"
        );
        assert_eq!(
            list().render(Format::Value, &[]).unwrap(),
            "u1 compute1 3\n"
        );
        assert_eq!(
            list()
                .render(Format::Value, &["generation".into(), "uuid".into()])
                .unwrap(),
            "u1 3\n"
        );
        assert_eq!(
            list().render(Format::Yaml, &["name".into()]).unwrap(),
            "- name: compute1\n"
        );
        assert_eq!(text(&json!(null)), "None");
        assert_eq!(text(&json!([true, "it's"])), "[True, 'it\\'s']");
    }
}
