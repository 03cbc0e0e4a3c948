//! Building a [`Runtime`]: [`RuntimeBuilder`], its options and their defaults.

use std::marker::PhantomData;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use dynasoar_device::heap::HeapPlan;
use dynasoar_device::{AllocatorSpec, Concrete, MemberOf};

use super::Runtime;
use super::listings::Listings;
use super::profile::Profile;
use crate::backend::{Backend, Executor, ExecutorOptions};
use crate::do_all::{DoAllLoop, DoAllWaves, LoopTuner, WaveTuner};
use crate::error::{Error, Result};
use crate::heap::{AllocatorVariant, DeviceHeap, Enumeration};
use crate::store::{DynasoarStore, ModelPtx, StoreFactory, StoreSpec};

/// Heap size when the builder is not told.
pub const DEFAULT_HEAP_BYTES: u64 = 256 << 20;

/// Builds a [`Runtime`].
pub struct RuntimeBuilder<A> {
    ptx: ModelPtx,
    store: Box<dyn StoreFactory>,
    heap_bytes: u64,
    /// Objects per class (by type id) that [`heap_for`](RuntimeBuilder::heap_for) sized the
    /// heap for; empty when the heap size was given in bytes.
    heap_objects: Vec<(u8, u64)>,
    exec: ExecutorOptions,
    deferred_checks: bool,
    profile: bool,
    /// `None`: as `DYNASOAR_PROFILE` says.
    profile_methods: Option<bool>,
    /// `None`: as `DYNASOAR_REUSE_LISTINGS` says.
    reuse_listings: Option<bool>,
    /// `None`: as `DYNASOAR_MERGE_SUBCLASSES` says.
    merge_subclasses: Option<bool>,
    do_all_loop: DoAllLoop,
    do_all_waves: DoAllWaves,
    /// `None`: as `DYNASOAR_ENUMERATION` says.
    enumeration: Option<Enumeration>,
    /// `None`: as `DYNASOAR_ALLOCATOR_VARIANT` says.
    allocator_variant: Option<AllocatorVariant>,
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
            heap_objects: Vec::new(),
            exec: ExecutorOptions::default(),
            deferred_checks: false,
            profile: false,
            profile_methods: None,
            reuse_listings: None,
            merge_subclasses: None,
            do_all_loop: DoAllLoop::Auto,
            do_all_waves: DoAllWaves::Auto,
            enumeration: None,
            allocator_variant: None,
            _alloc: PhantomData,
        }
    }
}

impl<A: AllocatorSpec> RuntimeBuilder<A> {
    /// Bytes of device memory for the heap (default 256 MiB). Replaces a size from
    /// [`heap_for`](Self::heap_for).
    pub fn heap_bytes(mut self, bytes: u64) -> Self {
        self.heap_bytes = bytes;
        self.heap_objects.clear();
        self
    }

    /// Size the heap for at most `count` objects of class `T` alive at once, besides the
    /// objects of the other classes given by earlier calls (e.g.
    /// `.heap_for::<Fish>(1 << 20).heap_for::<Shark>(1 << 18)`); replaces a size in bytes.
    ///
    /// The heap gets the blocks these objects fill, a quarter more for blocks that are only
    /// partly full (fragmentation), and 64 more per class for the blocks that warps fill at
    /// the same time: a starting point that the out-of-memory error corrects if a model needs
    /// more.
    pub fn heap_for<T>(mut self, count: u64) -> Self
    where
        T: Concrete + MemberOf<A>,
    {
        match self.heap_objects.iter_mut().find(|(id, _)| *id == T::TYPE_ID) {
            Some((_, n)) => *n = n.saturating_add(count),
            None => self.heap_objects.push((T::TYPE_ID, count)),
        }
        self
    }

    /// The heap bytes [`heap_for`](Self::heap_for)'s object counts need: the smallest heap
    /// whose plan has the blocks (found by bisection over [`HeapPlan`], which lays out the
    /// bitmaps and enumeration areas too).
    fn bytes_for_objects(&self) -> Result<u64> {
        let classes = A::CLASSES;
        let mut blocks = 0u64;
        for &(id, count) in &self.heap_objects {
            let per_block = classes[id as usize].objects_per_block.max(1) as u64;
            blocks = blocks.saturating_add(count.div_ceil(per_block));
        }
        let concrete = classes.iter().filter(|c| !c.is_abstract).count() as u64;
        let wanted = blocks.saturating_add(blocks / 4).saturating_add(64 * concrete);
        let objects: Vec<u32> = classes.iter().map(|c| c.objects_per_block).collect();
        let plan_blocks =
            |bytes: u64| HeapPlan::new(0, bytes, A::BLOCK_BYTES, &objects).map(|p| p.config.num_blocks);
        let (mut low, mut high) =
            (A::BLOCK_BYTES, wanted.saturating_mul(A::BLOCK_BYTES).saturating_mul(2).max(1 << 20));
        if plan_blocks(high).map_or(true, |n| n < wanted) {
            return Err(Error::HeapConfig(format!(
                "heap_for: {blocks} blocks of {} bytes do not fit a heap this host can address; create \
                 fewer objects",
                A::BLOCK_BYTES
            )));
        }
        while low + 1 < high {
            let mid = low + (high - low) / 2;
            if plan_blocks(mid).is_ok_and(|n| n >= wanted) { high = mid } else { low = mid }
        }
        Ok(high.next_multiple_of(1 << 20))
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
    /// `count`, `stats`), naming the kernel that raised them. Faster for long runs of small
    /// steps. The runtime still checks on its own every 50 ms on the GPU (a heap that fills
    /// mid-run stops the run within that time) and after every launch on the CPU backend.
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
    /// `DYNASOAR_PROFILE=1`. Every launch then records events, which a run of many small
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

    /// Let a `parallel_do` over a class with subclasses visit several of its concrete classes in
    /// one launch, each thread walking their objects one class after the other (default on;
    /// also off with `DYNASOAR_MERGE_SUBCLASSES=0`): the classes that have the same objects per
    /// block, on the method's loop, unless the method has lanes. Off, every concrete class gets
    /// a launch of its own, one after the other. The same objects are visited either way.
    pub fn merge_subclass_launches(mut self, merge: bool) -> Self {
        self.merge_subclasses = Some(merge);
        self
    }

    /// Which loop `parallel_do` kernels run (default [`DoAllLoop::Auto`]: the streaming loop
    /// for short methods, see [`DoAllLoop`] and [`Runtime::do_all_loops`]).
    /// `DYNASOAR_DO_ALL=auto|plain|streaming|adaptive` overrides it.
    pub fn do_all_loop(mut self, choice: DoAllLoop) -> Self {
        self.do_all_loop = choice;
        self
    }

    /// How many times the grid of whole waves a `parallel_do` on the plain loop launches
    /// (default [`DoAllWaves::Auto`]: timed per method and class on the first launches, see
    /// [`DoAllWaves`] and [`Runtime::do_all_waves`]). `DYNASOAR_DO_ALL_WAVES=auto|N` overrides
    /// it. Every choice visits the same objects; only the speed differs.
    pub fn do_all_waves(mut self, choice: DoAllWaves) -> Self {
        self.do_all_waves = choice;
        self
    }

    /// How the heap lists a class's blocks before each do-all over it (by default as
    /// `DYNASOAR_ENUMERATION=flat|hierarchical` says, else [`Enumeration::Hierarchical`] in
    /// heaps of at least 4M blocks, where it was faster on an H200, and flat in smaller ones). Both list the same blocks; the flat form tests every block of the
    /// heap, the hierarchical one only the blocks of the class's non-empty bitmap containers.
    /// Stores other than DynaSOAr's heap ignore it.
    pub fn enumeration(mut self, enumeration: Enumeration) -> Self {
        self.enumeration = Some(enumeration);
        self
    }

    /// Which variant of DynaSOAr's allocator the heap runs (default
    /// [`AllocatorVariant::DEFAULT`], the paper's, or as `DYNASOAR_ALLOCATOR_VARIANT` says where
    /// this is not called): the paper's DynaSOAr-NoCoal and -NoShift, for measuring what warp
    /// coalescing and bitmap rotation bring (its Figure 12(d)). Every variant computes the same
    /// objects; they differ in speed and in where objects land. Stores other than DynaSOAr's
    /// heap ignore it.
    pub fn allocator_variant(mut self, variant: AllocatorVariant) -> Self {
        self.allocator_variant = Some(variant);
        self
    }

    pub fn build(self) -> Result<Runtime<A>> {
        let heap_bytes =
            if self.heap_objects.is_empty() { self.heap_bytes } else { self.bytes_for_objects()? };
        let mut options = self.exec;
        if let Some(compile) = self.store.module_compile() {
            options.module_compile = compile;
        }
        let exec = Executor::new(self.store.ptx(&self.ptx)?, options)?;
        let settings = exec.settings();
        let profile_methods = self.profile_methods.unwrap_or(settings.profile);
        let reuse_listings = self.reuse_listings.unwrap_or(settings.reuse_listings);
        let merge_subclasses = self.merge_subclasses.unwrap_or(settings.merge_subclasses);
        let do_all_loop = settings.do_all.unwrap_or(self.do_all_loop);
        let do_all_waves = settings.do_all_waves.unwrap_or(self.do_all_waves);
        let spec = StoreSpec { heap_bytes, block_bytes: A::BLOCK_BYTES, classes: A::CLASSES };
        let store = self.store.create(&exec, spec)?;
        if let (Some(enumeration), Some(heap)) =
            (self.enumeration, store.as_any().downcast_ref::<DeviceHeap>())
        {
            heap.set_enumeration(enumeration);
        }
        if let (Some(variant), Some(heap)) =
            (self.allocator_variant, store.as_any().downcast_ref::<DeviceHeap>())
        {
            heap.set_allocator_variant(&exec, variant)?;
        }
        let listings = (store.lists_classes() && reuse_listings).then(|| Mutex::new(Listings::new(&exec)));
        Ok(Runtime {
            loops: LoopTuner::new(do_all_loop, &exec),
            waves: WaveTuner::new(do_all_waves, &exec),
            exec,
            store,
            deferred: self.deferred_checks,
            profile: (self.profile || profile_methods).then(|| Mutex::new(Profile::new(profile_methods))),
            listings,
            last_check: Mutex::new(std::time::Instant::now()),
            classes: A::CLASSES,
            merge_subclasses,
            unwaited: Mutex::new(Default::default()),
            bulk_blocks: AtomicU64::new(0),
            kept: Default::default(),
            _alloc: PhantomData,
        })
    }
}
