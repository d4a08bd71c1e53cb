//! The properties of placement's query-string parsers
//! ([`placement::query`]), checked on any query string:
//! [`check_provider_query`] and [`check_candidate_query`] run the parsers
//! of `GET /resource_providers` and `GET /allocation_candidates` as their
//! handlers do, without the database.

use microversion::Version;
use placement::query::{self, InvalidQuery, QueryParams, is_uuid_like};

use crate::{Violation, ensure};

/// A refusal of a parser must be an answer for the client (a 400): with
/// a detail.
fn refusal(what: &str, raw: &str, e: &InvalidQuery) -> Result<(), Violation> {
    ensure(!e.detail().is_empty(), || {
        format!("{what} of {raw:?}: refused without a detail")
    })
}

/// The properties of the parsers shared by the query strings: the values
/// of `QueryParams`, and `resources`, `member_of` and `required` as the
/// served version allows them.
fn check_shared(params: &QueryParams, raw: &str) -> Result<(), Violation> {
    for (key, _) in params.pairs() {
        let all = params.get_all(key);
        ensure(params.get(key) == all.last().copied(), || {
            format!("{raw:?}: get({key:?}) is not the last of get_all")
        })?;
        ensure(params.contains(key), || {
            format!("{raw:?}: contains({key:?}) is false")
        })?;
    }
    Ok(())
}

/// Checks `resources=` values: every amount at least 1, every class named
/// once, no class with `,` or `:`.
fn check_resources(value: &str, raw: &str) -> Result<(), Violation> {
    match query::resources(value) {
        Ok(amounts) => {
            ensure(!amounts.is_empty(), || {
                format!("{raw:?}: resources {value:?} parsed to nothing")
            })?;
            for (i, (name, amount)) in amounts.iter().enumerate() {
                ensure(*amount >= 1, || {
                    format!("{raw:?}: resources {value:?}: {name} has amount {amount}")
                })?;
                ensure(!name.contains([',', ':']), || {
                    format!("{raw:?}: resources {value:?}: class {name:?}")
                })?;
                ensure(!amounts[..i].iter().any(|(n, _)| n == name), || {
                    format!("{raw:?}: resources {value:?}: {name} twice")
                })?;
                // Whatever amount was read reads back from its digits.
                ensure(
                    query::python_int(&amount.to_string()) == Some(*amount),
                    || format!("{raw:?}: python_int does not read {amount} back"),
                )?;
            }
            Ok(())
        }
        Err(e) => refusal("resources", raw, &e),
    }
}

/// Checks `member_of{suffix}`: UUID-like aggregates only, several values
/// only from 1.24, forbidden ones only from 1.32.
fn check_member_of(
    params: &QueryParams,
    version: Version,
    suffix: &str,
    raw: &str,
) -> Result<(), Violation> {
    match query::member_of(params, version, suffix) {
        Ok(member_of) => {
            for uuid in member_of
                .required
                .iter()
                .flatten()
                .chain(&member_of.forbidden)
            {
                ensure(is_uuid_like(uuid), || {
                    format!("{raw:?}: member_of{suffix} kept {uuid:?}, not a UUID")
                })?;
                ensure(query::canonical_uuid(uuid).is_some(), || {
                    format!("{raw:?}: {uuid:?} is UUID-like but has no canonical form")
                })?;
            }
            ensure(member_of.required.iter().all(|any| !any.is_empty()), || {
                format!("{raw:?}: member_of{suffix} has an empty set")
            })?;
            ensure(
                version >= Version::new(1, 32) || member_of.forbidden.is_empty(),
                || format!("{raw:?}: forbidden aggregates at {version}"),
            )?;
            ensure(
                version >= Version::new(1, 24) || member_of.required.len() <= 1,
                || format!("{raw:?}: several member_of{suffix} at {version}"),
            )
        }
        Err(e) => refusal("member_of", raw, &e),
    }
}

/// Checks `required{suffix}`: no empty trait, forbidden traits only from
/// 1.22, `in:` (sets of several) only from 1.39, no trait both required
/// alone and `!`-prefixed in its own name.
fn check_required(
    params: &QueryParams,
    version: Version,
    suffix: &str,
    raw: &str,
) -> Result<(), Violation> {
    match query::required_traits(params, version, suffix) {
        Ok(traits) => {
            for any in &traits.required {
                ensure(!any.is_empty(), || {
                    format!("{raw:?}: required{suffix} has an empty set")
                })?;
                ensure(version >= Version::new(1, 39) || any.len() == 1, || {
                    format!("{raw:?}: required{suffix} has an any-of set at {version}")
                })?;
                for name in any {
                    ensure(!name.is_empty() && !name.starts_with('!'), || {
                        format!("{raw:?}: required{suffix} kept the trait {name:?}")
                    })?;
                }
            }
            for name in &traits.forbidden {
                ensure(!name.is_empty(), || {
                    format!("{raw:?}: required{suffix} forbids an empty trait")
                })?;
            }
            ensure(
                version >= Version::new(1, 22) || traits.forbidden.is_empty(),
                || format!("{raw:?}: forbidden traits at {version}"),
            )
        }
        Err(e) => refusal("required", raw, &e),
    }
}

/// Checks `in_tree` as `GET /resource_providers` and the candidates read
/// it: a UUID-like value has a canonical form that is itself UUID-like.
fn check_uuid(value: &str, raw: &str) -> Result<(), Violation> {
    let trimmed = value.trim();
    match query::canonical_uuid(trimmed) {
        Some(canonical) => {
            let shape = canonical.len() == 36
                && canonical.char_indices().all(|(i, c)| {
                    if matches!(i, 8 | 13 | 18 | 23) {
                        c == '-'
                    } else {
                        c.is_ascii_digit() || ('a'..='f').contains(&c)
                    }
                });
            ensure(shape && is_uuid_like(&canonical), || {
                format!("{raw:?}: canonical form {canonical:?} of {trimmed:?}")
            })?;
            ensure(
                query::canonical_uuid(&canonical) == Some(canonical.clone()),
                || format!("{raw:?}: canonical form of {canonical:?} is not itself"),
            )
        }
        None => ensure(!is_uuid_like(trimmed), || {
            format!("{raw:?}: {trimmed:?} is UUID-like without a canonical form")
        }),
    }
}

/// Runs the parsers of `GET /resource_providers` on the query string
/// `raw` at `version` (as the handler does, without the database) and
/// checks their results.
///
/// # Errors
///
/// A [`Violation`] naming the property the query string broke; a query
/// string the service refuses is not one (it must be refused with a 400).
pub fn check_provider_query(version: Version, raw: &str) -> Result<(), Violation> {
    let params = match QueryParams::parse(Some(raw)) {
        Ok(params) => params,
        Err(e) => return refusal("the query string", raw, &e),
    };
    check_shared(&params, raw)?;
    if params.contains("member_of") {
        check_member_of(&params, version, "", raw)?;
    }
    if params.contains("required") {
        check_required(&params, version, "", raw)?;
    }
    if let Some(resources) = params.get("resources") {
        check_resources(resources, raw)?;
    }
    for key in ["uuid", "in_tree"] {
        if let Some(value) = params.get(key) {
            check_uuid(value, raw)?;
        }
    }
    Ok(())
}

/// Runs the parsers of `GET /allocation_candidates` on the query string
/// `raw` at `version`: every `resources`, `required`, `member_of` and
/// `in_tree` parameter, whatever its suffix, `root_required` and `limit`,
/// and checks their results.
///
/// The request-wide and group checks of the handler itself
/// (`request_wide`, `request_groups`) and its query schema are private to
/// it: the `candidate_query` target reaches them through [`Harness`].
///
/// # Errors
///
/// A [`Violation`] naming the property the query string broke.
pub fn check_candidate_query(version: Version, raw: &str) -> Result<(), Violation> {
    let params = match QueryParams::parse(Some(raw)) {
        Ok(params) => params,
        Err(e) => return refusal("the query string", raw, &e),
    };
    check_shared(&params, raw)?;
    let mut suffixes: Vec<(&str, &str)> = Vec::new();
    for (key, value) in params.pairs() {
        for prefix in ["resources", "required", "member_of", "in_tree"] {
            if let Some(suffix) = key.strip_prefix(prefix) {
                if !suffixes.contains(&(prefix, suffix)) {
                    suffixes.push((prefix, suffix));
                }
                if prefix == "resources" {
                    check_resources(value, raw)?;
                } else if prefix == "in_tree" {
                    check_uuid(value, raw)?;
                }
            }
        }
    }
    for (prefix, suffix) in suffixes {
        match prefix {
            "required" => check_required(&params, version, suffix, raw)?,
            "member_of" => check_member_of(&params, version, suffix, raw)?,
            _ => {}
        }
    }
    if let Some(value) = params.get_all("root_required").first() {
        match query::traits_value(value, true, false) {
            Ok(traits) => {
                ensure(
                    traits.required.iter().all(|any| any.len() == 1)
                        && traits
                            .required
                            .iter()
                            .flatten()
                            .chain(&traits.forbidden)
                            .all(|t| !t.is_empty() && !t.starts_with('!')),
                    || format!("{raw:?}: root_required read as {traits:?}"),
                )?;
            }
            Err(e) => refusal("root_required", raw, &e)?,
        }
    }
    if let Some(limit) = params.get_all("limit").first()
        && let Some(n) = query::python_int(limit)
    {
        ensure(query::python_int(&n.to_string()) == Some(n), || {
            format!("{raw:?}: limit {limit:?} read as {n}, which does not read back")
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query_string;

    #[test]
    fn query_parsers_keep_their_properties() {
        for minor in [0, 14, 22, 24, 32, 39] {
            let version = Version::new(1, minor);
            for raw in [
                "resources=VCPU:1,MEMORY_MB:2&required=!A,B&member_of=in:%s,%s",
                "required=in:A,B&required=C&member_of=!aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
                "resources1=VCPU:1&required1=X&in_tree1={AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA}",
                "root_required=A,!B&limit=1_0&same_subtree=_a",
                "resources=VCPU:-1&resources=x&uuid=%ff",
            ] {
                check_provider_query(version, &query_string(raw.as_bytes())).unwrap();
                check_candidate_query(version, &query_string(raw.as_bytes())).unwrap();
            }
        }
    }
}
