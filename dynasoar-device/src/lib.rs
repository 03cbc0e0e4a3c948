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
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, asm_experimental_arch, stdarch_nvptx, link_llvm_intrinsics)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod arch;
pub mod kernel;
pub mod plain;

pub use kernel::{DevPtr, Kernel};
pub use plain::Plain;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    arch::report_panic_and_trap(info)
}
