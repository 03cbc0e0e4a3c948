//! Code generation for `allocator!`: the allocator type, each class's registration (type id,
//! compile-time block geometry, subtree mask) and its gather kernel for `collect`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::ast::{Allocator, Blocks};

pub fn expand(a: &Allocator, blocks: Blocks) -> TokenStream {
    let p = quote!(::dynasoar::__private);
    let (attrs, vis, ident) = (&a.attrs, &a.vis, &a.ident);
    let name = ident.to_string();
    let classes = &a.classes;
    let n = classes.len();
    let consts = format_ident!("__DYNASOAR_{}", ident.to_string().to_uppercase());
    let uniform = blocks == Blocks::Uniform;

    // Sizes of the concrete classes fix the block geometry (abstract ones are never allocated).
    let concrete_sizes = classes
        .iter()
        .map(|c| quote!(if <#c as #p::Class>::ABSTRACT { usize::MAX } else { ::core::mem::size_of::<#c>() }));
    let parents =
        classes.iter().map(|c| quote!(<<#c as #p::Class>::Parent as #p::class::ParentTypeId>::TYPE_ID));

    // A class's parent must live in the same allocator: a trait of this allocator's own,
    // implemented by its classes (and `NoParent`), which each class's parent must implement
    // (checked before anything else uses the parent's registration, so that this is the
    // first error).
    let parent_in_message = format!("the parent class `{{Self}}` is not in allocator `{name}`");
    let parent_in_note = format!(
        "a class and its parent share one allocator: list `{{Self}}` in `allocator!({name}: ...)` \
         too, or list the subclass in the parent's allocator"
    );
    let parent_checks = classes.iter().map(|c| {
        quote_spanned! {c.span()=>
            impl #consts::ClassOfThisAllocator for #c {}
            const _: fn() = || {
                fn parent_in<P: #consts::ClassOfThisAllocator>() {}
                parent_in::<<#c as #p::Class>::Parent>();
            };
        }
    });

    let registrations = classes.iter().enumerate().map(|(i, c)| {
        let id = i as u8;
        let class_name = Allocator::class_name(c);
        let gather_export = format!("dynasoar_gather__{name}__{class_name}");
        let gather_host = format_ident!("__dynasoar_gather_{}_{}", ident, class_name);
        let gather_entry = format_ident!("__dynasoar_gather_entry_{}_{}", ident, class_name);
        let too_big = format!(
            "class `{class_name}` is more than 64 times the size of the smallest class of allocator \
             `{name}`: it would not fit a block; split it into smaller classes, or give the \
             allocator `#[blocks(uniform)]` (blocks sized for its largest class)"
        );
        let span = c.span();
        quote_spanned! {span=>
            impl #p::ClassSpec for #c {
                const TYPE_ID: u8 = #id;
                const OBJECTS_PER_BLOCK: u32 =
                    #p::layout::objects_per_block(::core::mem::size_of::<#c>(), #consts::SIZING);
                const BLOCK_BYTES: u64 = #consts::BLOCK_BYTES;
                const NAME: &'static str = <#c as #p::Class>::NAME;
            }

            // SAFETY: type ids and geometry are computed here for every class of `#ident`.
            unsafe impl #p::Registered for #c {
                type Alloc = #ident;
                const SUBTREE: u64 = #p::class::subtree_mask(&#consts::PARENTS, #id);
                const GATHER: #p::Kernel<#p::parallel::GatherParams> =
                    #p::Kernel::new(#gather_export, #gather_host);
            }

            impl #p::class::MemberOf<#ident> for #c {}

            const _: () = assert!(
                <#c as #p::Class>::ABSTRACT
                    || #p::layout::fits(::core::mem::size_of::<#c>(), #consts::SIZING),
                #too_big
            );

            #[doc(hidden)]
            #[allow(non_snake_case)]
            #[cfg_attr(target_arch = "nvptx64", inline(always))]
            fn #gather_host(params: #p::parallel::GatherParams) {
                #p::parallel::run_gather::<#c>(params, const { #p::kernel_tag(#gather_export) })
            }

            #[cfg(target_arch = "nvptx64")]
            #[doc(hidden)]
            #[allow(non_snake_case)]
            #[unsafe(export_name = #gather_export)]
            pub unsafe extern "ptx-kernel" fn #gather_entry(params: #p::parallel::GatherParams) {
                #p::arch::wait_for_prior_grids();
                #gather_host(params)
            }
        }
    });

    let classes_owning = classes.iter();
    let infos = classes.iter().enumerate().map(|(i, c)| {
        let id = i as u8;
        quote! {
            #p::ClassInfo {
                name: <#c as #p::Class>::NAME,
                type_id: #id,
                objects_per_block: <#c as #p::ClassSpec>::OBJECTS_PER_BLOCK,
                parent: if #consts::PARENTS[#i] == u8::MAX { None } else { Some(#consts::PARENTS[#i]) },
                is_abstract: <#c as #p::Class>::ABSTRACT,
                size: ::core::mem::size_of::<#c>(),
                align: ::core::mem::align_of::<#c>(),
                subtree: <#c as #p::Registered>::SUBTREE,
            }
        }
    });
    let doc = format!("The allocator `{name}`: one heap for its classes (see `dynasoar::allocator!`).");

    quote! {
        #(#attrs)*
        #[doc = #doc]
        #vis enum #ident {}

        #(#parent_checks)*

        #[doc(hidden)]
        #[allow(non_snake_case)]
        mod #consts {
            #[allow(unused_imports)]
            use super::*;
            pub const SIZES: [usize; #n] = [#(#concrete_sizes),*];
            const SMALLEST_CONCRETE: u64 = #p::layout::smallest_size(&SIZES);
            const _: () = assert!(SMALLEST_CONCRETE != u64::MAX, "an allocator needs at least one concrete (non-abstract) class: abstract classes are never allocated; list a concrete subclass too");
            // The class size of which 64 objects fill a block's data segment: the smallest
            // class's (`#[blocks(compact)]`, the paper's) or the largest's (`#[blocks(uniform)]`).
            // Without a concrete class (the error above), a size that keeps the geometry's
            // arithmetic from failing too.
            pub const SIZING: u64 = if SMALLEST_CONCRETE == u64::MAX {
                1
            } else if #uniform {
                #p::layout::largest_size(&SIZES)
            } else {
                SMALLEST_CONCRETE
            };
            pub const BLOCK_BYTES: u64 = #p::layout::block_bytes(SIZING);
            pub const PARENTS: [u8; #n] = [#(#parents),*];

            /// Implemented by the allocator's classes: a class's parent must be one of them.
            #[diagnostic::on_unimplemented(message = #parent_in_message, note = #parent_in_note)]
            pub trait ClassOfThisAllocator {}
            impl ClassOfThisAllocator for #p::NoParent {}
        }

        impl #p::AllocatorSpec for #ident {
            const NAME: &'static str = #name;
            const BLOCK_BYTES: u64 = #consts::BLOCK_BYTES;
            const CLASSES: &'static [#p::ClassInfo] = &[#(#infos),*];
            const ANY_OWNS_BLOCKS: bool = false #(|| <#classes_owning as #p::ClassSpec>::OWNS_BLOCKS)*;
            type Store = ::dynasoar::__private::SelectedStore;
        }

        #(#registrations)*
    }
}
