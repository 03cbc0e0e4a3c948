//! Host side of dynasoar.
//!
//! - [`Executor`]: loads the PTX embedded in an app, launches typed [`Kernel`]s and moves
//!   buffers, on one of two backends chosen at run time ([`Backend`]): CUDA through cudarc's
//!   driver API (libcuda is loaded dynamically, so this crate builds and runs without CUDA), or
//!   the CPU, where rayon runs the same kernel functions over an emulated grid.
//!
//! [`Kernel`]: dynasoar_device::Kernel

mod backend;
mod do_all;
mod error;
pub mod heap;
mod options;
mod runtime;
mod settings;
mod store;
mod totals;

pub use backend::{
    Backend, BackendKind, Buffer, Executor, ExecutorOptions, Grid, Marker, ModuleCompile, Recording,
};
pub use do_all::{
    DoAllLoop, DoAllWaves, LoopChoice, MAX_WAVES, TIMED_LAUNCHES, WAVE_CHOICES, WAVE_RETRIAL_AFTER,
    WaveChoice,
};
pub use error::{Error, KernelNames, Result};
pub use heap::{
    AllocatorVariant, DeviceHeap, Enumeration, HeapClass, HeapSnapshot, HeapStats, SnapshotSummary,
};
pub use runtime::{DEFAULT_HEAP_BYTES, KernelTime, Runtime, RuntimeBuilder, StepGraph, Timings};
pub use settings::Settings;
pub use store::{DynasoarStore, HostStore, ModelPtx, StoreFactory, StoreSpec};
pub use totals::{HostTotals, Total, TotalValue};
