//! The example apps: command-line programs over the models of `dynasoar-models`, with the
//! models' PTX embedded, plus what they share (options, rendering, progress, reports) and each
//! app's host-side driver (used by the binaries and by the tests).

pub mod cli;
pub mod compare;
pub mod progress;
pub mod render;
pub mod report;

pub mod barnes_hut;
pub mod collision;
pub mod game_of_life;
pub mod generation;
pub mod nbody;
pub mod smoke;
pub mod storm;
pub mod structure;
pub mod sugarscape;
pub mod traffic;
pub mod wator;

use dynasoar::AllocatorSpec;
use dynasoar::baselines::host::{StoreChoice, TableCapacity};
use dynasoar::host::{
    Backend, BackendKind, Executor, ExecutorOptions, ModelPtx, Result, Runtime, RuntimeBuilder, StepGraph,
};

/// The models crate compiled to PTX by this crate's build script (for DynaSOAr's heap).
pub const MODELS_PTX: &str = dynasoar::include_ptx!("models");

/// The models' AOS build, for general-purpose allocators.
pub const MODELS_AOS_PTX: &str = dynasoar::include_ptx!("models-aos");

/// The models' BitmapAlloc build, for BitmapAlloc with one allocation bitmap per class.
pub const MODELS_BITMAP_PTX: &str = dynasoar::include_ptx!("models-bitmap");

/// All three builds, for runtimes on any object store.
pub const MODELS: ModelPtx = ModelPtx::with_bitmap_alloc(MODELS_PTX, MODELS_AOS_PTX, MODELS_BITMAP_PTX);

/// Options every app takes.
#[derive(Clone, Debug, clap::Args)]
pub struct CommonArgs {
    /// Where to run: auto (GPU if present), cuda, or cpu. The default sizes are the GPU
    /// benchmark's; on the CPU they can take minutes to hours, and the app then prints a note
    /// with a smaller size to try (it still runs the size asked for).
    #[arg(long, default_value = "auto", env = "DYNASOAR_BACKEND")]
    pub backend: Backend,
    /// Threads of the CPU backend (default: all cores).
    #[arg(long)]
    pub cpu_threads: Option<usize>,
    /// Where the DSL version keeps its objects: `dynasoar` (the library's SOA heap) or a
    /// general-purpose allocator in AOS layout: cuda, atomic, aw, bitmap, scatter, halloc,
    /// xmalloc, fdg, circular, circular-fused, circular-multi, circular-fused-multi, buddy,
    /// ouro-s-p, ouro-va-p, ouro-vl-p, ouro-s-c, ouro-va-c, ouro-vl-c, kma, bulk.
    #[arg(long, default_value = "dynasoar", env = "DYNASOAR_ALLOCATOR")]
    pub allocator: StoreChoice,
    /// Time the DSL version's enumerations, reported as `enum_us` (`enum_us=0` without it).
    /// Off by default: a pair of CUDA events per listing cost Wa-Tor's and the Game of Life's
    /// 64 x 64 steps 10-13 us of about 55 on an H200, and doubled structure's 256-node steps
    /// (docs/results/2026-11-26-s3/enum-timing-ab.txt); the baselines time nothing.
    #[arg(long)]
    pub enum_timing: bool,
    /// Capture the DSL version's step once as a step graph (a CUDA graph on the GPU) and
    /// replay it every step, so that the host queues a step with one call instead of one per
    /// launch (`Runtime::capture`). Nothing is timed inside a replay: not with --enum-timing.
    #[arg(long, conflicts_with = "enum_timing")]
    pub graph: bool,
}

impl CommonArgs {
    /// What to call `implementation` in reports (the allocator's name for the DSL version).
    pub fn label(&self, implementation: Implementation) -> &'static str {
        self.run_options().label(implementation)
    }

    /// Backend and object store for the app's drivers.
    pub fn run_options(&self) -> RunOptions {
        RunOptions {
            exec: self.executor_options(),
            store: self.allocator,
            fixed_pool: false,
            time_enumeration: self.enum_timing,
            graph: self.graph,
        }
    }

    /// Executor options for the requested backend.
    pub fn executor_options(&self) -> ExecutorOptions {
        ExecutorOptions { backend: self.backend, cpu_threads: self.cpu_threads, ..Default::default() }
    }

    /// An executor for the models' PTX on the requested backend.
    pub fn executor(&self) -> Result<Executor> {
        Executor::new(MODELS_PTX, self.executor_options())
    }

    /// Pick the backend once for the whole process: with `--backend auto`, the first executor
    /// says which backend it picked, and the options returned name that backend, so that the
    /// app's later runtimes and executors do not say it again. Returns the options and the
    /// backend picked.
    pub fn resolve(&self) -> Result<(RunOptions, BackendKind)> {
        let kind = self.executor()?.kind();
        let mut options = self.run_options();
        options.exec.backend = match kind {
            BackendKind::Cuda => Backend::Cuda,
            BackendKind::Cpu => Backend::Cpu,
        };
        Ok((options, kind))
    }

    /// Fail with a clear message when `--allocator` (or `DYNASOAR_ALLOCATOR`) names anything but
    /// `dynasoar`, for `app`, which keeps no objects in a store that it could choose.
    pub fn reject_allocator(&self, app: &str, why: &str) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.allocator == StoreChoice::Dynasoar,
            "{app} does not take --allocator {} ({why}); leave out --allocator (and DYNASOAR_ALLOCATOR)",
            self.allocator.name()
        );
        Ok(())
    }

    /// Fail with a clear message when `--graph` is given to `app`, which has no step to capture
    /// (`why`).
    pub fn reject_graph(&self, app: &str, why: &str) -> anyhow::Result<()> {
        anyhow::ensure!(!self.graph, "{app} does not take --graph ({why}); leave out --graph");
        Ok(())
    }
}

/// Where and how an app's implementations run: the backend, and the object store of the DSL
/// version.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub exec: ExecutorOptions,
    pub store: StoreChoice,
    /// General-purpose allocators get exactly the heap DynaSOAr would (the paper's Figure 11,
    /// problem sizes at a fixed heap), not twice that plus 32 MiB.
    pub fixed_pool: bool,
    /// Time the DSL version's enumerations (`RuntimeBuilder::profile`; the apps report them
    /// as `enum_us`).
    pub time_enumeration: bool,
    /// Replay the DSL version's step from a step graph ([`Runtime::capture`]).
    pub graph: bool,
}

impl From<ExecutorOptions> for RunOptions {
    fn from(exec: ExecutorOptions) -> Self {
        RunOptions {
            exec,
            store: StoreChoice::Dynasoar,
            fixed_pool: false,
            time_enumeration: true,
            graph: false,
        }
    }
}

impl RunOptions {
    /// A runtime builder for the DSL version, on this backend and store, for a problem that
    /// fits a DynaSOAr heap of `heap_bytes`. General-purpose allocators get twice that plus
    /// 32 MiB (their size classes, headers and metadata take more), and their object tables
    /// hold as many objects of each class as `heap_bytes` would. Enumerations are timed as
    /// [`time_enumeration`](Self::time_enumeration) says.
    pub fn runtime<A: AllocatorSpec>(&self, heap_bytes: u64) -> RuntimeBuilder<A> {
        let builder =
            Runtime::<A>::builder(MODELS).executor_options(self.exec.clone()).profile(self.time_enumeration);
        let store = self.store.with_tables(TableCapacity::ForBytes(heap_bytes));
        match self.store {
            StoreChoice::Dynasoar => builder.store(store).heap_bytes(heap_bytes),
            StoreChoice::Malloc(_) if self.fixed_pool => builder.store(store).heap_bytes(heap_bytes),
            StoreChoice::Malloc(_) => builder.store(store).heap_bytes(2 * heap_bytes + (32 << 20)),
        }
    }

    /// The step graph of `step` if [`graph`](Self::graph) asks for one (see
    /// [`Runtime::capture`]: nothing runs now), for [`run_step`].
    pub fn capture<A: AllocatorSpec>(
        &self,
        rt: &Runtime<A>,
        step: impl FnMut(&Runtime<A>) -> Result<()>,
    ) -> Result<Option<StepGraph>> {
        self.graph.then(|| rt.capture(step)).transpose()
    }

    /// An executor for the baselines.
    pub fn executor(&self) -> Result<Executor> {
        Executor::new(MODELS_PTX, self.exec.clone())
    }

    /// What to call `implementation` in reports: the store's name for the DSL version.
    pub fn label(&self, implementation: Implementation) -> &'static str {
        match implementation {
            Implementation::Dynasoar => self.store.name(),
            other => other.name(),
        }
    }
}

/// Which implementation of an app to run (paper Figure 10: the DSL and hand-written baselines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Implementation {
    /// Objects in the dynasoar heap (the DSL).
    Dynasoar,
    /// Hand-written structure-of-arrays baseline: static arrays, no dynamic allocation.
    Soa,
    /// Hand-written array-of-structures baseline.
    Aos,
}

impl Implementation {
    pub fn name(self) -> &'static str {
        match self {
            Implementation::Dynasoar => "dynasoar",
            Implementation::Soa => "soa",
            Implementation::Aos => "aos",
        }
    }
}

pub use cli::{exit_on_error, exit_on_error_without_heap_flag};

/// Queue one step of a DSL version: replay `graph` if there is one ([`RunOptions::capture`]),
/// else run `step`'s launches one by one.
pub fn run_step<A: AllocatorSpec>(
    rt: &Runtime<A>,
    graph: Option<&StepGraph>,
    step: impl FnOnce(&Runtime<A>) -> Result<()>,
) -> Result<()> {
    match graph {
        Some(graph) => rt.replay(graph),
        None => step(rt),
    }
}

/// Check the invariants of `rt`'s heap (bitmap levels consistent, blocks active exactly when not
/// full, ...; `DeviceHeap`'s snapshot check) when no kernel runs: an error naming the first that
/// fails. Nothing to check where the objects live in another store.
pub fn check_heap<A: AllocatorSpec>(rt: &Runtime<A>) -> anyhow::Result<()> {
    if let Some(heap) = rt.heap() {
        heap.snapshot(rt.executor())?.check().map_err(|e| anyhow::anyhow!("heap inconsistent: {e}"))?;
    }
    Ok(())
}
