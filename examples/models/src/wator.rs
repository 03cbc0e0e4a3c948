//! Wa-Tor: fish and sharks on a torus (Dewdney 1984; the paper's `wa-tor`, Table 1 and 7.3).
//!
//! Every cell of a `width x height` torus holds at most one agent, a fish or a shark. A step
//! has two phases, first the fish, then the sharks, and each phase has three do-alls:
//!
//! 1. agents `prepare`: age, then ask one neighbouring cell to take them (fish: a random free
//!    neighbour; sharks: a random neighbour with a fish, else a random free one) by setting a
//!    request bit in that cell; a shark whose energy runs out asks nothing (it starves);
//! 2. cells `decide`: a cell with requests picks one requester at random and tells it to come,
//!    and clears its requests for the next phase;
//! 3. agents `update`: a chosen agent moves; if its egg timer is past the spawn threshold it
//!    leaves a newborn of its kind in the cell it left. A shark that moves onto a fish eats it
//!    (the fish object is freed) and gains energy; a starving shark dies (frees itself).
//!
//! The original DynaSOAr benchmark has a fourth do-all per phase, a cells' `prepare` that
//! clears every cell's requests before the agents ask; clearing them in `decide`, where they
//! are read anyway, gives the same requests and spares two passes over all cells per step.
//!
//! Every cell gets requests from at most its four neighbours, each agent asks one cell, and a
//! cell accepts one agent, so no two threads ever write the same agent or cell field in one
//! launch except the request bits (an atomic OR). The simulation is therefore deterministic:
//! random numbers come from per-cell and per-agent generators that move with their owner, and
//! the DSL version, the two hand-written baselines and both backends compute the same ocean.
//!
//! The rules are plain functions shared by all three implementations. The DSL version has the
//! paper's classes: `OceanCell` (the paper's `Cell`), the abstract `OceanAgent` (`Agent`) and
//! `Fish`, `Shark` extending it. The baselines store the agents' fields directly inside the
//! cell grid (paper 7.2), as a structure of arrays and as an array of structures.

use dynasoar::prelude::*;
use dynasoar::{ByIndex, arch};

/// Simulation constants (the original DynaSOAr benchmark's).
pub mod config {
    pub const SEED: u64 = 42;
    /// Cells per row.
    pub const WIDTH: u32 = 2048;
    /// Rows.
    pub const HEIGHT: u32 = 2560;
    pub const STEPS: u32 = 500;
    /// An agent that moves with its egg timer above this leaves a newborn behind.
    pub const SPAWN_THRESHOLD: u32 = 4;
    /// Energy a shark gains by eating a fish.
    pub const ENERGY_BOOST: u32 = 4;
    /// Energy of a new shark; a shark loses one per step and dies at zero.
    pub const ENERGY_START: u32 = 2;
    /// Initial share of cells with a fish, in percent.
    pub const FISH_PERCENT: u32 = 25;
    /// Initial share of cells with a shark, in percent.
    pub const SHARK_PERCENT: u32 = 25;
}

/// What a cell holds: nothing,
pub const EMPTY: u32 = 0;
/// a fish,
pub const FISH: u32 = 1;
/// or a shark.
pub const SHARK: u32 = 2;

/// Directions to the four neighbours: the order of `OceanCell::neighbors`, of
/// `neighbor_indices` and of request bits (`x - 1`,
pub const LEFT: u32 = 0;
/// `y - 1`,
pub const UP: u32 = 1;
/// `x + 1`,
pub const RIGHT: u32 = 2;
/// `y + 1`, all wrapping around).
pub const DOWN: u32 = 3;

/// The world and its rules, passed to every kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Plain)]
pub struct Params {
    pub width: u32,
    pub height: u32,
    pub spawn_threshold: u32,
    pub energy_boost: u32,
    pub energy_start: u32,
    pub fish_percent: u32,
    pub shark_percent: u32,
    pub _pad: u32,
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            width: config::WIDTH,
            height: config::HEIGHT,
            spawn_threshold: config::SPAWN_THRESHOLD,
            energy_boost: config::ENERGY_BOOST,
            energy_start: config::ENERGY_START,
            fish_percent: config::FISH_PERCENT,
            shark_percent: config::SHARK_PERCENT,
            _pad: 0,
            seed: config::SEED,
        }
    }
}

impl Params {
    /// Number of cells.
    #[inline(always)]
    pub fn cells(&self) -> u32 {
        self.width * self.height
    }
}

/// One cell of the ocean as the host sees it after a run (all implementations export this).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct CellState {
    /// `EMPTY`, `FISH` or `SHARK`.
    pub kind: u32,
    /// The agent's egg timer (0 when empty).
    pub egg_timer: u32,
    /// The shark's energy (0 for fish and empty cells).
    pub energy: u32,
    pub _pad: u32,
    /// The agent's random number generator (default when empty).
    pub rng: Rng,
}

// ----------------------------------------------------------------------------------------
// The rules, shared by the DSL version and the baselines.

/// The direction back from the neighbour in direction `dir`.
#[inline(always)]
pub fn opposite(dir: u32) -> u32 {
    (dir + 2) & 3
}

/// Indices of the four neighbours (left, up, right, down) of cell `index` on the torus.
#[inline(always)]
pub fn neighbor_indices(index: u32, width: u32, height: u32) -> [u32; 4] {
    // (`max(1)`: the host rejects empty oceans; this spares the GPU code a panic path.)
    let width = width.max(1);
    let (x, y) = (index % width, index / width);
    let row = y * width;
    let left = if x == 0 { width - 1 } else { x - 1 };
    let right = if x == width - 1 { 0 } else { x + 1 };
    let up = if y == 0 { height - 1 } else { y - 1 };
    let down = if y == height - 1 { 0 } else { y + 1 };
    [row + left, up * width + x, row + right, down * width + x]
}

/// Element `dir` (0..4) of `a`, by selection rather than indexing: keeps small arrays in
/// registers on the GPU (a dynamic index would put them in local memory) and needs no bounds
/// check.
#[inline(always)]
pub fn pick<T: Copy>(a: &[T; 4], dir: u32) -> T {
    match dir & 3 {
        0 => a[0],
        1 => a[1],
        2 => a[2],
        _ => a[3],
    }
}

/// A uniformly random direction among the set bits of the 4-bit `mask`, or `None` when no bit is
/// set (then no random number is drawn).
#[inline(always)]
pub fn choose(mask: u32, rng: &mut Rng) -> Option<u32> {
    if mask == 0 {
        return None;
    }
    let mut k = rng.below(mask.count_ones());
    let mut m = mask;
    while k > 0 {
        m &= m - 1;
        k -= 1;
    }
    Some(m.trailing_zeros())
}

/// Where a fish wants to go: a random free neighbour (`free`: mask of free directions).
#[inline(always)]
pub fn fish_target(free: u32, rng: &mut Rng) -> Option<u32> {
    choose(free, rng)
}

/// Where a shark wants to go: a random neighbour with a fish, else a random free one.
#[inline(always)]
pub fn shark_target(fish: u32, free: u32, rng: &mut Rng) -> Option<u32> {
    if fish != 0 { choose(fish, rng) } else { choose(free, rng) }
}

/// Which requester a cell accepts (`requests`: mask of the directions that asked).
#[inline(always)]
pub fn accept(requests: u32, rng: &mut Rng) -> Option<u32> {
    choose(requests & 0xF, rng)
}

/// Whether an agent that moved with egg timer `egg_timer` leaves a newborn behind.
#[inline(always)]
pub fn breeds(egg_timer: u32, p: &Params) -> bool {
    egg_timer > p.spawn_threshold
}

/// A shark's energy after one more step (prepare phase).
#[inline(always)]
pub fn hungrier(energy: u32) -> u32 {
    energy.saturating_sub(1)
}

/// Whether a shark with `energy` (after `hungrier`) starves this step.
#[inline(always)]
pub fn starves(energy: u32) -> bool {
    energy == 0
}

/// The random generator and egg timer of an agent born from `seed`.
#[inline(always)]
pub fn newborn(seed: u64, p: &Params) -> (Rng, u32) {
    (Rng::new(seed, 0), (seed % p.spawn_threshold.max(1) as u64) as u32)
}

/// The random generator of cell `index` at the start.
#[inline(always)]
pub fn cell_rng(index: u32, p: &Params) -> Rng {
    Rng::new(p.seed, index as u64)
}

/// What a cell holds at the start, drawn from its generator: the kind and, for an agent, the
/// seed it is born from.
#[inline(always)]
pub fn initial_agent(rng: &mut Rng, p: &Params) -> (u32, u64) {
    let r = rng.below(100);
    let kind = if r < p.fish_percent {
        FISH
    } else if r < p.fish_percent + p.shark_percent {
        SHARK
    } else {
        return (EMPTY, 0);
    };
    (kind, rng.next_u64())
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// A cell of the ocean (the paper's `Cell`).
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct OceanCell {
    /// Row-major index, `y * width + x`.
    pub id: u32,
    /// Bit `d` set: the agent on neighbour `d` asked to move here in this phase (set by up to
    /// four threads at once, hence atomic).
    #[atomic]
    pub requests: u32,
    /// Picks among requests.
    pub rng: Rng,
    /// The agent on this cell, or null.
    pub agent: Handle<OceanAgent>,
    /// Left, up, right, down.
    pub neighbors: [Handle<OceanCell>; 4],
}

/// A fish or a shark (the paper's abstract `Agent`).
#[soa_class(abstract)]
#[derive(Debug, PartialEq)]
pub struct OceanAgent {
    pub rng: Rng,
    /// The cell the agent is on.
    pub position: Handle<OceanCell>,
    /// Where the agent goes in this phase (its position if it stays).
    pub new_position: Handle<OceanCell>,
}

#[soa_class(extends = OceanAgent)]
#[derive(Debug, PartialEq)]
pub struct Fish {
    pub egg_timer: u32,
}

#[soa_class(extends = OceanAgent)]
#[derive(Debug, PartialEq)]
pub struct Shark {
    pub energy: u32,
    pub egg_timer: u32,
}

dynasoar::allocator!(
    /// The heap of Wa-Tor.
    /// Every class 64 objects a block (docs/performance-log.md, "Uniform blocks").
    #[blocks(uniform)]
    pub OceanHeap: OceanCell, OceanAgent, Fish, Shark
);

/// Argument of the setup methods: a table of all cells' handles by index.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct CellTable {
    pub cells: DevPtr<Handle<OceanCell>>,
    pub params: Params,
}

/// Argument of the agents' `prepare`: the cells by index and the ocean's size, to find a
/// cell's neighbours by their indices.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct CellGrid {
    pub cells: ByIndex<OceanCell>,
    pub width: u32,
    pub height: u32,
}

impl CellGrid {
    /// The neighbours of `cell` (left, up, right, down): computed from its index where the
    /// cells lie in the order of their indices (one dependent load fewer on an agent's way to
    /// its neighbours' agents), else read from the cell.
    #[inline(always)]
    fn neighbors(&self, cell: Obj<OceanCell>) -> [Handle<OceanCell>; 4] {
        match self.cells.index_of(cell.handle()) {
            Some(i) => neighbor_indices(i, self.width, self.height).map(|j| self.cells.get(j)),
            None => cell.neighbors(),
        }
    }
}

/// An agent's kind from its handle (the type id is in the handle: no memory access).
#[inline(always)]
fn kind_of(agent: Handle<OceanAgent>) -> u32 {
    match agent.get() {
        None => EMPTY,
        Some(a) if a.is::<Fish>() => FISH,
        Some(_) => SHARK,
    }
}

/// Ask the neighbour in direction `dir` to take this agent.
#[inline(always)]
fn request(neighbors: &[Handle<OceanCell>; 4], dir: u32) {
    if let Some(target) = pick(neighbors, dir).get() {
        target.requests_atomic().fetch_or(1 << opposite(dir));
    }
}

#[soa_methods]
impl OceanCell {
    /// Cell `index` (its neighbours and agent are set by `populate`, after `register`).
    #[parallel_new]
    pub fn create(_dev: &Device<OceanHeap>, index: u64, p: Params) -> Self {
        OceanCell {
            id: index as u32,
            requests: 0,
            rng: cell_rng(index as u32, &p),
            agent: Handle::NULL,
            neighbors: [Handle::NULL; 4],
        }
    }

    /// Setup: enter this cell in the table.
    #[parallel]
    pub fn register(this: Obj<Self>, _dev: &Device<OceanHeap>, t: CellTable) {
        // SAFETY: the table has one entry per cell and each cell writes its own.
        unsafe { t.cells.write(this.id() as usize, this.handle()) };
    }

    /// Setup: link the neighbours (from the table) and place the initial agent.
    #[parallel]
    pub fn populate(this: Obj<Self>, dev: &Device<OceanHeap>, t: CellTable) {
        let p = t.params;
        let indices = neighbor_indices(this.id(), p.width, p.height);
        // SAFETY: neighbour indices are below `width * height`, the table's length; every
        // entry was written by `register` in an earlier launch.
        let neighbors = indices.map(|i| unsafe { t.cells.read(i as usize) });
        this.set_neighbors(neighbors);
        let mut rng = this.rng();
        let (kind, seed) = initial_agent(&mut rng, &p);
        this.set_rng(rng);
        let agent = match kind {
            FISH => {
                dev.make_new(Fish::newborn(seed, this.handle(), &p)).map(|f| f.up::<OceanAgent, _>().handle())
            }
            SHARK => dev
                .make_new(Shark::newborn(seed, this.handle(), &p))
                .map(|s| s.up::<OceanAgent, _>().handle()),
            _ => None,
        };
        this.set_agent(agent.unwrap_or_default());
    }

    /// Phase step 2: accept one requester, if any, and clear the requests for the next phase.
    #[parallel]
    pub fn decide(this: Obj<Self>, _dev: &Device<OceanHeap>) {
        let requests = this.requests();
        if requests == 0 {
            return;
        }
        // Every request of this phase was made in the agents' `prepare` launch, before this one.
        this.set_requests(0);
        let mut rng = this.rng();
        if let Some(dir) = accept(requests, &mut rng)
            && let Some(agent) = this.neighbors_at((dir & 3) as usize).get().and_then(|n| n.agent().get())
        {
            agent.set_new_position(this.handle());
        }
        this.set_rng(rng);
    }

    /// Copy this cell's state into `out[id]` (for the host).
    #[parallel]
    pub fn export(this: Ref<Self>, _dev: &Device<OceanHeap>, out: DevPtr<CellState>) {
        let mut s = CellState::default();
        if let Some(agent) = this.agent().get() {
            s.rng = agent.rng();
            if let Some(fish) = agent.cast::<Fish>() {
                s.kind = FISH;
                s.egg_timer = fish.egg_timer();
            } else if let Some(shark) = agent.cast::<Shark>() {
                s.kind = SHARK;
                s.egg_timer = shark.egg_timer();
                s.energy = shark.energy();
            }
        }
        // SAFETY: `out` has one entry per cell; each cell writes its own.
        unsafe { out.write(this.id() as usize, s) };
    }

    /// Copy this cell's links into `out[id]` (for invariant checks).
    #[parallel]
    pub fn export_links(this: Ref<Self>, _dev: &Device<OceanHeap>, out: DevPtr<CellLinks>) {
        let agent = this.agent();
        let links = CellLinks {
            cell: this.handle(),
            agent,
            agent_position: agent.get().map(|a| a.position()).unwrap_or_default(),
            neighbors: this.neighbors(),
            id: this.id(),
            kind: kind_of(agent),
        };
        // SAFETY: as in `export`.
        unsafe { out.write(this.id() as usize, links) };
    }
}

/// A cell's references, as exported for invariant checks.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct CellLinks {
    pub cell: Handle<OceanCell>,
    pub agent: Handle<OceanAgent>,
    /// The position field of the cell's agent (null when empty).
    pub agent_position: Handle<OceanCell>,
    pub neighbors: [Handle<OceanCell>; 4],
    pub id: u32,
    /// `kind_of(agent)`.
    pub kind: u32,
}

#[soa_methods]
impl Fish {
    /// A fish born from `seed` on `cell`.
    #[inline(always)]
    pub fn newborn(seed: u64, cell: Handle<OceanCell>, p: &Params) -> Self {
        let (rng, egg_timer) = newborn(seed, p);
        Fish { base: OceanAgent { rng, position: cell, new_position: cell }, egg_timer }
    }

    /// Fish phase step 1: age, and ask a free neighbour to take this fish.
    #[parallel]
    pub fn prepare(this: Obj<Self>, _dev: &Device<OceanHeap>, g: CellGrid) {
        this.set_egg_timer(this.egg_timer() + 1);
        let position = this.position();
        this.set_new_position(position);
        let Some(cell) = position.get() else { return };
        let neighbors = g.neighbors(cell);
        let mut free = 0;
        for (dir, n) in neighbors.iter().enumerate() {
            if n.get().is_some_and(|n| n.agent().is_null()) {
                free |= 1 << dir;
            }
        }
        if free != 0 {
            let mut rng = this.rng();
            if let Some(dir) = fish_target(free, &mut rng) {
                request(&neighbors, dir);
            }
            this.set_rng(rng);
        }
    }

    /// Fish phase step 3: move if accepted, and maybe leave a newborn behind.
    #[parallel(creates(Fish))]
    pub fn update(this: Obj<Self>, dev: &Device<OceanHeap>, p: Params) {
        let (old, new) = (this.position(), this.new_position());
        if old == new {
            return;
        }
        let (Some(old_cell), Some(new_cell)) = (old.get(), new.get()) else { return };
        let me: Obj<OceanAgent> = this.up();
        new_cell.set_agent(me.handle());
        this.set_position(new);
        let mut left_behind = Handle::NULL;
        if breeds(this.egg_timer(), &p) {
            let mut rng = this.rng();
            let seed = rng.next_u64();
            this.set_rng(rng);
            this.set_egg_timer(0);
            if let Some(child) = dev.make_new(Fish::newborn(seed, old, &p)) {
                left_behind = child.up().handle();
            }
        }
        old_cell.set_agent(left_behind);
    }
}

#[soa_methods]
impl Shark {
    /// A shark born from `seed` on `cell`.
    #[inline(always)]
    pub fn newborn(seed: u64, cell: Handle<OceanCell>, p: &Params) -> Self {
        let (rng, egg_timer) = newborn(seed, p);
        Shark {
            base: OceanAgent { rng, position: cell, new_position: cell },
            energy: p.energy_start,
            egg_timer,
        }
    }

    /// Shark phase step 1: age and hunger; unless starving, ask a neighbour with a fish (else
    /// a free one) to take this shark.
    #[parallel]
    pub fn prepare(this: Obj<Self>, _dev: &Device<OceanHeap>, g: CellGrid) {
        this.set_egg_timer(this.egg_timer() + 1);
        let energy = hungrier(this.energy());
        this.set_energy(energy);
        if starves(energy) {
            return;
        }
        let position = this.position();
        this.set_new_position(position);
        let Some(cell) = position.get() else { return };
        let neighbors = g.neighbors(cell);
        let (mut fish, mut free) = (0, 0);
        for (dir, n) in neighbors.iter().enumerate() {
            match n.get().map(|n| kind_of(n.agent())) {
                Some(EMPTY) => free |= 1 << dir,
                Some(FISH) => fish |= 1 << dir,
                _ => {}
            }
        }
        if fish | free != 0 {
            let mut rng = this.rng();
            if let Some(dir) = shark_target(fish, free, &mut rng) {
                request(&neighbors, dir);
            }
            this.set_rng(rng);
        }
    }

    /// Shark phase step 3: starve, or move if accepted (eating the fish there) and maybe leave
    /// a newborn behind.
    #[parallel(creates(Shark), frees(Shark, Fish))]
    pub fn update(this: Obj<Self>, dev: &Device<OceanHeap>, p: Params) {
        let old = this.position();
        let Some(old_cell) = old.get() else { return };
        let energy = this.energy();
        if starves(energy) {
            old_cell.set_agent(Handle::NULL);
            dev.free(this);
            return;
        }
        let new = this.new_position();
        if old == new {
            return;
        }
        let Some(new_cell) = new.get() else { return };
        if let Some(prey) = new_cell.agent().get().and_then(|a| a.cast::<Fish>()) {
            this.set_energy(energy + p.energy_boost);
            dev.free(prey);
        }
        let me: Obj<OceanAgent> = this.up();
        new_cell.set_agent(me.handle());
        this.set_position(new);
        let mut left_behind = Handle::NULL;
        if breeds(this.egg_timer(), &p) {
            let mut rng = this.rng();
            let seed = rng.next_u64();
            this.set_rng(rng);
            this.set_egg_timer(0);
            if let Some(child) = dev.make_new(Shark::newborn(seed, old, &p)) {
                left_behind = child.up().handle();
            }
        }
        old_cell.set_agent(left_behind);
    }
}

// ----------------------------------------------------------------------------------------
// Hand-written baselines: the agents' fields stored inside the cell grid (paper 7.2), no
// dynamic allocation. An agent moves by copying its fields to the new cell. `active` is the
// kind of agent each cell held when the phase began (set by the cells' prepare kernel): the
// agents that act in the phase, so an agent that moved in is not visited again (the DSL's
// iteration bitmaps do the same). Request bits are bytes (one writer each), as in the
// original's `bool[5]`.

/// Structure-of-arrays ocean: one array per field, one element per cell.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct SoaOcean {
    pub cell_rng: DevPtr<Rng>,
    /// Four bytes per cell: byte `d` is 1 if the agent on neighbour `d` asked to move here.
    pub requests: DevPtr<u32>,
    pub kind: DevPtr<u8>,
    pub active: DevPtr<u8>,
    pub agent_rng: DevPtr<Rng>,
    pub new_position: DevPtr<u32>,
    pub egg_timer: DevPtr<u32>,
    pub energy: DevPtr<u32>,
    pub params: Params,
}

/// Array-of-structures ocean: one struct per cell.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct AosCell {
    pub cell_rng: Rng,
    pub agent_rng: Rng,
    pub new_position: u32,
    pub egg_timer: u32,
    pub energy: u32,
    /// Byte `d` is 1 if the agent on neighbour `d` asked to move here.
    pub requests: [u8; 4],
    pub kind: u8,
    pub active: u8,
    pub _pad: [u8; 6],
}

/// Array-of-structures storage of the baseline.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct AosOcean {
    pub cells: DevPtr<AosCell>,
    pub params: Params,
}

/// Request bytes (one per direction, 0 or 1) as a 4-bit mask.
#[inline(always)]
fn request_mask(bytes: u32) -> u32 {
    (bytes | bytes >> 7 | bytes >> 14 | bytes >> 21) & 0xF
}

fn each_cell(p: &Params, mut f: impl FnMut(u32)) {
    let n = p.cells() as usize;
    let stride = arch::global_thread_count();
    let mut i = arch::global_thread_id();
    while i < n {
        f(i as u32);
        i += stride;
    }
}

// Every SOA kernel below touches, for cell `c`, its own elements, and those of the cells its
// agent asks for or moves to. No two threads write one element in a launch (see the module
// docs), request bytes excepted: they are distinct bytes, each written by one thread.

/// SOA baseline: initial state.
#[kernel]
pub fn wator_soa_setup(o: SoaOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let c = c as usize;
        let mut rng = cell_rng(c as u32, &p);
        let (kind, seed) = initial_agent(&mut rng, &p);
        let (agent_rng, egg_timer) = newborn(seed, &p);
        // SAFETY: `c` is in bounds of every array; only this thread touches element `c`.
        unsafe {
            o.cell_rng.write(c, rng);
            o.requests.write(c, 0);
            o.kind.write(c, kind as u8);
            o.active.write(c, EMPTY as u8);
            o.agent_rng.write(c, if kind == EMPTY { Rng::default() } else { agent_rng });
            o.new_position.write(c, c as u32);
            o.egg_timer.write(c, if kind == EMPTY { 0 } else { egg_timer });
            o.energy.write(c, if kind == SHARK { p.energy_start } else { 0 });
        }
    });
}

/// SOA baseline, phase step 1: clear requests, note which agents act.
#[kernel]
pub fn wator_soa_prepare_cells(o: SoaOcean) {
    each_cell(&o.params, |c| {
        let c = c as usize;
        // SAFETY: see above.
        unsafe {
            o.requests.write(c, 0);
            o.active.write(c, o.kind.read(c));
        }
    });
}

/// SOA: ask the neighbour in direction `dir` of cell `c` (neighbours `n`) to take its agent.
///
/// # Safety
/// `n` are in-bounds cell indices; only the agent opposite writes that byte.
#[inline(always)]
unsafe fn soa_request(o: &SoaOcean, n: &[u32; 4], dir: u32) {
    let byte = pick(n, dir) as usize * 4 + opposite(dir) as usize;
    // SAFETY: in bounds; this byte has no other writer in the launch.
    unsafe { o.requests.cast::<u8>().write(byte, 1) };
}

/// SOA baseline, fish phase step 2.
#[kernel]
pub fn wator_soa_prepare_fish(o: SoaOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above.
        unsafe {
            if o.active.read(ci) != FISH as u8 {
                return;
            }
            o.egg_timer.write(ci, o.egg_timer.read(ci) + 1);
            o.new_position.write(ci, c);
            let n = neighbor_indices(c, p.width, p.height);
            let mut free = 0;
            for (dir, &ni) in n.iter().enumerate() {
                if o.kind.read(ni as usize) == EMPTY as u8 {
                    free |= 1 << dir;
                }
            }
            if free != 0 {
                let mut rng = o.agent_rng.read(ci);
                if let Some(dir) = fish_target(free, &mut rng) {
                    soa_request(&o, &n, dir);
                }
                o.agent_rng.write(ci, rng);
            }
        }
    });
}

/// SOA baseline, shark phase step 2.
#[kernel]
pub fn wator_soa_prepare_sharks(o: SoaOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above.
        unsafe {
            if o.active.read(ci) != SHARK as u8 {
                return;
            }
            o.egg_timer.write(ci, o.egg_timer.read(ci) + 1);
            let energy = hungrier(o.energy.read(ci));
            o.energy.write(ci, energy);
            if starves(energy) {
                return;
            }
            o.new_position.write(ci, c);
            let n = neighbor_indices(c, p.width, p.height);
            let (mut fish, mut free) = (0, 0);
            for (dir, &ni) in n.iter().enumerate() {
                match o.kind.read(ni as usize) as u32 {
                    EMPTY => free |= 1 << dir,
                    FISH => fish |= 1 << dir,
                    _ => {}
                }
            }
            if fish | free != 0 {
                let mut rng = o.agent_rng.read(ci);
                if let Some(dir) = shark_target(fish, free, &mut rng) {
                    soa_request(&o, &n, dir);
                }
                o.agent_rng.write(ci, rng);
            }
        }
    });
}

/// SOA baseline, phase step 3.
#[kernel]
pub fn wator_soa_decide(o: SoaOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above.
        unsafe {
            let requests = request_mask(o.requests.read(ci));
            if requests == 0 {
                return;
            }
            let mut rng = o.cell_rng.read(ci);
            if let Some(dir) = accept(requests, &mut rng) {
                let from = pick(&neighbor_indices(c, p.width, p.height), dir);
                o.new_position.write(from as usize, c);
            }
            o.cell_rng.write(ci, rng);
        }
    });
}

/// SOA: move the agent of cell `from` (of `kind`) to cell `to`; a newborn stays behind if it
/// breeds.
///
/// # Safety
/// Both cells are in bounds and owned by this thread in the launch.
#[inline(always)]
unsafe fn soa_move(o: &SoaOcean, from: usize, to: usize, kind: u32, energy: u32) {
    let p = &o.params;
    // SAFETY: guaranteed by the caller.
    unsafe {
        let mut rng = o.agent_rng.read(from);
        let mut egg_timer = o.egg_timer.read(from);
        let mut left_behind = EMPTY;
        if breeds(egg_timer, p) {
            let seed = rng.next_u64();
            egg_timer = 0;
            left_behind = kind;
            let (child_rng, child_egg) = newborn(seed, p);
            o.agent_rng.write(from, child_rng);
            o.egg_timer.write(from, child_egg);
            o.energy.write(from, if kind == SHARK { p.energy_start } else { 0 });
            o.new_position.write(from, from as u32);
        }
        o.kind.write(from, left_behind as u8);
        o.kind.write(to, kind as u8);
        o.agent_rng.write(to, rng);
        o.egg_timer.write(to, egg_timer);
        o.energy.write(to, energy);
        o.new_position.write(to, to as u32);
    }
}

/// SOA baseline, fish phase step 4.
#[kernel]
pub fn wator_soa_update_fish(o: SoaOcean) {
    each_cell(&o.params, |c| {
        let ci = c as usize;
        // SAFETY: see above; the target cell was free and accepted only this fish.
        unsafe {
            if o.active.read(ci) != FISH as u8 {
                return;
            }
            let to = o.new_position.read(ci) as usize;
            if to != ci {
                soa_move(&o, ci, to, FISH, 0);
            }
        }
    });
}

/// SOA baseline, shark phase step 4.
#[kernel]
pub fn wator_soa_update_sharks(o: SoaOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above; the target cell accepted only this shark.
        unsafe {
            if o.active.read(ci) != SHARK as u8 {
                return;
            }
            let mut energy = o.energy.read(ci);
            if starves(energy) {
                o.kind.write(ci, EMPTY as u8);
                return;
            }
            let to = o.new_position.read(ci) as usize;
            if to != ci {
                if o.kind.read(to) == FISH as u8 {
                    energy += p.energy_boost;
                }
                soa_move(&o, ci, to, SHARK, energy);
            }
        }
    });
}

/// AOS: cell `index`.
#[inline(always)]
fn aos_cell(o: &AosOcean, index: usize) -> *mut AosCell {
    o.cells.as_ptr().wrapping_add(index)
}

// The AOS kernels mirror the SOA ones, field access through raw pointers to the cell structs
// (never references: other threads write other fields of the same cells meanwhile).

/// AOS baseline: initial state.
#[kernel]
pub fn wator_aos_setup(o: AosOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let mut rng = cell_rng(c, &p);
        let (kind, seed) = initial_agent(&mut rng, &p);
        let (agent_rng, egg_timer) = newborn(seed, &p);
        let empty = kind == EMPTY;
        let cell = AosCell {
            cell_rng: rng,
            agent_rng: if empty { Rng::default() } else { agent_rng },
            new_position: c,
            egg_timer: if empty { 0 } else { egg_timer },
            energy: if kind == SHARK { p.energy_start } else { 0 },
            requests: [0; 4],
            kind: kind as u8,
            active: EMPTY as u8,
            _pad: [0; 6],
        };
        // SAFETY: `c` is in bounds; only this thread touches cell `c`.
        unsafe { o.cells.write(c as usize, cell) };
    });
}

/// AOS baseline, phase step 1.
#[kernel]
pub fn wator_aos_prepare_cells(o: AosOcean) {
    each_cell(&o.params, |c| {
        let cell = aos_cell(&o, c as usize);
        // SAFETY: in bounds; only this thread touches these fields.
        unsafe {
            (*cell).requests = [0; 4];
            (*cell).active = (*cell).kind;
        }
    });
}

/// AOS: ask the neighbour in direction `dir` (neighbours `n`) to take this cell's agent.
///
/// # Safety
/// As for [`soa_request`].
#[inline(always)]
unsafe fn aos_request(o: &AosOcean, n: &[u32; 4], dir: u32) {
    let target = aos_cell(o, pick(n, dir) as usize);
    // SAFETY: in bounds; this byte has no other writer in the launch.
    unsafe { (*target).requests[opposite(dir) as usize] = 1 };
}

/// AOS baseline, fish phase step 2.
#[kernel]
pub fn wator_aos_prepare_fish(o: AosOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let cell = aos_cell(&o, c as usize);
        // SAFETY: see the SOA kernels.
        unsafe {
            if (*cell).active != FISH as u8 {
                return;
            }
            (*cell).egg_timer += 1;
            (*cell).new_position = c;
            let n = neighbor_indices(c, p.width, p.height);
            let mut free = 0;
            for (dir, &ni) in n.iter().enumerate() {
                if (*aos_cell(&o, ni as usize)).kind == EMPTY as u8 {
                    free |= 1 << dir;
                }
            }
            if free != 0 {
                let mut rng = (*cell).agent_rng;
                if let Some(dir) = fish_target(free, &mut rng) {
                    aos_request(&o, &n, dir);
                }
                (*cell).agent_rng = rng;
            }
        }
    });
}

/// AOS baseline, shark phase step 2.
#[kernel]
pub fn wator_aos_prepare_sharks(o: AosOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let cell = aos_cell(&o, c as usize);
        // SAFETY: see the SOA kernels.
        unsafe {
            if (*cell).active != SHARK as u8 {
                return;
            }
            (*cell).egg_timer += 1;
            let energy = hungrier((*cell).energy);
            (*cell).energy = energy;
            if starves(energy) {
                return;
            }
            (*cell).new_position = c;
            let n = neighbor_indices(c, p.width, p.height);
            let (mut fish, mut free) = (0, 0);
            for (dir, &ni) in n.iter().enumerate() {
                match (*aos_cell(&o, ni as usize)).kind as u32 {
                    EMPTY => free |= 1 << dir,
                    FISH => fish |= 1 << dir,
                    _ => {}
                }
            }
            if fish | free != 0 {
                let mut rng = (*cell).agent_rng;
                if let Some(dir) = shark_target(fish, free, &mut rng) {
                    aos_request(&o, &n, dir);
                }
                (*cell).agent_rng = rng;
            }
        }
    });
}

/// AOS baseline, phase step 3.
#[kernel]
pub fn wator_aos_decide(o: AosOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let cell = aos_cell(&o, c as usize);
        // SAFETY: see the SOA kernels.
        unsafe {
            let requests = request_mask(u32::from_le_bytes((*cell).requests));
            if requests == 0 {
                return;
            }
            let mut rng = (*cell).cell_rng;
            if let Some(dir) = accept(requests, &mut rng) {
                let from = pick(&neighbor_indices(c, p.width, p.height), dir);
                (*aos_cell(&o, from as usize)).new_position = c;
            }
            (*cell).cell_rng = rng;
        }
    });
}

/// AOS: as [`soa_move`].
///
/// # Safety
/// As for [`soa_move`].
#[inline(always)]
unsafe fn aos_move(o: &AosOcean, from: usize, to: usize, kind: u32, energy: u32) {
    let p = &o.params;
    let (src, dst) = (aos_cell(o, from), aos_cell(o, to));
    // SAFETY: guaranteed by the caller.
    unsafe {
        let mut rng = (*src).agent_rng;
        let mut egg_timer = (*src).egg_timer;
        let mut left_behind = EMPTY;
        if breeds(egg_timer, p) {
            let seed = rng.next_u64();
            egg_timer = 0;
            left_behind = kind;
            let (child_rng, child_egg) = newborn(seed, p);
            (*src).agent_rng = child_rng;
            (*src).egg_timer = child_egg;
            (*src).energy = if kind == SHARK { p.energy_start } else { 0 };
            (*src).new_position = from as u32;
        }
        (*src).kind = left_behind as u8;
        (*dst).kind = kind as u8;
        (*dst).agent_rng = rng;
        (*dst).egg_timer = egg_timer;
        (*dst).energy = energy;
        (*dst).new_position = to as u32;
    }
}

/// AOS baseline, fish phase step 4.
#[kernel]
pub fn wator_aos_update_fish(o: AosOcean) {
    each_cell(&o.params, |c| {
        let cell = aos_cell(&o, c as usize);
        // SAFETY: see the SOA kernels.
        unsafe {
            if (*cell).active != FISH as u8 {
                return;
            }
            let to = (*cell).new_position;
            if to != c {
                aos_move(&o, c as usize, to as usize, FISH, 0);
            }
        }
    });
}

/// AOS baseline, shark phase step 4.
#[kernel]
pub fn wator_aos_update_sharks(o: AosOcean) {
    let p = o.params;
    each_cell(&p, |c| {
        let cell = aos_cell(&o, c as usize);
        // SAFETY: see the SOA kernels.
        unsafe {
            if (*cell).active != SHARK as u8 {
                return;
            }
            let mut energy = (*cell).energy;
            if starves(energy) {
                (*cell).kind = EMPTY as u8;
                return;
            }
            let to = (*cell).new_position;
            if to != c {
                if (*aos_cell(&o, to as usize)).kind == FISH as u8 {
                    energy += p.energy_boost;
                }
                aos_move(&o, c as usize, to as usize, SHARK, energy);
            }
        }
    });
}
