//! "Real workload" allocator benchmarks on every allocator:
//!
//! - `graph`: a dynamic graph (the survey `002_...` 4.4.3 "Graph Initialization", 4.4.4 "Graph
//!   Updates"): every vertex's adjacency lives in an allocation of a power-of-two capacity;
//!   initialisation allocates and fills them all (`graph-init`), batches of edge insertions and
//!   deletions move an adjacency that crosses a power of two to a new allocation
//!   (`graph-update-uniform`: uniformly drawn sources, `graph-update-focused`: sources from a
//!   small range, more pressure per vertex). The final adjacencies are checked against the
//!   host's model.
//! - `kdtree`: a breadth-first kd-tree build (`000_...` section 6 "\[DS\]", Table 2) whose
//!   nodes' reference arrays come from the allocator (pool: by default 1000x the root's array), with the
//!   table's N_ref, N_alloc, mean and standard deviation of the request sizes; the tree is
//!   checked (every primitive's bounds covered by the leaves holding it).
//!
//! The survey has no allocator-free baseline for the graph tests, so only allocators are
//! reported; the kd-tree build reports its time relative to AtomicMalloc, as Table 2 does.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use dynasoar::baselines::host::MallocHeap;
use dynasoar::baselines::malloc::MallocKind;
use dynasoar::host::{BackendKind, Buffer, Executor, Grid};
use dynasoar::rand::Rng;
use dynasoar::{DevPtr, Kernel, Plain};
use dynasoar_bench_kernels::workloads::{
    DELETE, GRAPH_WORKLOAD, GraphParams, KD_REF_BITS, KDTREE_WORKLOAD, KdLeaf, KdNode, KdParams,
    capacity_for, graph_stat, graph_step, kd_plan, kd_request, kd_stat, kd_step,
};
use indicatif::ProgressBar;
use serde::Serialize;

use crate::plot::{self, Figure};
use crate::record::{self, Record, Status};

/// Threads per block of the workload kernels.
const BLOCK_THREADS: u32 = 256;
const GRAPH_KERNEL: &str = "dynasoar_workload_graph";
const KD_KERNEL: &str = "dynasoar_workload_kdtree";

/// The workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// Dynamic graph: initialisation and updates (survey 4.4.3-4.4.4).
    Graph,
    /// kd-tree build (`000_...` section 6, Table 2).
    Kdtree,
}

impl Workload {
    pub const ALL: [Workload; 2] = [Workload::Graph, Workload::Kdtree];

    pub fn name(self) -> &'static str {
        match self {
            Workload::Graph => "graph",
            Workload::Kdtree => "kdtree",
        }
    }
}

/// Sizes of a run (see the CLI for the defaults).
#[derive(Clone, Debug)]
pub struct Config {
    /// Vertices of the generated graphs (one measurement each).
    pub graph_vertices: Vec<u32>,
    /// Smallest degree of the power-law degree distribution, and the largest.
    pub min_degree: u32,
    pub max_degree: u32,
    /// Update batches per scenario, and updates per batch.
    pub batches: u32,
    pub batch_updates: u32,
    /// Pool of every graph measurement.
    pub graph_heap_bytes: u64,
    /// Primitives of the generated scenes (one measurement each).
    pub kd_prims: Vec<u32>,
    pub kd_leaf_size: u32,
    pub kd_max_depth: u32,
    /// Pool of the kd-tree build, in multiples of the root's array (`000_...` used 200).
    pub kd_pool_factor: u64,
    pub runs: u32,
    pub seed: u64,
}

/// What every measurement needs.
pub struct Bench<'a> {
    pub exec: &'a Executor,
    pub backend: &'static str,
    pub config: &'a Config,
}

/// One measurement: the suite's common record and what these workloads add to it.
#[derive(Clone, Debug, Serialize)]
pub struct WorkRecord {
    #[serde(flatten)]
    pub base: Record,
    /// The timed phase: initialisation, all update batches, or the whole build (median).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<f64>,
    /// Whether the host's check of the result passed (absent: not checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges: Option<u64>,
    /// Graph updates: insertions and deletions applied, and adjacencies moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updates: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reallocs: Option<u64>,
    /// kd-tree (Table 2): references held by the leaves per primitive (N_ref).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_ref: Option<f64>,
    /// Allocation requests (N_alloc).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_alloc: Option<u64>,
    /// Mean and standard deviation of the request sizes, in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_mean_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_std_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_bytes: Option<u64>,
    /// Build time over AtomicMalloc's (Table 2's slowdown), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_atomic: Option<f64>,
}

impl WorkRecord {
    fn new(test: &'static str, allocator: &str, backend: &'static str, threads: u64) -> Self {
        let mut base = Record::new(test, allocator, backend);
        base.threads = threads;
        WorkRecord {
            base,
            time_ms: None,
            verified: None,
            edges: None,
            updates: None,
            reallocs: None,
            n_ref: None,
            n_alloc: None,
            alloc_mean_bytes: None,
            alloc_std_bytes: None,
            leaves: None,
            pool_bytes: None,
            vs_atomic: None,
        }
    }

    fn fail(mut self, status: Status, note: String) -> Self {
        self.base.status = status;
        self.base.note = Some(note);
        if status != Status::Corrupt {
            self.time_ms = None;
        }
        self
    }

    const EXTRA_HEADER: &'static str = "time_ms,verified,edges,updates,reallocs,n_ref,n_alloc,\
        alloc_mean_bytes,alloc_std_bytes,leaves,pool_bytes,vs_atomic";

    fn csv_row(&self) -> String {
        fn opt<T: ToString>(value: Option<T>) -> String {
            value.map(|v| v.to_string()).unwrap_or_default()
        }
        [
            self.base.csv_row(),
            opt(self.time_ms),
            opt(self.verified),
            opt(self.edges),
            opt(self.updates),
            opt(self.reallocs),
            opt(self.n_ref),
            opt(self.n_alloc),
            opt(self.alloc_mean_bytes),
            opt(self.alloc_std_bytes),
            opt(self.leaves),
            opt(self.pool_bytes),
            opt(self.vs_atomic),
        ]
        .join(",")
    }
}

fn emit(r: &WorkRecord) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let line = serde_json::to_string(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn write_files(dir: &Path, name: &str, records: &[WorkRecord]) -> anyhow::Result<()> {
    let mut csv = format!("{},{}\n", Record::CSV_HEADER, WorkRecord::EXTRA_HEADER);
    for r in records {
        csv.push_str(&r.csv_row());
        csv.push('\n');
    }
    let path = dir.join(format!("{name}.csv"));
    std::fs::write(&path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(records)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The human table of `records`.
pub fn table(records: &[WorkRecord]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<22} {:<22} {:>8} {:<8} {:>10} {:>6} {:>9} {:>8} {:>10} {:>12}  other",
        "test",
        "allocator",
        "size",
        "status",
        "time_ms",
        "ok?",
        "vs_atomic",
        "N_ref",
        "N_alloc",
        "mean/std B"
    );
    let f = |v: Option<f64>, digits: usize| v.map(|v| format!("{v:.digits$}")).unwrap_or_else(|| "-".into());
    for r in records {
        let other = match (r.edges, r.updates, r.reallocs) {
            (Some(e), None, _) => format!("{e} edges"),
            (_, Some(u), Some(m)) => format!("{u} updates, {m} moved"),
            _ => r.leaves.map(|l| format!("{l} leaves")).unwrap_or_default(),
        };
        let _ = writeln!(
            out,
            "{:<22} {:<22} {:>8} {:<8} {:>10} {:>6} {:>9} {:>8} {:>10} {:>12}  {}",
            r.base.test,
            r.base.allocator,
            r.base.threads,
            r.base.status.name(),
            f(r.time_ms, 3),
            r.verified.map(|v| if v { "yes" } else { "NO" }).unwrap_or("-"),
            f(r.vs_atomic, 2),
            f(r.n_ref, 2),
            r.n_alloc.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
            match (r.alloc_mean_bytes, r.alloc_std_bytes) {
                (Some(m), Some(s)) => format!("{m:.0}/{s:.0}"),
                _ => "-".into(),
            },
            other
        );
    }
    out
}

/// Run `workloads` on `kinds`: a JSON line per measurement, CSV/JSON/SVG files under `out`.
pub fn run(
    bench: &Bench,
    workloads: &[Workload],
    kinds: &[MallocKind],
    out: &Path,
    bar: &ProgressBar,
) -> anyhow::Result<Vec<WorkRecord>> {
    let c = bench.config;
    let per_kind = |w: Workload| match w {
        Workload::Graph => 3 * c.graph_vertices.len(),
        Workload::Kdtree => c.kd_prims.len(),
    };
    bar.set_length(workloads.iter().map(|&w| (per_kind(w) * kinds.len()) as u64).sum());
    // CUDA fixes its malloc heap once a kernel has used it in the process, so it is sized for
    // the largest pool of every workload before the first: CUDA's allocator and the large
    // requests of others use it.
    if bench.exec.kind() == BackendKind::Cuda {
        let kd = c.kd_prims.iter().map(|&p| kd_pool_bytes(c, p, MallocKind::System)).max().unwrap_or(0);
        bench.exec.set_device_malloc_heap(c.graph_heap_bytes.max(kd) as usize)?;
    }
    let mut all = Vec::new();
    for &workload in workloads {
        bar.set_message(workload.name());
        let mut records = Vec::new();
        match workload {
            Workload::Graph => {
                for &vertices in &c.graph_vertices {
                    let setup = GraphSetup::generate(c, vertices);
                    for &kind in kinds {
                        let measured = graph_measure(bench, &setup, kind).unwrap_or_else(|e| {
                            GRAPH_TESTS
                                .iter()
                                .map(|t| {
                                    WorkRecord::new(t, kind.name(), bench.backend, vertices as u64)
                                        .fail(Status::Error, format!("{e:#}"))
                                })
                                .collect()
                        });
                        for r in measured {
                            emit(&r);
                            records.push(r);
                            bar.inc(1);
                        }
                    }
                }
            }
            Workload::Kdtree => {
                // AtomicMalloc first: the others' times are reported relative to it.
                let mut order = kinds.to_vec();
                order.sort_by_key(|&k| k != MallocKind::Atomic);
                for &prims in &c.kd_prims {
                    let scene = Scene::generate(c.seed, prims);
                    let mut reference = None;
                    for &kind in &order {
                        let mut r = kd_measure(bench, &scene, kind).unwrap_or_else(|e| {
                            WorkRecord::new("kdtree", kind.name(), bench.backend, prims as u64)
                                .fail(Status::Error, format!("{e:#}"))
                        });
                        if kind == MallocKind::Atomic && r.base.status == Status::Ok {
                            reference = r.time_ms;
                        }
                        r.vs_atomic = r.time_ms.zip(reference).map(|(t, a)| t / a);
                        emit(&r);
                        records.push(r);
                        bar.inc(1);
                    }
                }
            }
        }
        write_files(out, workload.name(), &records)?;
        for figure in figures(workload, &records) {
            plot::draw(out, &figure).with_context(|| format!("plot {}", figure.name))?;
        }
        all.extend(records);
    }
    Ok(all)
}

/// The figures of `workload`: time over problem size, one line per allocator.
fn figures(workload: Workload, records: &[WorkRecord]) -> Vec<Figure> {
    let line =
        |name: &str, title: &str, x_label, test: &str, y: fn(&WorkRecord) -> Option<f64>, y_label| Figure {
            name: name.into(),
            title: title.into(),
            x_label,
            y_label,
            log_x: true,
            log_y: true,
            series: series(records.iter().filter(|r| r.base.test == test && r.base.status == Status::Ok), y),
        };
    let time: fn(&WorkRecord) -> Option<f64> = |r| r.time_ms;
    match workload {
        Workload::Graph => vec![
            line(
                "graph-init",
                "graph initialisation (survey Fig. 11f)",
                "vertices",
                "graph-init",
                time,
                "time (ms)",
            ),
            line(
                "graph-update-uniform",
                "graph updates, uniform sources (survey Fig. 11g)",
                "vertices",
                "graph-update-uniform",
                time,
                "time (ms)",
            ),
            line(
                "graph-update-focused",
                "graph updates, focused sources (survey Fig. 11g)",
                "vertices",
                "graph-update-focused",
                time,
                "time (ms)",
            ),
        ],
        Workload::Kdtree => vec![
            line(
                "kdtree",
                "kd-tree build (000_... Table 2)",
                "primitives",
                "kdtree",
                time,
                "build time (ms)",
            ),
            Figure {
                log_y: false,
                ..line(
                    "kdtree-slowdown",
                    "kd-tree build time over AtomicMalloc's (000_... Table 2)",
                    "primitives",
                    "kdtree",
                    |r| r.vs_atomic,
                    "slowdown",
                )
            },
        ],
    }
}

fn series<'a>(
    records: impl Iterator<Item = &'a WorkRecord>,
    y: fn(&WorkRecord) -> Option<f64>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in records {
        let Some(v) = y(r) else { continue };
        let point = (r.base.threads as f64, v);
        match lines.iter_mut().find(|(name, _)| *name == r.base.allocator) {
            Some((_, points)) => points.push(point),
            None => lines.push((r.base.allocator.clone(), vec![point])),
        }
    }
    lines
}

/// A launch of `kernel` over `threads` threads.
fn launch<P: Plain>(
    exec: &Executor,
    kernel: &Kernel<P>,
    threads: u64,
    params: P,
) -> dynasoar::host::Result<()> {
    exec.launch(kernel, Grid::for_elements(threads.max(1) as usize, BLOCK_THREADS), params)
}

/// The allocator's error bits since the last check, as a message (and cleared).
fn take_errors(bench: &Bench, heap: &MallocHeap, kernel: &'static str) -> Option<String> {
    heap.take_errors(bench.exec, &[kernel]).err().map(|e| e.to_string())
}

fn zero_stats(exec: &Executor, stats: &Buffer<u64>) -> anyhow::Result<()> {
    exec.zero(stats)?;
    Ok(())
}

/// Whether `kind` can free single allocations (FDGMalloc frees only everything at once).
fn frees_single(kind: MallocKind) -> bool {
    kind != MallocKind::Fdg
}

// ---------------------------------------------------------------------------------------------
// Dynamic graph

const GRAPH_TESTS: [&str; 3] = ["graph-init", "graph-update-uniform", "graph-update-focused"];

/// One batch of updates, grouped by source as the kernel reads them.
struct Batch {
    vertex: Vec<u32>,
    offsets: Vec<u32>,
    edges: Vec<u32>,
}

/// An update scenario: its batches and the expected final adjacencies (sorted).
struct Scenario {
    batches: Vec<Batch>,
    expected: Vec<Vec<u32>>,
    updates: u64,
}

/// A generated graph and its two update scenarios (shared by every allocator).
struct GraphSetup {
    vertices: u32,
    offsets: Vec<u32>,
    edges: Vec<u32>,
    initial: Vec<Vec<u32>>,
    uniform: Scenario,
    focused: Scenario,
    /// The largest request any phase makes, in bytes.
    largest: u32,
}

impl GraphSetup {
    fn generate(c: &Config, vertices: u32) -> Self {
        let n = vertices.max(2);
        let max_degree = c.max_degree.clamp(1, n - 1);
        // Power-law degrees (Pareto, exponent 2.5) with uniformly drawn distinct neighbours.
        let mut adj: Vec<Vec<u32>> = (0..n)
            .map(|v| {
                let mut rng = Rng::new(c.seed, v as u64);
                let u = 1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let degree = (c.min_degree as f64 * u.powf(-1.0 / 1.5)).min(max_degree as f64) as u32;
                let mut list = Vec::with_capacity(degree as usize);
                while (list.len() as u32) < degree {
                    let w = rng.below(n);
                    if w != v && !list.contains(&w) {
                        list.push(w);
                    }
                }
                list
            })
            .collect();
        let mut offsets = Vec::with_capacity(n as usize + 1);
        offsets.push(0u32);
        let mut edges = Vec::new();
        for list in &adj {
            edges.extend_from_slice(list);
            offsets.push(edges.len() as u32);
        }
        let initial = adj.iter().map(|l| sorted(l)).collect();
        let mut largest = adj.iter().map(|l| capacity_for(l.len() as u32)).max().unwrap_or(4);
        let scenario = |focused: bool, adj: &mut Vec<Vec<u32>>, largest: &mut u32| {
            let mut rng = Rng::new(c.seed ^ 0x5eed, focused as u64 + 1);
            let mut batches = Vec::new();
            let mut updates = 0u64;
            // Focused updates draw their sources from the first 1/64 of the vertices.
            let sources = if focused { (n / 64).max(1) } else { n };
            for _ in 0..c.batches {
                let mut by_source: BTreeMap<u32, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
                let mut seen: HashSet<(u32, u32)> = HashSet::new();
                for _ in 0..c.batch_updates {
                    let v = rng.below(sources);
                    let (dels, ins) = by_source.entry(v).or_default();
                    let list = &adj[v as usize];
                    let delete = rng.below(2) == 0 && !list.is_empty();
                    if delete {
                        let w = list[rng.below(list.len() as u32) as usize];
                        if seen.insert((v, w)) {
                            dels.push(w);
                            updates += 1;
                        }
                    } else if list.len() + ins.len() - dels.len() < max_degree as usize {
                        for _ in 0..8 {
                            let w = rng.below(n);
                            if w != v && !list.contains(&w) && seen.insert((v, w)) {
                                ins.push(w);
                                updates += 1;
                                break;
                            }
                        }
                    }
                }
                let mut batch = Batch { vertex: Vec::new(), offsets: vec![0], edges: Vec::new() };
                for (v, (dels, ins)) in by_source {
                    if dels.is_empty() && ins.is_empty() {
                        continue;
                    }
                    let list = &mut adj[v as usize];
                    list.retain(|w| !dels.contains(w));
                    list.extend_from_slice(&ins);
                    *largest = (*largest).max(capacity_for(list.len() as u32));
                    batch.vertex.push(v);
                    batch.edges.extend(dels.iter().map(|w| w | DELETE));
                    batch.edges.extend_from_slice(&ins);
                    batch.offsets.push(batch.edges.len() as u32);
                }
                batches.push(batch);
            }
            Scenario { batches, expected: adj.iter().map(|l| sorted(l)).collect(), updates }
        };
        let mut uniform_adj = adj.clone();
        let uniform = scenario(false, &mut uniform_adj, &mut largest);
        let focused = scenario(true, &mut adj, &mut largest);
        GraphSetup {
            vertices: n,
            offsets,
            edges,
            initial,
            uniform,
            focused,
            largest: largest.saturating_mul(4),
        }
    }
}

/// Where each of `counts` starts in one array, and its total at the end (the gather kernels'
/// offsets).
fn start_offsets(counts: impl Iterator<Item = u64>) -> anyhow::Result<Vec<u32>> {
    let mut offsets = vec![0u32];
    let mut total = 0u64;
    for count in counts {
        total += count;
        offsets.push(u32::try_from(total).context("more than 2^32 entries to gather")?);
    }
    Ok(offsets)
}

fn sorted(list: &[u32]) -> Vec<u32> {
    let mut l = list.to_vec();
    l.sort_unstable();
    l
}

/// The device side of one graph measurement.
struct GraphRun<'a> {
    bench: &'a Bench<'a>,
    heap: &'a MallocHeap,
    vertices: u32,
    offsets: Buffer<u32>,
    edges: Buffer<u32>,
    adj: Buffer<u64>,
    degree: Buffer<u32>,
    capacity: Buffer<u32>,
    stats: Buffer<u64>,
}

/// A batch on the device.
struct DeviceBatch {
    threads: u32,
    vertex: Buffer<u32>,
    offsets: Buffer<u32>,
    edges: Buffer<u32>,
}

impl GraphRun<'_> {
    fn params(&self, step: u32, threads: u32) -> GraphParams {
        GraphParams {
            region: self.heap.ptr(),
            offsets: self.offsets.ptr(),
            edges: self.edges.ptr(),
            adj: self.adj.ptr(),
            degree: self.degree.ptr(),
            capacity: self.capacity.ptr(),
            upd_vertex: DevPtr::null(),
            upd_offsets: DevPtr::null(),
            upd_edges: DevPtr::null(),
            stats: self.stats.ptr(),
            threads,
            step,
        }
    }

    fn step(&self, step: u32) -> dynasoar::host::Result<()> {
        launch(self.bench.exec, &GRAPH_WORKLOAD, self.vertices as u64, self.params(step, self.vertices))
    }

    fn update(&self, batch: &DeviceBatch) -> dynasoar::host::Result<()> {
        let params = GraphParams {
            upd_vertex: batch.vertex.ptr(),
            upd_offsets: batch.offsets.ptr(),
            upd_edges: batch.edges.ptr(),
            ..self.params(graph_step::UPDATE, batch.threads)
        };
        launch(self.bench.exec, &GRAPH_WORKLOAD, batch.threads as u64, params)
    }

    fn fresh(&self) -> anyhow::Result<()> {
        if self.heap.kind() != MallocKind::System {
            self.heap.reset(self.bench.exec)?;
        }
        zero_stats(self.bench.exec, &self.stats)
    }

    /// Initialise the graph; the time of the launch.
    fn init(&self) -> anyhow::Result<f64> {
        let ((), t) = self.bench.exec.time(|| self.step(graph_step::INIT))?;
        Ok(t.as_secs_f64() * 1e3)
    }

    fn stats(&self) -> anyhow::Result<Vec<u64>> {
        Ok(self.bench.exec.read_all(&self.stats)?)
    }

    /// The adjacencies on the device, each sorted, and how many vertices differ from
    /// `expected`.
    fn check(&self, expected: &[Vec<u32>]) -> anyhow::Result<u64> {
        let exec = self.bench.exec;
        let degrees = exec.read_all(&self.degree)?;
        let offsets = start_offsets(degrees.iter().map(|&d| d as u64))?;
        let total = offsets[offsets.len() - 1];
        let out: Buffer<u32> = exec.alloc_zeroed(total.max(1) as usize)?;
        let offsets_buf = exec.upload(&offsets)?;
        let params = GraphParams {
            offsets: offsets_buf.ptr(),
            edges: out.ptr(),
            ..self.params(graph_step::GATHER, self.vertices)
        };
        launch(exec, &GRAPH_WORKLOAD, self.vertices as u64, params)?;
        let edges = exec.read_all(&out)?;
        let mut wrong = 0;
        for (v, want) in expected.iter().enumerate() {
            let got = sorted(&edges[offsets[v] as usize..offsets[v + 1] as usize]);
            if got != *want {
                wrong += 1;
            }
        }
        Ok(wrong)
    }

    fn free_all(&self) -> anyhow::Result<()> {
        if frees_single(self.heap.kind()) {
            self.step(graph_step::FREE)?;
        }
        self.bench.exec.synchronize()?;
        Ok(())
    }
}

/// The three graph measurements of `kind` (initialisation, uniform and focused updates).
fn graph_measure(bench: &Bench, setup: &GraphSetup, kind: MallocKind) -> anyhow::Result<Vec<WorkRecord>> {
    let c = bench.config;
    let n = setup.vertices;
    let records = || {
        GRAPH_TESTS.map(|t| {
            let mut r = WorkRecord::new(t, kind.name(), bench.backend, n as u64);
            r.base.size = setup.largest;
            r.base.size_min = 16;
            r.edges = Some(setup.edges.len() as u64);
            r.pool_bytes = Some(c.graph_heap_bytes);
            r
        })
    };
    let caps = kind.caps();
    let skip = if setup.largest > caps.max_size {
        Some(format!("requests of {} B exceed its largest size ({} B)", setup.largest, caps.max_size))
    } else if c.graph_heap_bytes < caps.min_region_bytes {
        Some(format!("it needs a pool of at least {} B", caps.min_region_bytes))
    } else {
        None
    };
    if let Some(why) = skip {
        return Ok(records().into_iter().map(|r| r.fail(Status::Skipped, why.clone())).collect());
    }
    let exec = bench.exec;
    let param = if kind == MallocKind::Bitmap { setup.largest as u64 } else { 0 };
    let heap = MallocHeap::new(exec, kind, c.graph_heap_bytes, param)
        .with_context(|| format!("cannot create a `{kind}` heap of {} bytes", c.graph_heap_bytes))?;
    let g = GraphRun {
        bench,
        heap: &heap,
        vertices: n,
        offsets: exec.upload(&setup.offsets)?,
        edges: exec.upload(if setup.edges.is_empty() { &[0] } else { &setup.edges })?,
        adj: exec.alloc_zeroed(n as usize)?,
        degree: exec.alloc_zeroed(n as usize)?,
        capacity: exec.alloc_zeroed(n as usize)?,
        stats: exec.alloc_zeroed(graph_stat::COUNT)?,
    };
    let upload = |s: &Scenario| -> anyhow::Result<Vec<DeviceBatch>> {
        s.batches
            .iter()
            .filter(|b| !b.vertex.is_empty())
            .map(|b| {
                Ok(DeviceBatch {
                    threads: b.vertex.len() as u32,
                    vertex: exec.upload(&b.vertex)?,
                    offsets: exec.upload(&b.offsets)?,
                    edges: exec.upload(&b.edges)?,
                })
            })
            .collect()
    };
    let scenarios = [(&setup.uniform, upload(&setup.uniform)?), (&setup.focused, upload(&setup.focused)?)];
    let [mut init_r, uniform_r, focused_r] = records();

    // Initialisation: timed runs, the last one checked against the generated graph.
    let mut times = Vec::new();
    let (mut failed, mut note, mut wrong) = (0u64, None, 0u64);
    for run in 0..=c.runs {
        g.fresh()?;
        let t = g.init()?;
        let s = g.stats()?;
        failed = failed.max(s[graph_stat::FAILED]);
        note = note.or_else(|| take_errors(bench, &heap, GRAPH_KERNEL));
        if run == c.runs {
            wrong = g.check(&setup.initial)?;
        }
        g.free_all()?;
        if run > 0 {
            times.push(t);
        }
    }
    init_r.base.runs = c.runs;
    init_r.time_ms = record::median(&mut times);
    init_r.base.alloc_ms = init_r.time_ms;
    let init_r = conclude(init_r, failed, wrong, 0, note);

    let mut out = vec![init_r];
    let skip_updates = !frees_single(kind);
    for ((scenario, batches), mut r) in scenarios.iter().zip([uniform_r, focused_r]) {
        r.updates = Some(scenario.updates);
        r.base.rounds = Some(c.batches);
        if skip_updates {
            out.push(r.fail(
                Status::Skipped,
                "it frees only all of its memory at once, not one adjacency (FDGMalloc)".into(),
            ));
            continue;
        }
        let mut times = Vec::new();
        let (mut failed, mut note, mut wrong, mut bad) = (0u64, None, 0u64, 0u64);
        for run in 0..=c.runs {
            g.fresh()?;
            g.step(graph_step::INIT)?;
            let ((), t) = exec.time(|| {
                for b in batches {
                    g.update(b)?;
                }
                Ok(())
            })?;
            let s = g.stats()?;
            failed = failed.max(s[graph_stat::FAILED]);
            bad = bad.max(s[graph_stat::MISSING] + s[graph_stat::OVERFLOW]);
            r.reallocs = Some(s[graph_stat::REALLOCS]);
            note = note.or_else(|| take_errors(bench, &heap, GRAPH_KERNEL));
            if run == c.runs {
                wrong = g.check(&scenario.expected)?;
            }
            g.free_all()?;
            if run > 0 {
                times.push(t.as_secs_f64() * 1e3);
            }
        }
        r.base.runs = c.runs;
        r.time_ms = record::median(&mut times);
        r.base.alloc_ms = r.time_ms;
        out.push(conclude(r, failed, wrong, bad, note));
    }
    let _ = take_errors(bench, &heap, GRAPH_KERNEL);
    Ok(out)
}

/// Fill in the status: corrupt when the result is wrong (unless mallocs failed, which loses
/// data by design), oom when a malloc failed, error when the allocator raised anything else.
fn conclude(mut r: WorkRecord, failed: u64, wrong: u64, bad: u64, note: Option<String>) -> WorkRecord {
    r.base.failed = failed;
    r.base.corrupt = wrong + bad;
    if failed > 0 {
        let note = note.unwrap_or_else(|| format!("{failed} mallocs failed"));
        return r.fail(Status::Oom, note);
    }
    r.verified = Some(wrong == 0 && bad == 0);
    if wrong > 0 || bad > 0 {
        let why = format!(
            "{wrong} vertices' adjacencies differ from the expected graph; {bad} updates found no \
             edge to delete or no room"
        );
        return r.fail(Status::Corrupt, why);
    }
    if let Some(note) = note {
        return r.fail(Status::Error, note);
    }
    r
}

// ---------------------------------------------------------------------------------------------
// kd-tree

/// A generated scene: the bounds of random triangles in the unit cube, of sizes spread over
/// two orders of magnitude (a few large ones straddle many splits).
struct Scene {
    prims: Vec<[f32; 6]>,
    lo: [f32; 3],
    hi: [f32; 3],
}

impl Scene {
    fn generate(seed: u64, count: u32) -> Self {
        let mut rng = Rng::new(seed ^ 0x6b64, 7);
        let mut prims = Vec::with_capacity(count as usize);
        let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
        for _ in 0..count.max(1) {
            let centre = [rng.next_f32(), rng.next_f32(), rng.next_f32()];
            // Sizes ~ u^-2 between 0.002 and 0.2.
            let u = rng.range(0.01, 1.0);
            let size = (0.002 / (u * u)).min(0.2);
            let mut b = [f32::MAX, f32::MAX, f32::MAX, f32::MIN, f32::MIN, f32::MIN];
            for _ in 0..3 {
                for a in 0..3 {
                    let x = centre[a] + size * rng.range(-1.0, 1.0);
                    b[a] = b[a].min(x);
                    b[a + 3] = b[a + 3].max(x);
                }
            }
            for a in 0..3 {
                lo[a] = lo[a].min(b[a]);
                hi[a] = hi[a].max(b[a + 3]);
            }
            prims.push(b);
        }
        Scene { prims, lo, hi }
    }
}

/// What one build saw.
struct Built {
    ms: f64,
    stats: Vec<u64>,
    /// A problem that makes the measurement an error (an output array too small).
    error: Option<String>,
}

struct KdRun<'a> {
    bench: &'a Bench<'a>,
    heap: &'a MallocHeap,
    scene: &'a Scene,
    prims: Buffer<[f32; 6]>,
    nodes: [Buffer<KdNode>; 2],
    leaves: Buffer<KdLeaf>,
    stats: Buffer<u64>,
    capacity: u32,
    leaf_capacity: u32,
}

impl KdRun<'_> {
    fn params(&self, step: u32, nodes: DevPtr<KdNode>, next: DevPtr<KdNode>, n: u32, refs: u32) -> KdParams {
        let c = self.bench.config;
        KdParams {
            region: self.heap.ptr(),
            prims: self.prims.ptr(),
            nodes,
            next,
            leaves: self.leaves.ptr(),
            offsets: DevPtr::null(),
            out: DevPtr::null(),
            stats: self.stats.ptr(),
            nodes_count: n,
            refs_count: refs,
            capacity: self.capacity,
            leaf_capacity: self.leaf_capacity,
            leaf_size: c.kd_leaf_size,
            max_depth: c.kd_max_depth,
            step,
            _pad: 0,
        }
    }

    /// One build from an empty pool, timed from the root's allocation to the last level.
    fn build(&mut self) -> anyhow::Result<Built> {
        let exec = self.bench.exec;
        let c = self.bench.config;
        if self.heap.kind() != MallocKind::System {
            self.heap.reset(exec)?;
        }
        zero_stats(exec, &self.stats)?;
        let count = self.scene.prims.len() as u32;
        let mut root = KdNode { lo: self.scene.lo, hi: self.scene.hi, count, ..KdNode::default() };
        kd_plan(&mut root, c.kd_leaf_size, c.kd_max_depth);
        exec.write(&mut self.nodes[0], 0, &[root])?;
        let ptrs = [self.nodes[0].ptr(), self.nodes[1].ptr()];
        let mut error = None;
        let ((), time) = exec.time(|| {
            let p = |step, n, refs, level: usize| {
                self.params(step, ptrs[level % 2], ptrs[(level + 1) % 2], n, refs)
            };
            launch(exec, &KDTREE_WORKLOAD, 1, p(kd_step::ROOT, 1, count, 0))?;
            launch(exec, &KDTREE_WORKLOAD, count as u64, p(kd_step::FILL, 1, count, 0))?;
            let (mut n, mut refs) = (1u32, count);
            for level in 0..=c.kd_max_depth as usize + 1 {
                if n == 0 {
                    break;
                }
                exec.write_bytes(&self.stats, kd_stat::NEXT * 8, &0u64.to_ne_bytes())?;
                launch(exec, &KDTREE_WORKLOAD, refs as u64, p(kd_step::CLASSIFY, n, refs, level))?;
                launch(exec, &KDTREE_WORKLOAD, n as u64, p(kd_step::ALLOC, n, refs, level))?;
                launch(exec, &KDTREE_WORKLOAD, refs as u64, p(kd_step::SCATTER, n, refs, level))?;
                launch(exec, &KDTREE_WORKLOAD, n as u64, p(kd_step::FREE, n, refs, level))?;
                let next = exec.read(&self.stats, kd_stat::NEXT, 1)?[0];
                let (next_n, next_refs) = (next >> KD_REF_BITS, next & ((1 << KD_REF_BITS) - 1));
                if next_n > self.capacity as u64 || next_refs > u32::MAX as u64 {
                    error =
                        Some(format!("level {} has {next_n} nodes, more than {}", level + 1, self.capacity));
                    break;
                }
                (n, refs) = (next_n as u32, next_refs as u32);
            }
            Ok(())
        })?;
        let stats = exec.read_all(&self.stats)?;
        if stats[kd_stat::OVERFLOW] > 0 && error.is_none() {
            error = Some(format!(
                "{} leaves or levels did not fit their arrays ({} leaves, {} nodes per level)",
                stats[kd_stat::OVERFLOW],
                self.leaf_capacity,
                self.capacity
            ));
        }
        Ok(Built { ms: time.as_secs_f64() * 1e3, stats, error })
    }

    fn leaf_params(&self, step: u32, leaves: u32) -> KdParams {
        self.params(step, DevPtr::null(), DevPtr::null(), leaves, 0)
    }

    /// Check the tree; `Err` describes what is wrong.
    fn check(&self, stats: &[u64]) -> anyhow::Result<Result<(), String>> {
        let exec = self.bench.exec;
        let count = (stats[kd_stat::LEAVES] as usize).min(self.leaf_capacity as usize);
        let leaves = exec.read(&self.leaves, 0, count)?;
        let offsets = start_offsets(leaves.iter().map(|leaf| leaf.count as u64))?;
        let total = offsets[offsets.len() - 1];
        let out: Buffer<u32> = exec.alloc_zeroed(total.max(1) as usize)?;
        let offsets_buf = exec.upload(&offsets)?;
        let params = KdParams {
            offsets: offsets_buf.ptr(),
            out: out.ptr(),
            ..self.leaf_params(kd_step::GATHER, count as u32)
        };
        launch(exec, &KDTREE_WORKLOAD, count as u64, params)?;
        let refs = exec.read_all(&out)?;
        Ok(check_tree(self.scene, &leaves, &offsets, &refs, stats))
    }

    fn free_leaves(&self, stats: &[u64]) -> anyhow::Result<()> {
        if frees_single(self.heap.kind()) {
            let count = (stats[kd_stat::LEAVES] as u32).min(self.leaf_capacity);
            launch(
                self.bench.exec,
                &KDTREE_WORKLOAD,
                count as u64,
                self.leaf_params(kd_step::FREE_LEAVES, count),
            )?;
        }
        self.bench.exec.synchronize()?;
        Ok(())
    }
}

/// The host's check of a built tree: the leaves tile the root; every reference lies in its
/// leaf; every primitive's bounds are covered by the leaves that hold it (the volumes of its
/// intersections with them add up to its own); the counts agree.
fn check_tree(
    scene: &Scene,
    leaves: &[KdLeaf],
    offsets: &[u32],
    refs: &[u32],
    stats: &[u64],
) -> Result<(), String> {
    let volume =
        |lo: &[f32], hi: &[f32]| -> f64 { (0..3).map(|a| (hi[a] as f64 - lo[a] as f64).max(0.0)).product() };
    let root = volume(&scene.lo, &scene.hi);
    let tiled: f64 = leaves.iter().map(|l| volume(&l.lo, &l.hi)).sum();
    if (tiled - root).abs() > 1e-4 * root.max(1e-30) {
        return Err(format!("the leaves' volume {tiled} is not the root's {root}"));
    }
    if stats[kd_stat::LOST] > 0 {
        return Err(format!("{} references did not fit their child arrays", stats[kd_stat::LOST]));
    }
    if refs.len() as u64 != stats[kd_stat::LEAF_REFS] {
        return Err(format!("{} references gathered, {} counted", refs.len(), stats[kd_stat::LEAF_REFS]));
    }
    let n = scene.prims.len();
    let mut covered = vec![0f64; n];
    let mut seen = vec![false; n];
    for (i, leaf) in leaves.iter().enumerate() {
        for &prim in &refs[offsets[i] as usize..offsets[i + 1] as usize] {
            let Some(b) = scene.prims.get(prim as usize) else {
                return Err(format!("leaf {i} holds primitive {prim} of {n}"));
            };
            if (0..3).any(|a| b[a] > leaf.hi[a] || b[a + 3] < leaf.lo[a]) {
                return Err(format!("leaf {i} holds primitive {prim}, which lies outside it"));
            }
            let lo: Vec<f32> = (0..3).map(|a| b[a].max(leaf.lo[a])).collect();
            let hi: Vec<f32> = (0..3).map(|a| b[a + 3].min(leaf.hi[a])).collect();
            covered[prim as usize] += volume(&lo, &hi);
            seen[prim as usize] = true;
        }
    }
    for (prim, b) in scene.prims.iter().enumerate() {
        if !seen[prim] {
            return Err(format!("primitive {prim} is in no leaf"));
        }
        let own = volume(&b[..3], &b[3..]);
        if (covered[prim] - own).abs() > 1e-3 * own + 1e-12 {
            return Err(format!(
                "the leaves holding primitive {prim} cover {} of its volume {own}",
                covered[prim]
            ));
        }
    }
    Ok(())
}

/// The kd-tree build of `scene` on `kind`: warm-up, timed runs (median), the last one checked.
/// The kd-tree build's pool for `prims` primitives on `kind`.
fn kd_pool_bytes(c: &Config, prims: u32, kind: MallocKind) -> u64 {
    (c.kd_pool_factor * kd_request(prims) as u64).max(kind.caps().min_region_bytes)
}

fn kd_measure(bench: &Bench, scene: &Scene, kind: MallocKind) -> anyhow::Result<WorkRecord> {
    let c = bench.config;
    let prims = scene.prims.len() as u32;
    let root_bytes = kd_request(prims);
    let pool = kd_pool_bytes(c, prims, kind);
    let mut r = WorkRecord::new("kdtree", kind.name(), bench.backend, prims as u64);
    r.base.size = root_bytes;
    r.base.size_min = 16;
    r.pool_bytes = Some(pool);
    if kind == MallocKind::Fdg {
        return Ok(r.fail(
            Status::Skipped,
            "FDGMalloc frees only all of its memory at once, and its memory is tied to the warp that \
             allocated it (000_... section 6 leaves it out of the kd-tree build)"
                .into(),
        ));
    }
    if root_bytes > kind.caps().max_size {
        return Ok(r.fail(
            Status::Skipped,
            format!(
                "the root's array of {root_bytes} B exceeds its largest size ({} B)",
                kind.caps().max_size
            ),
        ));
    }
    let exec = bench.exec;
    let param = if kind == MallocKind::Bitmap { root_bytes as u64 } else { 0 };
    let heap = MallocHeap::new(exec, kind, pool, param)
        .with_context(|| format!("cannot create a `{kind}` heap of {pool} bytes"))?;
    // Duplicated references make levels wider than the scene: 16384 triangles reached 101,982
    // nodes on one level on an H200 (4x the triangles was too few).
    let capacity = prims.saturating_mul(16).saturating_add(1024);
    let leaf_capacity = prims.saturating_mul(16).saturating_add(1024);
    let mut k = KdRun {
        bench,
        heap: &heap,
        scene,
        prims: exec.upload(&scene.prims)?,
        nodes: [exec.alloc_zeroed(capacity as usize)?, exec.alloc_zeroed(capacity as usize)?],
        leaves: exec.alloc_zeroed(leaf_capacity as usize)?,
        stats: exec.alloc_zeroed(kd_stat::COUNT)?,
        capacity,
        leaf_capacity,
    };
    let mut times = Vec::new();
    let (mut failed, mut note, mut error, mut verdict, mut last) = (0u64, None, None, Ok(()), Vec::new());
    for run in 0..=c.runs {
        let built = k.build()?;
        failed = failed.max(built.stats[kd_stat::FAILED]);
        note = note.or_else(|| take_errors(bench, &heap, KD_KERNEL));
        error = error.or(built.error);
        if run == c.runs && error.is_none() && failed == 0 {
            verdict = k.check(&built.stats)?;
        }
        k.free_leaves(&built.stats)?;
        if run > 0 {
            times.push(built.ms);
        }
        last = built.stats;
    }
    let _ = take_errors(bench, &heap, KD_KERNEL);
    r.base.runs = c.runs;
    r.time_ms = record::median(&mut times);
    r.base.alloc_ms = r.time_ms;
    let n_alloc = last[kd_stat::ALLOCS];
    r.n_alloc = Some(n_alloc);
    r.leaves = Some(last[kd_stat::LEAVES]);
    r.n_ref = Some(last[kd_stat::LEAF_REFS] as f64 / prims.max(1) as f64);
    if n_alloc > 0 {
        let mean = last[kd_stat::BYTES] as f64 / n_alloc as f64;
        let var = last[kd_stat::BYTES_SQ] as f64 / n_alloc as f64 - mean * mean;
        r.alloc_mean_bytes = Some(mean);
        r.alloc_std_bytes = Some(var.max(0.0).sqrt());
    }
    r.base.failed = failed;
    if let Some(e) = error {
        return Ok(r.fail(Status::Error, e));
    }
    if failed > 0 {
        return Ok(r.fail(Status::Oom, note.unwrap_or_else(|| format!("{failed} mallocs failed"))));
    }
    r.verified = Some(verdict.is_ok());
    if let Err(why) = verdict {
        r.base.corrupt = 1;
        return Ok(r.fail(Status::Corrupt, why));
    }
    if let Some(note) = note {
        return Ok(r.fail(Status::Error, note));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config {
            graph_vertices: vec![300],
            min_degree: 2,
            max_degree: 64,
            batches: 3,
            batch_updates: 500,
            graph_heap_bytes: 1 << 20,
            kd_prims: vec![100],
            kd_leaf_size: 8,
            kd_max_depth: 20,
            kd_pool_factor: 200,
            runs: 1,
            seed: 1,
        }
    }

    #[test]
    fn generated_graphs_and_updates_are_consistent() {
        let c = config();
        let g = GraphSetup::generate(&c, 300);
        assert_eq!(g.offsets.len(), 301);
        assert_eq!(*g.offsets.last().unwrap() as usize, g.edges.len());
        assert!(g.edges.len() >= 600, "at least the smallest degree each");
        for s in [&g.uniform, &g.focused] {
            assert!(s.updates > 0);
            // Replaying the batches on the initial graph gives the expected one.
            let mut adj = g.initial.clone();
            for b in &s.batches {
                for (i, &v) in b.vertex.iter().enumerate() {
                    for &e in &b.edges[b.offsets[i] as usize..b.offsets[i + 1] as usize] {
                        let list = &mut adj[v as usize];
                        if e & DELETE != 0 {
                            let at =
                                list.iter().position(|&w| w == e & !DELETE).expect("deleted edge exists");
                            list.swap_remove(at);
                        } else {
                            assert!(!list.contains(&e), "inserted edge is new");
                            list.push(e);
                        }
                    }
                }
            }
            let adj: Vec<Vec<u32>> = adj.iter().map(|l| sorted(l)).collect();
            assert_eq!(adj, s.expected);
            assert!(s.expected.iter().all(|l| l.len() as u32 * 4 <= g.largest));
        }
    }

    #[test]
    fn scenes_are_inside_their_bounds() {
        let s = Scene::generate(3, 200);
        assert_eq!(s.prims.len(), 200);
        for b in &s.prims {
            for a in 0..3 {
                assert!(b[a] <= b[a + 3] && b[a] >= s.lo[a] && b[a + 3] <= s.hi[a]);
            }
        }
    }
}
