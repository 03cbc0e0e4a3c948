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
//! - `host` (feature `host`): their host halves, and `host::StoreChoice`, the store a
//!   runtime keeps its objects in (`--allocator NAME` of the apps).
//!
//! A model crate compiled without this crate (the default) gets none of its kernels in its
//! PTX. The AOS PTX build (`PtxBuilder::aos`) enables the facade's `baselines` feature, which
//! links it and selects [`aos::AosStore`] as the store at compile time.
// no_std, but for the host half (which is std code over `dynasoar-host`).
#![cfg_attr(any(target_arch = "nvptx64", not(feature = "host")), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod aos;
pub mod malloc;

#[cfg(all(feature = "host", not(target_arch = "nvptx64")))]
pub mod host;
