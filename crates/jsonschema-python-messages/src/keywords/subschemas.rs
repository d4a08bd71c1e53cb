//! The array of subschemas of `allOf`, `anyOf` and `oneOf`, applied in
//! order, each under its index in the schema path.

use serde_json::Value;

use super::Site;
use crate::error::{InvalidSchema, PathItem};
use crate::failure::Failure;
use crate::node::{At, Compiler, Node};

/// A non-empty array of compiled subschemas.
pub(crate) struct Subschemas(Vec<Node>);

impl Subschemas {
    /// The keyword's value, a non-empty array of subschemas, compiled.
    pub(crate) fn compile(site: &Site<'_>, compiler: &mut Compiler) -> Result<Self, InvalidSchema> {
        site.subschemas(compiler).map(Subschemas)
    }

    /// The subschemas, in order.
    pub(crate) fn nodes(&self) -> &[Node] {
        &self.0
    }

    /// The failures of `instance` under each subschema in turn, computed
    /// as the iterator is advanced.
    pub(crate) fn failures<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
    ) -> impl Iterator<Item = Vec<Failure<'s, 'i>>> {
        self.0.iter().enumerate().map(move |(index, node)| {
            at.descend(node, instance, None, Some(&PathItem::Index(index)))
        })
    }

    /// The index of the first subschema `instance` passes, applying none
    /// after it; or, when it passes none, the failures under each.
    pub(crate) fn first_valid<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
    ) -> Result<usize, Vec<Failure<'s, 'i>>> {
        let mut context = Vec::new();
        for (index, failures) in self.failures(at, instance).enumerate() {
            if failures.is_empty() {
                return Ok(index);
            }
            context.extend(failures);
        }
        Err(context)
    }
}
