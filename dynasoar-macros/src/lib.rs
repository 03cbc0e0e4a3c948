//! Procedural macros of dynasoar.
//!
//! Each macro is split the way dtolnay's macro crates are: parse the input into a small AST,
//! validate it (every error carries the span of the offending item), then expand. Generated code
//! names the runtime through `::dynasoar::__private`, so user crates depend on the `dynasoar`
//! facade only.

mod allocator;
mod class;
mod kernel;
mod methods;
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

/// Make a struct a SOA class: its objects live in the SOA blocks of an allocator's heap and are
/// named by 64-bit handles.
///
/// ```ignore
/// #[soa_class]
/// pub struct Body { pub pos: Vec2, pub vel: Vec2, pub mass: f32 }
///
/// #[soa_class(abstract)]
/// pub struct Agent { pub cell: Handle<Cell>, pub energy: u32 }
///
/// #[soa_class(extends = Agent)]   // gets `pub base: Agent` as its first field
/// pub struct Fish { pub egg_timer: u32 }
/// ```
///
/// Fields hold plain data (integers, floats, `bool`, `Handle<T>`, fixed arrays, `#[repr(C)]`
/// structs deriving `Plain`); `#[atomic]` on a field adds `<field>_atomic()` for atomic
/// operations. The macro generates a `<Class>Fields` trait with a getter `field()` and a setter
/// `set_field(v)` per field (`field_at(i)`/`set_field_at(i, v)` for arrays), implemented for
/// `Obj<T>`/`Ref<T>` of the class and all its subclasses; setters need a writable `Obj`.
///
/// Each field is an array of its own in the class's blocks (coalesced when neighbouring
/// threads visit neighbouring objects). Fields that are read together through handles, in no
/// particular order (a tree walk), can be stored together instead: `#[group(name)]` on each
/// of them (declared one after another, two or more) stores them as one record per object,
/// so that one object's fields share a cache line. The accessors stay the same.
///
/// ```ignore
/// #[soa_class]
/// pub struct Node {
///     #[group(walk)] pub center: Vec2,
///     #[group(walk)] pub mass: f32,
///     #[group(walk)] pub side: f32,
///     pub visits: u32,
/// }
/// ```
///
/// A group's record must start on, and take a multiple of, its most aligned field's alignment
/// (a compile error says so otherwise): declare its most aligned fields first. A group belongs
/// to the class that declares it (a subclass's fields cannot join a parent's group): where a
/// walk reads a subclass's fields with a parent's, declare those fields in the subclass.
#[proc_macro_attribute]
pub fn soa_class(args: TokenStream, input: TokenStream) -> TokenStream {
    class::soa_class(args.into(), input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Mark methods of a class launchable from the host: `#[parallel]` methods run on every object
/// of the class (and its subclasses) with `rt.parallel_do(Class::method)`, `#[parallel_new]`
/// constructors create objects with `rt.parallel_new(Class::ctor, count)`.
///
/// ```ignore
/// #[soa_methods]
/// impl Body {
///     #[parallel]
///     pub fn step(this: Obj<Self>, dev: &Device<Space>, dt: f32) { /* ... */ }
///
///     #[parallel_new]
///     pub fn random(dev: &Device<Space>, index: u64, seed: u64) -> Self { /* ... */ }
/// }
/// ```
///
/// Each such method becomes a launch token of the same name (an associated const), backed by
/// a PTX kernel; its body is no longer callable as a function. Other methods stay as written.
///
/// `#[parallel(..)]` takes options:
/// - `creates(A, ..)`, `frees(B, ..)`: the only classes whose objects the method may create or
///   free (anything else is a kernel error), which lets the runtime keep other classes'
///   listings. A method that names `dev` is taken to create and free anything unless it says
///   so; one that names it only to read (`dev.packer()`, `dev.device_do`) says
///   `creates(), frees()`: it changes nothing;
/// - `lanes = L` (a power of two up to 32): each object runs on L GPU threads, among which its
///   `dev.device_reduce` splits the objects it folds (for loops over every other object, such
///   as a force sum); such a method creates and frees nothing. More lanes make more warps and
///   fewer objects for each lane to fold in turn; which count is fastest is a matter of
///   measuring (collision, whose bodies merge from 40,000 down to hundreds, runs fastest on 32;
///   n-body's 20,000 bodies on 8);
/// - `dense`, with `lanes`: the classes the method's `device_reduce` folds fill their blocks
///   (their objects are seldom freed), so its parts are by slot (the same as by rank in full
///   blocks) and each lane walks the blocks, visiting its slot positions of a block one by one
///   instead of reading a list of the objects; faster for full blocks (n-body), slower where
///   objects die (collision);
/// - `pairs`, with `lanes` (not with `dense`): where a lane reads its objects from a list, it
///   folds them two at a time, the next two's entries loaded first, so that the second
///   object's fields load while the fold computes with the first (same objects, same order,
///   same results). Faster for a fold without branches (collision's force sum), slower for one
///   that branches (collision's search for the nearest body): measure.
#[proc_macro_attribute]
pub fn soa_methods(args: TokenStream, input: TokenStream) -> TokenStream {
    methods::soa_methods(args.into(), input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Declare an allocator: the classes that share one heap, in type-id order.
///
/// ```ignore
/// dynasoar::allocator!(pub Space: Body);
/// dynasoar::allocator!(pub Ocean: Cell, Agent, Fish, Shark);
/// ```
///
/// Computes the block geometry at compile time and each class's type id. Blocks have 64 slots;
/// one attribute chooses how large they are:
///
/// - `#[blocks(compact)]`, the default and the paper's: the smallest concrete class gets 64
///   objects a block, a class `k` times its size `64 / k` (a class more than 64 times larger is
///   a compile error). No block space is left over.
/// - `#[blocks(uniform)]`: every class gets 64 objects a block, blocks sized for the largest
///   class. A smaller class's blocks leave the rest of their space unused (its objects take as
///   much heap as the largest class's), but every class's blocks are whole warps: a do-all's
///   warps do not straddle blocks and its loads do not split between two blocks' arrays. The
///   apps with classes of several sizes ran 1-13% faster with it on an H200
///   (docs/performance-log.md, "Uniform blocks").
///
/// ```ignore
/// dynasoar::allocator!(
///     /// The heap of Wa-Tor.
///     #[blocks(uniform)]
///     pub Ocean: Cell, Agent, Fish, Shark
/// );
/// ```
#[proc_macro]
pub fn allocator(input: TokenStream) -> TokenStream {
    allocator::allocator(input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
