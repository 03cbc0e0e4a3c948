//! `allocator!(pub Name: ClassA, ClassB, ...)`: the classes of one heap.

mod ast;
mod expand;

use proc_macro2::TokenStream;

pub fn allocator(input: TokenStream) -> syn::Result<TokenStream> {
    let decl: ast::Allocator = syn::parse2(input)?;
    let blocks = decl.check()?;
    Ok(expand::expand(&decl, blocks))
}
