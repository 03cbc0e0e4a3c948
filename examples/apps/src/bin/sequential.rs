//! Plain sequential Rust versions of Wa-Tor and the Game of Life (one core, flat arrays, no
//! dynasoar), to measure the CPU backend against: the same rules (the models' own rule
//! functions), the same result line and fingerprint as the apps. By default it then runs the
//! app's DSL version on the CPU backend and fails (exit 1) if the two computed different
//! results.
//!
//! `cargo run --release --bin sequential -- wa-tor --width 2048 --height 2048 --steps 20 --cpu-threads 1`

use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use dynasoar::host::Backend;
use dynasoar::rand::Rng;
use dynasoar_examples::report::Report;
use dynasoar_examples::{Implementation, RunOptions, exit_on_error, game_of_life, wator};
use dynasoar_models::game_of_life::next_state;
use dynasoar_models::wator::{
    CellState, EMPTY, FISH, Params, SHARK, accept, breeds, cell_rng, fish_target, hungrier, initial_agent,
    neighbor_indices, newborn, opposite, shark_target, starves,
};

#[derive(Parser)]
#[command(
    about = "Plain sequential Rust versions of Wa-Tor and the Game of Life, checked against (and timed \
                   beside) the DSL version on the CPU backend"
)]
struct Args {
    #[command(subcommand)]
    app: App,
    /// Steps (iterations) to simulate.
    #[arg(long, global = true, visible_alias = "iterations", default_value_t = 20)]
    steps: u32,
    /// Threads of the CPU backend run (default: all cores).
    #[arg(long, global = true)]
    cpu_threads: Option<usize>,
    /// The app's implementation to run on the CPU backend and compare with.
    #[arg(long = "impl", global = true, value_enum, default_value = "dynasoar")]
    implementation: Implementation,
    /// Run the sequential version only (no CPU backend run, no comparison).
    #[arg(long, global = true)]
    sequential_only: bool,
}

#[derive(Subcommand)]
enum App {
    /// Wa-Tor with the app's default rules (`wa-tor --help`).
    WaTor {
        /// Cells per row of the torus.
        #[arg(long, default_value_t = 2048)]
        width: u32,
        /// Rows of the torus.
        #[arg(long, default_value_t = 2048)]
        height: u32,
        /// Random seed of the initial ocean and of all agents.
        #[arg(long, default_value_t = dynasoar_models::wator::config::SEED)]
        seed: u64,
    },
    /// The Game of Life (B3/S23, the grid does not wrap).
    GameOfLife {
        /// The initial pattern, as `game-of-life --pattern` takes it.
        #[arg(long, value_name = "SPEC", default_value = "random:2048x2048")]
        pattern: String,
        /// Seed of `random` patterns.
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
}

fn main() -> std::process::ExitCode {
    exit_on_error(run_app(Args::parse()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let options = RunOptions::from(dynasoar::host::ExecutorOptions {
        backend: Backend::Cpu,
        cpu_threads: args.cpu_threads,
        ..Default::default()
    });
    let threads = match args.cpu_threads {
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let label = args.implementation.name();
    let (sequential, cpu) = match args.app {
        App::WaTor { width, height, seed } => {
            let cfg = wator::Config { width, height, steps: args.steps, seed, ..Default::default() };
            cfg.validate()?;
            let (cells, total) = SequentialOcean::run(&cfg);
            let seq = wator::Outcome {
                width,
                height,
                cells,
                populations: Vec::new(),
                objects: None,
                total,
                enumeration: Duration::ZERO,
                setup: Duration::ZERO,
            };
            let line = |backend: &str, allocator: &str, o: &wator::Outcome| {
                Report::new("wa-tor")
                    .field("backend", backend)
                    .field("allocator", allocator)
                    .field("size", cfg.size())
                    .field("iters", cfg.steps)
                    .field("total_us", o.total.as_micros())
                    .field("fish", o.fish())
                    .field("sharks", o.sharks())
                    .field("checksum", o.checksum())
                    .field("fingerprint", format!("{:016x}", o.fingerprint()))
            };
            let seq_line = line("sequential", "none", &seq);
            let cpu = if args.sequential_only {
                None
            } else {
                let mut recorder = dynasoar_examples::render::Recorder::new(&Default::default())?;
                let o = wator::run(args.implementation, options, &cfg, &mut recorder, false)?;
                Some((line("cpu", label, &o), o.total, o.fingerprint() == seq.fingerprint()))
            };
            ((seq_line, seq.total), cpu)
        }
        App::GameOfLife { pattern, seed } => {
            let pattern = game_of_life::Pattern::from_spec(&pattern, None, seed)?;
            let cfg = game_of_life::Config { steps: args.steps, ..game_of_life::Config::new(pattern) };
            let p = &cfg.pattern;
            let (live, total) = sequential_life(p, cfg.steps);
            let seq = game_of_life::Outcome::of_baseline(p, live, total);
            let line = |backend: &str, allocator: &str, o: &game_of_life::Outcome| {
                Report::new("game-of-life")
                    .field("backend", backend)
                    .field("allocator", allocator)
                    .field("size", p.size())
                    .field("iters", cfg.steps)
                    .field("total_us", o.total.as_micros())
                    .field("alive", o.live.len())
                    .field("pattern", &p.name)
                    .field("fingerprint", format!("{:016x}", o.fingerprint()))
            };
            let seq_line = line("sequential", "none", &seq);
            let cpu = if args.sequential_only {
                None
            } else {
                let mut recorder = dynasoar_examples::render::Recorder::new(&Default::default())?;
                let o = game_of_life::run(args.implementation, options, &cfg, &mut recorder, false)?;
                Some((line("cpu", label, &o), o.total, o.fingerprint() == seq.fingerprint()))
            };
            ((seq_line, seq.total), cpu)
        }
    };
    let (seq_line, seq_total) = sequential;
    dynasoar_examples::outln!("{seq_line}");
    if let Some((cpu_line, cpu_total, same)) = cpu {
        let ratio = cpu_total.as_secs_f64() / seq_total.as_secs_f64().max(1e-9);
        dynasoar_examples::outln!(
            "{}",
            cpu_line.field("threads", threads).field("ratio_vs_sequential", format!("{ratio:.3}"))
        );
        anyhow::ensure!(
            same,
            "the CPU backend's {label} run and the sequential run computed different results"
        );
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------
// Wa-Tor.

/// The ocean as flat arrays, one element per cell; an agent's fields live in its cell (as in
/// the app's SOA baseline, whose kernels these loops follow one for one).
struct SequentialOcean {
    p: Params,
    cell_rng: Vec<Rng>,
    /// Bit `d`: the agent on neighbour `d` asked to move here in this phase.
    requests: Vec<u8>,
    kind: Vec<u8>,
    /// The kind each cell held when the phase began: the agents that act in it.
    active: Vec<u8>,
    agent_rng: Vec<Rng>,
    new_position: Vec<u32>,
    egg_timer: Vec<u32>,
    energy: Vec<u32>,
}

impl SequentialOcean {
    /// The ocean of `cfg` after its steps, and the time the steps took (setup excluded, as in
    /// the app).
    fn run(cfg: &wator::Config) -> (Vec<CellState>, Duration) {
        let mut ocean = SequentialOcean::new(cfg.params());
        let started = Instant::now();
        for _ in 0..cfg.steps {
            ocean.phase(FISH);
            ocean.phase(SHARK);
        }
        let total = started.elapsed();
        (ocean.cells(), total)
    }

    fn new(p: Params) -> Self {
        let n = p.cells() as usize;
        let mut o = SequentialOcean {
            p,
            cell_rng: Vec::with_capacity(n),
            requests: vec![0; n],
            kind: Vec::with_capacity(n),
            active: vec![EMPTY as u8; n],
            agent_rng: Vec::with_capacity(n),
            new_position: (0..n as u32).collect(),
            egg_timer: Vec::with_capacity(n),
            energy: Vec::with_capacity(n),
        };
        for c in 0..n as u32 {
            let mut rng = cell_rng(c, &p);
            let (kind, seed) = initial_agent(&mut rng, &p);
            let (agent_rng, egg_timer) = newborn(seed, &p);
            let empty = kind == EMPTY;
            o.cell_rng.push(rng);
            o.kind.push(kind as u8);
            o.agent_rng.push(if empty { Rng::default() } else { agent_rng });
            o.egg_timer.push(if empty { 0 } else { egg_timer });
            o.energy.push(if kind == SHARK { p.energy_start } else { 0 });
        }
        o
    }

    /// One phase: the agents of `kind` ask, the cells decide, the agents move.
    fn phase(&mut self, kind: u32) {
        let p = self.p;
        self.active.copy_from_slice(&self.kind);
        // Agents ask a neighbour to take them.
        for c in 0..p.cells() {
            let ci = c as usize;
            if self.active[ci] as u32 != kind {
                continue;
            }
            self.egg_timer[ci] += 1;
            if kind == SHARK {
                let energy = hungrier(self.energy[ci]);
                self.energy[ci] = energy;
                if starves(energy) {
                    continue;
                }
            }
            self.new_position[ci] = c;
            let n = neighbor_indices(c, p.width, p.height);
            let (mut fish, mut free) = (0, 0);
            for (dir, &ni) in n.iter().enumerate() {
                match self.kind[ni as usize] as u32 {
                    EMPTY => free |= 1 << dir,
                    FISH => fish |= 1 << dir,
                    _ => {}
                }
            }
            if fish | free == 0 || (kind == FISH && free == 0) {
                continue;
            }
            let mut rng = self.agent_rng[ci];
            let target =
                if kind == FISH { fish_target(free, &mut rng) } else { shark_target(fish, free, &mut rng) };
            if let Some(dir) = target {
                self.requests[n[dir as usize] as usize] |= 1 << opposite(dir);
            }
            self.agent_rng[ci] = rng;
        }
        // Cells accept one requester each (and clear their requests for the next phase).
        for c in 0..p.cells() {
            let ci = c as usize;
            let requests = self.requests[ci] as u32;
            if requests == 0 {
                continue;
            }
            self.requests[ci] = 0;
            let mut rng = self.cell_rng[ci];
            if let Some(dir) = accept(requests, &mut rng) {
                let from = neighbor_indices(c, p.width, p.height)[dir as usize];
                self.new_position[from as usize] = c;
            }
            self.cell_rng[ci] = rng;
        }
        // Accepted agents move (sharks eat, starving ones die), breeders leave a newborn.
        for c in 0..p.cells() {
            let ci = c as usize;
            if self.active[ci] as u32 != kind {
                continue;
            }
            let mut energy = self.energy[ci];
            if kind == SHARK && starves(energy) {
                self.kind[ci] = EMPTY as u8;
                continue;
            }
            let to = self.new_position[ci] as usize;
            if to == ci {
                continue;
            }
            if kind == SHARK && self.kind[to] == FISH as u8 {
                energy += p.energy_boost;
            }
            self.move_agent(ci, to, kind, if kind == SHARK { energy } else { 0 });
        }
    }

    /// Move the agent of cell `from` (of `kind`) to cell `to`; a newborn stays behind if it
    /// breeds.
    fn move_agent(&mut self, from: usize, to: usize, kind: u32, energy: u32) {
        let p = self.p;
        let mut rng = self.agent_rng[from];
        let mut egg_timer = self.egg_timer[from];
        let mut left_behind = EMPTY;
        if breeds(egg_timer, &p) {
            let seed = rng.next_u64();
            egg_timer = 0;
            left_behind = kind;
            let (child_rng, child_egg) = newborn(seed, &p);
            self.agent_rng[from] = child_rng;
            self.egg_timer[from] = child_egg;
            self.energy[from] = if kind == SHARK { p.energy_start } else { 0 };
            self.new_position[from] = from as u32;
        }
        self.kind[from] = left_behind as u8;
        self.kind[to] = kind as u8;
        self.agent_rng[to] = rng;
        self.egg_timer[to] = egg_timer;
        self.energy[to] = energy;
        self.new_position[to] = to as u32;
    }

    /// The ocean as the apps export it.
    fn cells(&self) -> Vec<CellState> {
        (0..self.kind.len())
            .map(|i| match self.kind[i] as u32 {
                FISH => CellState {
                    kind: FISH,
                    egg_timer: self.egg_timer[i],
                    rng: self.agent_rng[i],
                    ..Default::default()
                },
                SHARK => CellState {
                    kind: SHARK,
                    egg_timer: self.egg_timer[i],
                    energy: self.energy[i],
                    rng: self.agent_rng[i],
                    ..Default::default()
                },
                _ => CellState::default(),
            })
            .collect()
    }
}

// ----------------------------------------------------------------------------------------
// The Game of Life.

/// The alive cells (sorted) of `pattern` after `steps` steps, and the time the steps took: every
/// cell of a double-buffered byte grid each step. The grid has a border of dead cells, so that
/// no neighbour needs a bounds check (the grid does not wrap: cells outside it are dead).
fn sequential_life(pattern: &game_of_life::Pattern, steps: u32) -> (Vec<u32>, Duration) {
    let (w, h) = (pattern.width as usize, pattern.height as usize);
    let stride = w + 2;
    let at = |x: usize, y: usize| (y + 1) * stride + x + 1;
    let mut current = vec![0u8; stride * (h + 2)];
    for &c in &pattern.live {
        current[at(c as usize % w, c as usize / w)] = 1;
    }
    let mut next = current.clone();
    let started = Instant::now();
    for _ in 0..steps {
        for y in 0..h {
            // From the border cell left of the row: `here[x + 1]` is cell `x`.
            let row = at(0, y) - 1;
            let (above, here, below) = (&current[row - stride..], &current[row..], &current[row + stride..]);
            let out = &mut next[row + 1..row + 1 + w];
            for x in 0..w {
                let n = above[x]
                    + above[x + 1]
                    + above[x + 2]
                    + here[x]
                    + here[x + 2]
                    + below[x]
                    + below[x + 1]
                    + below[x + 2];
                out[x] = next_state(here[x + 1] != 0, n as u32) as u8;
            }
        }
        std::mem::swap(&mut current, &mut next);
    }
    let total = started.elapsed();
    let live = (0..w * h).filter(|&i| current[at(i % w, i / w)] != 0).map(|i| i as u32).collect();
    (live, total)
}
