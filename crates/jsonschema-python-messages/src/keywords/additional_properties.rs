//! `additionalProperties`: the members that neither `properties` names
//! nor a pattern of `patternProperties` finds.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::{Compiled, Object, ObjectKeyword, Site, object_keyword};
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};
use crate::regex::PythonRegex;
use crate::repr::repr_str;

struct AdditionalProperties {
    /// The names `properties` lists.
    named: HashSet<String>,
    /// The patterns of `patternProperties`, and their sorted reprs for the
    /// message, when the schema has that keyword.
    patterns: Option<(Vec<Arc<PythonRegex>>, String)>,
    extra: Extra,
}

/// What the extra members must be.
enum Extra {
    /// Valid under a subschema.
    Schema(Node),
    /// Absent: `additionalProperties: false`.
    Forbidden,
}

pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Compiled {
    let extra = match site.value {
        Value::Bool(true) => return Ok(None),
        Value::Bool(false) => Extra::Forbidden,
        _ => Extra::Schema(site.subschema(compiler)?),
    };
    let named = site
        .siblings
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default();
    let patterns = site
        .siblings
        .get("patternProperties")
        .and_then(Value::as_object)
        .map(|patterns| {
            // A pattern that does not compile fails `patternProperties`.
            let regexes = patterns
                .keys()
                .filter_map(|p| compiler.regex(p, &site.location).ok())
                .collect();
            let mut names: Vec<&String> = patterns.keys().collect();
            names.sort();
            let reprs: Vec<String> = names.iter().map(|p| repr_str(p)).collect();
            (regexes, reprs.join(", "))
        });
    object_keyword(AdditionalProperties {
        named,
        patterns,
        extra,
    })
}

impl ObjectKeyword for AdditionalProperties {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, object: Object<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        let mut extras: Vec<&String> = object
            .members
            .keys()
            .filter(|name| !self.named.contains(*name))
            .filter(|name| {
                !self
                    .patterns
                    .as_ref()
                    .is_some_and(|(regexes, _)| regexes.iter().any(|re| re.search(name)))
            })
            .collect();
        match &self.extra {
            Extra::Schema(node) => {
                for name in extras {
                    let step = PathItem::Key(name.clone());
                    out.extend(at.descend(node, &object.members[name.as_str()], Some(&step), None));
                }
            }
            Extra::Forbidden if !extras.is_empty() => {
                extras.sort();
                out.push(at.fail(object.value, self.message(&extras)));
            }
            Extra::Forbidden => {}
        }
    }
}

impl AdditionalProperties {
    fn message(&self, extras: &[&String]) -> String {
        let extras: Vec<String> = extras.iter().map(|e| repr_str(e)).collect();
        let one = extras.len() == 1;
        let extras = extras.join(", ");
        match &self.patterns {
            Some((_, patterns)) => {
                let verb = if one { "does" } else { "do" };
                format!("{extras} {verb} not match any of the regexes: {patterns}")
            }
            None => {
                let verb = if one { "was" } else { "were" };
                format!("Additional properties are not allowed ({extras} {verb} unexpected)")
            }
        }
    }
}
