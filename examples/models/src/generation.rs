//! Generations: a Game-of-Life family cellular automaton in which dying cells pass through
//! several states before they are dead (the paper's `generation`, Table 1).
//!
//! A cell is *alive*, *dying* in state `1..=dying_states`, or *dead*. With `n` alive cells
//! among its 8 neighbours (the grid does not wrap), one step turns
//! - an alive cell into a dying one (state 1) unless `n` is in the survival set,
//! - a dying cell in state `k` into state `k + 1`, and the last state into a dead cell,
//! - a dead cell into an alive one if `n` is in the birth set.
//!
//! The benchmark rule (the original DynaSOAr `example/generation/configuration.h`) survives
//! with 0, 2, 3, 5, 6, 7 or 8 neighbours, is born with 3, 4, 6 or 8, and has 255 dying
//! states. Conway's Game of Life is the rule S23/B3 with no dying states.
//!
//! As in the Game of Life app, only cells that matter are objects: *alive* cells, and
//! *candidates* for the others: dead cells next to alive ones (which may be born) and dying
//! cells (which count down). Both extend the abstract `Agent`; the grid is a device array of
//! one `Handle<Agent>` per cell (null: dead, no candidate). Counting alive neighbours reads only
//! the type bits of the grid's handles, no object. Unlike the original, whose dying cells stay
//! `Alive` objects with a state field (so neighbour counts read that field, and every `Alive`
//! update branches on it), a dying cell here is a `Candidate` with a state: a cell that dies
//! is replaced by one, and it becomes an ordinary (dead) candidate after its last state, with
//! no new object. One step is four `parallel_do`s, as in the original:
//!
//! 1. `Candidate::prepare`: a dead candidate with `n` in the birth set will be born, one with
//!    `n = 0` will vanish; a dying candidate advances its state (after the last one it is an
//!    ordinary dead candidate);
//! 2. `Alive::prepare`: an alive cell with `n` outside the survival set will die; every alive
//!    cell stops being new;
//! 3. `Candidate::update`: born candidates become (new) alive cells, vanishing ones are freed;
//! 4. `Alive::update`: new alive cells put dead candidates into their empty neighbour cells
//!    (claimed with a compare-and-swap on the grid entry); dying alive cells become
//!    candidates in state 1.
//!
//! The rules live in plain functions shared with the two hand-written baselines, which keep one
//! state per cell ([`DEAD`], [`ALIVE`], or `ALIVE + k` for dying state `k`) and compute every
//! cell every step, double-buffered: SOA (two `u16` arrays) and AOS (one array of cells with
//! both states).

use dynasoar::ClassSpec;
use dynasoar::arch;
use dynasoar::prelude::*;

/// Constants of the benchmark.
pub mod config {
    /// Cells per row and rows.
    pub const SIZE: u32 = 5_000;
    pub const STEPS: u32 = 25_000;
    /// Survival set: bit `n` set if an alive cell with `n` alive neighbours stays alive
    /// (0, 2, 3, 5, 6, 7, 8).
    pub const SURVIVE: u32 = 0b1_1110_1101;
    /// Birth set: bit `n` set if a dead cell with `n` alive neighbours comes alive (3, 4, 6, 8).
    pub const BIRTH: u32 = 0b1_0101_1000;
    /// Dying states between alive and dead.
    pub const DYING_STATES: u32 = 255;
    /// Half the length of the arms of the benchmark's burst pattern.
    pub const BURST_LENGTH: u32 = 100;
    /// Distance between two bursts.
    pub const BURST_SPACING: u32 = 400;
}

/// What a prepared agent does in the update phase (values of [`Agent::action`]).
pub mod action {
    /// Stay as it is.
    pub const NONE: u8 = 0;
    /// Alive: die (become a dying candidate). Dead candidate: vanish.
    pub const DIE: u8 = 1;
    /// Dead candidate: come alive.
    pub const SPAWN: u8 = 2;
    /// Alive: came alive in this step and still has to create candidates around it.
    pub const NEW: u8 = 3;
}

/// The rule of the automaton (see the module docs), passed to every method and kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Plain)]
pub struct Rule {
    /// Bit `n`: an alive cell with `n` alive neighbours survives.
    pub survive: u32,
    /// Bit `n`: a dead cell with `n` alive neighbours is born (bit 0 must be clear: dead cells
    /// far from alive ones have no object).
    pub birth: u32,
    /// Dying states (at most 255).
    pub dying_states: u32,
    pub _pad: u32,
}

impl Default for Rule {
    fn default() -> Self {
        Rule { survive: config::SURVIVE, birth: config::BIRTH, dying_states: config::DYING_STATES, _pad: 0 }
    }
}

impl Rule {
    /// Conway's Game of Life (S23/B3, no dying states).
    pub const CONWAY: Rule = Rule { survive: 0b1100, birth: 0b1000, dying_states: 0, _pad: 0 };
}

// ----------------------------------------------------------------------------------------
// The rules, shared by all implementations.

/// Cell state of the baselines and of exported grids: dead.
pub const DEAD: u16 = 0;
/// Cell state: alive. `ALIVE + k` is dying state `k` (`1..=dying_states`).
pub const ALIVE: u16 = 1;

/// Whether an alive cell with `n` alive neighbours survives.
#[inline(always)]
pub const fn survives(n: u32, rule: &Rule) -> bool {
    rule.survive & (1 << n) != 0
}

/// Whether a dead cell with `n` alive neighbours is born.
#[inline(always)]
pub const fn is_born(n: u32, rule: &Rule) -> bool {
    rule.birth & (1 << n) != 0
}

/// The dying state after `state` (`1..=dying_states`); 0 means dead.
#[inline(always)]
pub const fn next_dying(state: u32, rule: &Rule) -> u32 {
    if state < rule.dying_states { state + 1 } else { 0 }
}

/// The dying state of a cell that just died (0: dead at once, when there are no dying states).
#[inline(always)]
pub const fn first_dying(rule: &Rule) -> u32 {
    if rule.dying_states > 0 { 1 } else { 0 }
}

/// The action of an alive cell with `n` alive neighbours.
#[inline(always)]
pub const fn alive_action(n: u32, rule: &Rule) -> u8 {
    if survives(n, rule) { action::NONE } else { action::DIE }
}

/// The action of a dead candidate with `n` alive neighbours: be born, or vanish when no alive
/// cell is next to it any more.
#[inline(always)]
pub const fn candidate_action(n: u32, rule: &Rule) -> u8 {
    if is_born(n, rule) {
        action::SPAWN
    } else if n == 0 {
        action::DIE
    } else {
        action::NONE
    }
}

/// Whether a state (as in [`DEAD`], [`ALIVE`]) is a dying one.
#[inline(always)]
pub const fn is_dying(state: u16) -> bool {
    state > ALIVE
}

/// The state of a cell after one step, from its state and, for alive and dead cells, its
/// alive neighbours (`neighbors` is not called for dying cells).
#[inline(always)]
pub fn next_state(state: u16, rule: &Rule, neighbors: impl FnOnce() -> u32) -> u16 {
    match state {
        DEAD => {
            if is_born(neighbors(), rule) {
                ALIVE
            } else {
                DEAD
            }
        }
        ALIVE => {
            if survives(neighbors(), rule) {
                ALIVE
            } else if rule.dying_states > 0 {
                ALIVE + 1
            } else {
                DEAD
            }
        }
        dying => match next_dying((dying - ALIVE) as u32, rule) {
            0 => DEAD,
            k => ALIVE + k as u16,
        },
    }
}

/// Call `f` with the position `3 * (dy + 1) + (dx + 1)` and the index of every neighbour of
/// cell `cell` (row-major) inside the `width` x `height` grid, excluding the cell itself.
#[inline(always)]
pub fn for_each_neighbor(width: u32, height: u32, cell: u32, mut f: impl FnMut(u32, u32)) {
    let width = width.max(1);
    let (x, y) = (cell % width, cell / width);
    // A fixed 3x3 loop the compiler unrolls: the bounds checks become predicates and the loads
    // in `f` are independent. `x - 1` wraps to a value `>= width` at the left edge.
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

/// The cell at `position` (as in [`for_each_neighbor`]) of the 3x3 block around `cell`.
#[inline(always)]
pub fn neighbor_at(width: u32, cell: u32, position: u32) -> u32 {
    let (dy, dx) = (position / 3, position % 3);
    cell.wrapping_add(dy * width + dx).wrapping_sub(width + 1)
}

/// How many neighbours of `cell` satisfy `alive`.
#[inline(always)]
pub fn count_neighbors(width: u32, height: u32, cell: u32, alive: impl Fn(u32) -> bool) -> u32 {
    let mut n = 0;
    for_each_neighbor(width, height, cell, |_, i| n += alive(i) as u32);
    n
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// An alive cell or a candidate: the object in one grid cell.
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

/// A dead cell next to an alive one (state 0: it may be born), or a dying cell (state
/// `1..=dying_states`).
#[soa_class(extends = Agent)]
#[derive(Debug, PartialEq)]
pub struct Candidate {
    pub state: u8,
}

dynasoar::allocator!(
    /// The heap of the Generations automaton.
    /// Every class 64 objects a block (docs/performance-log.md, "Uniform blocks").
    #[blocks(uniform)]
    pub GenerationHeap: Agent, Alive, Candidate
);

/// The world, passed to every method: the grid (one agent handle per cell, row-major, null:
/// dead and no candidate) and the rule.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct World {
    /// The grid, for the update phases (atomic accesses).
    pub grid: DeviceArray<Handle<Agent>>,
    /// The same grid, for plain (cached) loads in the prepare phases, when nobody writes it.
    pub cells: DevPtr<Handle<Agent>>,
    pub width: u32,
    pub height: u32,
    pub rule: Rule,
}

impl World {
    /// Whether cell `i` is alive: a plain load of its handle's type bits. Only while no
    /// thread writes the grid (the prepare phases).
    #[inline(always)]
    fn is_alive(&self, i: u32) -> bool {
        // SAFETY: `i < width * height`, the grid's length (neighbour indices of grid cells);
        // in the prepare phases no thread writes the grid. (`DeviceArray` loads are atomic and
        // bypass the L1 cache, which a stencil needs: each entry is read by up to 9 threads.)
        let agent = unsafe { self.cells.read(i as usize) };
        agent.get().is_some_and(|a| a.is::<Alive>())
    }

    /// Alive neighbours of cell `cell` (prepare phases only).
    #[inline(always)]
    fn alive_neighbors(&self, cell: u32) -> u32 {
        count_neighbors(self.width, self.height, cell, |i| self.is_alive(i))
    }
}

/// The handle of `obj` as an agent, for the grid.
#[inline(always)]
fn agent_handle<T: dynasoar::IsA<Agent, D>, D>(obj: Obj<T>) -> Handle<Agent> {
    obj.up::<Agent, D>().handle()
}

#[soa_methods]
impl Alive {
    /// The alive cell `cells[index]` of the initial pattern (new: it creates its candidates in
    /// the first `update`). Must be followed by [`Alive::register`] and [`Alive::update`].
    #[parallel_new]
    pub fn from_pattern(_dev: &Device<GenerationHeap>, index: u64, cells: DevPtr<u32>) -> Self {
        // SAFETY: the host launches this with `index < len(cells)`.
        let cell = unsafe { cells.read(index as usize) };
        Alive { base: Agent { cell, action: action::NEW } }
    }

    /// Enter this cell into the grid (after [`Alive::from_pattern`]).
    #[parallel]
    pub fn register(this: Obj<Self>, _dev: &Device<GenerationHeap>, world: World) {
        world.grid.set(this.cell() as u64, agent_handle(this));
    }

    /// Phase 2: decide whether to die (this also ends being new).
    #[parallel]
    pub fn prepare(this: Obj<Self>, _dev: &Device<GenerationHeap>, world: World) {
        this.set_action(alive_action(world.alive_neighbors(this.cell()), &world.rule));
    }

    /// Phase 4: a new cell creates candidates in its empty neighbour cells; a dying cell
    /// becomes a candidate in the first dying state.
    #[parallel(creates(Candidate), frees(Alive))]
    pub fn update(this: Obj<Self>, dev: &Device<GenerationHeap>, world: World) {
        let action = this.action();
        if action == action::NONE {
            return;
        }
        let cell = this.cell();
        // The cells to put candidates into, as positions in the 3x3 block around this cell
        // (see `for_each_neighbor`), and their state: a new cell claims its empty neighbour
        // cells (its own handle marks a claimed cell: in this phase other threads only test
        // cells for null); a dying cell is replaced by a dying candidate (position 4: itself).
        // Then one `make_new_each` fills them: the lanes of a warp get all their candidates in
        // one allocation, however many each claimed.
        let (claimed, state) = if action == action::NEW {
            let me = agent_handle(this);
            let mut claimed = 0u32;
            for_each_neighbor(world.width, world.height, cell, |position, n| {
                let entry = world.grid.at(n as u64);
                if entry.load().is_null() && entry.compare_exchange(Handle::NULL, me).is_ok() {
                    claimed |= 1 << position;
                }
            });
            (claimed, 0)
        } else {
            (1 << 4, first_dying(&world.rule))
        };
        let at = |k: u32| neighbor_at(world.width, cell, arch::nth_set_bit(claimed as u64, k));
        dev.make_new_each(
            claimed.count_ones(),
            |k| Candidate { base: Agent { cell: at(k), action: action::NONE }, state: state as u8 },
            |k, candidate| world.grid.set(at(k) as u64, candidate.map(agent_handle).unwrap_or(Handle::NULL)),
        );
        if action == action::DIE {
            dev.free(this);
        }
    }
}

#[soa_methods]
impl Candidate {
    /// Phase 1: a dead candidate is born with a birth count of alive neighbours, and vanishes
    /// with none; a dying one advances its state (here rather than in `update`: nothing reads
    /// the state in between, and this kernel is the light one).
    #[parallel]
    pub fn prepare(this: Obj<Self>, _dev: &Device<GenerationHeap>, world: World) {
        let state = this.state();
        if state != 0 {
            this.set_state(next_dying(state as u32, &world.rule) as u8);
            return;
        }
        let action = candidate_action(world.alive_neighbors(this.cell()), &world.rule);
        if action != action::NONE {
            this.set_action(action);
        }
    }

    /// Phase 3: come alive, or vanish (dying candidates have no action).
    #[parallel(creates(Alive), frees(Candidate))]
    pub fn update(this: Obj<Self>, dev: &Device<GenerationHeap>, world: World) {
        let action = this.action();
        if action == action::NONE {
            return;
        }
        let cell = this.cell();
        if action == action::SPAWN {
            let alive = dev.make_new(Alive { base: Agent { cell, action: action::NEW } });
            world.grid.set(cell as u64, alive.map(agent_handle).unwrap_or(Handle::NULL));
        } else {
            world.grid.set(cell as u64, Handle::NULL);
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
// Hand-written baselines: one state per cell, every cell computed each step, no dynamic
// allocation; one kernel per step reads the current states and writes the next.

/// Structure-of-arrays baseline: two state arrays, swapped by the host each step.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct SoaGeneration {
    pub current: DevPtr<u16>,
    pub next: DevPtr<u16>,
    pub width: u32,
    pub height: u32,
    pub rule: Rule,
}

/// Array-of-structures baseline cell: both states side by side.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct AosCell {
    /// `state[parity]` is the current state, the other one the next.
    pub state: [u16; 2],
}

/// Array-of-structures baseline: one array of cells; `parity` says which state is current.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct AosGeneration {
    pub cells: DevPtr<AosCell>,
    pub width: u32,
    pub height: u32,
    pub parity: u32,
    pub _pad: u32,
    pub rule: Rule,
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
pub fn generation_soa_step(p: SoaGeneration) {
    each_cell(p.width * p.height, |i| {
        // SAFETY: `i` and its neighbours are `< width * height`, the arrays' length; `current`
        // is only read during the step, and cell `i` of `next` is written by this thread only.
        unsafe {
            let state = p.current.read(i as usize);
            let next = next_state(state, &p.rule, || {
                count_neighbors(p.width, p.height, i, |j| p.current.read(j as usize) == ALIVE)
            });
            p.next.write(i as usize, next);
        }
    });
}

/// AOS baseline: one step.
#[kernel]
pub fn generation_aos_step(p: AosGeneration) {
    let (now, next) = ((p.parity & 1) as usize, (1 - (p.parity & 1)) as usize);
    each_cell(p.width * p.height, |i| {
        // SAFETY: as in `generation_soa_step`: state `now` of every cell is only read during
        // the step, state `next` of cell `i` is written by this thread only (its own bytes).
        unsafe {
            let cells = p.cells.as_ptr();
            let cell = cells.add(i as usize);
            let state = (*cell).state[now];
            (*cell).state[next] = next_state(state, &p.rule, || {
                count_neighbors(p.width, p.height, i, |j| (*cells.add(j as usize)).state[now] == ALIVE)
            });
        }
    });
}
