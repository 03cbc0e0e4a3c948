//! `#[kernel]`: one Rust function, a PTX entry point and a typed host token.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, ReturnType};

/// Options of `#[kernel(...)]`.
struct KernelArgs {
    /// Path of the runtime (`crate` inside dynasoar-device itself).
    krate: syn::Path,
    /// Name of the PTX entry point (default: the function's name).
    name: Option<syn::LitStr>,
}

impl KernelArgs {
    fn parse(args: TokenStream) -> syn::Result<Self> {
        let mut out = KernelArgs { krate: syn::parse_quote!(::dynasoar::__private), name: None };
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("crate") {
                out.krate = meta.value()?.parse()?;
                Ok(())
            } else if meta.path.is_ident("name") {
                out.name = Some(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error("unknown #[kernel] option: expected `name = \"...\"`"))
            }
        });
        syn::parse::Parser::parse2(parser, args)?;
        Ok(out)
    }
}

pub fn expand(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    let args = KernelArgs::parse(args)?;
    let func: ItemFn = syn::parse2(input)?;
    let sig = &func.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            "a kernel cannot be generic: its PTX entry point needs one concrete name",
        ));
    }
    if sig.asyncness.is_some() || sig.constness.is_some() || sig.unsafety.is_some() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "a kernel is a plain, safe `fn`: remove `async`, `const` or `unsafe`",
        ));
    }
    if !matches!(sig.output, ReturnType::Default) {
        return Err(syn::Error::new_spanned(
            &sig.output,
            "a kernel returns nothing: it writes its results to device memory (a `DevPtr` in its parameter struct)",
        ));
    }
    let param_ty = match (sig.inputs.len(), sig.inputs.first()) {
        (1, Some(FnArg::Typed(pat))) => &pat.ty,
        _ => {
            let message = "a kernel takes exactly one parameter: a `#[repr(C)]` struct deriving `Plain`";
            return Err(if sig.inputs.is_empty() {
                syn::Error::new(sig.paren_token.span.join(), message)
            } else {
                syn::Error::new_spanned(&sig.inputs, message)
            });
        }
    };

    let name = &sig.ident;
    let export = args.name.map(|n| n.value()).unwrap_or_else(|| name.to_string());
    let entry = format_ident!("__dynasoar_kernel_{}", name);
    let token = syn::Ident::new(&name.to_string().to_uppercase(), name.span());
    let vis = &func.vis;
    let doc = format!("Launch token of the kernel [`{name}`] (PTX entry `{export}`).");
    let krate = &args.krate;
    let check = quote_check_plain_in(param_ty, krate);

    Ok(quote! {
        // Inlined into the PTX entry point: otherwise LLVM may call the body out of line with
        // the parameters copied to the stack.
        #[cfg_attr(target_arch = "nvptx64", inline(always))]
        #func

        #[cfg(target_arch = "nvptx64")]
        #[doc(hidden)]
        #[unsafe(export_name = #export)]
        pub unsafe extern "ptx-kernel" fn #entry(params: #param_ty) {
            #krate::arch::wait_for_prior_grids();
            #name(params)
        }

        #[doc = #doc]
        #vis const #token: #krate::Kernel<#param_ty> = #krate::Kernel::new(#export, #name);

        #check
    })
}

/// A compile-time assertion that `ty` is plain data, reported at `ty`'s span.
pub fn quote_check_plain(ty: &syn::Type) -> TokenStream {
    quote_check_plain_in(ty, &syn::parse_quote!(::dynasoar::__private))
}

fn quote_check_plain_in(ty: &syn::Type, krate: &syn::Path) -> TokenStream {
    let span = ty.span();
    quote::quote_spanned! {span=>
        const _: fn() = || {
            fn assert_plain<T: #krate::Plain>() {}
            assert_plain::<#ty>();
        };
    }
}
