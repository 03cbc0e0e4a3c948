//! Sugarscape: agents harvest sugar on a grid, move, mate and die (Epstein and Axtell 1996; the
//! paper's `sugarscape`, Table 1).
//!
//! Every cell of a `width x height` grid (it does not wrap) holds some sugar and at most one
//! agent, a male or a female. Sugar grows on a few cells and diffuses to the cells around them;
//! agents eat sugar, move to the free cell with the most sugar in sight, mate, and die of age or
//! starvation. A step has twelve do-alls, as in the original DynaSOAr benchmark:
//!
//! 1. cells `grow_sugar`: up to their grow rate, at most to the capacity;
//! 2. cells `prepare_diffuse`: set aside a share of their sugar (at most a maximum);
//! 3. cells `update_diffuse`: receive a share of that of every cell within the maximum vision
//!    (a 5x5 square; as in the original, each neighbour gives `rate` of its share, so diffusion
//!    does not conserve sugar: it loses small amounts and multiplies large ones);
//! 4. agents `age_and_metabolize`: age, burn sugar, and die (free themselves) if too old or out
//!    of sugar;
//! 5. agents `prepare_move`: pick a random free cell among those in sight with the most sugar and
//!    ask it to take them;
//! 6. cells `decide_permission`: a cell with requests accepts one requester at random;
//! 7. agents `update_move`: an accepted agent moves; every agent harvests the sugar of its cell;
//! 8. males `propose`: a male ready to mate proposes to the richest ready female in sight;
//! 9. females `decide_proposal`: a female that may have more children accepts the richest suitor;
//! 10. accepted males `propose_offspring_target`: ask a random free cell in sight to take a child;
//! 11. cells `decide_permission` again;
//! 12. males `mate`: an accepted male with a cell for the child creates it there (a male or a
//!     female at random); both parents give half their endowment.
//!
//! # Determinism
//!
//! No two threads write one field in a launch except through atomics whose result does not depend
//! on their order: requests are bits of a cell's `requests` mask (an atomic OR; bit `b` is the
//! requester's position in the cell's 5x5 window, see [`rank`]), and proposals are keys of a
//! female's `proposal` (an atomic max of the suitor's sugar and position). Cells pick among
//! requesters with their own random generator, agents with theirs, and a child's generator is
//! seeded from its cell's. The DSL version, the two hand-written baselines and both backends
//! therefore compute the same simulation. The original scans each cell's 5x5 window for agents
//! that asked for it, and each female's for suitors; the masks and keys replace those scans and
//! choose with the same distribution (uniformly among requesters; the richest suitor, ties to the
//! first in scan order).
//!
//! The rules are plain functions shared by the three implementations. The DSL version has the
//! paper's classes: `Cell`, the abstract `Agent`, and `Male`, `Female` extending it; a table of
//! all cells' handles by index gives the cells around a cell (the original's `cells` array). The
//! baselines store the agents' fields inside the cell grid (paper 7.2), as a structure of arrays
//! and as an array of structures.

use dynasoar::arch::{self, atomic::Atomic32};
use dynasoar::prelude::*;

/// Simulation constants (the original DynaSOAr benchmark's `configuration.h`).
pub mod config {
    pub const SEED: u64 = 42;
    /// Cells per row and rows.
    pub const SIZE: u32 = 1700;
    pub const STEPS: u32 = 10_000;
    /// Initial share of cells with a male.
    pub const PROB_MALE: f32 = 0.12;
    /// Initial share of cells with a female.
    pub const PROB_FEMALE: f32 = 0.15;
    /// How far agents see (initial agents: `MAX_VISION / 2` plus a random part below that);
    /// also the radius of sugar diffusion. At most [`super::MAX_RADIUS`].
    pub const MAX_VISION: u32 = 2;
    /// Initial agents live `2/3` of this plus up to a third more.
    pub const MAX_AGE: u32 = 100;
    /// Initial agents get `1/4` of this plus up to `3/4` more as endowment (their first sugar).
    pub const MAX_ENDOWMENT: u32 = 200;
    /// Initial agents burn `1/3` of this plus up to `2/3` more sugar per step.
    pub const MAX_METABOLISM: u32 = 80;
    /// Sugar a cell can grow to.
    pub const SUGAR_CAPACITY: u32 = 3500;
    /// Grow rate of the richest cells (2%; 2% grow half as fast, 4% a quarter, the rest not).
    pub const MAX_GROW_RATE: u32 = 50;
    /// Most sugar a cell gives away to diffusion per step.
    pub const MAX_SUGAR_DIFFUSION: u32 = 60;
    /// Share of its sugar a cell diffuses, and share of that each neighbour receives.
    pub const SUGAR_DIFFUSION_RATE: f32 = 0.125;
    /// Agents mate from this age on.
    pub const MIN_MATING_AGE: u32 = 22;
    /// A female has at most `2 + random below (MAX_CHILDREN - 2)` children.
    pub const MAX_CHILDREN: u32 = 8;
}

/// What a cell holds: nothing,
pub const EMPTY: u32 = 0;
/// a male,
pub const MALE: u32 = 1;
/// or a female (the values are the original's checksum weights).
pub const FEMALE: u32 = 2;

/// Largest vision (and diffusion radius) the 5x5 window supports.
pub const MAX_RADIUS: u32 = 2;
/// Positions in the window around a cell.
pub const WINDOW: u32 = 25;
/// "No position" (no request, nobody accepted).
pub const NO_RANK: u8 = 0xFF;

/// The world and its rules, passed to every kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Plain)]
pub struct Params {
    pub width: u32,
    pub height: u32,
    pub seed: u64,
    pub prob_male: f32,
    pub prob_female: f32,
    pub max_vision: u32,
    pub max_age: u32,
    pub max_endowment: u32,
    pub max_metabolism: u32,
    pub sugar_capacity: i32,
    pub max_grow_rate: i32,
    pub max_sugar_diffusion: i32,
    pub diffusion_rate: f32,
    pub min_mating_age: i32,
    pub max_children: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            width: config::SIZE,
            height: config::SIZE,
            seed: config::SEED,
            prob_male: config::PROB_MALE,
            prob_female: config::PROB_FEMALE,
            max_vision: config::MAX_VISION,
            max_age: config::MAX_AGE,
            max_endowment: config::MAX_ENDOWMENT,
            max_metabolism: config::MAX_METABOLISM,
            sugar_capacity: config::SUGAR_CAPACITY as i32,
            max_grow_rate: config::MAX_GROW_RATE as i32,
            max_sugar_diffusion: config::MAX_SUGAR_DIFFUSION as i32,
            diffusion_rate: config::SUGAR_DIFFUSION_RATE,
            min_mating_age: config::MIN_MATING_AGE as i32,
            max_children: config::MAX_CHILDREN,
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

/// One cell as the host sees it after a run (all implementations export this; agent fields are
/// zero on empty cells).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct CellState {
    /// Sugar on the cell.
    pub sugar: i32,
    pub grow_rate: i32,
    /// `EMPTY`, `MALE` or `FEMALE`.
    pub kind: u32,
    pub vision: i32,
    pub age: i32,
    pub max_age: i32,
    /// Sugar of the agent.
    pub agent_sugar: i32,
    pub metabolism: i32,
    pub endowment: i32,
    /// Females only (0 for males).
    pub max_children: i32,
    /// Females only (0 for males).
    pub num_children: i32,
    pub _pad: u32,
    pub cell_rng: Rng,
    pub agent_rng: Rng,
}

// ----------------------------------------------------------------------------------------
// The rules, shared by the DSL version and the baselines.

/// Position of offset `(dx, dy)` (each in `-2..=2`) in the 5x5 window around a cell:
/// `(dy + 2) * 5 + (dx + 2)`, 0 to 24, row by row; 12 is the cell itself.
#[inline(always)]
pub const fn rank(dx: i32, dy: i32) -> u32 {
    ((dy + 2) * 5 + (dx + 2)) as u32
}

/// The position of a cell in the window of the cell at position `rank` of its own window (the
/// offset reversed).
#[inline(always)]
pub const fn mirror(rank: u32) -> u32 {
    WINDOW - 1 - rank
}

/// Index of the cell at position `rank` of the window around cell `cell` (it must lie in the
/// grid).
#[inline(always)]
pub fn cell_at(cell: u32, rank: u32, width: u32) -> u32 {
    let (dy, dx) = (rank / 5, rank % 5);
    cell.wrapping_add(dy * width + dx).wrapping_sub(2 * width + 2)
}

/// Call `f(rank, index)` for every cell of the grid within Chebyshev distance `radius` (at most
/// [`MAX_RADIUS`]) of cell `cell`, except the cell itself, in rank order.
#[inline(always)]
pub fn for_each_in_window(width: u32, height: u32, cell: u32, radius: u32, mut f: impl FnMut(u32, u32)) {
    // (`max(1)`: the host rejects empty grids; this spares the GPU code a panic path.)
    let (x, y) = (cell % width.max(1), cell / width.max(1));
    // Fixed loops that the compiler unrolls, so that the loads in `f` are independent and the GPU
    // issues them together. Away from the edges (almost every cell) no position needs a check.
    let corner = cell.wrapping_sub(2 * width + 2);
    if x >= 2 && y >= 2 && x + 2 < width && y + 2 < height {
        // (Spelled out: LLVM does not unroll 24 iterations of a large body by itself.)
        macro_rules! at {
            ($($rank:literal)*) => { $( f($rank, corner.wrapping_add($rank / 5 * width + $rank % 5)); )* };
        }
        if radius >= 2 {
            at!(0 1 2 3 4 5 6 7 8 9 10 11 13 14 15 16 17 18 19 20 21 22 23 24);
        } else if radius == 1 {
            at!(6 7 8 11 13 16 17 18);
        }
        return;
    }
    // Near an edge: `x + dx - 2` wraps to a value `>= width` left of the grid, which the check
    // excludes.
    for dy in 0..5u32 {
        let ny = (y + dy).wrapping_sub(2);
        for dx in 0..5u32 {
            let nx = (x + dx).wrapping_sub(2);
            let near = dx.abs_diff(2) <= radius && dy.abs_diff(2) <= radius;
            if near && (dx != 2 || dy != 2) && nx < width && ny < height {
                f(dy * 5 + dx, ny * width + nx);
            }
        }
    }
}

/// A uniformly random position among the set bits of `mask`, or `None` when no bit is set (then
/// no random number is drawn).
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

/// A uniform integer in `lo..hi` (`lo` if the range is empty), as the original's `random_int`.
#[inline(always)]
pub fn random_int(rng: &mut Rng, lo: i32, hi: i32) -> i32 {
    lo + rng.below((hi - lo).max(0) as u32) as i32
}

/// Sugar of a cell after growing.
#[inline(always)]
pub fn grow(sugar: i32, grow_rate: i32, p: &Params) -> i32 {
    sugar + (p.sugar_capacity - sugar).min(grow_rate)
}

/// The sugar a cell with `sugar` gives to diffusion.
#[inline(always)]
pub fn diffusion(sugar: i32, p: &Params) -> i32 {
    ((p.diffusion_rate * sugar as f32) as i32).min(p.max_sugar_diffusion)
}

/// The sugar a cell receives from a neighbour that gives `diffusion`.
#[inline(always)]
pub fn diffusion_share(diffusion: i32, p: &Params) -> i32 {
    (p.diffusion_rate * diffusion as f32) as i32
}

/// Age and sugar of an agent one step older, and whether it dies (too old, or out of sugar).
#[inline(always)]
pub fn metabolize(age: i32, sugar: i32, metabolism: i32, max_age: i32) -> (i32, i32, bool) {
    let (age, sugar) = (age + 1, sugar - metabolism);
    (age, sugar, age > max_age || sugar <= 0)
}

/// Sugar of an agent that harvests `cell_sugar` (saturating: sugar only piles up that far with
/// extreme options, and the result stays the same on every backend).
#[inline(always)]
pub fn harvest(agent_sugar: i32, cell_sugar: i32) -> i32 {
    agent_sugar.saturating_add(cell_sugar)
}

/// Whether an agent may mate: old enough, and rich enough to give half its endowment and live on.
#[inline(always)]
pub fn ready_to_mate(sugar: i32, endowment: i32, age: i32, p: &Params) -> bool {
    sugar >= endowment * 2 / 3 && age >= p.min_mating_age
}

/// Where an agent moves: the free cells in sight with the most sugar (offered in rank order).
#[derive(Clone, Copy, Debug, Default)]
pub struct MoveTargets {
    /// The most sugar on a free cell seen so far (free cells with no sugar count too).
    pub sugar: i32,
    /// Positions of the free cells with that much sugar.
    pub mask: u32,
}

impl MoveTargets {
    /// Consider the free cell at `rank` with `sugar`.
    #[inline(always)]
    pub fn offer(&mut self, rank: u32, sugar: i32) {
        if sugar > self.sugar {
            self.sugar = sugar;
            self.mask = 1 << rank;
        } else if sugar == self.sugar {
            self.mask |= 1 << rank;
        }
    }
}

/// Largest sugar a proposal key distinguishes (richer suitors compare equal).
pub const KEY_SUGAR_MAX: i32 = (1 << 27) - 1;

/// A suitor's proposal to a female: larger for more sugar, then for a smaller position `rank`
/// in her window (the original's first in scan order). Never zero (zero: no proposal).
#[inline(always)]
pub fn proposal_key(sugar: i32, rank: u32) -> u32 {
    ((sugar.clamp(0, KEY_SUGAR_MAX) as u32) << 5) | (31 - rank)
}

/// The suitor's position in the female's window, from his key.
#[inline(always)]
pub fn proposer_rank(key: u32) -> u32 {
    31 - (key & 31)
}

/// The inherited traits of an agent.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct Traits {
    pub vision: i32,
    pub max_age: i32,
    pub endowment: i32,
    pub metabolism: i32,
}

/// A child's traits: the parents' averages.
#[inline(always)]
pub fn child_traits(father: Traits, mother: Traits) -> Traits {
    Traits {
        vision: (father.vision + mother.vision) / 2,
        max_age: (father.max_age + mother.max_age) / 2,
        endowment: (father.endowment + mother.endowment) / 2,
        metabolism: (father.metabolism + mother.metabolism) / 2,
    }
}

/// The sugar a parent with `endowment` gives to a child.
#[inline(always)]
pub fn mating_cost(endowment: i32) -> i32 {
    endowment / 2
}

/// Whether a child is a male (drawn from the father's generator).
#[inline(always)]
pub fn child_is_male(rng: &mut Rng) -> bool {
    rng.next_f32() < 0.5
}

/// The generator of an agent born on a cell, seeded from the cell's generator.
#[inline(always)]
pub fn newborn_rng(cell_rng: &mut Rng) -> Rng {
    Rng::new(cell_rng.next_u64(), 1)
}

/// The generator of cell `index` after it drew its grow rate, and the grow rate.
#[inline(always)]
pub fn initial_cell(index: u32, p: &Params) -> (Rng, i32) {
    let mut rng = Rng::new(p.seed, index as u64);
    let r = rng.next_f32();
    let grow_rate = if r < 0.02 {
        p.max_grow_rate
    } else if r < 0.04 {
        p.max_grow_rate / 2
    } else if r < 0.08 {
        p.max_grow_rate / 4
    } else {
        0
    };
    (rng, grow_rate)
}

/// An agent of the initial population.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InitialAgent {
    /// `EMPTY` (then the rest is meaningless), `MALE` or `FEMALE`.
    pub kind: u32,
    pub traits: Traits,
    pub max_children: i32,
    pub rng: Rng,
}

/// What a cell holds at the start, drawn from its generator (the draws of the original's
/// `create_agents`: kind and traits for every cell, the agent's seed if there is one).
#[inline(always)]
pub fn initial_agent(cell_rng: &mut Rng, p: &Params) -> InitialAgent {
    let r = cell_rng.next_f32();
    let (vision, age, endowment, metabolism) =
        (p.max_vision as i32, p.max_age as i32, p.max_endowment as i32, p.max_metabolism as i32);
    let traits = Traits {
        vision: vision / 2 + random_int(cell_rng, 0, vision / 2),
        max_age: age * 2 / 3 + random_int(cell_rng, 0, age / 3),
        endowment: endowment / 4 + random_int(cell_rng, 0, endowment * 3 / 4),
        metabolism: metabolism / 3 + random_int(cell_rng, 0, metabolism * 2 / 3),
    };
    let max_children = random_int(cell_rng, 2, p.max_children as i32);
    let kind = if r < p.prob_male {
        MALE
    } else if r < p.prob_male + p.prob_female {
        FEMALE
    } else {
        return InitialAgent::default();
    };
    InitialAgent { kind, traits, max_children, rng: newborn_rng(cell_rng) }
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// A cell of the grid.
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Cell {
    /// Row-major index, `y * width + x`.
    pub id: u32,
    pub sugar: i32,
    /// Sugar given to diffusion in this step.
    pub sugar_diffusion: i32,
    pub grow_rate: i32,
    /// Bit `b` set: the agent at position `b` of this cell's window asked to move here (set by
    /// up to 24 threads at once, hence atomic).
    #[atomic]
    pub requests: u32,
    /// Position of the requester this cell accepted last (valid for the requesters of that
    /// phase only).
    pub accepted: u8,
    pub rng: Rng,
    /// The agent on this cell, or null.
    pub agent: Handle<Agent>,
}

/// A male or a female (the paper's abstract `Agent`).
#[soa_class(abstract)]
#[derive(Debug, PartialEq)]
pub struct Agent {
    pub rng: Rng,
    /// The cell the agent is on.
    pub cell: Handle<Cell>,
    /// The cell the agent asked to take it (or, for a male, his child) in this step.
    pub cell_request: Handle<Cell>,
    /// Index of `cell`.
    pub position: u32,
    /// Position of `cell_request` in the window around `cell` (`NO_RANK`: no request).
    pub request_rank: u8,
    pub vision: i32,
    pub age: i32,
    pub max_age: i32,
    pub sugar: i32,
    pub metabolism: i32,
    pub endowment: i32,
}

#[soa_class(extends = Agent)]
#[derive(Debug, PartialEq)]
pub struct Male {
    /// The female this male proposed to in this step.
    pub female_request: Handle<Female>,
    /// Whether she accepted.
    pub proposal_accepted: bool,
}

#[soa_class(extends = Agent)]
#[derive(Debug, PartialEq)]
pub struct Female {
    pub max_children: i32,
    pub num_children: i32,
    /// The best proposal of this step (see [`proposal_key`]; 0: none). Suitors write it at
    /// once, hence atomic.
    #[atomic]
    pub proposal: u32,
}

dynasoar::allocator!(
    /// The heap of Sugarscape.
    /// Every class 64 objects a block (docs/performance-log.md, "Uniform blocks").
    #[blocks(uniform)]
    pub SugarscapeHeap: Cell, Agent, Male, Female
);

/// The grid as methods see it: a table of every cell's handle by index (the original's `cells`
/// array), and the rules.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct Landscape {
    pub cells: DevPtr<Handle<Cell>>,
    pub params: Params,
}

impl Landscape {
    /// Cell `index` (`index < width * height`).
    ///
    /// The table is written once, by [`Cell::setup`], and only read after that launch, so a
    /// plain load suffices (a `DeviceArray` would make every load atomic, uncached in L1, and
    /// bounds-checked: this is the hottest load of the model), and every entry holds a cell (the
    /// host checks that setup created them all), so there is no null check to branch on.
    #[inline(always)]
    fn cell(&self, index: u32) -> Obj<Cell> {
        // SAFETY: callers pass indices of grid cells, below `width * height`, the table's
        // length (the host allocates it so); no thread writes the table after `Cell::setup`,
        // which entered every cell (the host stops with an error if it could not create them
        // all), and cells are never freed.
        unsafe { Obj::from_raw(self.cells.read(index as usize).raw()) }
    }
}

/// The agent's kind from its handle (the type id is in the handle: no memory access).
#[inline(always)]
fn kind_of(agent: Handle<Agent>) -> u32 {
    match agent.get() {
        None => EMPTY,
        Some(a) if a.is::<Male>() => MALE,
        Some(_) => FEMALE,
    }
}

/// Ask the cell at `rank` of the window around cell `position` (where `agent` is) to take it.
#[inline(always)]
fn request<T: dynasoar::IsA<Agent, D>, D>(agent: Obj<T>, position: u32, rank: Option<u32>, l: &Landscape) {
    let agent: Obj<Agent> = agent.up();
    match rank {
        Some(r) => {
            let cell = l.cell(cell_at(position, r, l.params.width));
            cell.requests_atomic().fetch_or(1 << mirror(r));
            agent.set_cell_request(cell.handle());
            agent.set_request_rank(r as u8);
        }
        None => agent.set_request_rank(NO_RANK),
    }
}

/// The cell that took `agent` in this phase, if it asked one and was accepted.
#[inline(always)]
fn accepted_cell(agent: Obj<Agent>) -> Option<(u32, Obj<Cell>)> {
    let rank = agent.request_rank();
    if rank == NO_RANK {
        return None;
    }
    let cell = agent.cell_request().get()?;
    (cell.accepted() as u32 == mirror(rank as u32)).then_some((rank as u32, cell))
}

#[soa_methods]
impl Cell {
    /// Cell `index` (its agent is placed by `setup`).
    #[parallel_new]
    pub fn create(_dev: &Device<SugarscapeHeap>, index: u64, p: Params) -> Self {
        let (rng, grow_rate) = initial_cell(index as u32, &p);
        Cell {
            id: index as u32,
            sugar: 0,
            sugar_diffusion: 0,
            grow_rate,
            requests: 0,
            accepted: NO_RANK,
            rng,
            agent: Handle::NULL,
        }
    }

    /// Setup: enter this cell in the table and place the initial agent.
    #[parallel]
    pub fn setup(this: Obj<Self>, dev: &Device<SugarscapeHeap>, l: Landscape) {
        let id = this.id();
        // SAFETY: the table has one entry per cell and each cell writes its own.
        unsafe { l.cells.write(id as usize, this.handle()) };
        let mut rng = this.rng();
        let a = initial_agent(&mut rng, &l.params);
        this.set_rng(rng);
        let base = Agent {
            rng: a.rng,
            cell: this.handle(),
            cell_request: Handle::NULL,
            position: id,
            request_rank: NO_RANK,
            vision: a.traits.vision,
            age: 0,
            max_age: a.traits.max_age,
            sugar: a.traits.endowment,
            metabolism: a.traits.metabolism,
            endowment: a.traits.endowment,
        };
        let agent = match a.kind {
            MALE => dev
                .make_new(Male { base, female_request: Handle::NULL, proposal_accepted: false })
                .map(|m| m.up::<Agent, _>().handle()),
            FEMALE => dev
                .make_new(Female { base, max_children: a.max_children, num_children: 0, proposal: 0 })
                .map(|f| f.up::<Agent, _>().handle()),
            _ => None,
        };
        this.set_agent(agent.unwrap_or_default());
    }

    /// Step 1: grow sugar.
    #[parallel]
    pub fn grow_sugar(this: Obj<Self>, _dev: &Device<SugarscapeHeap>, p: Params) {
        let sugar = this.sugar();
        let grown = grow(sugar, this.grow_rate(), &p);
        // (Most cells do not grow: spare them the write.)
        if grown != sugar {
            this.set_sugar(grown);
        }
    }

    /// Step 2: set sugar aside for diffusion.
    #[parallel]
    pub fn prepare_diffuse(this: Obj<Self>, _dev: &Device<SugarscapeHeap>, p: Params) {
        let sugar = this.sugar();
        let d = diffusion(sugar, &p);
        this.set_sugar_diffusion(d);
        this.set_sugar(sugar - d);
    }

    /// Step 3: receive the diffusion of the cells around.
    #[parallel]
    pub fn update_diffuse(this: Obj<Self>, _dev: &Device<SugarscapeHeap>, l: Landscape) {
        let p = &l.params;
        let mut gained = 0;
        for_each_in_window(p.width, p.height, this.id(), p.max_vision, |_, n| {
            gained += diffusion_share(l.cell(n).sugar_diffusion(), p);
        });
        this.set_sugar(this.sugar() + gained);
    }

    /// Steps 6 and 11: accept one requester, if any.
    #[parallel]
    pub fn decide_permission(this: Obj<Self>, _dev: &Device<SugarscapeHeap>) {
        let requests = this.requests();
        if requests == 0 {
            return;
        }
        let mut rng = this.rng();
        let chosen = choose(requests, &mut rng).unwrap_or(NO_RANK as u32);
        this.set_rng(rng);
        this.set_accepted(chosen as u8);
        this.set_requests(0);
    }

    /// Copy this cell's state into `out[id]` (for the host).
    #[parallel]
    pub fn export(this: Ref<Self>, _dev: &Device<SugarscapeHeap>, out: DevPtr<CellState>) {
        let mut s = CellState {
            sugar: this.sugar(),
            grow_rate: this.grow_rate(),
            cell_rng: this.rng(),
            ..CellState::default()
        };
        let handle = this.agent();
        if let Some(agent) = handle.get() {
            s.kind = kind_of(handle);
            s.vision = agent.vision();
            s.age = agent.age();
            s.max_age = agent.max_age();
            s.agent_sugar = agent.sugar();
            s.metabolism = agent.metabolism();
            s.endowment = agent.endowment();
            s.agent_rng = agent.rng();
            if let Some(female) = agent.cast::<Female>() {
                s.max_children = female.max_children();
                s.num_children = female.num_children();
            }
        }
        // SAFETY: `out` has one entry per cell; each cell writes its own.
        unsafe { out.write(this.id() as usize, s) };
    }

    /// Copy this cell's links into `out[id]` (for invariant checks).
    #[parallel]
    pub fn export_links(this: Ref<Self>, _dev: &Device<SugarscapeHeap>, out: DevPtr<CellLinks>) {
        let agent = this.agent();
        let (agent_cell, agent_position) =
            agent.get().map(|a| (a.cell(), a.position())).unwrap_or((Handle::NULL, 0));
        let links = CellLinks {
            cell: this.handle(),
            agent,
            agent_cell,
            id: this.id(),
            agent_position,
            kind: kind_of(agent),
            _pad: 0,
        };
        // SAFETY: as in `export`.
        unsafe { out.write(this.id() as usize, links) };
    }
}

/// A cell's references, as exported for invariant checks.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct CellLinks {
    pub cell: Handle<Cell>,
    pub agent: Handle<Agent>,
    /// The `cell` field of the cell's agent (null when empty).
    pub agent_cell: Handle<Cell>,
    pub id: u32,
    /// The `position` field of the cell's agent (0 when empty).
    pub agent_position: u32,
    /// `kind_of(agent)`.
    pub kind: u32,
    pub _pad: u32,
}

#[soa_methods]
impl Agent {
    /// Step 4: age and burn sugar; die if too old or out of sugar. Its effects are declared (it
    /// frees agents and creates nothing), so the runtime keeps the cells' list.
    #[parallel(frees(Agent))]
    pub fn age_and_metabolize(this: Obj<Self>, dev: &Device<SugarscapeHeap>) {
        let (age, sugar, dead) = metabolize(this.age(), this.sugar(), this.metabolism(), this.max_age());
        if dead {
            if let Some(cell) = this.cell().get() {
                cell.set_agent(Handle::NULL);
            }
            dev.free(this);
        } else {
            this.set_age(age);
            this.set_sugar(sugar);
        }
    }

    /// Step 5: ask a random one of the free cells in sight with the most sugar to take this
    /// agent.
    #[parallel]
    pub fn prepare_move(this: Obj<Self>, _dev: &Device<SugarscapeHeap>, l: Landscape) {
        let p = &l.params;
        let position = this.position();
        let mut targets = MoveTargets::default();
        for_each_in_window(p.width, p.height, position, this.vision() as u32, |rank, n| {
            let cell = l.cell(n);
            // (Both loads unconditionally: they issue together.)
            let (agent, sugar) = (cell.agent(), cell.sugar());
            if agent.is_null() {
                targets.offer(rank, sugar);
            }
        });
        let mut rank = None;
        if targets.mask != 0 {
            let mut rng = this.rng();
            rank = choose(targets.mask, &mut rng);
            this.set_rng(rng);
        }
        request(this, position, rank, &l);
    }

    /// Step 7: move if accepted; harvest all sugar of the cell.
    #[parallel]
    pub fn update_move(this: Obj<Self>, _dev: &Device<SugarscapeHeap>, p: Params) {
        let Some(mut cell) = this.cell().get() else { return };
        if let Some((rank, target)) = accepted_cell(this) {
            cell.set_agent(Handle::NULL);
            target.set_agent(this.handle());
            this.set_cell(target.handle());
            this.set_position(cell_at(this.position(), rank, p.width));
            cell = target;
        }
        let sugar = cell.sugar();
        cell.set_sugar(0);
        this.set_sugar(harvest(this.sugar(), sugar));
    }
}

#[soa_methods]
impl Male {
    /// Step 8: if ready to mate, propose to the richest ready female in sight.
    #[parallel]
    pub fn propose(this: Obj<Self>, _dev: &Device<SugarscapeHeap>, l: Landscape) {
        let p = &l.params;
        let sugar = this.sugar();
        if !ready_to_mate(sugar, this.endowment(), this.age(), p) {
            return;
        }
        let position = this.position();
        let mut best: Option<(u32, Obj<Female>)> = None;
        let mut best_sugar = -1;
        for_each_in_window(p.width, p.height, position, this.vision() as u32, |rank, n| {
            if let Some(female) = l.cell(n).agent().get().and_then(|a| a.cast::<Female>()) {
                let her_sugar = female.sugar();
                if her_sugar > best_sugar && ready_to_mate(her_sugar, female.endowment(), female.age(), p) {
                    best = Some((rank, female));
                    best_sugar = her_sugar;
                }
            }
        });
        if let Some((rank, female)) = best {
            this.set_female_request(female.handle());
            female.proposal_atomic().fetch_max(proposal_key(sugar, mirror(rank)));
        }
    }

    /// Step 10: an accepted male asks a random free cell in sight to take his child.
    #[parallel]
    pub fn propose_offspring_target(this: Obj<Self>, _dev: &Device<SugarscapeHeap>, l: Landscape) {
        if !this.proposal_accepted() {
            return;
        }
        let p = &l.params;
        let position = this.position();
        let mut free = 0u32;
        for_each_in_window(p.width, p.height, position, this.vision() as u32, |rank, n| {
            if l.cell(n).agent().is_null() {
                free |= 1 << rank;
            }
        });
        let mut rank = None;
        if free != 0 {
            let mut rng = this.rng();
            rank = choose(free, &mut rng);
            this.set_rng(rng);
        }
        request(this, position, rank, &l);
    }

    /// Step 12: an accepted male with a cell for the child creates it there. (Effects declared,
    /// as for `age_and_metabolize`: the runtime keeps the cells' list.)
    #[parallel(creates(Male, Female))]
    pub fn mate(this: Obj<Self>, dev: &Device<SugarscapeHeap>, p: Params) {
        if !this.proposal_accepted() {
            return;
        }
        this.set_proposal_accepted(false);
        let me: Obj<Agent> = this.up();
        let Some((rank, target)) = accepted_cell(me) else { return };
        let Some(female) = this.female_request().get() else { return };
        let (endowment, her_endowment) = (this.endowment(), female.endowment());
        let father = Traits {
            vision: this.vision(),
            max_age: this.max_age(),
            endowment,
            metabolism: this.metabolism(),
        };
        let mother = Traits {
            vision: female.vision(),
            max_age: female.max_age(),
            endowment: her_endowment,
            metabolism: female.metabolism(),
        };
        let child = child_traits(father, mother);
        this.set_sugar(this.sugar() - mating_cost(endowment));
        female.set_sugar(female.sugar() - mating_cost(her_endowment));
        female.set_num_children(female.num_children() + 1);
        let mut rng = this.rng();
        let is_male = child_is_male(&mut rng);
        this.set_rng(rng);
        let mut cell_rng = target.rng();
        let child_rng = newborn_rng(&mut cell_rng);
        target.set_rng(cell_rng);
        let base = Agent {
            rng: child_rng,
            cell: target.handle(),
            cell_request: Handle::NULL,
            position: cell_at(this.position(), rank, p.width),
            request_rank: NO_RANK,
            vision: child.vision,
            age: 0,
            max_age: child.max_age,
            sugar: child.endowment,
            metabolism: child.metabolism,
            endowment: child.endowment,
        };
        let agent = if is_male {
            dev.make_new(Male { base, female_request: Handle::NULL, proposal_accepted: false })
                .map(|m| m.up::<Agent, _>().handle())
        } else {
            let max_children = female.max_children();
            dev.make_new(Female { base, max_children, num_children: 0, proposal: 0 })
                .map(|f| f.up::<Agent, _>().handle())
        };
        target.set_agent(agent.unwrap_or_default());
    }
}

#[soa_methods]
impl Female {
    /// Step 9: a female that may have more children accepts the best proposal.
    #[parallel]
    pub fn decide_proposal(this: Obj<Self>, _dev: &Device<SugarscapeHeap>, l: Landscape) {
        let key = this.proposal();
        if key == 0 {
            return;
        }
        this.set_proposal(0);
        if this.num_children() >= this.max_children() {
            return;
        }
        let suitor = cell_at(this.position(), proposer_rank(key), l.params.width);
        if let Some(male) = l.cell(suitor).agent().get().and_then(|a| a.cast::<Male>()) {
            male.set_proposal_accepted(true);
        }
    }
}

// ----------------------------------------------------------------------------------------
// Hand-written baselines: the agents' fields stored inside the cell grid (paper 7.2), no
// dynamic allocation. An agent moves by copying its fields to the new cell. Every kernel runs
// one thread per cell. `active` is the kind of agent each cell held when the last
// `decide_permission` ran: the agents that act in `update_move` and `mate`, so an agent that
// moves in (or is born) during those kernels is not visited by them (the DSL's iteration
// bitmaps do the same) and no thread reads a `kind` that another one writes.

/// Structure-of-arrays grid: one array per field, one element per cell.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct SoaScape {
    pub sugar: DevPtr<i32>,
    pub sugar_diffusion: DevPtr<i32>,
    pub grow_rate: DevPtr<i32>,
    pub cell_rng: DevPtr<Rng>,
    pub requests: DevPtr<u32>,
    pub accepted: DevPtr<u8>,
    pub active: DevPtr<u8>,
    pub kind: DevPtr<u8>,
    pub agent_rng: DevPtr<Rng>,
    pub request_rank: DevPtr<u8>,
    pub vision: DevPtr<i32>,
    pub age: DevPtr<i32>,
    pub max_age: DevPtr<i32>,
    pub agent_sugar: DevPtr<i32>,
    pub metabolism: DevPtr<i32>,
    pub endowment: DevPtr<i32>,
    pub max_children: DevPtr<i32>,
    pub num_children: DevPtr<i32>,
    /// Index of the cell of the female a male proposed to.
    pub female_request: DevPtr<u32>,
    pub proposal_accepted: DevPtr<u8>,
    pub proposal: DevPtr<u32>,
    pub params: Params,
}

/// Array-of-structures element: one cell with the fields of its agent.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct AosCell {
    pub cell_rng: Rng,
    pub agent_rng: Rng,
    pub sugar: i32,
    pub sugar_diffusion: i32,
    pub grow_rate: i32,
    pub requests: u32,
    pub vision: i32,
    pub age: i32,
    pub max_age: i32,
    pub agent_sugar: i32,
    pub metabolism: i32,
    pub endowment: i32,
    pub max_children: i32,
    pub num_children: i32,
    /// Index of the cell of the female a male proposed to.
    pub female_request: u32,
    pub proposal: u32,
    pub accepted: u8,
    pub active: u8,
    pub kind: u8,
    pub request_rank: u8,
    pub proposal_accepted: u8,
    pub _pad: [u8; 3],
}

/// Array-of-structures grid.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct AosScape {
    pub cells: DevPtr<AosCell>,
    pub params: Params,
}

macro_rules! baseline_store {
    ($($field:ident, $set:ident: $t:ty;)*) => {
        /// Field access of a baseline's storage, by cell index: the two layouts share the
        /// kernels' code below.
        ///
        /// Every accessor is `unsafe`: the cell index must be below `width * height`, and no
        /// other thread may write the field of that cell during the launch (each kernel says
        /// why that holds).
        pub trait Store: Copy {
            fn params(&self) -> Params;
            /// Atomic view of cell `c`'s `requests` (written by several threads at once).
            ///
            /// # Safety
            /// `c` is a cell (below `width * height`).
            unsafe fn requests_atomic(&self, c: usize) -> &Atomic32;
            /// Atomic view of cell `c`'s `proposal` (written by several threads at once).
            ///
            /// # Safety
            /// `c` is a cell (below `width * height`).
            unsafe fn proposal_atomic(&self, c: usize) -> &Atomic32;
            $(
                #[doc = concat!("Field `", stringify!($field), "` of cell `c`.")]
                ///
                /// # Safety
                /// `c` is a cell, and no other thread writes this field of it in the launch.
                unsafe fn $field(&self, c: usize) -> $t;
                #[doc = concat!("Set field `", stringify!($field), "` of cell `c`.")]
                ///
                /// # Safety
                /// `c` is a cell, and no other thread accesses this field of it in the launch.
                unsafe fn $set(&self, c: usize, value: $t);
            )*
        }

        impl Store for SoaScape {
            #[inline(always)]
            fn params(&self) -> Params {
                self.params
            }
            #[inline(always)]
            unsafe fn requests_atomic(&self, c: usize) -> &Atomic32 {
                // SAFETY: in bounds (the caller's contract); an aligned u32 accessed only
                // atomically while threads write it.
                unsafe { Atomic32::from_ptr(self.requests.as_ptr().add(c)) }
            }
            #[inline(always)]
            unsafe fn proposal_atomic(&self, c: usize) -> &Atomic32 {
                // SAFETY: as in `requests_atomic`.
                unsafe { Atomic32::from_ptr(self.proposal.as_ptr().add(c)) }
            }
            $(
                #[inline(always)]
                unsafe fn $field(&self, c: usize) -> $t {
                    // SAFETY: the caller's contract.
                    unsafe { self.$field.read(c) }
                }
                #[inline(always)]
                unsafe fn $set(&self, c: usize, value: $t) {
                    // SAFETY: the caller's contract.
                    unsafe { self.$field.write(c, value) }
                }
            )*
        }

        impl Store for AosScape {
            #[inline(always)]
            fn params(&self) -> Params {
                self.params
            }
            #[inline(always)]
            unsafe fn requests_atomic(&self, c: usize) -> &Atomic32 {
                // SAFETY: as for the SOA layout (raw pointers, no references to the cells:
                // other threads write other fields of the same cells meanwhile).
                unsafe { Atomic32::from_ptr(&raw mut (*self.cells.as_ptr().add(c)).requests) }
            }
            #[inline(always)]
            unsafe fn proposal_atomic(&self, c: usize) -> &Atomic32 {
                // SAFETY: as in `requests_atomic`.
                unsafe { Atomic32::from_ptr(&raw mut (*self.cells.as_ptr().add(c)).proposal) }
            }
            $(
                #[inline(always)]
                unsafe fn $field(&self, c: usize) -> $t {
                    // SAFETY: the caller's contract; field access through a raw pointer.
                    unsafe { (*self.cells.as_ptr().add(c)).$field }
                }
                #[inline(always)]
                unsafe fn $set(&self, c: usize, value: $t) {
                    // SAFETY: the caller's contract; field access through a raw pointer.
                    unsafe { (*self.cells.as_ptr().add(c)).$field = value }
                }
            )*
        }
    };
}

baseline_store! {
    sugar, set_sugar: i32;
    sugar_diffusion, set_sugar_diffusion: i32;
    grow_rate, set_grow_rate: i32;
    cell_rng, set_cell_rng: Rng;
    requests, set_requests: u32;
    accepted, set_accepted: u8;
    active, set_active: u8;
    kind, set_kind: u8;
    agent_rng, set_agent_rng: Rng;
    request_rank, set_request_rank: u8;
    vision, set_vision: i32;
    age, set_age: i32;
    max_age, set_max_age: i32;
    agent_sugar, set_agent_sugar: i32;
    metabolism, set_metabolism: i32;
    endowment, set_endowment: i32;
    max_children, set_max_children: i32;
    num_children, set_num_children: i32;
    female_request, set_female_request: u32;
    proposal_accepted, set_proposal_accepted: u8;
    proposal, set_proposal: u32;
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

/// The traits of the agent on cell `c`.
///
/// # Safety
/// `c` is a cell; no thread writes these fields of it during the launch.
#[inline(always)]
unsafe fn traits_at<S: Store>(s: &S, c: usize) -> Traits {
    // SAFETY: the caller's contract.
    unsafe {
        Traits {
            vision: s.vision(c),
            max_age: s.max_age(c),
            endowment: s.endowment(c),
            metabolism: s.metabolism(c),
        }
    }
}

/// Put an agent on the empty cell `c`.
///
/// # Safety
/// `c` is a cell that only this thread accesses during the launch.
#[inline(always)]
unsafe fn place_agent<S: Store>(s: &S, c: usize, kind: u32, traits: Traits, max_children: i32, rng: Rng) {
    // SAFETY: the caller's contract.
    unsafe {
        s.set_kind(c, kind as u8);
        s.set_agent_rng(c, rng);
        s.set_request_rank(c, NO_RANK);
        s.set_vision(c, traits.vision);
        s.set_age(c, 0);
        s.set_max_age(c, traits.max_age);
        s.set_agent_sugar(c, traits.endowment);
        s.set_metabolism(c, traits.metabolism);
        s.set_endowment(c, traits.endowment);
        s.set_max_children(c, max_children);
        s.set_num_children(c, 0);
        s.set_female_request(c, 0);
        s.set_proposal_accepted(c, 0);
        s.set_proposal(c, 0);
    }
}

/// Ask the cell at `rank` of the window around cell `c` to take the agent of `c`.
///
/// # Safety
/// `c` is a cell with an agent owned by this thread; the target is a cell (ranks come from
/// [`for_each_in_window`]).
#[inline(always)]
unsafe fn base_request<S: Store>(s: &S, c: u32, rank: Option<u32>) {
    // SAFETY: the caller's contract; `requests` of the target is accessed atomically.
    unsafe {
        match rank {
            Some(r) => {
                let target = cell_at(c, r, s.params().width) as usize;
                s.requests_atomic(target).fetch_or(1 << mirror(r));
                s.set_request_rank(c as usize, r as u8);
            }
            None => s.set_request_rank(c as usize, NO_RANK),
        }
    }
}

/// The cell that accepted the agent of cell `c` in this phase, and its position in `c`'s window.
///
/// # Safety
/// `c` is a cell; `request_rank` of `c` and `accepted` of all cells are not written in the launch.
#[inline(always)]
unsafe fn base_accepted_cell<S: Store>(s: &S, c: u32) -> Option<(u32, usize)> {
    // SAFETY: the caller's contract.
    unsafe {
        let rank = s.request_rank(c as usize);
        if rank == NO_RANK {
            return None;
        }
        let target = cell_at(c, rank as u32, s.params().width) as usize;
        (s.accepted(target) as u32 == mirror(rank as u32)).then_some((rank as u32, target))
    }
}

// The kernels' bodies, generic over the layout. In each, thread `c` writes only fields of its
// own cell, and of the cells its agent moves to, creates a child on, or whose female it mates
// (each of those belongs to one thread in the launch: see the module docs); it reads fields of
// other cells that no thread writes in the launch. `requests` and `proposal` are written by
// several threads, atomically.

#[inline(always)]
fn base_setup<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let (mut rng, grow_rate) = initial_cell(c, &p);
        let a = initial_agent(&mut rng, &p);
        let c = c as usize;
        // SAFETY: see above.
        unsafe {
            s.set_sugar(c, 0);
            s.set_sugar_diffusion(c, 0);
            s.set_grow_rate(c, grow_rate);
            s.set_cell_rng(c, rng);
            s.set_requests(c, 0);
            s.set_accepted(c, NO_RANK);
            s.set_active(c, EMPTY as u8);
            place_agent(&s, c, a.kind, a.traits, a.max_children, a.rng);
        }
    });
}

#[inline(always)]
fn base_grow<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let c = c as usize;
        // SAFETY: see above.
        unsafe {
            let sugar = s.sugar(c);
            let grown = grow(sugar, s.grow_rate(c), &p);
            if grown != sugar {
                s.set_sugar(c, grown);
            }
        }
    });
}

#[inline(always)]
fn base_prepare_diffuse<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let c = c as usize;
        // SAFETY: see above.
        unsafe {
            let sugar = s.sugar(c);
            let d = diffusion(sugar, &p);
            s.set_sugar_diffusion(c, d);
            s.set_sugar(c, sugar - d);
        }
    });
}

#[inline(always)]
fn base_update_diffuse<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let mut gained = 0;
        for_each_in_window(p.width, p.height, c, p.max_vision, |_, n| {
            // SAFETY: see above (diffusion is not written in this launch).
            gained += diffusion_share(unsafe { s.sugar_diffusion(n as usize) }, &p);
        });
        let c = c as usize;
        // SAFETY: see above.
        unsafe { s.set_sugar(c, s.sugar(c) + gained) };
    });
}

#[inline(always)]
fn base_age<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let c = c as usize;
        // SAFETY: see above.
        unsafe {
            if s.kind(c) == EMPTY as u8 {
                return;
            }
            let (age, sugar, dead) = metabolize(s.age(c), s.agent_sugar(c), s.metabolism(c), s.max_age(c));
            if dead {
                s.set_kind(c, EMPTY as u8);
            } else {
                s.set_age(c, age);
                s.set_agent_sugar(c, sugar);
            }
        }
    });
}

#[inline(always)]
fn base_prepare_move<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above (no thread writes `kind` or `sugar` in this launch).
        unsafe {
            if s.kind(ci) == EMPTY as u8 {
                return;
            }
            let mut targets = MoveTargets::default();
            for_each_in_window(p.width, p.height, c, s.vision(ci) as u32, |rank, n| {
                let n = n as usize;
                // (Both loads unconditionally: they issue together.)
                let (kind, sugar) = (s.kind(n), s.sugar(n));
                if kind == EMPTY as u8 {
                    targets.offer(rank, sugar);
                }
            });
            let mut rank = None;
            if targets.mask != 0 {
                let mut rng = s.agent_rng(ci);
                rank = choose(targets.mask, &mut rng);
                s.set_agent_rng(ci, rng);
            }
            base_request(&s, c, rank);
        }
    });
}

#[inline(always)]
fn base_decide<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let c = c as usize;
        // SAFETY: see above.
        unsafe {
            s.set_active(c, s.kind(c));
            let requests = s.requests(c);
            if requests == 0 {
                return;
            }
            let mut rng = s.cell_rng(c);
            let chosen = choose(requests, &mut rng).unwrap_or(NO_RANK as u32);
            s.set_cell_rng(c, rng);
            s.set_accepted(c, chosen as u8);
            s.set_requests(c, 0);
        }
    });
}

#[inline(always)]
fn base_update_move<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above; the target cell was free when it accepted, and accepted only this
        // agent.
        unsafe {
            let kind = s.active(ci);
            if kind == EMPTY as u8 {
                return;
            }
            let mut at = ci;
            if let Some((_, target)) = base_accepted_cell(&s, c) {
                s.set_kind(target, kind);
                s.set_agent_rng(target, s.agent_rng(ci));
                s.set_vision(target, s.vision(ci));
                s.set_age(target, s.age(ci));
                s.set_max_age(target, s.max_age(ci));
                s.set_agent_sugar(target, s.agent_sugar(ci));
                s.set_metabolism(target, s.metabolism(ci));
                s.set_endowment(target, s.endowment(ci));
                s.set_max_children(target, s.max_children(ci));
                s.set_num_children(target, s.num_children(ci));
                s.set_kind(ci, EMPTY as u8);
                at = target;
            }
            let sugar = s.sugar(at);
            s.set_sugar(at, 0);
            s.set_agent_sugar(at, harvest(s.agent_sugar(at), sugar));
        }
    });
}

#[inline(always)]
fn base_propose<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above (no thread writes the fields read here in this launch).
        unsafe {
            if s.kind(ci) != MALE as u8 {
                return;
            }
            let sugar = s.agent_sugar(ci);
            if !ready_to_mate(sugar, s.endowment(ci), s.age(ci), &p) {
                return;
            }
            let mut best: Option<(u32, u32)> = None;
            let mut best_sugar = -1;
            for_each_in_window(p.width, p.height, c, s.vision(ci) as u32, |rank, n| {
                let ni = n as usize;
                if s.kind(ni) == FEMALE as u8 {
                    let her_sugar = s.agent_sugar(ni);
                    if her_sugar > best_sugar && ready_to_mate(her_sugar, s.endowment(ni), s.age(ni), &p) {
                        best = Some((rank, n));
                        best_sugar = her_sugar;
                    }
                }
            });
            if let Some((rank, female)) = best {
                s.set_female_request(ci, female);
                s.proposal_atomic(female as usize).fetch_max(proposal_key(sugar, mirror(rank)));
            }
        }
    });
}

#[inline(always)]
fn base_decide_proposal<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above; a male has one female, so one thread writes his flag.
        unsafe {
            if s.kind(ci) != FEMALE as u8 {
                return;
            }
            let key = s.proposal(ci);
            if key == 0 {
                return;
            }
            s.set_proposal(ci, 0);
            if s.num_children(ci) >= s.max_children(ci) {
                return;
            }
            let suitor = cell_at(c, proposer_rank(key), p.width) as usize;
            if s.kind(suitor) == MALE as u8 {
                s.set_proposal_accepted(suitor, 1);
            }
        }
    });
}

#[inline(always)]
fn base_offspring_target<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above.
        unsafe {
            if s.kind(ci) != MALE as u8 || s.proposal_accepted(ci) == 0 {
                return;
            }
            let mut free = 0u32;
            for_each_in_window(p.width, p.height, c, s.vision(ci) as u32, |rank, n| {
                if s.kind(n as usize) == EMPTY as u8 {
                    free |= 1 << rank;
                }
            });
            let mut rank = None;
            if free != 0 {
                let mut rng = s.agent_rng(ci);
                rank = choose(free, &mut rng);
                s.set_agent_rng(ci, rng);
            }
            base_request(&s, c, rank);
        }
    });
}

#[inline(always)]
fn base_mate<S: Store>(s: S) {
    let p = s.params();
    each_cell(&p, |c| {
        let ci = c as usize;
        // SAFETY: see above; the female accepted only this male, the target cell was free when
        // it accepted, and accepted only this male.
        unsafe {
            if s.active(ci) != MALE as u8 || s.proposal_accepted(ci) == 0 {
                return;
            }
            s.set_proposal_accepted(ci, 0);
            let Some((_, target)) = base_accepted_cell(&s, c) else { return };
            let female = s.female_request(ci) as usize;
            let (father, mother) = (traits_at(&s, ci), traits_at(&s, female));
            let child = child_traits(father, mother);
            s.set_agent_sugar(ci, s.agent_sugar(ci) - mating_cost(father.endowment));
            s.set_agent_sugar(female, s.agent_sugar(female) - mating_cost(mother.endowment));
            s.set_num_children(female, s.num_children(female) + 1);
            let mut rng = s.agent_rng(ci);
            let kind = if child_is_male(&mut rng) { MALE } else { FEMALE };
            s.set_agent_rng(ci, rng);
            let mut cell_rng = s.cell_rng(target);
            let child_rng = newborn_rng(&mut cell_rng);
            s.set_cell_rng(target, cell_rng);
            place_agent(&s, target, kind, child, s.max_children(female), child_rng);
        }
    });
}

macro_rules! baseline_kernels {
    ($store:ty: $($name:ident => $body:ident,)*) => {
        $(
            #[doc = concat!("Baseline kernel (`", stringify!($body), "` over [`", stringify!($store), "`]).")]
            #[kernel]
            pub fn $name(s: $store) {
                $body(s)
            }
        )*
    };
}

baseline_kernels! { SoaScape:
    sugar_soa_setup => base_setup,
    sugar_soa_grow => base_grow,
    sugar_soa_prepare_diffuse => base_prepare_diffuse,
    sugar_soa_update_diffuse => base_update_diffuse,
    sugar_soa_age => base_age,
    sugar_soa_prepare_move => base_prepare_move,
    sugar_soa_decide => base_decide,
    sugar_soa_update_move => base_update_move,
    sugar_soa_propose => base_propose,
    sugar_soa_decide_proposal => base_decide_proposal,
    sugar_soa_offspring_target => base_offspring_target,
    sugar_soa_mate => base_mate,
}

baseline_kernels! { AosScape:
    sugar_aos_setup => base_setup,
    sugar_aos_grow => base_grow,
    sugar_aos_prepare_diffuse => base_prepare_diffuse,
    sugar_aos_update_diffuse => base_update_diffuse,
    sugar_aos_age => base_age,
    sugar_aos_prepare_move => base_prepare_move,
    sugar_aos_decide => base_decide,
    sugar_aos_update_move => base_update_move,
    sugar_aos_propose => base_propose,
    sugar_aos_decide_proposal => base_decide_proposal,
    sugar_aos_offspring_target => base_offspring_target,
    sugar_aos_mate => base_mate,
}
