//! dynasoar: Single-Method Multiple-Objects programs on NVIDIA GPUs, from Rust.
//!
//! This facade is what user crates depend on. Model crates (compiled for the GPU *and* the
//! host) use the device API and the macros; on the host the runtime is here too:
//!
//! ```ignore
//! use dynasoar::prelude::*;
//! ```
//!
//! See the repository's README for the two-target build (a model crate, an app whose
//! `build.rs` compiles it to PTX) and ARCHITECTURE.md for how the pieces fit.
#![no_std]

pub use dynasoar_device::*;
pub use dynasoar_macros::{Plain, allocator, kernel, soa_class, soa_methods};

#[cfg(not(target_arch = "nvptx64"))]
pub use dynasoar_host as host;

/// What model code and host code need in scope.
pub mod prelude {
    pub use dynasoar_device::arch::{self, WarpGroup};
    pub use dynasoar_device::math::{self, Vec2};
    pub use dynasoar_device::rand::Rng;
    pub use dynasoar_device::{AtomicRef, DevPtr, Device, Handle, Kernel, Obj, Plain, Ref};
    pub use dynasoar_macros::{Plain, kernel, soa_class, soa_methods};

    #[cfg(not(target_arch = "nvptx64"))]
    pub use dynasoar_host::{Backend, Executor, Grid, Runtime};
}

/// Paths used by macro-generated code. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use dynasoar_device::*;
}
