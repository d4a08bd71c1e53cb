//! The derive's input read into a model: the container's roles and each
//! field's versions, names and forms, checked before any code is made.

use microversion::{Version, VersionSpan};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, LitStr, Type};

/// The type the derive is on.
pub(crate) struct Container {
    pub(crate) ident: syn::Ident,
    /// Serialized at a version (a response body).
    pub(crate) response: bool,
    /// Deserialized at a version (a request body).
    pub(crate) request: bool,
    pub(crate) fields: Vec<Field>,
}

/// One field of the type.
pub(crate) struct Field {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: Type,
    /// Its name on the wire where no form renames it.
    pub(crate) wire: String,
    /// The versions it exists in, as far as literals say: a bound given
    /// as a change is open here ([`Field::since_change`],
    /// [`Field::removed_by`]).
    pub(crate) span: VersionSpan,
    /// The change it appears with (`since = CHANGE`), a `Change` const.
    pub(crate) since_change: Option<syn::Path>,
    /// The change that removes it (`removed = CHANGE`): it exists until
    /// the version before.
    pub(crate) removed_by: Option<syn::Path>,
    /// Where it differs from its usual form, in the order declared.
    pub(crate) forms: Vec<Form>,
    /// Its type is versioned too: serialized, read and described at the
    /// same version.
    pub(crate) nested: bool,
    /// A request may leave it out: an `Option` or `#[versioned(default)]`.
    pub(crate) optional: bool,
    /// Its doc comment, the description of its schema.
    pub(crate) doc: Option<String>,
}

/// A field's different form over some of its versions.
pub(crate) struct Form {
    pub(crate) span: VersionSpan,
    /// Its name on the wire there.
    pub(crate) rename: Option<String>,
    /// The type that stands for it on the wire there.
    pub(crate) via: Option<Type>,
}

impl Field {
    /// Its name on the wire under `form` (`None`: its usual form).
    pub(crate) fn name_in<'a>(&'a self, form: Option<&'a Form>) -> &'a str {
        form.and_then(|f| f.rename.as_deref()).unwrap_or(&self.wire)
    }
}

const ROLES: &str = "say what the type is for: `#[versioned(response)]` (serialized at a version), \
                     `#[versioned(request)]` (read at a version) or `#[versioned(response, request)]`";

/// Reads and checks the input.
pub(crate) fn read(input: &DeriveInput) -> syn::Result<Container> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "`Versioned` is derived for types without generic parameters; \
             make a versioned type per body, and nest them with `#[versioned(nested)]`",
        ));
    }
    let (mut response, mut request) = (false, false);
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("versioned"))
    {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("response") {
                response = true;
            } else if meta.path.is_ident("request") {
                request = true;
            } else {
                return Err(meta.error(format!("unknown container attribute; {ROLES}")));
            }
            Ok(())
        })?;
    }
    if !response && !request {
        return Err(syn::Error::new(input.ident.span(), ROLES));
    }
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            "`Versioned` is derived for structs with named fields",
        ));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new(
            data.fields.span(),
            "`Versioned` is derived for structs with named fields",
        ));
    };
    let fields = named
        .named
        .iter()
        .map(read_field)
        .collect::<syn::Result<Vec<_>>>()?;
    check_names(&fields)?;
    Ok(Container {
        ident: input.ident.clone(),
        response,
        request,
        fields,
    })
}

fn read_field(field: &syn::Field) -> syn::Result<Field> {
    let ident = field
        .ident
        .clone()
        .ok_or_else(|| syn::Error::new(field.span(), "a field without a name"))?;
    let mut wire = ident.to_string();
    if let Some(raw) = wire.strip_prefix("r#") {
        wire = raw.to_owned();
    }
    let (mut since, mut until) = (None, None);
    let (mut since_change, mut removed_by) = (None, None);
    let (mut forms, mut nested, mut default) = (Vec::new(), false, false);
    for attr in field
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("versioned"))
    {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("since") {
                match literal_or_change(&meta)? {
                    Bound::Literal(literal) => since = Some(version(&literal)?),
                    Bound::Change(path) => since_change = Some(path),
                }
            } else if meta.path.is_ident("until") {
                until = Some(version(&meta.value()?.parse()?)?);
            } else if meta.path.is_ident("removed") {
                match literal_or_change(&meta)? {
                    Bound::Literal(literal) => {
                        let (first_without, at) = version(&literal)?;
                        let last = first_without.previous_minor().ok_or_else(|| {
                            syn::Error::new(
                                at,
                                format!(
                                    "a field removed at {first_without} has no last version in \
                                     its major; write `until = \"X.Y\"`"
                                ),
                            )
                        })?;
                        until = Some((last, at));
                    }
                    Bound::Change(path) => removed_by = Some(path),
                }
            } else if meta.path.is_ident("rename") {
                wire = meta.value()?.parse::<LitStr>()?.value();
            } else if meta.path.is_ident("nested") {
                nested = true;
            } else if meta.path.is_ident("default") {
                default = true;
            } else if meta.path.is_ident("form") {
                forms.push(read_form(&meta)?);
            } else {
                return Err(meta.error(
                    "unknown field attribute; expected `since = \"X.Y\"` or `since = CHANGE`, \
                     `until = \"X.Y\"`, `removed = \"X.Y\"` or `removed = CHANGE`, \
                     `rename = \"name\"`, `nested`, `default` or \
                     `form(versions = \"X.Y - X.Y\", rename = \"name\", via = Type)`",
                ));
            }
            Ok(())
        })?;
    }
    if since.is_some() && since_change.is_some() {
        return Err(syn::Error::new(field.span(), "give `since` once"));
    }
    if until.is_some() && removed_by.is_some() {
        return Err(syn::Error::new(
            field.span(),
            "give one end: `until` (its last version) or `removed` (the change that removes it)",
        ));
    }
    let start = since.map_or(VersionSpan::ALL.start(), |(v, _)| v);
    let span = match until {
        Some((end, at)) => VersionSpan::between(start, end).map_err(|_| {
            syn::Error::new(
                at,
                format!("empty span: the field exists from {start} but its `until` is {end}"),
            )
        })?,
        None => VersionSpan::since(start),
    };
    let mut checked: Vec<Form> = Vec::new();
    for (form, at) in forms {
        if !span.covers(form.span) {
            return Err(syn::Error::new(
                at,
                format!(
                    "the form's versions ({}) reach outside the field's ({span})",
                    form.span
                ),
            ));
        }
        if let Some(other) = checked.iter().find(|o| o.span.overlaps(form.span)) {
            return Err(syn::Error::new(
                at,
                format!(
                    "the form's versions ({}) overlap another form's ({})",
                    form.span, other.span
                ),
            ));
        }
        if nested && form.via.is_some() {
            return Err(syn::Error::new(
                at,
                "a `nested` field's form cannot have a `via` type",
            ));
        }
        checked.push(form);
    }
    Ok(Field {
        optional: default || is_option(&field.ty),
        ident,
        ty: field.ty.clone(),
        wire,
        span,
        since_change,
        removed_by,
        forms: checked,
        nested,
        doc: doc(&field.attrs),
    })
}

fn read_form(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<(Form, Span)> {
    let at = meta.path.span();
    let (mut span, mut rename, mut via) = (None, None, None);
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("versions") {
            let literal: LitStr = inner.value()?.parse()?;
            span = Some(
                literal
                    .value()
                    .parse::<VersionSpan>()
                    .map_err(|e| syn::Error::new(literal.span(), e.to_string()))?,
            );
        } else if inner.path.is_ident("rename") {
            rename = Some(inner.value()?.parse::<LitStr>()?.value());
        } else if inner.path.is_ident("via") {
            via = Some(inner.value()?.parse::<Type>()?);
        } else {
            return Err(inner.error(
                "unknown form attribute; expected `versions = \"X.Y - X.Y\"`, `rename = \"name\"` or `via = Type`",
            ));
        }
        Ok(())
    })?;
    let span =
        span.ok_or_else(|| syn::Error::new(at, "a form needs `versions = \"X.Y - X.Y\"`"))?;
    if rename.is_none() && via.is_none() {
        return Err(syn::Error::new(
            at,
            "a form changes something: give it `rename = \"name\"`, `via = Type` or both",
        ));
    }
    Ok((Form { span, rename, via }, at))
}

/// A bound of a field's versions as written: a version literal, or the
/// path of a `Change` const.
enum Bound {
    Literal(LitStr),
    Change(syn::Path),
}

fn literal_or_change(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Bound> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        Ok(Bound::Literal(value.parse()?))
    } else {
        Ok(Bound::Change(value.parse()?))
    }
}

/// A version literal, read by the core's parser.
fn version(literal: &LitStr) -> syn::Result<(Version, Span)> {
    literal
        .value()
        .parse::<Version>()
        .map(|v| (v, literal.span()))
        .map_err(|e| syn::Error::new(literal.span(), e.to_string()))
}

/// No two fields answer to one name at one version.
fn check_names(fields: &[Field]) -> syn::Result<()> {
    let mut boundaries = vec![VersionSpan::ALL.start()];
    for field in fields {
        boundaries.extend(field.boundaries());
    }
    boundaries.sort_unstable();
    boundaries.dedup();
    // Fields bounded by a change are left out: their versions are known
    // only when the program is compiled, after the macro.
    for at in boundaries {
        let mut seen: Vec<(&str, &syn::Ident)> = Vec::new();
        for field in fields
            .iter()
            .filter(|f| !f.has_change_bound() && f.span.contains(at))
        {
            let name = field.name_in(field.form_at(at));
            if let Some((_, other)) = seen.iter().find(|(n, _)| *n == name) {
                return Err(syn::Error::new(
                    field.ident.span(),
                    format!(
                        "at {at}, fields `{other}` and `{}` would both be named `{name}`",
                        field.ident
                    ),
                ));
            }
            seen.push((name, &field.ident));
        }
    }
    Ok(())
}

impl Field {
    /// Whether a bound of its versions is a change's.
    pub(crate) fn has_change_bound(&self) -> bool {
        self.since_change.is_some() || self.removed_by.is_some()
    }

    /// The form it takes at `version`, if not its usual one.
    pub(crate) fn form_at(&self, version: Version) -> Option<&Form> {
        self.forms.iter().find(|f| f.span.contains(version))
    }

    /// The versions where its shape changes: where it appears, where it
    /// goes, and where each form begins and ends.
    pub(crate) fn boundaries(&self) -> Vec<Version> {
        let mut out = Vec::new();
        let mut push = |span: VersionSpan| {
            out.push(span.start());
            if let Some(end) = span.end().and_then(Version::next_minor) {
                out.push(end);
            }
        };
        push(self.span);
        for form in &self.forms {
            push(form.span);
        }
        out
    }
}

fn is_option(ty: &Type) -> bool {
    let Type::Path(path) = ty else { return false };
    path.qself.is_none()
        && path.path.segments.last().is_some_and(|s| {
            s.ident == "Option" && matches!(s.arguments, syn::PathArguments::AngleBracketed(_))
        })
}

/// The text of the `///` comments, lines joined as rustdoc joins them.
fn doc(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.join(" ").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
