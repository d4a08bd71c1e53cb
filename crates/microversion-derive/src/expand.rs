//! The code made from the model: a schema at each version always, a
//! serializer for a response, a deserializer for a request.

use microversion::{Version, VersionSpan};
use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Container, Field, Form};

/// Everything the derive emits, inside an anonymous const so that its
/// helper names cannot clash with the caller's.
pub(crate) fn expand(container: &Container) -> TokenStream {
    let schema = schema(container);
    let serialize = container.response.then(|| serialize(container));
    let deserialize = container.request.then(|| deserialize(container));
    let checks = container.fields.iter().map(change_checks);
    quote! {
        const _: () = {
            use ::microversion_server::versioned::__private as __p;
            #(#checks)*
            #schema
            #serialize
            #deserialize
        };
    }
}

fn version(v: Version) -> TokenStream {
    let (major, minor) = (v.major(), v.minor());
    quote! { __p::Version::new(#major, #minor) }
}

/// The test of `span`'s first version, if it has one below every version.
fn from_start(span: VersionSpan) -> Option<TokenStream> {
    (span.start() != VersionSpan::ALL.start()).then(|| {
        let start = version(span.start());
        quote! { __version >= #start }
    })
}

/// The test of `span`'s last version, if it has one.
fn to_end(span: VersionSpan) -> Option<TokenStream> {
    span.end().map(|end| {
        let end = version(end);
        quote! { __version <= #end }
    })
}

/// An expression: both tests, those given.
fn both(start: Option<TokenStream>, end: Option<TokenStream>) -> TokenStream {
    match (start, end) {
        (Some(s), Some(e)) => quote! { (#s && #e) },
        (Some(s), None) => s,
        (None, Some(e)) => e,
        (None, None) => quote! { true },
    }
}

/// An expression: whether `__version` lies in `span`.
fn contains(span: VersionSpan) -> TokenStream {
    both(from_start(span), to_end(span))
}

/// An expression: whether the field exists at `__version`, its bounds
/// given as changes read from their consts.
fn present(field: &Field) -> TokenStream {
    let start = match &field.since_change {
        Some(change) => Some(quote! { __version >= #change.version() }),
        None => from_start(field.span),
    };
    let end = match &field.removed_by {
        Some(change) => Some(quote! { __version < #change.version() }),
        None => to_end(field.span),
    };
    both(start, end)
}

/// Checks, made when the program is compiled, of what the macro cannot
/// see: a field's change bounds in order, its forms inside them.
fn change_checks(field: &Field) -> TokenStream {
    let name = field.ident.to_string();
    let mut checks = Vec::new();
    let start = field.since_change.as_ref().map(|c| quote! { #c.version() });
    let end_before = field.removed_by.as_ref().map(|c| quote! { #c.version() });
    if let (Some(start), Some(end)) = (&start, &end_before) {
        let message =
            format!("field `{name}`: its `since` change must come before its `removed` one");
        checks.push(quote! { assert!(__p::version_before(#start, #end), #message); });
    }
    if let (Some(start), Some(last)) = (&start, field.span.end()) {
        let last = version(last);
        let message = format!("field `{name}`: its `since` change comes after its `until`");
        checks.push(quote! { assert!(!__p::version_before(#last, #start), #message); });
    }
    if let (Some(end), true) = (&end_before, field.span.start() != VersionSpan::ALL.start()) {
        let first = version(field.span.start());
        let message = format!("field `{name}`: its `removed` change comes before its `since`");
        checks.push(quote! { assert!(__p::version_before(#first, #end), #message); });
    }
    for form in &field.forms {
        let message = format!(
            "field `{name}`: the form's versions ({}) reach outside the field's",
            form.span
        );
        if let Some(start) = &start {
            let first = version(form.span.start());
            checks.push(quote! { assert!(!__p::version_before(#first, #start), #message); });
        }
        if let Some(end) = &end_before {
            let check = match form.span.end() {
                Some(last) => {
                    let last = version(last);
                    quote! { __p::version_before(#last, #end) }
                }
                None => quote! { false },
            };
            checks.push(quote! { assert!(#check, #message); });
        }
    }
    if checks.is_empty() {
        return TokenStream::new();
    }
    quote! { const _: () = { #(#checks)* }; }
}

/// An expression: which of the field's forms `__version` is in
/// (0 for its usual one, `i + 1` for `forms[i]`).
fn form_index(field: &Field) -> TokenStream {
    let mut chain = quote! { 0usize };
    for (i, form) in field.forms.iter().enumerate().rev() {
        let test = contains(form.span);
        let index = i + 1;
        chain = quote! { if #test { #index } else { #chain } };
    }
    chain
}

/// The field's forms, its usual one first, as (index, form).
fn forms(field: &Field) -> impl Iterator<Item = (usize, Option<&Form>)> {
    std::iter::once((0, None)).chain(
        field
            .forms
            .iter()
            .enumerate()
            .map(|(i, f)| (i + 1, Some(f))),
    )
}

/// A statement: when `present`, the arm of the form `index` names, one
/// arm per form of the field.
fn per_form(
    present: &TokenStream,
    index: &TokenStream,
    arms: impl Iterator<Item = TokenStream>,
) -> TokenStream {
    quote! {
        if #present {
            match #index {
                #(#arms)*
                _ => {}
            }
        }
    }
}

fn schema(container: &Container) -> TokenStream {
    let ident = &container.ident;
    let title = ident.to_string();
    let boundaries = container.fields.iter().map(|field| {
        let pushed = field.boundaries().into_iter().map(|v| {
            let v = version(v);
            quote! { __out.push(#v); }
        });
        let changes = field
            .since_change
            .iter()
            .chain(&field.removed_by)
            .map(|change| quote! { __out.push(#change.version()); });
        let nested = field.nested.then(|| {
            let ty = &field.ty;
            quote! { <#ty as __p::VersionedSchema>::boundaries(__out); }
        });
        quote! { #(#pushed)* #(#changes)* #nested }
    });
    let properties = container.fields.iter().map(|field| {
        let present = present(field);
        let index = form_index(field);
        let ty = &field.ty;
        let required = !(container.request && field.optional);
        let description = field
            .doc
            .as_ref()
            .map_or_else(|| quote! { None }, |d| quote! { Some(#d) });
        let arms = forms(field).map(|(i, form)| {
            let name = field.name_in(form);
            let schema = match form.and_then(|f| f.via.as_ref()) {
                Some(via) => quote! { __generator.subschema_for::<#via>() },
                None if field.nested => {
                    quote! { <#ty as __p::VersionedSchema>::schema_at(__version, __generator) }
                }
                None => quote! { __generator.subschema_for::<#ty>() },
            };
            quote! { #i => __object.property(#name, #schema, #required, #description), }
        });
        per_form(&present, &index, arms)
    });
    quote! {
        impl __p::VersionedSchema for #ident {
            fn boundaries(__out: &mut __p::Vec<__p::Version>) {
                #(#boundaries)*
            }

            fn schema_at(
                __version: __p::Version,
                __generator: &mut __p::SchemaGenerator,
            ) -> __p::Schema {
                let mut __object = __p::ObjectSchema::new(#title);
                #(#properties)*
                __object.finish()
            }
        }
    }
}

fn serialize(container: &Container) -> TokenStream {
    let ident = &container.ident;
    let title = ident.to_string();
    let counted = container.fields.iter().map(|field| {
        let present = present(field);
        quote! { if #present { __len += 1; } }
    });
    let written = container.fields.iter().map(|field| {
        let present = present(field);
        let index = form_index(field);
        let member = &field.ident;
        let ty = &field.ty;
        let arms = forms(field).map(|(i, form)| {
            let name = field.name_in(form);
            let value = match form.and_then(|f| f.via.as_ref()) {
                Some(via) => {
                    quote! { &<#via as ::core::convert::From<&#ty>>::from(&self.#member) }
                }
                None if field.nested => quote! { &__p::At::new(&self.#member, __version) },
                None => quote! { &self.#member },
            };
            quote! { #i => __p::SerializeStruct::serialize_field(&mut __state, #name, #value)?, }
        });
        per_form(&present, &index, arms)
    });
    quote! {
        impl __p::SerializeAt for #ident {
            fn serialize_at<__S: __p::Serializer>(
                &self,
                __version: __p::Version,
                __serializer: __S,
            ) -> ::core::result::Result<__S::Ok, __S::Error> {
                let mut __len = 0usize;
                #(#counted)*
                let mut __state = __p::Serializer::serialize_struct(__serializer, #title, __len)?;
                #(#written)*
                __p::SerializeStruct::end(__state)
            }
        }
    }
}

fn deserialize(container: &Container) -> TokenStream {
    let ident = &container.ident;
    let expecting = format!("struct {ident}");
    // Every distinct name on the wire, at any version: a key is looked up
    // once, then its arm checks that it means something at this version.
    let mut names: Vec<&str> = Vec::new();
    for field in &container.fields {
        for (_, form) in forms(field) {
            let name = field.name_in(form);
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let position = |name: &str| names.iter().position(|n| *n == name).unwrap_or_default();
    let slots: Vec<_> = (0..container.fields.len())
        .map(|i| quote::format_ident!("__field{i}"))
        .collect();
    let states = container.fields.iter().zip(&slots).map(|(field, slot)| {
        let ty = &field.ty;
        let present = present(field);
        let index = form_index(field);
        let form = quote::format_ident!("{slot}_form");
        let here = quote::format_ident!("{slot}_here");
        quote! {
            let mut #slot: ::core::option::Option<#ty> = None;
            let #here: bool = #present;
            let #form: usize = #index;
        }
    });
    let arms = container.fields.iter().zip(&slots).flat_map(|(field, slot)| {
        let ty = &field.ty;
        let form_var = quote::format_ident!("{slot}_form");
        let here = quote::format_ident!("{slot}_here");
        forms(field)
            .map(|(i, form)| {
                let name = field.name_in(form);
                let key = position(name);
                let value = match form.and_then(|f| f.via.as_ref()) {
                    Some(via) => quote! {
                        <#via as ::core::convert::Into<#ty>>::into(
                            __p::MapAccess::next_value::<#via>(&mut __map)?,
                        )
                    },
                    None if field.nested => quote! {
                        __p::MapAccess::next_value_seed(&mut __map, __p::AtSeed::<#ty>::new(__version))?
                    },
                    None => quote! { __p::MapAccess::next_value::<#ty>(&mut __map)? },
                };
                quote! {
                    __p::Key::Known(#key) if #here && #form_var == #i => {
                        if #slot.is_some() {
                            return Err(<__A::Error as __p::DeError>::duplicate_field(#name));
                        }
                        #slot = Some(#value);
                    }
                }
            })
            .collect::<Vec<_>>()
    });
    let accepted = container.fields.iter().zip(&slots).map(|(field, slot)| {
        let form_var = quote::format_ident!("{slot}_form");
        let here = quote::format_ident!("{slot}_here");
        let arms = forms(field).map(|(i, form)| {
            let name = field.name_in(form);
            quote! { #i => __accepted.push(#name), }
        });
        per_form(&quote! { #here }, &quote! { #form_var }, arms)
    });
    let finished = container.fields.iter().zip(&slots).map(|(field, slot)| {
        let member = &field.ident;
        let form_var = quote::format_ident!("{slot}_form");
        let here = quote::format_ident!("{slot}_here");
        let missing = if field.optional {
            quote! { ::core::default::Default::default() }
        } else {
            let names = forms(field).map(|(i, form)| {
                let name = field.name_in(form);
                quote! { #i => #name, }
            });
            quote! {
                return Err(<__A::Error as __p::DeError>::missing_field(match #form_var {
                    #(#names)*
                    _ => "",
                }))
            }
        };
        // A field of every version needs no default; one of some
        // versions takes its type's default where it does not exist.
        if field.span.is_all() && !field.has_change_bound() {
            quote! {
                #member: match #slot {
                    Some(__value) => __value,
                    None => { #missing }
                },
            }
        } else {
            quote! {
                #member: match #slot {
                    Some(__value) => __value,
                    None if #here => { #missing }
                    None => ::core::default::Default::default(),
                },
            }
        }
    });
    let name_count = names.len();
    quote! {
        impl<'de> __p::DeserializeAt<'de> for #ident {
            fn deserialize_at<__D: __p::Deserializer<'de>>(
                __version: __p::Version,
                __deserializer: __D,
            ) -> ::core::result::Result<Self, __D::Error> {
                static __NAMES: [&str; #name_count] = [#(#names),*];

                struct __Visitor {
                    version: __p::Version,
                }

                impl<'de> __p::Visitor<'de> for __Visitor {
                    type Value = #ident;

                    fn expecting(&self, __f: &mut __p::Formatter<'_>) -> __p::FmtResult {
                        __f.write_str(#expecting)
                    }

                    fn visit_map<__A: __p::MapAccess<'de>>(
                        self,
                        mut __map: __A,
                    ) -> ::core::result::Result<#ident, __A::Error> {
                        let __version = self.version;
                        #(#states)*
                        while let Some(__key) =
                            __p::MapAccess::next_key_seed(&mut __map, __p::KeySeed::new(&__NAMES))?
                        {
                            match __key {
                                #(#arms)*
                                __other => {
                                    let mut __accepted: __p::Vec<&'static str> = __p::Vec::new();
                                    #(#accepted)*
                                    return Err(__p::refuse_field(__other, &__NAMES, __version, &__accepted));
                                }
                            }
                        }
                        Ok(#ident {
                            #(#finished)*
                        })
                    }
                }

                __p::Deserializer::deserialize_map(__deserializer, __Visitor { version: __version })
            }
        }
    }
}
