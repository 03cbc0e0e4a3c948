//! Host side of the Game of Life: patterns (PGM images, also inside `.tar.gz` archives, and
//! built-in ones), the DSL version and its SOA and AOS baselines, rendering, and a plain host
//! reference of the rules to check results against.
//!
//! `--impl soa` runs the SOA baseline with lists of the cells that can change (O(#alive cells)
//! per step, as the original's `baseline_soa`); with `--soa dense` (see [`SoaVariant`]) it runs
//! the dense one instead, which processes every cell each step.
//!
//! The grid does not wrap (cells outside it are dead), as in the original DynaSOAr benchmark.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use dynasoar::host::{Buffer, Grid, Runtime};
use dynasoar::rand::Rng;
use dynasoar::{Handle, Packed, Packer};
use dynasoar_models::game_of_life::{
    Agent, Alive, AosCell, AosLife, Candidate, GolHeap, LIFE_AOS_STEP, LIFE_LISTS_DECIDE, LIFE_LISTS_UPDATE,
    LIFE_SOA_STEP, LIST_COUNT, LIST_COUNTERS, LIST_OVERFLOW, SoaLife, SoaLifeLists, World, config,
    for_each_neighbor, is_alive_handle, is_candidate_handle,
};

use crate::render::{Canvas, Recorder};
use crate::{Implementation, RunOptions, progress, run_step};

// ----------------------------------------------------------------------------------------
// Patterns.

/// A grid and its alive cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// Short name for reports (`glider`, `utm.pgm`, ...).
    pub name: String,
    pub width: u32,
    pub height: u32,
    /// Alive cells as `y * width + x`, sorted.
    pub live: Vec<u32>,
}

/// Grid size of the built-in patterns when none is given.
pub const DEFAULT_BUILTIN_SIZE: (u32, u32) = (64, 64);
/// Grid size of `random` soups when none is given.
pub const DEFAULT_RANDOM_SIZE: (u32, u32) = (256, 256);
/// Density of `random` soups when none is given.
pub const DEFAULT_DENSITY: f32 = 0.35;

/// Environment variable naming a folder that holds `game-of-life/turing_machines.tar.gz`.
pub const DATA_VAR: &str = "DYNASOAR_DATA";

impl Pattern {
    /// A pattern of `width` x `height` cells with the alive cells at `(x, y)` in `cells`.
    pub fn from_cells(
        name: &str,
        width: u32,
        height: u32,
        cells: impl IntoIterator<Item = (u32, u32)>,
    ) -> anyhow::Result<Self> {
        check_size(width, height)?;
        let mut live = Vec::new();
        for (x, y) in cells {
            ensure!(x < width && y < height, "cell ({x}, {y}) lies outside the {width}x{height} grid");
            live.push(y * width + x);
        }
        live.sort_unstable();
        live.dedup();
        Ok(Pattern { name: name.to_string(), width, height, live })
    }

    /// A glider near the top-left corner, moving one cell right and down every 4 steps.
    pub fn glider(width: u32, height: u32) -> anyhow::Result<Self> {
        ensure!(width >= 4 && height >= 4, "a glider needs a grid of at least 4x4 cells");
        Self::from_cells("glider", width, height, [(2, 1), (3, 2), (1, 3), (2, 3), (3, 3)])
    }

    /// A horizontal blinker (period 2) in the middle of the grid.
    pub fn blinker(width: u32, height: u32) -> anyhow::Result<Self> {
        ensure!(width >= 3 && height >= 3, "a blinker needs a grid of at least 3x3 cells");
        let (cx, cy) = (width / 2, height / 2);
        Self::from_cells("blinker", width, height, [(cx - 1, cy), (cx, cy), (cx + 1, cy)])
    }

    /// A block (a still life) in the middle of the grid.
    pub fn block(width: u32, height: u32) -> anyhow::Result<Self> {
        ensure!(width >= 2 && height >= 2, "a block needs a grid of at least 2x2 cells");
        let (cx, cy) = (width / 2, height / 2);
        Self::from_cells("block", width, height, [(cx - 1, cy - 1), (cx, cy - 1), (cx - 1, cy), (cx, cy)])
    }

    /// A random soup: each cell alive with probability `density` (seeded per cell).
    pub fn random(width: u32, height: u32, density: f32, seed: u64) -> anyhow::Result<Self> {
        check_size(width, height)?;
        ensure!((0.0..=1.0).contains(&density), "density {density} is not between 0 and 1");
        let live = (0..width * height).filter(|&i| Rng::new(seed, i as u64).next_f32() < density).collect();
        Ok(Pattern { name: "random".into(), width, height, live })
    }

    /// The pattern `spec` names:
    /// - `glider`, `blinker`, `block`: on a `size` grid (default 64x64);
    /// - `tm`, `utm`: `tm.pgm` or `utm.pgm` from the benchmark archive (see [`find_archive`]);
    /// - `random`, `random:DENSITY`, `random:WxH`, `random:WxH:DENSITY`: a soup seeded by `seed`
    ///   (size from the spec, else `size`, else 256x256; density 0.35 by default);
    /// - `PATH.pgm`: a PGM image (plain P2 or binary P5; pixel value 0 is an alive cell);
    /// - `ARCHIVE.tar.gz:MEMBER.pgm`: a PGM image inside a (gzipped) tar archive, streamed.
    pub fn from_spec(spec: &str, size: Option<(u32, u32)>, seed: u64) -> anyhow::Result<Self> {
        let builtin = size.unwrap_or(DEFAULT_BUILTIN_SIZE);
        match spec {
            "glider" => return Self::glider(builtin.0, builtin.1),
            "blinker" => return Self::blinker(builtin.0, builtin.1),
            "block" => return Self::block(builtin.0, builtin.1),
            "tm" | "utm" => {
                ensure!(size.is_none(), "a size applies to the built-in patterns only; `{spec}` is an image");
                return Self::load(&archive_member(&format!("{spec}.pgm"))?);
            }
            _ => {}
        }
        if spec == "random" || spec.starts_with("random:") {
            let mut size = size.unwrap_or(DEFAULT_RANDOM_SIZE);
            let mut density = DEFAULT_DENSITY;
            for part in spec.split(':').skip(1) {
                if part.contains('x') {
                    size = parse_size(part)?;
                } else {
                    density = part.parse().with_context(|| {
                        format!("`{part}` in `{spec}` is neither a size (WxH) nor a density")
                    })?;
                }
            }
            return Self::random(size.0, size.1, density, seed);
        }
        ensure!(
            size.is_none(),
            "a size applies to the built-in patterns only; the image `{spec}` has its own size"
        );
        Self::load(spec)
    }

    /// Load a PGM image from `PATH` or `ARCHIVE.tar.gz:MEMBER`.
    pub fn load(source: &str) -> anyhow::Result<Self> {
        if let Some((archive, member)) = split_archive(source) {
            return load_from_archive(Path::new(archive), member);
        }
        let path = Path::new(source);
        let file =
            File::open(path).with_context(|| format!("cannot open pattern file {}", path.display()))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        read_pgm(BufReader::with_capacity(1 << 20, file), &name)
            .with_context(|| format!("reading {}", path.display()))
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// `WxH`.
    pub fn size(&self) -> String {
        format!("{}x{}", self.width, self.height)
    }
}

/// Parse `WxH`.
pub fn parse_size(s: &str) -> anyhow::Result<(u32, u32)> {
    let (w, h) = s.split_once('x').with_context(|| format!("size `{s}` is not WIDTHxHEIGHT"))?;
    let w: u32 = w.trim().parse().with_context(|| format!("width in size `{s}`"))?;
    let h: u32 = h.trim().parse().with_context(|| format!("height in size `{s}`"))?;
    check_size(w, h)?;
    Ok((w, h))
}

fn check_size(width: u32, height: u32) -> anyhow::Result<()> {
    ensure!(width > 0 && height > 0, "the grid must have at least one cell (got {width}x{height})");
    ensure!(
        width as u64 * height as u64 <= u32::MAX as u64,
        "a {width}x{height} grid has more than 2^32 - 1 cells (cells are numbered with 32 bits)"
    );
    // The grids of the baselines and the DSL version, on the host and the device (about).
    let cells = width as u64 * height as u64;
    crate::cli::ensure_host_memory(cells * 16, cells, "cells", "grid (--pattern, --size)")
}

/// `ARCHIVE:MEMBER` where ARCHIVE is a tar file (`.tar`, `.tar.gz`, `.tgz`).
fn split_archive(source: &str) -> Option<(&str, &str)> {
    let (archive, member) = source.rsplit_once(':')?;
    let is_tar = [".tar", ".tar.gz", ".tgz"].iter().any(|ext| archive.ends_with(ext));
    (is_tar && !member.is_empty()).then_some((archive, member))
}

fn load_from_archive(archive: &Path, member: &str) -> anyhow::Result<Pattern> {
    let file =
        File::open(archive).with_context(|| format!("cannot open pattern archive {}", archive.display()))?;
    let name = archive.to_string_lossy();
    let reader: Box<dyn Read> = if name.ends_with(".gz") || name.ends_with(".tgz") {
        Box::new(flate2::read::GzDecoder::new(BufReader::with_capacity(1 << 20, file)))
    } else {
        Box::new(file)
    };
    let mut tar = tar::Archive::new(reader);
    let mut members = Vec::new();
    let entries = tar.entries().with_context(|| format!("reading archive {}", archive.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading archive {}", archive.display()))?;
        let path = entry.path().map(|p| p.into_owned()).unwrap_or_default();
        let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path == Path::new(member) || file_name == member {
            return read_pgm(BufReader::with_capacity(1 << 20, entry), &file_name)
                .with_context(|| format!("reading {member} in {}", archive.display()));
        }
        members.push(path.display().to_string());
    }
    bail!("{} has no member `{member}` (it holds: {})", archive.display(), members.join(", "))
}

/// Folders where the benchmark data may be, each holding `game-of-life/turing_machines.tar.gz`:
/// `$DYNASOAR_DATA`; `shared/data` and `../shared/data` under the current folder (the project's
/// `shared/` inside or beside the checkout, run from its root); `shared/data` beside the
/// checkout this crate was built from (found from any folder, e.g. by `cargo test`, which runs
/// in the crate's folder); `/work/shared/data`.
pub fn data_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os(DATA_VAR) {
        dirs.push(PathBuf::from(d));
    }
    dirs.push(PathBuf::from("shared/data"));
    dirs.push(PathBuf::from("../shared/data"));
    // This crate is `examples/apps` of the workspace.
    if let Some(workspace) = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2) {
        dirs.push(workspace.join("../shared/data"));
    }
    dirs.push(PathBuf::from("/work/shared/data"));
    dirs
}

/// The archive of the benchmark patterns, if one of [`data_dirs`] has it.
pub fn find_archive() -> Option<PathBuf> {
    data_dirs().into_iter().map(|d| d.join("game-of-life").join(config::ARCHIVE)).find(|p| p.is_file())
}

/// `ARCHIVE:MEMBER` for `member` of the benchmark archive, or an error saying where to get it.
pub fn archive_member(member: &str) -> anyhow::Result<String> {
    match find_archive() {
        Some(archive) => Ok(format!("{}:{member}", archive.display())),
        None => bail!(
            "no --pattern given and the benchmark input ({member} in {}) was not found in {}; set \
             {DATA_VAR} to a folder holding game-of-life/{} (the archive is in the original \
             DynaSOAr repository, github.com/prg-titech/dynasoar, example/game-of-life/dataset/), \
             or pass --pattern (a .pgm file, glider, blinker, block or random:WxH:DENSITY)",
            config::ARCHIVE,
            data_dirs().iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
            config::ARCHIVE
        ),
    }
}

/// Reads bytes of a PGM header one at a time.
struct Header<'a, R: BufRead> {
    r: &'a mut R,
}

impl<R: BufRead> Header<'_, R> {
    fn byte(&mut self) -> anyhow::Result<Option<u8>> {
        let buf = self.r.fill_buf()?;
        let Some(&b) = buf.first() else { return Ok(None) };
        self.r.consume(1);
        Ok(Some(b))
    }

    /// The next number, skipping whitespace and `#` comments; consumes the one whitespace
    /// byte after it.
    fn number(&mut self, what: &str) -> anyhow::Result<u32> {
        let mut b = self.byte()?;
        loop {
            match b {
                Some(b'#') => {
                    while !matches!(self.byte()?, Some(b'\n') | None) {}
                    b = self.byte()?;
                }
                Some(c) if c.is_ascii_whitespace() => b = self.byte()?,
                _ => break,
            }
        }
        let mut value: u64 = 0;
        let mut digits = 0;
        while let Some(c @ b'0'..=b'9') = b {
            value = value * 10 + (c - b'0') as u64;
            ensure!(value <= u32::MAX as u64, "the {what} in the PGM header is too large");
            digits += 1;
            b = self.byte()?;
        }
        match b {
            _ if digits == 0 => bail!(
                "malformed PGM header: expected the {what}, found {}",
                b.map_or("the end of the file".to_string(), |c| format!("{:?}", c as char))
            ),
            None => {}
            Some(c) if c.is_ascii_whitespace() => {}
            Some(c) => bail!("malformed PGM header: unexpected {:?} after the {what}", c as char),
        }
        Ok(value as u32)
    }
}

/// Parse a PGM image (P2 plain or P5 binary): pixel value 0 is an alive cell.
///
/// (The original DynaSOAr loader skips only the first two lines and then reads the maximum gray
/// value as the first pixel, which moves its patterns one cell to the right; this one follows
/// the format, so `tm.pgm` has the 36,549 alive cells its image shows.)
pub fn read_pgm<R: BufRead>(mut r: R, name: &str) -> anyhow::Result<Pattern> {
    let mut magic = [0u8; 2];
    r.read_exact(&mut magic).context("not a PGM image: the file is too short")?;
    let binary = match &magic {
        b"P2" => false,
        b"P5" => true,
        _ => bail!("not a PGM image: it starts with {:?}, not P2 or P5", String::from_utf8_lossy(&magic)),
    };
    let mut header = Header { r: &mut r };
    let width = header.number("width")?;
    let height = header.number("height")?;
    let maxval = header.number("maximum gray value")?;
    check_size(width, height).context("bad PGM size")?;
    ensure!((1..=65535).contains(&maxval), "PGM maximum gray value {maxval} is not in 1..=65535");
    let total = width as u64 * height as u64;
    let mut live = Vec::new();
    let found = if binary {
        read_binary_pixels(&mut r, total, maxval > 255, &mut live)?
    } else {
        read_plain_pixels(&mut r, total, maxval, &mut live)?
    };
    ensure!(found == total, "the PGM image is truncated: {width}x{height} = {total} pixels, found {found}");
    Ok(Pattern { name: name.to_string(), width, height, live })
}

/// P5 raster: one byte per pixel (two, big-endian, when `wide`).
fn read_binary_pixels<R: BufRead>(
    r: &mut R,
    total: u64,
    wide: bool,
    live: &mut Vec<u32>,
) -> anyhow::Result<u64> {
    let size = if wide { 2 } else { 1 };
    let mut index = 0u64;
    let mut pending: Option<u8> = None;
    while index < total {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let mut used = 0;
        for &b in buf {
            used += 1;
            let zero = if size == 1 {
                b == 0
            } else if let Some(high) = pending.take() {
                high == 0 && b == 0
            } else {
                pending = Some(b);
                continue;
            };
            if zero {
                live.push(index as u32);
            }
            index += 1;
            if index == total {
                break;
            }
        }
        r.consume(used);
    }
    Ok(index)
}

/// P2 raster: decimal numbers separated by whitespace (comments allowed).
fn read_plain_pixels<R: BufRead>(
    r: &mut R,
    total: u64,
    maxval: u32,
    live: &mut Vec<u32>,
) -> anyhow::Result<u64> {
    let mut index = 0u64;
    let (mut value, mut digits, mut comment) = (0u32, 0u32, false);
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let mut used = 0;
        for &b in buf {
            used += 1;
            if comment {
                comment = b != b'\n';
                continue;
            }
            match b {
                b'0'..=b'9' => {
                    value = value.saturating_mul(10).saturating_add((b - b'0') as u32);
                    digits += 1;
                }
                _ if b.is_ascii_whitespace() || b == b'#' => {
                    comment = b == b'#';
                    if digits > 0 {
                        ensure!(
                            value <= maxval,
                            "pixel {index} has value {value}, above the maximum {maxval}"
                        );
                        if value == 0 {
                            live.push(index as u32);
                        }
                        index += 1;
                        (value, digits) = (0, 0);
                        if index == total {
                            break;
                        }
                    }
                }
                _ => bail!("unexpected {:?} in the pixels of a plain (P2) PGM image", b as char),
            }
        }
        r.consume(used);
        if index == total {
            return Ok(total);
        }
    }
    if digits > 0 {
        ensure!(value <= maxval, "pixel {index} has value {value}, above the maximum {maxval}");
        if index < total && value == 0 {
            live.push(index as u32);
        }
        index += 1;
    }
    Ok(index.min(total))
}

// ----------------------------------------------------------------------------------------
// The host reference.

/// Conway's rules computed plainly on the host, touching only alive cells and their
/// neighbours each step (to check the device implementations, also on large grids).
pub struct Reference {
    width: u32,
    height: u32,
    alive: Vec<bool>,
    counts: Vec<u8>,
    live: Vec<u32>,
}

impl Reference {
    pub fn new(pattern: &Pattern) -> Self {
        let mut alive = vec![false; pattern.cells()];
        for &c in &pattern.live {
            alive[c as usize] = true;
        }
        Reference {
            width: pattern.width,
            height: pattern.height,
            alive,
            counts: vec![0; pattern.cells()],
            live: pattern.live.clone(),
        }
    }

    /// The in-grid neighbours of cell `c` (written out here independently of the models').
    fn neighbors(&self, c: u32) -> impl Iterator<Item = u32> + use<> {
        let (w, h) = (self.width as i64, self.height as i64);
        let (x, y) = (c as i64 % w, c as i64 / w);
        (-1..=1i64)
            .flat_map(move |dy| (-1..=1i64).map(move |dx| (x + dx, y + dy)))
            .filter(move |&(nx, ny)| (nx, ny) != (x, y) && nx >= 0 && ny >= 0 && nx < w && ny < h)
            .map(move |(nx, ny)| (ny * w + nx) as u32)
    }

    /// One step.
    pub fn step(&mut self) {
        let mut touched = Vec::new();
        for i in 0..self.live.len() {
            for n in self.neighbors(self.live[i]) {
                if self.counts[n as usize] == 0 {
                    touched.push(n);
                }
                self.counts[n as usize] += 1;
            }
        }
        // Survivors: 2 or 3 alive neighbours. Births: dead with exactly 3.
        let mut next: Vec<u32> =
            self.live.iter().copied().filter(|&c| matches!(self.counts[c as usize], 2 | 3)).collect();
        next.extend(
            touched.iter().copied().filter(|&c| !self.alive[c as usize] && self.counts[c as usize] == 3),
        );
        for &c in &touched {
            self.counts[c as usize] = 0;
        }
        for &c in &self.live {
            self.alive[c as usize] = false;
        }
        for &c in &next {
            self.alive[c as usize] = true;
        }
        next.sort_unstable();
        self.live = next;
    }

    /// Alive cells, sorted.
    pub fn live(&self) -> &[u32] {
        &self.live
    }

    /// Dead cells with at least one alive neighbour, sorted: where the DSL version must have
    /// candidates (it may have more: those that lost their last alive neighbour this step).
    pub fn required_candidates(&self) -> Vec<u32> {
        let mut v: Vec<u32> =
            self.live.iter().flat_map(|&c| self.neighbors(c)).filter(|&n| !self.alive[n as usize]).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// The alive cells after `steps` steps of `pattern`, by the host reference.
pub fn reference_run(pattern: &Pattern, steps: u32) -> Vec<u32> {
    let mut r = Reference::new(pattern);
    for _ in 0..steps {
        r.step();
    }
    r.live
}

// ----------------------------------------------------------------------------------------
// Running the implementations.

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Config {
    pub pattern: Pattern,
    /// Steps (the benchmark: 300).
    pub steps: u32,
    /// Bytes of the dynasoar heap (default: from the pattern, see [`default_heap_bytes`]).
    pub heap_bytes: Option<u64>,
    /// DSL version: after the run, check that the grid and the objects agree (every alive cell
    /// and candidate is in its grid cell, every dead cell next to an alive one holds a
    /// candidate). Reads the whole grid back.
    pub verify: bool,
    /// Which SOA baseline [`Implementation::Soa`] runs (the app's `--soa`; lists by default).
    pub soa: SoaVariant,
}

impl Config {
    /// `pattern` for the benchmark's 300 steps.
    pub fn new(pattern: Pattern) -> Self {
        Config { pattern, steps: config::STEPS, heap_bytes: None, verify: false, soa: SoaVariant::Lists }
    }

    /// The paper's benchmark: `utm.pgm` (12699 x 12652 cells) for 300 steps, loaded from the
    /// archive in [`data_dirs`].
    pub fn benchmark() -> anyhow::Result<Self> {
        Ok(Self::new(Pattern::load(&archive_member(config::BENCHMARK_PATTERN)?)?))
    }
}

/// Heap size for `pattern` when none is given: room for ten agents per alive cell (alive
/// cells plus their candidates; at most one agent per cell), four times over for partly used
/// blocks and growth, at 9 bytes per agent (8-byte objects, 64 per 576-byte block); at least
/// 1 MiB. A small heap also keeps the per-launch enumeration short (one thread per block).
pub fn default_heap_bytes(pattern: &Pattern) -> u64 {
    let agents = (pattern.cells() as u64).min(10 * pattern.live.len() as u64 + 1024);
    (agents * 9 * 4).div_ceil(1 << 20).max(1) << 20
}

/// The two SOA baselines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoaVariant {
    /// Lists of the cells that can change, O(#alive cells) per step (two kernels per step:
    /// `life_lists_decide`, `life_lists_update`).
    Lists,
    /// Every cell each step, double-buffered (one kernel per step: `life_soa_step`).
    Dense,
}

impl SoaVariant {
    /// `lists` or `dense` (the app's `--soa`).
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        match s {
            "lists" => Ok(SoaVariant::Lists),
            "dense" => Ok(SoaVariant::Dense),
            _ => bail!("--soa {s:?}: the SOA baseline is `lists` (the default) or `dense`"),
        }
    }

    /// `soa` (lists) or `soa-dense`.
    pub fn name(self) -> &'static str {
        match self {
            SoaVariant::Lists => "soa",
            SoaVariant::Dense => "soa-dense",
        }
    }
}

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub width: u32,
    pub height: u32,
    /// Alive cells after the last step, sorted.
    pub live: Vec<u32>,
    /// Cells holding candidates after the last step, sorted (DSL version only).
    pub candidates: Option<Vec<u32>>,
    /// Device time of all steps (loading the pattern not included, as in the original).
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
    /// Device time of loading the pattern (DSL: creating the alive cells and their candidates).
    pub setup: Duration,
}

impl Outcome {
    /// The outcome of a hand-written version (a baseline, or plain sequential code): the alive
    /// cells of `pattern`'s grid after all steps, which took `total`; no objects, no
    /// enumeration, no setup on the device.
    pub fn of_baseline(pattern: &Pattern, live: Vec<u32>, total: Duration) -> Self {
        Outcome {
            width: pattern.width,
            height: pattern.height,
            live,
            candidates: None,
            total,
            enumeration: Duration::ZERO,
            setup: Duration::ZERO,
        }
    }

    /// A fingerprint of the final alive cells (FNV-1a over the grid size and the sorted cells).
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in [self.width, self.height].iter().chain(&self.live) {
            for b in v.to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    }
}

/// Run `implementation` of `cfg` on the backend of `options`.
pub fn run(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    recorder: &mut Recorder,
    show_progress: bool,
) -> anyhow::Result<Outcome> {
    let options: RunOptions = options.into();
    let bar = progress::steps(cfg.steps as u64, options.label(implementation), show_progress);
    let outcome = match implementation {
        Implementation::Dynasoar => run_dynasoar(options, cfg, recorder, &bar),
        Implementation::Soa => match cfg.soa {
            SoaVariant::Lists => run_soa_lists(options, cfg, recorder, &bar).map(|(o, _)| o),
            SoaVariant::Dense => run_soa(options, cfg, recorder, &bar),
        },
        Implementation::Aos => run_aos(options, cfg, recorder, &bar),
    }?;
    bar.finish_and_clear();
    Ok(outcome)
}

/// Steps between two host synchronisations (and progress updates) when nothing is rendered.
const CHUNK: u32 = 10;

/// The steps `1..=steps` in chunks `(first, last)` that end at every rendered step and at
/// least every [`CHUNK`] steps: each chunk is queued and timed at once, and the host waits for
/// the device (checks errors, renders) only between chunks.
fn chunks(steps: u32, recorder: &Recorder) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    let mut done = 0;
    while done < steps {
        let mut end = (done + CHUNK).min(steps);
        if let Some(s) = (done + 1..=end).find(|&s| recorder.wants(s, steps)) {
            end = s;
        }
        v.push((done + 1, end));
        done = end;
    }
    v
}

/// Draw alive cells white on black; large grids are scaled down (a pixel's brightness grows
/// with the alive cells it covers), small ones scaled up to about `width` pixels.
pub fn draw(grid_width: u32, grid_height: u32, live: &[u32], width: u32) -> Canvas {
    if grid_width <= width {
        // Tall worlds get fewer pixels per cell: the canvas stops at `MAX_SIDE`.
        let scale = (width / grid_width).min(crate::render::MAX_SIDE / grid_height.max(1)).max(1);
        let mut canvas = Canvas::new(grid_width * scale, grid_height * scale, [0, 0, 0]);
        for &c in live {
            let (x, y) = ((c % grid_width) * scale, (c / grid_width) * scale);
            for dy in 0..scale {
                for dx in 0..scale {
                    canvas.set((x + dx) as i64, (y + dy) as i64, [255, 255, 255]);
                }
            }
        }
        return canvas;
    }
    let height = ((grid_height as u64 * width as u64 / grid_width as u64) as u32).max(1);
    let mut counts = vec![0u32; width as usize * height as usize];
    for &c in live {
        let px = ((c % grid_width) as u64 * width as u64 / grid_width as u64) as usize;
        let py = ((c / grid_width) as u64 * height as u64 / grid_height as u64) as usize;
        counts[py * width as usize + px] += 1;
    }
    // Cells per pixel; a pixel is fully white when a quarter of its cells are alive.
    let area = (grid_width as f32 / width as f32) * (grid_height as f32 / height as f32);
    let mut canvas = Canvas::new(width, height, [0, 0, 0]);
    for (i, &n) in counts.iter().enumerate() {
        if n > 0 {
            let v = (96.0 + 159.0 * (4.0 * n as f32 / area).min(1.0)) as u8;
            canvas.set((i % width as usize) as i64, (i / width as usize) as i64, [v, v, v]);
        }
    }
    canvas
}

fn heap_hint(e: dynasoar::host::Error, heap_bytes: u64) -> anyhow::Error {
    let hint = matches!(e, dynasoar::host::Error::OutOfMemory { .. });
    let e = anyhow::Error::new(e);
    if hint {
        e.context(format!(
            "the dynasoar heap ({} MiB) is too small for this pattern: give more with --heap-mib",
            heap_bytes.div_ceil(1 << 20)
        ))
    } else {
        e
    }
}

fn run_dynasoar(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let p = &cfg.pattern;
    let heap_bytes = cfg.heap_bytes.unwrap_or_else(|| default_heap_bytes(p));
    let rt = options.runtime::<GolHeap>(heap_bytes).deferred_checks(true).build()?;
    let exec = rt.executor();
    // Packed handles where the heap packs them (DynaSOAr's heap), else handles; zeroed: empty.
    let cells = match rt.packer() {
        Some(packer) => AgentGrid::Packed(exec.alloc_zeroed::<Packed<Agent>>(p.cells())?, packer),
        None => AgentGrid::Wide(exec.alloc_zeroed::<Handle<Agent>>(p.cells())?),
    };
    let world = match &cells {
        AgentGrid::Packed(cells, _) => World::new(cells.ptr().cast(), p.width, p.height, true),
        AgentGrid::Wide(cells) => World::new(cells.ptr().cast(), p.width, p.height, false),
    };
    let ids = exec.upload(if p.live.is_empty() { &[0] } else { &p.live })?;
    let sync = || rt.sync().map_err(|e| heap_hint(e, heap_bytes));
    let ((), setup) = exec
        .time(|| {
            rt.parallel_new_with(Alive::from_pattern, p.live.len() as u64, ids.ptr())?;
            rt.parallel_do_with(Alive::register, world)?;
            rt.parallel_do_with(Alive::update, world)
        })
        .map_err(|e| heap_hint(e, heap_bytes))?;
    sync()?;
    rt.take_timings()?;
    let sorted_cells = |mut v: Vec<u32>| {
        v.sort_unstable();
        v
    };
    let live = || -> anyhow::Result<Vec<u32>> {
        Ok(sorted_cells(rt.collect::<Alive>()?.into_iter().map(|a| a.base.cell).collect()))
    };
    let render = |step: u32, recorder: &mut Recorder| -> anyhow::Result<()> {
        recorder.record(step, draw(p.width, p.height, &live()?, recorder.width()))
    };
    if recorder.wants(0, cfg.steps) {
        render(0, recorder)?;
    }
    let queue_step = |rt: &Runtime<GolHeap>| queue_dsl_step(rt, world);
    let graph = options.capture(&rt, queue_step)?;
    let mut total = Duration::ZERO;
    for (first, last) in chunks(cfg.steps, recorder) {
        let ((), t) = exec
            .time(|| {
                for _ in first..=last {
                    run_step(&rt, graph.as_ref(), queue_step)?;
                }
                Ok(())
            })
            .map_err(|e| heap_hint(e, heap_bytes))?;
        total += t;
        bar.inc((last + 1 - first) as u64);
        sync()?;
        if recorder.wants(last, cfg.steps) {
            render(last, recorder)?;
        }
    }
    sync()?;
    let enumeration = rt.take_timings()?.enumeration;
    let live = live()?;
    let candidates = sorted_cells(rt.collect::<Candidate>()?.into_iter().map(|c| c.base.cell).collect());
    if cfg.verify {
        let grid = match &cells {
            AgentGrid::Packed(cells, packer) => {
                exec.read_all(cells)?.into_iter().map(|e| packer.unpack(e)).collect()
            }
            AgentGrid::Wide(cells) => exec.read_all(cells)?,
        };
        verify_world(p.width, p.height, &grid, &live, &candidates)?;
        // Each object's own handle in its cell: also what the host's packer unpacks.
        let alive = rt.collect_with_handles::<Alive>()?.into_iter().map(|(h, a)| (a.base.cell, h.raw()));
        let candidate =
            rt.collect_with_handles::<Candidate>()?.into_iter().map(|(h, c)| (c.base.cell, h.raw()));
        for (cell, h) in alive.chain(candidate) {
            let entry = grid.get(cell as usize).map(|e| e.raw());
            ensure!(entry == Some(h), "grid cell {cell} holds {entry:?}, not the handle {h:?} of its agent");
        }
    }
    Ok(Outcome {
        width: p.width,
        height: p.height,
        live,
        candidates: Some(candidates),
        total,
        enumeration,
        setup,
    })
}

/// Queue one step of the DSL version on `rt`: its four do-alls, in the original's order.
pub fn queue_dsl_step(rt: &Runtime<GolHeap>, world: World) -> dynasoar::host::Result<()> {
    rt.parallel_do_with(Candidate::prepare, world)?;
    rt.parallel_do_with(Alive::prepare, world)?;
    rt.parallel_do_with(Candidate::update, world)?;
    rt.parallel_do_with(Alive::update, world)
}

/// The DSL version's grid on the device (see `World`): packed handles where the heap packs
/// them, else handles.
enum AgentGrid {
    Packed(Buffer<Packed<Agent>>, Packer<GolHeap>),
    Wide(Buffer<Handle<Agent>>),
}

/// Check the DSL version's grid against its objects: each alive cell and candidate object sits
/// in its own grid cell, no grid cell refers to anything else, and every dead cell next to an
/// alive one holds a candidate.
pub fn verify_world(
    width: u32,
    height: u32,
    grid: &[Handle<Agent>],
    live: &[u32],
    candidates: &[u32],
) -> anyhow::Result<()> {
    let (mut grid_live, mut grid_candidates) = (Vec::new(), Vec::new());
    for (i, &h) in grid.iter().enumerate() {
        if is_alive_handle(h) {
            grid_live.push(i as u32);
        } else if is_candidate_handle(h) {
            grid_candidates.push(i as u32);
        } else {
            ensure!(h.is_null(), "grid cell {i} holds {h:?}, neither an alive cell nor a candidate");
        }
    }
    ensure!(
        grid_live == live,
        "the grid has {} alive cells, the heap {} Alive objects (or their cells differ)",
        grid_live.len(),
        live.len()
    );
    ensure!(
        grid_candidates == candidates,
        "the grid has {} candidates, the heap {} Candidate objects (or their cells differ)",
        grid_candidates.len(),
        candidates.len()
    );
    for &c in live {
        let mut missing = None;
        for_each_neighbor(width, height, c, |n| {
            if grid[n as usize].is_null() {
                missing = Some(n);
            }
        });
        if let Some(n) = missing {
            bail!("cell {n} is dead and next to the alive cell {c} but holds no candidate");
        }
    }
    Ok(())
}

/// Launch geometry of the baselines: one thread per cell (grid-stride beyond that).
fn cell_grid(cells: usize) -> Grid {
    Grid::for_elements(cells, 256)
}

fn dense(p: &Pattern) -> Vec<u8> {
    let mut v = vec![0u8; p.cells()];
    for &c in &p.live {
        v[c as usize] = 1;
    }
    v
}

fn run_soa(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let p = &cfg.pattern;
    let exec = options.executor()?;
    let mut current = exec.upload(&dense(p))?;
    let mut next = exec.alloc_zeroed::<u8>(p.cells())?;
    let grid = cell_grid(p.cells());
    let state = |buf: &Buffer<u8>| -> anyhow::Result<Vec<u32>> {
        Ok(live_cells(exec.read_all(buf)?.into_iter().map(|s| s != 0)))
    };
    if recorder.wants(0, cfg.steps) {
        recorder.record(0, draw(p.width, p.height, &state(&current)?, recorder.width()))?;
    }
    let mut total = Duration::ZERO;
    for (first, last) in chunks(cfg.steps, recorder) {
        let ((), t) = exec.time(|| {
            for _ in first..=last {
                let params =
                    SoaLife { current: current.ptr(), next: next.ptr(), width: p.width, height: p.height };
                exec.launch(&LIFE_SOA_STEP, grid, params)?;
                std::mem::swap(&mut current, &mut next);
            }
            Ok(())
        })?;
        total += t;
        bar.inc((last + 1 - first) as u64);
        if recorder.wants(last, cfg.steps) {
            recorder.record(last, draw(p.width, p.height, &state(&current)?, recorder.width()))?;
        }
    }
    Ok(Outcome::of_baseline(p, state(&current)?, total))
}

/// The first list of the SOA baseline with lists: every alive cell and every cell next to one,
/// sorted.
fn first_list(p: &Pattern) -> Vec<u32> {
    let mut v = Vec::with_capacity(p.live.len() * 9);
    for &c in &p.live {
        v.push(c);
        for_each_neighbor(p.width, p.height, c, |n| v.push(n));
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The SOA baseline with lists (see `SoaLifeLists` in the models) of `cfg`, and the cells of
/// its last list (in the list's order: alive cells, the dead cells next to them and maybe dead
/// cells that lost their last alive neighbour in the last step, each once).
pub fn soa_lists(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Outcome, Vec<u32>)> {
    let mut recorder = Recorder::new(&crate::render::RenderArgs::default())?;
    run_soa_lists(options.into(), cfg, &mut recorder, &indicatif::ProgressBar::hidden())
}

fn run_soa_lists(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<(Outcome, Vec<u32>)> {
    let p = &cfg.pattern;
    let exec = options.executor()?;
    let alive = exec.upload(&dense(p))?;
    let plan = exec.alloc_zeroed::<u32>(p.cells().div_ceil(4))?;
    let first = first_list(p);
    let mut list = exec.alloc_zeroed::<u32>(p.cells())?;
    if !first.is_empty() {
        exec.write(&mut list, 0, &first)?;
    }
    let mut next_list = exec.alloc_zeroed::<u32>(p.cells())?;
    let mut counts = [0u32; LIST_COUNTERS];
    counts[LIST_COUNT] = first.len() as u32;
    let counters = exec.upload(&counts)?;
    drop(first);
    // Fixed grids: the kernels loop over the list's length, which they read on the device.
    let decide = exec.wave_grid(&LIFE_LISTS_DECIDE, 256)?;
    let update = exec.wave_grid(&LIFE_LISTS_UPDATE, 256)?;
    let mut parity = 0u32;
    let state =
        || -> anyhow::Result<Vec<u32>> { Ok(live_cells(exec.read_all(&alive)?.into_iter().map(|s| s != 0))) };
    if recorder.wants(0, cfg.steps) {
        recorder.record(0, draw(p.width, p.height, &state()?, recorder.width()))?;
    }
    let mut total = Duration::ZERO;
    for (first, last) in chunks(cfg.steps, recorder) {
        let ((), t) = exec.time(|| {
            for _ in first..=last {
                let params = SoaLifeLists {
                    alive: alive.ptr(),
                    plan: plan.ptr(),
                    list: list.ptr(),
                    next_list: next_list.ptr(),
                    counters: counters.ptr(),
                    width: p.width,
                    height: p.height,
                    capacity: p.cells() as u32,
                    parity,
                };
                exec.launch(&LIFE_LISTS_DECIDE, decide, params)?;
                exec.launch(&LIFE_LISTS_UPDATE, update, params)?;
                std::mem::swap(&mut list, &mut next_list);
                parity ^= 1;
            }
            Ok(())
        })?;
        total += t;
        bar.inc((last + 1 - first) as u64);
        if recorder.wants(last, cfg.steps) {
            recorder.record(last, draw(p.width, p.height, &state()?, recorder.width()))?;
        }
    }
    let counts = exec.read_all(&counters)?;
    let listed = counts[LIST_COUNT + parity as usize] as usize;
    ensure!(
        counts[LIST_OVERFLOW] == 0 && listed <= p.cells(),
        "the SOA baseline's list of cells overflowed ({listed} entries for {} cells): a bug, since a \
         list holds each cell once",
        p.cells()
    );
    let listed = if listed == 0 { Vec::new() } else { exec.read(&list, 0, listed)? };
    Ok((Outcome::of_baseline(p, state()?, total), listed))
}

fn live_cells(alive: impl Iterator<Item = bool>) -> Vec<u32> {
    alive.enumerate().filter(|&(_, a)| a).map(|(i, _)| i as u32).collect()
}

fn run_aos(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let p = &cfg.pattern;
    let exec = options.executor()?;
    let init: Vec<AosCell> = dense(p).into_iter().map(|s| AosCell { state: [s, 0] }).collect();
    let cells = exec.upload(&init)?;
    drop(init);
    let grid = cell_grid(p.cells());
    let mut parity = 0u32;
    let state = |parity: u32| -> anyhow::Result<Vec<u32>> {
        Ok(live_cells(exec.read_all(&cells)?.into_iter().map(|c| c.state[parity as usize] != 0)))
    };
    if recorder.wants(0, cfg.steps) {
        recorder.record(0, draw(p.width, p.height, &state(parity)?, recorder.width()))?;
    }
    let mut total = Duration::ZERO;
    for (first, last) in chunks(cfg.steps, recorder) {
        let ((), t) = exec.time(|| {
            for _ in first..=last {
                let params =
                    AosLife { cells: cells.ptr(), width: p.width, height: p.height, parity, _pad: 0 };
                exec.launch(&LIFE_AOS_STEP, grid, params)?;
                parity ^= 1;
            }
            Ok(())
        })?;
        total += t;
        bar.inc((last + 1 - first) as u64);
        if recorder.wants(last, cfg.steps) {
            recorder.record(last, draw(p.width, p.height, &state(parity)?, recorder.width()))?;
        }
    }
    Ok(Outcome::of_baseline(p, state(parity)?, total))
}

crate::impl_compared!(Outcome { "alive" => |o| o.live.len() as u64 });
