//! Classes as the type system sees them.
//!
//! - [`ClassSpec`]: what the allocator's hot paths need (type id, geometry), as constants.
//! - [`Class`]: a `#[soa_class]` struct: its name, parent and whether it is abstract. The
//!   struct itself is `#[repr(C)]` and doubles as the object's field layout.
//! - [`Concrete`]: a class whose objects can be allocated; [`ClassInfo`]: a class's facts for
//!   the host.
//!
//! Where a class is placed (its allocator) is the `registry` module's.

use crate::Plain;
use crate::handle::RawHandle;

/// A class registered in a heap: its type id and block geometry. Implemented by the allocator
/// declaration (`allocator!`); the allocator's hot paths are monomorphised over it, so the
/// numbers below are immediates in the generated code.
pub trait ClassSpec: 'static {
    /// Index of the class among its heap's classes.
    const TYPE_ID: u8;
    /// Objects per block (`N_T`, 1..=64).
    const OBJECTS_PER_BLOCK: u32;
    /// Bytes per block (the same for every class of the heap).
    const BLOCK_BYTES: u64;
    /// The class's name, for messages.
    const NAME: &'static str;
    /// Whether a warp that allocates at least half a block of this class at once takes its
    /// slots from a run of blocks reserved for its warp slot (see the allocator's `runs`): for
    /// classes allocated in bulk by whole warps, as in the Linux Scalability benchmark. Off by
    /// default: the code is inlined into every kernel that allocates the class, and such code
    /// (owned blocks, before runs) took the registers of the apps' allocating kernels up by
    /// 20-40 (Wa-Tor's spills by half, 13-17% slower runs).
    const OWNS_BLOCKS: bool = false;
}

/// No parent: the root of a class hierarchy.
pub enum NoParent {}

/// A struct made a class by `#[soa_class]`.
///
/// # Safety
/// Implemented only by the macro: `Self` is `#[repr(C)]` plain data whose first field is the
/// parent's value (when it has a parent), so the parent's field offsets hold in `Self`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a SOA class",
    label = "not a SOA class",
    note = "classes are structs marked `#[soa_class]`; `extends = ...` must name one of them"
)]
pub unsafe trait Class: Plain {
    /// The class's name, for messages.
    const NAME: &'static str;
    /// Whether objects of exactly this class can be allocated.
    const ABSTRACT: bool;
    /// The parent class, or [`NoParent`].
    type Parent: 'static;

    /// Write `value` into the fields of the object `raw` (parent's fields first).
    ///
    /// # Safety
    /// `raw` must be a live object whose class is-a `Self`, not accessed concurrently.
    unsafe fn store(raw: RawHandle, value: &Self);

    /// Read the fields of the object `raw` into a value.
    ///
    /// # Safety
    /// As for [`store`](Self::store).
    unsafe fn load(raw: RawHandle) -> Self;
}

/// Classes of which objects can be allocated (not abstract).
#[diagnostic::on_unimplemented(
    message = "cannot allocate an object of `{Self}`: it is an abstract class",
    label = "abstract class",
    note = "allocate one of its concrete subclasses instead"
)]
pub trait Concrete: Class {}

/// Static information about one class of an allocator, for the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassInfo {
    pub name: &'static str,
    pub type_id: u8,
    pub objects_per_block: u32,
    /// Type id of the parent, if any.
    pub parent: Option<u8>,
    pub is_abstract: bool,
    /// Bytes of the class's value (its field layout).
    pub size: usize,
    /// Alignment of the class's value.
    pub align: usize,
    /// Type ids of the class and its subclasses, as bits.
    pub subtree: u64,
}

impl ClassInfo {
    /// The concrete classes among `subtree`, in type-id order.
    pub fn concrete_in(classes: &[ClassInfo], subtree: u64) -> impl Iterator<Item = &ClassInfo> {
        classes.iter().filter(move |c| subtree & (1 << c.type_id) != 0 && !c.is_abstract)
    }
}
