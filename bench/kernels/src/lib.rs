//! Device kernels of the allocator benchmark suite (`dynasoar-bench`), kept next to it: no
//! model links them. `dynasoar-bench`'s build script compiles this crate, with the allocators
//! of `dynasoar-baselines` it measures, to its own PTX.
//!
//! - [`probes`]: the survey's synthetic tests (one kernel timed a step at a time) and one pair
//!   of probe kernels per allocator for `ptxas -v`'s register counts;
//! - [`workloads`]: the survey's graph and kd-tree workloads.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod probes;
pub mod workloads;
