//! `#[soa_methods]`: methods of a class that the host launches over all its objects.

mod ast;
mod expand;

use proc_macro2::TokenStream;

pub fn soa_methods(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    if !args.is_empty() {
        return Err(syn::Error::new_spanned(
            args,
            "#[soa_methods] takes no options: write `#[soa_methods]`; effects go on each method, `#[parallel(creates(..), frees(..))]`",
        ));
    }
    let methods = ast::Methods::parse(input)?;
    Ok(expand::expand(&methods))
}
