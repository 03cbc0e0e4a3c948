//! Parsing and checking `#[soa_methods] impl Class { ... }`.

use quote::ToTokens;
use syn::parse::Parse;
use syn::spanned::Spanned;
use syn::{FnArg, ImplItem, ImplItemFn, ItemImpl, Pat, ReturnType, Type};

pub struct Methods {
    pub item: ItemImpl,
    /// The class's name (last path segment of the impl's type).
    pub class: syn::Ident,
    pub launchable: Vec<Launchable>,
}

pub enum Kind {
    /// `#[parallel]`: `this: Obj<Self>` (or `Ref<Self>`), `dev: &Device<A>`, optional argument.
    Parallel {
        read_only: bool,
        effects: Effects,
        /// Names called as `this.name()` in the body, first call first: candidates for the
        /// field the do-all loop prefetches (the class keeps those that are fields).
        reads: Vec<String>,
        /// `#[parallel(lanes = L)]`: GPU threads per object (1 without).
        lanes: u32,
        /// `#[parallel(lanes = L, dense)]`: the lanes walk blocks position by position.
        dense: bool,
        /// `#[parallel(lanes = L, pairs)]`: the lanes fold a ranked list two objects at a time.
        pairs: bool,
    },
    /// `#[parallel_new]`: `dev: &Device<A>`, `index: u64`, optional argument; returns `Self`.
    New,
}

/// Which classes' objects a `#[parallel]` method may create or free.
pub enum Effects {
    /// The body never names its `dev` parameter, so it can neither create nor free.
    None,
    /// `#[parallel(creates(A, ..), frees(B, ..))]`.
    Declared { creates: Vec<Type>, frees: Vec<Type> },
    /// Undeclared: any class.
    Any,
}

pub struct Launchable {
    pub kind: Kind,
    pub func: ImplItemFn,
    /// Type of the optional argument (`()` if none).
    pub arg: Option<Type>,
    /// Name of the allocator in the `dev: &Device<Alloc>` parameter (part of kernel names, so
    /// classes of the same name in different allocators do not clash).
    pub allocator: syn::Ident,
}

const PARALLEL_SIGNATURE: &str = "a #[parallel] method looks like `fn name(this: Obj<Self>, dev: &Device<MyAllocator>)` \
     (or `this: Ref<Self>` for read-only access), with at most one more parameter: a plain-data \
     argument passed by the host";
const NEW_SIGNATURE: &str = "a #[parallel_new] constructor looks like `fn name(dev: &Device<MyAllocator>, index: u64) -> Self`, \
     with at most one more parameter: a plain-data argument passed by the host";

impl Methods {
    pub fn parse(input: proc_macro2::TokenStream) -> syn::Result<Self> {
        let mut item: ItemImpl = syn::parse2(input)?;
        if let Some((_, path, _)) = &item.trait_ {
            return Err(syn::Error::new_spanned(
                path,
                "#[soa_methods] goes on an inherent `impl Class`, not a trait impl",
            ));
        }
        if !item.generics.params.is_empty() {
            return Err(syn::Error::new_spanned(
                &item.generics,
                "#[soa_methods] impls cannot be generic: a class is one concrete type; remove the impl's generic parameters",
            ));
        }
        let class = match &*item.self_ty {
            Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.clone()),
            _ => None,
        }
        .ok_or_else(|| syn::Error::new_spanned(&item.self_ty, "#[soa_methods] goes on `impl ClassName`"))?;

        let mut launchable = Vec::new();
        let mut kept = Vec::new();
        for it in std::mem::take(&mut item.items) {
            let ImplItem::Fn(mut func) = it else {
                kept.push(it);
                continue;
            };
            let parallel = take_attr(&mut func, "parallel");
            let new = take_attr(&mut func, "parallel_new");
            if let Some(attr) = &new
                && !matches!(attr.meta, syn::Meta::Path(_))
            {
                return Err(syn::Error::new_spanned(
                    attr,
                    "#[parallel_new] takes no arguments: write `#[parallel_new]` (effects, `creates(..)`/`frees(..)`, are for #[parallel] methods)",
                ));
            }
            match (parallel, new) {
                (None, None) => kept.push(ImplItem::Fn(func)),
                (Some(_), Some(_)) => {
                    return Err(syn::Error::new(
                        func.sig.ident.span(),
                        "a method is either #[parallel] or #[parallel_new], not both",
                    ));
                }
                (Some(attr), None) => {
                    let options = parse_options(&attr)?;
                    launchable.push(parse_parallel(func, options, &class)?)
                }
                (None, Some(_)) => launchable.push(parse_new(func, &class)?),
            }
        }
        check_no_calls(&class, &launchable, &kept)?;
        item.items = kept;
        Ok(Methods { item, class, launchable })
    }
}

/// Remove and return the attribute `#[name]` / `#[name(..)]` of `func`.
fn take_attr(func: &mut ImplItemFn, name: &str) -> Option<syn::Attribute> {
    let at = func.attrs.iter().position(|a| a.path().is_ident(name))?;
    Some(func.attrs.remove(at))
}

const EFFECTS_SYNTAX: &str = "#[parallel] takes the classes whose objects the method may create or \
     free, `#[parallel(creates(A, B), frees(C))]`, or the threads that run each object, \
     `#[parallel(lanes = 16)]`, with `dense` where the classes it walks fill their blocks, \
     `#[parallel(lanes = 8, dense)]`, or `pairs` where its fold has no branches, \
     `#[parallel(lanes = 32, pairs)]`";

/// What `#[parallel(..)]` says.
pub struct Options {
    /// `Some((creates, frees))` for `#[parallel(creates(..), frees(..))]`.
    pub declared: Option<(Vec<Type>, Vec<Type>)>,
    /// `lanes = L`, with the span of `L`.
    pub lanes: Option<(u32, proc_macro2::Span)>,
    /// `dense`, with its span.
    pub dense: Option<proc_macro2::Span>,
    /// `pairs`, with its span.
    pub pairs: Option<proc_macro2::Span>,
}

/// The options of `#[parallel(creates(..), frees(..))]` or `#[parallel(lanes = L)]`; none for
/// `#[parallel]`.
fn parse_options(attr: &syn::Attribute) -> syn::Result<Options> {
    if matches!(attr.meta, syn::Meta::Path(_)) {
        return Ok(Options { declared: None, lanes: None, dense: None, pairs: None });
    }
    let (mut creates, mut frees, mut lanes, mut dense, mut pairs) = (None, None, None, None, None);
    attr.parse_nested_meta(|meta| {
        for (name, flag) in [("dense", &mut dense), ("pairs", &mut pairs)] {
            if meta.path.is_ident(name) {
                if flag.is_some() {
                    return Err(meta.error(format!("`{name}` given twice; give it once")));
                }
                *flag = Some(meta.path.span());
                return Ok(());
            }
        }
        if meta.path.is_ident("lanes") {
            if lanes.is_some() {
                return Err(meta.error("`lanes` given twice; give it once"));
            }
            let value: syn::LitInt = meta.value()?.parse()?;
            let n: u32 = value.base10_parse()?;
            if !n.is_power_of_two() || n > 32 {
                return Err(syn::Error::new(
                    value.span(),
                    format!(
                        "`lanes` is how many threads of a warp run each object: a power of two \
                         from 1 to 32, not {n} (16 suits a force loop over thousands of objects)"
                    ),
                ));
            }
            lanes = Some((n, value.span()));
            return Ok(());
        }
        let list = if meta.path.is_ident("creates") {
            &mut creates
        } else if meta.path.is_ident("frees") {
            &mut frees
        } else {
            return Err(meta.error(format!("unknown option; {EFFECTS_SYNTAX}")));
        };
        if list.is_some() {
            let name = if meta.path.is_ident("creates") { "creates" } else { "frees" };
            return Err(meta.error(format!("`{name}` given twice; list all its classes in one `{name}(..)`")));
        }
        let content;
        syn::parenthesized!(content in meta.input);
        let classes = content.parse_terminated(Type::parse, syn::Token![,])?;
        *list = Some(classes.into_iter().collect::<Vec<_>>());
        Ok(())
    })
    .map_err(|e| {
        if e.to_string().contains(EFFECTS_SYNTAX) {
            e
        } else {
            syn::Error::new(e.span(), format!("{e}; {EFFECTS_SYNTAX}"))
        }
    })?;
    let declared = (creates.is_some() || frees.is_some())
        .then(|| (creates.unwrap_or_default(), frees.unwrap_or_default()));
    if let (Some((n, span)), Some(_)) = (lanes, &declared)
        && n > 1
    {
        return Err(syn::Error::new(
            span,
            "a method with `lanes` runs each object on that many threads, which would each create \
             or free: it cannot create or free objects; do that in another #[parallel] method",
        ));
    }
    if let Some(span) = dense
        && lanes.is_none_or(|(n, _)| n == 1)
    {
        return Err(syn::Error::new(
            span,
            "`dense` chooses how the lanes of a method with `lanes` walk the classes its \
             `device_reduce` folds: give the lanes too, `#[parallel(lanes = 8, dense)]`",
        ));
    }
    if let Some(span) = pairs {
        if lanes.is_none_or(|(n, _)| n == 1) {
            return Err(syn::Error::new(
                span,
                "`pairs` chooses how the lanes of a method with `lanes` fold the objects their \
                 `device_reduce` reads from a list: give the lanes too, `#[parallel(lanes = 32, pairs)]`",
            ));
        }
        if dense.is_some() {
            return Err(syn::Error::new(
                span,
                "`pairs` folds the objects of a list two at a time, and `dense` walks blocks \
                 instead of a list: give one of them",
            ));
        }
    }
    Ok(Options { declared, lanes, dense, pairs })
}

/// Whether `tokens` contain the identifier `name` anywhere (also inside macro calls).
fn mentions(tokens: proc_macro2::TokenStream, name: &syn::Ident) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == *name,
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
        _ => false,
    })
}

/// The distinct names `m` of calls `this.m()` in `tokens` (also inside groups), in order.
fn calls_without_arguments(tokens: proc_macro2::TokenStream, this: &syn::Ident, found: &mut Vec<String>) {
    use proc_macro2::{Delimiter, TokenTree};
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in tokens.iter().enumerate() {
        if let TokenTree::Group(g) = t {
            calls_without_arguments(g.stream(), this, found);
        }
        if let [TokenTree::Ident(object), TokenTree::Punct(dot), TokenTree::Ident(name), TokenTree::Group(args)] =
            &tokens[i..tokens.len().min(i + 4)]
            && object == this
            && dot.as_char() == '.'
            && args.delimiter() == Delimiter::Parenthesis
            && args.stream().is_empty()
            // `this.a.b()` calls `b` on something else (not possible on `Obj`, but cheap to rule out).
            && !matches!(tokens.get(i.wrapping_sub(1)), Some(TokenTree::Punct(p)) if p.as_char() == '.')
        {
            let name = name.to_string();
            if !found.contains(&name) {
                found.push(name);
            }
        }
    }
}

fn check_plain_fn(func: &ImplItemFn, usage: &str) -> syn::Result<()> {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(&sig.generics, format!("{usage}; it cannot be generic")));
    }
    if sig.asyncness.is_some() || sig.constness.is_some() || sig.unsafety.is_some() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            format!("{usage}; it is a plain, safe `fn`: remove `async`, `const` or `unsafe`"),
        ));
    }
    if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        return Err(syn::Error::new_spanned(r, format!("{usage}; objects are passed as `this`, not `self`")));
    }
    Ok(())
}

/// The name of a parameter bound to a plain identifier.
fn param_name(arg: &FnArg) -> Option<&syn::Ident> {
    match arg {
        FnArg::Typed(t) => match &*t.pat {
            Pat::Ident(p) => Some(&p.ident),
            _ => None,
        },
        FnArg::Receiver(_) => None,
    }
}

fn param_type(arg: &FnArg) -> Option<&Type> {
    match arg {
        FnArg::Typed(t) => Some(&t.ty),
        FnArg::Receiver(_) => None,
    }
}

/// The last path segment's name of a type (`Obj<Self>` -> "Obj").
fn type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn is_device_ref(ty: &Type) -> bool {
    device_allocator(ty).is_some()
}

/// `Alloc` of a `&Device<Alloc>` type.
fn device_allocator(ty: &Type) -> Option<syn::Ident> {
    let Type::Reference(r) = ty else { return None };
    if r.mutability.is_some() {
        return None;
    }
    let Type::Path(p) = &*r.elem else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Device" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    match args.args.first()? {
        syn::GenericArgument::Type(Type::Path(a)) => a.path.segments.last().map(|s| s.ident.clone()),
        _ => None,
    }
}

fn parse_parallel(func: ImplItemFn, options: Options, class: &syn::Ident) -> syn::Result<Launchable> {
    let Options { declared, lanes, dense, pairs } = options;
    let (lanes, dense, pairs) = (lanes.map_or(1, |(n, _)| n), dense.is_some(), pairs.is_some());
    check_plain_fn(&func, PARALLEL_SIGNATURE)?;
    let sig = &func.sig;
    if !matches!(sig.output, ReturnType::Default) {
        return Err(syn::Error::new_spanned(
            &sig.output,
            format!("{PARALLEL_SIGNATURE}; it returns nothing"),
        ));
    }
    let inputs: Vec<&FnArg> = sig.inputs.iter().collect();
    if inputs.len() < 2 {
        return Err(params_error(sig, PARALLEL_SIGNATURE));
    }
    if inputs.len() > 3 {
        let launch = format!("rt.parallel_do_with({class}::{}, ", sig.ident);
        return Err(too_many_arguments(sig, &inputs[2..], "#[parallel] method", "`this` and `dev`", &launch));
    }
    let this = param_type(inputs[0]).and_then(type_name);
    let read_only = match this.as_deref() {
        Some("Obj") => false,
        Some("Ref") => true,
        _ => {
            return Err(syn::Error::new_spanned(
                inputs[0],
                format!("{PARALLEL_SIGNATURE}; the first parameter is the object, `this: Obj<Self>`"),
            ));
        }
    };
    if !param_type(inputs[1]).is_some_and(is_device_ref) {
        return Err(syn::Error::new_spanned(
            inputs[1],
            format!("{PARALLEL_SIGNATURE}; the second parameter is the heap, `dev: &Device<MyAllocator>`"),
        ));
    }
    let arg = inputs.get(2).map(|a| param_type(a).cloned()).unwrap_or(None);
    let allocator = param_type(inputs[1]).and_then(device_allocator).expect("checked above");
    check_arg_pattern(&func)?;
    // Creating or freeing takes the `dev` parameter (and macros in the body are expanded
    // hygienically, so they cannot name it unless given its name): a body that never names it
    // changes no class's objects.
    let dev_named = param_name(inputs[1]).is_some_and(|dev| mentions(func.block.to_token_stream(), dev));
    let effects = match (dev_named, declared) {
        // A method with lanes creates and frees nothing (its `Device` refuses to).
        _ if lanes > 1 => Effects::None,
        (false, _) => Effects::None,
        (true, Some((creates, frees))) => Effects::Declared { creates, frees },
        (true, None) => Effects::Any,
    };
    let mut reads = Vec::new();
    if let Some(this) = param_name(inputs[0]) {
        calls_without_arguments(func.block.to_token_stream(), this, &mut reads);
    }
    Ok(Launchable {
        kind: Kind::Parallel { read_only, effects, reads, lanes, dense, pairs },
        func,
        arg,
        allocator,
    })
}

fn parse_new(func: ImplItemFn, class: &syn::Ident) -> syn::Result<Launchable> {
    check_plain_fn(&func, NEW_SIGNATURE)?;
    let sig = &func.sig;
    if matches!(sig.output, ReturnType::Default) {
        return Err(syn::Error::new(
            sig.ident.span(),
            format!("{NEW_SIGNATURE}; it returns the new object's value"),
        ));
    }
    let inputs: Vec<&FnArg> = sig.inputs.iter().collect();
    if inputs.len() < 2 {
        return Err(params_error(sig, NEW_SIGNATURE));
    }
    if inputs.len() > 3 {
        let launch = format!("rt.parallel_new_with({class}::{}, count, ", sig.ident);
        return Err(too_many_arguments(
            sig,
            &inputs[2..],
            "#[parallel_new] constructor",
            "`dev` and `index`",
            &launch,
        ));
    }
    if !param_type(inputs[0]).is_some_and(is_device_ref) {
        return Err(syn::Error::new_spanned(
            inputs[0],
            format!("{NEW_SIGNATURE}; the first parameter is `dev: &Device<MyAllocator>`"),
        ));
    }
    if param_type(inputs[1]).and_then(type_name).as_deref() != Some("u64") {
        return Err(syn::Error::new_spanned(
            inputs[1],
            format!("{NEW_SIGNATURE}; the second parameter is `index: u64`"),
        ));
    }
    let arg = inputs.get(2).map(|a| param_type(a).cloned()).unwrap_or(None);
    let allocator = param_type(inputs[0]).and_then(device_allocator).expect("checked above");
    check_arg_pattern(&func)?;
    Ok(Launchable { kind: Kind::New, func, arg, allocator })
}

/// An error at a signature's parameters, or at its parentheses when it has none.
fn params_error(sig: &syn::Signature, message: &str) -> syn::Error {
    if sig.inputs.is_empty() {
        syn::Error::new(sig.paren_token.span.join(), message)
    } else {
        syn::Error::new_spanned(&sig.inputs, message)
    }
}

/// A launchable function with more than one argument (`extra`, after the fixed parameters):
/// reported at the extra parameters, with the struct that bundles them.
fn too_many_arguments(
    sig: &syn::Signature,
    extra: &[&FnArg],
    what: &str,
    fixed: &str,
    launch: &str,
) -> syn::Error {
    let name = sig.ident.to_string();
    let bundle = format!("{}Args", camel_case(&name));
    let fields: Vec<String> = extra
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let field = param_name(a).map(|n| n.to_string()).unwrap_or_else(|| format!("arg{i}"));
            let ty = param_type(a).map(type_text).unwrap_or_default();
            format!("pub {field}: {ty}")
        })
        .collect();
    let names: Vec<String> = extra.iter().filter_map(|a| param_name(a)).map(|n| format!("`{n}`")).collect();
    let count = extra.len();
    let extra_tokens = extra.iter().map(|a| a.to_token_stream());
    let span = quote::quote!(#(#extra_tokens),*);
    syn::Error::new_spanned(
        span,
        format!(
            "a {what} takes at most one argument after {fixed}, and `{name}` takes {count} ({names}): \
             bundle them in one plain-data struct, `#[repr(C)] #[derive(Clone, Copy, Plain)] \
             pub struct {bundle} {{ {fields} }}`, take `args: {bundle}`, and launch it with \
             `{launch}{bundle} {{ .. }})`",
            names = names.join(", "),
            fields = fields.join(", "),
        ),
    )
}

/// A type as written, without the spaces token streams print (`[u32 ; 4]` -> `[u32; 4]`).
fn type_text(ty: &Type) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (from, to) in
        [(" ;", ";"), (" ,", ","), ("< ", "<"), (" <", "<"), (" >", ">"), ("& ", "&"), (" :: ", "::")]
    {
        text = text.replace(from, to);
    }
    text
}

/// A call of a launchable method (`Self::step(..)`, `Body::step(..)`) in a function of the same
/// impl block: the method is a launch token now, not a function.
fn check_no_calls(class: &syn::Ident, launchable: &[Launchable], kept: &[ImplItem]) -> syn::Result<()> {
    let names: Vec<&syn::Ident> = launchable.iter().map(|l| &l.func.sig.ident).collect();
    let bodies = launchable
        .iter()
        .map(|l| &l.func.block)
        .chain(kept.iter().filter_map(|it| if let ImplItem::Fn(f) = it { Some(&f.block) } else { None }));
    for block in bodies {
        if let Some(called) = find_call(block.to_token_stream(), class, &names) {
            let l = launchable.iter().find(|l| l.func.sig.ident == called).expect("a launchable name");
            let (attr, launch) = match l.kind {
                Kind::Parallel { .. } => ("#[parallel]", format!("rt.parallel_do({class}::{called})")),
                Kind::New => ("#[parallel_new]", format!("rt.parallel_new({class}::{called}, count)")),
            };
            return Err(syn::Error::new(
                called.span(),
                format!(
                    "`{called}` is a {attr} method: #[soa_methods] turns it into a launch token for the \
                     host (`{launch}`), so it cannot be called as a function; move the code both \
                     need into a plain associated fn without {attr} (e.g. `fn {called}_one(..)`) \
                     and call that from both"
                ),
            ));
        }
    }
    Ok(())
}

/// The first `name` of `names` called as `Self::name(..)` or `Class::name(..)` in `tokens`
/// (also inside groups), with the span of that call's `name`.
fn find_call(
    tokens: proc_macro2::TokenStream,
    class: &syn::Ident,
    names: &[&syn::Ident],
) -> Option<syn::Ident> {
    use proc_macro2::{Delimiter, TokenTree};
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in tokens.iter().enumerate() {
        if let [
            TokenTree::Ident(owner),
            TokenTree::Punct(c1),
            TokenTree::Punct(c2),
            TokenTree::Ident(name),
            TokenTree::Group(args),
        ] = &tokens[i..tokens.len().min(i + 5)]
            && (owner == "Self" || owner == class)
            && c1.as_char() == ':'
            && c2.as_char() == ':'
            && args.delimiter() == Delimiter::Parenthesis
            && names.contains(&name)
        {
            return Some(name.clone());
        }
        if let TokenTree::Group(g) = t
            && let Some(found) = find_call(g.stream(), class, names)
        {
            return Some(found);
        }
    }
    None
}

/// `step_all` -> `StepAll`.
fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_uppercase().chain(c).collect::<String>()).unwrap_or_default()
        })
        .collect()
}

/// Parameters must be plain identifiers (they are forwarded by name).
fn check_arg_pattern(func: &ImplItemFn) -> syn::Result<()> {
    for input in &func.sig.inputs {
        if let FnArg::Typed(t) = input
            && !matches!(&*t.pat, Pat::Ident(_) | Pat::Wild(_))
        {
            return Err(syn::Error::new_spanned(
                &t.pat,
                "#[parallel] and #[parallel_new] methods take parameters by plain name (`arg: T`), not patterns; destructure the argument in the body",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{calls_without_arguments, camel_case, find_call};

    #[test]
    fn calls_of_launchable_methods_are_found_through_self_or_the_class() {
        let (class, grow, split): (syn::Ident, syn::Ident, syn::Ident) =
            (syn::parse_quote!(Body), syn::parse_quote!(grow), syn::parse_quote!(split));
        let names = [&grow, &split];
        let found = |body: proc_macro2::TokenStream| find_call(body, &class, &names).map(|i| i.to_string());
        assert_eq!(
            found(quote::quote!({
                if x {
                    Self::grow(this, dev);
                }
            })),
            Some("grow".into())
        );
        assert_eq!(
            found(quote::quote!({
                let _ = crate::Body::split(this, dev, 2);
            })),
            Some("split".into())
        );
        // Not calls of this class's launchable methods: another type's, a helper's, the token.
        assert_eq!(
            found(quote::quote!({
                Other::grow(this, dev);
                Self::helper(this);
            })),
            None
        );
        assert_eq!(
            found(quote::quote!({
                rt.parallel_do(Self::grow);
                this.grow();
            })),
            None
        );
    }

    #[test]
    fn bundles_are_named_after_the_method() {
        assert_eq!(camel_case("grow_by"), "GrowBy");
        assert_eq!(camel_case("step"), "Step");
        assert_eq!(camel_case("_x__y"), "XY");
    }

    #[test]
    fn reads_are_argument_less_calls_on_this_in_order() {
        let body: proc_macro2::TokenStream = syn::parse_quote! {{
            let v = this.speed();
            if this.other.len() > 0 { return; }
            this.set_speed(v + 1.0);
            let n = f(this.position(), that.size());
            for _ in 0..3 { let _ = this.speed(); }
            this.cells_at(2);
        }};
        let this: syn::Ident = syn::parse_quote!(this);
        let mut found = Vec::new();
        calls_without_arguments(body, &this, &mut found);
        assert_eq!(found, ["speed", "position"]);
    }
}
