//! Rule 11's request ids: `x-openstack-request-id` on every answer the
//! run saw, and the same id in the judge's other headers.

use super::Status;
use super::catalog::CheckId;
use super::run::Runner;

impl Runner {
    /// Checks the request ids of every answer the run saw.
    pub(super) fn request_ids(&mut self) {
        let total = self.prober.request_ids.len();
        if total == 0 {
            return;
        }
        let text = |h: &http::HeaderMap, name: &str| {
            h.get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        };
        let answers: Vec<(String, Option<String>, &http::HeaderMap)> = self
            .prober
            .request_ids
            .iter()
            .map(|(what, h)| (what.clone(), text(h, "x-openstack-request-id"), h))
            .collect();
        let missing: Vec<&String> = answers
            .iter()
            .filter(|(_, id, _)| id.is_none())
            .map(|(what, _, _)| what)
            .collect();
        let odd: Vec<String> = answers
            .iter()
            .filter_map(|(what, id, _)| {
                id.as_deref()
                    .filter(|id| !is_request_id(id))
                    .map(|id| format!("{what}: {id:?}"))
            })
            .collect();
        let expected = "x-openstack-request-id: req-<uuid> on every answer";
        let (status, seen) = if let Some(first) = missing.first() {
            (
                Status::Fail,
                format!(
                    "{} of {total} answers without x-openstack-request-id, such as {first}",
                    missing.len()
                ),
            )
        } else if let Some(first) = odd.first() {
            (
                Status::Warn,
                format!(
                    "{} of {total} ids not req-<uuid>, such as {first}",
                    odd.len()
                ),
            )
        } else {
            (Status::Pass, format!("on all {total} answers"))
        };
        let mut alias_rows = Vec::new();
        for alias in &self.expect.request_id_aliases {
            let wrong: Vec<String> = answers
                .iter()
                .filter(|(_, id, h)| id.is_some() && text(h, alias.as_str()) != *id)
                .map(|(what, _, h)| match text(h, alias.as_str()) {
                    Some(other) => format!("{what}: {alias}: {other:?}"),
                    None => format!("{what}: no {alias}"),
                })
                .collect();
            let (status, seen) = match wrong.first() {
                Some(first) => (
                    Status::Fail,
                    format!("{} of {total} answers, such as {first}", wrong.len()),
                ),
                None => {
                    let with_id = answers.iter().filter(|(_, id, _)| id.is_some()).count();
                    let text = if with_id == total {
                        format!("{alias} on all {total} answers")
                    } else {
                        format!("{alias} on all {with_id} answers with a request id")
                    };
                    (Status::Pass, text)
                }
            };
            alias_rows.push((alias.clone(), status, seen));
        }
        self.push(CheckId::RequestId, status, seen, expected);
        for (alias, status, seen) in alias_rows {
            let judge = self.expect.judge.clone();
            let expected = format!("{alias} equal to x-openstack-request-id ({judge})");
            self.push(CheckId::RequestIdAlias(alias), status, seen, expected);
        }
    }
}

/// `req-` and a UUID in its hyphenated form.
fn is_request_id(id: &str) -> bool {
    let Some(uuid) = id.strip_prefix("req-") else {
        return false;
    };
    let groups: Vec<&str> = uuid.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids() {
        assert!(is_request_id("req-5f1d3c4e-2b7a-4c1d-9e8f-0a1b2c3d4e5f"));
        for bad in [
            "5f1d3c4e-2b7a-4c1d-9e8f-0a1b2c3d4e5f",
            "req-5f1d3c4e2b7a4c1d9e8f0a1b2c3d4e5f",
            "req-5f1d3c4e-2b7a-4c1d-9e8f-0a1b2c3d4e5g",
            "req-",
        ] {
            assert!(!is_request_id(bad), "{bad}");
        }
    }
}
