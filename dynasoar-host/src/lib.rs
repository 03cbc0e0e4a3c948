//! Host side of dynasoar.
//!
//! - [`Executor`]: loads the PTX embedded in an app, launches typed [`Kernel`]s and moves
//!   buffers, on one of two backends chosen at run time ([`Backend`]): CUDA through cudarc's
//!   driver API (libcuda is loaded dynamically, so this crate builds and runs without CUDA), or
//!   the CPU, where rayon runs the same kernel functions over an emulated grid.
//!
//! [`Kernel`]: dynasoar_device::Kernel

pub mod aos;
mod backend;
mod do_all;
mod error;
pub mod heap;
pub mod malloc;
mod runtime;

pub use aos::AosHeap;
pub use backend::{Backend, BackendKind, Buffer, Executor, ExecutorOptions, Grid, Marker, ModuleCompile};
pub use do_all::{DoAllLoop, LoopChoice, TIMED_LAUNCHES};
pub use error::{Error, KernelNames, Result};
pub use heap::{DeviceHeap, HeapClass, HeapSnapshot, HeapStats};
pub use malloc::MallocHeap;
pub use runtime::{DEFAULT_HEAP_BYTES, KernelTime, ModelPtx, ObjectStore, Runtime, RuntimeBuilder, Timings};
