//! Game of Life: Conway's cellular automaton (B3/S23) in O(#alive cells) per step (the paper's
//! `game-of-life`, Table 1).
//!
//! Only *alive* cells and *candidates* (dead cells next to alive ones, which may come alive) are
//! objects; they are created and freed every step. `Agent` is abstract, `Alive` and `Candidate`
//! extend it. The grid itself is a plain device array with one `Handle<Agent>` per cell (null:
//! dead and no candidate): the original's cell-less variant (`dynasoar_no_cell`; its other
//! variant also makes the cells objects, which adds a load per neighbour and changes nothing
//! else). The grid does **not** wrap: cells outside it are dead, as in the original.
//!
//! One step is four `parallel_do`s, as in the original:
//! 1. `Candidate::prepare`: a candidate with 3 alive neighbours will spawn, one with none will
//!    vanish;
//! 2. `Alive::prepare`: an alive cell with fewer than 2 or more than 3 alive neighbours will
//!    die; every alive cell stops being new;
//! 3. `Candidate::update`: spawning candidates become (new) alive cells, vanishing ones are
//!    removed;
//! 4. `Alive::update`: new alive cells put candidates into their empty neighbour cells; dying
//!    alive cells become candidates.
//!
//! Whether a neighbour is alive is read from the type bits of the handle in its grid cell: the
//! `prepare` phases read no other object. The original's `is_new` flag of `Alive` is the
//! action [`action::NEW`] here, so that `Alive::update` reads one field.
//!
//! Unlike the original, which lets the first new alive neighbour (in scan order) of an empty
//! cell create its candidate and finds it by reading the `is_new` field of neighbouring
//! objects (some of which are being freed in the same launch), a new alive cell here *claims*
//! an empty neighbour cell with a compare-and-swap on the grid entry, then fills it with the
//! candidate: no object is read while another thread may free it. Which thread creates a
//! candidate may differ between runs; the cells that hold candidates and alive cells do not.
//!
//! The rules live in plain functions ([`next_state`], [`alive_action`], [`candidate_action`],
//! [`for_each_neighbor`]) shared by the DSL version and the two hand-written baselines. The
//! baselines keep flat per-cell arrays, no objects and no lists, and process every cell each
//! step (double-buffered, one kernel per step, like the original's `baseline_simple`): SOA (two
//! byte arrays) and AOS (one array of two-byte cells). (The original's `baseline_soa` and
//! `baseline_aos` instead keep index lists of alive cells and candidates, compacted by a
//! prefix sum every step.)

use dynasoar::arch::{self, atomic::Atomic64};
use dynasoar::prelude::*;
use dynasoar::{ClassSpec, RawHandle};

/// Constants of the benchmark (the original DynaSOAr configuration).
pub mod config {
    /// Steps of the benchmark run.
    pub const STEPS: u32 = 300;
    /// Archive of the benchmark inputs: Paul Rendell's Turing machines as plain (ASCII, P2) PGM
    /// images, pixel value 0 for an alive cell.
    pub const ARCHIVE: &str = "turing_machines.tar.gz";
    /// The benchmark input in [`ARCHIVE`]: 12699 x 12652 cells, 252,192 alive.
    pub const BENCHMARK_PATTERN: &str = "utm.pgm";
    /// The small input in [`ARCHIVE`]: 1714 x 1647 cells, 36,549 alive.
    pub const SMALL_PATTERN: &str = "tm.pgm";
}

/// What a prepared agent does in the update phase (values of [`Agent::action`]).
pub mod action {
    /// Stay as it is.
    pub const NONE: u8 = 0;
    /// Alive: die (become a candidate). Candidate: vanish (no alive neighbour left).
    pub const DIE: u8 = 1;
    /// Candidate: come alive.
    pub const SPAWN: u8 = 2;
    /// Alive: came alive in this step and still has to create candidates around it (the
    /// original's `is_new` flag).
    pub const NEW: u8 = 3;
}

// ----------------------------------------------------------------------------------------
// The rules, shared by all implementations.

/// Conway's rule (B3/S23): whether a cell is alive in the next step, given whether it is alive
/// now and how many of its 8 neighbours are.
#[inline(always)]
pub const fn next_state(alive: bool, neighbors: u32) -> bool {
    neighbors == 3 || (alive && neighbors == 2)
}

/// The action of an alive cell with `neighbors` alive neighbours.
#[inline(always)]
pub const fn alive_action(neighbors: u32) -> u8 {
    if next_state(true, neighbors) { action::NONE } else { action::DIE }
}

/// The action of a candidate (a dead cell) with `neighbors` alive neighbours: spawn, or vanish
/// when no alive cell is next to it any more.
#[inline(always)]
pub const fn candidate_action(neighbors: u32) -> u8 {
    if next_state(false, neighbors) {
        action::SPAWN
    } else if neighbors == 0 {
        action::DIE
    } else {
        action::NONE
    }
}

/// Call `f` with the index of every neighbour of cell `cell` (row-major, `y * width + x`)
/// inside the `width` x `height` grid (the grid does not wrap), excluding the cell itself.
#[inline(always)]
pub fn for_each_neighbor(width: u32, height: u32, cell: u32, mut f: impl FnMut(u32)) {
    for_each_neighbor_at(width, height, cell, |_, n| f(n));
}

/// [`for_each_neighbor`], also passing each neighbour's position `3 * (dy + 1) + (dx + 1)` in
/// the 3x3 block around the cell (see [`neighbor_at`]).
#[inline(always)]
pub fn for_each_neighbor_at(width: u32, height: u32, cell: u32, mut f: impl FnMut(u32, u32)) {
    let (x, y) = (cell % width, cell / width);
    // A fixed 3x3 loop that the compiler unrolls: the bounds checks become predicates and the
    // (up to 8) loads in `f` are independent, so the GPU issues them together. `x - 1` wraps
    // to a value `>= width` at the left edge, which the check excludes.
    for dy in 0..3u32 {
        let ny = (y + dy).wrapping_sub(1);
        for dx in 0..3u32 {
            let nx = (x + dx).wrapping_sub(1);
            if (dx != 1 || dy != 1) && nx < width && ny < height {
                f(3 * dy + dx, ny * width + nx);
            }
        }
    }
}

/// The cell at `position` (as in [`for_each_neighbor_at`]) of the 3x3 block around `cell`; it
/// must lie in the grid.
#[inline(always)]
pub fn neighbor_at(width: u32, cell: u32, position: u32) -> u32 {
    let (dy, dx) = (position / 3, position % 3);
    cell.wrapping_add(dy * width + dx).wrapping_sub(width + 1)
}

/// How many neighbours of `cell` satisfy `alive`.
#[inline(always)]
pub fn count_neighbors(width: u32, height: u32, cell: u32, alive: impl Fn(u32) -> bool) -> u32 {
    let mut n = 0;
    for_each_neighbor(width, height, cell, |i| n += alive(i) as u32);
    n
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// An alive cell or a candidate: the object sitting in one grid cell.
#[soa_class(abstract)]
#[derive(Debug, PartialEq)]
pub struct Agent {
    /// Index of the agent's cell (`y * width + x`).
    pub cell: u32,
    /// What the agent does in the update phase (see [`action`]).
    pub action: u8,
}

/// An alive cell (action [`action::NEW`] from its birth until the next `prepare`).
#[soa_class(extends = Agent)]
#[derive(Debug, PartialEq)]
pub struct Alive {}

/// A dead cell next to an alive one: it may come alive.
#[soa_class(extends = Agent)]
#[derive(Debug, PartialEq)]
pub struct Candidate {}

dynasoar::allocator!(
    /// The heap of the Game of Life: agents of both kinds.
    pub GolHeap: Agent, Alive, Candidate
);

/// The world: one agent handle per cell (null: dead, not a candidate), `width * height` of
/// them, row-major. Passed to every method.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct World {
    pub cells: DevPtr<Handle<Agent>>,
    pub width: u32,
    pub height: u32,
}

impl World {
    /// The agent in cell `i`, by a plain load: only while no thread writes the grid (the
    /// `prepare` phases).
    #[inline(always)]
    fn agent(&self, i: u32) -> Handle<Agent> {
        // SAFETY: `i < width * height`, the length of `cells` (callers pass grid cells only);
        // in the prepare phases no thread writes the grid.
        unsafe { self.cells.read(i as usize) }
    }

    /// Whether cell `i` is alive (a plain load, as [`agent`](Self::agent)); only the handle's
    /// type bits are looked at, no object is read.
    #[inline(always)]
    fn is_alive(&self, i: u32) -> bool {
        self.agent(i).get().is_some_and(|a| a.is::<Alive>())
    }

    /// Alive neighbours of cell `cell`.
    #[inline(always)]
    fn alive_neighbors(&self, cell: u32) -> u32 {
        count_neighbors(self.width, self.height, cell, |i| self.is_alive(i))
    }

    /// The grid entry of cell `i`, for atomic access (the update phases, where other threads
    /// write entries).
    #[inline(always)]
    fn entry(&self, i: u32) -> &'static Atomic64 {
        // SAFETY: a live, aligned 8-byte grid entry (`i < width * height`); while threads may
        // write the grid, every access to it goes through this atomic view.
        unsafe { Atomic64::from_ptr(self.cells.as_ptr().add(i as usize) as *mut u64) }
    }

    #[inline(always)]
    fn load(&self, i: u32) -> Handle<Agent> {
        // SAFETY: grid entries hold null or handles of agents (written by `store`/`claim` only).
        unsafe { Handle::from_raw(RawHandle(self.entry(i).load())) }
    }

    #[inline(always)]
    fn store(&self, i: u32, agent: Handle<Agent>) {
        self.entry(i).store(agent.raw().0);
    }

    /// Reserve the empty cell `i` for `by` (which then puts a candidate there); false if the
    /// cell is not empty (any more). Until then the cell holds `by`'s own handle as a marker:
    /// only the `update` phase of alive cells claims cells, and in that phase threads look at
    /// other cells only to see whether they are empty.
    #[inline(always)]
    fn claim(&self, i: u32, by: Handle<Agent>) -> bool {
        self.entry(i).compare_exchange(0, by.raw().0).is_ok()
    }
}

/// The handle of `obj` as an agent, for the grid.
#[inline(always)]
fn agent_handle<T: dynasoar::IsA<Agent, D>, D>(obj: Obj<T>) -> Handle<Agent> {
    obj.up::<Agent, D>().handle()
}

/// Put a new candidate into cell `cell` (null if the heap is full: the host reports that).
#[inline(always)]
fn new_candidate(dev: &Device<GolHeap>, world: &World, cell: u32) {
    let candidate = dev.make_new(Candidate { base: Agent { cell, action: action::NONE } });
    world.store(cell, candidate.map(agent_handle).unwrap_or(Handle::NULL));
}

#[soa_methods]
impl Alive {
    /// The alive cell `cells[index]` of the initial pattern (new: it creates its candidates in
    /// the first `update`). Must be followed by [`Alive::register`].
    #[parallel_new]
    pub fn from_pattern(_dev: &Device<GolHeap>, index: u64, cells: DevPtr<u32>) -> Self {
        // SAFETY: the host launches this with `index < len(cells)`.
        let cell = unsafe { cells.read(index as usize) };
        Alive { base: Agent { cell, action: action::NEW } }
    }

    /// Enter this cell into the grid (after [`Alive::from_pattern`]).
    #[parallel]
    pub fn register(this: Obj<Self>, _dev: &Device<GolHeap>, world: World) {
        world.store(this.cell(), agent_handle(this));
    }

    /// Phase 2: decide whether to die (this also ends being new).
    #[parallel]
    pub fn prepare(this: Obj<Self>, _dev: &Device<GolHeap>, world: World) {
        this.set_action(alive_action(world.alive_neighbors(this.cell())));
    }

    /// Phase 4: a new cell creates candidates in its empty neighbour cells; a dying cell
    /// becomes a candidate.
    #[parallel]
    pub fn update(this: Obj<Self>, dev: &Device<GolHeap>, world: World) {
        let action = this.action();
        if action == action::NONE {
            return;
        }
        let cell = this.cell();
        if action == action::NEW {
            // Claim the empty neighbour cells first, then fill them in a loop: one call site of
            // `make_new`, which the lanes of a warp reach together (their allocations coalesce).
            let me = agent_handle(this);
            let mut claimed = 0u32;
            for_each_neighbor_at(world.width, world.height, cell, |position, n| {
                if world.load(n).is_null() && world.claim(n, me) {
                    claimed |= 1 << position;
                }
            });
            while claimed != 0 {
                let position = claimed.trailing_zeros();
                claimed &= claimed - 1;
                new_candidate(dev, &world, neighbor_at(world.width, cell, position));
            }
        } else {
            new_candidate(dev, &world, cell);
            dev.free(this);
        }
    }
}

#[soa_methods]
impl Candidate {
    /// Phase 1: spawn with 3 alive neighbours, vanish with none.
    #[parallel]
    pub fn prepare(this: Obj<Self>, _dev: &Device<GolHeap>, world: World) {
        let action = candidate_action(world.alive_neighbors(this.cell()));
        if action != action::NONE {
            this.set_action(action);
        }
    }

    /// Phase 3: become a new alive cell, or vanish.
    #[parallel]
    pub fn update(this: Obj<Self>, dev: &Device<GolHeap>, world: World) {
        let action = this.action();
        if action == action::NONE {
            return;
        }
        let cell = this.cell();
        if action == action::SPAWN {
            let alive = dev.make_new(Alive { base: Agent { cell, action: action::NEW } });
            world.store(cell, alive.map(agent_handle).unwrap_or(Handle::NULL));
        } else {
            world.store(cell, Handle::NULL);
        }
        dev.free(this);
    }
}

/// Whether a grid entry (read on the host) holds an alive cell.
pub fn is_alive_handle(h: Handle<Agent>) -> bool {
    !h.is_null() && h.raw().type_id() == <Alive as ClassSpec>::TYPE_ID
}

/// Whether a grid entry (read on the host) holds a candidate.
pub fn is_candidate_handle(h: Handle<Agent>) -> bool {
    !h.is_null() && h.raw().type_id() == <Candidate as ClassSpec>::TYPE_ID
}

// ----------------------------------------------------------------------------------------
// Hand-written baselines: flat per-cell arrays, every cell processed each step, no dynamic
// allocation. One kernel per step reads the current state and writes the next.

/// Structure-of-arrays baseline: two byte arrays (1 = alive), swapped by the host each step.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct SoaLife {
    pub current: DevPtr<u8>,
    pub next: DevPtr<u8>,
    pub width: u32,
    pub height: u32,
}

/// Array-of-structures baseline cell: both states of the cell side by side.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct AosCell {
    /// `state[parity]` is the current state (1 = alive), the other one the next.
    pub state: [u8; 2],
}

/// Array-of-structures baseline: one array of cells; `parity` says which state is current.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct AosLife {
    pub cells: DevPtr<AosCell>,
    pub width: u32,
    pub height: u32,
    pub parity: u32,
    pub _pad: u32,
}

fn each_cell(count: u32, mut f: impl FnMut(u32)) {
    let stride = arch::global_thread_count();
    let mut i = arch::global_thread_id();
    while i < count as usize {
        f(i as u32);
        i += stride;
    }
}

/// SOA baseline: one step.
#[kernel]
pub fn life_soa_step(p: SoaLife) {
    each_cell(p.width * p.height, |i| {
        // SAFETY: `i` and its neighbours are `< width * height`, the arrays' length; `current`
        // is only read during the step, and cell `i` of `next` is written by this thread only.
        unsafe {
            let n = count_neighbors(p.width, p.height, i, |j| p.current.read(j as usize) != 0);
            let alive = p.current.read(i as usize) != 0;
            p.next.write(i as usize, next_state(alive, n) as u8);
        }
    });
}

/// AOS baseline: one step.
#[kernel]
pub fn life_aos_step(p: AosLife) {
    let (now, next) = ((p.parity & 1) as usize, (1 - (p.parity & 1)) as usize);
    each_cell(p.width * p.height, |i| {
        // SAFETY: as in `life_soa_step`: state `now` of every cell is only read during the
        // step, state `next` of cell `i` is written by this thread only (a byte of its own).
        unsafe {
            let cells = p.cells.as_ptr();
            let n = count_neighbors(p.width, p.height, i, |j| (*cells.add(j as usize)).state[now] != 0);
            let cell = cells.add(i as usize);
            (*cell).state[next] = next_state((*cell).state[now] != 0, n) as u8;
        }
    });
}
