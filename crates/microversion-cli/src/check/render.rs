//! A [`Report`] as a table, as JSON, and as JUnit XML.

use serde_json::{Value, json};

use super::{Report, Row, Status};
use crate::table::Table;

impl Report {
    /// What the report is about, in one line.
    fn heading(&self) -> String {
        let path = if self.target == self.endpoint {
            String::new()
        } else {
            format!(", versioned path {}", self.target)
        };
        format!(
            "{} at {}{path}, judged against {}",
            self.service_type, self.endpoint, self.judge
        )
    }

    fn summary(&self) -> String {
        format!(
            "{} passed, {} failed, {} warning{}, {} skipped",
            self.count(Status::Pass),
            self.count(Status::Fail),
            self.count(Status::Warn),
            if self.count(Status::Warn) == 1 {
                ""
            } else {
                "s"
            },
            self.count(Status::Skip)
        )
    }

    /// `1.0 - 1.39, from the versions document`.
    fn range_text(&self) -> String {
        match (self.range, &self.range_source) {
            (Some(range), Some(source)) => format!("{range}, from {source}"),
            (Some(range), None) => range.to_string(),
            (None, _) => "unknown".to_owned(),
        }
    }

    /// The report as aligned columns, for people.
    #[must_use]
    pub fn to_table(&self) -> String {
        let mut out = format!(
            "Checking {}\nRange: {}\n\n",
            self.heading(),
            self.range_text()
        );
        let mut table = Table::new(&["STATUS", "RULE", "CHECK", "SEEN"]);
        for row in &self.rows {
            table.row(vec![
                row.status.to_string(),
                row.rule.to_string(),
                row.title.clone(),
                seen_with_expected(row),
            ]);
        }
        out.push_str(&table.render());
        if !self.notes.is_empty() {
            out.push_str("\nNotes:\n");
            for note in &self.notes {
                out.push_str(&format!("- {note}\n"));
            }
        }
        out.push('\n');
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// The report as one JSON document, for programs.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let checks: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                json!({
                    "rule": r.rule,
                    "id": r.id,
                    "title": r.title,
                    "status": r.status.as_str(),
                    "seen": r.seen,
                    "expected": r.expected,
                })
            })
            .collect();
        json!({
            "endpoint": self.endpoint,
            "path": self.target,
            "service_type": self.service_type,
            "judge": self.judge,
            "range": self.range.map(|r| json!({
                "min_version": r.min().to_string(),
                "max_version": r.max().to_string(),
                "source": self.range_source,
            })),
            "summary": {
                "pass": self.count(Status::Pass),
                "fail": self.count(Status::Fail),
                "warn": self.count(Status::Warn),
                "skip": self.count(Status::Skip),
            },
            "notes": self.notes,
            "checks": checks,
        })
    }

    /// The report as JUnit XML, for CI systems: one test case per row; a
    /// FAIL is a `<failure>`, a SKIP `<skipped>`, a WARN passes with its
    /// text in `<system-out>`.
    #[must_use]
    pub fn to_junit(&self) -> String {
        let tests = self.rows.len();
        let failures = self.count(Status::Fail);
        let skipped = self.count(Status::Skip);
        let counts =
            format!("tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\"");
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        xml.push_str(&format!(
            "<testsuites name=\"microversion check\" {counts}>\n"
        ));
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" {counts}>\n",
            escape(&format!("{} at {}", self.service_type, self.endpoint))
        ));
        xml.push_str("    <properties>\n");
        let mut properties = vec![
            ("endpoint", self.endpoint.clone()),
            ("path", self.target.clone()),
            ("judge", self.judge.clone()),
            ("range", self.range_text()),
        ];
        properties.extend(self.notes.iter().map(|n| ("note", n.clone())));
        for (name, value) in properties {
            xml.push_str(&format!(
                "      <property name=\"{name}\" value=\"{}\"/>\n",
                escape(&value)
            ));
        }
        xml.push_str("    </properties>\n");
        for row in &self.rows {
            let open = format!(
                "    <testcase classname=\"wire.md.rule-{:02}\" name=\"{}\"",
                row.rule,
                escape(&format!("{} [{}]", row.title, row.id))
            );
            match row.status {
                Status::Pass => xml.push_str(&format!("{open}/>\n")),
                Status::Fail => xml.push_str(&format!(
                    "{open}>\n      <failure type=\"FAIL\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    escape(&row.seen),
                    escape(&format!("seen: {}\nexpected: {}", row.seen, row.expected))
                )),
                Status::Skip => xml.push_str(&format!(
                    "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    escape(&row.seen)
                )),
                Status::Warn => xml.push_str(&format!(
                    "{open}>\n      <system-out>{}</system-out>\n    </testcase>\n",
                    escape(&format!("WARN: {}", seen_with_expected(row)))
                )),
            }
        }
        xml.push_str("  </testsuite>\n</testsuites>\n");
        xml
    }
}

/// The SEEN cell: for FAIL and WARN, what was expected follows.
fn seen_with_expected(row: &Row) -> String {
    match row.status {
        Status::Fail | Status::Warn if !row.expected.is_empty() => {
            format!("{}; expected {}", row.seen, row.expected)
        }
        _ => row.seen.clone(),
    }
}

/// Text for XML attributes and content: the five special characters
/// escaped, characters XML 1.0 cannot hold replaced by U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if u32::from(c) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                out.push('\u{FFFD}');
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use microversion::VersionRange;

    use super::*;

    fn report() -> Report {
        let row = |rule, id: &str, status, seen: &str, expected: &str| Row {
            rule,
            id: id.to_owned(),
            title: format!("check <{id}>"),
            status,
            seen: seen.to_owned(),
            expected: expected.to_owned(),
        };
        Report {
            endpoint: "http://h/".to_owned(),
            target: "http://h/widgets".to_owned(),
            service_type: "placement".to_owned(),
            judge: "the placement profile".to_owned(),
            range: Some(VersionRange::from_static("1.0", "1.39")),
            range_source: Some("the versions document".to_owned()),
            notes: vec!["a & b".to_owned()],
            rows: vec![
                row(
                    3,
                    "default",
                    Status::Pass,
                    "200 OK, served 1.0",
                    "version 1.0",
                ),
                row(
                    9,
                    "vary-default",
                    Status::Fail,
                    "no Vary header",
                    "Vary \"x\"",
                ),
                row(
                    12,
                    "versions-document-fields",
                    Status::Warn,
                    "max_version only",
                    "both",
                ),
                row(7, "legacy", Status::Skip, "needs two versions\u{1}", ""),
            ],
        }
    }

    #[test]
    fn table() {
        let text = report().to_table();
        assert!(
            text.starts_with(
                "Checking placement at http://h/, versioned path http://h/widgets, judged against \
                 the placement profile\nRange: 1.0 - 1.39, from the versions document\n\n\
                 STATUS  RULE  CHECK"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "FAIL    9     check <vary-default>              no Vary header; expected Vary \"x\"\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("PASS    3     check <default>                   200 OK, served 1.0\n"),
            "{text}"
        );
        assert!(text.contains("\nNotes:\n- a & b\n"), "{text}");
        assert!(
            text.ends_with("1 passed, 1 failed, 1 warning, 1 skipped\n"),
            "{text}"
        );
    }

    #[test]
    fn json() {
        let v = report().to_json();
        assert_eq!(v["summary"]["fail"], 1);
        assert_eq!(v["range"]["max_version"], "1.39");
        assert_eq!(v["checks"][1]["status"], "FAIL");
        assert_eq!(v["checks"][1]["rule"], 9);
        assert_eq!(v["notes"][0], "a & b");
    }

    #[test]
    fn junit_is_escaped() {
        let xml = report().to_junit();
        assert!(
            xml.contains("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains("name=\"check &lt;vary-default&gt; [vary-default]\""),
            "{xml}"
        );
        assert!(
            xml.contains("<property name=\"note\" value=\"a &amp; b\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains("<skipped message=\"needs two versions\u{FFFD}\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains("expected: Vary &quot;x&quot;</failure>"),
            "{xml}"
        );
        assert_eq!(escape("a'b"), "a&apos;b");
    }
}
