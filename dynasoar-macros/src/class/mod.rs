//! `#[soa_class]`: a struct becomes a SOA class.

mod ast;
mod expand;
mod valid;

use proc_macro2::TokenStream;

pub fn soa_class(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    let class = ast::Class::parse(args, input)?;
    valid::check(&class)?;
    Ok(expand::expand(&class))
}
