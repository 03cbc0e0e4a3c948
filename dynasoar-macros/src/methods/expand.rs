//! Code generation for `#[soa_methods]`: per launchable method, the body kept as a hidden
//! associated function, a launch token under the method's name, a kernel body and, on nvptx,
//! its PTX entry point.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::ast::{Effects, Kind, Launchable, Methods};
use crate::kernel::quote_check_plain;

pub fn expand(m: &Methods) -> TokenStream {
    let p = quote!(::dynasoar::__private);
    let class = &m.class;
    let self_ty = &m.item.self_ty;
    let mut inner = Vec::new();
    let mut outer = Vec::new();
    // The arguments' plain-data checks come first, so that a non-plain argument's first error
    // says so (the token and kernel that use the type fail too).
    let arg_checks = m.launchable.iter().filter_map(|l| l.arg.as_ref()).map(quote_check_plain);
    for l in &m.launchable {
        let (assoc, free) = launchable(&p, class, self_ty, l);
        inner.push(assoc);
        outer.push(free);
    }
    let attrs = &m.item.attrs;
    let items = &m.item.items;
    quote! {
        #(#arg_checks)*
        #(#attrs)*
        impl #self_ty {
            #(#items)*
            #(#inner)*
        }
        #(#outer)*
    }
}

fn launchable(
    p: &TokenStream,
    class: &syn::Ident,
    self_ty: &syn::Type,
    l: &Launchable,
) -> (TokenStream, TokenStream) {
    let func = &l.func;
    let name = &func.sig.ident;
    let vis = &func.vis;
    let hidden = format_ident!("__dynasoar_{}", name);
    let arg_ty = l.arg.clone().unwrap_or_else(|| syn::parse_quote!(()));
    let pass_arg = l.arg.as_ref().map(|_| quote!(, arg));
    let docs = func.attrs.iter().filter(|a| a.path().is_ident("doc"));
    let other_attrs = func.attrs.iter().filter(|a| !a.path().is_ident("doc"));
    let (sig_inputs, sig_output, block) = (&func.sig.inputs, &func.sig.output, &func.block);
    let body_fn = quote! {
        #[doc(hidden)]
        #[inline(always)]
        #(#other_attrs)*
        pub fn #hidden(#sig_inputs) #sig_output #block
    };
    let host_fn = format_ident!("__dynasoar_kernel_{}_{}_{}", l.allocator, class, name);
    let entry_fn = format_ident!("__dynasoar_entry_{}_{}_{}", l.allocator, class, name);
    // The method token of a `#[parallel]` method also carries its effects.
    let effects = match &l.kind {
        Kind::Parallel { effects, .. } => Some(effects_value(p, &l.allocator, effects)),
        Kind::New => None,
    };

    let (lanes, dense, pairs) = match &l.kind {
        Kind::Parallel { lanes, dense, pairs, .. } => (*lanes, *dense, *pairs),
        Kind::New => (1, false, false),
    };
    // The body of a do-all kernel of the method, with loop `DoAll::#lp`. On the CPU backend the
    // call of the method is inlined into the do-all loop (with `run_parallel_do`'s own closure,
    // see there); on the GPU everything is inlined anyway.
    let do_all_body = |read_only: bool, lp: TokenStream, export: &str| {
        let this = if read_only { quote!(this.as_ref()) } else { quote!(this) };
        quote! {
            #p::parallel::run_parallel_do::<#self_ty, #arg_ty>(params, const { #p::kernel_tag(#export) }, #effects, #p::parallel::DoAll::#lp, #p::parallel::Lanes { lanes: #lanes, dense: #dense, pairs: #pairs }, #[cfg_attr(not(target_arch = "nvptx64"), inline(always))] |this, dev, arg| {
                let _ = &arg;
                <#self_ty>::#hidden(#this, dev #pass_arg)
            })
        }
    };
    let (token_ty, export, run) = match l.kind {
        Kind::Parallel { read_only, .. } => {
            let export = format!("dynasoar_do__{alloc}__{class}__{name}", alloc = l.allocator);
            let run = do_all_body(read_only, quote!(Plain), &export);
            (quote!(#p::ParallelMethod<Self, #arg_ty>), export, run)
        }
        Kind::New => {
            let export = format!("dynasoar_new__{alloc}__{class}__{name}", alloc = l.allocator);
            let run = quote! {
                #p::parallel::run_parallel_new::<#self_ty, #arg_ty>(params, const { #p::kernel_tag(#export) }, |dev, index, arg| {
                    let _ = &arg;
                    <#self_ty>::#hidden(dev, index #pass_arg)
                })
            };
            (quote!(#p::ParallelNew<Self, #arg_ty>), export, run)
        }
    };
    let params_ty = match l.kind {
        Kind::Parallel { .. } => quote!(#p::parallel::DoParams<#arg_ty>),
        Kind::New => quote!(#p::parallel::NewParams<#arg_ty>),
    };
    let effects_arg = effects.as_ref().map(|e| quote!(, #e));
    let mut free = entry(p, &host_fn, &entry_fn, &export, &params_ty, &run);
    // A `#[parallel]` method that calls `this.name()` gets a second kernel with the streaming
    // loop, which prefetches the first of those names that is a field (if none is, the token
    // leaves the kernel out). A method with lanes runs the plain loop only.
    let streaming = match &l.kind {
        Kind::Parallel { read_only, reads, lanes: 1, .. } if !reads.is_empty() => {
            let prefetch =
                quote!(#p::parallel::Prefetch::first(&[#(<#self_ty>::__dynasoar_field(#reads)),*]));
            let host_fn = format_ident!("__dynasoar_stream_kernel_{}_{}_{}", l.allocator, class, name);
            let entry_fn = format_ident!("__dynasoar_stream_entry_{}_{}_{}", l.allocator, class, name);
            let export = format!("dynasoar_stream__{alloc}__{class}__{name}", alloc = l.allocator);
            let run = do_all_body(*read_only, quote!(Streaming(#prefetch)), &export);
            free.extend(entry(p, &host_fn, &entry_fn, &export, &params_ty, &run));
            Some(quote!(.with_streaming(#p::Kernel::new(#export, #host_fn), #prefetch)))
        }
        Kind::Parallel { lanes, .. } if *lanes > 1 => Some(quote!(.with_lanes(#lanes))),
        _ => None,
    };
    let token = quote! {
        #(#docs)*
        #[allow(non_upper_case_globals)]
        #vis const #name: #token_ty = <#token_ty>::new(#p::Kernel::new(#export, #host_fn) #effects_arg) #streaming;
    };
    let assoc = quote! {
        #body_fn
        #token
    };
    (assoc, free)
}

/// A kernel's host function `host_fn` (what the CPU backend calls) running `run`, and on
/// nvptx its PTX entry point `export`.
fn entry(
    p: &TokenStream,
    host_fn: &syn::Ident,
    entry_fn: &syn::Ident,
    export: &str,
    params_ty: &TokenStream,
    run: &TokenStream,
) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(non_snake_case)]
        #[cfg_attr(target_arch = "nvptx64", inline(always))]
        fn #host_fn(params: #params_ty) {
            #run
        }

        #[cfg(target_arch = "nvptx64")]
        #[doc(hidden)]
        #[allow(non_snake_case)]
        #[unsafe(export_name = #export)]
        pub unsafe extern "ptx-kernel" fn #entry_fn(params: #params_ty) {
            #p::arch::wait_for_prior_grids();
            #host_fn(params)
        }
    }
}

/// The `Effects` value of a `#[parallel]` method; a declared class that is not in the method's
/// allocator fails to compile at its name (`class_mask` requires `MemberOf<Alloc>`).
fn effects_value(p: &TokenStream, allocator: &syn::Ident, effects: &Effects) -> TokenStream {
    let mask = |classes: &[syn::Type]| {
        let bits = classes.iter().map(|ty| quote_spanned!(ty.span()=> #p::class_mask::<#ty, #allocator>()));
        quote!(0u64 #(| #bits)*)
    };
    match effects {
        Effects::None => quote!(#p::Effects::NONE),
        Effects::Any => quote!(#p::Effects::ANY),
        Effects::Declared { creates, frees } => {
            let (creates, frees) = (mask(creates), mask(frees));
            quote!(#p::Effects { creates: #creates, frees: #frees })
        }
    }
}
