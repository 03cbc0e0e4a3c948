//! `Runtime<A>`: a heap of allocator `A` on a backend, and the SMMO operations on it.

use std::marker::PhantomData;
use std::sync::Mutex;
use std::time::Duration;

use dynasoar_device::class::MemberOf;
use dynasoar_device::parallel::{DoParams, GatherParams, NewParams};
use dynasoar_device::{AllocatorSpec, ClassInfo, Concrete, ParallelMethod, ParallelNew, Plain};

use crate::backend::{Backend, Executor, ExecutorOptions, Grid, Marker};
use crate::error::{Error, Result};
use crate::heap::{DeviceHeap, HeapClass, HeapStats};

/// Threads per block of do-all launches.
const THREADS: u32 = 256;

/// Heap size when the builder is not told.
pub const DEFAULT_HEAP_BYTES: u64 = 256 << 20;

/// Builds a [`Runtime`].
pub struct RuntimeBuilder<A> {
    ptx: String,
    heap_bytes: u64,
    exec: ExecutorOptions,
    deferred_checks: bool,
    profile: bool,
    _alloc: PhantomData<fn() -> A>,
}

impl<A: AllocatorSpec> RuntimeBuilder<A> {
    /// Bytes of device memory for the heap (default 256 MiB).
    pub fn heap_bytes(mut self, bytes: u64) -> Self {
        self.heap_bytes = bytes;
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

    /// Time enumeration and method kernels separately (see [`Runtime::take_timings`]).
    pub fn profile(mut self, profile: bool) -> Self {
        self.profile = profile;
        self
    }

    pub fn build(self) -> Result<Runtime<A>> {
        let exec = Executor::new(&self.ptx, self.exec)?;
        let classes: Vec<HeapClass> = A::CLASSES
            .iter()
            .map(|c| HeapClass { name: c.name, objects_per_block: c.objects_per_block })
            .collect();
        let heap = DeviceHeap::new(&exec, self.heap_bytes, A::BLOCK_BYTES, &classes)?;
        let grid = exec.full_grid(THREADS);
        Ok(Runtime {
            exec,
            heap,
            grid,
            deferred: self.deferred_checks,
            profile: self.profile.then(|| Mutex::new(Vec::new())),
            pending: Mutex::new(Vec::new()),
            _alloc: PhantomData,
        })
    }
}

/// What a span of profiled work was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Enumerate,
    Method,
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
    heap: DeviceHeap,
    grid: Grid,
    deferred: bool,
    profile: Option<Mutex<Vec<(Phase, Marker, Marker)>>>,
    /// Kernels launched since the last check (deferred mode), to name them in errors.
    pending: Mutex<Vec<&'static str>>,
    _alloc: PhantomData<fn() -> A>,
}

impl<A: AllocatorSpec> Runtime<A> {
    /// A builder for a runtime whose kernels are in `ptx` (the app's embedded model PTX).
    pub fn builder(ptx: &str) -> RuntimeBuilder<A> {
        RuntimeBuilder {
            ptx: ptx.to_string(),
            heap_bytes: DEFAULT_HEAP_BYTES,
            exec: ExecutorOptions::default(),
            deferred_checks: false,
            profile: false,
            _alloc: PhantomData,
        }
    }

    /// The backend, for buffers, timing and launching other kernels.
    pub fn executor(&self) -> &Executor {
        &self.exec
    }

    /// The heap.
    pub fn heap(&self) -> &DeviceHeap {
        &self.heap
    }

    /// The allocator's classes, in type-id order.
    pub fn classes(&self) -> &'static [ClassInfo] {
        A::CLASSES
    }

    fn timed<R>(&self, phase: Phase, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let Some(profile) = &self.profile else { return f() };
        let start = self.exec.marker()?;
        let r = f()?;
        let end = self.exec.marker()?;
        profile.lock().unwrap().push((phase, start, end));
        Ok(r)
    }

    /// After queuing `kernels`: check now, or remember them for the next check.
    fn launched(&self, kernels: &[&'static str]) -> Result<()> {
        let mut pending = self.pending.lock().unwrap();
        for k in kernels {
            if !pending.contains(k) {
                pending.push(k);
            }
        }
        drop(pending);
        if self.deferred { Ok(()) } else { self.sync() }
    }

    /// Wait for all queued work and report what went wrong in it: a failed kernel, or errors
    /// raised by device code (out of memory, invalid frees), naming the kernels launched since
    /// the last check.
    pub fn sync(&self) -> Result<()> {
        self.exec.synchronize()?;
        let kernels = std::mem::take(&mut *self.pending.lock().unwrap());
        self.heap.take_errors(&self.exec, &kernels)
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
        for class in ClassInfo::concrete_in(A::CLASSES, T::SUBTREE) {
            let parity = self.timed(Phase::Enumerate, || self.heap.enumerate(&self.exec, class.type_id))?;
            let params = DoParams {
                heap: self.heap.ptr(),
                class: class.type_id as u32,
                objects_per_block: class.objects_per_block,
                parity,
                _reserved: 0,
                arg,
            };
            self.timed(Phase::Method, || self.exec.launch(kernel, self.grid, params))?;
        }
        self.launched(&[kernel.name()])
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
        let grid = Grid::for_elements(count.min(self.grid.total_threads() as u64) as usize, THREADS);
        let params = NewParams { heap: self.heap.ptr(), first: 0, count, arg };
        self.timed(Phase::Method, || self.exec.launch(kernel, grid, params))?;
        self.launched(&[kernel.name()])
    }

    /// Every object of class `T` and its subclasses, as `T` values (in no particular order).
    pub fn collect<T>(&self) -> Result<Vec<T>>
    where
        T: MemberOf<A>,
    {
        self.sync()?;
        let mut out = Vec::new();
        for class in ClassInfo::concrete_in(A::CLASSES, T::SUBTREE) {
            let parity = self.heap.enumerate(&self.exec, class.type_id)?;
            let blocks = self.heap.enumerated_blocks(&self.exec, class.type_id, parity)?;
            let capacity = blocks as usize * class.objects_per_block as usize;
            if capacity == 0 {
                continue;
            }
            let values = self.exec.alloc_zeroed::<T>(capacity)?;
            let written = self.exec.alloc_zeroed::<u32>(1)?;
            let params = GatherParams {
                heap: self.heap.ptr(),
                class: class.type_id as u32,
                objects_per_block: class.objects_per_block,
                parity,
                _reserved: 0,
                out: values.ptr().cast(),
                capacity: capacity as u64,
                written: written.ptr(),
            };
            self.exec.launch(&T::GATHER, self.grid, params)?;
            let n = self.exec.read_all(&written)?[0] as usize;
            if n > capacity {
                return Err(Error::InvalidArgument(format!(
                    "collect found {n} objects of {} in {blocks} blocks of {} (internal error)",
                    class.name, class.objects_per_block
                )));
            }
            out.extend(self.exec.read(&values, 0, n)?);
        }
        Ok(out)
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

    /// Blocks, objects and fragmentation per class, and how full the heap is.
    pub fn stats(&self) -> Result<HeapStats> {
        self.sync()?;
        self.heap.stats(&self.exec)
    }

    /// Device time spent in enumeration and in methods since the last call (needs
    /// `profile(true)` on the builder; zero otherwise). Waits for queued work.
    pub fn take_timings(&self) -> Result<Timings> {
        let Some(profile) = &self.profile else { return Ok(Timings::default()) };
        let spans = std::mem::take(&mut *profile.lock().unwrap());
        let mut t = Timings::default();
        for (phase, start, end) in &spans {
            let d = self.exec.elapsed(start, end)?;
            match phase {
                Phase::Enumerate => t.enumeration += d,
                Phase::Method => {
                    t.methods += d;
                    t.launches += 1;
                }
            }
        }
        Ok(t)
    }

    /// Free every object.
    pub fn reset(&self) -> Result<()> {
        self.sync()?;
        self.heap.reset(&self.exec)
    }
}
