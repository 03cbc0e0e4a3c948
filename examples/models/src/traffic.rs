//! Traffic: the Nagel-Schreckenberg cellular automaton on a street network (the paper's
//! `traffic`, Table 1: four classes, one of them created and freed during the run).
//!
//! Streets are chains of cells, each cell holding at most one car. Intersections connect the
//! last cell of every incoming street to the first cell of every outgoing one; a traffic light
//! per intersection lets one incoming street through at a time (its last cell's speed limit is
//! the street's, the others' is 0). Producer cells (2% of the street cells) create cars, target
//! cells (0.3%) remove the cars that reach them. One step, as in the original:
//!
//! 1. `ProducerCell::create_car`: a free producer creates a car with probability 2%;
//! 2. `TrafficLight::step`: every `phase_time` steps a light turns its green street red and the
//!    next one green;
//! 3. `Car::prepare`: a car accelerates by 1 or 2 (up to its maximum), then drives along a
//!    random path (a random outgoing cell at intersections) until its velocity is used up, the
//!    next cell is occupied, the next cell's speed limit is too low to make progress, or it is
//!    on a target; then it randomly slows down by one (20%). It only *plans* its destination;
//! 4. `Car::advance`: the car leaves its cell for the destination; on a target it is freed.
//!
//! The model is deterministic: in `prepare` cars only read cells (nobody writes them), and in
//! `advance` no two cars write one cell. A car's path only enters cells that were free, so no
//! car moves into a cell another car leaves, and two cars could only meet where streets merge,
//! at intersections, where the lights let one street through (a car on a cell that just turned
//! red stays: its velocity is capped by its own cell's limit). Random numbers come from
//! per-producer and per-car generators that move with their owners, so the DSL version, both
//! hand-written baselines and both backends compute the same traffic.
//!
//! Compared with the original, a car plans its path and its velocity in one pass (the original
//! first draws a random path as long as its velocity and then shortens it; here the walk stops
//! where the car stops, and a street cell with one exit draws no random number), and it keeps
//! only its destination instead of the path (the last two cells of the walk are enough for the
//! slow-down). Producer and target cells are exclusive, so a car never starts on a target.
//! A cell keeps what planning reads in one word ([`CellInfo`]: speed limit, occupied, exits,
//! target) and keeps it beside its first exit in one 16-byte field ([`CellLink`]), so a car's
//! walk reads one memory sector per cell. It keeps no handle of its car (the original's
//! `Cell::car_`), which no rule reads: the car knows its cell, the cell only that it is taken. The SOA baseline stores its cells the
//! same way (with presence double-buffered, see below).
//!
//! The network itself is generated on the host (the apps crate), as in the original, and given
//! to the setup methods as flat tables indexed by cell id. The baselines store the cars'
//! fields inside the cell arrays (paper 7.2): structure of arrays and array of structures.

use dynasoar::arch;
use dynasoar::prelude::*;

/// Constants of the benchmark (the original DynaSOAr `example/traffic/configuration.h`).
pub mod config {
    pub const SEED: u64 = 42;
    /// Intersections of the street network.
    pub const INTERSECTIONS: u32 = 17_500;
    pub const STEPS: u32 = 12_000;
    /// Cars and streets have a maximum velocity in `[MAX_VELOCITY / 2, MAX_VELOCITY)` cells per
    /// step.
    pub const MAX_VELOCITY: u32 = 10;
    /// Most streets into or out of one intersection.
    pub const MAX_DEGREE: usize = 4;
    /// Length of a cell (intersections lie in the unit square).
    pub const CELL_LENGTH: f32 = 0.005;
    /// Share of street cells that produce cars.
    pub const PRODUCER_RATIO: f32 = 0.02;
    /// Share of street cells that remove cars.
    pub const TARGET_RATIO: f32 = 0.003;
    /// Probability that a free producer creates a car in a step.
    pub const CAR_RATIO: f32 = 0.02;
    /// Probability that a moving car slows down by one.
    pub const SLOW_DOWN_RATIO: f32 = 0.2;
    /// Steps between two phases of a traffic light.
    pub const PHASE_TIME: u32 = 5;
}

/// Most exits of a cell (the outgoing streets of an intersection).
pub const MAX_DEGREE: usize = config::MAX_DEGREE;

/// Index of the created-cars counter in [`TrafficArgs::counters`].
pub const CREATED: u64 = 0;
/// Index of the removed-cars counter in [`TrafficArgs::counters`].
pub const REMOVED: u64 = 1;

/// The rules of a run and its car counters, passed to every step method and kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct TrafficArgs {
    /// Two counters: cars created ([`CREATED`]) and removed at targets ([`REMOVED`]).
    pub counters: DeviceArray<u64>,
    /// Probability that a free producer creates a car in a step.
    pub car_ratio: f32,
    /// Probability that a moving car slows down by one.
    pub slow_down: f32,
    /// Maximum velocity of cars (new cars get `[max / 2, max)`).
    pub max_velocity: u32,
    pub _pad: u32,
}

/// A car as every implementation exports it (sorted by cell, the runs compare equal).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct CarState {
    /// The cell the car is on.
    pub cell: u32,
    /// Cells it moved in its last step.
    pub velocity: u32,
    pub max_velocity: u32,
    pub _pad: u32,
    pub rng: Rng,
}

/// Where exported cars go: a counter (entry 0) and room for `capacity` cars.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct CarExport {
    pub count: DeviceArray<u32>,
    pub cars: DevPtr<CarState>,
    pub capacity: u32,
    pub _pad: u32,
}

impl CarExport {
    /// Append `car` (dropped, but counted, beyond the capacity).
    #[inline(always)]
    fn push(&self, car: CarState) {
        let at = self.count.at(0).fetch_add(1);
        if at < self.capacity {
            // SAFETY: `cars` has room for `capacity` entries and `at` is this thread's own.
            unsafe { self.cars.write(at as usize, car) };
        }
    }
}

// ----------------------------------------------------------------------------------------
// The rules, shared by all implementations.

/// A random maximum velocity in `[max / 2, max)` (of a new car, or of a street).
#[inline(always)]
pub fn random_max_velocity(rng: &mut Rng, max_velocity: u32) -> u32 {
    let half = max_velocity / 2;
    half + rng.below((max_velocity - half).max(1))
}

/// The generator of producer cell `cell` in a network made from `seed`.
#[inline(always)]
pub fn producer_rng(seed: u64, cell: u32) -> Rng {
    Rng::new(seed, (1 << 40) | cell as u64)
}

/// What a free producer with generator `rng` does in a step: with probability `car_ratio`,
/// create a car, given as its generator and its maximum velocity (below `max_velocity`).
#[inline(always)]
pub fn new_car(rng: &mut Rng, car_ratio: f32, max_velocity: u32) -> Option<(Rng, u32)> {
    if rng.next_f32() < car_ratio {
        let car_rng = Rng::new(rng.next_u64(), 0);
        Some((car_rng, random_max_velocity(rng, max_velocity)))
    } else {
        None
    }
}

/// Whether a cell removes the cars that reach it: a target, or a dead end (no exit).
#[inline(always)]
pub fn is_exit(num_outgoing: u32, is_target: bool) -> bool {
    num_outgoing == 0 || is_target
}

/// One step of a traffic light with `num_cells` incoming streets: the new timer and phase, and
/// whether the phase changed (then the cell of the old phase turns red, that of the new one
/// green, in this order).
#[inline(always)]
pub fn light_step(timer: u32, phase: u32, num_cells: u32, phase_time: u32) -> (u32, u32, bool) {
    let timer = (timer + 1) % phase_time.max(1);
    if timer == 0 { (timer, (phase + 1) % num_cells.max(1), true) } else { (timer, phase, false) }
}

/// What a car planning its path needs to know about a cell, packed in one word so that each
/// cell on the path costs one load: its current speed limit (bits 0-7; 0 while a light is
/// red), whether a car is on it (bit 8), its number of exits (bits 9-11) and whether it removes
/// cars (bit 12). The DSL version and the SOA baseline store it per cell; the AOS baseline,
/// whose cell is one struct anyway, assembles it from its fields.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct CellInfo(pub u32);

impl CellInfo {
    const LIMIT: u32 = 0xff;
    const OCCUPIED: u32 = 1 << 8;
    const EXITS_SHIFT: u32 = 9;
    const EXITS: u32 = 0x7 << Self::EXITS_SHIFT;
    const TARGET: u32 = 1 << 12;

    /// A cell with speed limit `speed_limit` (at most 255), `exits` exits (at most
    /// [`MAX_DEGREE`]), a car on it or not, a target or not.
    #[inline(always)]
    pub fn new(speed_limit: u32, occupied: bool, exits: u32, is_target: bool) -> Self {
        CellInfo(
            (speed_limit & Self::LIMIT)
                | if occupied { Self::OCCUPIED } else { 0 }
                | ((exits << Self::EXITS_SHIFT) & Self::EXITS)
                | if is_target { Self::TARGET } else { 0 },
        )
    }

    /// The current speed limit (0 for a red light).
    #[inline(always)]
    pub fn speed_limit(self) -> u32 {
        self.0 & Self::LIMIT
    }

    /// Whether no car is on the cell.
    #[inline(always)]
    pub fn is_free(self) -> bool {
        self.0 & Self::OCCUPIED == 0
    }

    /// Number of exits (0..=4).
    #[inline(always)]
    pub fn exits(self) -> u32 {
        (self.0 & Self::EXITS) >> Self::EXITS_SHIFT
    }

    #[inline(always)]
    pub fn is_target(self) -> bool {
        self.0 & Self::TARGET != 0
    }

    /// Whether the cell removes the cars that reach it (see [`is_exit`]).
    #[inline(always)]
    pub fn is_exit(self) -> bool {
        is_exit(self.exits(), self.is_target())
    }

    /// The same cell with speed limit `speed_limit`.
    #[inline(always)]
    pub fn with_speed_limit(self, speed_limit: u32) -> Self {
        CellInfo((self.0 & !Self::LIMIT) | (speed_limit & Self::LIMIT))
    }

    /// The same cell with a car on it (`true`) or none.
    #[inline(always)]
    pub fn with_car(self, occupied: bool) -> Self {
        CellInfo(if occupied { self.0 | Self::OCCUPIED } else { self.0 & !Self::OCCUPIED })
    }
}

/// The street network as a car sees it while planning (nobody writes it meanwhile).
pub trait Streets {
    /// A cell.
    type Cell: Copy;
    /// What planning needs to know about `cell`, and its first exit (any value when it has
    /// none): a walk reads both of every cell on its path, so an implementation may keep them
    /// together.
    fn info(&self, cell: Self::Cell) -> (CellInfo, Self::Cell);
    /// Exit `k` of `cell`, for `k` from 1 below its number of exits.
    fn branch(&self, cell: Self::Cell, k: u32) -> Self::Cell;
}

/// Plan one step of a car on `position` that moved `velocity` cells last step: returns its
/// destination and its new velocity (the cells it moves).
#[inline(always)]
pub fn drive<S: Streets>(
    streets: &S,
    position: S::Cell,
    velocity: u32,
    max_velocity: u32,
    slow_down: f32,
    rng: &mut Rng,
) -> (S::Cell, u32) {
    // Accelerate by 1 or 2, but never beyond the limit of the car's own cell (a car on a light
    // that turned red stays).
    let speedup = 1 + rng.below(2);
    let (mut here, mut first_exit) = streets.info(position);
    let mut limit = (velocity + speedup).min(max_velocity).min(here.speed_limit());
    let (mut previous, mut cell, mut moved) = (position, position, 0);
    while moved < limit {
        // One read per cell on the path: its info and first exit, which tell how to go on
        // from there (only intersections read another exit).
        let exits = here.exits();
        if here.is_exit() {
            break;
        }
        let k = if exits > 1 { rng.below(exits) } else { 0 };
        let next = if k == 0 { first_exit } else { streets.branch(cell, k) };
        let (ahead, ahead_exit) = streets.info(next);
        if !ahead.is_free() {
            break;
        }
        let next_limit = ahead.speed_limit();
        if limit > next_limit {
            // Too fast for the next cell: slow down to its limit if that still gets there.
            if next_limit > moved {
                limit = next_limit;
            } else {
                break;
            }
        }
        previous = cell;
        cell = next;
        here = ahead;
        first_exit = ahead_exit;
        moved += 1;
    }
    if moved > 0 && rng.next_f32() < slow_down {
        return (previous, moved - 1);
    }
    (cell, moved)
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// What a car's walk reads of a cell, in one 16-byte field (one memory sector per cell on
/// the path): its [`CellInfo`] and its first exit.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct CellLink {
    /// The first exit: the next cell of the street, or the first outgoing street's first cell
    /// at an intersection (most cells have only this one).
    pub next: Handle<Cell>,
    /// The speed limit now (`max_velocity`, or 0 while a traffic light is red), whether a car
    /// is on the cell, the number of exits and whether cars that reach this cell leave the
    /// network.
    pub info: CellInfo,
    pub _pad: u32,
}

/// A cell of a street (the paper's `Cell`).
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Cell {
    /// What a walk reads: the info word and the first exit, together.
    pub link: CellLink,
    /// The further exits of an intersection (the first `exits - 1`).
    pub branches: [Handle<Cell>; MAX_DEGREE - 1],
    /// Index of the cell in the network tables (for the host).
    pub id: u32,
    /// The street's speed limit.
    pub max_velocity: u32,
}

impl CellLink {
    /// The same link with its info changed by `f`.
    #[inline(always)]
    pub fn map_info(self, f: impl FnOnce(CellInfo) -> CellInfo) -> Self {
        CellLink { info: f(self.info), ..self }
    }
}

/// A cell that creates cars.
#[soa_class(extends = Cell)]
#[derive(Debug, PartialEq)]
pub struct ProducerCell {
    pub rng: Rng,
}

/// A car.
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Car {
    pub rng: Rng,
    pub position: Handle<Cell>,
    /// Where `prepare` decided to go in this step.
    pub destination: Handle<Cell>,
    /// Cells moved in the last step.
    pub velocity: u32,
    pub max_velocity: u32,
}

/// A traffic light at an intersection: the last cells of its incoming streets, one of them
/// green at a time.
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct TrafficLight {
    pub cells: [Handle<Cell>; MAX_DEGREE],
    pub num_cells: u32,
    pub timer: u32,
    /// The incoming street that has green.
    pub phase: u32,
    pub phase_time: u32,
}

dynasoar::allocator!(
    /// The heap of the traffic simulation.
    /// Every class 64 objects a block (docs/performance-log.md, "Uniform blocks").
    #[blocks(uniform)]
    pub TrafficHeap: Cell, ProducerCell, Car, TrafficLight
);

/// Incoming streets of an intersection, for the setup of its light.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct LightSpec {
    /// Cell ids of the last cells of the incoming streets (the first `num_cells`).
    pub cells: [u32; MAX_DEGREE],
    pub num_cells: u32,
}

/// The network as flat tables indexed by cell id, for the setup methods (made by the host).
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct NetworkTables {
    /// Exits of each cell (cell ids; the first `num_outgoing`).
    pub outgoing: DevPtr<[u32; MAX_DEGREE]>,
    pub num_outgoing: DevPtr<u8>,
    pub max_velocity: DevPtr<u8>,
    /// Initial speed limit (0 on the last cell of a street into an intersection: red).
    pub speed_limit: DevPtr<u8>,
    pub is_target: DevPtr<u8>,
    /// Ids of the plain cells, then of the producer cells.
    pub plain_cells: DevPtr<u32>,
    pub producer_cells: DevPtr<u32>,
    /// One light per intersection with incoming streets.
    pub lights: DevPtr<LightSpec>,
    /// Filled by `Cell::register`: the handle of every cell by id.
    pub handles: DeviceArray<Handle<Cell>>,
    pub seed: u64,
    pub phase_time: u32,
    pub _pad: u32,
}

impl NetworkTables {
    /// The plain value of cell `id`'s fields (no exits and no car yet).
    #[inline(always)]
    fn cell(&self, id: u32) -> Cell {
        let i = id as usize;
        // SAFETY: the host made every table with one entry per cell, and `id` is a cell id
        // from its own lists; the tables are only read during the setup.
        unsafe {
            Cell {
                link: CellLink {
                    next: Handle::NULL,
                    info: CellInfo::new(
                        self.speed_limit.read(i) as u32,
                        false,
                        self.num_outgoing.read(i) as u32,
                        self.is_target.read(i) != 0,
                    ),
                    _pad: 0,
                },
                branches: [Handle::NULL; MAX_DEGREE - 1],
                id,
                max_velocity: self.max_velocity.read(i) as u32,
            }
        }
    }
}

/// The streets through the DSL's objects (a null handle is no cell: occupied, no exits).
struct DslStreets;

impl Streets for DslStreets {
    type Cell = Handle<Cell>;

    #[inline(always)]
    fn info(&self, cell: Handle<Cell>) -> (CellInfo, Handle<Cell>) {
        cell.get().map_or((CellInfo::new(0, true, 0, false), Handle::NULL), |c| {
            let link = c.link();
            (link.info, link.next)
        })
    }

    #[inline(always)]
    fn branch(&self, cell: Handle<Cell>, k: u32) -> Handle<Cell> {
        cell.get().map_or(Handle::NULL, |c| c.branches_at((k as usize).wrapping_sub(1) % (MAX_DEGREE - 1)))
    }
}

#[soa_methods]
impl Cell {
    /// Plain cell `plain_cells[index]`. Then `register` and `link`.
    #[parallel_new]
    pub fn create(_dev: &Device<TrafficHeap>, index: u64, t: NetworkTables) -> Self {
        // SAFETY: the host launches this with `index` below the length of `plain_cells`.
        let id = unsafe { t.plain_cells.read(index as usize) };
        t.cell(id)
    }

    /// Setup: enter this cell (or producer) in the handle table.
    #[parallel]
    pub fn register(this: Obj<Self>, _dev: &Device<TrafficHeap>, t: NetworkTables) {
        t.handles.set(this.id() as u64, this.handle());
    }

    /// Setup: link the exits (after `register`).
    #[parallel]
    pub fn link(this: Obj<Self>, _dev: &Device<TrafficHeap>, t: NetworkTables) {
        let id = this.id() as usize;
        let link = this.link();
        for k in 0..(link.info.exits() as usize).min(MAX_DEGREE) {
            // SAFETY: one entry per cell (see `NetworkTables::cell`).
            let exit = t.handles.get(unsafe { exit_of(t.outgoing, id, k as u32) } as u64);
            if k == 0 {
                this.set_link(CellLink { next: exit, ..link });
            } else {
                this.set_branches_at(k - 1, exit);
            }
        }
    }
}

#[soa_methods]
impl ProducerCell {
    /// Producer cell `producer_cells[index]`.
    #[parallel_new]
    pub fn create(_dev: &Device<TrafficHeap>, index: u64, t: NetworkTables) -> Self {
        // SAFETY: the host launches this with `index` below the length of `producer_cells`.
        let id = unsafe { t.producer_cells.read(index as usize) };
        ProducerCell { base: t.cell(id), rng: producer_rng(t.seed, id) }
    }

    /// Step 1: a free producer may create a car.
    #[parallel(creates(Car))]
    pub fn create_car(this: Obj<Self>, dev: &Device<TrafficHeap>, args: TrafficArgs) {
        let link = this.link();
        if !link.info.is_free() {
            return;
        }
        let mut rng = this.rng();
        if let Some((car_rng, max_velocity)) = new_car(&mut rng, args.car_ratio, args.max_velocity) {
            let here = this.up::<Cell, _>().handle();
            let car = Car { rng: car_rng, position: here, destination: here, velocity: 0, max_velocity };
            if dev.make_new(car).is_some() {
                this.set_link(link.map_info(|i| i.with_car(true)));
                args.counters.at(CREATED).fetch_add(1);
            }
        }
        this.set_rng(rng);
    }
}

#[soa_methods]
impl Car {
    /// Step 3: plan the move (reads cells only).
    #[parallel]
    pub fn prepare(this: Obj<Self>, _dev: &Device<TrafficHeap>, args: TrafficArgs) {
        let mut rng = this.rng();
        let (destination, velocity) = drive(
            &DslStreets,
            this.position(),
            this.velocity(),
            this.max_velocity(),
            args.slow_down,
            &mut rng,
        );
        this.set_rng(rng);
        this.set_velocity(velocity);
        this.set_destination(destination);
    }

    /// Step 4: move to the destination; leave the network on a target.
    #[parallel(frees(Car))]
    pub fn advance(this: Obj<Self>, dev: &Device<TrafficHeap>, args: TrafficArgs) {
        let (from, to) = (this.position(), this.destination());
        if from == to {
            return;
        }
        let (Some(from_cell), Some(to_cell)) = (from.get(), to.get()) else { return };
        // Plain read-modify-writes of the infos: in this launch nobody else writes either cell
        // (the destination was free and only this car goes there; nobody enters a cell a car
        // leaves, see the module docs).
        from_cell.set_link(from_cell.link().map_info(|i| i.with_car(false)));
        let to_link = to_cell.link();
        if to_link.info.is_exit() {
            args.counters.at(REMOVED).fetch_add(1);
            dev.free(this);
        } else {
            to_cell.set_link(to_link.map_info(|i| i.with_car(true)));
            this.set_position(to);
        }
    }

    /// Copy this car into `out` (for the host).
    #[parallel]
    pub fn export(this: Ref<Self>, _dev: &Device<TrafficHeap>, out: CarExport) {
        out.push(CarState {
            cell: this.position().get().map_or(u32::MAX, |c| c.id()),
            velocity: this.velocity(),
            max_velocity: this.max_velocity(),
            _pad: 0,
            rng: this.rng(),
        });
    }
}

#[soa_methods]
impl TrafficLight {
    /// The light of intersection `index` (all red; phase 0 turns green first).
    #[parallel_new]
    pub fn create(_dev: &Device<TrafficHeap>, index: u64, t: NetworkTables) -> Self {
        // SAFETY: the host launches this with `index` below the length of `lights`.
        let spec = unsafe { t.lights.read(index as usize) };
        let mut cells = [Handle::NULL; MAX_DEGREE];
        for (k, cell) in cells.iter_mut().enumerate().take(spec.num_cells as usize) {
            *cell = t.handles.get(spec.cells[k] as u64);
        }
        TrafficLight { cells, num_cells: spec.num_cells, timer: 0, phase: 0, phase_time: t.phase_time }
    }

    /// Step 2: advance the timer; switch the phase when it runs out.
    #[parallel]
    pub fn step(this: Obj<Self>, _dev: &Device<TrafficHeap>) {
        let n = this.num_cells();
        if n == 0 {
            return;
        }
        let old = this.phase();
        let (timer, phase, switched) = light_step(this.timer(), old, n, this.phase_time());
        this.set_timer(timer);
        if switched {
            if let Some(red) = this.cells_at(old as usize % MAX_DEGREE).get() {
                red.set_link(red.link().map_info(|i| i.with_speed_limit(0)));
            }
            if let Some(green) = this.cells_at(phase as usize % MAX_DEGREE).get() {
                green.set_link(green.link().map_info(|i| i.with_speed_limit(green.max_velocity())));
            }
            this.set_phase(phase);
        }
    }
}

// ----------------------------------------------------------------------------------------
// Hand-written baselines: the network in flat arrays indexed by cell id, the cars' fields
// stored in the cell arrays (paper 7.2), no dynamic allocation. Car presence is
// double-buffered: `advance` reads the current flags and writes the next ones (cleared by
// `prepare`), so a car that arrives in a cell is not moved again in the same launch. Producers
// and lights are static lists.

/// Structure-of-arrays baseline: one array per field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct SoaTraffic {
    pub num_cells: u32,
    pub num_producers: u32,
    pub num_lights: u32,
    pub _pad: u32,
    /// First exit of each cell and its further exits (as in the DSL version's `Cell`).
    pub next: DevPtr<u32>,
    pub branches: DevPtr<[u32; MAX_DEGREE - 1]>,
    /// Speed limit now, exits and target flag (the car bit is not used: presence is
    /// double-buffered below).
    pub info: DevPtr<CellInfo>,
    pub max_velocity: DevPtr<u8>,
    /// Car presence now (1: a car) and after this step's `advance`.
    pub has_car: DevPtr<u8>,
    pub has_car_next: DevPtr<u8>,
    pub velocity: DevPtr<u32>,
    pub car_max_velocity: DevPtr<u32>,
    pub car_rng: DevPtr<Rng>,
    pub destination: DevPtr<u32>,
    pub producers: DevPtr<u32>,
    pub producer_rng: DevPtr<Rng>,
    pub light_cells: DevPtr<[u32; MAX_DEGREE]>,
    pub light_num_cells: DevPtr<u32>,
    pub light_timer: DevPtr<u32>,
    pub light_phase: DevPtr<u32>,
    pub phase_time: u32,
    pub _pad2: u32,
    pub args: TrafficArgs,
}

/// Array-of-structures baseline: a cell with the fields of its car.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct AosCell {
    pub outgoing: [u32; MAX_DEGREE],
    pub car_rng: Rng,
    pub destination: u32,
    pub velocity: u8,
    pub car_max_velocity: u8,
    pub num_outgoing: u8,
    pub is_target: u8,
    pub max_velocity: u8,
    pub speed_limit: u8,
    /// Car presence: `has_car[parity]` now, the other after this step's `advance`.
    pub has_car: [u8; 2],
    pub _pad: u32,
}

/// Array-of-structures baseline: a producer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct AosProducer {
    pub cell: u32,
    pub _pad: u32,
    pub rng: Rng,
}

/// Array-of-structures baseline: a traffic light.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Plain)]
pub struct AosLight {
    pub cells: [u32; MAX_DEGREE],
    pub num_cells: u32,
    pub timer: u32,
    pub phase: u32,
    pub phase_time: u32,
}

/// Array-of-structures baseline storage.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct AosTraffic {
    pub cells: DevPtr<AosCell>,
    pub producers: DevPtr<AosProducer>,
    pub lights: DevPtr<AosLight>,
    pub num_cells: u32,
    pub num_producers: u32,
    pub num_lights: u32,
    /// Which `has_car` entry is current.
    pub parity: u32,
    pub args: TrafficArgs,
}

/// Grid-stride loop over `0..count`.
#[inline(always)]
fn each(count: u32, mut f: impl FnMut(usize)) {
    let stride = arch::global_thread_count();
    let mut i = arch::global_thread_id();
    while i < count as usize {
        f(i);
        i += stride;
    }
}

// Every baseline kernel below touches, for cell `c`, its own elements; `prepare` reads other
// cells' network fields and current presence (nobody writes them in that launch); `advance`
// writes the car fields and the next presence of the destination, which is free (nobody else
// reads or writes them in that launch: see the module docs). Lights write the speed limits of
// their own cells only.

/// Element `k` (modulo [`MAX_DEGREE`]) of entry `i` of a table of exits: one load, no local
/// copy of the entry (a dynamically indexed copy would live in local memory on the GPU).
///
/// # Safety
/// `table` has more than `i` entries, and nobody writes entry `i` meanwhile.
#[inline(always)]
unsafe fn exit_of(table: DevPtr<[u32; MAX_DEGREE]>, i: usize, k: u32) -> u32 {
    // SAFETY: guaranteed by the caller; the entry's elements are consecutive `u32`s.
    unsafe { table.cast::<u32>().read(i * MAX_DEGREE + k as usize % MAX_DEGREE) }
}

struct SoaStreets<'a>(&'a SoaTraffic);

impl Streets for SoaStreets<'_> {
    type Cell = u32;

    #[inline(always)]
    fn info(&self, cell: u32) -> (CellInfo, u32) {
        let c = cell as usize;
        // SAFETY: `cell < num_cells` (cell ids come from the network tables); none of these
        // arrays is written during `prepare`.
        unsafe { (self.0.info.read(c).with_car(self.0.has_car.read(c) != 0), self.0.next.read(c)) }
    }

    #[inline(always)]
    fn branch(&self, cell: u32, k: u32) -> u32 {
        // SAFETY: as above.
        unsafe {
            self.0
                .branches
                .cast::<u32>()
                .read(cell as usize * (MAX_DEGREE - 1) + (k as usize).wrapping_sub(1) % (MAX_DEGREE - 1))
        }
    }
}

/// SOA baseline, step 1.
#[kernel]
pub fn traffic_soa_create_cars(t: SoaTraffic) {
    each(t.num_producers, |i| {
        // SAFETY: `i < num_producers`; a producer touches its own cell and generator only.
        unsafe {
            let c = t.producers.read(i) as usize;
            if t.has_car.read(c) != 0 {
                return;
            }
            let mut rng = t.producer_rng.read(i);
            if let Some((car_rng, max_velocity)) = new_car(&mut rng, t.args.car_ratio, t.args.max_velocity) {
                t.has_car.write(c, 1);
                t.velocity.write(c, 0);
                t.car_max_velocity.write(c, max_velocity);
                t.car_rng.write(c, car_rng);
                t.args.counters.at(CREATED).fetch_add(1);
            }
            t.producer_rng.write(i, rng);
        }
    });
}

/// SOA baseline, step 2.
#[kernel]
pub fn traffic_soa_lights(t: SoaTraffic) {
    each(t.num_lights, |i| {
        // SAFETY: `i < num_lights`; a light touches its own state and its own cells' limits.
        unsafe {
            let n = t.light_num_cells.read(i);
            if n == 0 {
                return;
            }
            let old = t.light_phase.read(i);
            let (timer, phase, switched) = light_step(t.light_timer.read(i), old, n, t.phase_time);
            t.light_timer.write(i, timer);
            if switched {
                let red = exit_of(t.light_cells, i, old) as usize;
                let green = exit_of(t.light_cells, i, phase) as usize;
                t.info.write(red, t.info.read(red).with_speed_limit(0));
                t.info.write(green, t.info.read(green).with_speed_limit(t.max_velocity.read(green) as u32));
                t.light_phase.write(i, phase);
            }
        }
    });
}

/// SOA baseline, step 3 (also clears the next presence flags).
#[kernel]
pub fn traffic_soa_prepare(t: SoaTraffic) {
    each(t.num_cells, |c| {
        // SAFETY: see above.
        unsafe {
            t.has_car_next.write(c, 0);
            if t.has_car.read(c) == 0 {
                return;
            }
            let mut rng = t.car_rng.read(c);
            let (destination, velocity) = drive(
                &SoaStreets(&t),
                c as u32,
                t.velocity.read(c),
                t.car_max_velocity.read(c),
                t.args.slow_down,
                &mut rng,
            );
            t.car_rng.write(c, rng);
            t.velocity.write(c, velocity);
            t.destination.write(c, destination);
        }
    });
}

/// SOA baseline, step 4.
#[kernel]
pub fn traffic_soa_advance(t: SoaTraffic) {
    each(t.num_cells, |c| {
        // SAFETY: see above.
        unsafe {
            if t.has_car.read(c) == 0 {
                return;
            }
            let d = t.destination.read(c) as usize;
            if d == c {
                t.has_car_next.write(c, 1);
                return;
            }
            if t.info.read(d).is_exit() {
                t.args.counters.at(REMOVED).fetch_add(1);
                return;
            }
            t.has_car_next.write(d, 1);
            t.velocity.write(d, t.velocity.read(c));
            t.car_max_velocity.write(d, t.car_max_velocity.read(c));
            t.car_rng.write(d, t.car_rng.read(c));
        }
    });
}

/// SOA baseline: copy the cars into `out`.
#[kernel]
pub fn traffic_soa_export(p: SoaExport) {
    let t = p.traffic;
    each(t.num_cells, |c| {
        // SAFETY: only reads, between steps.
        unsafe {
            if t.has_car.read(c) != 0 {
                p.out.push(CarState {
                    cell: c as u32,
                    velocity: t.velocity.read(c),
                    max_velocity: t.car_max_velocity.read(c),
                    _pad: 0,
                    rng: t.car_rng.read(c),
                });
            }
        }
    });
}

/// Parameters of [`traffic_soa_export`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct SoaExport {
    pub traffic: SoaTraffic,
    pub out: CarExport,
}

/// AOS baseline: cell `index`.
#[inline(always)]
fn aos_cell(t: &AosTraffic, index: usize) -> *mut AosCell {
    t.cells.as_ptr().wrapping_add(index)
}

// The AOS kernels mirror the SOA ones, with field access through raw pointers to the cell
// structs (never references: other threads access other fields of the same cells meanwhile).

struct AosStreets<'a>(&'a AosTraffic);

impl Streets for AosStreets<'_> {
    type Cell = u32;

    #[inline(always)]
    fn info(&self, cell: u32) -> (CellInfo, u32) {
        let now = (self.0.parity & 1) as usize;
        let c = aos_cell(self.0, cell as usize);
        // SAFETY: `cell < num_cells`; these fields are not written during `prepare`.
        unsafe {
            let info = CellInfo::new(
                (*c).speed_limit as u32,
                (*c).has_car[now] != 0,
                (*c).num_outgoing as u32,
                (*c).is_target != 0,
            );
            (info, (*c).outgoing[0])
        }
    }

    #[inline(always)]
    fn branch(&self, cell: u32, k: u32) -> u32 {
        // SAFETY: as above.
        unsafe { (*aos_cell(self.0, cell as usize)).outgoing[(k as usize) % MAX_DEGREE] }
    }
}

/// AOS baseline, step 1.
#[kernel]
pub fn traffic_aos_create_cars(t: AosTraffic) {
    let now = (t.parity & 1) as usize;
    each(t.num_producers, |i| {
        // SAFETY: see the SOA kernels.
        unsafe {
            let producer = t.producers.as_ptr().add(i);
            let cell = aos_cell(&t, (*producer).cell as usize);
            if (*cell).has_car[now] != 0 {
                return;
            }
            let mut rng = (*producer).rng;
            if let Some((car_rng, max_velocity)) = new_car(&mut rng, t.args.car_ratio, t.args.max_velocity) {
                (*cell).has_car[now] = 1;
                (*cell).velocity = 0;
                (*cell).car_max_velocity = max_velocity as u8;
                (*cell).car_rng = car_rng;
                t.args.counters.at(CREATED).fetch_add(1);
            }
            (*producer).rng = rng;
        }
    });
}

/// AOS baseline, step 2.
#[kernel]
pub fn traffic_aos_lights(t: AosTraffic) {
    each(t.num_lights, |i| {
        // SAFETY: see the SOA kernels.
        unsafe {
            let light = t.lights.as_ptr().add(i);
            let n = (*light).num_cells;
            if n == 0 {
                return;
            }
            let old = (*light).phase;
            let (timer, phase, switched) = light_step((*light).timer, old, n, (*light).phase_time);
            (*light).timer = timer;
            if switched {
                let red = aos_cell(&t, (*light).cells[old as usize % MAX_DEGREE] as usize);
                let green = aos_cell(&t, (*light).cells[phase as usize % MAX_DEGREE] as usize);
                (*red).speed_limit = 0;
                (*green).speed_limit = (*green).max_velocity;
                (*light).phase = phase;
            }
        }
    });
}

/// AOS baseline, step 3.
#[kernel]
pub fn traffic_aos_prepare(t: AosTraffic) {
    let (now, next) = ((t.parity & 1) as usize, (1 - (t.parity & 1)) as usize);
    each(t.num_cells, |c| {
        let cell = aos_cell(&t, c);
        // SAFETY: see the SOA kernels.
        unsafe {
            (*cell).has_car[next] = 0;
            if (*cell).has_car[now] == 0 {
                return;
            }
            let mut rng = (*cell).car_rng;
            let (destination, velocity) = drive(
                &AosStreets(&t),
                c as u32,
                (*cell).velocity as u32,
                (*cell).car_max_velocity as u32,
                t.args.slow_down,
                &mut rng,
            );
            (*cell).car_rng = rng;
            (*cell).velocity = velocity as u8;
            (*cell).destination = destination;
        }
    });
}

/// AOS baseline, step 4.
#[kernel]
pub fn traffic_aos_advance(t: AosTraffic) {
    let (now, next) = ((t.parity & 1) as usize, (1 - (t.parity & 1)) as usize);
    each(t.num_cells, |c| {
        let cell = aos_cell(&t, c);
        // SAFETY: see the SOA kernels.
        unsafe {
            if (*cell).has_car[now] == 0 {
                return;
            }
            let d = (*cell).destination as usize;
            if d == c {
                (*cell).has_car[next] = 1;
                return;
            }
            let dest = aos_cell(&t, d);
            if is_exit((*dest).num_outgoing as u32, (*dest).is_target != 0) {
                t.args.counters.at(REMOVED).fetch_add(1);
                return;
            }
            (*dest).has_car[next] = 1;
            (*dest).velocity = (*cell).velocity;
            (*dest).car_max_velocity = (*cell).car_max_velocity;
            (*dest).car_rng = (*cell).car_rng;
        }
    });
}

/// Parameters of [`traffic_aos_export`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct AosExport {
    pub traffic: AosTraffic,
    pub out: CarExport,
}

/// AOS baseline: copy the cars into `out`.
#[kernel]
pub fn traffic_aos_export(p: AosExport) {
    let t = p.traffic;
    let now = (t.parity & 1) as usize;
    each(t.num_cells, |c| {
        let cell = aos_cell(&t, c);
        // SAFETY: only reads, between steps.
        unsafe {
            if (*cell).has_car[now] != 0 {
                p.out.push(CarState {
                    cell: c as u32,
                    velocity: (*cell).velocity as u32,
                    max_velocity: (*cell).car_max_velocity as u32,
                    _pad: 0,
                    rng: (*cell).car_rng,
                });
            }
        }
    });
}
