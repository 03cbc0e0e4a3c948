//! Every app on every general-purpose allocator (the AOS object store, paper Figure 10): the
//! DSL version run on each allocator gives the same result as the hand-written SOA baseline
//! (exactly where the app is deterministic; within rounding for the two whose force sums run in
//! object order), on the CPU here and on the GPU in the bundle. `bitmap` runs BitmapAlloc's own
//! store (one allocation bitmap per class, the BitmapAlloc PTX build); its own tests are at the
//! end.

use dynasoar::baselines::bitmap_store::{BitmapHeader, BitmapStore};
use dynasoar::baselines::host::{BitmapHeap, StoreChoice};
use dynasoar::baselines::malloc::MallocKind;
use dynasoar::host::{Backend, Error, ExecutorOptions, ModelPtx, Runtime};
use dynasoar::math::Vec2;
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::{Implementation, RunOptions};
use dynasoar_examples::{MODELS_AOS_PTX, MODELS_PTX};
use dynasoar_examples::{
    barnes_hut, collision, game_of_life, generation, nbody, structure, sugarscape, traffic, wator,
};
use dynasoar_models::generation::Rule;
use dynasoar_models::semantics::{Animal, Cat, Registry, Zoo};
use dynasoar_tests::{cpu_runtime_on, general_stores, gpu_executor};

fn exec(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

/// The DSL version on `store`, or a baseline (`store` ignored).
fn on(backend: Backend, store: StoreChoice) -> RunOptions {
    RunOptions { exec: exec(backend), store, fixed_pool: false, time_enumeration: true, graph: false }
}

/// The DSL version's heap: on the GPU a generous 1 GiB for every app, as allocators with per-
/// multiprocessor structures (XMalloc's superblocks, ...) need more than the apps' estimate
/// for the dynasoar heap on a machine with 132 multiprocessors, and CUDA's own allocator takes
/// its heap size once per process (from the first app). The CPU uses the apps' defaults.
fn heap(backend: Backend) -> Option<u64> {
    (backend == Backend::Cuda).then_some(1 << 30)
}

fn recorder() -> Recorder {
    Recorder::new(&RenderArgs::default()).unwrap()
}

/// Run `check(store)` for every store, naming the store in a failure.
fn for_every_store(backend: Backend, check: impl Fn(RunOptions)) {
    for store in general_stores() {
        // Progress (shown with --nocapture): a store that hangs is the last one named.
        eprintln!("store {store} ({backend:?}): {}", std::any::type_name_of_val(&check));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(on(backend, store))));
        if let Err(e) = result {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("on allocator `{store}`: {msg}");
        }
    }
}

fn close(a: Vec2, b: Vec2, tolerance: f32) -> bool {
    (a - b).length() <= tolerance * b.length().max(1e-3)
}

fn nbody_case(backend: Backend, bodies: u32, steps: u32) {
    let cfg = nbody::Config { bodies, steps, ..nbody::Config::default() };
    let soa = nbody::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = nbody::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(dsl.bodies.len(), soa.bodies.len());
        for (d, s) in dsl.bodies.iter().zip(&soa.bodies) {
            assert_eq!(d.id, s.id);
            assert!(close(d.pos, s.pos, 1e-4) && close(d.vel, s.vel, 1e-3), "body {}", d.id);
        }
    });
}

fn collision_case(backend: Backend, bodies: u32, steps: u32) {
    let physics = dynasoar_models::collision::Physics { merge_threshold: 0.04, ..Default::default() };
    let cfg = collision::Config {
        bodies,
        steps,
        physics,
        heap_bytes: heap(backend),
        ..collision::Config::default()
    };
    let soa = collision::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert!(soa.bodies.len() < bodies as usize, "bodies merged");
    for_every_store(backend, |opts| {
        let dsl = collision::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(dsl.bodies.len(), soa.bodies.len(), "the same merges");
        for (d, s) in dsl.bodies.iter().zip(&soa.bodies) {
            assert_eq!((d.id, d.members, d.mass), (s.id, s.members, s.mass));
            assert!(close(d.pos, s.pos, 1e-4), "body {}", d.id);
        }
    });
}

fn wator_case(backend: Backend, width: u32, height: u32, steps: u32) {
    let cfg = wator::Config { width, height, steps, heap_bytes: heap(backend), ..wator::Config::default() };
    let soa = wator::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = wator::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.cells == soa.cells, "the same ocean");
        assert_eq!(dsl.populations, soa.populations);
        assert_eq!(dsl.objects, Some((dsl.fish(), dsl.sharks())), "the store counts every agent");
    });
}

fn game_of_life_case(backend: Backend, size: u32, steps: u32) {
    let pattern = game_of_life::Pattern::random(size, size, 0.35, 1).unwrap();
    let cfg = game_of_life::Config {
        steps,
        verify: true,
        heap_bytes: heap(backend),
        ..game_of_life::Config::new(pattern.clone())
    };
    let expected = game_of_life::reference_run(&pattern, steps);
    for_every_store(backend, |opts| {
        let dsl = game_of_life::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(dsl.live, expected);
    });
}

fn sugarscape_case(backend: Backend, width: u32, height: u32, steps: u32) {
    let cfg = sugarscape::Config {
        width,
        height,
        steps,
        heap_bytes: heap(backend),
        ..sugarscape::Config::default()
    };
    let soa = sugarscape::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = sugarscape::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.cells == soa.cells, "the same world");
        assert_eq!(dsl.populations, soa.populations);
    });
}

fn structure_case(backend: Backend, nodes: u32, steps: u32) {
    let physics = dynasoar_models::structure::Physics { dt: 1.0, ..Default::default() };
    let cfg = structure::Config {
        steps,
        physics,
        heap_bytes: heap(backend),
        ..structure::Config::with_nodes(nodes)
    };
    let soa = structure::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = structure::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.state == soa.state, "the same mesh");
        assert_eq!(dsl.history, soa.history);
    });
}

fn traffic_case(backend: Backend, intersections: u32, steps: u32) {
    let cfg = traffic::Config {
        intersections,
        steps,
        cell_length: 0.03,
        producer_ratio: 0.05,
        target_ratio: 0.02,
        car_ratio: 0.2,
        heap_bytes: heap(backend),
        ..traffic::Config::default()
    };
    let soa = traffic::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert!(soa.created > 0 && soa.removed > 0, "cars came and went");
    for_every_store(backend, |opts| {
        let dsl = traffic::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.cars == soa.cars, "the same cars");
        assert_eq!((dsl.created, dsl.removed), (soa.created, soa.removed));
    });
}

fn generation_case(backend: Backend, size: u32, steps: u32) {
    let pattern = generation::burst_pattern(size, size, 10, 40).unwrap();
    let cfg = generation::Config {
        steps,
        rule: Rule::default(),
        heap_bytes: heap(backend),
        ..generation::Config::new(pattern)
    };
    let soa = generation::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = generation::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(dsl.fingerprint(), soa.fingerprint());
    });
}

fn barnes_hut_case(backend: Backend, bodies: u32, steps: u32) {
    let cfg =
        barnes_hut::Config { bodies, steps, heap_bytes: heap(backend), ..barnes_hut::Config::default() };
    let soa = barnes_hut::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = barnes_hut::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.bodies == soa.bodies, "the same bodies");
        assert_eq!(dsl.tree, soa.tree);
    });
}

#[test]
fn nbody_on_every_allocator_on_cpu() {
    nbody_case(Backend::Cpu, 300, 5);
}

#[test]
fn collision_on_every_allocator_on_cpu() {
    collision_case(Backend::Cpu, 400, 10);
}

#[test]
fn wator_on_every_allocator_on_cpu() {
    wator_case(Backend::Cpu, 40, 32, 20);
}

#[test]
fn game_of_life_on_every_allocator_on_cpu() {
    game_of_life_case(Backend::Cpu, 48, 20);
}

#[test]
fn sugarscape_on_every_allocator_on_cpu() {
    sugarscape_case(Backend::Cpu, 48, 40, 30);
}

#[test]
fn structure_on_every_allocator_on_cpu() {
    structure_case(Backend::Cpu, 1500, 5);
}

#[test]
fn traffic_on_every_allocator_on_cpu() {
    traffic_case(Backend::Cpu, 30, 60);
}

#[test]
fn generation_on_every_allocator_on_cpu() {
    generation_case(Backend::Cpu, 60, 12);
}

#[test]
fn barnes_hut_on_every_allocator_on_cpu() {
    barnes_hut_case(Backend::Cpu, 1000, 5);
}

/// The same on the GPU, at sizes where thousands of threads allocate at once.
#[test]
fn every_app_on_every_allocator_on_gpu() {
    if gpu_executor("every_app_on_every_allocator_on_gpu").is_none() {
        return;
    }
    nbody_case(Backend::Cuda, 4000, 5);
    collision_case(Backend::Cuda, 4000, 10);
    wator_case(Backend::Cuda, 256, 200, 30);
    game_of_life_case(Backend::Cuda, 256, 30);
    sugarscape_case(Backend::Cuda, 200, 160, 40);
    structure_case(Backend::Cuda, 20_000, 5);
    traffic_case(Backend::Cuda, 400, 100);
    generation_case(Backend::Cuda, 300, 20);
    barnes_hut_case(Backend::Cuda, 20_000, 5);
}

// BitmapAlloc as the paper built it: one allocation bitmap per class over its slots, which
// `parallel_do` and `device_do` use (dense lists of slots, no pointer tables, no compaction).

const BITMAP: StoreChoice = StoreChoice::Malloc(MallocKind::Bitmap);

/// BitmapAlloc's store under a runtime.
fn bitmap_heap<A: dynasoar::AllocatorSpec>(rt: &Runtime<A>) -> &BitmapHeap {
    rt.object_store().as_any().downcast_ref::<BitmapHeap>().expect("BitmapAlloc's store")
}

/// Type id of class `name` of the zoo.
fn class_id(rt: &Runtime<Zoo>, name: &str) -> u8 {
    rt.classes().iter().position(|c| c.name == name).unwrap() as u8
}

/// Entries of the last listing of class `name`.
fn listed(rt: &Runtime<Zoo>, name: &str) -> u64 {
    bitmap_heap(rt).listed(rt.executor()).unwrap()[class_id(rt, name) as usize]
}

#[test]
fn bitmap_alloc_keeps_one_allocation_bitmap_per_class() {
    // 16 MiB of slots of the largest class: four levels of bitmap, so the listing skips by
    // level 2 and the walk of `device_do` starts at level 3.
    let rt = cpu_runtime_on::<Zoo>(BITMAP, 16 << 20);
    assert!(bitmap_heap(&rt).slots() > 64 * 64 * 64, "{} slots", bitmap_heap(&rt).slots());
    let atomic = cpu_runtime_on::<Zoo>(StoreChoice::Malloc(MallocKind::Atomic), 1 << 20);
    assert!(atomic.object_store().as_any().downcast_ref::<BitmapHeap>().is_none(), "the AOS store");

    // Created: each object once, in its class's bitmap.
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 50u32).unwrap();
    assert_eq!((rt.count::<Cat>().unwrap(), rt.count::<Animal>().unwrap()), (50, 100));
    let handles = rt.handles::<Animal>().unwrap();
    let distinct: std::collections::HashSet<_> = handles.iter().map(|h| h.raw().0).collect();
    assert_eq!((handles.len(), distinct.len()), (100, 100), "every object once");

    // A do-all visits every object exactly once, through the lists.
    rt.parallel_do(Animal::tick).unwrap();
    let animals = rt.collect::<Animal>().unwrap();
    assert_eq!(animals.len(), 100);
    assert!(
        animals.iter().all(|a| a.ticks == 1),
        "{:?}",
        animals.iter().map(|a| a.ticks).collect::<Vec<_>>()
    );
    assert_eq!((listed(&rt, "Cat"), listed(&rt, "Dog")), (50, 50), "one entry per object");

    // Objects created during a do-all are not visited by it.
    rt.parallel_do(Cat::have_kitten).unwrap();
    let cats = rt.collect::<Cat>().unwrap();
    assert_eq!(cats.len(), 100);
    let kittens: Vec<&Cat> = cats.iter().filter(|c| c.base.id >= 100_000).collect();
    assert_eq!(kittens.len(), 50);
    assert!(kittens.iter().all(|c| c.base.ticks == 0), "a kitten was visited by the launch that made it");
    assert!(cats.iter().filter(|c| c.base.id < 100_000).all(|c| c.base.ticks == 11), "each parent once");
    assert_eq!(listed(&rt, "Cat"), 100, "the collect listed the kittens");
    assert_eq!(listed(&rt, "Dog"), 50, "an unchanged class keeps its list");

    // Freed: gone from the class's bitmap and list, not visited again.
    rt.parallel_do(Cat::leave_if_odd).unwrap();
    assert_eq!(rt.count::<Cat>().unwrap(), 50);
    rt.parallel_do(Animal::tick).unwrap();
    assert_eq!(listed(&rt, "Cat"), 50);
    let cats = rt.collect::<Cat>().unwrap();
    assert_eq!(cats.len(), 50);
    assert!(cats.iter().all(|c| c.base.id % 2 == 0));
    assert!(cats.iter().all(|c| c.base.ticks == if c.base.id < 100_000 { 12 } else { 1 }));

    // device_do iterates the cats' list: every cat, once.
    rt.parallel_do(Animal::count_cats).unwrap();
    let animals = rt.collect::<Animal>().unwrap();
    assert_eq!(animals.len(), 100);
    assert!(
        animals.iter().all(|a| a.cats_seen == 50),
        "{:?}",
        animals.iter().map(|a| a.cats_seen).collect::<Vec<_>>()
    );

    rt.reset().unwrap();
    assert_eq!(rt.count::<Animal>().unwrap(), 0);
    rt.parallel_do(Animal::tick).unwrap();
    assert_eq!(listed(&rt, "Cat"), 0, "a reset empties the bitmaps and lists");
    rt.parallel_new(Cat::born, 7).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    assert_eq!((listed(&rt, "Cat"), rt.count::<Cat>().unwrap()), (7, 7), "and the store works after it");
}

/// Freed slots go back to BitmapAlloc at the next `parallel_do` (their memory stays valid
/// until then, as with the other allocators' deferred frees), and are reused.
#[test]
fn bitmap_alloc_gives_freed_slots_back_at_the_next_do_all() {
    let rt = cpu_runtime_on::<Zoo>(BITMAP, 64 << 10);
    let slots = bitmap_heap(&rt).slots();
    assert!(slots > 100, "{slots} slots");
    // Fill every slot.
    rt.parallel_new(Cat::born, slots).unwrap();
    assert_eq!(rt.count::<Cat>().unwrap(), slots);
    // Half free themselves: their slots are not free yet, so a constructor finds no room.
    rt.parallel_do(Cat::leave_if_odd).unwrap();
    let err = rt.parallel_new(Cat::born, 1).unwrap_err();
    assert!(matches!(err, Error::Malloc { .. }) && err.to_string().contains("out of memory"), "{err}");
    let left = rt.count::<Cat>().unwrap();
    assert_eq!(left, slots.div_ceil(2));
    // The next do-all gives them back first: every remaining cat has a kitten in them.
    rt.parallel_do(Cat::have_kitten).unwrap();
    assert_eq!(rt.count::<Cat>().unwrap(), 2 * left);
    let cats = rt.collect::<Cat>().unwrap();
    let kittens: Vec<&Cat> = cats.iter().filter(|c| c.base.id >= 100_000).collect();
    assert_eq!(kittens.len() as u64, left);
    assert!(kittens.iter().all(|c| c.base.ticks == 0 && c.lives == 8), "a kitten was visited");
}

/// `device_do` reads the class's list while nothing changed the class since its listing, and
/// the live bitmap once something did (here objects made and freed outside a `parallel_do`, as
/// a kernel would, with no listing since).
#[test]
fn bitmap_alloc_device_do_sees_objects_made_since_the_listing() {
    let rt = cpu_runtime_on::<Zoo>(BITMAP, 1 << 20);
    rt.parallel_new(Cat::born, 10).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    rt.sync().unwrap();
    let cat = class_id(&rt, "Cat");
    // SAFETY: the runtime's store, on the CPU backend (device memory is host memory), with no
    // kernel running.
    let store = unsafe { BitmapStore::from_ptr(bitmap_heap(&rt).ptr().addr() as usize as *mut BitmapHeader) };
    let seen = |store: &BitmapStore| {
        let mut ids = Vec::new();
        store.for_each_live(cat, |raw| ids.push(raw.0));
        ids.sort();
        ids
    };
    let listed_cats = seen(&store);
    assert_eq!(listed_cats.len(), 10);
    assert_eq!(store.changed(cat, store.parity()).load(), 0, "unchanged since the listing: the list");
    let kitten = Cat { base: Animal { id: 77, ticks: 0, cats_seen: 0 }, lives: 1 };
    let made = store.make_new(&kitten).expect("room for a kitten");
    assert_ne!(store.changed(cat, store.parity()).load(), 0);
    let now = seen(&store);
    assert_eq!(now.len(), 11, "the live bitmap");
    assert!(now.contains(&made.0));
    store.free(made);
    assert_eq!(seen(&store), listed_cats);
    // The next listing gives the kitten's slot back and lists the cats again.
    rt.parallel_do(Animal::tick).unwrap();
    rt.sync().unwrap();
    assert_eq!(store.changed(cat, store.parity()).load(), 0);
    assert_eq!(seen(&store), listed_cats);
    assert_eq!(rt.count::<Cat>().unwrap(), 10);
    // A second free of the same handle is a double free, reported.
    store.free(made);
    let err = rt.sync().unwrap_err();
    assert!(err.to_string().contains("freed twice"), "{err}");
}

/// `device_reduce`'s lanes on the GPU each walk their part (`for_each_object_part`, the
/// store's own: only its entries of the list); the CPU backend folds all parts in one walk
/// (`for_each_object_parted`). Both give every part the same objects in the same order, from
/// the list and from the live bitmap.
#[test]
fn bitmap_alloc_parts_agree_with_the_parted_walk() {
    use dynasoar::engine::{ClassShape, ObjectStore};
    let rt = cpu_runtime_on::<Zoo>(BITMAP, 1 << 20);
    rt.parallel_new(Cat::born, 37).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    rt.sync().unwrap();
    let cat = class_id(&rt, "Cat");
    // SAFETY: as in `bitmap_alloc_device_do_sees_objects_made_since_the_listing`.
    let store = unsafe { BitmapStore::from_ptr(bitmap_heap(&rt).ptr().addr() as usize as *mut BitmapHeader) };
    let check = |store: &BitmapStore, what: &str| {
        for parts in [1u32, 2, 8, 32] {
            let mut parted = vec![Vec::new(); parts as usize];
            store.for_each_object_parted(cat, ClassShape::UNKNOWN, parts, |part, raw| {
                parted[part as usize].push(raw.0)
            });
            assert_eq!(parted.iter().map(Vec::len).sum::<usize>(), store_count(store, cat), "{what}");
            for part in 0..parts {
                let mut own = Vec::new();
                store.for_each_object_part(cat, ClassShape::UNKNOWN, parts, part, |raw| own.push(raw.0));
                assert_eq!(own, parted[part as usize], "{what}: part {part} of {parts}");
            }
        }
    };
    check(&store, "from the list");
    let kitten = Cat { base: Animal { id: 77, ticks: 0, cats_seen: 0 }, lives: 1 };
    store.make_new(&kitten).expect("room for a kitten");
    assert_ne!(store.changed(cat, store.parity()).load(), 0);
    check(&store, "from the live bitmap");
}

/// The same for the AOS store of every general allocator: a lane's part is the list positions
/// `i % parts == part`, on the GPU (`for_each_object_part`) and on the CPU
/// (`for_each_object_parted`), holes of objects being created skipped by both.
#[test]
fn aos_store_parts_agree_with_the_parted_walk() {
    use dynasoar::baselines::aos::{AosHeader, AosStore};
    use dynasoar::baselines::host::AosHeap;
    use dynasoar::engine::{ClassShape, ObjectStore};
    let rt = cpu_runtime_on::<Zoo>(StoreChoice::Malloc(MallocKind::Atomic), 1 << 20);
    rt.parallel_new(Cat::born, 37).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    rt.sync().unwrap();
    let cat = class_id(&rt, "Cat");
    let heap = rt.object_store().as_any().downcast_ref::<AosHeap>().expect("the AOS store");
    // SAFETY: the runtime's store, on the CPU backend (device memory is host memory), with no
    // kernel running.
    let store = unsafe { AosStore::from_ptr(heap.ptr().addr() as usize as *mut AosHeader) };
    let mut all = Vec::new();
    store.for_each_live(cat, |raw| all.push(raw.0));
    assert_eq!(all.len(), 37);
    for parts in [1u32, 2, 8, 32] {
        let mut parted = vec![Vec::new(); parts as usize];
        store.for_each_object_parted(cat, ClassShape::UNKNOWN, parts, |part, raw| {
            parted[part as usize].push(raw.0)
        });
        for part in 0..parts {
            let mut own = Vec::new();
            store.for_each_object_part(cat, ClassShape::UNKNOWN, parts, part, |raw| own.push(raw.0));
            assert_eq!(own, parted[part as usize], "part {part} of {parts}");
            let expected: Vec<u64> =
                all.iter().skip(part as usize).step_by(parts as usize).copied().collect();
            assert_eq!(own, expected, "part {part} of {parts}: every {parts}-th object");
        }
    }
}

fn store_count(store: &BitmapStore, class: u8) -> usize {
    let mut n = 0;
    store.for_each_live(class, |_| n += 1);
    n
}

/// A model without the BitmapAlloc build cannot run on `bitmap` (no silent fallback to the
/// pointer tables): the error names the build to add. The other allocators need the AOS build
/// only.
#[test]
fn bitmap_alloc_needs_the_bitmap_alloc_build() {
    let ptx = ModelPtx::with_aos(MODELS_PTX, MODELS_AOS_PTX);
    let build = |store: StoreChoice| {
        Runtime::<Zoo>::builder(ptx.clone())
            .backend(Backend::Cpu)
            .cpu_threads(2)
            .store(store)
            .quiet(true)
            .build()
    };
    let err = build(BITMAP).err().expect("no BitmapAlloc build");
    assert!(err.to_string().contains("PtxBuilder::bitmap_alloc()"), "{err}");
    build(StoreChoice::Malloc(MallocKind::Atomic)).expect("the AOS build serves the others");
}
