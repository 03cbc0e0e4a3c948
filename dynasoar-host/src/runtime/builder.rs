//! Building a [`Runtime`]: [`RuntimeBuilder`], its options and their defaults.

use std::marker::PhantomData;
use std::sync::Mutex;

use dynasoar_device::AllocatorSpec;

use super::Runtime;
use super::listings::Listings;
use super::profile::Profile;
use crate::backend::{Backend, Executor, ExecutorOptions};
use crate::do_all::{DoAllLoop, LoopTuner};
use crate::error::Result;
use crate::store::{DynasoarStore, ModelPtx, StoreFactory, StoreSpec};

/// Heap size when the builder is not told.
pub const DEFAULT_HEAP_BYTES: u64 = 256 << 20;

/// Builds a [`Runtime`].
pub struct RuntimeBuilder<A> {
    ptx: ModelPtx,
    store: Box<dyn StoreFactory>,
    heap_bytes: u64,
    exec: ExecutorOptions,
    deferred_checks: bool,
    profile: bool,
    /// `None`: as `DYNASOAR_PROFILE` says.
    profile_methods: Option<bool>,
    /// `None`: as `DYNASOAR_REUSE_LISTINGS` says.
    reuse_listings: Option<bool>,
    do_all_loop: DoAllLoop,
    _alloc: PhantomData<fn() -> A>,
}

impl<A: AllocatorSpec> Runtime<A> {
    /// A builder for a runtime whose kernels are in `ptx` (the app's embedded model PTX: a
    /// `&'static str`, a `String`, or a [`ModelPtx`] with the AOS build for general
    /// allocators).
    pub fn builder(ptx: impl Into<ModelPtx>) -> RuntimeBuilder<A> {
        RuntimeBuilder {
            ptx: ptx.into(),
            store: Box::new(DynasoarStore),
            heap_bytes: DEFAULT_HEAP_BYTES,
            exec: ExecutorOptions::default(),
            deferred_checks: false,
            profile: false,
            profile_methods: None,
            reuse_listings: None,
            do_all_loop: DoAllLoop::Auto,
            _alloc: PhantomData,
        }
    }
}

impl<A: AllocatorSpec> RuntimeBuilder<A> {
    /// Bytes of device memory for the heap (default 256 MiB).
    pub fn heap_bytes(mut self, bytes: u64) -> Self {
        self.heap_bytes = bytes;
        self
    }

    /// Keep objects in the store `store` makes (default [`DynasoarStore`]: DynaSOAr's heap).
    /// The comparison suite's stores come from `dynasoar::baselines::host::StoreChoice`; the
    /// heap size is then the general allocator's pool.
    pub fn store(mut self, store: impl StoreFactory + 'static) -> Self {
        self.store = Box::new(store);
        self
    }

    /// Where to run (default `Auto`: the GPU if there is one).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.exec.backend = backend;
        self
    }

    /// Threads of the CPU backend (default: all cores).
    pub fn cpu_threads(mut self, threads: usize) -> Self {
        self.exec.cpu_threads = Some(threads);
        self
    }

    /// Do not print which backend `Auto` chose.
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.exec.quiet = quiet;
        self
    }

    /// Executor options in full.
    pub fn executor_options(mut self, options: ExecutorOptions) -> Self {
        self.exec = options;
        self
    }

    /// Do not wait for each `parallel_do`/`parallel_new` to finish: launches queue up and errors
    /// (out of memory, traps) are reported by the next [`Runtime::sync`] (or `collect`,
    /// `count`, `stats`) with the kernels launched since. Faster for long runs of small steps.
    pub fn deferred_checks(mut self, deferred: bool) -> Self {
        self.deferred_checks = deferred;
        self
    }

    /// Time enumeration (see [`Runtime::take_timings`]): each listing of a class is timed
    /// with a pair of CUDA events, which cost the GPU a little time.
    pub fn profile(mut self, profile: bool) -> Self {
        self.profile = profile;
        self
    }

    /// Time each method kernel too (implies [`profile`](Self::profile)); on by default when
    /// `DYNASOAR_PROFILE` is set. Every launch then records events, which a run of many small
    /// kernels pays for in its total time.
    pub fn profile_methods(mut self, methods: bool) -> Self {
        self.profile_methods = Some(methods);
        self
    }

    /// Let `parallel_do` skip listing a class whose objects no launch since its last listing
    /// could have created or freed (default on; also off with `DYNASOAR_REUSE_LISTINGS=0`).
    /// A method that never names its `dev` parameter changes no class; one that does can
    /// declare which classes it creates and frees: `#[parallel(creates(Car), frees(Car))]`.
    pub fn reuse_listings(mut self, reuse: bool) -> Self {
        self.reuse_listings = Some(reuse);
        self
    }

    /// Which loop `parallel_do` kernels run (default [`DoAllLoop::Auto`]: the streaming loop
    /// for short methods, see [`DoAllLoop`] and [`Runtime::do_all_loops`]).
    /// `DYNASOAR_DO_ALL=auto|plain|streaming|adaptive` overrides it.
    pub fn do_all_loop(mut self, choice: DoAllLoop) -> Self {
        self.do_all_loop = choice;
        self
    }

    pub fn build(self) -> Result<Runtime<A>> {
        let mut options = self.exec;
        if let Some(compile) = self.store.module_compile() {
            options.module_compile = compile;
        }
        let exec = Executor::new(self.store.ptx(&self.ptx)?, options)?;
        let settings = exec.settings();
        let profile_methods = self.profile_methods.unwrap_or(settings.profile);
        let reuse_listings = self.reuse_listings.unwrap_or(settings.reuse_listings);
        let do_all_loop = settings.do_all.unwrap_or(self.do_all_loop);
        let spec =
            StoreSpec { heap_bytes: self.heap_bytes, block_bytes: A::BLOCK_BYTES, classes: A::CLASSES };
        let store = self.store.create(&exec, spec)?;
        let listings = (store.lists_classes() && reuse_listings).then(|| Mutex::new(Listings::new(&exec)));
        Ok(Runtime {
            loops: LoopTuner::new(do_all_loop, &exec),
            exec,
            store,
            deferred: self.deferred_checks,
            profile: (self.profile || profile_methods).then(|| Mutex::new(Profile::new(profile_methods))),
            listings,
            _alloc: PhantomData,
        })
    }
}
