//! dynasoar: Single-Method Multiple-Objects programs on NVIDIA GPUs, from Rust.
//!
//! This facade is what user crates depend on. Model crates, compiled for the GPU *and* the
//! host, use the device API and the macros. On the host the runtime is here too. Everything is
//! in the prelude:
//!
//! ```
//! use dynasoar::prelude::*;
//! ```
//!
//! # The paper's API example
//!
//! Two classes with increment methods, in the style of the DynaSOAr paper's Appendix A. Each
//! `Foo` owns a `Bar` partner that its constructor creates on the device. `Foo::increment` adds
//! to its own field and its partner's. `Bar::increment` adds to its own. The example runs on the
//! CPU backend, which needs no PTX; an app passes the PTX its build script made, and runs the
//! same code on the GPU.
//!
//! ```
//! use dynasoar::prelude::*;
//! use dynasoar::host::Backend;
//!
//! #[soa_class]
//! pub struct Foo {
//!     pub a: i32,
//!     pub partner: Handle<Bar>,
//! }
//!
//! #[soa_class]
//! pub struct Bar {
//!     pub c: i32,
//! }
//!
//! dynasoar::allocator!(pub DemoAlloc: Foo, Bar);
//!
//! #[soa_methods]
//! impl Foo {
//!     #[parallel_new]
//!     pub fn create(dev: &Device<DemoAlloc>, index: u64) -> Self {
//!         let bar = dev.make_new(Bar { c: 10 * index as i32 });
//!         Foo { a: index as i32, partner: bar.map(Obj::handle).unwrap_or_default() }
//!     }
//!
//!     #[parallel]
//!     pub fn increment(this: Obj<Self>, _dev: &Device<DemoAlloc>, by: i32) {
//!         this.set_a(this.a() + by);
//!         if let Some(bar) = this.partner().get() {
//!             bar.set_c(bar.c() + 1);
//!         }
//!     }
//! }
//!
//! #[soa_methods]
//! impl Bar {
//!     #[parallel]
//!     pub fn increment(this: Obj<Self>, _dev: &Device<DemoAlloc>) {
//!         this.set_c(this.c() + 1);
//!     }
//! }
//!
//! # fn main() -> Result<(), dynasoar::host::Error> {
//! let rt = Runtime::<DemoAlloc>::builder("").backend(Backend::Cpu).quiet(true).build()?;
//! rt.parallel_new(Foo::create, 100)?;
//! rt.parallel_do_with(Foo::increment, 5)?;
//! rt.parallel_do(Bar::increment)?;
//!
//! let mut foos: Vec<i32> = rt.collect::<Foo>()?.iter().map(|f| f.a).collect();
//! let mut bars: Vec<i32> = rt.collect::<Bar>()?.iter().map(|b| b.c).collect();
//! foos.sort();
//! bars.sort();
//! assert_eq!(foos, (5..105).collect::<Vec<_>>());
//! assert_eq!(bars, (0..100).map(|i| 10 * i + 2).collect::<Vec<_>>());
//! assert_eq!(rt.count::<Bar>()?, 100);
//! # Ok(())
//! # }
//! ```
//!
//! An app runs on the GPU with the PTX of its model: a package's `build.rs` compiles the
//! package's library (the model) with `dynasoar_build::PtxBuilder::this_package().embed()`, and
//! [`include_ptx!`] embeds the result. See the repository's README, `templates/minimal` and
//! `docs/tutorial.md` for a complete package, and ARCHITECTURE.md for how the pieces fit.
#![no_std]
#![deny(missing_docs)]

/// Types an `#[atomic]` field may have.
pub use dynasoar_device::AtomicValue;
pub use dynasoar_device::{
    AllocatorSpec, AtomicRef, BlockSpan, ByIndex, Class, ClassInfo, ClassSpec, Concrete, DevPtr, Device,
    DeviceArray, DoWithoutArgument, Effects, Handle, Heap, HeapHeader, IsA, Kernel, MemberOf,
    NewWithoutArgument, NoParent, Obj, Packed, Packer, ParallelMethod, ParallelNew, Plain, RawHandle, Ref,
    Registered, Totals, View, Writable, arch, math, rand,
};
pub use dynasoar_macros::{Plain, allocator, kernel, soa_class, soa_methods};

/// The PTX that the package's build script compiled with `dynasoar-build`, as a `&'static str`:
/// `include_ptx!()` for `PtxBuilder::this_package().embed()` (the one-package form: a model
/// library and its app in one package), `include_ptx!("name")` for `embed_as("name")`.
///
/// ```ignore
/// const PTX: &str = dynasoar::include_ptx!();
/// let rt = Runtime::<Space>::builder(PTX).build()?;
/// ```
///
/// Where the device build failed with errors the host build does not report, this is a
/// compile error that shows them (see `PtxBuilder::embed_as`).
#[macro_export]
macro_rules! include_ptx {
    () => {
        $crate::include_ptx!("model")
    };
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/", $name, ".ptx.rs"))
    };
}

/// The DynaSOAr core's building blocks, for code that works below the object API (custom
/// kernels over the heap, allocator benchmarks): the heap, its allocator, bitmaps, blocks,
/// handles, block geometry, error bits and the kernels' launch parameters.
pub mod engine {
    pub use dynasoar_device::{
        ClassShape, DoAll, DoParams, Either, GatherParams, Listing, NewParams, ObjectStore, Prefetch,
        StoreHeader, StorePtr, allocator, bitmap, block, do_all_block_threads, do_all_blocks, errors, handle,
        heap, layout,
    };
}

/// What dynasoar is compared against: general-purpose GPU allocators and the AOS object store
/// (feature `baselines`).
#[cfg(feature = "baselines")]
pub use dynasoar_baselines as baselines;

#[cfg(not(target_arch = "nvptx64"))]
pub use dynasoar_host as host;

/// What model code and host code need in scope.
pub mod prelude {
    pub use dynasoar_device::arch::{self, WarpGroup};
    pub use dynasoar_device::math::{self, Vec2};
    pub use dynasoar_device::rand::Rng;
    pub use dynasoar_device::{
        AtomicRef, DevPtr, Device, DeviceArray, Handle, Kernel, Obj, Plain, Ref, Totals,
    };
    pub use dynasoar_macros::{Plain, kernel, soa_class, soa_methods};

    #[cfg(not(target_arch = "nvptx64"))]
    pub use dynasoar_host::{Backend, Executor, Grid, Runtime, Total};
}

/// Paths used by macro-generated code. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use dynasoar_device::__macro_support::*;

    /// The object store a model's device code is compiled against (`allocator!` names it as
    /// its allocator's `Store`): DynaSOAr's heap, except in the comparison suite's AOS build
    /// (`cfg(dynasoar_aos)`, which enables feature `baselines`) and its BitmapAlloc build
    /// (`cfg(dynasoar_bitmap_alloc)` too: the store with one allocation bitmap per class), and
    /// on the host with feature `baselines`, where one build serves all three and the store's
    /// header tells them apart.
    #[cfg(all(target_arch = "nvptx64", not(dynasoar_aos)))]
    pub type SelectedStore = dynasoar_device::Heap<'static>;
    #[cfg(all(target_arch = "nvptx64", dynasoar_aos, not(dynasoar_bitmap_alloc)))]
    pub type SelectedStore = dynasoar_baselines::aos::AosStore;
    #[cfg(all(target_arch = "nvptx64", dynasoar_aos, dynasoar_bitmap_alloc))]
    pub type SelectedStore = dynasoar_baselines::bitmap_store::BitmapStore;
    #[cfg(all(not(target_arch = "nvptx64"), feature = "baselines"))]
    pub type SelectedStore = dynasoar_device::Either<
        dynasoar_device::Heap<'static>,
        dynasoar_device::Either<
            dynasoar_baselines::aos::AosStore,
            dynasoar_baselines::bitmap_store::BitmapStore,
        >,
    >;
    #[cfg(all(not(target_arch = "nvptx64"), not(feature = "baselines")))]
    pub type SelectedStore = dynasoar_device::Heap<'static>;
}
