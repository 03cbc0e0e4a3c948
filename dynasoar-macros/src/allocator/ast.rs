//! Parsing `allocator!(#[attrs] pub Name: ClassA, path::ClassB, ...)`, where one attribute may
//! be `#[blocks(compact)]` or `#[blocks(uniform)]`, the heap's block geometry.

use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, Path, Token, Visibility};

/// Most classes one allocator holds (type ids are bits of a 64-bit mask).
pub const MAX_CLASSES: usize = 64;

/// How a heap's block size is chosen (`#[blocks(..)]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// The paper's: the smallest class gets 64 objects a block, a larger class fewer.
    Compact,
    /// Every class gets 64 objects a block: blocks sized for the largest class.
    Uniform,
}

/// The message for a `#[blocks(..)]` attribute that is not one of the two.
const BLOCKS_EXPECTED: &str = "expected `#[blocks(compact)]` (the default, the paper's: the \
     smallest class gets 64 objects a block, larger classes fewer) or `#[blocks(uniform)]` \
     (every class 64 objects a block, blocks sized for the largest class)";

pub struct Allocator {
    /// Attributes passed on to the allocator type (`#[blocks(..)]` taken out).
    pub attrs: Vec<Attribute>,
    /// The `#[blocks(..)]` attributes given, in order (at most one is allowed).
    pub blocks_attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ident: Ident,
    pub classes: Vec<Path>,
}

impl Parse for Allocator {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (blocks_attrs, attrs) =
            input.call(Attribute::parse_outer)?.into_iter().partition(|a| a.path().is_ident("blocks"));
        let vis: Visibility = input.parse()?;
        let ident: Ident = input.parse()?;
        input
            .parse::<Token![:]>()
            .map_err(|e| syn::Error::new(e.span(), "expected `allocator!(pub Name: ClassA, ClassB, ...)`"))?;
        let classes = Punctuated::<Path, Token![,]>::parse_terminated(input)?;
        Ok(Allocator { attrs, blocks_attrs, vis, ident, classes: classes.into_iter().collect() })
    }
}

impl Allocator {
    /// The block geometry that `#[blocks(..)]` chose.
    fn blocks(&self) -> syn::Result<Blocks> {
        let Some(attr) = self.blocks_attrs.first() else { return Ok(Blocks::Compact) };
        if let Some(second) = self.blocks_attrs.get(1) {
            return Err(syn::Error::new(
                second.span(),
                format!("`#[blocks(..)]` is given twice for allocator `{}`: give it once", self.ident),
            ));
        }
        let unknown = |span| syn::Error::new(span, format!("unknown block geometry: {BLOCKS_EXPECTED}"));
        let word: Ident = attr.parse_args().map_err(|_| unknown(attr.span()))?;
        match word.to_string().as_str() {
            "compact" => Ok(Blocks::Compact),
            "uniform" => Ok(Blocks::Uniform),
            _ => Err(unknown(word.span())),
        }
    }

    /// Check the declaration; returns its block geometry.
    pub fn check(&self) -> syn::Result<Blocks> {
        let blocks = self.blocks()?;
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
        Ok(blocks)
    }

    /// The class's name: last segment of its path.
    pub fn class_name(path: &Path) -> &Ident {
        &path.segments.last().expect("non-empty path").ident
    }
}
