//! Policy: upstream's default rules, in the legacy or the secure (RBAC with
//! scope) mode, overridable by a policy file in oslo.policy's YAML syntax.
//!
//! A rule is a check string: `role:admin`, `rule:other_rule`,
//! `project_id:%(project_id)s` (the caller's value must equal the
//! target's), `@` (always), `!` (never), combined with `and`, `or`, `not`
//! and parentheses.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use anyhow::Context as _;
use http::StatusCode;
use microversion_server::ApiError;
use serde::Deserialize;

use crate::context::RequestContext;

mod reload;

pub use reload::{CHECK_INTERVAL, LivePolicy};

/// Upstream's default rules.
const DEFAULTS: &str = include_str!("../data/policy-defaults.json");

/// One default rule, as upstream registers it.
#[derive(Debug, Deserialize)]
struct DefaultRule {
    name: String,
    check_str: String,
    scope_types: Option<Vec<String>>,
    deprecated_check_str: Option<String>,
}

/// A parsed check string.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Check {
    Always,
    Never,
    Rule(String),
    Role(String),
    /// `key:value`: the caller's `key` equals `value`, or the target's
    /// field when `value` is `%(field)s`.
    Field {
        key: String,
        value: String,
    },
    Not(Box<Check>),
    And(Vec<Check>),
    Or(Vec<Check>),
}

/// A check string that cannot be parsed.
#[derive(Debug)]
pub struct InvalidCheck(String);

impl fmt::Display for InvalidCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidCheck {}

fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in text.split_whitespace() {
        let mut rest = word;
        while let Some(stripped) = rest.strip_prefix('(') {
            tokens.push("(".to_owned());
            rest = stripped;
        }
        let mut closing = 0;
        while let Some(stripped) = rest.strip_suffix(')') {
            closing += 1;
            rest = stripped;
        }
        if !rest.is_empty() {
            tokens.push(rest.to_owned());
        }
        tokens.extend(std::iter::repeat_n(")".to_owned(), closing));
    }
    tokens
}

struct Parser {
    tokens: Vec<String>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(String::as_str)
    }

    fn next(&mut self) -> Option<String> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn or(&mut self) -> Result<Check, InvalidCheck> {
        let mut parts = vec![self.and()?];
        while self.peek().is_some_and(|t| t.eq_ignore_ascii_case("or")) {
            self.pos += 1;
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Check::Or(parts)
        })
    }

    fn and(&mut self) -> Result<Check, InvalidCheck> {
        let mut parts = vec![self.not()?];
        while self.peek().is_some_and(|t| t.eq_ignore_ascii_case("and")) {
            self.pos += 1;
            parts.push(self.not()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Check::And(parts)
        })
    }

    fn not(&mut self) -> Result<Check, InvalidCheck> {
        if self.peek().is_some_and(|t| t.eq_ignore_ascii_case("not")) {
            self.pos += 1;
            return Ok(Check::Not(Box::new(self.not()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Check, InvalidCheck> {
        match self.next() {
            Some(t) if t == "(" => {
                let inner = self.or()?;
                match self.next() {
                    Some(t) if t == ")" => Ok(inner),
                    _ => Err(InvalidCheck("unbalanced parentheses".to_owned())),
                }
            }
            Some(t) if t == "@" => Ok(Check::Always),
            Some(t) if t == "!" => Ok(Check::Never),
            Some(t) => match t.split_once(':') {
                Some(("rule", name)) => Ok(Check::Rule(name.to_owned())),
                Some(("role", role)) => Ok(Check::Role(role.to_ascii_lowercase())),
                Some((key, value)) => Ok(Check::Field {
                    key: key.to_owned(),
                    value: value.to_owned(),
                }),
                None => Err(InvalidCheck(format!(
                    "unexpected {t:?}: expected rule:NAME, role:NAME, KEY:VALUE, @ or !"
                ))),
            },
            None => Err(InvalidCheck("the check string ends too early".to_owned())),
        }
    }
}

fn parse(text: &str) -> Result<Check, InvalidCheck> {
    if text.trim().is_empty() {
        return Ok(Check::Always);
    }
    let mut parser = Parser {
        tokens: tokenize(text),
        pos: 0,
    };
    let check = parser.or()?;
    match parser.peek() {
        None => Ok(check),
        Some(t) => Err(InvalidCheck(format!("unexpected {t:?} in {text:?}"))),
    }
}

/// Declares [`Action`]: each variant with the name of upstream's rule for
/// it, written once.
macro_rules! actions {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        /// An operation the policy decides on: one of upstream's rules
        /// `placement:*`, which a policy file may override by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Action {
            $($(#[$doc])* $variant,)*
        }

        impl Action {
            /// Every action.
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            /// The name of the action's rule, as policy files and the 403
            /// message write it.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(Action::$variant => $name,)*
                }
            }
        }
    };
}

actions! {
    /// `GET /resource_providers`.
    ResourceProvidersList => "placement:resource_providers:list",
    /// `POST /resource_providers`.
    ResourceProvidersCreate => "placement:resource_providers:create",
    /// `GET /resource_providers/{uuid}`.
    ResourceProvidersShow => "placement:resource_providers:show",
    /// `PUT /resource_providers/{uuid}`.
    ResourceProvidersUpdate => "placement:resource_providers:update",
    /// `DELETE /resource_providers/{uuid}`.
    ResourceProvidersDelete => "placement:resource_providers:delete",
    /// `GET /resource_classes`.
    ResourceClassesList => "placement:resource_classes:list",
    /// `POST /resource_classes`.
    ResourceClassesCreate => "placement:resource_classes:create",
    /// `GET /resource_classes/{name}`.
    ResourceClassesShow => "placement:resource_classes:show",
    /// `PUT /resource_classes/{name}`.
    ResourceClassesUpdate => "placement:resource_classes:update",
    /// `DELETE /resource_classes/{name}`.
    ResourceClassesDelete => "placement:resource_classes:delete",
    /// `GET /resource_providers/{uuid}/inventories`.
    InventoriesList => "placement:resource_providers:inventories:list",
    /// `POST /resource_providers/{uuid}/inventories`.
    InventoriesCreate => "placement:resource_providers:inventories:create",
    /// `GET /resource_providers/{uuid}/inventories/{resource_class}`.
    InventoriesShow => "placement:resource_providers:inventories:show",
    /// `PUT` on one inventory or on all of a provider's.
    InventoriesUpdate => "placement:resource_providers:inventories:update",
    /// `DELETE` on one inventory or on all of a provider's.
    InventoriesDelete => "placement:resource_providers:inventories:delete",
    /// `GET /resource_providers/{uuid}/aggregates`.
    AggregatesList => "placement:resource_providers:aggregates:list",
    /// `PUT /resource_providers/{uuid}/aggregates`.
    AggregatesUpdate => "placement:resource_providers:aggregates:update",
    /// `GET /resource_providers/{uuid}/usages`.
    ProviderUsages => "placement:resource_providers:usages",
    /// `GET /usages`.
    Usages => "placement:usages",
    /// `GET /traits`.
    TraitsList => "placement:traits:list",
    /// `GET /traits/{name}`.
    TraitsShow => "placement:traits:show",
    /// `PUT /traits/{name}`.
    TraitsUpdate => "placement:traits:update",
    /// `DELETE /traits/{name}`.
    TraitsDelete => "placement:traits:delete",
    /// `GET /resource_providers/{uuid}/traits`.
    ProviderTraitsList => "placement:resource_providers:traits:list",
    /// `PUT /resource_providers/{uuid}/traits`.
    ProviderTraitsUpdate => "placement:resource_providers:traits:update",
    /// `DELETE /resource_providers/{uuid}/traits`.
    ProviderTraitsDelete => "placement:resource_providers:traits:delete",
    /// `POST /allocations`.
    AllocationsManage => "placement:allocations:manage",
    /// `GET /allocations/{consumer_uuid}`.
    AllocationsList => "placement:allocations:list",
    /// `PUT /allocations/{consumer_uuid}`.
    AllocationsUpdate => "placement:allocations:update",
    /// `DELETE /allocations/{consumer_uuid}`.
    AllocationsDelete => "placement:allocations:delete",
    /// `GET /resource_providers/{uuid}/allocations`.
    ProviderAllocationsList => "placement:resource_providers:allocations:list",
    /// `GET /allocation_candidates`.
    AllocationCandidatesList => "placement:allocation_candidates:list",
    /// `POST /reshaper`.
    Reshape => "placement:reshaper:reshape",
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a rule is checked against: the object acted on.
#[derive(Clone, Debug, Default)]
pub struct Target {
    fields: HashMap<String, String>,
}

impl Target {
    /// The default target: the caller's own project and user.
    #[must_use]
    pub fn of_caller(ctx: &RequestContext) -> Self {
        let mut fields = HashMap::new();
        if let Some(project) = &ctx.project_id {
            fields.insert("project_id".to_owned(), project.clone());
        }
        fields.insert("user_id".to_owned(), ctx.user_id.clone());
        Target { fields }
    }

    /// A target with one field set.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.fields.insert(key.to_owned(), value.into());
        self
    }
}

#[derive(Debug)]
struct Rule {
    check: Check,
    scope_types: Option<Vec<String>>,
}

/// The policy in force.
#[derive(Debug)]
pub struct Policy {
    rules: HashMap<String, Rule>,
    enforce_scope: bool,
}

impl Policy {
    /// Upstream's defaults in the mode given by `enforce_new_defaults` and
    /// `enforce_scope`, with the rules of `policy_file` (if any) in place
    /// of the defaults they name.
    ///
    /// # Errors
    ///
    /// Fails when the policy file cannot be read or holds an invalid check
    /// string, naming the rule.
    pub fn load(
        enforce_new_defaults: bool,
        enforce_scope: bool,
        policy_file: Option<&Path>,
    ) -> anyhow::Result<Policy> {
        let defaults: Vec<DefaultRule> = serde_json::from_str(DEFAULTS)?;
        let overrides: HashMap<String, String> = match policy_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read policy file {}", path.display()))?;
                let parsed: Option<HashMap<String, String>> = serde_yaml_ng::from_str(&text)
                    .with_context(|| {
                        format!(
                            "policy file {} is not a YAML map of rule names to check strings",
                            path.display()
                        )
                    })?;
                parsed.unwrap_or_default()
            }
            None => HashMap::new(),
        };
        let mut rules = HashMap::new();
        for d in defaults {
            let check = parse(&d.check_str).with_context(|| format!("default rule {}", d.name))?;
            // The legacy mode also accepts what the deprecated rule did.
            let check = match (&d.deprecated_check_str, enforce_new_defaults) {
                (Some(old), false) if *old != d.check_str => Check::Or(vec![
                    check,
                    parse(old).with_context(|| format!("rule {}", d.name))?,
                ]),
                _ => check,
            };
            rules.insert(
                d.name,
                Rule {
                    check,
                    scope_types: d.scope_types,
                },
            );
        }
        let file = policy_file.unwrap_or(Path::new("")).display();
        for (name, text) in overrides {
            let check = parse(&text).with_context(|| format!("policy file {file} rule {name}"))?;
            let scope_types = rules.get(&name).and_then(|r| r.scope_types.clone());
            rules.insert(name, Rule { check, scope_types });
        }
        Ok(Policy {
            rules,
            enforce_scope,
        })
    }

    /// Whether the caller may perform `action` on `target`.
    ///
    /// # Errors
    ///
    /// Returns 403 Forbidden, in the words upstream uses.
    pub fn authorize(
        &self,
        action: Action,
        ctx: &RequestContext,
        target: &Target,
    ) -> Result<(), ApiError> {
        let denied = || {
            ApiError::new(
                StatusCode::FORBIDDEN,
                format!("Policy does not allow {action} to be performed."),
            )
        };
        let rule = self.rules.get(action.name()).ok_or_else(denied)?;
        if self.enforce_scope {
            if let Some(scopes) = &rule.scope_types {
                let token_scope = ctx.scope().name();
                if !scopes.iter().any(|s| s == token_scope) {
                    return Err(denied());
                }
            }
        }
        if self.check(&rule.check, ctx, target, 0) {
            Ok(())
        } else {
            Err(denied())
        }
    }

    fn check(&self, check: &Check, ctx: &RequestContext, target: &Target, depth: u8) -> bool {
        // Rules referring to each other in a loop fail closed.
        if depth > 16 {
            return false;
        }
        match check {
            Check::Always => true,
            Check::Never => false,
            Check::Rule(name) => self
                .rules
                .get(name)
                .is_some_and(|r| self.check(&r.check, ctx, target, depth + 1)),
            Check::Role(role) => ctx.has_role(role),
            Check::Field { key, value } => {
                let wanted = match value.strip_prefix("%(").and_then(|v| v.strip_suffix(")s")) {
                    Some(field) => target.fields.get(field).map(String::as_str),
                    None => Some(value.as_str()),
                };
                let actual = match key.as_str() {
                    "project_id" => ctx.project_id.as_deref(),
                    "user_id" => Some(ctx.user_id.as_str()),
                    "system_scope" => ctx.system_scope.as_deref(),
                    _ => None,
                };
                matches!((actual, wanted), (Some(a), Some(w)) if a == w)
            }
            Check::Not(inner) => !self.check(inner, ctx, target, depth + 1),
            Check::And(parts) => parts.iter().all(|p| self.check(p, ctx, target, depth + 1)),
            Check::Or(parts) => parts.iter().any(|p| self.check(p, ctx, target, depth + 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn ctx(user: &str, project: Option<&str>, roles: &[&str]) -> RequestContext {
        RequestContext {
            user_id: user.to_owned(),
            project_id: project.map(str::to_owned),
            roles: roles.iter().map(|r| (*r).to_owned()).collect(),
            system_scope: None,
            domain_id: None,
        }
    }

    fn defaults() -> Vec<DefaultRule> {
        serde_json::from_str(DEFAULTS).unwrap()
    }

    #[test]
    fn every_action_has_a_default_rule() {
        let names: Vec<String> = defaults().into_iter().map(|d| d.name).collect();
        for action in Action::ALL {
            assert!(
                names.iter().any(|n| n == action.name()),
                "{action} has no default rule"
            );
        }
        let distinct: HashSet<&str> = Action::ALL.iter().map(|a| a.name()).collect();
        assert_eq!(
            distinct.len(),
            Action::ALL.len(),
            "two actions share a name"
        );
    }

    /// Every default rule is an action or is referred to by one, in
    /// either mode, except `admin_api`: upstream registers it among its
    /// base rules for policy files to use, and no default refers to it.
    #[test]
    fn every_default_rule_is_used() {
        fn refer(check: &Check, to: &mut Vec<String>) {
            match check {
                Check::Rule(name) => to.push(name.clone()),
                Check::Not(inner) => refer(inner, to),
                Check::And(parts) | Check::Or(parts) => {
                    parts.iter().for_each(|p| refer(p, to));
                }
                Check::Always | Check::Never | Check::Role(_) | Check::Field { .. } => {}
            }
        }
        for enforce_new_defaults in [false, true] {
            let policy = Policy::load(enforce_new_defaults, false, None).unwrap();
            let mut used: HashSet<String> = HashSet::new();
            let mut pending: Vec<String> =
                Action::ALL.iter().map(|a| a.name().to_owned()).collect();
            while let Some(name) = pending.pop() {
                if used.insert(name.clone()) {
                    refer(&policy.rules[&name].check, &mut pending);
                }
            }
            let mut unused: Vec<String> = defaults()
                .into_iter()
                .map(|d| d.name)
                .filter(|n| !used.contains(n))
                .collect();
            unused.sort();
            assert_eq!(
                unused,
                ["admin_api"],
                "new defaults: {enforce_new_defaults}"
            );
        }
    }

    #[test]
    fn parses_check_strings() {
        assert_eq!(
            parse("role:admin or (role:reader and project_id:%(project_id)s)").unwrap(),
            Check::Or(vec![
                Check::Role("admin".into()),
                Check::And(vec![
                    Check::Role("reader".into()),
                    Check::Field {
                        key: "project_id".into(),
                        value: "%(project_id)s".into()
                    }
                ])
            ])
        );
        assert_eq!(parse("").unwrap(), Check::Always);
        assert_eq!(
            parse("not role:x").unwrap(),
            Check::Not(Box::new(Check::Role("x".into())))
        );
        assert!(parse("(role:x").is_err());
        assert!(parse("role:x or").is_err());
        assert!(parse("admin").is_err());
    }

    #[test]
    fn legacy_mode_accepts_admin_for_service_rules() {
        let legacy = Policy::load(false, false, None).unwrap();
        let secure = Policy::load(true, true, None).unwrap();
        let admin = ctx("admin", Some("admin"), &["admin"]);
        let service = ctx("nova", Some("svc"), &["service"]);
        let reader = ctx("bob", Some("p1"), &["reader"]);
        let nobody = ctx("eve", Some("p1"), &[]);
        let action = Action::Reshape;
        assert!(
            legacy
                .authorize(action, &admin, &Target::of_caller(&admin))
                .is_ok()
        );
        assert!(
            secure
                .authorize(action, &service, &Target::of_caller(&service))
                .is_ok()
        );
        assert!(
            secure
                .authorize(action, &admin, &Target::of_caller(&admin))
                .is_err()
        );
        let err = legacy
            .authorize(action, &nobody, &Target::of_caller(&nobody))
            .unwrap_err();
        assert_eq!(err.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            err.detail(),
            "Policy does not allow placement:reshaper:reshape to be performed."
        );
        // A project reader may read its own project's usages, not another's.
        let usages = Action::Usages;
        assert!(
            secure
                .authorize(usages, &reader, &Target::default().with("project_id", "p1"))
                .is_ok()
        );
        assert!(
            secure
                .authorize(usages, &reader, &Target::default().with("project_id", "p2"))
                .is_err()
        );
    }

    #[test]
    fn scope_is_enforced_only_when_asked() {
        let mut system_admin = ctx("admin", None, &["admin"]);
        system_admin.system_scope = Some("all".into());
        let action = Action::ResourceProvidersList;
        let target = Target::of_caller(&system_admin);
        assert!(
            Policy::load(true, true, None)
                .unwrap()
                .authorize(action, &system_admin, &target)
                .is_err()
        );
        assert!(
            Policy::load(true, false, None)
                .unwrap()
                .authorize(action, &system_admin, &target)
                .is_ok()
        );
    }

    #[test]
    fn policy_file_overrides() {
        let dir = std::env::temp_dir().join(format!("placement-policy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("policy.yaml");
        std::fs::write(&path, "\"placement:resource_providers:list\": \"@\"\n").unwrap();
        let p = Policy::load(true, true, Some(&path)).unwrap();
        let nobody = ctx("eve", Some("p1"), &[]);
        assert!(
            p.authorize(
                Action::ResourceProvidersList,
                &nobody,
                &Target::of_caller(&nobody)
            )
            .is_ok()
        );
        std::fs::write(
            &path,
            "\"placement:resource_providers:list\": \"role:x or\"\n",
        )
        .unwrap();
        let err = Policy::load(true, true, Some(&path)).unwrap_err();
        assert!(format!("{err:#}").contains(&format!(
            "policy file {} rule placement:resource_providers:list",
            path.display()
        )));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
