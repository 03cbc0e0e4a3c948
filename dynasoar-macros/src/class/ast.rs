//! Parsing `#[soa_class(...)] struct ...`.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{Attribute, Fields, Ident, Item, Type, Visibility};

/// A parsed class.
pub struct Class {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ident: Ident,
    pub parent: Option<syn::Path>,
    pub is_abstract: bool,
    pub fields: Vec<Field>,
    /// Spans of things the validator rejects, found while parsing.
    pub generics: syn::Generics,
}

pub struct Field {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ident: Ident,
    pub ty: Type,
    pub atomic: bool,
    /// `#[group(name)]`: stored with the other fields of the group, one record per object.
    pub group: Option<Ident>,
    pub span: Span,
}

impl Class {
    pub fn parse(args: TokenStream, input: TokenStream) -> syn::Result<Self> {
        let (parent, is_abstract) = parse_args(args)?;
        let item: Item = syn::parse2(input)?;
        let s = match item {
            Item::Struct(s) => s,
            Item::Enum(e) => {
                return Err(syn::Error::new(
                    e.enum_token.span(),
                    "#[soa_class] is for structs with named fields: an enum cannot be a SOA class \
                     (give the class a field that says which variant it is, or use subclasses)",
                ));
            }
            Item::Union(u) => {
                return Err(syn::Error::new(
                    u.union_token.span(),
                    "#[soa_class] is for structs with named fields: a union cannot be a SOA class",
                ));
            }
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "#[soa_class] is for structs with named fields: `struct Name { field: Type, ... }`",
                ));
            }
        };
        let named = match s.fields {
            Fields::Named(named) => named,
            Fields::Unnamed(f) => {
                return Err(syn::Error::new_spanned(
                    &f,
                    "a SOA class needs named fields: each field becomes its own array, accessed by name",
                ));
            }
            Fields::Unit => {
                return Err(syn::Error::new(
                    s.ident.span(),
                    "a SOA class needs named fields (`struct Name { field: Type, ... }`)",
                ));
            }
        };
        let mut fields = Vec::new();
        for f in named.named {
            let span = f.span();
            let mut atomic = false;
            let mut group = None;
            let mut attrs = Vec::new();
            for attr in f.attrs {
                if attr.path().is_ident("atomic") {
                    if !matches!(attr.meta, syn::Meta::Path(_)) {
                        return Err(syn::Error::new_spanned(
                            &attr,
                            "`#[atomic]` takes no arguments: write `#[atomic]` on the field",
                        ));
                    }
                    atomic = true;
                } else if attr.path().is_ident("group") {
                    let name = match &attr.meta {
                        syn::Meta::List(list) => syn::parse2::<Ident>(list.tokens.clone()).ok(),
                        _ => None,
                    };
                    let Some(name) = name else {
                        return Err(syn::Error::new_spanned(
                            &attr,
                            "`#[group]` takes one name: write `#[group(name)]` on each field of the \
                             group (its fields are stored together, one record per object)",
                        ));
                    };
                    if group.is_some() {
                        return Err(syn::Error::new_spanned(
                            &attr,
                            "a field belongs to at most one group: keep one `#[group(..)]`",
                        ));
                    }
                    group = Some(name);
                } else {
                    attrs.push(attr);
                }
            }
            fields.push(Field {
                attrs,
                vis: f.vis,
                ident: f.ident.expect("named field"),
                ty: f.ty,
                atomic,
                group,
                span,
            });
        }
        Ok(Class {
            attrs: s.attrs,
            vis: s.vis,
            ident: s.ident,
            parent,
            is_abstract,
            fields,
            generics: s.generics,
        })
    }
}

/// `extends = Path` and `abstract`, in any order.
fn parse_args(args: TokenStream) -> syn::Result<(Option<syn::Path>, bool)> {
    let mut parent: Option<syn::Path> = None;
    let mut is_abstract = false;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("extends") {
            if parent.is_some() {
                return Err(
                    meta.error("a class has at most one parent: dynasoar supports single inheritance only")
                );
            }
            parent = Some(meta.value()?.parse()?);
            Ok(())
        } else if meta.path.is_ident("abstract") {
            if is_abstract {
                return Err(meta.error("`abstract` given twice; write it once"));
            }
            is_abstract = true;
            Ok(())
        } else {
            let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_else(|| "?".into());
            Err(meta.error(format!(
                "unknown #[soa_class] option `{name}`: expected `extends = Parent` or `abstract`"
            )))
        }
    });
    syn::parse::Parser::parse2(parser, args)?;
    Ok((parent, is_abstract))
}
