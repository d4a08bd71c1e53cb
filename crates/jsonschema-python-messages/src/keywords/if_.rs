//! `if`, `then` and `else`: the instance against `then` when it passes
//! `if`, else against `else`. The schema compiles the three where they
//! stand (so that a bad one is reported in the schema's order) and puts
//! this keyword where `if` stands; `then` and `else` alone do nothing.

use serde_json::Value;

use super::Keyword;
use crate::error::PathItem;
use crate::failure::Failure;
use crate::node::{At, Node};

pub(crate) struct If {
    condition: Node,
    then: Option<(PathItem, Node)>,
    otherwise: Option<(PathItem, Node)>,
}

impl If {
    pub(crate) fn new(condition: Node, then: Option<Node>, otherwise: Option<Node>) -> Self {
        If {
            condition,
            then: then.map(|node| (PathItem::Key("then".to_owned()), node)),
            otherwise: otherwise.map(|node| (PathItem::Key("else".to_owned()), node)),
        }
    }
}

impl Keyword for If {
    fn validate<'s, 'i>(
        &'s self,
        at: &At<'s>,
        instance: &'i Value,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let branch = if at.is_valid(&self.condition, instance) {
            &self.then
        } else {
            &self.otherwise
        };
        if let Some((step, node)) = branch {
            out.extend(at.descend(node, instance, None, Some(step)));
        }
    }
}
