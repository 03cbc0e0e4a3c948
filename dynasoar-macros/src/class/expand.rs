//! Code generation for `#[soa_class]`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Type;

use super::ast::{Class, Field};
use crate::kernel::quote_check_plain;

pub fn expand(class: &Class) -> TokenStream {
    let p = quote!(::dynasoar::__private);
    let ident = &class.ident;
    let vis = &class.vis;
    let attrs = &class.attrs;
    let name = ident.to_string();
    let is_abstract = class.is_abstract;

    let derive_copy = if derives(&class.attrs, "Copy") { quote!() } else { quote!(Copy,) };
    let derive_clone = if derives(&class.attrs, "Clone") { quote!() } else { quote!(Clone,) };
    let derives = quote!(#[derive(#derive_clone #derive_copy)]);

    let base_field = class.parent.as_ref().map(|parent| {
        quote! {
            /// The fields inherited from the parent class.
            pub base: #parent,
        }
    });
    let fields = class.fields.iter().map(|f| {
        let (attrs, vis, id, ty) = (&f.attrs, &f.vis, &f.ident, &f.ty);
        quote!(#(#attrs)* #vis #id: #ty,)
    });

    let plain_checks = class.fields.iter().map(|f| quote_check_plain(&f.ty));
    let atomic_checks = class.fields.iter().filter(|f| f.atomic).map(|f| {
        let ty = &f.ty;
        quote_spanned! {f.span=>
            const _: fn() = || {
                fn assert_atomic<T: #p::object::AtomicValue>() {}
                assert_atomic::<#ty>();
            };
        }
    });
    let parent_ty = match &class.parent {
        Some(parent) => quote!(#parent),
        None => quote!(#p::NoParent),
    };
    let parent_check = class.parent.as_ref().map(|parent| {
        quote_spanned! {syn::spanned::Spanned::span(parent)=>
            const _: fn() = || {
                fn assert_class<T: #p::Class>() {}
                assert_class::<#parent>();
            };
        }
    });

    // Where each field lies in the block (`FieldPlace`): its own array, or its group's
    // records, which span the bytes from the group's first field to the end of its last.
    let group_bounds = |group: &syn::Ident| {
        let members: Vec<&Field> = class.fields.iter().filter(|m| m.group.as_ref() == Some(group)).collect();
        let (first, last) = (&members[0].ident, members[members.len() - 1]);
        let (last_id, last_ty) = (&last.ident, &last.ty);
        (
            quote!(::core::mem::offset_of!(#ident, #first)),
            quote!((::core::mem::offset_of!(#ident, #last_id) + ::core::mem::size_of::<#last_ty>())),
            members,
        )
    };
    let place = |f: &Field| {
        let (id, ty) = (&f.ident, &f.ty);
        match &f.group {
            None => quote! {
                #p::FieldPlace::own(::core::mem::offset_of!(#ident, #id) as u64, ::core::mem::size_of::<#ty>() as u64)
            },
            Some(group) => {
                let (start, end, _) = group_bounds(group);
                quote! {
                    #p::FieldPlace::grouped(#start as u64, #end as u64, ::core::mem::offset_of!(#ident, #id) as u64)
                }
            }
        }
    };
    let mut groups: Vec<&syn::Ident> = Vec::new();
    for g in class.fields.iter().filter_map(|f| f.group.as_ref()) {
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let group_checks = groups.iter().map(|group| {
        let (start, end, members) = group_bounds(group);
        let tys = members.iter().map(|m| &m.ty);
        quote_spanned! {group.span()=>
            const _: () = assert!(
                #p::object::group_aligned(#start, #end, &[#(::core::mem::align_of::<#tys>()),*]),
                "a #[group]'s record must start on, and take a multiple of, the largest alignment of \
                 its fields: declare the group's most aligned fields first, or add a padding field"
            );
        }
    });
    let store_base = class
        .parent
        .as_ref()
        .map(|parent| quote!(unsafe { <#parent as #p::Class>::store(raw, &value.base) };));
    let store_fields = class.fields.iter().map(|f| {
        let (id, ty, at) = (&f.ident, &f.ty, place(f));
        quote!(unsafe { #p::object::write_field::<#ty>(raw, #at, value.#id) };)
    });
    let load_base =
        class.parent.as_ref().map(|parent| quote!(base: unsafe { <#parent as #p::Class>::load(raw) },));
    let load_fields = class.fields.iter().map(|f| {
        let (id, ty, at) = (&f.ident, &f.ty, place(f));
        quote!(#id: unsafe { #p::object::read_field::<#ty>(raw, #at) },)
    });

    // The field lookup behind the do-all loop's prefetch (see `Prefetch` in the device crate):
    // a `const fn` so that a method's candidates resolve at compile time, own fields first,
    // then the parent's (at the same places, the parent's value coming first).
    let field_lookups = class.fields.iter().map(|f| {
        let name = f.ident.to_string();
        let at = place(f);
        quote! {
            if #p::parallel::same_name(name, #name) {
                let place = #at;
                return ::core::option::Option::Some(#p::parallel::Prefetch::field(
                    place.group,
                    place.stride,
                    place.inner,
                ));
            }
        }
    });
    let parent_lookup = match &class.parent {
        Some(parent) => quote!(<#parent>::__dynasoar_field(name)),
        None => quote!(::core::option::Option::None),
    };

    let concrete = (!is_abstract).then(|| quote!(impl #p::Concrete for #ident {}));
    let is_a_parent = class.parent.as_ref().map(|parent| {
        quote! {
            // SAFETY: `#ident` starts with its parent's value (`base`).
            unsafe impl<__X, __D> #p::IsA<__X, #p::object::There<__D>> for #ident
                where #parent: #p::IsA<__X, __D> {}
        }
    });

    let fields_trait = format_ident!("{}Fields", ident);
    let trait_doc = format!(
        "Field access of objects of [`{name}`] and its subclasses, through [`Obj`]({p}::Obj) \
         (read and write) and [`Ref`]({p}::Ref) (read only).",
        p = "dynasoar"
    );
    let (decls, impls): (Vec<_>, Vec<_>) = class.fields.iter().map(|f| accessors(f, &place(f))).unzip();

    quote! {
        #(#attrs)*
        #[repr(C)]
        #derives
        #vis struct #ident {
            #base_field
            #(#fields)*
        }

        // SAFETY: `repr(C)` and every field is plain data (asserted below at each field's type).
        unsafe impl #p::Plain for #ident {}
        #(#plain_checks)*
        #(#atomic_checks)*
        #(#group_checks)*
        #parent_check

        // SAFETY: generated layout: `repr(C)` with the parent's value first.
        unsafe impl #p::Class for #ident {
            const NAME: &'static str = #name;
            const ABSTRACT: bool = #is_abstract;
            type Parent = #parent_ty;

            #[inline(always)]
            #[allow(unused_unsafe, clippy::unused_unit)]
            unsafe fn store(raw: #p::RawHandle, value: &Self) {
                #store_base
                #(#store_fields)*
            }

            #[inline(always)]
            #[allow(unused_unsafe)]
            unsafe fn load(raw: #p::RawHandle) -> Self {
                Self { #load_base #(#load_fields)* }
            }
        }
        #concrete

        impl #ident {
            /// Where field `name` lies in the block (inherited ones included), if it is one.
            #[doc(hidden)]
            pub const fn __dynasoar_field(name: &str) -> ::core::option::Option<#p::parallel::Prefetch> {
                #(#field_lookups)*
                #parent_lookup
            }
        }

        // SAFETY: a class is itself.
        unsafe impl #p::IsA<#ident, #p::object::Here> for #ident {}
        #is_a_parent

        #[doc = #trait_doc]
        #vis trait #fields_trait<__D>: #p::View {
            #(#decls)*
        }

        impl<__V, __D> #fields_trait<__D> for __V
        where
            __V: #p::View,
            <__V as #p::View>::Class: #p::IsA<#ident, __D>,
        {
            #(#impls)*
        }
    }
}

/// Whether `attrs` derive `name` already.
fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|m| {
            if m.path.is_ident(name) {
                found = true;
            }
            Ok(())
        });
        found
    })
}

/// Trait declarations and implementations of one field's accessors.
fn accessors(f: &Field, place: &TokenStream) -> (TokenStream, TokenStream) {
    let p = quote!(::dynasoar::__private);
    let id = &f.ident;
    let ty = &f.ty;
    let docs = f.attrs.iter().filter(|a| a.path().is_ident("doc"));
    let docs = quote!(#(#docs)*);
    let setter = format_ident!("set_{}", id);
    let set_doc = format!("Write field `{id}`.");
    let field_addr = quote!(#p::View::raw(self).place_addr(#place));

    let mut decls = Vec::new();
    let mut impls = Vec::new();
    if f.atomic {
        let atomic = format_ident!("{}_atomic", id);
        let atomic_doc = format!("Atomic operations on field `{id}`.");
        decls.push(quote! {
            #docs
            fn #id(self) -> #ty;
            #[doc = #set_doc]
            fn #setter(self, value: #ty) where Self: #p::Writable;
            #[doc = #atomic_doc]
            fn #atomic(self) -> #p::AtomicRef<#ty> where Self: #p::Writable;
        });
        impls.push(quote! {
            #[inline(always)]
            fn #id(self) -> #ty {
                // SAFETY: the field of a live object that is-a this class, accessed atomically.
                unsafe { #p::AtomicRef::<#ty>::new(#field_addr as usize as *mut #ty) }.load()
            }
            #[inline(always)]
            fn #setter(self, value: #ty) where Self: #p::Writable {
                // SAFETY: as above.
                unsafe { #p::AtomicRef::<#ty>::new(#field_addr as usize as *mut #ty) }.store(value)
            }
            #[inline(always)]
            fn #atomic(self) -> #p::AtomicRef<#ty> where Self: #p::Writable {
                // SAFETY: as above.
                unsafe { #p::AtomicRef::<#ty>::new(#field_addr as usize as *mut #ty) }
            }
        });
    } else {
        decls.push(quote! {
            #docs
            fn #id(self) -> #ty;
            #[doc = #set_doc]
            fn #setter(self, value: #ty) where Self: #p::Writable;
        });
        impls.push(quote! {
            #[inline(always)]
            fn #id(self) -> #ty {
                // SAFETY: the field of a live object that is-a this class.
                unsafe { #p::object::read_field::<#ty>(#p::View::raw(self), #place) }
            }
            #[inline(always)]
            fn #setter(self, value: #ty) where Self: #p::Writable {
                // SAFETY: as above.
                unsafe { #p::object::write_field::<#ty>(#p::View::raw(self), #place, value) }
            }
        });
    }
    if let Type::Array(array) = ty {
        let elem = &array.elem;
        let len = &array.len;
        let at = format_ident!("{}_at", id);
        let set_at = format_ident!("set_{}_at", id);
        let at_doc = format!("Element `index` of array field `{id}` (panics if out of bounds).");
        let set_at_doc = format!("Write element `index` of array field `{id}` (panics if out of bounds).");
        decls.push(quote! {
            #[doc = #at_doc]
            fn #at(self, index: usize) -> #elem;
            #[doc = #set_at_doc]
            fn #set_at(self, index: usize, value: #elem) where Self: #p::Writable;
        });
        impls.push(quote! {
            #[inline(always)]
            fn #at(self, index: usize) -> #elem {
                assert!(index < #len, "array field index out of bounds");
                // SAFETY: element `index < len` of the field of a live object.
                unsafe { #p::object::element_addr::<#elem>(#p::View::raw(self), #place, #len, index).read() }
            }
            #[inline(always)]
            fn #set_at(self, index: usize, value: #elem) where Self: #p::Writable {
                assert!(index < #len, "array field index out of bounds");
                // SAFETY: as above.
                unsafe { #p::object::element_addr::<#elem>(#p::View::raw(self), #place, #len, index).write(value) }
            }
        });
    }
    (quote!(#(#decls)*), quote!(#(#impls)*))
}
