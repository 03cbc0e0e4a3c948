//! Game of Life: Conway's cellular automaton (B3/S23) in O(#alive cells) per step (the paper's
//! `game-of-life`, Table 1).
//!
//! Only *alive* cells and *candidates* (dead cells next to alive ones, which may come alive) are
//! objects; they are created and freed every step. `Agent` is abstract, `Alive` and `Candidate`
//! extend it. The grid itself is a plain device array with one agent handle per cell (null:
//! dead and no candidate; a 4-byte [`Packed`] handle where the heap packs them, see [`World`]):
//! the original's cell-less variant (`dynasoar_no_cell`; its other
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
//! `prepare` phases read no object. The original's `is_new` flag of `Alive` is the
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
//! [`for_each_neighbor`]) shared by the DSL version and the hand-written baselines, which keep
//! flat per-cell arrays and no objects:
//! - SOA with lists ([`life_lists_decide`], [`life_lists_update`]; the app's `--impl soa`):
//!   like the original's `baseline_soa`, O(#alive cells) per step. A list holds every cell
//!   that can change (alive cells and their dead neighbours, plus a few dead cells that lost
//!   their last alive neighbour in the last step); each step visits only those, in two
//!   kernels, and builds the next step's list on the device (see [`SoaLifeLists`]).
//! - SOA dense ([`life_soa_step`]; the app's `--impl soa` with `DYNASOAR_GOL_SOA=dense`) and
//!   AOS ([`life_aos_step`], `--impl aos`): every cell processed each step, double-buffered, one
//!   kernel per step, like the original's `baseline_simple`: two byte arrays, or one array of
//!   two-byte cells. (The original's `baseline_aos` keeps lists as its `baseline_soa` does.)

use dynasoar::arch;
use dynasoar::arch::atomic::{Atomic32, Atomic64};
use dynasoar::prelude::*;
use dynasoar::{ClassSpec, Packed, Packer};

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
///
/// Where the heap packs its handles into 32 bits ([`Device::packer`]; DynaSOAr's heap of the
/// app's sizes does), the grid holds [`Packed`] handles (`packed` is 1; 4 bytes per cell),
/// otherwise [`Handle`]s (`packed` is 0; 8 bytes per cell, the general allocators' stores):
/// the `prepare` phases read 8 grid entries per agent for their type bits alone, so half the
/// bytes is half their traffic. Either way a zeroed grid is empty. Make it with
/// [`World::new`] from the host's `Runtime::packer`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct World {
    /// The grid's entries, `Packed<Agent>` or `Handle<Agent>` as `packed` says.
    pub cells: DevPtr<u8>,
    pub width: u32,
    pub height: u32,
    /// 1: the grid holds [`Packed`] handles; 0: [`Handle`]s.
    pub packed: u32,
    pub _pad: u32,
}

impl World {
    /// The world of a `width` x `height` grid at `cells`, zeroed: `width * height` entries of
    /// `Packed<Agent>` where `packed`, else of `Handle<Agent>`. `packed` must say whether the
    /// runtime's heap packs handles (`Runtime::packer().is_some()`): kernels on a heap that
    /// packs none leave a world of packed entries alone.
    pub const fn new(cells: DevPtr<u8>, width: u32, height: u32, packed: bool) -> Self {
        World { cells, width, height, packed: packed as u32, _pad: 0 }
    }

    /// The grid as kernels on `dev` access it; `None` where the world holds packed entries
    /// but the heap packs none (a world made for another heap: nothing is accessed).
    #[inline(always)]
    fn grid(&self, dev: &Device<GolHeap>) -> Option<GridOf> {
        let (width, height) = (self.width, self.height);
        if self.packed == 0 {
            return Some(GridOf::Wide(WideGrid { cells: self.cells.cast(), width, height }));
        }
        let packer = dev.packer()?;
        Some(GridOf::Packed(PackedGrid { cells: self.cells.cast(), packer, width, height }))
    }
}

/// A grid of one kind of entry (see [`World`]).
enum GridOf {
    Wide(WideGrid),
    Packed(PackedGrid),
}

/// What the methods do with the grid: the same on either kind of entry.
trait Grid {
    /// Width and height of the grid.
    fn size(&self) -> (u32, u32);

    /// Whether cell `i` is alive, by a plain load: only while no thread writes the grid (the
    /// `prepare` phases). Only the entry's type bits are looked at, no object is read.
    fn is_alive(&self, i: u32) -> bool;

    /// Whether cell `i` is empty, by an atomic load (the update phases, where other threads
    /// write entries).
    fn is_empty(&self, i: u32) -> bool;

    /// Put `agent` (or null) into cell `i` atomically.
    fn store(&self, i: u32, agent: Option<Handle<Agent>>);

    /// Reserve the empty cell `i` for `by` (which then puts a candidate there); false if the
    /// cell is not empty (any more). Until then the cell holds `by`'s own handle as a marker:
    /// only the `update` phase of alive cells claims cells, and in that phase threads look at
    /// other cells only to see whether they are empty.
    fn claim(&self, i: u32, by: Handle<Agent>) -> bool;

    /// Alive neighbours of cell `cell`.
    #[inline(always)]
    fn alive_neighbors(&self, cell: u32) -> u32 {
        let (width, height) = self.size();
        count_neighbors(width, height, cell, |i| self.is_alive(i))
    }

    /// Claim the empty neighbour cells of `cell` for `by`: their positions (bits, as in
    /// [`for_each_neighbor_at`]).
    #[inline(always)]
    fn claim_empty_neighbors(&self, cell: u32, by: Handle<Agent>) -> u32 {
        let (width, height) = self.size();
        let mut claimed = 0u32;
        for_each_neighbor_at(width, height, cell, |position, n| {
            if self.is_empty(n) && self.claim(n, by) {
                claimed |= 1 << position;
            }
        });
        claimed
    }
}

/// Either grid: each call picks the kind once (a branch on a value that is the same in every
/// thread), so that the loops over neighbours run on one kind of entry.
impl GridOf {
    #[inline(always)]
    fn store(&self, i: u32, agent: Option<Handle<Agent>>) {
        match self {
            GridOf::Wide(g) => g.store(i, agent),
            GridOf::Packed(g) => g.store(i, agent),
        }
    }

    #[inline(always)]
    fn alive_neighbors(&self, cell: u32) -> u32 {
        match self {
            GridOf::Wide(g) => g.alive_neighbors(cell),
            GridOf::Packed(g) => g.alive_neighbors(cell),
        }
    }

    #[inline(always)]
    fn claim_empty_neighbors(&self, cell: u32, by: Handle<Agent>) -> u32 {
        match self {
            GridOf::Wide(g) => g.claim_empty_neighbors(cell, by),
            GridOf::Packed(g) => g.claim_empty_neighbors(cell, by),
        }
    }
}

/// A grid of 8-byte [`Handle`]s.
struct WideGrid {
    cells: DevPtr<Handle<Agent>>,
    width: u32,
    height: u32,
}

impl WideGrid {
    /// The entry of cell `i`, for atomic access.
    #[inline(always)]
    fn entry(&self, i: u32) -> &'static Atomic64 {
        // SAFETY: a live, aligned 8-byte grid entry (`i < width * height`, and the world's
        // grid holds 8-byte entries); while threads may write the grid, every access to it
        // goes through this atomic view.
        unsafe { Atomic64::from_ptr(self.cells.as_ptr().add(i as usize) as *mut u64) }
    }
}

impl Grid for WideGrid {
    #[inline(always)]
    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    #[inline(always)]
    fn is_alive(&self, i: u32) -> bool {
        // SAFETY: `i < width * height`, the grid's length (callers pass grid cells only); in
        // the prepare phases no thread writes the grid.
        let agent = unsafe { self.cells.read(i as usize) };
        agent.get().is_some_and(|a| a.is::<Alive>())
    }

    #[inline(always)]
    fn is_empty(&self, i: u32) -> bool {
        self.entry(i).load() == 0
    }

    #[inline(always)]
    fn store(&self, i: u32, agent: Option<Handle<Agent>>) {
        self.entry(i).store(agent.unwrap_or(Handle::NULL).raw().0);
    }

    #[inline(always)]
    fn claim(&self, i: u32, by: Handle<Agent>) -> bool {
        self.entry(i).compare_exchange(0, by.raw().0).is_ok()
    }
}

/// A grid of 4-byte [`Packed`] handles.
struct PackedGrid {
    cells: DevPtr<Packed<Agent>>,
    packer: Packer<GolHeap>,
    width: u32,
    height: u32,
}

impl PackedGrid {
    /// The entry of cell `i`, for atomic access.
    #[inline(always)]
    fn entry(&self, i: u32) -> &'static Atomic32 {
        // SAFETY: as `WideGrid::entry`, for a grid of 4-byte entries.
        unsafe { Atomic32::from_ptr(self.cells.as_ptr().add(i as usize) as *mut u32) }
    }
}

impl Grid for PackedGrid {
    #[inline(always)]
    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    #[inline(always)]
    fn is_alive(&self, i: u32) -> bool {
        // SAFETY: as in `WideGrid::is_alive`.
        let agent = unsafe { self.cells.read(i as usize) };
        self.packer.is::<Alive, _>(agent)
    }

    #[inline(always)]
    fn is_empty(&self, i: u32) -> bool {
        self.entry(i).load() == 0
    }

    #[inline(always)]
    fn store(&self, i: u32, agent: Option<Handle<Agent>>) {
        self.entry(i).store(self.packer.pack(agent.unwrap_or(Handle::NULL)).bits());
    }

    #[inline(always)]
    fn claim(&self, i: u32, by: Handle<Agent>) -> bool {
        self.entry(i).compare_exchange(0, self.packer.pack(by).bits()).is_ok()
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
    /// the first `update`). Must be followed by [`Alive::register`].
    #[parallel_new]
    pub fn from_pattern(_dev: &Device<GolHeap>, index: u64, cells: DevPtr<u32>) -> Self {
        // SAFETY: the host launches this with `index < len(cells)`.
        let cell = unsafe { cells.read(index as usize) };
        Alive { base: Agent { cell, action: action::NEW } }
    }

    /// Enter this cell into the grid (after [`Alive::from_pattern`]). (`dev` gives the grid's
    /// packer only: the method declares that it creates and frees nothing, as the prepares do.)
    #[parallel(creates(), frees())]
    pub fn register(this: Obj<Self>, dev: &Device<GolHeap>, world: World) {
        if let Some(g) = world.grid(dev) {
            g.store(this.cell(), Some(agent_handle(this)));
        }
    }

    /// Phase 2: decide whether to die (this also ends being new).
    #[parallel(creates(), frees())]
    pub fn prepare(this: Obj<Self>, dev: &Device<GolHeap>, world: World) {
        if let Some(g) = world.grid(dev) {
            this.set_action(alive_action(g.alive_neighbors(this.cell())));
        }
    }

    /// Phase 4: a new cell creates candidates in its empty neighbour cells; a dying cell
    /// becomes a candidate.
    #[parallel(creates(Candidate), frees(Alive))]
    pub fn update(this: Obj<Self>, dev: &Device<GolHeap>, world: World) {
        let action = this.action();
        if action == action::NONE {
            return;
        }
        let cell = this.cell();
        // The cells to put candidates into, as positions in the 3x3 block around this cell
        // (see `for_each_neighbor_at`): a new cell claims its empty neighbour cells first; a
        // dying cell is replaced by a candidate (position 4: itself). Then one `make_new_each`
        // fills them: the lanes of a warp get all their candidates in one allocation, however
        // many each claimed.
        let Some(g) = world.grid(dev) else {
            return;
        };
        let claimed =
            if action == action::NEW { g.claim_empty_neighbors(cell, agent_handle(this)) } else { 1 << 4 };
        let at = |k: u32| neighbor_at(world.width, cell, arch::nth_set_bit(claimed as u64, k));
        dev.make_new_each(
            claimed.count_ones(),
            |k| Candidate { base: Agent { cell: at(k), action: action::NONE } },
            |k, candidate| g.store(at(k), candidate.map(agent_handle)),
        );
        if action == action::DIE {
            dev.free(this);
        }
    }
}

#[soa_methods]
impl Candidate {
    /// Phase 1: spawn with 3 alive neighbours, vanish with none. A method that names `dev`
    /// may create and free anything as far as the runtime can tell; this one takes only the
    /// grid's packer from it, and says so (`creates(), frees()`), so that the runtime keeps
    /// the lists of both classes (without it, each step listed both classes twice).
    #[parallel(creates(), frees())]
    pub fn prepare(this: Obj<Self>, dev: &Device<GolHeap>, world: World) {
        let Some(g) = world.grid(dev) else {
            return;
        };
        let action = candidate_action(g.alive_neighbors(this.cell()));
        if action != action::NONE {
            this.set_action(action);
        }
    }

    /// Phase 3: become a new alive cell, or vanish.
    #[parallel(creates(Alive), frees(Candidate))]
    pub fn update(this: Obj<Self>, dev: &Device<GolHeap>, world: World) {
        let action = this.action();
        if action == action::NONE {
            return;
        }
        let cell = this.cell();
        let alive = if action == action::SPAWN {
            dev.make_new(Alive { base: Agent { cell, action: action::NEW } }).map(agent_handle)
        } else {
            None
        };
        // The grid after the allocation: nothing of it is kept across the allocation's
        // registers. (A world that no grid fits leaves the cell as it is.)
        if let Some(g) = world.grid(dev) {
            g.store(cell, alive);
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
// Hand-written dense baselines: flat per-cell arrays, every cell processed each step, no
// dynamic allocation. One kernel per step reads the current state and writes the next.

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

// ----------------------------------------------------------------------------------------
// Hand-written SOA baseline with lists: each step visits only the cells that can change.

/// Bits of a cell's byte in [`SoaLifeLists::plan`].
pub mod plan_bits {
    /// The cell is alive in the next step.
    pub const NEXT_ALIVE: u8 = 1;
    /// The cell's state changes in this step.
    pub const CHANGED: u8 = 2;
    /// The cell is in the next step's list through its own entry: alive in the next step, or
    /// dead with an alive neighbour now (a dead cell whose last alive neighbour dies in this
    /// step is still listed once more, and drops out in the next step).
    pub const KEEP: u8 = 4;
    /// A neighbour born in this step has put the cell into the next step's list.
    pub const PUSHED: u8 = 8;
}

/// Index of the counter of the list of step parity 0 in [`SoaLifeLists::counters`]
/// (`1`: parity 1).
pub const LIST_COUNT: usize = 0;
/// Index of the overflow flag in [`SoaLifeLists::counters`]: set to 1 when an entry did not fit
/// a list (which the lists' deduplication rules out; the host reports it as an error).
pub const LIST_OVERFLOW: usize = 2;
/// Words of [`SoaLifeLists::counters`].
pub const LIST_COUNTERS: usize = 4;

/// SOA baseline with lists of cells (the original's `baseline_soa` does the same work in more
/// kernels): O(#alive cells) per step, two kernels per step, no host round trip.
///
/// Step `t` has a list of distinct cells that holds every alive cell and every dead cell next
/// to one (and may hold dead cells that lost their last alive neighbour in step `t - 1`):
/// only those can change.
/// 1. [`life_lists_decide`] counts the alive neighbours of each listed cell in `alive` (which
///    nothing writes during the launch) and writes the cell's [`plan_bits`] to its byte of
///    `plan`; its thread 0 clears the next list's counter.
/// 2. [`life_lists_update`] applies each listed cell's plan to `alive` and appends the next
///    step's list: each cell with `KEEP` appends itself; a cell born in this step also puts
///    into it its neighbours that keep no entry of their own, each once: it sets their `PUSHED`
///    bit with an atomic OR and appends those whose byte had neither bit. Appends are
///    warp-aggregated (one atomic per warp and call).
///
/// A cell that is not listed has neither `KEEP` nor `PUSHED` in `plan` (it dropped out with
/// `KEEP` clear and nobody pushed it since, or it never was listed: `plan` starts zeroed), so a
/// born cell's test is right also for neighbours not visited this step. The lists' order
/// depends on the order of the appends; their contents, and so the cells, do not. Kernels loop
/// over the list with a grid stride, reading its length from `counters` on the device: the
/// host launches fixed grids and reads nothing back between steps.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct SoaLifeLists {
    /// One byte per cell, row-major: 1 = alive, 0 = dead (the current state).
    pub alive: DevPtr<u8>,
    /// One byte per cell of [`plan_bits`], four cells to a (little-endian) 32-bit word, for
    /// atomic ORs: `ceil(width * height / 4)` words, zeroed before the first step.
    pub plan: DevPtr<u32>,
    /// This step's list: `counters[LIST_COUNT + parity]` distinct cells.
    pub list: DevPtr<u32>,
    /// The next step's list (`capacity` entries of room), counted in
    /// `counters[LIST_COUNT + 1 - parity]`.
    pub next_list: DevPtr<u32>,
    /// [`LIST_COUNTERS`] words: the two lists' lengths and the overflow flag.
    pub counters: DevPtr<u32>,
    pub width: u32,
    pub height: u32,
    /// Entries of room in each list (`width * height`: a list holds each cell at most once).
    pub capacity: u32,
    /// Parity of the step: which counter counts `list`.
    pub parity: u32,
}

impl SoaLifeLists {
    #[inline(always)]
    fn counter(&self, index: usize) -> &'static Atomic32 {
        // SAFETY: `counters` holds `LIST_COUNTERS` aligned words in global memory (`index` is
        // one of the constants above, all smaller); every access to them is atomic.
        unsafe { Atomic32::from_ptr(self.counters.as_ptr().add(index)) }
    }

    /// Length of this step's list (never above its room).
    #[inline(always)]
    fn listed(&self) -> u32 {
        self.counter(LIST_COUNT + (self.parity & 1) as usize).load().min(self.capacity)
    }

    #[inline(always)]
    fn next_counter(&self) -> &'static Atomic32 {
        self.counter(LIST_COUNT + 1 - (self.parity & 1) as usize)
    }

    /// The word of `plan` that holds cell `cell`'s byte, and the byte's shift in it.
    #[inline(always)]
    fn plan_word(&self, cell: u32) -> (&'static Atomic32, u32) {
        // SAFETY: `cell < width * height`, so word `cell / 4` lies in `plan`
        // (`ceil(width * height / 4)` aligned words in global memory); in `life_lists_update`,
        // the only kernel that uses this view, every access to `plan` is atomic.
        let word = unsafe { Atomic32::from_ptr(self.plan.as_ptr().add((cell / 4) as usize)) };
        (word, 8 * (cell % 4))
    }

    /// Append `cell` to the next list if `flag` is set: a warp-aggregated call that the lanes
    /// of the warp make together, flagged or not.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn append(&self, flag: bool, cell: u32) {
        let slot = arch::WarpGroup::current().fetch_add_flagged_u32(self.next_counter(), flag);
        if flag {
            if slot < self.capacity {
                // SAFETY: `slot < capacity`, the length of `next_list`; the counter hands each
                // slot to one thread, and nothing else reads or writes `next_list` in this launch.
                unsafe { self.next_list.write(slot as usize, cell) };
            } else {
                self.counter(LIST_OVERFLOW).store(1);
            }
        }
    }

    /// Append `cells` to the next list with one atomic (on the CPU backend, where a warp is one
    /// lane).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    fn append_all(&self, cells: &[u32]) {
        if cells.is_empty() {
            return;
        }
        let first = self.next_counter().fetch_add(cells.len() as u32);
        for (k, &cell) in cells.iter().enumerate() {
            let slot = first.saturating_add(k as u32);
            if slot < self.capacity {
                // SAFETY: as in `append`.
                unsafe { self.next_list.write(slot as usize, cell) };
            } else {
                self.counter(LIST_OVERFLOW).store(1);
            }
        }
    }
}

/// Call `f` with each position of a list of `count` entries that this thread visits. On the
/// GPU a grid-stride loop: a warp's lanes read neighbouring entries, and since a warp appends
/// its entries of the next list together, the list's order (and with it the locality of the
/// cells' loads) carries over from step to step. On the CPU backend, whose emulated threads
/// run one after another, a contiguous share per thread (thread `i` of `T`: the positions from
/// `i * count / T` up to the next thread's), as its do-all loop does: a strided walk there
/// would append the next list in strided order, scattering it over the grid a little more
/// every step.
#[inline(always)]
fn each_listed(count: u32, f: impl FnMut(u32)) {
    #[cfg(target_arch = "nvptx64")]
    each_cell(count, f);
    #[cfg(not(target_arch = "nvptx64"))]
    thread_share(count).for_each(f);
}

/// On the CPU backend: this emulated thread's contiguous share of `count` list positions
/// (thread `i` of `T`: from `i * count / T` up to the next thread's).
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn thread_share(count: u32) -> core::ops::Range<u32> {
    let (id, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
    let share = |thread: u64| (thread.min(threads) * count as u64 / threads) as u32;
    share(id)..share(id + 1)
}

/// SOA baseline with lists, first kernel of a step: decide the fate of each listed cell (see
/// [`SoaLifeLists`]).
#[kernel]
pub fn life_lists_decide(p: SoaLifeLists) {
    use plan_bits::*;
    if arch::global_thread_id() == 0 {
        // Nothing reads or writes the next list's counter until the next launch.
        p.next_counter().store(0);
    }
    if p.width == 0 || p.height == 0 {
        return; // no cells (and no division by zero below, nor its panic branch)
    }
    let cells = p.width * p.height;
    each_listed(p.listed(), |i| {
        // SAFETY: `i < listed() <= capacity`, the list's length; written by the last launch.
        let cell = unsafe { p.list.read(i as usize) };
        if cell >= cells {
            return; // never listed (a bad list would be skipped, not followed)
        }
        // SAFETY: `cell` and its neighbours are `< width * height`, the length of `alive`,
        // which no thread writes during this launch.
        let (alive, neighbors) = unsafe {
            let n = count_neighbors(p.width, p.height, cell, |j| p.alive.read(j as usize) != 0);
            (p.alive.read(cell as usize) != 0, n)
        };
        let next = next_state(alive, neighbors);
        let plan = if next { NEXT_ALIVE } else { 0 }
            | if next != alive { CHANGED } else { 0 }
            | if next || neighbors > 0 { KEEP } else { 0 };
        // SAFETY: byte `cell` of `plan`, which is `ceil(width * height / 4)` words long; a list
        // holds each cell once, so this thread alone writes this byte (others write other
        // bytes of its word), and no thread reads `plan` in this launch.
        unsafe { p.plan.cast::<u8>().write(cell as usize, plan) };
    });
}

/// Apply the plan of the cell at position `i` of the list (`i < listed()`), in
/// [`life_lists_update`]: write its new state, and push its neighbours that need an entry if it
/// is born. Returns the cell, whether it keeps its own entry, and the positions (bits, as in
/// [`for_each_neighbor_at`]) of the neighbours this thread must append.
#[inline(always)]
fn apply_plan(p: &SoaLifeLists, cells: u32, i: u32) -> (u32, bool, u32) {
    use plan_bits::*;
    // SAFETY: as in `life_lists_decide`.
    let cell = unsafe { p.list.read(i as usize) };
    let plan = if cell < cells {
        let (word, shift) = p.plan_word(cell);
        (word.load() >> shift) as u8
    } else {
        0
    };
    if plan & CHANGED != 0 {
        // SAFETY: `cell < width * height` (a plan is only read for such cells); the list holds
        // it once, so this thread alone writes it, and no thread reads `alive` in this launch.
        unsafe { p.alive.write(cell as usize, plan & NEXT_ALIVE) };
    }
    // A born cell's dead neighbours may have no entry of their own yet: push them.
    let mut fresh = 0u32;
    if plan & (NEXT_ALIVE | CHANGED) == NEXT_ALIVE | CHANGED {
        for_each_neighbor_at(p.width, p.height, cell, |position, n| {
            let (word, shift) = p.plan_word(n);
            let old = (word.fetch_or((PUSHED as u32) << shift) >> shift) as u8;
            if old & (KEEP | PUSHED) == 0 {
                fresh |= 1 << position;
            }
        });
    }
    (cell, plan & KEEP != 0, fresh)
}

/// SOA baseline with lists, second kernel of a step: apply each listed cell's plan and build
/// the next step's list (see [`SoaLifeLists`]).
#[kernel]
pub fn life_lists_update(p: SoaLifeLists) {
    if p.width == 0 || p.height == 0 {
        return; // as in `life_lists_decide`
    }
    let cells = p.width * p.height;
    #[cfg(target_arch = "nvptx64")]
    each_listed(p.listed(), |i| {
        let (cell, keep, fresh) = apply_plan(&p, cells, i);
        p.append(keep, cell);
        if arch::ballot(arch::activemask(), fresh != 0) == 0 {
            return; // no lane of the warp pushes a neighbour: skip the appends
        }
        // The same 8 calls on every lane (the appends are collective).
        for position in (0..9u32).filter(|&position| position != 4) {
            p.append(fresh & (1 << position) != 0, neighbor_at(p.width, cell, position));
        }
    });
    // On the CPU backend a warp is one lane, and the emulated threads of each worker run one
    // after another: a thread gathers the entries of up to `BATCH` list positions and appends
    // them with one atomic (an atomic per entry, on a counter that every worker's core updates,
    // took 23.8 s against 10.2 s on two cores instead of one: utm.pgm, 300 steps).
    #[cfg(not(target_arch = "nvptx64"))]
    {
        const BATCH: u32 = 64;
        let mut entries = [0u32; 9 * BATCH as usize];
        let core::ops::Range { start: mut at, end } = thread_share(p.listed());
        while at < end {
            let stop = end.min(at + BATCH);
            let mut n = 0;
            let mut add = |cell: u32| {
                // At most 9 entries per position: `entries` has room for all of them.
                if let Some(entry) = entries.get_mut(n) {
                    *entry = cell;
                    n += 1;
                }
            };
            for i in at..stop {
                let (cell, keep, mut fresh) = apply_plan(&p, cells, i);
                if keep {
                    add(cell);
                }
                while fresh != 0 {
                    add(neighbor_at(p.width, cell, fresh.trailing_zeros()));
                    fresh &= fresh - 1;
                }
            }
            p.append_all(&entries[..n]);
            at = stop;
        }
    }
}
