//! A schema compiled into a tree: one [`Node`] per (sub)schema, an object
//! schema holding one validator per keyword in the order the schema lists
//! them, and the walk of an instance through that tree (Python's
//! `Validator.descend`).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::{InvalidSchema, PathItem, Reason};
use crate::failure::Failure;
use crate::format_checker::FormatChecker;
use crate::keywords::if_::If;
use crate::keywords::type_::Types;
use crate::keywords::{self, Keyword, Site};
use crate::regex::{PythonRegex, Regexes};
use crate::repr::repr;

/// Where a subschema sits in the whole schema. Each node shares its
/// parent's location, so the tree holds one step per node; the path is
/// only spelled out for an error.
#[derive(Clone, Default)]
pub(crate) struct Location(Option<Arc<Step>>);

struct Step {
    parent: Location,
    item: PathItem,
}

impl Location {
    /// The location one step further.
    pub(crate) fn join(&self, item: PathItem) -> Location {
        Location(Some(Arc::new(Step {
            parent: self.clone(),
            item,
        })))
    }

    /// The location of `key` under this one.
    pub(crate) fn key(&self, key: &str) -> Location {
        self.join(PathItem::Key(key.to_owned()))
    }

    /// The path from the root.
    pub(crate) fn path(&self) -> Vec<PathItem> {
        let mut path = Vec::new();
        let mut at = &self.0;
        while let Some(step) = at {
            path.push(step.item.clone());
            at = &step.parent.0;
        }
        path.reverse();
        path
    }

    /// The subschema at this location in `root`, the schema it was
    /// compiled from.
    pub(crate) fn resolve<'v>(&self, root: &'v Value) -> &'v Value {
        self.path().iter().fold(root, |value, item| {
            let next = match item {
                PathItem::Key(key) => value.get(key.as_str()),
                PathItem::Index(index) => value.get(*index),
            };
            // Every location is one the tree was compiled from.
            next.unwrap_or(&NULL)
        })
    }

    /// An error at this location.
    pub(crate) fn invalid(&self, reason: Reason) -> InvalidSchema {
        InvalidSchema::new(self.path(), reason)
    }
}

static NULL: Value = Value::Null;

/// A compiled (sub)schema.
pub(crate) struct Node {
    location: Location,
    kind: Kind,
}

enum Kind {
    /// `true` or `{}`-like: everything passes.
    True,
    /// `false`: nothing passes.
    False,
    /// An object schema.
    Object {
        /// Its `type`, for `best_match` (an error whose instance has the
        /// type its schema asks for is less relevant).
        types: Option<Types>,
        keywords: Vec<CompiledKeyword>,
    },
}

/// One keyword of an object schema.
struct CompiledKeyword {
    name: String,
    /// Whether failures put the keyword in their schema path (not for
    /// `if`, whose failures come from `then` or `else`).
    in_path: bool,
    check: Box<dyn Keyword>,
}

/// Compiles schemas, each pattern once.
#[derive(Default)]
pub(crate) struct Compiler {
    regexes: Regexes,
}

impl Compiler {
    /// Compiles the subschema `schema` found at `location`, as Python's
    /// `check_schema` would check it.
    pub(crate) fn node(
        &mut self,
        schema: &Value,
        location: Location,
    ) -> Result<Node, InvalidSchema> {
        let kind = match schema {
            Value::Bool(true) => Kind::True,
            Value::Bool(false) => Kind::False,
            Value::Object(map) => self.object(map, &location)?,
            other => return Err(location.invalid(Reason::NotASchema(repr(other)))),
        };
        Ok(Node { location, kind })
    }

    /// Compiles the keywords of an object schema, in its order. `if` is
    /// compiled where it stands, and given its `then` and `else` once
    /// every keyword is.
    fn object(
        &mut self,
        map: &Map<String, Value>,
        location: &Location,
    ) -> Result<Kind, InvalidSchema> {
        let mut keywords = Vec::new();
        let mut condition = None;
        let (mut then, mut otherwise) = (None, None);
        for (name, value) in map {
            let here = location.key(name);
            match name.as_str() {
                "if" => condition = Some((keywords.len(), self.node(value, here)?)),
                "then" => then = Some(self.node(value, here)?),
                "else" => otherwise = Some(self.node(value, here)?),
                _ => {
                    let site = Site {
                        value,
                        siblings: map,
                        location: here,
                    };
                    if let Some(check) = keywords::compile(name, &site, self)? {
                        keywords.push(CompiledKeyword {
                            name: name.clone(),
                            in_path: true,
                            check,
                        });
                    }
                }
            }
        }
        if let Some((index, condition)) = condition {
            let check = Box::new(If::new(condition, then, otherwise));
            let name = "if".to_owned();
            keywords.insert(
                index,
                CompiledKeyword {
                    name,
                    in_path: false,
                    check,
                },
            );
        }
        let types = map.get("type").and_then(Types::parse);
        Ok(Kind::Object { types, keywords })
    }

    /// Compiles `pattern`, refused as a value of the keyword at `location`.
    pub(crate) fn regex(
        &mut self,
        pattern: &str,
        location: &Location,
    ) -> Result<Arc<PythonRegex>, InvalidSchema> {
        self.regexes.compile(pattern).map_err(|e| {
            location.invalid(Reason::Pattern {
                pattern: pattern.to_owned(),
                error: e.to_string(),
            })
        })
    }
}

/// What a walk through the tree needs besides the tree.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'s> {
    /// The schema the tree was compiled from.
    pub(crate) root: &'s Value,
    pub(crate) formats: &'s FormatChecker,
}

/// The keyword being applied, for its validator: where failures come
/// from, and how to descend into subschemas.
pub(crate) struct At<'s> {
    cx: Cx<'s>,
    node: &'s Node,
    keyword: &'s str,
}

impl<'s> At<'s> {
    /// A failure of this keyword on `instance`.
    pub(crate) fn fail<'i>(&self, instance: &'i Value, message: String) -> Failure<'s, 'i> {
        Failure::new(Some(self.keyword), self.node, instance, message)
    }

    /// The failures of `instance` under the subschema `node`, with `path`
    /// and `schema_path` put in front.
    pub(crate) fn descend<'i>(
        &self,
        node: &'s Node,
        instance: &'i Value,
        path: Option<&PathItem>,
        schema_path: Option<&PathItem>,
    ) -> Vec<Failure<'s, 'i>> {
        node.descend(self.cx, instance, path, schema_path)
    }

    /// Whether `instance` passes the subschema `node`.
    pub(crate) fn is_valid(&self, node: &'s Node, instance: &Value) -> bool {
        node.is_valid(self.cx, instance)
    }

    /// `repr()` of the subschema `node`, as a message prints it.
    pub(crate) fn repr(&self, node: &Node) -> String {
        repr(node.schema(self.cx.root))
    }

    pub(crate) fn formats(&self) -> &'s FormatChecker {
        self.cx.formats
    }
}

impl Node {
    /// `Validator.descend`: every failure of `instance` under this schema,
    /// in Python's order, with `path` and `schema_path` put in front.
    pub(crate) fn descend<'s, 'i>(
        &'s self,
        cx: Cx<'s>,
        instance: &'i Value,
        path: Option<&PathItem>,
        schema_path: Option<&PathItem>,
    ) -> Vec<Failure<'s, 'i>> {
        let keywords = match &self.kind {
            Kind::True => return Vec::new(),
            // This failure gets neither path nor keyword, as in Python.
            Kind::False => {
                let message = format!("False schema does not allow {}", repr(instance));
                return vec![Failure::new(None, self, instance, message)];
            }
            Kind::Object { keywords, .. } => keywords,
        };
        let mut out = Vec::new();
        for keyword in keywords {
            let before = out.len();
            let at = At {
                cx,
                node: self,
                keyword: &keyword.name,
            };
            keyword.check.validate(&at, instance, &mut out);
            for e in &mut out[before..] {
                prefix(e, keyword, path, schema_path);
            }
        }
        out
    }

    /// Whether `instance` passes this schema.
    pub(crate) fn is_valid(&self, cx: Cx<'_>, instance: &Value) -> bool {
        self.descend(cx, instance, None, None).is_empty()
    }

    /// The subschema this node was compiled from, in `root`.
    pub(crate) fn schema<'v>(&self, root: &'v Value) -> &'v Value {
        self.location.resolve(root)
    }

    /// `error._matches_type()`: whether `instance` has a type the schema's
    /// `type` names.
    pub(crate) fn matches_type(&self, instance: &Value) -> bool {
        match &self.kind {
            Kind::Object {
                types: Some(types), ..
            } => types.matches(instance),
            _ => false,
        }
    }
}

/// Puts the keyword, then `schema_path` and `path`, in front of the paths
/// of a failure that comes out of `keyword`.
fn prefix(
    e: &mut Failure<'_, '_>,
    keyword: &CompiledKeyword,
    path: Option<&PathItem>,
    schema_path: Option<&PathItem>,
) {
    if keyword.in_path {
        e.schema_path
            .push_front(PathItem::Key(keyword.name.clone()));
    }
    if let Some(p) = schema_path {
        e.schema_path.push_front(p.clone());
    }
    if let Some(p) = path {
        e.path.push_front(p.clone());
    }
}
