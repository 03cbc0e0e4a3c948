//! The choices an executor and a runtime are made with, as plain values: which backend, how
//! the CUDA driver compiles the module, which do-all loop. Below the backends, so the settings
//! (`DYNASOAR_*`) can name them.

use std::str::FromStr;

use crate::error::{Error, Result};

/// Which backend to run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// The GPU when a CUDA driver and device are present, else the CPU; says which it chose.
    #[default]
    Auto,
    /// The GPU; an error if there is no CUDA driver or device.
    Cuda,
    /// The CPU, with the same kernel code over an emulated grid.
    Cpu,
}

impl FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Backend::Auto),
            "cuda" | "gpu" => Ok(Backend::Cuda),
            "cpu" => Ok(Backend::Cpu),
            other => Err(Error::InvalidArgument(format!(
                "unknown backend `{other}`: expected `auto`, `cuda` (or `gpu`) or `cpu`"
            ))),
        }
    }
}

/// How the CUDA backend compiles the PTX of its module (see ARCHITECTURE.md, "Host runtime").
/// `DYNASOAR_JIT=whole|relocatable` overrides the choice, to compare the two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModuleCompile {
    /// One whole program (`cuModuleLoadData`): ptxas optimises every kernel with the device
    /// functions it calls. Fastest code; the default.
    #[default]
    WholeProgram,
    /// Relocatable code, linked by the driver (`cuLink*`): each device function compiled once.
    /// For PTX whose many kernels call one large function, which whole-program mode compiles
    /// again into each of them (the AOS store's kernels and `AnyMalloc`).
    Relocatable,
}

/// Which loop `parallel_do` runs (see [`RuntimeBuilder::do_all_loop`](crate::RuntimeBuilder::do_all_loop)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DoAllLoop {
    /// The streaming loop for methods whose streaming kernel fills a multiprocessor at the
    /// launch's block size (its registers cost no occupancy), the plain loop for the others
    /// (the default). On the CPU backend, the plain loop.
    #[default]
    Auto,
    /// Always the plain loop.
    Plain,
    /// Time both loops on the first launches of each method and class (a first launch of
    /// each to warm up, then [`TIMED_LAUNCHES`](crate::TIMED_LAUNCHES) of each, alternating) and keep the faster.
    /// On the CPU backend, the plain loop.
    Adaptive,
    /// The streaming loop for every method that has one (a `#[parallel]` method that reads a
    /// field of `this`), the plain loop for the others.
    Streaming,
}

/// How a class's blocks are listed before a do-all (see
/// [`RuntimeBuilder::enumeration`](crate::RuntimeBuilder::enumeration) and ARCHITECTURE.md,
/// "Do-all and enumeration"). Both list the same blocks with the same iteration bitmaps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Enumeration {
    /// One launch, one thread per block of the heap: the time grows with the heap.
    Flat,
    /// The paper's Alg. 5: one launch lists the class's non-empty level-0 containers from the
    /// levels of its allocated-block bitmap above them, a second lists the blocks of those
    /// containers only: the time grows with the class's containers (the default).
    #[default]
    Hierarchical,
}

impl Enumeration {
    /// `flat` or `hierarchical`.
    pub fn name(self) -> &'static str {
        match self {
            Enumeration::Flat => "flat",
            Enumeration::Hierarchical => "hierarchical",
        }
    }
}

impl FromStr for Enumeration {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "flat" => Ok(Enumeration::Flat),
            "hierarchical" => Ok(Enumeration::Hierarchical),
            other => Err(Error::InvalidArgument(format!(
                "unknown enumeration `{other}`: expected `flat` or `hierarchical`"
            ))),
        }
    }
}
