//! Procedural macros of dynasoar.
//!
//! Each macro is split the way dtolnay's macro crates are: parse the input into a small AST,
//! validate it (every error carries the span of the offending item), then expand. Generated code
//! names the runtime through `::dynasoar::__private`, so user crates depend on the `dynasoar`
//! facade only.

mod kernel;
mod plain;

use proc_macro::TokenStream;

/// Turn `fn name(params: P)` into a GPU kernel and a CPU-backend function at once.
///
/// Generates, next to the function:
/// - on `nvptx64`, the PTX entry point `name` (`extern "ptx-kernel"`), calling the function;
/// - on every target, a typed token `NAME: Kernel<P>` for the host to launch.
///
/// `P` must be a `#[repr(C)]` struct deriving `Plain` (or another plain type). The crate must
/// enable `#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]`.
#[proc_macro_attribute]
pub fn kernel(args: TokenStream, input: TokenStream) -> TokenStream {
    kernel::expand(args.into(), input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derive `Plain` for a `#[repr(C)]` struct whose fields are all plain data.
#[proc_macro_derive(Plain)]
pub fn derive_plain(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    plain::expand(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}
