//! One measurement, and how measurements are written: a JSON line each on stdout, CSV and JSON
//! files per test, and the human table at the end.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context;
use serde::Serialize;

/// What became of one measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every malloc succeeded; the times are valid.
    Ok,
    /// Some mallocs failed (see `failed`); times are left out, as they would compare unequal
    /// work.
    Oom,
    /// Not run: the allocator cannot serve the request (see `note`).
    Skipped,
    /// Written memory did not read back (see `corrupt`): the allocator handed out overlapping
    /// or foreign memory.
    Corrupt,
    /// The run failed with an error (see `note`).
    Error,
    /// The run did not finish within its time limit and was killed.
    Timeout,
    /// The run finished but computed something else than its reference (an app's result
    /// against the SOA baseline's: see `expected` and `result`, and `note` for the
    /// difference). Its times are kept but never compared with correct runs.
    Wrong,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Oom => "oom",
            Status::Skipped => "skipped",
            Status::Corrupt => "corrupt",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::Wrong => "wrong",
        }
    }
}

/// One measurement: one allocator (or a baseline) at one point of one test. Fields a test does
/// not measure stay `None` (left out of the JSON line, empty in the CSV).
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    pub test: &'static str,
    pub allocator: String,
    pub backend: &'static str,
    /// `thread` or `warp` (allocation tests), else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<&'static str>,
    /// The request size, or the upper bound of a range of sizes.
    pub size: u32,
    /// The lower bound of the sizes (equal to `size` for a fixed size).
    pub size_min: u32,
    pub threads: u64,
    pub status: Status,
    /// Mallocs that returned null.
    pub failed: u64,
    /// Timed runs the times are the median of.
    pub runs: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_ms: Option<f64>,
    /// Writing (and reading back) the allocated memory, or the whole work-generation kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_ms: Option<f64>,
    /// Fragmentation: bytes between the lowest and the highest address handed out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range_bytes: Option<u64>,
    /// Fragmentation: bytes actually requested by the live allocations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_bytes: Option<u64>,
    /// Out of memory: the fraction of the pool handed out before the first failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usable_fraction: Option<f64>,
    /// Alloc/free rounds behind the measurement (fragmentation, out of memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// Words that did not read back as written.
    pub corrupt: u64,
    /// Apps (paper Figures 10-12): which app; `size` is its problem size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<&'static str>,
    /// Apps: simulated steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// Apps: the whole run (enumeration included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_ms: Option<f64>,
    /// Apps: the part of the run spent enumerating objects (DynaSOAr's parallel-do, or the
    /// `parallel_do` helper of a general allocator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enum_ms: Option<f64>,
    /// Apps: the run without its enumeration (`total_ms - enum_ms`): the time the paper's
    /// Figures 10 and 12 compare (section 7: the helper's enumeration "should not be taken into
    /// account when comparing the performance of different allocators").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_ms: Option<f64>,
    /// Apps: the variant of DynaSOAr's allocator (`nocoal`, `noshift`; Figure 12(d)); absent
    /// for the default and for other stores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Figure 11: the app's problem size at `size` (cells of the grid apps, bodies, nodes,
    /// intersections), which Figure 11 compares.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem_size: Option<u64>,
    /// Figure 11's summaries: `problem_size` over the AOS baseline's largest (the paper's
    /// Figure 11 is relative to Baseline (AOS)); absent where that baseline has no size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_to_aos: Option<f64>,
    /// Figure 11's baselines: bytes of device memory the baseline allocated at `size` (its
    /// peak, measured on the CPU backend).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footprint_bytes: Option<u64>,
    /// Apps: the fixed heap of Figure 11.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap_bytes: Option<u64>,
    /// Figure 12: mean time per step of each chunk of steps, enumeration left out (as the
    /// paper's Figure 12 leaves it out).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chunk_ms: Vec<f64>,
    /// Figure 12: mean enumeration time per step of each chunk (not in `chunk_ms`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chunk_enum_ms: Vec<f64>,
    /// Figure 12: DynaSOAr's fragmentation at the end of each chunk as the paper defines it
    /// (7.3): the unused slots of the allocated blocks of every class, the ocean's cells
    /// included, over all their slots (the original's `DBG_calculate_fragmentation`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chunk_fragmentation: Vec<f64>,
    /// Figure 12: the same at the end of each chunk over the classes the run allocates and
    /// frees only (Wa-Tor's fish and sharks, whose slots the original's Wa-Tor benchmark
    /// prints), for comparison.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chunk_fragmentation_agents: Vec<f64>,
    /// Figure 12: per class at the end of the run, `name slots/objects` (slots: allocated
    /// blocks times objects per block).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<String>,
    /// Apps: what the run computed, as the app's `--compare` compares it (a fingerprint of the
    /// final state, or body count and checksums).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Apps: what the SOA baseline computed for the same app, size and steps (absent where the
    /// run is the baseline, or the baseline did not finish: then `note` says the run is
    /// unchecked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Record {
    /// A record of `test` for `allocator` with nothing measured yet.
    pub fn new(test: &'static str, allocator: &str, backend: &'static str) -> Self {
        Record {
            test,
            allocator: allocator.to_string(),
            backend,
            mode: None,
            size: 0,
            size_min: 0,
            threads: 0,
            status: Status::Ok,
            failed: 0,
            runs: 0,
            alloc_ms: None,
            free_ms: None,
            write_ms: None,
            range_bytes: None,
            requested_bytes: None,
            usable_fraction: None,
            rounds: None,
            corrupt: 0,
            app: None,
            steps: None,
            total_ms: None,
            enum_ms: None,
            run_ms: None,
            variant: None,
            problem_size: None,
            relative_to_aos: None,
            footprint_bytes: None,
            heap_bytes: None,
            chunk_ms: Vec::new(),
            chunk_enum_ms: Vec::new(),
            chunk_fragmentation: Vec::new(),
            chunk_fragmentation_agents: Vec::new(),
            classes: None,
            result: None,
            expected: None,
            note: None,
        }
    }

    /// The record as one JSON line.
    pub fn json_line(&self) -> String {
        // A struct of numbers and strings always serialises.
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Column names of [`csv_row`](Self::csv_row).
    pub const CSV_HEADER: &'static str = "test,allocator,backend,mode,size,size_min,threads,status,failed,runs,\
        alloc_ms,free_ms,write_ms,range_bytes,requested_bytes,usable_fraction,rounds,corrupt,\
        app,steps,total_ms,enum_ms,run_ms,variant,problem_size,relative_to_aos,footprint_bytes,\
        heap_bytes,chunk_ms,chunk_enum_ms,chunk_fragmentation,chunk_fragmentation_agents,classes,result,\
        expected,note";

    /// The record as one CSV row (empty cells for what was not measured).
    pub fn csv_row(&self) -> String {
        fn opt<T: ToString>(value: Option<T>) -> String {
            value.map(|v| v.to_string()).unwrap_or_default()
        }
        // In quotes (the text may hold commas), with no quotes inside.
        fn quoted(text: Option<&str>) -> String {
            format!("\"{}\"", text.unwrap_or("").replace('"', "'"))
        }
        fn list(values: &[f64]) -> String {
            values.iter().map(|v| format!("{v:.4}")).collect::<Vec<_>>().join(";")
        }
        [
            self.test.to_string(),
            self.allocator.clone(),
            self.backend.to_string(),
            self.mode.unwrap_or("").to_string(),
            self.size.to_string(),
            self.size_min.to_string(),
            self.threads.to_string(),
            self.status.name().to_string(),
            self.failed.to_string(),
            self.runs.to_string(),
            opt(self.alloc_ms),
            opt(self.free_ms),
            opt(self.write_ms),
            opt(self.range_bytes),
            opt(self.requested_bytes),
            opt(self.usable_fraction),
            opt(self.rounds),
            self.corrupt.to_string(),
            self.app.unwrap_or("").to_string(),
            opt(self.steps),
            opt(self.total_ms),
            opt(self.enum_ms),
            opt(self.run_ms),
            self.variant.clone().unwrap_or_default(),
            opt(self.problem_size),
            opt(self.relative_to_aos),
            opt(self.footprint_bytes),
            opt(self.heap_bytes),
            // `;`-separated, so the list stays one cell.
            list(&self.chunk_ms),
            list(&self.chunk_enum_ms),
            list(&self.chunk_fragmentation),
            list(&self.chunk_fragmentation_agents),
            quoted(self.classes.as_deref()),
            quoted(self.result.as_deref()),
            quoted(self.expected.as_deref()),
            quoted(self.note.as_deref()),
        ]
        .join(",")
    }
}

/// Write `records` of one test as `<dir>/<test>.csv` and `<dir>/<test>.json` (an array).
pub fn write_files(dir: &Path, test: &str, records: &[Record]) -> anyhow::Result<()> {
    let mut csv = String::from(Record::CSV_HEADER);
    csv.push('\n');
    for record in records {
        csv.push_str(&record.csv_row());
        csv.push('\n');
    }
    let csv_path = dir.join(format!("{test}.csv"));
    std::fs::write(&csv_path, csv).with_context(|| format!("cannot write {}", csv_path.display()))?;
    let json_path = dir.join(format!("{test}.json"));
    let json = serde_json::to_string_pretty(records)?;
    std::fs::write(&json_path, json).with_context(|| format!("cannot write {}", json_path.display()))?;
    Ok(())
}

/// Print one record as a JSON line on stdout, at once (so a crash later keeps it).
pub fn emit(record: &Record) {
    let mut out = std::io::stdout().lock();
    // A closed stdout (a pipe into `head`) must not abort the run: the files still get written.
    let _ = writeln!(out, "{}", record.json_line());
    let _ = out.flush();
}

/// The human table of `records`: one row each, the columns that say most.
pub fn table(records: &[Record]) -> String {
    fn ms(value: Option<f64>) -> String {
        value.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:<22} {:<6} {:>11} {:>8} {:<8} {:>8} {:>10} {:>10} {:>10} {:>12}",
        "test",
        "allocator",
        "mode",
        "size",
        "threads",
        "status",
        "failed",
        "alloc_ms",
        "free_ms",
        "write_ms",
        "other"
    );
    for r in records {
        let size =
            if r.size_min == r.size { r.size.to_string() } else { format!("{}-{}", r.size_min, r.size) };
        let other = match (r.range_bytes, r.usable_fraction, r.app) {
            (Some(range), _, _) => format!("range {range}"),
            (None, Some(fraction), _) => format!("used {:.1}%", fraction * 100.0),
            (None, None, Some(app)) => {
                let mean = (!r.chunk_ms.is_empty())
                    .then(|| r.chunk_ms.iter().sum::<f64>() / r.chunk_ms.len() as f64);
                let variant = r.variant.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
                match (r.run_ms.or(r.total_ms), mean, r.footprint_bytes) {
                    (_, _, Some(bytes)) => format!("{app} {} MiB", bytes as f64 / f64::from(1 << 20)),
                    (_, Some(step), _) => format!("{app}{variant} {step:.3} ms/step"),
                    (Some(run), None, _) => {
                        format!("{app}{variant} run {run:.2} ms enum {} ms", ms(r.enum_ms))
                    }
                    _ => app.to_string(),
                }
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:<12} {:<22} {:<6} {:>11} {:>8} {:<8} {:>8} {:>10} {:>10} {:>10} {:>12}",
            r.test,
            r.allocator,
            r.mode.unwrap_or(""),
            size,
            r.threads,
            r.status.name(),
            r.failed,
            ms(r.alloc_ms),
            ms(r.free_ms),
            ms(r.write_ms),
            other
        );
    }
    out
}

/// The median of `values` (`None` when empty).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_have_as_many_cells_as_the_header() {
        let mut r = Record::new("alloc", "atomic", "cpu");
        r.alloc_ms = Some(1.5);
        r.note = Some("a, b".into());
        let cells = r.csv_row().matches(',').count();
        // The note holds one comma inside its quotes.
        assert_eq!(cells - 1, Record::CSV_HEADER.matches(',').count());
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
