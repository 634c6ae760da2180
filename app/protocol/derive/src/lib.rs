//! `#[derive(FromJson)]`: a wire type's browser decoder (`luna_protocol::json::FromJson`),
//! generated from the same `#[serde(...)]` attributes its `Deserialize` reads.
//!
//! serde's derived visitors, monomorphized for a `Deserializer`, were a sixth of the
//! browser's main module; the code generated here is a few calls per field into
//! `luna_protocol::json`'s shared helpers. It accepts what the derived `Deserialize`
//! accepts for the attributes below (`json::conformance` compares the two) and refuses
//! to compile any other serde attribute, or one in a place it does not handle, so a new
//! attribute cannot make the two decoders drift apart silently.
//!
//! Supported: structs with named fields (`rename`, `default`, `default = "path"`,
//! `flatten` of a `Map<String, Value>`, `skip_serializing_if`), newtype structs, unit
//! enums and externally tagged enums with unit, newtype and struct variants, internally
//! tagged enums (`tag = "…"`), untagged enums of newtype variants, `rename_all`
//! (`snake_case`, `SCREAMING_SNAKE_CASE`, `lowercase`) and variant `rename`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::{parse_macro_input, Data, DeriveInput, Fields, LitStr};

#[proc_macro_derive(FromJson)]
pub fn derive_from_json(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The serde attributes of a container, a variant or a field that decoding depends on.
#[derive(Default)]
struct Attrs {
    rename: Option<String>,
    rename_all: Option<String>,
    tag: Option<String>,
    untagged: bool,
    default: Option<Option<syn::Path>>,
    flatten: bool,
}

fn attrs(list: &[syn::Attribute]) -> syn::Result<Attrs> {
    let mut out = Attrs::default();
    for attr in list.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            let text = |meta: &syn::meta::ParseNestedMeta| -> syn::Result<String> {
                Ok(meta.value()?.parse::<LitStr>()?.value())
            };
            match key.as_str() {
                "rename" => out.rename = Some(text(&meta)?),
                "rename_all" => out.rename_all = Some(text(&meta)?),
                "tag" => out.tag = Some(text(&meta)?),
                "untagged" => out.untagged = true,
                "flatten" => out.flatten = true,
                "default" => {
                    out.default = Some(if meta.input.peek(syn::Token![=]) {
                        Some(syn::parse_str::<syn::Path>(&text(&meta)?)?)
                    } else {
                        None
                    })
                }
                // Serialization only: decoding does not change.
                "skip_serializing_if" => {
                    text(&meta)?;
                }
                _ => {
                    return Err(meta.error(format!(
                        "FromJson does not support #[serde({key})]; teach luna-protocol-derive \
                         what serde does with it"
                    )))
                }
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// serde's `rename_all` for a variant name (`DejarNota`) or a field name (`turn_id`).
fn rename(name: &str, rule: Option<&str>, is_variant: bool) -> syn::Result<String> {
    let snake = if is_variant {
        let mut s = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                s.push('_');
            }
            s.push(c.to_ascii_lowercase());
        }
        s
    } else {
        name.to_owned()
    };
    match rule {
        None => Ok(name.to_owned()),
        Some("snake_case") => Ok(snake),
        Some("SCREAMING_SNAKE_CASE") => Ok(snake.to_ascii_uppercase()),
        // serde leaves field names as they are under `lowercase`.
        Some("lowercase") if is_variant => Ok(name.to_lowercase()),
        Some("lowercase") => Ok(name.to_owned()),
        Some(other) => Err(syn::Error::new(
            Span::call_site(),
            format!("FromJson does not support rename_all = \"{other}\""),
        )),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let container = attrs(&input.attrs)?;
    let name = &input.ident;
    // serde's container `default` fills missing fields from `Default`; none is handled.
    let tagging = container.tag.is_some() || container.untagged;
    if container.default.is_some()
        || container.flatten
        || (tagging && !matches!(input.data, Data::Enum(_)))
    {
        return Err(syn::Error::new_spanned(
            name,
            "FromJson: unsupported container attribute",
        ));
    }
    let json = quote!(::luna_protocol::json);
    let body = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(_) => {
                let build =
                    named_fields(&quote!(#name), &s.fields, container.rename_all.as_deref())?;
                quote! {
                    let mut fields = #json::Fields::new(value, concat!("struct ", stringify!(#name)))?;
                    #build
                }
            }
            Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                quote!(::core::result::Result::Ok(#name(#json::FromJson::from_json(value)?)))
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    name,
                    "FromJson: only structs with named fields and newtype structs",
                ))
            }
        },
        Data::Enum(e) => enum_body(name, e, &container)?,
        Data::Union(_) => return Err(syn::Error::new_spanned(name, "FromJson: no unions")),
    };
    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!(#json::FromJson));
    }
    let (imp, ty, wh) = generics.split_for_impl();
    Ok(quote! {
        impl #imp #json::FromJson for #name #ty #wh {
            #[allow(unused_variables, unused_mut)]
            fn from_json(value: ::serde_json::Value) -> ::core::result::Result<Self, #json::ReadError> {
                #body
            }
        }
    })
}

/// Reads every named field out of `fields` (a `json::Fields`), then builds `path { … }`.
/// A flattened field takes what is left, so it is read last.
fn named_fields(path: &Tokens, fields: &Fields, rule: Option<&str>) -> syn::Result<Tokens> {
    let mut reads = Vec::new();
    let mut flattened = Vec::new();
    let mut names = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let a = attrs(&field.attrs)?;
        let ident = field.ident.clone().expect("named field");
        let var = format_ident!("field_{i}");
        let key = match a.rename {
            Some(key) => key,
            None => rename(ident.to_string().trim_start_matches("r#"), rule, false)?,
        };
        let read = match (a.flatten, a.default) {
            (true, _) => {
                flattened.push(quote!(let #var = fields.rest();));
                names.push(quote!(#ident: #var));
                continue;
            }
            (false, None) => quote!(fields.field(#key)?),
            (false, Some(None)) => quote!(fields.or_else(#key, ::core::default::Default::default)?),
            (false, Some(Some(f))) => quote!(fields.or_else(#key, #f)?),
        };
        reads.push(quote!(let #var = #read;));
        names.push(quote!(#ident: #var));
    }
    Ok(quote! {
        #(#reads)*
        #(#flattened)*
        ::core::result::Result::Ok(#path { #(#names),* })
    })
}

fn enum_body(name: &syn::Ident, e: &syn::DataEnum, container: &Attrs) -> syn::Result<Tokens> {
    let json = quote!(::luna_protocol::json);
    if container.untagged {
        let mut tries = Vec::new();
        for v in &e.variants {
            let ident = &v.ident;
            match &v.fields {
                Fields::Unnamed(f) if f.unnamed.len() == 1 => tries.push(quote! {
                    if let ::core::result::Result::Ok(inner) =
                        #json::FromJson::from_json(value.clone())
                    {
                        return ::core::result::Result::Ok(#name::#ident(inner));
                    }
                }),
                _ => {
                    return Err(syn::Error::new_spanned(
                        ident,
                        "FromJson: untagged enums of newtype variants only",
                    ))
                }
            }
        }
        return Ok(quote! {
            #(#tries)*
            ::core::result::Result::Err(#json::ReadError::untagged(stringify!(#name)))
        });
    }
    let mut arms = Vec::new();
    let mut wire_names = Vec::new();
    for v in &e.variants {
        let a = attrs(&v.attrs)?;
        // A variant's `rename_all` renames its fields in serde; not handled here.
        if a.default.is_some()
            || a.flatten
            || a.tag.is_some()
            || a.untagged
            || a.rename_all.is_some()
        {
            return Err(syn::Error::new_spanned(
                &v.ident,
                "FromJson: unsupported variant attribute",
            ));
        }
        let ident = &v.ident;
        let wire = match a.rename {
            Some(w) => w,
            None => rename(&ident.to_string(), container.rename_all.as_deref(), true)?,
        };
        wire_names.push(wire.clone());
        let tagged = container.tag.is_some();
        let payload = if tagged {
            quote!(rest)
        } else {
            quote!(#json::payload(payload)?)
        };
        let build = match (&v.fields, tagged) {
            (Fields::Unit, true) => quote!(::core::result::Result::Ok(#name::#ident)),
            (Fields::Unit, false) => quote! {
                #json::unit_variant(payload)?;
                ::core::result::Result::Ok(#name::#ident)
            },
            (Fields::Unnamed(f), _) if f.unnamed.len() == 1 => {
                quote!(::core::result::Result::Ok(#name::#ident(#json::FromJson::from_json(#payload)?)))
            }
            (Fields::Named(_), _) => {
                let build = named_fields(&quote!(#name::#ident), &v.fields, None)?;
                quote! {
                    let mut fields = #json::Fields::new(#payload, concat!("struct variant ", stringify!(#name), "::", stringify!(#ident)))?;
                    #build
                }
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    ident,
                    "FromJson: tuple variants of more than one field are not supported",
                ))
            }
        };
        arms.push(quote!(#wire => { #build }));
    }
    let split = match &container.tag {
        Some(tag) => quote!(let (variant, rest) = #json::split(value, #tag)?;),
        None => quote!(let (variant, payload) = #json::variant(value)?;),
    };
    Ok(quote! {
        const VARIANTS: &[&str] = &[#(#wire_names),*];
        #split
        match variant.as_str() {
            #(#arms)*
            other => ::core::result::Result::Err(#json::ReadError::unknown_variant(other, VARIANTS)),
        }
    })
}
