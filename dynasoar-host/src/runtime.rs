//! `Runtime<A>`: a heap of allocator `A` on a backend, and the SMMO operations on it.

use std::marker::PhantomData;
use std::sync::Mutex;
use std::time::Duration;

use dynasoar_device::heap::MAX_CLASSES;
use dynasoar_device::{
    AllocatorSpec, ClassInfo, Concrete, DoParams, GatherParams, Handle, MemberOf, NewParams, ParallelMethod,
    ParallelNew, Plain, do_all_blocks,
};

use crate::backend::{Backend, Executor, ExecutorOptions, Grid, Marker};
use crate::do_all::{DoAllLoop, LoopChoice, LoopTuner, Pick};
use crate::error::{Error, Result};
use crate::heap::{DeviceHeap, HeapStats};
use crate::store::{DynasoarStore, HostStore, ModelPtx, StoreFactory, StoreSpec};

/// Threads per block of do-all launches.
const THREADS: u32 = 256;

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
            profile: (self.profile || profile_methods)
                .then(|| Mutex::new(Profile { methods: profile_methods, ..Profile::default() })),
            listings,
            _alloc: PhantomData,
        })
    }
}

/// What a span of profiled work was, and for which class or kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Enumerate(&'static str),
    Method(&'static str),
}

/// Device time of one kernel (or of one class's enumeration) over a run, from
/// [`Runtime::kernel_profile`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelTime {
    /// The kernel's name, or `enumerate <class>`.
    pub name: String,
    pub launches: u64,
    pub total: Duration,
}

/// Profiled work not yet timed, and the per-kernel totals of what was.
///
/// `marks` is a sequence of markers; a mark with a phase ends a span that began at the mark
/// before it. A `parallel_do`'s enumeration and method spans share their boundary marker.
/// Spans of different calls do not: when the host cannot keep the GPU busy, a shared marker
/// would count the GPU's wait for the next call as that call's work.
#[derive(Default)]
struct Profile {
    /// Whether method kernels are timed too (else only enumerations, each span on its own).
    methods: bool,
    marks: Vec<(Option<Phase>, Marker)>,
    /// Launches and device time of each phase timed so far.
    totals: Vec<(Phase, u64, Duration)>,
}

impl Profile {
    fn add(&mut self, phase: Phase, d: Duration) {
        match self.totals.iter_mut().find(|t| t.0 == phase) {
            Some(t) => {
                t.1 += 1;
                t.2 += d;
            }
            None => self.totals.push((phase, 1, d)),
        }
    }
}

/// Device time spent since the last [`Runtime::take_timings`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// Listing blocks and snapshotting iteration bitmaps before do-all kernels.
    pub enumeration: Duration,
    /// The do-all and constructor kernels themselves.
    pub methods: Duration,
    /// Do-all launches (one per concrete class per `parallel_do`).
    pub launches: u64,
}

/// A heap of allocator `A` on a backend: create objects, run methods on all of them, read them
/// back.
///
/// ```ignore
/// let rt = Runtime::<Space>::builder(MODELS_PTX).heap_bytes(1 << 30).build()?;
/// rt.parallel_new(Body::random, 20_000)?;
/// for _ in 0..steps {
///     rt.parallel_do(Body::compute_force)?;
///     rt.parallel_do_with(Body::step, 0.02f32)?;
/// }
/// let bodies: Vec<Body> = rt.collect::<Body>()?;
/// ```
pub struct Runtime<A> {
    exec: Executor,
    store: Box<dyn HostStore>,
    deferred: bool,
    profile: Option<Mutex<Profile>>,
    /// Which enumeration lists a `parallel_do` may use again; `None` when every `parallel_do`
    /// lists anew.
    listings: Option<Mutex<Listings>>,
    /// Which do-all loop each method runs.
    loops: LoopTuner,
    _alloc: PhantomData<fn() -> A>,
}

/// Which classes' enumeration lists are still right, so that a `parallel_do` need not list
/// them again: a list stays right until a launch that may create or free objects of its class
/// (a method's [`Effects`](dynasoar_device::Effects)). Skipping the listing saves a launch;
/// classes that never change (the cells of a grid) are then listed once.
struct Listings {
    /// Classes (bits by type id) listed since the last launch that could change their objects.
    current: u64,
    /// The parity of each class's last listing (which counter its do-all reads).
    parity: [u32; MAX_CLASSES],
    /// [`Executor::device_writes`] after this runtime's last `parallel_do`. Any other count
    /// means that something else ran since (a `parallel_new`, a `collect`, an app's own
    /// kernel), and no list is trusted.
    writes: u64,
}

impl Listings {
    fn new(exec: &Executor) -> Self {
        Listings { current: 0, parity: [0; MAX_CLASSES], writes: exec.device_writes() }
    }

    /// Forget every list if anything but this runtime's `parallel_do`s ran since the last one.
    fn check_writes(&mut self, exec: &Executor) {
        if self.writes != exec.device_writes() {
            self.current = 0;
        }
    }

    /// The parity of `class`'s list, if it is still right.
    fn kept(&self, class: u8) -> Option<u32> {
        (self.current & (1 << class) != 0).then(|| self.parity[class as usize])
    }

    /// `class` was listed with `parity`.
    fn listed(&mut self, class: u8, parity: u32) {
        self.current |= 1 << class;
        self.parity[class as usize] = parity;
    }
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

    /// The backend, for buffers, timing and launching other kernels.
    pub fn executor(&self) -> &Executor {
        &self.exec
    }

    /// DynaSOAr's heap (`None` when the objects are in another store).
    pub fn heap(&self) -> Option<&DeviceHeap> {
        self.store.as_any().downcast_ref()
    }

    /// The store the objects live in, for store-specific calls (`as_any().downcast_ref()`).
    pub fn object_store(&self) -> &dyn HostStore {
        &*self.store
    }

    /// The name of the store the objects live in (`dynasoar`, or a general allocator's).
    pub fn store_name(&self) -> String {
        self.store.name()
    }

    /// The allocator's classes, in type-id order.
    pub fn classes(&self) -> &'static [ClassInfo] {
        A::CLASSES
    }

    /// Run `f` (which queues work) and time it as `phase`; `chained` when it follows another
    /// span of the same call, whose end marker then starts this one.
    fn timed<R>(&self, phase: Phase, chained: bool, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let Some(profile) = &self.profile else { return f() };
        {
            let mut p = profile.lock().unwrap();
            if matches!(phase, Phase::Method(_)) && !p.methods {
                drop(p);
                return f();
            }
            // Without method spans, the mark before an enumeration may end a span of an
            // earlier call: each enumeration gets its own start.
            if !chained || !p.methods || p.marks.is_empty() {
                let start = self.exec.marker()?;
                p.marks.push((None, start));
            }
        }
        let r = f()?;
        let end = self.exec.marker()?;
        let mut p = profile.lock().unwrap();
        p.marks.push((Some(phase), end));
        Ok(r)
    }

    /// After queuing `kernels`: check now, or remember them for the next check.
    fn launched(&self, kernels: &[&'static str]) -> Result<()> {
        self.exec.note_for_check(kernels);
        if self.deferred { Ok(()) } else { self.sync() }
    }

    /// Wait for all queued work and report what went wrong in it: a failed kernel, or errors
    /// raised by device code (out of memory, invalid frees), naming the kernels launched since
    /// the last check.
    pub fn sync(&self) -> Result<()> {
        self.exec.synchronize()?;
        let kernels = self.exec.take_for_check();
        self.store.take_errors(&self.exec, &kernels)
    }

    /// Run `method` on every object of class `T` and its subclasses that exists now (objects
    /// created meanwhile are not visited; a method may free its own object).
    pub fn parallel_do<T>(&self, method: ParallelMethod<T, ()>) -> Result<()>
    where
        T: MemberOf<A>,
    {
        self.parallel_do_with(method, ())
    }

    /// [`parallel_do`](Self::parallel_do) for a method that takes an argument.
    pub fn parallel_do_with<T, Arg>(&self, method: ParallelMethod<T, Arg>, arg: Arg) -> Result<()>
    where
        T: MemberOf<A>,
        Arg: Plain,
    {
        let kernel = method.kernel();
        // Each span after the first starts where the one before it ended.
        let mut chained = false;
        if self.store.prepares() {
            self.timed(Phase::Enumerate("store lists"), false, || self.store.prepare(&self.exec))?;
            chained = true;
        }
        let mut listings = self.listings.as_ref().map(|l| l.lock().unwrap());
        if let Some(l) = &mut listings {
            l.check_writes(&self.exec);
        }
        // Which of the method's kernels ran, to name them in errors.
        let (mut ran_plain, mut ran_streaming) = (false, false);
        for class in ClassInfo::concrete_in(A::CLASSES, T::SUBTREE) {
            let id = class.type_id;
            let kept = listings.as_ref().and_then(|l| l.kept(id));
            let parity = match kept {
                Some(parity) => parity,
                None if !self.store.lists_classes() => 0,
                None => {
                    let parity = self
                        .timed(Phase::Enumerate(class.name), chained, || self.store.list(&self.exec, id))?;
                    chained = true;
                    if let Some(l) = &mut listings {
                        l.listed(id, parity);
                    }
                    parity
                }
            };
            let params = DoParams {
                store: self.store.ptr(),
                class: id as u32,
                objects_per_block: class.objects_per_block,
                parity,
                _reserved: 0,
                arg,
            };
            let (launch, pick) = match method.streaming_kernel().filter(|_| self.store.streams()) {
                Some(streaming) => {
                    let pick = self.loops.pick(&self.exec, kernel.name(), streaming, THREADS, id)?;
                    (if pick.streaming { streaming } else { kernel }, pick)
                }
                _ => (kernel, Pick { streaming: false, timed: false }),
            };
            let grid = if pick.streaming {
                self.streaming_grid(launch, class)?
            } else {
                self.do_all_grid(launch, class)?
            };
            let start = if pick.timed { Some(self.exec.marker()?) } else { None };
            self.timed(Phase::Method(launch.name()), chained, || self.exec.launch(launch, grid, params))?;
            if let Some(start) = start {
                self.loops.timed(kernel.name(), id, pick.streaming, start, self.exec.marker()?);
            }
            ran_plain |= !pick.streaming;
            ran_streaming |= pick.streaming;
            chained = true;
            if let Some(l) = &mut listings {
                l.current &= !method.effects().changed();
            }
        }
        if let Some(l) = &mut listings {
            l.writes = self.exec.device_writes();
        }
        drop(listings);
        match method.streaming_kernel().filter(|_| ran_streaming) {
            Some(streaming) if ran_plain => self.launched(&[kernel.name(), streaming.name()]),
            Some(streaming) => self.launched(&[streaming.name()]),
            None => self.launched(&[kernel.name()]),
        }
    }

    /// Whole waves of `kernel`, a do-all or gather over `class` with the plain loop, in blocks
    /// of a multiple of its objects per block, so that each thread keeps one slot for the whole
    /// loop (see `for_each_listed` in the device crate). The AOS store's loop takes any grid.
    fn do_all_grid<P: Plain>(&self, kernel: &dynasoar_device::Kernel<P>, class: &ClassInfo) -> Result<Grid> {
        self.exec.wave_grid(kernel, self.store.block_threads(class, THREADS))
    }

    /// About whole waves of `kernel`, a do-all with the streaming loop over `class`: blocks of
    /// whole warps, as many as make the thread count a multiple of the class's objects per
    /// block (see `for_each_listed_streaming` in the device crate).
    fn streaming_grid<P: Plain>(
        &self,
        kernel: &dynasoar_device::Kernel<P>,
        class: &ClassInfo,
    ) -> Result<Grid> {
        let grid = self.exec.wave_grid(kernel, THREADS)?;
        Ok(Grid::new(do_all_blocks(class.objects_per_block, THREADS, grid.blocks), THREADS))
    }

    /// Which do-all loop each method runs over each class, as decided so far (see
    /// [`DoAllLoop`]): a method that reads no field of `this` has only the plain loop and is
    /// not listed.
    pub fn do_all_loops(&self) -> Vec<LoopChoice> {
        self.loops.choices()
    }

    /// The do-all loop choice in force: the builder's, or `DYNASOAR_DO_ALL`'s (auto and
    /// adaptive on the CPU backend are plain).
    pub fn do_all_loop(&self) -> DoAllLoop {
        self.loops.mode()
    }

    /// Create `count` objects of class `T`, object `i` initialised by `constructor(dev, i)`.
    pub fn parallel_new<T>(&self, constructor: ParallelNew<T, ()>, count: u64) -> Result<()>
    where
        T: Concrete + MemberOf<A>,
    {
        self.parallel_new_with(constructor, count, ())
    }

    /// [`parallel_new`](Self::parallel_new) for a constructor that takes an argument.
    pub fn parallel_new_with<T, Arg>(
        &self,
        constructor: ParallelNew<T, Arg>,
        count: u64,
        arg: Arg,
    ) -> Result<()>
    where
        T: Concrete + MemberOf<A>,
        Arg: Plain,
    {
        let kernel = constructor.kernel();
        let most = self.exec.wave_grid(kernel, THREADS)?.total_threads() as u64;
        let grid = Grid::for_elements(count.min(most) as usize, THREADS);
        let params = NewParams { store: self.store.ptr(), first: 0, count, arg };
        self.timed(Phase::Method(kernel.name()), false, || self.exec.launch(kernel, grid, params))?;
        self.launched(&[kernel.name()])
    }

    /// Every object of class `T` and its subclasses, as `T` values (in no particular order).
    pub fn collect<T>(&self) -> Result<Vec<T>>
    where
        T: MemberOf<A>,
    {
        self.sync()?;
        self.store.prepare(&self.exec)?;
        let mut out = Vec::new();
        for class in ClassInfo::concrete_in(A::CLASSES, T::SUBTREE) {
            let parity = self.store.list(&self.exec, class.type_id)?;
            let capacity = self.store.listed_objects(&self.exec, class, parity)?;
            if capacity == 0 {
                continue;
            }
            let values = self.exec.alloc_zeroed::<T>(capacity)?;
            let written = self.exec.alloc_zeroed::<u32>(1)?;
            let params = GatherParams {
                store: self.store.ptr(),
                class: class.type_id as u32,
                objects_per_block: class.objects_per_block,
                parity,
                _reserved: 0,
                out: values.ptr().cast(),
                capacity: capacity as u64,
                written: written.ptr(),
            };
            self.exec.launch(&T::GATHER, self.do_all_grid(&T::GATHER, class)?, params)?;
            let n = self.exec.read_all(&written)?[0] as usize;
            if n > capacity {
                return Err(Error::InvalidArgument(format!(
                    "collect found {n} objects of {} where {capacity} were listed (internal error)",
                    class.name
                )));
            }
            out.extend(self.exec.read(&values, 0, n)?);
        }
        Ok(out)
    }

    /// Handles of every object of class `T` and its subclasses (in no particular order), for
    /// checks: e.g. that every object is referenced from where the model expects.
    pub fn handles<T>(&self) -> Result<Vec<Handle<T>>>
    where
        T: MemberOf<A>,
    {
        self.sync()?;
        let classes: Vec<u8> = ClassInfo::concrete_in(A::CLASSES, T::SUBTREE).map(|c| c.type_id).collect();
        let raws = self.store.handles(&self.exec, &classes)?;
        // SAFETY: live objects of classes in `T`'s subtree.
        Ok(raws.into_iter().map(|raw| unsafe { Handle::from_raw(raw) }).collect())
    }

    /// Number of objects of class `T` and its subclasses.
    pub fn count<T>(&self) -> Result<u64>
    where
        T: MemberOf<A>,
    {
        let stats = self.stats()?;
        Ok(stats
            .classes
            .iter()
            .enumerate()
            .filter(|(i, _)| T::SUBTREE & (1 << i) != 0)
            .map(|(_, c)| c.objects)
            .sum())
    }

    /// Blocks, objects and fragmentation per class, and how full the heap is. For an AOS
    /// store only the objects per class are known (blocks are zero).
    pub fn stats(&self) -> Result<HeapStats> {
        self.sync()?;
        self.store.stats(&self.exec, A::CLASSES)
    }

    /// Free every object.
    pub fn reset(&self) -> Result<()> {
        self.sync()?;
        self.store.reset(&self.exec)
    }
}

impl<A> Runtime<A> {
    /// Device time spent in enumeration and in methods since the last call (needs
    /// `profile(true)` on the builder, and `profile_methods(true)` for the methods; zero
    /// otherwise). Waits for queued work.
    pub fn take_timings(&self) -> Result<Timings> {
        let Some(profile) = &self.profile else { return Ok(Timings::default()) };
        let mut profile = profile.lock().unwrap();
        let marks = std::mem::take(&mut profile.marks);
        let mut t = Timings::default();
        for pair in marks.windows(2) {
            let (start, (phase, end)) = (&pair[0].1, &pair[1]);
            let Some(phase) = *phase else { continue };
            let d = self.exec.elapsed(start, end)?;
            match phase {
                Phase::Enumerate(_) => t.enumeration += d,
                Phase::Method(_) => {
                    t.methods += d;
                    t.launches += 1;
                }
            }
            profile.add(phase, d);
        }
        for (_, marker) in marks {
            self.exec.recycle(marker);
        }
        Ok(t)
    }

    /// Device time per kernel and per class enumeration since the runtime was built (needs
    /// `profile(true)`; empty otherwise), most expensive first. Waits for queued work.
    pub fn kernel_profile(&self) -> Result<Vec<KernelTime>> {
        let Some(profile) = &self.profile else { return Ok(Vec::new()) };
        self.take_timings()?;
        let totals = profile.lock().unwrap().totals.clone();
        let mut kernels: Vec<KernelTime> = totals
            .into_iter()
            .map(|(phase, launches, total)| KernelTime {
                name: match phase {
                    Phase::Enumerate(class) => format!("enumerate {class}"),
                    Phase::Method(kernel) => kernel.to_string(),
                },
                launches,
                total,
            })
            .collect();
        kernels.sort_by_key(|k| std::cmp::Reverse(k.total));
        Ok(kernels)
    }

    /// The per-kernel profile as a table, for `DYNASOAR_PROFILE`.
    fn profile_table(&self) -> Result<String> {
        let kernels = self.kernel_profile()?;
        let total: Duration = kernels.iter().map(|k| k.total).sum();
        let mut out = format!(
            "{:<48} {:>9} {:>12} {:>10} {:>6}\n",
            "kernel", "launches", "total ms", "mean us", "share"
        );
        for k in &kernels {
            out += &format!(
                "{:<48} {:>9} {:>12.3} {:>10.2} {:>5.1}%\n",
                k.name,
                k.launches,
                k.total.as_secs_f64() * 1e3,
                k.total.as_secs_f64() * 1e6 / k.launches.max(1) as f64,
                100.0 * k.total.as_secs_f64() / total.as_secs_f64().max(1e-12),
            );
        }
        Ok(out)
    }
}

/// With `DYNASOAR_PROFILE` set, a profiled runtime prints its device time per kernel when it
/// is dropped: where a simulation spends its time, without a profiler.
impl<A> Drop for Runtime<A> {
    fn drop(&mut self) {
        if self.profile.is_none() || !self.exec.settings().profile {
            return;
        }
        match self.profile_table() {
            Ok(table) => eprint!("device time per kernel ({}):\n{table}", self.exec.description()),
            Err(e) => eprintln!("DYNASOAR_PROFILE: no profile: {e}"),
        }
    }
}
