//! `dependentRequired`: `'b' is a dependency of 'a'`.

use serde_json::Value;

use super::{Compiled, Object, ObjectKeyword, Site, object_keyword};
use crate::failure::Failure;
use crate::node::At;
use crate::repr::repr_str;

/// For each property, the properties its presence requires.
struct DependentRequired(Vec<(String, Vec<String>)>);

pub(crate) fn compile(site: &Site<'_>) -> Compiled {
    let strings = |needs: &Value| -> Option<Vec<String>> {
        needs
            .as_array()?
            .iter()
            .map(|n| n.as_str().map(str::to_owned))
            .collect()
    };
    let dependencies = site.value.as_object().and_then(|deps| {
        deps.iter()
            .map(|(property, needs)| Some((property.clone(), strings(needs)?)))
            .collect::<Option<Vec<_>>>()
    });
    let dependencies = dependencies.ok_or_else(|| site.not_a("an object of arrays of strings"))?;
    object_keyword(DependentRequired(dependencies))
}

impl ObjectKeyword for DependentRequired {
    fn validate<'s, 'i>(&'s self, at: &At<'s>, object: Object<'i>, out: &mut Vec<Failure<'s, 'i>>) {
        for (property, needs) in &self.0 {
            if !object.members.contains_key(property) {
                continue;
            }
            for each in needs {
                if !object.members.contains_key(each) {
                    let message = format!(
                        "{} is a dependency of {}",
                        repr_str(each),
                        repr_str(property)
                    );
                    out.push(at.fail(object.value, message));
                }
            }
        }
    }
}
