//! The parameters of the object kernels (do-all, `parallel_new`, gather), as the host passes
//! them: one `#[repr(C)]` plain struct each, with the address of the store the objects live
//! in, and how a do-all loops over the listed objects.

use crate::Plain;
use crate::kernel::DevPtr;

/// The header of an object store (DynaSOAr's heap, or a store of the comparison suite), as
/// launches pass it: which store it is, the build says (the store the model's device code was
/// compiled against, see [`ObjectStore`](crate::ObjectStore)).
#[repr(C)]
pub struct StoreHeader {
    _opaque: [u8; 0],
}

/// The address of an object store's header.
pub type StorePtr = DevPtr<StoreHeader>;

/// The memory of a store's ranked list of a class's objects (the heap's: `heap::ranked`), as
/// launches of methods with lanes pass it.
#[repr(C)]
pub struct RankedList {
    _opaque: [u8; 0],
}

/// The address of a store's ranked list.
pub type RankedPtr = DevPtr<RankedList>;

/// The tag of kernel `name` (FNV-1a, never 0), which its launches record with the first error
/// they raise (see [`ObjectStore::for_launch`](crate::ObjectStore::for_launch)), so that the
/// host names the kernel that raised it even when it checks after many launches. A kernel
/// passes its tag as a constant (`const { kernel_tag(NAME) }`): a tag in the launch
/// parameters would stay in a register through every method, and took registers from 20 of
/// the example models' kernels.
pub const fn kernel_tag(name: &str) -> u32 {
    let bytes = name.as_bytes();
    let mut hash: u32 = 0x811c_9dc5;
    let mut i = 0;
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    if hash == 0 { 1 } else { hash }
}

/// Parameters of a do-all kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DoParams<Arg> {
    pub store: StorePtr,
    /// The concrete class whose objects this launch visits.
    pub class: u32,
    pub objects_per_block: u32,
    /// Which enumeration counter holds the number of listed blocks.
    pub parity: u32,
    /// Classes (bits by type id, ids below 32) whose current enumeration lists the launch's
    /// frees keep right ([`Device::free`](crate::Device::free)), so that the host need not
    /// list them again after it: 0 where the host does not keep lists through frees.
    pub keep: u32,
    /// Further concrete classes this launch visits after `class` (bits by type id, ids below
    /// 32), each of them in `T`'s subtree and of `objects_per_block` objects per block, so that
    /// a `parallel_do` over a class with subclasses can run as one launch: 0 for one class. A
    /// kernel of a class without subclasses ignores it.
    pub also: u32,
    /// The parity of each class of `also` (bit by type id), as `parity` is `class`'s.
    pub also_parities: u32,
    /// A launch of a method with lanes: the store's ranked list of the class (the heap's:
    /// `heap::ranked`), or null.
    pub ranked: RankedPtr,
    /// The method's argument.
    pub arg: Arg,
}
// SAFETY: `repr(C)` plain data when `Arg` is.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl<Arg: Plain> Plain for DoParams<Arg> {}

/// Parameters of a `parallel_new` kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NewParams<Arg> {
    pub store: StorePtr,
    /// Objects to create: indices `first..first + count`.
    pub first: u64,
    pub count: u64,
    /// The block the creation's first block-full of objects should go to, where it is free:
    /// block-full `k` (objects `k * N ..` of the class's `N` per block) asks for block
    /// `first_block + k` (modulo the heap's blocks), so that the objects lie in the heap in the
    /// order of their indices (see `run_parallel_new`).
    pub first_block: u64,
    pub arg: Arg,
}
// SAFETY: `repr(C)` plain data when `Arg` is.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl<Arg: Plain> Plain for NewParams<Arg> {}

/// Parameters of a gather kernel (`collect`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatherParams {
    pub store: StorePtr,
    pub class: u32,
    pub objects_per_block: u32,
    pub parity: u32,
    pub _reserved: u32,
    /// Room for `capacity` values.
    pub out: DevPtr<u8>,
    pub capacity: u64,
    /// Values written so far (also past `capacity`: then the host retries with more room).
    pub written: DevPtr<u32>,
    /// Room for `capacity` handles, each that of the value at the same index; null when the
    /// host wants the values only.
    pub handles: DevPtr<u64>,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl Plain for GatherParams {}

/// Which loop a do-all kernel runs over the listed blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DoAll {
    /// `for_each_listed` (`heap/listed.rs`): few registers, for any method.
    Plain,
    /// `for_each_listed_streaming` (`heap/listed.rs`): shared list entries and a prefetch of this field, for
    /// short methods over many objects.
    Streaming(Prefetch),
}

/// The field of `this` that a do-all method reads first: the streaming loop prefetches it for
/// the thread's next object, so that the method's first load finds it in L2. `#[soa_methods]`
/// finds it in the method's body (the first `this.field()` call); gathers prefetch nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefetch {
    /// Where the field lies in the block (the parts of its `FieldPlace` in the handle module,
    /// in 32 bits); stride 0 for no prefetch.
    pub(crate) group: u32,
    pub(crate) stride: u32,
    pub(crate) inner: u32,
}

impl Prefetch {
    pub const NONE: Prefetch = Prefetch { group: 0, stride: 0, inner: 0 };

    /// The field whose array starts `group` bytes times `N` into the data segment, `stride`
    /// bytes a slot, at `inner` bytes into the slot's element (a `FieldPlace`'s parts).
    pub const fn field(group: u64, stride: u64, inner: u64) -> Prefetch {
        Prefetch { group: group as u32, stride: stride as u32, inner: inner as u32 }
    }

    /// The first of `fields` that is one (the spans `#[soa_class]` reports for the names a
    /// method calls on `this`, `None` for a name that is not a field).
    pub const fn first(fields: &[Option<Prefetch>]) -> Prefetch {
        let mut i = 0;
        while i < fields.len() {
            if let Some(p) = fields[i] {
                return p;
            }
            i += 1;
        }
        Prefetch::NONE
    }

    pub const fn is_some(self) -> bool {
        self.stride != 0
    }
}
