//! `dynasoar-bench enumeration`: the DynaSOAr paper's Figure 13(b), the time to list a class's
//! blocks before a do-all against the heap size, for both of DynaSOAr's enumerations: flat
//! (one thread per block of the heap) and hierarchical (the paper's Alg. 5: the bitmap levels
//! above the blocks pick the containers to visit).
//!
//! Each heap is filled by the allocator itself: an allocator storm (`dynasoar_examples::storm`,
//! four classes of 64, 32, 12 and 2 objects per block, each thread allocating one object of a
//! class drawn at random) runs rounds until the requested share of the heap's blocks is in
//! use. Then, for each class measured and each enumeration, the class is marked changed (so
//! that the enumeration lists anew, not the shortcut for unchanged classes) and enumerated:
//! one warm-up, then `--runs` timed enumerations (CUDA events around the launches; wall-clock
//! on the CPU backend), the median reported. The shortcut's time is measured too
//! (`unchanged_ms`: the same launches on an unchanged class).
//!
//! Every measurement is checked: each enumeration lists exactly as many blocks as the class
//! holds (the heap's statistics kernel counts them), and the hierarchical listing equals the
//! flat one as a set of (block, iteration bitmap) pairs. A measurement that fails this is
//! reported as `wrong` and the command exits with status 1.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use dynasoar::host::heap::{DeviceHeap, Enumeration, Listing};
use dynasoar::host::{BackendKind, Error as HostError, Executor};
use dynasoar_examples::MODELS_PTX;
use dynasoar_examples::storm::Storm;
use indicatif::ProgressBar;
use serde::Serialize;

use crate::plot::{self, Figure};
use crate::record::{self, Record, Status};
use crate::{BackendArgs, progress};

const MIB: u64 = 1 << 20;

/// Options of `dynasoar-bench enumeration`.
#[derive(Args, Debug)]
pub struct EnumerationArgs {
    #[command(flatten)]
    backend: BackendArgs,
    /// Directory for the CSV, JSON, SVG and summary files (created if missing).
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// CI-size runs: heaps of 1 and 4 MiB, 3 timed enumerations each (seconds on the CPU).
    #[arg(long)]
    quick: bool,
    /// Heap sizes in MiB, comma-separated (default: 64,256,1024,2048,4096,8192 on the GPU;
    /// 1,4 with --quick; 16,64 on the CPU). A heap the device cannot hold is reported as
    /// skipped.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=(1 << 20)))]
    heap_mib: Vec<u64>,
    /// Fills: percent of the heap's blocks in use, comma-separated (default: 0,1,10,50,95).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=100))]
    fills: Vec<u32>,
    /// The storm's classes to enumerate, comma-separated (default: small,huge: blocks that
    /// warps search for one by one, and blocks taken in runs).
    #[arg(long, value_delimiter = ',', value_enum)]
    classes: Vec<StormClass>,
    /// Timed enumerations per measurement, after one warm-up; the median is reported
    /// (default 15; 3 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: Option<u32>,
    /// Seed of the storm.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Tests only: leave one block out of each non-empty hierarchical listing before it is
    /// checked, to show that the check catches it.
    #[arg(long, hide = true)]
    test_drop_block: bool,
}

/// The storm's classes, by type id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StormClass {
    /// 64 objects per block, blocks found by search.
    Small,
    /// 32 objects per block, blocks found by search.
    Medium,
    /// 12 objects per block, from runs of blocks.
    Large,
    /// 2 objects per block, from runs of blocks.
    Huge,
}

impl StormClass {
    fn type_id(self) -> u8 {
        self as u8
    }

    fn name(self) -> &'static str {
        match self {
            StormClass::Small => "Small",
            StormClass::Medium => "Medium",
            StormClass::Large => "Large",
            StormClass::Huge => "Huge",
        }
    }
}

/// What the command measures.
struct Plan {
    heap_bytes: Vec<u64>,
    /// Percent of the heap's blocks in use, ascending.
    fills: Vec<u32>,
    classes: Vec<StormClass>,
    runs: u32,
    seed: u64,
    drop_block: bool,
}

/// One measurement: one enumeration of one class at one heap size and fill.
#[derive(Clone, Debug, Serialize)]
pub struct EnumRecord {
    /// `test` is `enumeration`, `mode` the enumeration (`flat` or `hierarchical`), `enum_ms`
    /// the median time of an enumeration of the changed class, `heap_bytes` the heap size
    /// asked for (the plan lays out at most that many bytes).
    #[serde(flatten)]
    pub base: Record,
    pub class: &'static str,
    /// Blocks of the heap.
    pub blocks: u64,
    pub block_bytes: u64,
    /// Level-0 containers of each bitmap (64 blocks each), and levels.
    pub containers: u64,
    pub levels: u32,
    /// The share of blocks in use asked for, and reached (every class).
    pub fill_target: f64,
    pub heap_fill: f64,
    /// Blocks of the class, their share of the heap's blocks, and the level-0 containers
    /// holding them (what the hierarchical enumeration visits).
    pub class_blocks: u64,
    pub class_fill: f64,
    pub class_containers: u64,
    /// Blocks the enumeration listed.
    pub listed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enum_min_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enum_max_ms: Option<f64>,
    /// Median time of the enumeration of the class unchanged since the last one (the
    /// shortcut: the launches, no listing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchanged_ms: Option<f64>,
    /// Hierarchical rows: the flat enumeration's median over this one's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_flat: Option<f64>,
    /// Whether the listing had the class's block count and (hierarchical) equalled the flat
    /// listing.
    pub verified: bool,
}

impl EnumRecord {
    const EXTRA_HEADER: &'static str = "class,blocks,block_bytes,containers,levels,fill_target,heap_fill,\
        class_blocks,class_fill,class_containers,listed,enum_min_ms,enum_max_ms,unchanged_ms,vs_flat,verified";

    fn csv_row(&self) -> String {
        fn opt<T: ToString>(value: Option<T>) -> String {
            value.map(|v| v.to_string()).unwrap_or_default()
        }
        [
            self.base.csv_row(),
            self.class.to_string(),
            self.blocks.to_string(),
            self.block_bytes.to_string(),
            self.containers.to_string(),
            self.levels.to_string(),
            self.fill_target.to_string(),
            self.heap_fill.to_string(),
            self.class_blocks.to_string(),
            self.class_fill.to_string(),
            self.class_containers.to_string(),
            self.listed.to_string(),
            opt(self.enum_min_ms),
            opt(self.enum_max_ms),
            opt(self.unchanged_ms),
            opt(self.vs_flat),
            self.verified.to_string(),
        ]
        .join(",")
    }
}

/// Run `dynasoar-bench enumeration`.
pub fn run(args: &EnumerationArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create the output directory {}", args.out.display()))?;
    let out = args.out.as_path();
    let exec =
        Executor::new(MODELS_PTX, args.backend.options(args.quiet)).context("cannot start the backend")?;
    let gpu = exec.kind() == BackendKind::Cuda;
    let heap_mib = match (&args.heap_mib, args.quick, gpu) {
        (list, _, _) if !list.is_empty() => list.clone(),
        (_, true, _) => vec![1, 4],
        (_, false, true) => vec![64, 256, 1024, 2048, 4096, 8192],
        (_, false, false) => vec![16, 64],
    };
    let mut fills = if args.fills.is_empty() { vec![0, 1, 10, 50, 95] } else { args.fills.clone() };
    fills.sort_unstable();
    fills.dedup();
    let plan = Plan {
        heap_bytes: heap_mib.iter().map(|m| m * MIB).collect(),
        fills,
        classes: if args.classes.is_empty() {
            vec![StormClass::Small, StormClass::Huge]
        } else {
            args.classes.clone()
        },
        runs: args.runs.unwrap_or(if args.quick { 3 } else { 15 }),
        seed: args.seed,
        drop_block: args.test_drop_block,
    };
    eprintln!(
        "dynasoar-bench enumeration: heaps {heap_mib:?} MiB, fills {:?}%, classes {:?} on {}",
        plan.fills,
        plan.classes.iter().map(|c| c.name()).collect::<Vec<_>>(),
        exec.description()
    );
    let bar = progress(args.quiet);
    bar.set_length((plan.heap_bytes.len() * plan.fills.len() * plan.classes.len()) as u64);
    bar.set_message("enum");
    let mut records = Vec::new();
    for &heap_bytes in &plan.heap_bytes {
        measure_heap(&exec, &plan, heap_bytes, &bar, &mut records)?;
    }
    bar.finish_and_clear();
    write_files(out, &records)?;
    draw(out, &records)?;
    let table = table(&records);
    std::fs::write(out.join("enumeration-summary.txt"), format!("{}\n{table}", exec.description()))
        .with_context(|| format!("cannot write {}", out.join("enumeration-summary.txt").display()))?;
    dynasoar_examples::outln!("\n{table}");
    eprintln!("dynasoar-bench enumeration: {} measurements; files in {}", records.len(), out.display());
    let wrong = records.iter().filter(|r| r.base.status == Status::Wrong).count();
    anyhow::ensure!(
        wrong == 0,
        "{wrong} enumeration(s) listed other blocks than the class holds (status `wrong`)"
    );
    Ok(())
}

/// Every measurement of one heap size: fill it step by step, measuring each class at each fill.
fn measure_heap(
    exec: &Executor,
    plan: &Plan,
    heap_bytes: u64,
    bar: &ProgressBar,
    records: &mut Vec<EnumRecord>,
) -> anyhow::Result<()> {
    let backend = exec.kind().name();
    // Threads enough for the largest fill: a storm object takes 0.16 blocks on average (a
    // quarter of the objects each of 1/64, 1/32, 1/12 and 1/2 of a block), runs of blocks
    // take more.
    let largest = plan.fills.last().copied().unwrap_or(0) as u64;
    let storm = Storm::new(exec, heap_bytes, 1, plan.seed).and_then(|probe| {
        let blocks = probe.heap.config().num_blocks;
        drop(probe);
        let threads = (blocks * 8 * largest / 100 + 1024).min(u32::MAX as u64) as u32;
        Storm::new(exec, heap_bytes, threads, plan.seed).map(|s| (s, threads))
    });
    let (storm, threads) = match storm {
        Ok(s) => s,
        Err(e) => {
            // Most likely more than the device holds: every point of this size is skipped.
            for &fill in &plan.fills {
                for &class in &plan.classes {
                    for form in [Enumeration::Flat, Enumeration::Hierarchical] {
                        let mut r = empty_record(backend, heap_bytes, form, class, fill);
                        r.base.status = Status::Skipped;
                        r.base.note = Some(format!("no heap of {} MiB: {e}", heap_bytes / MIB));
                        emit(&r);
                        records.push(r);
                    }
                    bar.inc(1);
                }
            }
            return Ok(());
        }
    };
    let heap = &storm.heap;
    let mut filler = Filler { storm: &storm, threads, round: 0, note: None };
    for &fill in &plan.fills {
        filler.fill_to(exec, fill)?;
        let stats = heap.stats(exec)?;
        let config = heap.config();
        for &class in &plan.classes {
            let class_blocks = stats.classes[class.type_id() as usize].blocks;
            let mut rows = Vec::new();
            let mut flat_listing = None;
            for form in [Enumeration::Flat, Enumeration::Hierarchical] {
                let mut r = empty_record(backend, heap_bytes, form, class, fill);
                r.blocks = config.num_blocks;
                r.block_bytes = config.block_bytes;
                r.containers = config.geometry.level_len[0];
                r.levels = config.geometry.levels;
                r.heap_fill = 1.0 - stats.free_blocks as f64 / config.num_blocks as f64;
                r.class_blocks = class_blocks;
                r.class_fill = class_blocks as f64 / config.num_blocks as f64;
                r.base.note = filler.note.clone();
                let (mut times, mut unchanged, mut listing) =
                    time_enumeration(exec, heap, class.type_id(), form, plan.runs)?;
                if form == Enumeration::Hierarchical && plan.drop_block {
                    listing.blocks.pop();
                    listing.snapshots.pop();
                }
                let sorted = listing.sorted();
                r.listed = sorted.len() as u64;
                // Sorted by block, so by container: count where the container changes.
                r.class_containers = sorted.windows(2).filter(|w| w[0].0 / 64 != w[1].0 / 64).count() as u64
                    + !sorted.is_empty() as u64;
                r.base.runs = times.len() as u32;
                r.enum_min_ms = times.iter().copied().reduce(f64::min);
                r.enum_max_ms = times.iter().copied().reduce(f64::max);
                r.base.enum_ms = record::median(&mut times);
                r.unchanged_ms = record::median(&mut unchanged);
                let mut wrong = Vec::new();
                if r.listed != class_blocks {
                    wrong.push(format!("listed {} blocks of {class_blocks}", r.listed));
                }
                match (form, &flat_listing) {
                    (Enumeration::Flat, _) => flat_listing = Some(sorted),
                    (Enumeration::Hierarchical, Some(flat)) => {
                        if let Some(difference) = difference(flat, &sorted) {
                            wrong.push(difference);
                        }
                    }
                    (Enumeration::Hierarchical, None) => wrong.push("no flat listing to compare".into()),
                }
                r.verified = wrong.is_empty();
                if !wrong.is_empty() {
                    r.base.status = Status::Wrong;
                    let note = wrong.join("; ");
                    r.base.note = Some(match r.base.note.take() {
                        Some(n) => format!("{note}; {n}"),
                        None => note,
                    });
                }
                rows.push(r);
            }
            let flat_ms = rows[0].base.enum_ms;
            if let (Some(flat), Some(hier)) = (flat_ms, rows[1].base.enum_ms)
                && hier > 0.0
            {
                rows[1].vs_flat = Some(flat / hier);
            }
            for r in rows {
                emit(&r);
                records.push(r);
            }
            bar.inc(1);
        }
    }
    Ok(())
}

/// Fills a storm's heap round by round.
struct Filler<'a> {
    storm: &'a Storm,
    threads: u32,
    round: u32,
    /// Why the last fill stopped short, if it did.
    note: Option<String>,
}

impl Filler<'_> {
    /// Run storm rounds (allocations only) until `percent` of the heap's blocks are in use,
    /// within 3% of that or 16 rounds. Each round asks for 90% of the objects that the blocks
    /// still missing hold at the blocks per object seen so far, so fills approach the target
    /// from below.
    fn fill_to(&mut self, exec: &Executor, percent: u32) -> anyhow::Result<()> {
        let heap = &self.storm.heap;
        let blocks = heap.config().num_blocks as f64;
        let target = blocks * percent as f64 / 100.0;
        self.note = None;
        for _ in 0..16 {
            let stats = heap.stats(exec)?;
            let used = blocks - stats.free_blocks as f64;
            let objects: u64 = stats.classes.iter().map(|c| c.objects).sum();
            if used >= target * 0.97 {
                return Ok(());
            }
            let per_object = if objects > 0 { used / objects as f64 } else { 0.16 };
            let wanted = ((target - used) / per_object.max(1e-3) * 0.9).max(1.0);
            let idle = self.threads as f64 - objects as f64;
            if idle < 1.0 {
                self.note =
                    Some(format!("every storm thread holds an object at {:.1}%", 100.0 * used / blocks));
                return Ok(());
            }
            let per_256 = (256.0 * wanted / idle).ceil().clamp(1.0, 256.0) as u32;
            self.storm.round(exec, self.round, per_256, 0)?;
            self.round += 1;
            match self.storm.take_errors(exec) {
                Ok(()) => {}
                Err(HostError::OutOfMemory { .. }) => {
                    self.note = Some(format!("the storm ran out of memory on the way to {percent}%"));
                    return Ok(());
                }
                Err(e) => return Err(e).context("storm round"),
            }
        }
        let used = blocks - heap.stats(exec)?.free_blocks as f64;
        if used < target * 0.97 {
            self.note = Some(format!("16 storm rounds reached {:.1}% of {percent}%", 100.0 * used / blocks));
        }
        Ok(())
    }
}

/// Enumerate `class` in `form`: one warm-up and `runs` timed enumerations of the changed class
/// (ms), `runs` timed enumerations of the unchanged class (ms), and the last listing.
fn time_enumeration(
    exec: &Executor,
    heap: &DeviceHeap,
    class: u8,
    form: Enumeration,
    runs: u32,
) -> anyhow::Result<(Vec<f64>, Vec<f64>, Listing)> {
    heap.set_enumeration(form);
    let mut changed = Vec::new();
    let mut parity = 0;
    for run in 0..=runs {
        heap.mark_changed(exec, class)?;
        let (p, time) = exec.time(|| heap.enumerate(exec, class))?;
        parity = p;
        if run > 0 {
            changed.push(time.as_secs_f64() * 1e3);
        }
    }
    heap.take_errors(exec, &["enumerate"]).context("enumeration")?;
    let listing = heap.listing(exec, class, parity)?;
    let mut unchanged = Vec::new();
    for _ in 0..runs {
        let (p, time) = exec.time(|| heap.enumerate(exec, class))?;
        unchanged.push(time.as_secs_f64() * 1e3);
        anyhow::ensure!(
            heap.enumerated_blocks(exec, class, p)? as usize == listing.blocks.len(),
            "an unchanged class's enumeration did not keep its count"
        );
    }
    heap.take_errors(exec, &["enumerate"]).context("enumeration")?;
    Ok((changed, unchanged, listing))
}

/// How two sorted listings differ (`None`: they are equal).
fn difference(flat: &[(u32, u64)], hierarchical: &[(u32, u64)]) -> Option<String> {
    if flat == hierarchical {
        return None;
    }
    let a: HashSet<_> = flat.iter().collect();
    let b: HashSet<_> = hierarchical.iter().collect();
    let missing = a.difference(&b).count();
    let extra = b.difference(&a).count();
    let duplicates = hierarchical.windows(2).filter(|w| w[0] == w[1]).count();
    Some(format!(
        "the hierarchical listing differs from the flat one: {missing} pair(s) missing, {extra} extra, \
         {duplicates} duplicated"
    ))
}

fn empty_record(
    backend: &'static str,
    heap_bytes: u64,
    form: Enumeration,
    class: StormClass,
    fill: u32,
) -> EnumRecord {
    let mut base = Record::new("enumeration", "dynasoar", backend);
    base.mode = Some(form.name());
    base.heap_bytes = Some(heap_bytes);
    EnumRecord {
        base,
        class: class.name(),
        blocks: 0,
        block_bytes: 0,
        containers: 0,
        levels: 0,
        fill_target: fill as f64 / 100.0,
        heap_fill: 0.0,
        class_blocks: 0,
        class_fill: 0.0,
        class_containers: 0,
        listed: 0,
        enum_min_ms: None,
        enum_max_ms: None,
        unchanged_ms: None,
        vs_flat: None,
        verified: false,
    }
}

fn emit(r: &EnumRecord) {
    let mut out = std::io::stdout().lock();
    let line = serde_json::to_string(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    // A closed stdout (a pipe into `head`) must not abort the run: the files still get written.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn write_files(dir: &Path, records: &[EnumRecord]) -> anyhow::Result<()> {
    let mut csv = format!("{},{}\n", Record::CSV_HEADER, EnumRecord::EXTRA_HEADER);
    for r in records {
        csv.push_str(&r.csv_row());
        csv.push('\n');
    }
    let path = dir.join("enumeration.csv");
    std::fs::write(&path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    let path = dir.join("enumeration.json");
    std::fs::write(&path, serde_json::to_string_pretty(records)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Figure 13(b) per class: time against heap size, a line per enumeration and fill.
fn draw(dir: &Path, records: &[EnumRecord]) -> anyhow::Result<()> {
    let mut classes: Vec<&str> = Vec::new();
    for r in records {
        if !classes.contains(&r.class) {
            classes.push(r.class);
        }
    }
    for class in classes {
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for r in records.iter().filter(|r| r.class == class && r.base.status == Status::Ok) {
            let name = format!("{} {:.0}%", r.base.mode.unwrap_or(""), r.fill_target * 100.0);
            let point = (r.base.heap_bytes.unwrap_or(0) as f64 / MIB as f64, r.base.enum_ms.unwrap_or(0.0));
            match series.iter_mut().find(|(n, _)| *n == name) {
                Some((_, points)) => points.push(point),
                None => series.push((name, vec![point])),
            }
        }
        let figure = Figure {
            name: format!("enumeration-{}", class.to_lowercase()),
            title: format!("Enumeration of {class} (Figure 13(b))"),
            x_label: "heap (MiB)",
            y_label: "enumeration (ms)",
            log_x: true,
            log_y: true,
            series,
        };
        plot::draw(dir, &figure).with_context(|| format!("plot {}", figure.name))?;
    }
    Ok(())
}

/// The human table: a row per heap size, fill and class, both enumerations side by side.
pub fn table(records: &[EnumRecord]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>8} {:>10} {:>6} {:<7} {:>10} {:>10} {:>10} {:>10} {:>9} {:>12} {:<8}",
        "heap_MiB",
        "blocks",
        "fill",
        "class",
        "class_blk",
        "class_cont",
        "flat_ms",
        "hier_ms",
        "flat/hier",
        "unchanged_us",
        "status"
    );
    let ms = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
    let us = |v: Option<f64>| v.map(|v| format!("{:.1}", v * 1e3)).unwrap_or_else(|| "-".into());
    for pair in records.chunks(2) {
        let [flat, hier] = pair else { continue };
        let status = if flat.base.status == hier.base.status {
            flat.base.status.name().to_string()
        } else {
            format!("{}/{}", flat.base.status.name(), hier.base.status.name())
        };
        let _ = writeln!(
            out,
            "{:>8} {:>10} {:>5.1}% {:<7} {:>10} {:>10} {:>10} {:>10} {:>9} {:>12} {:<8}",
            flat.base.heap_bytes.unwrap_or(0) / MIB,
            flat.blocks,
            flat.heap_fill * 100.0,
            flat.class,
            flat.class_blocks,
            flat.class_containers,
            ms(flat.base.enum_ms),
            ms(hier.base.enum_ms),
            hier.vs_flat.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into()),
            format!("{}/{}", us(flat.unchanged_ms), us(hier.unchanged_ms)),
            status
        );
    }
    let _ = writeln!(
        out,
        "fill: blocks in use (every class); class_blk, class_cont: the class's blocks and the \
         level-0 containers holding them; times: medians (ms) of enumerations of the changed \
         class; unchanged_us: flat/hierarchical, class unchanged"
    );
    out
}
