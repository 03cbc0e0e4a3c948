//! `#[derive(Plain)]`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput};

use crate::kernel::quote_check_plain;

pub fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let fields = match &input.data {
        Data::Struct(s) => &s.fields,
        Data::Enum(e) => {
            return Err(syn::Error::new(
                e.enum_token.span(),
                "`Plain` is for structs; an enum's discriminant may take invalid values",
            ));
        }
        Data::Union(u) => {
            return Err(syn::Error::new(u.union_token.span(), "`Plain` is for structs, not unions"));
        }
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "`Plain` structs cannot be generic: device memory needs one concrete layout",
        ));
    }
    if !has_stable_repr(input) {
        return Err(syn::Error::new(
            input.ident.span(),
            "`Plain` needs `#[repr(C)]` (or `#[repr(transparent)]`) so that the host and the GPU \
             agree on the layout",
        ));
    }
    let ident = &input.ident;
    let checks = fields.iter().map(|f| quote_check_plain(&f.ty));
    Ok(quote! {
        // SAFETY: `repr(C)` (checked by the derive) and every field is plain data (asserted
        // below at each field's type).
        unsafe impl ::dynasoar::__private::Plain for #ident {}
        #(#checks)*
    })
}

fn has_stable_repr(input: &DeriveInput) -> bool {
    input.attrs.iter().any(|attr| {
        if !attr.path().is_ident("repr") {
            return false;
        }
        let mut stable = false;
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") || meta.path.is_ident("transparent") {
                stable = true;
            }
            Ok(())
        });
        stable
    })
}
