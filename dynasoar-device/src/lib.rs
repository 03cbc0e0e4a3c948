//! Device side of dynasoar: the DynaSOAr core.
//!
//! This crate is `no_std` and compiles for two targets from one source:
//! `nvptx64-nvidia-cuda` (the GPU, via the PTX builder of `dynasoar-build`) and the host (the
//! CPU backend, which runs the very same functions over an emulated grid). What dynasoar is
//! compared against (general-purpose allocators, the AOS object store) is `dynasoar-baselines`'.
//!
//! Layers, bottom up (a module uses only modules above it):
//! - [`arch`]: thread/warp ids, warp collectives, GPU-scoped atomics and fences, back-off;
//!   nvptx and host implementations behind one API.
//! - `plain`: the [`Plain`] trait (data that may cross to the device by its bytes);
//!   `kernel`: typed kernel tokens ([`Kernel`]) and device pointers ([`DevPtr`]); `launch`:
//!   the object kernels' parameters ([`DoParams`], [`NewParams`], [`GatherParams`], the
//!   store's address [`StorePtr`]) and do-all loop choices ([`DoAll`], [`Prefetch`]).
//! - [`errors`]: the error bits device code raises for the host.
//! - [`bitmap`]: lock-free hierarchical bitmaps (paper Alg. 3-5).
//! - [`block`], [`handle`], [`layout`]: SOA blocks, 64-bit object handles, block geometry.
//! - `class`: classes as the type system sees them ([`ClassSpec`], [`Class`], [`Concrete`],
//!   [`ClassInfo`]).
//! - [`heap`]: the heap's layout ([`heap::HeapPlan`]), its device view ([`Heap`]), its kernels
//!   and its do-all loops; [`allocator`]: `allocate` and `free` on it (Alg. 1-2, 6-7) and
//!   runs of blocks, with the kernel that releases them.
//! - `store`: the object store seam ([`ObjectStore`]): DynaSOAr's heap implements it here,
//!   the comparison suite's AOS store in `dynasoar-baselines`; [`Either`] picks one at run
//!   time on the host.
//! - `registry`: classes placed in allocators ([`Registered`], [`MemberOf`],
//!   [`AllocatorSpec`], whose `Store` is the store a model is compiled against).
//! - `object`: typed handles and views of objects ([`Handle`], [`Obj`], [`Ref`], [`AtomicRef`]).
//! - `packed`: handles packed into 32 bits ([`Packed`], [`Packer`]), for scratch that holds
//!   many per thread.
//! - `device`: [`Device`], what methods receive as `dev` (`make_new`, `free`, `device_do`).
//! - `parallel`: launch tokens ([`ParallelMethod`], [`ParallelNew`]) and the bodies of the
//!   do-all, `parallel_new` and gather kernels.
//! - `by_index`: objects by index ([`ByIndex`]), computed where a creation's objects lie in the
//!   order of their indices.
//! - `array`: [`DeviceArray`], arrays a model shares with its objects (atomic access);
//!   [`totals`]: [`Totals`], counts, sums, minima and maxima that a launch reduces for the host.
//! - [`math`], [`rand`]: bit-identical `sqrt`/`floor` on both targets (NaN payloads aside), [`math::Vec2`],
//!   opt-in approximate `sqrt`/division ([`math::fast`], [`math::Precision`]);
//!   SplitMix64.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, asm_experimental_arch, stdarch_nvptx, link_llvm_intrinsics)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod allocator;
pub mod arch;
#[cfg(not(loom))]
mod array;
pub mod bitmap;
pub mod block;
#[cfg(not(loom))]
mod by_index;
mod class;
#[cfg(not(loom))]
mod device;
pub mod errors;
pub mod handle;
// The heap lives in raw device memory; loom models use `allocator::BlockStore` over vectors.
#[cfg(not(loom))]
pub mod heap;
mod kernel;
#[cfg(not(loom))]
mod launch;
pub mod layout;
pub mod math;
#[cfg(not(loom))]
mod object;
#[cfg(not(loom))]
mod packed;
#[cfg(not(loom))]
mod parallel;
mod plain;
pub mod rand;
#[cfg(not(loom))]
mod reduce;
mod registry;
#[cfg(not(loom))]
mod store;
#[cfg(not(loom))]
pub mod totals;

#[cfg(not(loom))]
pub use array::DeviceArray;
pub use block::ClassShape;
#[cfg(not(loom))]
pub use by_index::ByIndex;
pub use class::{Class, ClassInfo, ClassSpec, Concrete, NoParent};
#[cfg(not(loom))]
pub use device::{Device, Effects};
pub use handle::{FieldPlace, RawHandle};
#[cfg(not(loom))]
pub use heap::{Heap, HeapHeader};
pub use kernel::{DevPtr, Kernel};
#[cfg(not(loom))]
pub use launch::{
    DoAll, DoParams, GatherParams, NewParams, Prefetch, RankedList, RankedPtr, StoreHeader, StorePtr,
    kernel_tag,
};
#[cfg(not(loom))]
pub use object::{AtomicRef, AtomicValue, Handle, IsA, Obj, Ref, View, Writable};
#[cfg(not(loom))]
pub use packed::{MAX_CLASSES, Packed, Packer};
#[cfg(not(loom))]
pub use parallel::{
    DoWithoutArgument, NewWithoutArgument, ParallelMethod, ParallelNew, block_full, do_all_block_threads,
    do_all_blocks,
};
pub use plain::Plain;
#[cfg(not(loom))]
pub use reduce::MAX_LANES;
pub use registry::{AllocatorSpec, MemberOf, Registered};
#[cfg(not(loom))]
pub use store::{BlockSpan, Either, Listing, ObjectStore};
#[cfg(not(loom))]
pub use totals::Totals;

/// Paths that macro-generated code uses (through `dynasoar::__private`). Not a public API.
#[doc(hidden)]
#[cfg(not(loom))]
pub mod __macro_support {
    pub use crate::*;
    pub mod class {
        pub use crate::class::*;
        pub use crate::registry::*;
    }
    pub mod parallel {
        pub use crate::launch::*;
        pub use crate::parallel::*;
    }
    pub mod object {
        pub use crate::object::*;
    }
    pub use crate::device::class_mask;
}

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    arch::report_panic_and_trap(info)
}
