//! JSON Schema validation that fails the way Python's `jsonschema` 4.x
//! does under `jsonschema.validate(instance, schema, format_checker=...)`:
//! the same choice among several errors (`best_match`), and the same text
//! (`str(ValidationError)`), which OpenStack services (Nova, Ironic,
//! Cinder, Placement) put in their 400 answers and their clients and tests
//! read.
//!
//! Schemas are read as draft 2020-12 (what `jsonschema.validate` picks for
//! a schema without `$schema`). Keywords are applied in the order the
//! schema lists them, as Python does, so write a schema in the order of the
//! Python source it reproduces. `$ref`, `$dynamicRef` and the
//! `unevaluated*` keywords are refused when the schema is built; keywords
//! Python ignores are ignored.

mod json;
mod repr;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use fancy_regex::Regex;
use serde_json::{Map, Number, Value};

pub(crate) use self::json::python_json_error;
use self::repr::{pformat, repr, repr_number, repr_str};

type Check = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// The checks behind the `format` keyword, by format name, as
/// `jsonschema.FormatChecker` holds them. A format without a check passes.
///
/// [`FormatChecker::default`] has what `jsonschema.FormatChecker()` checks
/// without optional packages: `uuid` (hyphens at 8, 13, 18 and 23, as
/// `jsonschema` asks), `email` and `idn-email` (an `@`), `ipv4`, `ipv6`
/// and `date`. Each passes values that are not strings.
#[derive(Clone)]
pub struct FormatChecker {
    checks: BTreeMap<String, Check>,
}

impl fmt::Debug for FormatChecker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.checks.keys()).finish()
    }
}

impl Default for FormatChecker {
    fn default() -> Self {
        FormatChecker::empty()
            .with("uuid", |v| strings_only(v, is_uuid))
            .with("email", |v| strings_only(v, |s| s.contains('@')))
            .with("idn-email", |v| strings_only(v, |s| s.contains('@')))
            .with("ipv4", |v| {
                strings_only(v, |s| s.parse::<std::net::Ipv4Addr>().is_ok())
            })
            .with("ipv6", |v| strings_only(v, is_ipv6))
            .with("date", |v| strings_only(v, is_date))
    }
}

fn strings_only(value: &Value, check: impl Fn(&str) -> bool) -> bool {
    value.as_str().is_none_or(check)
}

/// Python's `uuid.UUID(s)` accepts `s` (after dropping `urn:`, `uuid:`,
/// braces and hyphens, 32 hexadecimal digits as `int(x, 16)` reads them).
fn python_uuid_parses(s: &str) -> bool {
    let text = s.replace("urn:", "").replace("uuid:", "");
    let hex: String = text
        .trim_matches(|c| c == '{' || c == '}')
        .chars()
        .filter(|&c| c != '-')
        .collect();
    if hex.chars().count() != 32 {
        return false;
    }
    // int(hex, 16): surrounding whitespace, a sign, single underscores
    // between digits.
    let body = hex.trim_matches(|c: char| c.is_whitespace());
    let body = body.strip_prefix(['+', '-']).unwrap_or(body);
    !body.is_empty()
        && !body.starts_with('_')
        && !body.ends_with('_')
        && !body.contains("__")
        && body.chars().all(|c| c == '_' || c.is_ascii_hexdigit())
}

/// `jsonschema`'s `uuid` format: `UUID(s)` parses and hyphens are at 8,
/// 13, 18 and 23.
fn is_uuid(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    python_uuid_parses(s) && [8, 13, 18, 23].iter().all(|&i| chars.get(i) == Some(&'-'))
}

/// `ipaddress.IPv6Address(s)`, with an optional `%scope`.
fn is_ipv6(s: &str) -> bool {
    let (addr, scope) = match s.split_once('%') {
        Some((addr, scope)) => (addr, Some(scope)),
        None => (s, None),
    };
    if scope.is_some_and(|scope| scope.is_empty() || scope.contains('%')) {
        return false;
    }
    addr.parse::<std::net::Ipv6Addr>().is_ok()
}

/// `^\d{4}-\d{2}-\d{2}$` (ASCII) and `datetime.date.fromisoformat`.
fn is_date(s: &str) -> bool {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &s[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    // A trailing newline passes the pattern but not fromisoformat.
    year >= 1 && (1..=days).contains(&day) && s.len() == b.len() && !s.ends_with('\n')
}

impl FormatChecker {
    /// A checker that checks no format.
    #[must_use]
    pub fn empty() -> Self {
        FormatChecker {
            checks: BTreeMap::new(),
        }
    }

    /// Checks `format` with `check` (replacing any check of that name):
    /// `false` fails with `<instance> is not a '<format>'`.
    #[must_use]
    pub fn with(
        mut self,
        format: impl Into<String>,
        check: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.checks.insert(format.into(), Arc::new(check));
        self
    }

    /// Whether `instance` conforms to `format` (true for unknown formats).
    #[must_use]
    pub fn conforms(&self, format: &str, instance: &Value) -> bool {
        self.checks.get(format).is_none_or(|check| check(instance))
    }
}

/// One step of a path into a schema or an instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathItem {
    /// An object member.
    Key(String),
    /// An array index.
    Index(usize),
}

impl PathItem {
    fn repr(&self) -> String {
        match self {
            PathItem::Key(k) => repr_str(k),
            PathItem::Index(i) => i.to_string(),
        }
    }
}

impl PartialOrd for PathItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PathItem {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathItem::Key(a), PathItem::Key(b)) => a.cmp(b),
            (PathItem::Index(a), PathItem::Index(b)) => a.cmp(b),
            (PathItem::Index(_), PathItem::Key(_)) => Ordering::Less,
            (PathItem::Key(_), PathItem::Index(_)) => Ordering::Greater,
        }
    }
}

/// `container[index][index]...` as `jsonschema` writes paths.
fn format_as_index(container: &str, indices: &[PathItem]) -> String {
    let mut out = container.to_owned();
    for item in indices {
        out.push('[');
        out.push_str(&item.repr());
        out.push(']');
    }
    out
}

/// A compiled schema that validates as Python's `jsonschema` 4.x does
/// under `jsonschema.validate`: the same error chosen among several
/// (`best_match`), and its text (`str(ValidationError)`).
///
/// The schema is read as draft 2020-12. Keywords apply in the order the
/// schema lists them, as in Python, and that order decides which error is
/// reported: write a schema in the order of the Python source it
/// reproduces. `$ref`, `$dynamicRef` and `unevaluated*` are refused when
/// building; keywords Python ignores are ignored.
///
/// ```
/// use microversion_server::schema::PythonSchema;
/// use serde_json::json;
///
/// let schema = PythonSchema::new(&json!({
///     "type": "object",
///     "properties": {"name": {"type": "string", "maxLength": 8}},
///     "required": ["name"],
///     "additionalProperties": false,
/// }))?;
/// assert!(schema.validate(&json!({"name": "a"})).is_ok());
/// let error = schema.validate(&json!({"nom": "a"})).unwrap_err();
/// assert_eq!(error.message(), "'name' is a required property");
/// assert_eq!(
///     error.to_string(),
///     "'name' is a required property\n\n\
///      Failed validating 'required' in schema:\n    \
///      {'type': 'object',\n     \
///      'properties': {'name': {'type': 'string', 'maxLength': 8}},\n     \
///      'required': ['name'],\n     \
///      'additionalProperties': False}\n\n\
///      On instance:\n    \
///      {'nom': 'a'}"
/// );
/// # Ok::<(), microversion_server::schema::InvalidSchema>(())
/// ```
#[derive(Clone)]
pub struct PythonSchema {
    schema: Arc<Value>,
    regexes: Arc<HashMap<String, Regex>>,
    formats: FormatChecker,
}

/// A schema [`PythonSchema`] cannot compile; the message says what and
/// where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidSchema(String);

impl fmt::Display for InvalidSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidSchema {}

impl fmt::Debug for PythonSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PythonSchema")
            .field("schema", &self.schema)
            .field("formats", &self.formats)
            .finish()
    }
}

impl PythonSchema {
    /// Compiles `schema`, with the default [`FormatChecker`].
    ///
    /// # Errors
    ///
    /// [`InvalidSchema`] when the schema is not a valid draft 2020-12
    /// schema (Python's `check_schema` would refuse it), a pattern does not
    /// compile, or it uses `$ref`, `$dynamicRef` or an `unevaluated*`
    /// keyword, which this validator does not implement.
    pub fn new(schema: &Value) -> Result<Self, InvalidSchema> {
        let mut regexes = HashMap::new();
        check_schema(schema, "schema", &mut regexes).map_err(InvalidSchema)?;
        Ok(PythonSchema {
            schema: Arc::new(schema.clone()),
            regexes: Arc::new(regexes),
            formats: FormatChecker::default(),
        })
    }

    /// Uses `formats` for the `format` keyword.
    #[must_use]
    pub fn with_format_checker(mut self, formats: FormatChecker) -> Self {
        self.formats = formats;
        self
    }

    /// The schema.
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Whether `instance` is valid.
    #[must_use]
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.descend(instance, &self.schema, None, None).is_empty()
    }

    /// Validates `instance` as `jsonschema.validate` does.
    ///
    /// # Errors
    ///
    /// The error `jsonschema.validate` would raise: the best match
    /// (`jsonschema.exceptions.best_match`) among all the failures.
    pub fn validate(&self, instance: &Value) -> Result<(), PythonSchemaError> {
        let errors = self.descend(instance, &self.schema, None, None);
        match best_match(errors) {
            None => Ok(()),
            Some(e) => Err(e.into_public()),
        }
    }

    fn regex(&self, pattern: &str) -> Option<&Regex> {
        self.regexes.get(pattern)
    }

    /// `re.search(pattern, text)`.
    fn search(&self, pattern: &str, text: &str) -> bool {
        self.regex(pattern)
            .is_some_and(|re| re.is_match(text).unwrap_or(false))
    }
}

/// Python's refusal of an instance: `str()` of it is the text of
/// `jsonschema.ValidationError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PythonSchemaError(Box<ErrorParts>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct ErrorParts {
    message: String,
    keyword: Option<String>,
    schema_path: Vec<PathItem>,
    path: Vec<PathItem>,
    schema: Value,
    instance: Value,
    /// `str()` of the error, written when the error is made: a reader of
    /// a deeply nested body makes it on a stack sized for that depth.
    text: String,
}

impl PythonSchemaError {
    /// The message alone (`error.message`): `'name' is a required property`.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The keyword that failed (`error.validator`), `None` for a `false`
    /// schema.
    #[must_use]
    pub fn keyword(&self) -> Option<&str> {
        self.0.keyword.as_deref()
    }

    /// Where in the instance (`error.relative_path`).
    #[must_use]
    pub fn instance_path(&self) -> &[PathItem] {
        &self.0.path
    }

    /// Where in the schema, keyword included (`error.relative_schema_path`).
    #[must_use]
    pub fn schema_path(&self) -> &[PathItem] {
        &self.0.schema_path
    }

    /// The (sub)schema holding the keyword.
    #[must_use]
    pub fn schema(&self) -> &Value {
        &self.0.schema
    }

    /// The part of the instance that failed.
    #[must_use]
    pub fn instance(&self) -> &Value {
        &self.0.instance
    }
}

impl fmt::Display for PythonSchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.text)
    }
}

/// `str(ValidationError)`.
fn error_text(
    message: &str,
    keyword: Option<&str>,
    schema_path: &[PathItem],
    path: &[PathItem],
    schema: &Value,
    instance: &Value,
) -> String {
    let schema_path = format_as_index(
        "schema",
        &schema_path[..schema_path.len().saturating_sub(1)],
    );
    let instance_path = format_as_index("instance", path);
    let keyword = keyword.map_or("None".to_owned(), repr_str);
    let indent = |text: String| text.replace('\n', "\n    ");
    format!(
        "{message}\n\nFailed validating {keyword} in {schema_path}:\n    {}\n\nOn {instance_path}:\n    {}",
        indent(pformat(schema, 72)),
        indent(pformat(instance, 72)),
    )
}

impl std::error::Error for PythonSchemaError {}

/// A failure while validating; `'s` is the schema's lifetime, `'i` the
/// instance's.
struct Failure<'s, 'i> {
    message: String,
    keyword: Option<&'s str>,
    path: VecDeque<PathItem>,
    schema_path: VecDeque<PathItem>,
    schema: &'s Value,
    instance: Cow<'i, Value>,
    context: Vec<Failure<'s, 'i>>,
}

impl<'s> Failure<'s, '_> {
    fn new<'i>(
        keyword: &'s str,
        schema: &'s Value,
        instance: &'i Value,
        message: String,
    ) -> Failure<'s, 'i> {
        Failure {
            message,
            keyword: Some(keyword),
            path: VecDeque::new(),
            schema_path: VecDeque::new(),
            schema,
            instance: Cow::Borrowed(instance),
            context: Vec::new(),
        }
    }

    fn into_owned<'j>(self) -> Failure<'s, 'j> {
        Failure {
            message: self.message,
            keyword: self.keyword,
            path: self.path,
            schema_path: self.schema_path,
            schema: self.schema,
            instance: Cow::Owned(self.instance.into_owned()),
            context: self.context.into_iter().map(Failure::into_owned).collect(),
        }
    }

    fn into_public(self) -> PythonSchemaError {
        let schema_path: Vec<PathItem> = self.schema_path.into();
        let path: Vec<PathItem> = self.path.into();
        let text = error_text(
            &self.message,
            self.keyword,
            &schema_path,
            &path,
            self.schema,
            &self.instance,
        );
        PythonSchemaError(Box::new(ErrorParts {
            message: self.message,
            keyword: self.keyword.map(str::to_owned),
            schema_path,
            path,
            schema: self.schema.clone(),
            instance: self.instance.into_owned(),
            text,
        }))
    }

    /// `error._matches_type()`.
    fn matches_type(&self) -> bool {
        match self.schema.get("type") {
            Some(Value::String(t)) => is_type(&self.instance, t),
            Some(Value::Array(types)) => types
                .iter()
                .any(|t| t.as_str().is_some_and(|t| is_type(&self.instance, t))),
            _ => false,
        }
    }

    /// `jsonschema.exceptions.relevance(error)`, to be maximised.
    fn relevance(&self) -> Relevance<'_> {
        Relevance {
            depth: -isize::try_from(self.path.len()).unwrap_or(isize::MAX),
            path: &self.path,
            not_weak: !matches!(self.keyword, Some("anyOf" | "oneOf")),
            not_matches_type: !self.matches_type(),
        }
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Relevance<'a> {
    depth: isize,
    path: &'a VecDeque<PathItem>,
    not_weak: bool,
    not_matches_type: bool,
}

/// `jsonschema.exceptions.best_match`: the most relevant error (the first
/// of equals), then into its context while one error there is the least
/// relevant alone.
fn best_match<'s, 'i>(errors: Vec<Failure<'s, 'i>>) -> Option<Failure<'s, 'i>> {
    let mut best = first_max(errors)?;
    while !best.context.is_empty() {
        let context = std::mem::take(&mut best.context);
        let mut smallest: Option<usize> = None;
        let mut tie = false;
        for (i, e) in context.iter().enumerate() {
            match smallest {
                None => smallest = Some(i),
                Some(s) => match e.relevance().cmp(&context[s].relevance()) {
                    Ordering::Less => {
                        smallest = Some(i);
                        tie = false;
                    }
                    Ordering::Equal => tie = true,
                    Ordering::Greater => {}
                },
            }
        }
        if tie {
            best.context = context;
            return Some(best);
        }
        best = context.into_iter().nth(smallest?)?;
    }
    Some(best)
}

/// Python's `max(errors, key=relevance)`: the first of the maximal ones.
fn first_max<'s, 'i>(errors: Vec<Failure<'s, 'i>>) -> Option<Failure<'s, 'i>> {
    let mut best: Option<usize> = None;
    for (i, e) in errors.iter().enumerate() {
        if best.is_none_or(|b| e.relevance() > errors[b].relevance()) {
            best = Some(i);
        }
    }
    errors.into_iter().nth(best?)
}

/// The draft 2020-12 type checker.
fn is_type(instance: &Value, ty: &str) -> bool {
    match ty {
        "array" => instance.is_array(),
        "boolean" => instance.is_boolean(),
        "null" => instance.is_null(),
        "number" => instance.is_number(),
        "object" => instance.is_object(),
        "string" => instance.is_string(),
        "integer" => match instance {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => false,
    }
}

/// Python's `==` between numbers (an `int` equals the same `float`).
fn num_cmp(a: &Number, b: &Number) -> Option<Ordering> {
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// `jsonschema._utils.equal`: booleans only equal booleans, `1 == 1.0`.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_cmp(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// A text that two values share exactly when Python finds them equal as
/// `uniqueItems` compares them (booleans apart from numbers, `1 == 1.0`,
/// objects in any order), so that uniqueness is one hash per item and not
/// a comparison per pair of items.
fn equality_key(value: &Value) -> String {
    let mut key = String::new();
    write_equality_key(value, &mut key);
    key
}

fn write_equality_key(value: &Value, key: &mut String) {
    use std::fmt::Write as _;
    match value {
        Value::Null => key.push('n'),
        Value::Bool(true) => key.push('t'),
        Value::Bool(false) => key.push('f'),
        Value::Number(n) => {
            let int = n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from));
            // A float with no fraction is the integer it equals; the bound
            // keeps the cast exact.
            let float = n.as_f64().unwrap_or(f64::NAN);
            let _ = match int {
                Some(i) => write!(key, "i{i};"),
                None if float.fract() == 0.0 && float.abs() < 1e38 => {
                    write!(key, "i{};", float as i128)
                }
                None => write!(key, "f{:x};", float.to_bits()),
            };
        }
        Value::String(text) => {
            let _ = write!(key, "s{}:", text.len());
            key.push_str(text);
        }
        Value::Array(items) => {
            key.push('[');
            for item in items {
                write_equality_key(item, key);
            }
            key.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            key.push('{');
            for (name, item) in entries {
                let _ = write!(key, "s{}:", name.len());
                key.push_str(name);
                write_equality_key(item, key);
            }
            key.push('}');
        }
    }
}

fn len_i128(n: usize) -> i128 {
    i128::try_from(n).unwrap_or(i128::MAX)
}

/// `len(x) < limit` with a numeric schema limit.
fn below(len: usize, limit: &Value) -> bool {
    limit.as_f64().is_some_and(|l| (len_i128(len) as f64) < l)
}

fn above(len: usize, limit: &Value) -> bool {
    limit.as_f64().is_some_and(|l| (len_i128(len) as f64) > l)
}

fn is_number(v: &Value) -> Option<&Number> {
    match v {
        Value::Number(n) => Some(n),
        _ => None,
    }
}

/// Python's `str(number)` (what `multipleOf` prints), same as `repr`.
fn num_str(v: &Value) -> String {
    is_number(v).map_or_else(|| repr(v), repr_number)
}

impl PythonSchema {
    /// `Validator.descend`: every failure of `instance` under `schema`, in
    /// Python's order, with `path` and `schema_path` put in front.
    fn descend<'s, 'i>(
        &self,
        instance: &'i Value,
        schema: &'s Value,
        path: Option<&PathItem>,
        schema_path: Option<&PathItem>,
    ) -> Vec<Failure<'s, 'i>> {
        let map = match schema {
            Value::Bool(true) => return Vec::new(),
            Value::Object(map) => map,
            // `false` (anything else was refused when building): this
            // failure gets neither path nor keyword, as in Python.
            _ => {
                return vec![Failure {
                    message: format!("False schema does not allow {}", repr(instance)),
                    keyword: None,
                    path: VecDeque::new(),
                    schema_path: VecDeque::new(),
                    schema,
                    instance: Cow::Borrowed(instance),
                    context: Vec::new(),
                }];
            }
        };
        let mut out = Vec::new();
        for (k, v) in map {
            let before = out.len();
            self.keyword(k, v, instance, schema, map, &mut out);
            for e in &mut out[before..] {
                if k != "if" && k != "$ref" {
                    e.schema_path.push_front(PathItem::Key(k.clone()));
                }
                if let Some(p) = schema_path {
                    e.schema_path.push_front(p.clone());
                }
                if let Some(p) = path {
                    e.path.push_front(p.clone());
                }
            }
        }
        out
    }

    #[allow(clippy::too_many_lines)]
    fn keyword<'s, 'i>(
        &self,
        k: &'s str,
        v: &'s Value,
        instance: &'i Value,
        schema: &'s Value,
        map: &'s Map<String, Value>,
        out: &mut Vec<Failure<'s, 'i>>,
    ) {
        let fail = |message: String| Failure::new(k, schema, instance, message);
        match k {
            "type" => {
                let types: Vec<&Value> = match v {
                    Value::Array(types) => types.iter().collect(),
                    other => vec![other],
                };
                if !types
                    .iter()
                    .any(|t| t.as_str().is_some_and(|t| is_type(instance, t)))
                {
                    let reprs: Vec<String> = types.iter().map(|t| repr(t)).collect();
                    out.push(fail(format!(
                        "{} is not of type {}",
                        repr(instance),
                        reprs.join(", ")
                    )));
                }
            }
            "properties" => {
                if let (Value::Object(props), Value::Object(inst)) = (v, instance) {
                    for (name, sub) in props {
                        if let Some(item) = inst.get(name) {
                            out.extend(self.descend(
                                item,
                                sub,
                                Some(&PathItem::Key(name.clone())),
                                Some(&PathItem::Key(name.clone())),
                            ));
                        }
                    }
                }
            }
            "patternProperties" => {
                if let (Value::Object(patterns), Value::Object(inst)) = (v, instance) {
                    for (pattern, sub) in patterns {
                        for (name, item) in inst {
                            if self.search(pattern, name) {
                                out.extend(self.descend(
                                    item,
                                    sub,
                                    Some(&PathItem::Key(name.clone())),
                                    Some(&PathItem::Key(pattern.clone())),
                                ));
                            }
                        }
                    }
                }
            }
            "additionalProperties" => {
                let Value::Object(inst) = instance else {
                    return;
                };
                let props = map.get("properties").and_then(Value::as_object);
                let patterns = map.get("patternProperties").and_then(Value::as_object);
                let mut extras: Vec<&String> = inst
                    .keys()
                    .filter(|name| !props.is_some_and(|p| p.contains_key(*name)))
                    .filter(|name| {
                        !patterns.is_some_and(|p| p.keys().any(|pat| self.search(pat, name)))
                    })
                    .collect();
                if v.is_object() {
                    for name in extras {
                        out.extend(self.descend(
                            &inst[name.as_str()],
                            v,
                            Some(&PathItem::Key(name.clone())),
                            None,
                        ));
                    }
                } else if v == &Value::Bool(false) && !extras.is_empty() {
                    extras.sort();
                    let joined: Vec<String> = extras.iter().map(|e| repr_str(e)).collect();
                    if let Some(patterns) = patterns {
                        let mut pats: Vec<&String> = patterns.keys().collect();
                        pats.sort();
                        let pats: Vec<String> = pats.iter().map(|p| repr_str(p)).collect();
                        let verb = if extras.len() == 1 { "does" } else { "do" };
                        out.push(fail(format!(
                            "{} {verb} not match any of the regexes: {}",
                            joined.join(", "),
                            pats.join(", ")
                        )));
                    } else {
                        let verb = if extras.len() == 1 { "was" } else { "were" };
                        out.push(fail(format!(
                            "Additional properties are not allowed ({} {verb} unexpected)",
                            joined.join(", ")
                        )));
                    }
                }
            }
            "required" => {
                if let (Value::Array(names), Value::Object(inst)) = (v, instance) {
                    for name in names.iter().filter_map(Value::as_str) {
                        if !inst.contains_key(name) {
                            out.push(fail(format!("{} is a required property", repr_str(name))));
                        }
                    }
                }
            }
            "minProperties" => {
                if let Value::Object(inst) = instance {
                    if below(inst.len(), v) {
                        let what = if v.as_f64() == Some(1.0) {
                            "should be non-empty"
                        } else {
                            "does not have enough properties"
                        };
                        out.push(fail(format!("{} {what}", repr(instance))));
                    }
                }
            }
            "maxProperties" => {
                if let Value::Object(inst) = instance {
                    if above(inst.len(), v) {
                        let what = if v.as_f64() == Some(0.0) {
                            "is expected to be empty"
                        } else {
                            "has too many properties"
                        };
                        out.push(fail(format!("{} {what}", repr(instance))));
                    }
                }
            }
            "propertyNames" => {
                if let Value::Object(inst) = instance {
                    for name in inst.keys() {
                        let key = Value::String(name.clone());
                        out.extend(
                            self.descend(&key, v, None, None)
                                .into_iter()
                                .map(Failure::into_owned),
                        );
                    }
                }
            }
            "dependentRequired" => {
                if let (Value::Object(deps), Value::Object(inst)) = (v, instance) {
                    for (property, needs) in deps {
                        if !inst.contains_key(property) {
                            continue;
                        }
                        for each in needs.as_array().into_iter().flatten() {
                            if let Some(each) = each.as_str() {
                                if !inst.contains_key(each) {
                                    out.push(fail(format!(
                                        "{} is a dependency of {}",
                                        repr_str(each),
                                        repr_str(property)
                                    )));
                                }
                            }
                        }
                    }
                }
            }
            "dependentSchemas" => {
                if let (Value::Object(deps), Value::Object(inst)) = (v, instance) {
                    for (property, sub) in deps {
                        if inst.contains_key(property) {
                            out.extend(self.descend(
                                instance,
                                sub,
                                None,
                                Some(&PathItem::Key(property.clone())),
                            ));
                        }
                    }
                }
            }
            "items" => {
                let Value::Array(items) = instance else {
                    return;
                };
                let prefix = map
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                if items.len() <= prefix {
                    return;
                }
                let extra = items.len() - prefix;
                if v == &Value::Bool(false) {
                    let rest = if extra == 1 {
                        repr(&items[prefix])
                    } else {
                        repr(&Value::Array(items[prefix..].to_vec()))
                    };
                    let noun = if prefix == 1 { "item" } else { "items" };
                    out.push(fail(format!(
                        "Expected at most {prefix} {noun} but found {extra} extra: {rest}"
                    )));
                } else {
                    for (index, item) in items.iter().enumerate().skip(prefix) {
                        out.extend(self.descend(item, v, Some(&PathItem::Index(index)), None));
                    }
                }
            }
            "prefixItems" => {
                if let (Value::Array(subs), Value::Array(items)) = (v, instance) {
                    for (index, (item, sub)) in items.iter().zip(subs).enumerate() {
                        out.extend(self.descend(
                            item,
                            sub,
                            Some(&PathItem::Index(index)),
                            Some(&PathItem::Index(index)),
                        ));
                    }
                }
            }
            "minItems" => {
                if let Value::Array(items) = instance {
                    if below(items.len(), v) {
                        let what = if v.as_f64() == Some(1.0) {
                            "should be non-empty"
                        } else {
                            "is too short"
                        };
                        out.push(fail(format!("{} {what}", repr(instance))));
                    }
                }
            }
            "maxItems" => {
                if let Value::Array(items) = instance {
                    if above(items.len(), v) {
                        let what = if v.as_f64() == Some(0.0) {
                            "is expected to be empty"
                        } else {
                            "is too long"
                        };
                        out.push(fail(format!("{} {what}", repr(instance))));
                    }
                }
            }
            "uniqueItems" => {
                if let (Value::Bool(true), Value::Array(items)) = (v, instance) {
                    let mut seen = HashSet::with_capacity(items.len());
                    let unique = items.iter().all(|item| seen.insert(equality_key(item)));
                    if !unique {
                        out.push(fail(format!("{} has non-unique elements", repr(instance))));
                    }
                }
            }
            "contains" => {
                let Value::Array(items) = instance else {
                    return;
                };
                let min = map.get("minContains").and_then(Value::as_u64).unwrap_or(1);
                let max = map
                    .get("maxContains")
                    .and_then(Value::as_u64)
                    .unwrap_or(items.len() as u64);
                let mut matches = 0u64;
                for item in items {
                    if self.descend(item, v, None, None).is_empty() {
                        matches += 1;
                        if matches > max {
                            let mut e = fail(format!(
                                "Too many items match the given schema (expected at most {max})"
                            ));
                            e.keyword = Some("maxContains");
                            out.push(e);
                            return;
                        }
                    }
                }
                if matches < min {
                    if matches == 0 {
                        out.push(fail(format!(
                            "{} does not contain items matching the given schema",
                            repr(instance)
                        )));
                    } else {
                        let mut e = fail(format!(
                            "Too few items match the given schema (expected at least {min} but only {matches} matched)"
                        ));
                        e.keyword = Some("minContains");
                        out.push(e);
                    }
                }
            }
            "pattern" => {
                if let (Value::String(s), Value::String(pattern)) = (instance, v) {
                    if !self.search(pattern, s) {
                        out.push(fail(format!(
                            "{} does not match {}",
                            repr(instance),
                            repr_str(pattern)
                        )));
                    }
                }
            }
            "format" => {
                if let Value::String(format) = v {
                    if !self.formats.conforms(format, instance) {
                        out.push(fail(format!(
                            "{} is not a {}",
                            repr(instance),
                            repr_str(format)
                        )));
                    }
                }
            }
            "minLength" => {
                if let Value::String(s) = instance {
                    if below(s.chars().count(), v) {
                        let what = if v.as_f64() == Some(1.0) {
                            "should be non-empty"
                        } else {
                            "is too short"
                        };
                        out.push(fail(format!("{} {what}", repr(instance))));
                    }
                }
            }
            "maxLength" => {
                if let Value::String(s) = instance {
                    if above(s.chars().count(), v) {
                        let what = if v.as_f64() == Some(0.0) {
                            "is expected to be empty"
                        } else {
                            "is too long"
                        };
                        out.push(fail(format!("{} {what}", repr(instance))));
                    }
                }
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                let (Some(n), Some(limit)) = (is_number(instance), is_number(v)) else {
                    return;
                };
                let Some(ord) = num_cmp(n, limit) else {
                    return;
                };
                let text = match (k, ord) {
                    ("minimum", Ordering::Less) => "is less than the minimum of",
                    ("maximum", Ordering::Greater) => "is greater than the maximum of",
                    ("exclusiveMinimum", Ordering::Less | Ordering::Equal) => {
                        "is less than or equal to the minimum of"
                    }
                    ("exclusiveMaximum", Ordering::Greater | Ordering::Equal) => {
                        "is greater than or equal to the maximum of"
                    }
                    _ => return,
                };
                out.push(fail(format!(
                    "{} {text} {}",
                    repr(instance),
                    repr_number(limit)
                )));
            }
            "multipleOf" => {
                let (Some(n), Some(by)) = (is_number(instance), is_number(v)) else {
                    return;
                };
                let failed = if by.is_f64() {
                    let q = n.as_f64().unwrap_or(f64::NAN) / by.as_f64().unwrap_or(f64::NAN);
                    q.trunc() != q
                } else if let (Some(a), Some(b)) = (n.as_i64(), by.as_i64()) {
                    b != 0 && a % b != 0
                } else {
                    let r = n.as_f64().unwrap_or(f64::NAN) % by.as_f64().unwrap_or(f64::NAN);
                    r != 0.0
                };
                if failed {
                    out.push(fail(format!(
                        "{} is not a multiple of {}",
                        repr(instance),
                        num_str(v)
                    )));
                }
            }
            "enum" => {
                if let Value::Array(options) = v {
                    if !options.iter().any(|o| equal(o, instance)) {
                        out.push(fail(format!(
                            "{} is not one of {}",
                            repr(instance),
                            repr(v)
                        )));
                    }
                }
            }
            "const" if !equal(instance, v) => {
                out.push(fail(format!("{} was expected", repr(v))));
            }
            "allOf" => {
                for (index, sub) in v.as_array().into_iter().flatten().enumerate() {
                    out.extend(self.descend(instance, sub, None, Some(&PathItem::Index(index))));
                }
            }
            "anyOf" => {
                let mut all = Vec::new();
                for (index, sub) in v.as_array().into_iter().flatten().enumerate() {
                    let errs = self.descend(instance, sub, None, Some(&PathItem::Index(index)));
                    if errs.is_empty() {
                        return;
                    }
                    all.extend(errs);
                }
                let mut e = fail(format!(
                    "{} is not valid under any of the given schemas",
                    repr(instance)
                ));
                e.context = all;
                out.push(e);
            }
            "oneOf" => {
                let subs = v.as_array().map_or(&[][..], Vec::as_slice);
                let mut all = Vec::new();
                let mut first_valid = None;
                for (index, sub) in subs.iter().enumerate() {
                    let errs = self.descend(instance, sub, None, Some(&PathItem::Index(index)));
                    if errs.is_empty() {
                        first_valid = Some(index);
                        break;
                    }
                    all.extend(errs);
                }
                let Some(first) = first_valid else {
                    let mut e = fail(format!(
                        "{} is not valid under any of the given schemas",
                        repr(instance)
                    ));
                    e.context = all;
                    out.push(e);
                    return;
                };
                let mut more: Vec<&Value> = subs[first + 1..]
                    .iter()
                    .filter(|sub| self.descend(instance, sub, None, None).is_empty())
                    .collect();
                if !more.is_empty() {
                    more.push(&subs[first]);
                    let reprs: Vec<String> = more.iter().map(|s| repr(s)).collect();
                    out.push(fail(format!(
                        "{} is valid under each of {}",
                        repr(instance),
                        reprs.join(", ")
                    )));
                }
            }
            "not" if self.descend(instance, v, None, None).is_empty() => {
                out.push(fail(format!(
                    "{} should not be valid under {}",
                    repr(instance),
                    repr(v)
                )));
            }
            "if" => {
                if self.descend(instance, v, None, None).is_empty() {
                    if let Some(then) = map.get("then") {
                        out.extend(self.descend(
                            instance,
                            then,
                            None,
                            Some(&PathItem::Key("then".into())),
                        ));
                    }
                } else if let Some(otherwise) = map.get("else") {
                    out.extend(self.descend(
                        instance,
                        otherwise,
                        None,
                        Some(&PathItem::Key("else".into())),
                    ));
                }
            }
            _ => {}
        }
    }
}

/// Keywords Python applies that this validator does not implement.
const UNSUPPORTED: [&str; 4] = [
    "$ref",
    "$dynamicRef",
    "unevaluatedItems",
    "unevaluatedProperties",
];

const TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// A light `check_schema`: the shapes of the keywords this validator
/// applies, and every pattern compiled into `regexes`.
fn check_schema(
    schema: &Value,
    at: &str,
    regexes: &mut HashMap<String, Regex>,
) -> Result<(), String> {
    let map = match schema {
        Value::Bool(_) => return Ok(()),
        Value::Object(map) => map,
        other => {
            return Err(format!(
                "{at}: {} is not of type 'object', 'boolean'",
                repr(other)
            ));
        }
    };
    let bad = |k: &str, what: &str| Err(format!("{at}[{}]: not {what}", repr_str(k)));
    for (k, v) in map {
        let here = format!("{at}[{}]", repr_str(k));
        match k.as_str() {
            k if UNSUPPORTED.contains(&k) => {
                return Err(format!("{here}: the keyword {k} is not supported"));
            }
            "type" => {
                let ok = match v {
                    Value::String(t) => TYPES.contains(&t.as_str()),
                    Value::Array(ts) => ts
                        .iter()
                        .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))),
                    _ => false,
                };
                if !ok {
                    return bad(k, "a type name or a list of type names");
                }
            }
            "properties" | "patternProperties" | "dependentSchemas" => {
                let Value::Object(subs) = v else {
                    return bad(k, "an object of schemas");
                };
                for (name, sub) in subs {
                    if k == "patternProperties" {
                        compile(name, regexes).map_err(|e| format!("{here}: {e}"))?;
                    }
                    check_schema(sub, &format!("{here}[{}]", repr_str(name)), regexes)?;
                }
            }
            "additionalProperties"
            | "items"
            | "propertyNames"
            | "contains"
            | "not"
            | "if"
            | "then"
            | "else" => check_schema(v, &here, regexes)?,
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                let Some(subs) = v.as_array().filter(|s| !s.is_empty()) else {
                    return bad(k, "a non-empty array of schemas");
                };
                for (i, sub) in subs.iter().enumerate() {
                    check_schema(sub, &format!("{here}[{i}]"), regexes)?;
                }
            }
            "required" if !v.as_array().is_some_and(|a| a.iter().all(Value::is_string)) => {
                return bad(k, "an array of strings");
            }
            "dependentRequired" => {
                let ok = v.as_object().is_some_and(|deps| {
                    deps.values()
                        .all(|d| d.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
                });
                if !ok {
                    return bad(k, "an object of arrays of strings");
                }
            }
            "minProperties" | "maxProperties" | "minItems" | "maxItems" | "minLength"
            | "maxLength" | "minContains" | "maxContains"
                if (!is_type(v, "integer") || v.as_f64().is_some_and(|f| f < 0.0)) =>
            {
                return bad(k, "a non-negative integer");
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" if !v.is_number() => {
                return bad(k, "a number");
            }
            "multipleOf" if !v.as_f64().is_some_and(|f| f > 0.0) => {
                return bad(k, "a number above 0");
            }
            "uniqueItems" if !v.is_boolean() => {
                return bad(k, "a boolean");
            }
            "enum" if !v.is_array() => {
                return bad(k, "an array");
            }
            "pattern" => {
                let Value::String(pattern) = v else {
                    return bad(k, "a string");
                };
                compile(pattern, regexes).map_err(|e| format!("{here}: {e}"))?;
            }
            "format" if !v.is_string() => {
                return bad(k, "a string");
            }
            _ => {}
        }
    }
    Ok(())
}

/// Compiles a Python `re` pattern for `re.search`.
fn compile(pattern: &str, regexes: &mut HashMap<String, Regex>) -> Result<(), String> {
    if regexes.contains_key(pattern) {
        return Ok(());
    }
    let translated = translate_regex(pattern);
    let re = Regex::new(&translated)
        .map_err(|e| format!("the pattern {} does not compile: {e}", repr_str(pattern)))?;
    regexes.insert(pattern.to_owned(), re);
    Ok(())
}

/// Python `re` syntax to `fancy_regex` syntax: `$` also matches before a
/// final newline, `\Z` is the end, and a backslash before any other
/// non-alphanumeric ASCII character is that character.
fn translate_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('Z') if !in_class => out.push_str(r"\z"),
                Some(e) if e.is_ascii() && !e.is_ascii_alphanumeric() => {
                    out.push_str(&fancy_regex::escape(&e.to_string()));
                }
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A `]` or `^]` right after the bracket is literal.
                let rest = chars.as_str();
                if let Some(after) = rest.strip_prefix("^]") {
                    out.push_str(r"^\]");
                    chars = after.chars();
                } else if let Some(after) = rest.strip_prefix(']') {
                    out.push_str(r"\]");
                    chars = after.chars();
                }
            }
            '[' => out.push_str(r"\["),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '$' if !in_class => out.push_str(r"(?:\n?\z)"),
            // Set operators in Rust classes, plain characters in Python's.
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            '-' if in_class && chars.as_str().starts_with('-') => out.push_str(r"\-"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
