//! Checks of a class that the macro can see; the rest (plain data, atomic-capable types,
//! parents being classes) is asserted in the generated code with each item's span.

use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

use super::ast::Class;

/// Names the views' own methods use; a field with one of them would be unreachable.
const RESERVED: &[&str] = &["raw", "handle", "as_ref", "up", "cast", "is", "is_exactly", "type_id", "base"];

pub fn check(class: &Class) -> syn::Result<()> {
    if let Some(lt) = class.generics.lifetimes().next() {
        return Err(syn::Error::new(
            lt.span(),
            "a SOA class cannot have lifetime parameters: objects live in device memory and \
             cannot borrow host data",
        ));
    }
    if !class.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &class.generics,
            "a SOA class cannot be generic: its block layout is fixed at compile time; make one \
             class per concrete type",
        ));
    }
    for field in &class.fields {
        let name = field.ident.to_string();
        if RESERVED.contains(&name.as_str()) {
            return Err(syn::Error::new(
                field.ident.span(),
                format!("the field name `{name}` is reserved by object views; rename the field"),
            ));
        }
        check_type(&field.ty, &name)?;
    }
    check_groups(class)?;
    for field in &class.fields {
        let name = field.ident.to_string();
        for other in &class.fields {
            if let Some(accessor) = accessors(other).into_iter().find(|a| *a == name) {
                return Err(syn::Error::new(
                    field.ident.span(),
                    format!(
                        "the field name `{name}` is taken by the accessor `{accessor}` that \
                         #[soa_class] generates for field `{}`; rename one of the two fields",
                        other.ident
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A group's fields are declared one after another (its record is the bytes from the first to
/// the end of the last, in `repr(C)` order) and are at least two.
fn check_groups(class: &Class) -> syn::Result<()> {
    let fields = &class.fields;
    for (i, field) in fields.iter().enumerate() {
        let Some(group) = &field.group else { continue };
        let continues = i > 0 && fields[i - 1].group.as_ref() == Some(group);
        if !continues && fields[..i].iter().any(|f| f.group.as_ref() == Some(group)) {
            return Err(syn::Error::new(
                group.span(),
                format!(
                    "field `{}` is in group `{group}`, but the field declared before it is not: \
                     declare a group's fields one after another (the group is stored as one \
                     record per object, its fields in declaration order)",
                    field.ident
                ),
            ));
        }
        let members = fields.iter().filter(|f| f.group.as_ref() == Some(group)).count();
        if members == 1 {
            return Err(syn::Error::new(
                group.span(),
                format!(
                    "group `{group}` has one field: a group stores two or more fields that are read \
                     together in one record per object; add the other fields to it or remove \
                     `#[group({group})]`"
                ),
            ));
        }
    }
    Ok(())
}

/// The names of the accessors generated for `field` besides its getter (see `expand.rs`).
fn accessors(field: &super::ast::Field) -> Vec<String> {
    let name = field.ident.to_string();
    let mut names = vec![format!("set_{name}")];
    if field.atomic {
        names.push(format!("{name}_atomic"));
    }
    if matches!(field.ty, Type::Array(_)) {
        names.push(format!("{name}_at"));
        names.push(format!("set_{name}_at"));
    }
    names
}

/// Reject types that can never be plain data, with a reason; others are checked by the
/// `Plain` assertions the expansion emits.
fn check_type(ty: &Type, field: &str) -> syn::Result<()> {
    match ty {
        Type::Reference(r) => Err(syn::Error::new_spanned(
            r,
            format!(
                "field `{field}` is a reference: objects live in device memory, where references \
                 to host data mean nothing; to refer to another object, store a `Handle<T>`"
            ),
        )),
        Type::Ptr(p) => Err(syn::Error::new_spanned(
            p,
            format!(
                "field `{field}` is a raw pointer: SOA classes hold plain data; to refer to another \
                 object, store a `Handle<T>`"
            ),
        )),
        Type::Array(a) => check_type(&a.elem, field),
        Type::Paren(p) => check_type(&p.elem, field),
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else { return Ok(()) };
            let name = last.ident.to_string();
            let heap_owned = ["Box", "Vec", "String", "Rc", "Arc", "HashMap", "BTreeMap", "VecDeque"];
            if heap_owned.contains(&name.as_str()) {
                return Err(syn::Error::new_spanned(
                    p,
                    format!(
                        "field `{field}` has type `{name}`, which owns host memory: SOA classes hold \
                         plain, fixed-size data; use a fixed array `[T; N]`, or objects linked by \
                         `Handle<T>`"
                    ),
                ));
            }
            if let PathArguments::AngleBracketed(args) = &last.arguments {
                for arg in &args.args {
                    if let GenericArgument::Lifetime(lt) = arg {
                        return Err(syn::Error::new(
                            lt.span(),
                            format!("field `{field}` borrows data: SOA classes hold plain data"),
                        ));
                    }
                }
            }
            Ok(())
        }
        Type::TraitObject(t) => Err(syn::Error::new_spanned(
            t,
            format!("field `{field}` is a trait object: SOA classes hold plain, sized data"),
        )),
        Type::Slice(s) => {
            Err(syn::Error::new_spanned(s, format!("field `{field}` is a slice: use a fixed array `[T; N]`")))
        }
        _ => Ok(()),
    }
}
