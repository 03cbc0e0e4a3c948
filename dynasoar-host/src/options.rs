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

/// How large a grid a `parallel_do` on the plain loop launches (see
/// [`RuntimeBuilder::do_all_waves`](crate::RuntimeBuilder::do_all_waves)): this many times the
/// grid of whole waves of its kernel that holds about as many threads as fill the GPU once;
/// its threads stride over the class's objects. Every choice visits the same objects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DoAllWaves {
    /// Time 1, 2 and 4 times the grid on the first launches of each method and class (a first
    /// launch of each to warm up, then [`TIMED_LAUNCHES`](crate::TIMED_LAUNCHES) of each, in
    /// turn) and keep the fastest, a larger grid only if it took less than 97% of the time of
    /// one and at least 2 us less; time them again after
    /// [`WAVE_RETRIAL_AFTER`](crate::WAVE_RETRIAL_AFTER) launches.
    /// On the CPU backend, for methods with lanes and for gathers, always one.
    #[default]
    Auto,
    /// Always this many times the grid (1 up to [`MAX_WAVES`]).
    Fixed(u32),
}

/// The largest multiple of the grid that [`DoAllWaves::Fixed`] takes.
pub const MAX_WAVES: u32 = 16;

/// How a class's blocks are listed before a do-all (see
/// [`RuntimeBuilder::enumeration`](crate::RuntimeBuilder::enumeration) and ARCHITECTURE.md,
/// "Do-all and enumeration"). Both list the same blocks with the same iteration bitmaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Enumeration {
    /// One launch, one thread per block of the heap: the time grows with the heap.
    Flat,
    /// The paper's Alg. 5: one launch lists the class's non-empty level-0 containers from the
    /// levels of its allocated-block bitmap above them, a second lists the blocks of those
    /// containers only: the time grows with the class's containers (the default in heaps of
    /// at least 4M blocks, where it was faster on an H200; flat below, see `DeviceHeap::new`).
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

/// A variant of DynaSOAr's allocator, for the paper's measurement of what its optimisations
/// bring (section 7.3, Figure 12(d); DynaSOAr-NoCoal in Table 2), and of our own addition to it,
/// the last-block tables. The default is DynaSOAr as the paper describes it plus the last-block
/// tables (`nolast` alone is the paper's allocator); the others are slower by design. The heap's
/// configuration carries the variant (`HeapConfig::variants`), which `allocate` reads at run
/// time: one PTX serves all.
///
/// Chosen by [`RuntimeBuilder::allocator_variant`](crate::RuntimeBuilder::allocator_variant),
/// [`DeviceHeap::set_allocator_variant`](crate::DeviceHeap::set_allocator_variant) or
/// `DYNASOAR_ALLOCATOR_VARIANT=default|nocoal|noshift|nolast`, or several of the last three
/// joined by `+`. Stores other than DynaSOAr's heap ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AllocatorVariant {
    /// Warp-coalesced allocation requests (paper 4.2): the lanes of a warp that allocate
    /// objects of one class together are served by one leader. Off: every thread allocates
    /// alone (DynaSOAr-NoCoal).
    pub coalescing: bool,
    /// Bitmap rotation (paper 4.2): each search of a bitmap, and of a block's free slots,
    /// starts at a position given by a seed per warp that changes with every retry. Off: every
    /// search is a plain find-first-set from the same position (DynaSOAr-NoShift).
    pub rotation: bool,
    /// The last-block tables (ours, not the paper's): on the GPU, a leader first tries the block
    /// its warp slot last allocated objects of the class in, and searches the active bitmap
    /// only when that block is full or no longer the class's. Off: every allocation searches
    /// (paper Alg. 1).
    pub last_block: bool,
}

impl Default for AllocatorVariant {
    fn default() -> Self {
        AllocatorVariant::DEFAULT
    }
}

impl AllocatorVariant {
    /// DynaSOAr as the paper describes it (coalescing and rotation), with the last-block tables.
    pub const DEFAULT: AllocatorVariant =
        AllocatorVariant { coalescing: true, rotation: true, last_block: true };
    /// The paper's DynaSOAr-NoCoal: every thread allocates alone.
    pub const NO_COALESCING: AllocatorVariant = AllocatorVariant { coalescing: false, ..Self::DEFAULT };
    /// The paper's DynaSOAr-NoShift: no bitmap rotation.
    pub const NO_ROTATION: AllocatorVariant = AllocatorVariant { rotation: false, ..Self::DEFAULT };
    /// DynaSOAr as the paper describes it: without the last-block tables.
    pub const NO_LAST_BLOCK: AllocatorVariant = AllocatorVariant { last_block: false, ..Self::DEFAULT };

    /// `default`, or what it leaves out (`nocoal`, `noshift`, `nolast`) joined by `+`, in that
    /// order (what [`FromStr`] reads).
    pub fn name(self) -> &'static str {
        match (self.coalescing, self.rotation, self.last_block) {
            (true, true, true) => "default",
            (false, true, true) => "nocoal",
            (true, false, true) => "noshift",
            (false, false, true) => "nocoal+noshift",
            (true, true, false) => "nolast",
            (false, true, false) => "nocoal+nolast",
            (true, false, false) => "noshift+nolast",
            (false, false, false) => "nocoal+noshift+nolast",
        }
    }

    /// The bits of the heap configuration's `variants` field.
    pub fn config_bits(self) -> u32 {
        use dynasoar_device::heap::{VARIANT_NO_COALESCING, VARIANT_NO_LAST_BLOCK, VARIANT_NO_ROTATION};
        (if self.coalescing { 0 } else { VARIANT_NO_COALESCING })
            | (if self.rotation { 0 } else { VARIANT_NO_ROTATION })
            | (if self.last_block { 0 } else { VARIANT_NO_LAST_BLOCK })
    }

    /// The variant of a heap configuration's `variants` field (unknown bits are ignored).
    pub fn from_config_bits(bits: u32) -> Self {
        use dynasoar_device::heap::{VARIANT_NO_COALESCING, VARIANT_NO_LAST_BLOCK, VARIANT_NO_ROTATION};
        AllocatorVariant {
            coalescing: bits & VARIANT_NO_COALESCING == 0,
            rotation: bits & VARIANT_NO_ROTATION == 0,
            last_block: bits & VARIANT_NO_LAST_BLOCK == 0,
        }
    }
}

impl std::fmt::Display for AllocatorVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AllocatorVariant {
    type Err = Error;
    /// `default`, or `nocoal`, `noshift` (also `norotation`), `nolast` or several of them
    /// joined by `+` or `,`.
    fn from_str(s: &str) -> Result<Self> {
        let mut variant = AllocatorVariant::DEFAULT;
        if s == "default" {
            return Ok(variant);
        }
        for part in s.split(['+', ',']) {
            match part {
                "nocoal" => variant.coalescing = false,
                "noshift" | "norotation" => variant.rotation = false,
                "nolast" => variant.last_block = false,
                other => {
                    return Err(Error::InvalidArgument(format!(
                        "unknown allocator variant `{other}`: expected `default`, or `nocoal`, `noshift`, \
                         `nolast` or several of them joined by `+` (such as `nocoal+noshift`)"
                    )));
                }
            }
        }
        Ok(variant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocator_variants_parse_print_and_map_to_config_bits() {
        for variant in [
            AllocatorVariant::DEFAULT,
            AllocatorVariant::NO_COALESCING,
            AllocatorVariant::NO_ROTATION,
            AllocatorVariant::NO_LAST_BLOCK,
            AllocatorVariant { coalescing: false, rotation: false, last_block: true },
            AllocatorVariant { coalescing: false, rotation: true, last_block: false },
            AllocatorVariant { coalescing: true, rotation: false, last_block: false },
            AllocatorVariant { coalescing: false, rotation: false, last_block: false },
        ] {
            assert_eq!(variant.name().parse::<AllocatorVariant>().unwrap(), variant);
            assert_eq!(AllocatorVariant::from_config_bits(variant.config_bits()), variant);
        }
        assert_eq!(AllocatorVariant::default().config_bits(), 0, "the default is the heap's zero");
        assert_eq!("norotation".parse::<AllocatorVariant>().unwrap(), AllocatorVariant::NO_ROTATION);
        assert_eq!(
            "noshift,nocoal".parse::<AllocatorVariant>().unwrap(),
            AllocatorVariant { coalescing: false, rotation: false, last_block: true }
        );
        let e = "fast".parse::<AllocatorVariant>().unwrap_err().to_string();
        assert!(e.contains("unknown allocator variant `fast`"), "{e}");
    }
}
