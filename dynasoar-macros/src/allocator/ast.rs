//! Parsing `allocator!(#[attrs] pub Name: ClassA, path::ClassB, ...)`.

use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, Path, Token, Visibility};

/// Most classes one allocator holds (type ids are bits of a 64-bit mask).
pub const MAX_CLASSES: usize = 64;

pub struct Allocator {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ident: Ident,
    pub classes: Vec<Path>,
}

impl Parse for Allocator {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let ident: Ident = input.parse()?;
        input
            .parse::<Token![:]>()
            .map_err(|e| syn::Error::new(e.span(), "expected `allocator!(pub Name: ClassA, ClassB, ...)`"))?;
        let classes = Punctuated::<Path, Token![,]>::parse_terminated(input)?;
        Ok(Allocator { attrs, vis, ident, classes: classes.into_iter().collect() })
    }
}

impl Allocator {
    pub fn check(&self) -> syn::Result<()> {
        if self.classes.is_empty() {
            return Err(syn::Error::new(
                self.ident.span(),
                "an allocator needs at least one class: `allocator!(pub Name: ClassA, ClassB, ...)`",
            ));
        }
        if self.classes.len() > MAX_CLASSES {
            return Err(syn::Error::new(
                self.classes[MAX_CLASSES].span(),
                format!(
                    "an allocator holds at most {MAX_CLASSES} classes (type ids are bits of a 64-bit \
                     mask); split the classes over two allocators"
                ),
            ));
        }
        for (i, c) in self.classes.iter().enumerate() {
            if self.classes[..i].iter().any(|d| d == c) {
                return Err(syn::Error::new(
                    c.span(),
                    format!(
                        "class `{}` is listed twice in allocator `{}`: list each class once (its \
                         position is its type id)",
                        Self::class_name(c),
                        self.ident
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The class's name: last segment of its path.
    pub fn class_name(path: &Path) -> &Ident {
        &path.segments.last().expect("non-empty path").ident
    }
}
