//! Host side of the traffic simulation: generate the street network, set up and step the DSL
//! version or a baseline, time it, render it, and read the cars back for checks; plus a plain
//! host reference of the rules and the DSL version's invariant check.
//!
//! The three implementations are [`Simulation`]s: [`DslSim`] (cells, cars and lights as objects
//! in the dynasoar heap), [`SoaSim`] and [`AosSim`] (flat arrays, the cars stored in the cells).
//! [`run`] drives any of them with timing, progress and rendering; tests step them one at a time
//! and compare them with [`Reference`].

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use anyhow::{Context, ensure};
use dynasoar::host::{Buffer, Executor, Grid, Runtime, StepGraph};
use dynasoar::prelude::{DevPtr, Plain};
use dynasoar::rand::Rng;
use dynasoar::{ClassSpec, Handle};
use dynasoar_models::traffic::{
    AosCell, AosExport, AosLight, AosProducer, AosTraffic, CREATED, Car, CarExport, CarState, Cell, CellInfo,
    LightSpec, MAX_DEGREE, NetworkTables, ProducerCell, REMOVED, SoaExport, SoaTraffic, Streets,
    TRAFFIC_AOS_ADVANCE, TRAFFIC_AOS_CREATE_CARS, TRAFFIC_AOS_EXPORT, TRAFFIC_AOS_LIGHTS,
    TRAFFIC_AOS_PREPARE, TRAFFIC_SOA_ADVANCE, TRAFFIC_SOA_CREATE_CARS, TRAFFIC_SOA_EXPORT,
    TRAFFIC_SOA_LIGHTS, TRAFFIC_SOA_PREPARE, TrafficArgs, TrafficHeap, TrafficLight, config, drive, is_exit,
    light_step, new_car, producer_rng, random_max_velocity,
};

use crate::render::{Canvas, Recorder, heat};
use crate::{Implementation, RunOptions, progress, run_step};

/// Threads per block of the baselines' kernels.
const THREADS: u32 = 256;

/// Steps queued between two host synchronisations when nothing is rendered.
const CHUNK: u32 = 50;

/// What to simulate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Intersections of the street network.
    pub intersections: u32,
    pub steps: u32,
    /// Seed of the network and of all random decisions.
    pub seed: u64,
    /// Cars and streets get a maximum velocity in `[max_velocity / 2, max_velocity)`.
    pub max_velocity: u32,
    /// Length of a street cell (intersections lie in the unit square).
    pub cell_length: f32,
    /// Share of street cells that produce cars.
    pub producer_ratio: f32,
    /// Share of the other street cells that remove cars.
    pub target_ratio: f32,
    /// Probability that a free producer creates a car in a step.
    pub car_ratio: f32,
    /// Probability that a moving car slows down by one.
    pub slow_down: f32,
    /// Steps between two phases of a traffic light.
    pub phase_time: u32,
    /// Heap of the DSL version in bytes (default: [`Config::default_heap_bytes`]).
    pub heap_bytes: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            intersections: config::INTERSECTIONS,
            steps: config::STEPS,
            seed: config::SEED,
            max_velocity: config::MAX_VELOCITY,
            cell_length: config::CELL_LENGTH,
            producer_ratio: config::PRODUCER_RATIO,
            target_ratio: config::TARGET_RATIO,
            car_ratio: config::CAR_RATIO,
            slow_down: config::SLOW_DOWN_RATIO,
            phase_time: config::PHASE_TIME,
            heap_bytes: None,
        }
    }
}

impl Config {
    /// Check the sizes and rules; an error says which option is wrong.
    pub fn validate(&self) -> anyhow::Result<()> {
        ensure!(self.intersections >= 2, "the network needs at least 2 intersections");
        ensure!(self.intersections <= 1 << 24, "at most {} intersections", 1 << 24);
        ensure!(
            (2..=255).contains(&self.max_velocity),
            "the maximum velocity must be between 2 and 255 (got {})",
            self.max_velocity
        );
        ensure!(
            self.cell_length.is_finite() && self.cell_length >= 1e-5,
            "the cell length must be at least 0.00001 (got {})",
            self.cell_length
        );
        for (name, p) in [
            ("producer ratio", self.producer_ratio),
            ("target ratio", self.target_ratio),
            ("car ratio", self.car_ratio),
            ("slow-down probability", self.slow_down),
        ] {
            ensure!((0.0..=1.0).contains(&p), "the {name} must be between 0 and 1 (got {p})");
        }
        ensure!(self.phase_time >= 1, "the phase time of traffic lights must be at least 1 step");
        if let Some(bytes) = self.heap_bytes {
            ensure!(bytes > 0, "the heap needs at least one byte");
        }
        Ok(())
    }

    /// The rules as the kernels take them (with `counters`).
    pub fn args(&self, counters: &Buffer<u64>) -> TrafficArgs {
        TrafficArgs {
            counters: counters.device_array(),
            car_ratio: self.car_ratio,
            slow_down: self.slow_down,
            max_velocity: self.max_velocity,
            _pad: 0,
        }
    }

    /// Heap for `net`: blocks for every cell, producer and light, and for as many cars as
    /// there are cells (at most one car per cell), plus an eighth for partly used blocks and the
    /// allocator's bitmaps.
    pub fn default_heap_bytes(net: &Network) -> u64 {
        let blocks = (net.plain_cells.len() as u64).div_ceil(Cell::OBJECTS_PER_BLOCK as u64)
            + (net.producers.len() as u64).div_ceil(ProducerCell::OBJECTS_PER_BLOCK as u64)
            + (net.lights.len() as u64).div_ceil(TrafficLight::OBJECTS_PER_BLOCK as u64)
            + (net.num_cells() as u64).div_ceil(Car::OBJECTS_PER_BLOCK as u64);
        let bytes = blocks * Cell::BLOCK_BYTES;
        bytes + bytes / 8 + (8 << 20)
    }
}

// ----------------------------------------------------------------------------------------
// The street network.

/// The street network, as flat tables indexed by cell id (the original's generator: random
/// intersections in the unit square, 1 to 4 streets out of each to random other intersections
/// with at most 4 streets in, each street a chain of cells `cell_length` apart).
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub intersections: u32,
    /// Exits of each cell (the first `num_outgoing`).
    pub outgoing: Vec<[u32; MAX_DEGREE]>,
    pub num_outgoing: Vec<u8>,
    /// Speed limit of each cell's street.
    pub max_velocity: Vec<u8>,
    /// Speed limit at the start: 0 on the last cell of every street into an intersection (its
    /// light is red), else `max_velocity`.
    pub speed_limit: Vec<u8>,
    pub is_target: Vec<u8>,
    /// Position of each cell (for pictures).
    pub position: Vec<(f32, f32)>,
    /// Ids of the cells that do not produce cars, and of those that do (both sorted).
    pub plain_cells: Vec<u32>,
    pub producers: Vec<u32>,
    /// One light per intersection with incoming streets.
    pub lights: Vec<LightSpec>,
}

impl Network {
    /// Generate the network of `cfg` (deterministic in `cfg.seed`).
    pub fn generate(cfg: &Config) -> anyhow::Result<Self> {
        cfg.validate()?;
        let n = cfg.intersections as usize;
        let mut rng = Rng::new(cfg.seed, 0);
        // Intersections: out-degree and position.
        let mut num_out: Vec<usize> = Vec::with_capacity(n);
        let mut pos = Vec::with_capacity(n);
        for _ in 0..n {
            num_out.push(1 + rng.below(MAX_DEGREE as u32) as usize);
            let x = rng.next_f32();
            pos.push((x, rng.next_f32()));
        }
        // Streets: a random other intersection with room for one more incoming street.
        let mut num_in = vec![0usize; n];
        let mut targets = vec![[0u32; MAX_DEGREE]; n];
        let mut open = n;
        for i in 0..n {
            let mut k = 0;
            while k < num_out[i] {
                if open - usize::from(num_in[i] < MAX_DEGREE) == 0 {
                    // Every other intersection is full (tiny networks only): fewer streets out.
                    num_out[i] = k;
                    break;
                }
                let t = loop {
                    let t = rng.below(n as u32) as usize;
                    if t != i && num_in[t] < MAX_DEGREE {
                        break t;
                    }
                };
                targets[i][k] = t as u32;
                num_in[t] += 1;
                if num_in[t] == MAX_DEGREE {
                    open -= 1;
                }
                k += 1;
            }
        }
        let mut net = Network {
            intersections: cfg.intersections,
            outgoing: Vec::new(),
            num_outgoing: Vec::new(),
            max_velocity: Vec::new(),
            speed_limit: Vec::new(),
            is_target: Vec::new(),
            position: Vec::new(),
            plain_cells: Vec::new(),
            producers: Vec::new(),
            lights: Vec::new(),
        };
        let mut producer = Vec::new();
        let mut push = |net: &mut Network, at: (f32, f32), max_velocity: u8, is_producer: bool| -> u32 {
            net.outgoing.push([0; MAX_DEGREE]);
            net.num_outgoing.push(0);
            net.max_velocity.push(max_velocity);
            net.speed_limit.push(max_velocity);
            net.is_target.push(0);
            net.position.push(at);
            producer.push(is_producer);
            (net.outgoing.len() - 1) as u32
        };
        // The first cell of every street, at its intersection, with the street's speed limit.
        let mut streams: Vec<Rng> = (0..n as u64).map(|i| Rng::new(cfg.seed, 1 + i)).collect();
        let mut first = vec![[0u32; MAX_DEGREE]; n];
        for i in 0..n {
            for cell in first[i].iter_mut().take(num_out[i]) {
                let v = random_max_velocity(&mut streams[i], cfg.max_velocity) as u8;
                *cell = push(&mut net, pos[i], v, false);
            }
        }
        // The cells of every street, up to the target intersection, whose first cells follow.
        let mut incoming = vec![[0u32; MAX_DEGREE]; n];
        let mut incoming_count = vec![0usize; n];
        for i in 0..n {
            for k in 0..num_out[i] {
                let t = targets[i][k] as usize;
                let from = first[i][k];
                let (fx, fy) = pos[i];
                let (dx, dy) = (pos[t].0 - fx, pos[t].1 - fy);
                let cells = ((dx * dx + dy * dy).sqrt() / cfg.cell_length) as u64;
                ensure!(
                    net.outgoing.len() as u64 + cells < u32::MAX as u64,
                    "the network has more than 2^32 cells: use fewer intersections or longer cells"
                );
                let v = net.max_velocity[from as usize];
                let mut prev = from;
                for j in 0..cells {
                    let f = j as f32 / cells as f32;
                    let r = &mut streams[i];
                    let is_producer = r.next_f32() < cfg.producer_ratio;
                    let is_target = !is_producer && r.next_f32() < cfg.target_ratio;
                    let cell = push(&mut net, (fx + f * dx, fy + f * dy), v, is_producer);
                    net.is_target[cell as usize] = is_target as u8;
                    net.outgoing[prev as usize][0] = cell;
                    net.num_outgoing[prev as usize] = 1;
                    prev = cell;
                }
                // The last cell leads to every street out of the target intersection, and its
                // light starts red.
                let last = prev as usize;
                net.num_outgoing[last] = num_out[t] as u8;
                net.outgoing[last][..num_out[t]].copy_from_slice(&first[t][..num_out[t]]);
                net.speed_limit[last] = 0;
                incoming[t][incoming_count[t]] = prev;
                incoming_count[t] += 1;
            }
        }
        for (id, is_producer) in producer.into_iter().enumerate() {
            // A dead end removes cars: it cannot produce them.
            if is_producer && net.num_outgoing[id] > 0 {
                net.producers.push(id as u32);
            } else {
                net.plain_cells.push(id as u32);
            }
        }
        for t in 0..n {
            if incoming_count[t] > 0 {
                net.lights.push(LightSpec { cells: incoming[t], num_cells: incoming_count[t] as u32 });
            }
        }
        Ok(net)
    }

    /// Number of cells.
    pub fn num_cells(&self) -> u32 {
        self.outgoing.len() as u32
    }

    /// Number of target cells.
    pub fn targets(&self) -> usize {
        self.is_target.iter().filter(|&&t| t != 0).count()
    }

    /// Cells without exits (they remove cars like targets; only in tiny networks).
    pub fn dead_ends(&self) -> usize {
        self.num_outgoing.iter().filter(|&&n| n == 0).count()
    }

    /// Every cell's [`CellInfo`] at the start (no cars).
    pub fn cell_infos(&self) -> Vec<CellInfo> {
        (0..self.num_cells() as usize).map(|i| self.cell_info(i, self.speed_limit[i], false)).collect()
    }

    /// Cell `i`'s [`CellInfo`] with the speed limit and occupancy it has now.
    fn cell_info(&self, i: usize, speed_limit: u8, occupied: bool) -> CellInfo {
        CellInfo::new(speed_limit as u32, occupied, self.num_outgoing[i] as u32, self.is_target[i] != 0)
    }

    /// The cells with a traffic light: the last cells of the streets into intersections.
    pub fn light_cells(&self) -> HashSet<u32> {
        self.lights.iter().flat_map(|l| l.cells[..l.num_cells as usize].iter().copied()).collect()
    }
}

/// The network's tables on the device (the DSL version's setup reads them).
struct DeviceNetwork {
    outgoing: Buffer<[u32; MAX_DEGREE]>,
    num_outgoing: Buffer<u8>,
    max_velocity: Buffer<u8>,
    speed_limit: Buffer<u8>,
    is_target: Buffer<u8>,
    plain_cells: Buffer<u32>,
    producers: Buffer<u32>,
    lights: Buffer<LightSpec>,
}

impl DeviceNetwork {
    fn upload(exec: &Executor, net: &Network) -> anyhow::Result<Self> {
        Ok(DeviceNetwork {
            outgoing: exec.upload(&net.outgoing)?,
            num_outgoing: exec.upload(&net.num_outgoing)?,
            max_velocity: exec.upload(&net.max_velocity)?,
            speed_limit: exec.upload(&net.speed_limit)?,
            is_target: exec.upload(&net.is_target)?,
            plain_cells: exec.upload(&net.plain_cells)?,
            producers: exec.upload(&net.producers)?,
            lights: exec.upload(&net.lights)?,
        })
    }
}

// ----------------------------------------------------------------------------------------
// Results.

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub cells: u32,
    /// The cars after the last step, sorted by cell.
    pub cars: Vec<CarState>,
    /// Cars created and removed during the run.
    pub created: u64,
    pub removed: u64,
    /// DSL only: car objects in the heap at the end, as the allocator counts them.
    pub objects: Option<u64>,
    /// Device time of all steps (creating the network excluded, as in the original).
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
    /// Device time of creating the network on the device.
    pub setup: Duration,
}

impl Outcome {
    /// The original benchmark's checksum: the number of cars.
    pub fn checksum(&self) -> u64 {
        self.cars.len() as u64
    }

    /// A hash of the final cars (cells, velocities, generators): equal for runs that computed
    /// the same simulation.
    pub fn fingerprint(&self) -> u64 {
        fingerprint(&self.cars)
    }
}

/// FNV-1a over every car.
pub fn fingerprint(cars: &[CarState]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for c in cars {
        eat(c.cell as u64 | (c.velocity as u64) << 32 | (c.max_velocity as u64) << 48);
        let mut rng = c.rng;
        eat(rng.next_u64());
    }
    h
}

/// Exported cars, sorted by cell.
fn sorted(mut cars: Vec<CarState>) -> Vec<CarState> {
    cars.sort_unstable_by_key(|c| c.cell);
    cars
}

// ----------------------------------------------------------------------------------------
// The implementations.

/// One implementation of the traffic simulation, stepped from the host.
pub trait Simulation {
    /// The executor that runs it (for timing).
    fn executor(&self) -> &Executor;
    /// Queue one step.
    fn step(&self) -> dynasoar::host::Result<()>;
    /// Wait for queued steps and report their errors.
    fn sync(&self) -> anyhow::Result<()>;
    /// The cars now, sorted by cell.
    fn cars(&self) -> anyhow::Result<Vec<CarState>>;
    /// Cars created and removed so far.
    fn counters(&self) -> anyhow::Result<(u64, u64)>;
    /// Enumeration time since the last call (DSL only).
    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(Duration::ZERO)
    }
    /// Car objects in the heap (DSL only).
    fn objects(&self) -> anyhow::Result<Option<u64>> {
        Ok(None)
    }
}

/// Where the export kernels put the cars: a counter and room for one car per cell.
struct ExportBuffers {
    count: Buffer<u32>,
    cars: Buffer<CarState>,
}

impl ExportBuffers {
    fn new(exec: &Executor, cells: u32) -> anyhow::Result<Self> {
        Ok(ExportBuffers { count: exec.alloc_zeroed(1)?, cars: exec.alloc_zeroed(cells as usize)? })
    }

    /// Reset the counter; the export's argument.
    fn start(&self, exec: &Executor) -> anyhow::Result<CarExport> {
        exec.write_bytes(&self.count, 0, &0u32.to_ne_bytes())?;
        Ok(CarExport {
            count: self.count.device_array(),
            cars: self.cars.ptr(),
            capacity: self.cars.len() as u32,
            _pad: 0,
        })
    }

    /// The exported cars, sorted by cell.
    fn finish(&self, exec: &Executor) -> anyhow::Result<Vec<CarState>> {
        let n = exec.read_all(&self.count)?[0] as usize;
        ensure!(n <= self.cars.len(), "{n} cars exported from {} cells", self.cars.len());
        Ok(sorted(exec.read(&self.cars, 0, n)?))
    }
}

fn read_counters(exec: &Executor, counters: &Buffer<u64>) -> anyhow::Result<(u64, u64)> {
    let c = exec.read_all(counters)?;
    Ok((c[CREATED as usize], c[REMOVED as usize]))
}

/// The traffic simulation with cells, cars and lights as objects in the dynasoar heap.
pub struct DslSim {
    rt: Runtime<TrafficHeap>,
    args: TrafficArgs,
    heap_bytes: u64,
    counters: Buffer<u64>,
    handles: Buffer<Handle<Cell>>,
    export: ExportBuffers,
    /// Enumeration time of steps, set aside while exports run (their own is not counted).
    enumeration: std::cell::Cell<Duration>,
    /// The step as a step graph (`RunOptions::graph`).
    graph: Option<StepGraph>,
}

/// `e`, with a hint at `--heap-mib` if the heap ran out.
fn out_of_heap(e: dynasoar::host::Error, heap_bytes: u64) -> anyhow::Error {
    let oom = matches!(e, dynasoar::host::Error::OutOfMemory { .. });
    let e = anyhow::Error::new(e);
    if oom {
        e.context(format!(
            "the traffic simulation ran out of its {} MiB heap (try a larger --heap-mib)",
            heap_bytes >> 20
        ))
    } else {
        e
    }
}

impl DslSim {
    /// Create the network's objects; returns the simulation and the device time of the setup.
    pub fn new(
        options: impl Into<RunOptions>,
        cfg: &Config,
        net: &Network,
    ) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let heap_bytes = cfg.heap_bytes.unwrap_or_else(|| Config::default_heap_bytes(net));
        let rt = options.runtime::<TrafficHeap>(heap_bytes).deferred_checks(true).build()?;
        let exec = rt.executor();
        let counters = exec.alloc_zeroed::<u64>(2)?;
        let handles = exec.alloc_zeroed::<Handle<Cell>>(net.num_cells() as usize)?;
        let d = DeviceNetwork::upload(exec, net)?;
        let tables = NetworkTables {
            outgoing: d.outgoing.ptr(),
            num_outgoing: d.num_outgoing.ptr(),
            max_velocity: d.max_velocity.ptr(),
            speed_limit: d.speed_limit.ptr(),
            is_target: d.is_target.ptr(),
            plain_cells: d.plain_cells.ptr(),
            producer_cells: d.producers.ptr(),
            lights: d.lights.ptr(),
            handles: handles.device_array(),
            seed: cfg.seed,
            phase_time: cfg.phase_time,
            _pad: 0,
        };
        let ((), setup) = exec
            .time(|| {
                rt.parallel_new_with(Cell::create, net.plain_cells.len() as u64, tables)?;
                rt.parallel_new_with(ProducerCell::create, net.producers.len() as u64, tables)?;
                rt.parallel_do_with(Cell::register, tables)?;
                rt.parallel_do_with(Cell::link, tables)?;
                rt.parallel_new_with(TrafficLight::create, net.lights.len() as u64, tables)
            })
            .map_err(|e| out_of_heap(e, heap_bytes))?;
        rt.sync().map_err(|e| out_of_heap(e, heap_bytes))?;
        rt.take_timings()?;
        drop(d);
        let export = ExportBuffers::new(exec, net.num_cells())?;
        let args = cfg.args(&counters);
        let graph = options.capture(&rt, |rt| Self::queue_step(rt, args))?;
        let enumeration = Default::default();
        Ok((DslSim { rt, args, heap_bytes, counters, handles, export, enumeration, graph }, setup))
    }

    /// Queue one step's launches one by one.
    fn queue_step(rt: &Runtime<TrafficHeap>, args: TrafficArgs) -> dynasoar::host::Result<()> {
        rt.parallel_do_with(ProducerCell::create_car, args)?;
        rt.parallel_do(TrafficLight::step)?;
        rt.parallel_do_with(Car::prepare, args)?;
        rt.parallel_do_with(Car::advance, args)
    }

    /// The runtime (to count and collect objects).
    pub fn runtime(&self) -> &Runtime<TrafficHeap> {
        &self.rt
    }

    /// The handle of every cell, by id.
    pub fn handles(&self) -> anyhow::Result<Vec<Handle<Cell>>> {
        Ok(self.rt.executor().read_all(&self.handles)?)
    }

    /// Check that the objects agree with `net` and with each other; returns the number of cars.
    ///
    /// - every cell id has one cell object, with the network's exits, kind and speed limit, a
    ///   limit of 0 only on light cells, and at most one green cell per light;
    /// - every live car is on a cell, at most one car per cell, and the cells marked occupied
    ///   are exactly the cars' cells (no car lost or leaked);
    /// - speeds: a car moved at most its own maximum, which is below the configured one, and
    ///   at most the speed limit of the street it is on;
    /// - the allocator counts as many cars as there are, and created minus removed cars.
    pub fn verify(&self, net: &Network) -> anyhow::Result<u64> {
        self.sync()?;
        let rt = &self.rt;
        let handles = self.handles()?;
        ensure!(handles.len() == net.num_cells() as usize);
        let id_of: HashMap<u64, u32> =
            handles.iter().enumerate().map(|(i, h)| (h.raw().0, i as u32)).collect();
        ensure!(
            id_of.len() == handles.len() && !id_of.contains_key(&0),
            "cell handles are not unique or null"
        );
        let cells = rt.collect::<Cell>()?;
        ensure!(cells.len() == handles.len(), "{} cell objects for {} cells", cells.len(), handles.len());
        let light_cells = net.light_cells();
        let mut limits = vec![0u32; cells.len()];
        let mut occupied = HashSet::new();
        for c in &cells {
            let id = c.id as usize;
            ensure!(id < handles.len(), "a cell object has id {id}");
            let n = net.num_outgoing[id] as usize;
            let exits = c.link.info.exits();
            ensure!(exits as usize == n, "cell {id}: {exits} exits, the network has {n}");
            for k in 0..n {
                let handle = if k == 0 { c.link.next } else { c.branches[k - 1] };
                let exit = id_of.get(&handle.raw().0).copied();
                ensure!(exit == Some(net.outgoing[id][k]), "cell {id}: exit {k} is {exit:?}");
            }
            ensure!(c.link.info.is_target() == (net.is_target[id] != 0), "cell {id}: wrong target flag");
            ensure!(c.max_velocity == net.max_velocity[id] as u32, "cell {id}: wrong speed limit");
            let limit = c.link.info.speed_limit();
            ensure!(
                limit == c.max_velocity || (limit == 0 && light_cells.contains(&c.id)),
                "cell {id}: current speed limit {limit} (street: {})",
                c.max_velocity
            );
            limits[id] = limit;
            if !c.link.info.is_free() {
                occupied.insert(c.id);
            }
        }
        for (i, light) in net.lights.iter().enumerate() {
            let green =
                light.cells[..light.num_cells as usize].iter().filter(|&&c| limits[c as usize] > 0).count();
            ensure!(green <= 1, "light {i} shows green on {green} streets");
        }
        crate::check_heap(rt)?;
        let live: HashSet<u64> = rt.handles::<Car>()?.iter().map(|h| h.raw().0).collect();
        let cars = rt.collect::<Car>()?;
        ensure!(cars.len() == live.len(), "{} cars collected, {} live", cars.len(), live.len());
        let mut positions = HashSet::new();
        for car in &cars {
            let cell = *id_of.get(&car.position.raw().0).context("a car's position is no cell")?;
            ensure!(positions.insert(cell), "two cars on cell {cell}");
            ensure!(
                car.max_velocity < self.args.max_velocity && car.max_velocity >= self.args.max_velocity / 2,
                "a car has maximum velocity {}",
                car.max_velocity
            );
            ensure!(car.velocity <= car.max_velocity, "a car moved {} > its maximum", car.velocity);
            ensure!(
                car.velocity <= net.max_velocity[cell as usize] as u32,
                "a car on cell {cell} moved {} beyond the street's limit {}",
                car.velocity,
                net.max_velocity[cell as usize]
            );
        }
        ensure!(
            positions == occupied,
            "the occupied cells are not the cells of the live cars (a leak or a lost car)"
        );
        let count = rt.count::<Car>()?;
        ensure!(count == cars.len() as u64, "the allocator counts {count} cars, {} exist", cars.len());
        let (created, removed) = self.counters()?;
        ensure!(created - removed == count, "{created} cars created, {removed} removed, {count} left");
        Ok(count)
    }
}

impl Simulation for DslSim {
    fn executor(&self) -> &Executor {
        self.rt.executor()
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        run_step(&self.rt, self.graph.as_ref(), |rt| Self::queue_step(rt, self.args))
    }

    fn sync(&self) -> anyhow::Result<()> {
        self.rt.sync().map_err(|e| out_of_heap(e, self.heap_bytes))
    }

    fn cars(&self) -> anyhow::Result<Vec<CarState>> {
        self.sync()?;
        self.enumeration.set(self.enumeration.get() + self.rt.take_timings()?.enumeration);
        let exec = self.rt.executor();
        let out = self.export.start(exec)?;
        self.rt.parallel_do_with(Car::export, out)?;
        self.sync()?;
        self.rt.take_timings()?;
        self.export.finish(exec)
    }

    fn counters(&self) -> anyhow::Result<(u64, u64)> {
        self.sync()?;
        read_counters(self.rt.executor(), &self.counters)
    }

    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(self.enumeration.take() + self.rt.take_timings()?.enumeration)
    }

    fn objects(&self) -> anyhow::Result<Option<u64>> {
        Ok(Some(self.rt.count::<Car>()?))
    }
}

/// The traffic baseline with structure-of-arrays storage.
pub struct SoaSim {
    exec: Executor,
    /// The arrays (the presence flags swap every step).
    t: std::cell::Cell<SoaTraffic>,
    cells: Grid,
    producers: Grid,
    lights: Grid,
    counters: Buffer<u64>,
    export: ExportBuffers,
    _buffers: Keep,
}

/// Buffers kept alive while kernels use their addresses.
#[derive(Default)]
struct Keep(Vec<Box<dyn std::any::Any>>);

impl Keep {
    /// Keep `buffer`; its address.
    fn ptr<T: Plain>(&mut self, buffer: Buffer<T>) -> DevPtr<T> {
        let p = buffer.ptr();
        self.0.push(Box::new(buffer));
        p
    }
}

impl SoaSim {
    /// Upload the network; returns the simulation and the device time of the setup (none).
    pub fn new(
        options: impl Into<RunOptions>,
        cfg: &Config,
        net: &Network,
    ) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let n = net.num_cells() as usize;
        let counters = exec.alloc_zeroed::<u64>(2)?;
        let mut keep = Keep::default();
        let light_cells: Vec<[u32; MAX_DEGREE]> = net.lights.iter().map(|l| l.cells).collect();
        let light_num: Vec<u32> = net.lights.iter().map(|l| l.num_cells).collect();
        let rngs: Vec<Rng> = net.producers.iter().map(|&c| producer_rng(cfg.seed, c)).collect();
        let t = SoaTraffic {
            num_cells: n as u32,
            num_producers: net.producers.len() as u32,
            num_lights: net.lights.len() as u32,
            _pad: 0,
            next: keep.ptr(exec.upload(&net.outgoing.iter().map(|o| o[0]).collect::<Vec<_>>())?),
            branches: keep.ptr(
                exec.upload(
                    &net.outgoing
                        .iter()
                        .map(|o| std::array::from_fn(|k| o[k + 1]))
                        .collect::<Vec<[u32; MAX_DEGREE - 1]>>(),
                )?,
            ),
            info: keep.ptr(exec.upload(&net.cell_infos())?),
            max_velocity: keep.ptr(exec.upload(&net.max_velocity)?),
            has_car: keep.ptr(exec.alloc_zeroed::<u8>(n)?),
            has_car_next: keep.ptr(exec.alloc_zeroed::<u8>(n)?),
            velocity: keep.ptr(exec.alloc_zeroed::<u32>(n)?),
            car_max_velocity: keep.ptr(exec.alloc_zeroed::<u32>(n)?),
            car_rng: keep.ptr(exec.alloc_zeroed::<Rng>(n)?),
            destination: keep.ptr(exec.alloc_zeroed::<u32>(n)?),
            producers: keep.ptr(exec.upload(&net.producers)?),
            producer_rng: keep.ptr(exec.upload(&rngs)?),
            light_cells: keep.ptr(exec.upload(&light_cells)?),
            light_num_cells: keep.ptr(exec.upload(&light_num)?),
            light_timer: keep.ptr(exec.alloc_zeroed::<u32>(net.lights.len())?),
            light_phase: keep.ptr(exec.alloc_zeroed::<u32>(net.lights.len())?),
            phase_time: cfg.phase_time,
            _pad2: 0,
            args: cfg.args(&counters),
        };
        let export = ExportBuffers::new(&exec, n as u32)?;
        let sim = SoaSim {
            cells: Grid::for_elements(n, THREADS),
            producers: Grid::for_elements(net.producers.len(), THREADS),
            lights: Grid::for_elements(net.lights.len(), THREADS),
            exec,
            t: std::cell::Cell::new(t),
            counters,
            export,
            _buffers: keep,
        };
        Ok((sim, Duration::ZERO))
    }
}

impl Simulation for SoaSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        let (e, t) = (&self.exec, self.t.get());
        e.launch(&TRAFFIC_SOA_CREATE_CARS, self.producers, t)?;
        e.launch(&TRAFFIC_SOA_LIGHTS, self.lights, t)?;
        e.launch(&TRAFFIC_SOA_PREPARE, self.cells, t)?;
        e.launch(&TRAFFIC_SOA_ADVANCE, self.cells, t)?;
        self.t.set(SoaTraffic { has_car: t.has_car_next, has_car_next: t.has_car, ..t });
        Ok(())
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn cars(&self) -> anyhow::Result<Vec<CarState>> {
        let out = self.export.start(&self.exec)?;
        self.exec.launch(&TRAFFIC_SOA_EXPORT, self.cells, SoaExport { traffic: self.t.get(), out })?;
        self.export.finish(&self.exec)
    }

    fn counters(&self) -> anyhow::Result<(u64, u64)> {
        read_counters(&self.exec, &self.counters)
    }
}

/// The traffic baseline with array-of-structures storage.
pub struct AosSim {
    exec: Executor,
    /// The arrays (the parity flips every step).
    t: std::cell::Cell<AosTraffic>,
    cells: Grid,
    producers: Grid,
    lights: Grid,
    counters: Buffer<u64>,
    export: ExportBuffers,
    _buffers: (Buffer<AosCell>, Buffer<AosProducer>, Buffer<AosLight>),
}

impl AosSim {
    /// Upload the network; returns the simulation and the device time of the setup (none).
    pub fn new(
        options: impl Into<RunOptions>,
        cfg: &Config,
        net: &Network,
    ) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let n = net.num_cells() as usize;
        let counters = exec.alloc_zeroed::<u64>(2)?;
        let cells: Vec<AosCell> = (0..n)
            .map(|i| AosCell {
                outgoing: net.outgoing[i],
                num_outgoing: net.num_outgoing[i],
                is_target: net.is_target[i],
                max_velocity: net.max_velocity[i],
                speed_limit: net.speed_limit[i],
                ..AosCell::default()
            })
            .collect();
        let producers: Vec<AosProducer> = net
            .producers
            .iter()
            .map(|&cell| AosProducer { cell, _pad: 0, rng: producer_rng(cfg.seed, cell) })
            .collect();
        let lights: Vec<AosLight> = net
            .lights
            .iter()
            .map(|l| AosLight {
                cells: l.cells,
                num_cells: l.num_cells,
                timer: 0,
                phase: 0,
                phase_time: cfg.phase_time,
            })
            .collect();
        let buffers = (exec.upload(&cells)?, exec.upload(&producers)?, exec.upload(&lights)?);
        drop(cells);
        let t = AosTraffic {
            cells: buffers.0.ptr(),
            producers: buffers.1.ptr(),
            lights: buffers.2.ptr(),
            num_cells: n as u32,
            num_producers: producers.len() as u32,
            num_lights: lights.len() as u32,
            parity: 0,
            args: cfg.args(&counters),
        };
        let export = ExportBuffers::new(&exec, n as u32)?;
        let sim = AosSim {
            cells: Grid::for_elements(n, THREADS),
            producers: Grid::for_elements(producers.len(), THREADS),
            lights: Grid::for_elements(lights.len(), THREADS),
            exec,
            t: std::cell::Cell::new(t),
            counters,
            export,
            _buffers: buffers,
        };
        Ok((sim, Duration::ZERO))
    }
}

impl Simulation for AosSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        let (e, t) = (&self.exec, self.t.get());
        e.launch(&TRAFFIC_AOS_CREATE_CARS, self.producers, t)?;
        e.launch(&TRAFFIC_AOS_LIGHTS, self.lights, t)?;
        e.launch(&TRAFFIC_AOS_PREPARE, self.cells, t)?;
        e.launch(&TRAFFIC_AOS_ADVANCE, self.cells, t)?;
        self.t.set(AosTraffic { parity: t.parity ^ 1, ..t });
        Ok(())
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn cars(&self) -> anyhow::Result<Vec<CarState>> {
        let out = self.export.start(&self.exec)?;
        self.exec.launch(&TRAFFIC_AOS_EXPORT, self.cells, AosExport { traffic: self.t.get(), out })?;
        self.export.finish(&self.exec)
    }

    fn counters(&self) -> anyhow::Result<(u64, u64)> {
        read_counters(&self.exec, &self.counters)
    }
}

/// Create `implementation` of `cfg` on `net`; returns it and the device time of the setup.
pub fn simulation(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    net: &Network,
) -> anyhow::Result<(Box<dyn Simulation>, Duration)> {
    let options: RunOptions = options.into();
    Ok(match implementation {
        Implementation::Dynasoar => {
            let (s, t) = DslSim::new(options, cfg, net)?;
            (Box::new(s), t)
        }
        Implementation::Soa => {
            let (s, t) = SoaSim::new(options, cfg, net)?;
            (Box::new(s), t)
        }
        Implementation::Aos => {
            let (s, t) = AosSim::new(options, cfg, net)?;
            (Box::new(s), t)
        }
    })
}

// ----------------------------------------------------------------------------------------
// A plain host reference of the rules.

/// A car of the reference.
#[derive(Clone, Copy, Debug)]
struct RefCar {
    velocity: u32,
    max_velocity: u32,
    rng: Rng,
    destination: u32,
}

/// The traffic rules computed one car after another on the host, from the same rule functions:
/// what every implementation must compute.
pub struct Reference<'a> {
    net: &'a Network,
    cfg: Config,
    phase_time: u32,
    speed_limit: Vec<u8>,
    cars: Vec<Option<RefCar>>,
    producer_rngs: Vec<Rng>,
    lights: Vec<(u32, u32)>,
    created: u64,
    removed: u64,
}

struct HostStreets<'a> {
    net: &'a Network,
    speed_limit: &'a [u8],
    cars: &'a [Option<RefCar>],
}

impl Streets for HostStreets<'_> {
    type Cell = u32;

    fn info(&self, cell: u32) -> (CellInfo, u32) {
        let c = cell as usize;
        (self.net.cell_info(c, self.speed_limit[c], self.cars[c].is_some()), self.net.outgoing[c][0])
    }

    fn branch(&self, cell: u32, k: u32) -> u32 {
        self.net.outgoing[cell as usize][k as usize % MAX_DEGREE]
    }
}

impl<'a> Reference<'a> {
    pub fn new(cfg: &Config, net: &'a Network) -> Self {
        Reference {
            net,
            cfg: *cfg,
            phase_time: cfg.phase_time,
            speed_limit: net.speed_limit.clone(),
            cars: vec![None; net.num_cells() as usize],
            producer_rngs: net.producers.iter().map(|&c| producer_rng(cfg.seed, c)).collect(),
            lights: vec![(0, 0); net.lights.len()],
            created: 0,
            removed: 0,
        }
    }

    /// One step.
    pub fn step(&mut self) {
        let net = self.net;
        for (i, &c) in net.producers.iter().enumerate() {
            if self.cars[c as usize].is_none()
                && let Some((rng, max_velocity)) =
                    new_car(&mut self.producer_rngs[i], self.cfg.car_ratio, self.cfg.max_velocity)
            {
                self.cars[c as usize] = Some(RefCar { velocity: 0, max_velocity, rng, destination: c });
                self.created += 1;
            }
        }
        for (light, state) in net.lights.iter().zip(&mut self.lights) {
            let (timer, phase, switched) = light_step(state.0, state.1, light.num_cells, self.phase_time);
            if switched {
                self.speed_limit[light.cells[state.1 as usize] as usize] = 0;
                let green = light.cells[phase as usize] as usize;
                self.speed_limit[green] = net.max_velocity[green];
            }
            *state = (timer, phase);
        }
        let mut plans = Vec::new();
        {
            let streets = HostStreets { net, speed_limit: &self.speed_limit, cars: &self.cars };
            for (c, car) in self.cars.iter().enumerate() {
                if let Some(car) = car {
                    let mut rng = car.rng;
                    let (destination, velocity) = drive(
                        &streets,
                        c as u32,
                        car.velocity,
                        car.max_velocity,
                        self.cfg.slow_down,
                        &mut rng,
                    );
                    plans.push((c, RefCar { velocity, rng, destination, ..*car }));
                }
            }
        }
        let mut next = vec![None; self.cars.len()];
        for (c, car) in plans {
            let d = car.destination as usize;
            if d != c && is_exit(net.num_outgoing[d] as u32, net.is_target[d] != 0) {
                self.removed += 1;
                continue;
            }
            assert!(next[d].is_none(), "two cars move to cell {d}");
            next[d] = Some(car);
        }
        self.cars = next;
    }

    /// The cars now, sorted by cell.
    pub fn cars(&self) -> Vec<CarState> {
        self.cars
            .iter()
            .enumerate()
            .filter_map(|(c, car)| {
                car.map(|car| CarState {
                    cell: c as u32,
                    velocity: car.velocity,
                    max_velocity: car.max_velocity,
                    _pad: 0,
                    rng: car.rng,
                })
            })
            .collect()
    }

    /// Cars created and removed so far.
    pub fn counters(&self) -> (u64, u64) {
        (self.created, self.removed)
    }
}

// ----------------------------------------------------------------------------------------
// Running and rendering.

/// Run `implementation` of `cfg` on `net` (see [`Network::generate`]) on the backend of
/// `options`.
pub fn run_on(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    net: &Network,
    recorder: &mut Recorder,
    show_progress: bool,
) -> anyhow::Result<Outcome> {
    let options: RunOptions = options.into();
    let label = options.label(implementation);
    let (sim, setup) = simulation(implementation, options, cfg, net)
        .with_context(|| format!("setting up the {label} version"))?;
    let bar = progress::steps(cfg.steps as u64, label, show_progress);
    let background = if recorder.enabled() { Some(draw_network(net, recorder.width())) } else { None };
    let render = |step: u32, cars: &[CarState], recorder: &mut Recorder| -> anyhow::Result<()> {
        match &background {
            Some(bg) => recorder.record(step, draw_cars(bg, net, cars)),
            None => Ok(()),
        }
    };
    if recorder.wants(0, cfg.steps) {
        render(0, &sim.cars()?, recorder)?;
    }
    let mut total = Duration::ZERO;
    let mut enumeration = Duration::ZERO;
    let mut step = 0;
    while step < cfg.steps {
        // Run up to the next rendered step, at most a chunk, without a host round trip.
        let mut until = (step + CHUNK).min(cfg.steps);
        if let Some(s) = (step + 1..=until).find(|&s| recorder.wants(s, cfg.steps)) {
            until = s;
        }
        let ((), t) = sim.executor().time(|| {
            for _ in step..until {
                sim.step()?;
            }
            Ok(())
        })?;
        sim.sync()?;
        total += t;
        enumeration += sim.take_enumeration()?;
        bar.inc((until - step) as u64);
        step = until;
        if recorder.wants(step, cfg.steps) {
            render(step, &sim.cars()?, recorder)?;
        }
    }
    bar.finish_and_clear();
    let cars = sim.cars()?;
    let (created, removed) = sim.counters()?;
    let objects = sim.objects()?;
    Ok(Outcome { cells: net.num_cells(), cars, created, removed, objects, total, enumeration, setup })
}

/// Generate the network of `cfg` and run `implementation` on it.
pub fn run(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    recorder: &mut Recorder,
    show_progress: bool,
) -> anyhow::Result<Outcome> {
    let options: RunOptions = options.into();
    let net = Network::generate(cfg)?;
    run_on(implementation, options, cfg, &net, recorder, show_progress)
}

const ROAD: [u8; 3] = [90, 90, 105];
const GROUND: [u8; 3] = [12, 14, 20];

fn to_pixel(at: (f32, f32), width: u32) -> (i64, i64) {
    let w = width as f32;
    ((at.0 * w) as i64, (at.1 * w) as i64)
}

/// The streets, gray on dark ground, in a square `width` pixels wide.
pub fn draw_network(net: &Network, width: u32) -> Canvas {
    let mut canvas = Canvas::new(width, width, GROUND);
    for &at in &net.position {
        let (x, y) = to_pixel(at, width);
        canvas.set(x, y, ROAD);
    }
    canvas
}

/// `background` (from [`draw_network`]) with every car, colored by its velocity relative to
/// its maximum (blue: standing, red: full speed).
pub fn draw_cars(background: &Canvas, net: &Network, cars: &[CarState]) -> Canvas {
    let mut canvas = Canvas { image: background.image.clone() };
    let width = canvas.width();
    let radius = (width as f32 / 400.0).max(1.2);
    for car in cars {
        let Some(&(x, y)) = net.position.get(car.cell as usize) else { continue };
        let t = car.velocity as f32 / car.max_velocity.max(1) as f32;
        canvas.disc(x * width as f32, y * width as f32, radius, heat(t));
    }
    canvas
}

crate::impl_compared!(Outcome { "cars" => |o| o.cars.len() as u64, "created" => |o| o.created, "removed" => |o| o.removed });
