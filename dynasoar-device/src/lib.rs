//! Device side of dynasoar.
//!
//! This crate is `no_std` and compiles for two targets from one source:
//! `nvptx64-nvidia-cuda` (the GPU, via the PTX builder in `dynasoar-host`) and the host (the
//! CPU backend, which runs the very same functions over an emulated grid).
//!
//! Layers, bottom up:
//! - [`arch`]: thread/warp ids, warp collectives, GPU-scoped atomics and fences, back-off;
//!   nvptx and host implementations behind one API.
//! - [`kernel`]: typed kernel tokens ([`Kernel`]) and device pointers ([`DevPtr`]).
//! - [`bitmap`]: lock-free hierarchical bitmaps.
//! - [`block`], [`handle`], [`layout`]: SOA blocks, 64-bit object handles, block geometry.
//! - [`heap`]: the heap's layout, its device view and its kernels; [`allocator`]: `allocate`
//!   and `free` on it.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, asm_experimental_arch, stdarch_nvptx, link_llvm_intrinsics)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod allocator;
#[cfg(not(loom))]
pub mod aos;
pub mod arch;
#[cfg(not(loom))]
pub mod array;
pub mod bitmap;
pub mod block;
pub mod class;
#[cfg(not(loom))]
pub mod device;
pub mod errors;
pub mod handle;
// The heap lives in raw device memory; loom models use `allocator::BlockStore` over vectors.
#[cfg(not(loom))]
pub mod heap;
pub mod kernel;
pub mod layout;
#[cfg(not(loom))]
pub mod malloc;
pub mod math;
#[cfg(not(loom))]
pub mod object;
#[cfg(not(loom))]
pub mod parallel;
pub mod plain;
pub mod rand;

#[cfg(not(loom))]
pub use array::DeviceArray;
pub use class::{AllocatorSpec, Class, ClassInfo, ClassSpec, Concrete, NoParent, Registered};
#[cfg(not(loom))]
pub use device::{Device, Effects, class_mask};
pub use handle::RawHandle;
#[cfg(not(loom))]
pub use heap::{Heap, HeapHeader};
pub use kernel::{DevPtr, Kernel};
#[cfg(not(loom))]
pub use object::{AtomicRef, Handle, IsA, Obj, Ref, View, Writable};
#[cfg(not(loom))]
pub use parallel::{ParallelMethod, ParallelNew};
pub use plain::Plain;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    arch::report_panic_and_trap(info)
}
