//! What dynasoar is compared against, kept apart from the DynaSOAr core as the original keeps
//! its allocators in `example/configuration/`:
//!
//! - [`malloc`]: general-purpose device allocators from the literature (one module each)
//!   behind [`malloc::DeviceMalloc`], their init and storm kernels, and the benchmark probes and
//!   workloads of the allocator survey;
//! - [`aos`]: the AOS object store: objects of a model's classes allocated one by one from any
//!   of them, with the DynaSOAr paper's `parallel_do` helper (section 7). It implements the
//!   core's [`ObjectStore`](dynasoar_device::ObjectStore), so every model runs on every
//!   allocator through the same code;
//! - [`bitmap_store`]: BitmapAlloc as the paper built it, with one allocation bitmap per class
//!   over its slots, which `parallel_do` and `device_do` use (the BitmapAlloc PTX build,
//!   `cfg(dynasoar_bitmap_alloc)`; not in the AOS build);
//! - `host` (feature `host`): their host halves, and `host::StoreChoice`, the store a
//!   runtime keeps its objects in (`--allocator NAME` of the apps).
//!
//! A model crate compiled without this crate (the default) gets none of its kernels in its
//! PTX. The AOS PTX build (`PtxBuilder::aos`) enables the facade's `baselines` feature, which
//! links it and selects [`aos::AosStore`] as the store at compile time; the BitmapAlloc build
//! (`PtxBuilder::bitmap_alloc`) selects `bitmap_store::BitmapStore` instead.
// no_std, but for the host half (which is std code over `dynasoar-host`).
#![cfg_attr(any(target_arch = "nvptx64", not(feature = "host")), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod aos;
// In the BitmapAlloc PTX build and on the host only: the AOS build holds none of it.
#[cfg(any(not(target_arch = "nvptx64"), dynasoar_bitmap_alloc))]
pub mod bitmap_store;
pub mod malloc;

#[cfg(all(feature = "host", not(target_arch = "nvptx64")))]
pub mod host;
