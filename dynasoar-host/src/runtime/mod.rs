//! The runtime itself: [`Runtime<A>`], a heap of allocator `A` on a backend, and the SMMO
//! operations on it (`parallel_do`, `parallel_new`, `collect`, `handles`, `count`, `stats`,
//! `reset`, `sync`).
//!
//! Its other concepts have their own files: `builder.rs` builds a runtime, `profile.rs` times
//! its kernels, `listings.rs` keeps enumeration lists for the next `parallel_do`, `unwaited.rs`
//! knows which classes' allocation state a launch must have made exact first. The kernels
//! launched since the last check, which errors name, are the executor's
//! (`backend/pending.rs`).

mod builder;
mod by_index;
mod graph;
mod listings;
mod profile;
mod unwaited;

use std::marker::PhantomData;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dynasoar_device::{
    AllocatorSpec, BlockSpan, ClassInfo, Concrete, DevPtr, DoParams, DoWithoutArgument, Effects,
    GatherParams, Handle, MemberOf, NewParams, NewWithoutArgument, Packer, ParallelMethod, ParallelNew,
    Plain, block_full, do_all_blocks,
};

pub use builder::{DEFAULT_HEAP_BYTES, RuntimeBuilder};
pub use graph::StepGraph;
use listings::Listings;
pub use profile::{KernelTime, Timings};
use profile::{Phase, Profile};
use unwaited::Unwaited;

use crate::backend::{BackendKind, Executor, Grid};
use crate::do_all::{DoAllLoop, DoAllWaves, LoopChoice, LoopTuner, Pick, WaveChoice, WavePick, WaveTuner};
use crate::error::{Error, Result};
use crate::heap::{DeviceHeap, HeapStats, type_ids};
use crate::store::HostStore;
use crate::totals::{HostTotals, Total, TotalValue};

/// Threads per block of do-all launches (the plain loop's may be half as many, see `do_all_grid`).
const THREADS: u32 = 256;

/// With deferred checks on the GPU, how often the runtime still checks for errors: a heap that
/// fills mid-run is reported within this much time, not after the last step. A check waits
/// for the queued kernels, which leaves the GPU idle for about one launch's latency (some
/// microseconds): under 0.1% of the time at this interval.
const DEFERRED_CHECK_INTERVAL: Duration = Duration::from_millis(50);

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
    /// How many waves each method's plain-loop grid has.
    waves: WaveTuner,
    /// When the runtime last checked for errors (see [`DEFERRED_CHECK_INTERVAL`]).
    last_check: Mutex<Instant>,
    /// The allocator's classes (`A::CLASSES`), for what `Drop` reports.
    classes: &'static [ClassInfo],
    /// Whether a `parallel_do` over a class with subclasses visits several of its concrete
    /// classes in one launch ([`RuntimeBuilder::merge_subclass_launches`]).
    merge_subclasses: bool,
    /// Classes whose allocation state frees that did not wait for it left to make exact.
    unwaited: Mutex<Unwaited>,
    /// Blocks that `parallel_new` launches have asked for so far: the next one's first block
    /// (see [`NewParams::first_block`]).
    bulk_blocks: AtomicU64,
    /// Tables that [`by_index`](Self::by_index) keeps.
    kept: by_index::Kept,
    _alloc: PhantomData<fn() -> A>,
}

impl<A: AllocatorSpec> Runtime<A> {
    /// The backend, for buffers, timing and launching other kernels.
    pub fn executor(&self) -> &Executor {
        &self.exec
    }

    /// DynaSOAr's heap (`None` when the objects are in another store).
    pub fn heap(&self) -> Option<&DeviceHeap> {
        self.store.as_any().downcast_ref()
    }

    /// The [`Packer`] that kernels get from `Device::packer`, for the host to read back what
    /// they packed: `None` where kernels get none (objects in a store other than DynaSOAr's
    /// heap, or a heap whose handles do not fit in 32 bits).
    pub fn packer(&self) -> Option<Packer<A>> {
        let span = BlockSpan::of_heap(self.heap()?.config());
        // SAFETY: the blocks of this runtime's heap, whose handles the packer will name.
        unsafe { Packer::for_heap(span) }
    }

    /// The store the objects live in, for store-specific calls (`as_any().downcast_ref()`).
    pub fn object_store(&self) -> &dyn HostStore {
        &*self.store
    }

    /// The allocator's classes, in type-id order.
    pub fn classes(&self) -> &'static [ClassInfo] {
        A::CLASSES
    }

    /// After queuing `kernels`: check now, or remember them for the next check. With deferred
    /// checks, the runtime still checks after every launch on the CPU backend (where the
    /// launch has finished and a check only reads the heap's state) and with
    /// `sync_each_launch`, and on the GPU once every [`DEFERRED_CHECK_INTERVAL`].
    fn launched(&self, kernels: &[&'static str]) -> Result<()> {
        if self.exec.capturing() {
            // Recorded, not run: a replay notes the step's kernels.
            return Ok(());
        }
        self.exec.note_for_check(kernels);
        let due = !self.deferred
            || self.exec.kind() == BackendKind::Cpu
            || self.exec.syncs_each_launch()
            || self.last_check.lock().unwrap().elapsed() >= DEFERRED_CHECK_INTERVAL;
        if due { self.sync() } else { Ok(()) }
    }

    /// Before a launch with `effects`: make the allocation state of the classes that need it
    /// exact (see `unwaited.rs`); whether a kernel was queued for it.
    fn settle(&self, effects: Effects, chained: bool) -> Result<bool> {
        let classes = self.unwaited.lock().unwrap().before::<A>(effects);
        self.reactivate(classes, chained)
    }

    /// Queue the reactivation of `classes` (if any); whether a kernel was queued.
    fn reactivate(&self, classes: u64, chained: bool) -> Result<bool> {
        if classes == 0 {
            return Ok(false);
        }
        self.timed(Phase::Enumerate("reactivation"), chained, || self.store.reactivate(&self.exec, classes))?;
        Ok(true)
    }

    /// Wait for all queued work and report what went wrong in it: a failed kernel, or errors
    /// raised by device code (out of memory, invalid frees), naming the kernel that raised the
    /// first of them (or, where it cannot be told, the kernels launched since the last check).
    pub fn sync(&self) -> Result<()> {
        *self.last_check.lock().unwrap() = Instant::now();
        self.exec.synchronize()?;
        let kernels = self.exec.take_for_check();
        self.store.take_errors(&self.exec, &kernels)
    }

    /// Run `method` on every object of class `T` and its subclasses that exists now (objects
    /// created meanwhile are not visited; a method may free its own object). `method` is a
    /// `#[parallel]` method without an argument (`Body::step`); one with an argument runs with
    /// [`parallel_do_with`](Self::parallel_do_with).
    pub fn parallel_do<M>(&self, method: M) -> Result<()>
    where
        M: DoWithoutArgument,
        M::Class: MemberOf<A>,
    {
        self.parallel_do_with(method.method(), ())
    }

    /// [`parallel_do`](Self::parallel_do) for a method that takes an argument.
    pub fn parallel_do_with<T, Arg>(&self, method: ParallelMethod<T, Arg>, arg: Arg) -> Result<()>
    where
        T: MemberOf<A>,
        Arg: Plain,
    {
        let kernel = method.kernel();
        // Each span after the first starts where the one before it ended.
        let mut chained = self.settle(method.effects(), false)?;
        if self.store.prepares() {
            self.timed(Phase::Enumerate("store lists"), chained, || self.store.prepare(&self.exec))?;
            chained = true;
        }
        let mut listings = self.listings.as_ref().map(|l| l.lock().unwrap());
        if let Some(l) = &mut listings {
            l.check_writes(&self.exec);
        }
        // Every concrete class is listed before any is launched: an object that a launch over
        // one class creates in another (a rabbit's thread making a fox, both animals) must not
        // be listed for the launch over the other, since objects created during a
        // `parallel_do` are not visited. Each class, with the parity of its kept list if any:
        let listed: Vec<(&ClassInfo, Option<u32>)> = ClassInfo::concrete_in(A::CLASSES, T::SUBTREE)
            .map(|c| (c, listings.as_ref().and_then(|l| l.kept(c.type_id))))
            .collect();
        let stale =
            listed.iter().filter(|(_, kept)| kept.is_none()).fold(0u64, |m, (c, _)| m | 1 << c.type_id);
        let mut parities = 0u64;
        if stale != 0 && self.store.lists_classes() {
            // With the classes this launch must list, the others that can be listed now in the
            // same launch (see `Listings`).
            let also = match &listings {
                Some(l) if self.store.lists_several_at_once() => l.also_listable(method.effects().changed()),
                _ => 0,
            };
            let all = stale | also;
            if let Some(l) = &listings {
                self.store.note_entries(l.unlistable());
            }
            parities = self.timed(Phase::List(all), chained, || self.store.list_several(&self.exec, all))?;
            chained = true;
            self.unwaited.lock().unwrap().exact(all);
            if let Some(l) = &mut listings {
                for id in type_ids(all) {
                    l.listed(id, (parities >> id) as u32 & 1);
                }
            }
        }
        // What the method's frees may leave stale, noted before its launches (an upper bound
        // holds even if one of them fails).
        self.unwaited.lock().unwrap().after::<A>(method.effects());
        // Which of the method's kernels ran, to name them in errors.
        let (mut ran_plain, mut ran_streaming) = (false, false);
        let parity_of =
            |(class, kept): (&ClassInfo, Option<u32>)| kept.unwrap_or((parities >> class.type_id) as u32 & 1);
        let mut rest = &listed[..];
        while let Some((&(class, kept), after)) = rest.split_first() {
            let id = class.type_id;
            let parity = parity_of((class, kept));
            let (launch, pick) = match method.streaming_kernel().filter(|_| self.store.streams()) {
                Some(streaming) => {
                    let pick = self.loops.pick(&self.exec, kernel.name(), streaming, THREADS, id)?;
                    (if pick.streaming { streaming } else { kernel }, pick)
                }
                _ => (kernel, Pick { streaming: false, timed: false }),
            };
            // The classes after it that this launch visits too (see `together`): the loop and
            // the grid chosen for the first serve them all.
            let together = if pick.timed || method.lanes() > 1 {
                0
            } else {
                self.together(class, after.iter().map(|&(c, _)| c))
            };
            let (also, also_parities) = after[..together].iter().fold((0u32, 0u32), |(m, p), &(c, kept)| {
                (m | 1 << c.type_id, p | parity_of((c, kept)) << c.type_id)
            });
            rest = &after[together..];
            // A method with lanes on the GPU reads its `device_reduce` parts of the launched
            // class from the store's ranked list, built anew unless it still lists the class.
            let ranked = if method.lanes() > 1 && self.exec.kind() == BackendKind::Cuda {
                if listings.as_ref().is_some_and(|l| l.ranked(id)) {
                    self.store.ranked_list(&self.exec, id, false)?
                } else {
                    let list = self.timed(Phase::Rank(class.name), chained, || {
                        self.store.ranked_list(&self.exec, id, true)
                    })?;
                    chained = true;
                    if let Some(l) = &mut listings {
                        l.set_ranked(id);
                    }
                    list
                }
            } else {
                DevPtr::null()
            };
            // The current lists that this launch's frees keep right (see `Listings::keepable`).
            let keep = match &listings {
                Some(l) if self.store.unlists() => l.keepable(method.effects()),
                _ => 0,
            };
            let params = DoParams {
                store: self.store.ptr(),
                class: id as u32,
                objects_per_block: class.objects_per_block,
                parity,
                keep,
                also,
                also_parities,
                ranked,
                arg,
            };
            // The plain loop's grid: timed per method and class (`DoAllWaves`), unless the
            // launch is a trial of the loops (then one wave grid, so that the loops are
            // compared alike).
            let mut waves = WavePick { waves: 1, timed: None };
            let grid = if pick.streaming {
                self.streaming_grid(launch, class)?
            } else if method.lanes() > 1 && self.exec.kind() == BackendKind::Cuda {
                self.lanes_grid(launch, class, method.lanes())?
            } else {
                if !pick.timed {
                    waves = self.waves.pick(&self.exec, kernel.name(), id)?;
                }
                self.do_all_grid(launch, class, waves.waves)?
            };
            // A captured launch cannot be timed: its pick is recorded as it is.
            let start = if (pick.timed || waves.timed.is_some()) && !self.exec.capturing() {
                Some(self.exec.marker()?)
            } else {
                None
            };
            self.timed(Phase::Method(launch.name()), chained, || self.exec.launch(launch, grid, params))?;
            if let Some(start) = start {
                let end = self.exec.marker()?;
                match waves.timed {
                    Some(way) => self.waves.timed(kernel.name(), id, way, start, end),
                    None => self.loops.timed(kernel.name(), id, pick.streaming, start, end),
                }
            }
            ran_plain |= !pick.streaming;
            ran_streaming |= pick.streaming;
            chained = true;
            if let Some(l) = &mut listings {
                let learning = self.store.unlists() && !self.exec.capturing();
                l.visited(id);
                for other in type_ids(also as u64) {
                    l.visited(other);
                }
                l.changed(method.effects(), keep, learning);
            }
        }
        if let Some(l) = &mut listings {
            l.done(&self.exec);
        }
        drop(listings);
        match method.streaming_kernel().filter(|_| ran_streaming) {
            Some(streaming) if ran_plain => self.launched(&[kernel.name(), streaming.name()]),
            Some(streaming) => self.launched(&[streaming.name()]),
            None => self.launched(&[kernel.name()]),
        }
    }

    /// How many of `next` (concrete classes of a `parallel_do`, after `first`) the launch over
    /// `first` visits too, one after the other in each thread ([`DoParams::also`]): the run of
    /// them with `first`'s objects per block and threads per block (so that `first`'s grid
    /// serves them) and type ids below 32, unless launches are one per class
    /// ([`RuntimeBuilder::merge_subclass_launches`]). One launch saves the launch's latency and
    /// its tail, where the classes' objects would otherwise wait for each other: structure's
    /// anchors (`AnchorNode` and `AnchorPullNode`) search the mesh from all anchors at once, as
    /// the hand-written versions do, instead of from each class's in turn.
    fn together<'c>(&self, first: &ClassInfo, next: impl Iterator<Item = &'c ClassInfo>) -> usize {
        if !self.merge_subclasses {
            return 0;
        }
        let threads = |c: &ClassInfo| [THREADS, THREADS / 2].map(|most| self.store.block_threads(c, most));
        let first_threads = threads(first);
        next.take_while(|c| {
            c.objects_per_block == first.objects_per_block && threads(c) == first_threads && c.type_id < 32
        })
        .count()
    }

    /// `waves` times whole waves of `kernel`, a do-all or gather over `class` with the plain
    /// loop, in blocks of a multiple of its objects per block, so that each thread keeps one
    /// slot for the whole loop (see `for_each_listed` in the device crate). The AOS store's
    /// loop takes any grid.
    ///
    /// Blocks of up to 256 threads, or of up to 128 where that lets more of the kernel's
    /// threads reside at once (the driver's occupancy calculator decides; on Hopper, kernels of
    /// 49-56, 65-72 or 81-96 registers, among others).
    /// On an H200, in one call, generation's `Candidate::update` (96 registers: 20 warps a
    /// multiprocessor instead of 16) took the run from 2.42 to 2.31 s, and Wa-Tor's allocating
    /// kernels under a cap of 72 (28 warps instead of 24) from 0.268 to 0.264 s
    /// (docs/results/2026-11-30/xbt-ab.txt).
    fn do_all_grid<P: Plain>(
        &self,
        kernel: &dynasoar_device::Kernel<P>,
        class: &ClassInfo,
        waves: u32,
    ) -> Result<Grid> {
        let candidates = [THREADS, THREADS / 2].map(|most| self.store.block_threads(class, most));
        let threads = self.exec.most_resident_threads(kernel, candidates)?;
        let grid = self.exec.wave_grid(kernel, threads)?;
        Ok(Grid::new(grid.blocks.saturating_mul(waves.max(1)), grid.threads))
    }

    /// About whole waves of `kernel`, a do-all of a method with `lanes` threads per object over
    /// `class` on the GPU: blocks of whole warps, as many as make the thread count a multiple of
    /// `lanes` times the class's objects per block, so that each run of `lanes` threads keeps
    /// one slot for the whole loop (see `for_each_listed` in the device crate).
    fn lanes_grid<P: Plain>(
        &self,
        kernel: &dynasoar_device::Kernel<P>,
        class: &ClassInfo,
        lanes: u32,
    ) -> Result<Grid> {
        let grid = self.exec.wave_grid(kernel, THREADS)?;
        Ok(Grid::new(do_all_blocks(class.objects_per_block * lanes, THREADS, grid.blocks), THREADS))
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
    /// not listed. A class that shares a launch with the class before it
    /// ([`RuntimeBuilder::merge_subclass_launches`]) runs that class's choice and is not listed.
    pub fn do_all_loops(&self) -> Vec<LoopChoice> {
        self.loops.choices()
    }

    /// The do-all loop choice in force: the builder's, or `DYNASOAR_DO_ALL`'s (auto and
    /// adaptive on the CPU backend are plain).
    pub fn do_all_loop(&self) -> DoAllLoop {
        self.loops.mode()
    }

    /// How many waves each method's plain-loop grid has over each class, as decided so far
    /// (see [`DoAllWaves`]); only methods timed under [`DoAllWaves::Auto`] are listed, and a
    /// class that shares a launch with the class before it runs that class's grid.
    pub fn do_all_waves(&self) -> Vec<WaveChoice> {
        self.waves.choices()
    }

    /// The grid choice in force: the builder's, or `DYNASOAR_DO_ALL_WAVES`'s (one wave grid
    /// on the CPU backend).
    pub fn do_all_wave_choice(&self) -> DoAllWaves {
        self.waves.mode()
    }

    /// Create `count` objects of class `T`, object `i` initialised by `constructor(dev, i)`, a
    /// `#[parallel_new]` constructor without an argument; one with an argument runs with
    /// [`parallel_new_with`](Self::parallel_new_with).
    pub fn parallel_new<C>(&self, constructor: C, count: u64) -> Result<()>
    where
        C: NewWithoutArgument,
        C::Class: Concrete + MemberOf<A>,
    {
        self.parallel_new_with(constructor.constructor(), count, ())
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
        // A constructor may create and free anything.
        let chained = self.settle(Effects::ANY, false)?;
        let most = self.exec.wave_grid(kernel, THREADS)?.total_threads() as u64;
        let grid = Grid::for_elements(count.min(most) as usize, THREADS);
        // Successive creations ask for successive blocks, each its objects' blocks in the
        // order of their indices (on a fresh heap: the same placement in every run).
        let first_block = self.bulk_blocks.fetch_add(count.div_ceil(block_full::<T>()), Ordering::Relaxed);
        let params = NewParams { store: self.store.ptr(), first: 0, count, first_block, arg };
        self.timed(Phase::Method(kernel.name()), chained, || self.exec.launch(kernel, grid, params))?;
        self.launched(&[kernel.name()])
    }

    /// Every object of class `T` and its subclasses, as `T` values (in no particular order).
    pub fn collect<T>(&self) -> Result<Vec<T>>
    where
        T: MemberOf<A>,
    {
        Ok(self.gather::<T>(false)?.0)
    }

    /// Every object of class `T` and its subclasses with its handle, as `(handle, value)` pairs
    /// (in no particular order): to tell objects apart, or to follow the handles their fields
    /// hold to other objects' values.
    pub fn collect_with_handles<T>(&self) -> Result<Vec<(Handle<T>, T)>>
    where
        T: MemberOf<A>,
    {
        let (values, handles) = self.gather::<T>(true)?;
        // SAFETY: the gather wrote the handle of each live object of `T`'s subtree next to its
        // value.
        Ok(handles
            .into_iter()
            .map(|raw| unsafe { Handle::from_raw(dynasoar_device::RawHandle(raw)) })
            .zip(values)
            .collect())
    }

    /// The values of every object of `T`'s subtree, and with `with_handles` their handles (at
    /// the same indices).
    fn gather<T>(&self, with_handles: bool) -> Result<(Vec<T>, Vec<u64>)>
    where
        T: MemberOf<A>,
    {
        self.sync()?;
        self.store.prepare(&self.exec)?;
        let (mut out, mut out_handles) = (Vec::new(), Vec::new());
        for class in ClassInfo::concrete_in(A::CLASSES, T::SUBTREE) {
            let parity = self.store.list(&self.exec, class.type_id)?;
            let capacity = self.store.listed_objects(&self.exec, class, parity)?;
            if capacity == 0 {
                continue;
            }
            let values = self.exec.alloc_zeroed::<T>(capacity)?;
            let handles = if with_handles { Some(self.exec.alloc_zeroed::<u64>(capacity)?) } else { None };
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
                handles: handles.as_ref().map_or(dynasoar_device::DevPtr::null(), |h| h.ptr()),
            };
            self.exec.launch(&T::GATHER, self.do_all_grid(&T::GATHER, class, 1)?, params)?;
            let n = self.exec.read_all(&written)?[0] as usize;
            if n > capacity {
                return Err(Error::InvalidArgument(format!(
                    "collect found {n} objects of {} where {capacity} were listed (internal error)",
                    class.name
                )));
            }
            out.extend(self.exec.read(&values, 0, n)?);
            if let Some(handles) = &handles {
                out_handles.extend(self.exec.read(handles, 0, n)?);
            }
        }
        Ok((out, out_handles))
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

    /// Slots of `kinds` for a `parallel_do` to reduce into (counts, sums, minima, maxima of its
    /// objects: pass [`HostTotals::device`] as, or in, the method's argument), each at the start
    /// of its operation; read them with [`read_totals`](Self::read_totals).
    pub fn totals(&self, kinds: &[Total]) -> Result<HostTotals> {
        HostTotals::new(&self.exec, kinds)
    }

    /// The values of `totals` after the launches queued so far (checks them for errors first).
    pub fn read_totals(&self, totals: &HostTotals) -> Result<Vec<TotalValue>> {
        self.sync()?;
        totals.read(&self.exec)
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
        self.store.reset(&self.exec)?;
        self.unwaited.lock().unwrap().reset();
        Ok(())
    }
}
