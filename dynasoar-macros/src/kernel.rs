//! `#[kernel]`: one Rust function, a PTX entry point and a typed host token.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, ReturnType};

pub fn expand(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    if !args.is_empty() {
        return Err(syn::Error::new(args.span(), "#[kernel] takes no arguments"));
    }
    let func: ItemFn = syn::parse2(input)?;
    let sig = &func.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "a kernel cannot be generic: its PTX entry point needs one concrete name",
        ));
    }
    if sig.asyncness.is_some() || sig.constness.is_some() || sig.unsafety.is_some() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "a kernel is a plain, safe `fn`",
        ));
    }
    if !matches!(sig.output, ReturnType::Default) {
        return Err(syn::Error::new(
            sig.output.span(),
            "a kernel returns nothing",
        ));
    }
    let param_ty = match (sig.inputs.len(), sig.inputs.first()) {
        (1, Some(FnArg::Typed(pat))) => &pat.ty,
        _ => {
            return Err(syn::Error::new(
                sig.inputs.span(),
                "a kernel takes exactly one parameter: a `#[repr(C)]` struct deriving `Plain`",
            ));
        }
    };

    let name = &sig.ident;
    let name_str = name.to_string();
    let entry = format_ident!("__dynasoar_kernel_{}", name);
    let token = syn::Ident::new(&name_str.to_uppercase(), name.span());
    let vis = &func.vis;
    let doc = format!("Launch token of the kernel [`{name_str}`].");
    let check = quote_check_plain(param_ty);

    Ok(quote! {
        #func

        #[cfg(target_arch = "nvptx64")]
        #[doc(hidden)]
        #[unsafe(export_name = #name_str)]
        pub unsafe extern "ptx-kernel" fn #entry(params: #param_ty) {
            #name(params)
        }

        #[doc = #doc]
        #vis const #token: ::dynasoar::__private::Kernel<#param_ty> =
            ::dynasoar::__private::Kernel::new(#name_str, #name);

        #check
    })
}

/// A compile-time assertion that `ty` is plain data, reported at `ty`'s span.
pub fn quote_check_plain(ty: &syn::Type) -> TokenStream {
    let span = ty.span();
    quote::quote_spanned! {span=>
        const _: fn() = || {
            fn assert_plain<T: ::dynasoar::__private::Plain>() {}
            assert_plain::<#ty>();
        };
    }
}
