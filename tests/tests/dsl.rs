//! The DSL's semantics on both backends: inheritance and abstract classes, `parallel_do`
//! visiting exactly the objects that existed at launch, self-freeing, `device_do`, atomic
//! fields, casts; and the paper's API example giving identical results on CPU and GPU.

use dynasoar::baselines::host::StoreChoice;
use dynasoar::baselines::malloc::MallocKind;
use dynasoar::engine::DoParams;
use dynasoar::host::{Backend, DoAllLoop, Error, Grid, Runtime, TIMED_LAUNCHES};
use dynasoar::{AllocatorSpec, ClassSpec, Handle};
use dynasoar_models::api_demo::{Bar, DemoAlloc, Foo};
use dynasoar_models::semantics::{Animal, Cat, Dog, Registry, Tables, Zoo};
use dynasoar_tests::{
    cpu_runtime, cpu_runtime_on, general_stores, gpu_executor, gpu_runtime, gpu_runtime_on, runtime_with_loop,
};

fn zoo_semantics(rt: &Runtime<Zoo>) {
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 50u32).unwrap();
    assert_eq!(rt.count::<Cat>().unwrap(), 50);
    assert_eq!(rt.count::<Dog>().unwrap(), 50);
    assert_eq!(rt.count::<Animal>().unwrap(), 100, "a parent counts its subclasses' objects");
    assert_eq!(rt.count::<Registry>().unwrap(), 1);

    // A method of the abstract parent runs on every concrete subclass, once per object.
    rt.parallel_do(Animal::tick).unwrap();
    let animals = rt.collect::<Animal>().unwrap();
    assert_eq!(animals.len(), 100);
    assert!(animals.iter().all(|a| a.ticks == 1), "{animals:?}");

    // Objects created during a parallel_do are not visited by it.
    rt.parallel_do(Cat::have_kitten).unwrap();
    let cats = rt.collect::<Cat>().unwrap();
    assert_eq!(cats.len(), 100);
    let (parents, kittens): (Vec<&Cat>, Vec<&Cat>) = cats.iter().partition(|c| c.base.id < 100_000);
    assert_eq!((parents.len(), kittens.len()), (50, 50));
    assert!(parents.iter().all(|c| c.base.ticks == 11 && c.lives == 9));
    assert!(kittens.iter().all(|c| c.base.ticks == 0 && c.lives == 8), "kittens were visited");
    let mut kitten_ids: Vec<u32> = kittens.iter().map(|c| c.base.id).collect();
    kitten_ids.sort();
    assert_eq!(kitten_ids, (100_000..100_050).collect::<Vec<_>>());

    // An object may free itself.
    rt.parallel_do(Cat::leave_if_odd).unwrap();
    let cats = rt.collect::<Cat>().unwrap();
    assert_eq!(cats.len(), 50);
    assert!(cats.iter().all(|c| c.base.id % 2 == 0));

    // device_do visits every object of the class.
    rt.parallel_do(Animal::count_cats).unwrap();
    let animals = rt.collect::<Animal>().unwrap();
    assert_eq!(animals.len(), 100);
    assert!(
        animals.iter().all(|a| a.cats_seen == 50),
        "{:?}",
        animals.iter().map(|a| a.cats_seen).collect::<Vec<_>>()
    );

    // Read-only methods, type checks and casts (assertions inside trap on failure).
    rt.parallel_do(Animal::check_types).unwrap();

    // Atomic fields, written by every dog at once.
    rt.parallel_do(Dog::report).unwrap();
    let registry = rt.collect::<Registry>().unwrap();
    assert_eq!(registry.len(), 1);
    assert_eq!(registry[0].dogs, 50);
    assert_eq!(registry[0].weight, 25.0);
    assert!(!registry[0].last.is_null());
    let dogs = rt.collect::<Dog>().unwrap();
    assert!(dogs.iter().all(|d| d.bones == [1, 2, 4] && d.collar == 1 && d.base.id >= 1000));

    let stats = rt.stats().unwrap();
    let cat_stats = &stats.classes[1];
    assert_eq!((cat_stats.name, cat_stats.objects), ("Cat", 50));
    if rt.heap().is_some() {
        assert!(stats.fill() > 0.0 && stats.fragmentation() < 1.0);
    }

    rt.reset().unwrap();
    assert_eq!(rt.count::<Animal>().unwrap(), 0);
}

#[test]
fn dsl_semantics_on_cpu() {
    zoo_semantics(&cpu_runtime::<Zoo>(8 << 20));
}

#[test]
fn dsl_semantics_on_gpu() {
    let Some(rt) = gpu_runtime::<Zoo>("dsl_semantics_on_gpu", 64 << 20) else { return };
    zoo_semantics(&rt);
}

#[test]
fn dsl_semantics_with_the_streaming_loop_on_cpu() {
    zoo_semantics(&runtime_with_loop::<Zoo>(None, 8 << 20, DoAllLoop::Streaming).unwrap());
}

#[test]
fn dsl_semantics_with_the_streaming_loop_on_gpu() {
    let test = "dsl_semantics_with_the_streaming_loop_on_gpu";
    let Some(rt) = runtime_with_loop::<Zoo>(Some(test), 64 << 20, DoAllLoop::Streaming) else { return };
    zoo_semantics(&rt);
}

/// Both loops give the API example the same results. On the GPU, where a warp's lanes share
/// list entries, Bar's 51 objects per block make warps span two blocks a round.
#[test]
fn both_loops_give_the_same_results() {
    let n = 200_000;
    let plain = api_demo(&runtime_with_loop::<DemoAlloc>(None, 64 << 20, DoAllLoop::Plain).unwrap(), n);
    check_api_demo(&plain.0, &plain.1, n);
    // Handles differ between runtimes (addresses); everything else is identical.
    let strip = |fs: &[Foo]| fs.iter().map(|f| (f.a, f.b.to_bits())).collect::<Vec<_>>();
    let streamed =
        api_demo(&runtime_with_loop::<DemoAlloc>(None, 64 << 20, DoAllLoop::Streaming).unwrap(), n);
    assert_eq!(strip(&streamed.0), strip(&plain.0));
    assert_eq!(streamed.1, plain.1);
    let test = "both_loops_give_the_same_results (GPU)";
    let Some(gpu) = runtime_with_loop::<DemoAlloc>(Some(test), 64 << 20, DoAllLoop::Streaming) else {
        return;
    };
    let on_gpu = api_demo(&gpu, n);
    assert_eq!(strip(&on_gpu.0), strip(&plain.0));
    assert_eq!(on_gpu.1, plain.1);
}

/// The streaming loop visits every object once whatever the length of the class's list. With
/// N a multiple of the warp size (here 64), each group of N threads takes a run of consecutive
/// list positions: the counts below give runs of one or two positions and runs that end inside
/// a chunk of 32, the last run shorter than the others and some groups without one (on an H200,
/// whose grid has 4,224 groups; other cards split them otherwise, and the counts still cover
/// short, long and uneven runs).
#[test]
fn the_streaming_loop_visits_every_object_once_on_gpu() {
    use dynasoar::AllocatorSpec;
    use dynasoar_models::field_bench::{Scalar, ScalarHeap, VALUES};
    let test = "the_streaming_loop_visits_every_object_once_on_gpu";
    for n in [1u64, 100, 64 * 4224 + 1, 64 * 4224 * 3 - 7, 64 * 4224 * 40 + 123] {
        let heap = n.div_ceil(64) * ScalarHeap::BLOCK_BYTES + (8 << 20);
        let Some(rt) = runtime_with_loop::<ScalarHeap>(Some(test), heap, DoAllLoop::Streaming) else {
            return;
        };
        rt.parallel_new(Scalar::create, n).unwrap();
        for _ in 0..2 {
            rt.parallel_do(Scalar::bump).unwrap();
        }
        let mut xs: Vec<f32> = rt.collect::<Scalar>().unwrap().into_iter().map(|s| s.x).collect();
        xs.sort_by(f32::total_cmp);
        let mut want: Vec<f32> = (0..n).map(|i| (i % VALUES) as f32 + 2.0).collect();
        want.sort_by(f32::total_cmp);
        assert!(xs == want, "{n} objects: not every object was bumped exactly twice");
    }
}

/// The plain loop's grid (`DoAllWaves`) changes which thread visits an object, never which
/// objects are visited: at one, three and sixteen times the wave grid, and under the timed
/// choice (whose trials launch 1, 2 and 4 times it in turn and then keep one), every object of
/// classes from one object to 40 thread blocks' worth of blocks is bumped exactly once a
/// launch, and the timed choice decides after its trials.
#[test]
fn every_grid_of_the_plain_loop_visits_every_object_once_on_gpu() {
    use dynasoar::AllocatorSpec;
    use dynasoar::host::{DoAllWaves, WAVE_CHOICES, WAVE_RETRIAL_AFTER};
    use dynasoar_models::field_bench::{Scalar, ScalarHeap, VALUES};
    let test = "every_grid_of_the_plain_loop_visits_every_object_once_on_gpu";
    // Enough launches for the timed choice's trials (the first launch of each grid untimed,
    // then `TIMED_LAUNCHES` each) and a few after its decision.
    let trial = WAVE_CHOICES.len() as u32 * (1 + TIMED_LAUNCHES);
    for waves in [DoAllWaves::Fixed(1), DoAllWaves::Fixed(3), DoAllWaves::Fixed(16), DoAllWaves::Auto] {
        for n in [1u64, 100, 64 * 4224 + 1, 64 * 4224 * 40 + 123] {
            // For 100 objects under the timed choice, past its second trial too.
            let retrial = waves == DoAllWaves::Auto && n == 100;
            let launches = if retrial { trial + WAVE_RETRIAL_AFTER + trial + 3 } else { trial + 3 };
            let heap = n.div_ceil(64) * ScalarHeap::BLOCK_BYTES + (8 << 20);
            let Some(builder) = dynasoar_tests::runtime_builder::<ScalarHeap>(Some(test)) else { return };
            let rt =
                builder.heap_bytes(heap).do_all_loop(DoAllLoop::Plain).do_all_waves(waves).build().unwrap();
            assert_eq!(rt.do_all_wave_choice(), waves);
            rt.parallel_new(Scalar::create, n).unwrap();
            for _ in 0..launches {
                rt.parallel_do(Scalar::bump).unwrap();
                // Each launch's timed trial is read without waiting; a sync lets the next
                // launch see it, so the decision falls within `launches`.
                rt.sync().unwrap();
            }
            let mut xs: Vec<f32> = rt.collect::<Scalar>().unwrap().into_iter().map(|s| s.x).collect();
            xs.sort_by(f32::total_cmp);
            let mut want: Vec<f32> = (0..n).map(|i| (i % VALUES) as f32 + launches as f32).collect();
            want.sort_by(f32::total_cmp);
            assert!(xs == want, "{waves:?}, {n} objects: not every object was bumped once a launch");
            let choices = rt.do_all_waves();
            if waves == DoAllWaves::Auto {
                let bump =
                    choices.iter().find(|c| c.kernel.contains("Scalar__bump")).expect("bump was timed");
                assert!(bump.waves.is_some(), "{n} objects: no decision after {launches} launches: {bump:?}");
                assert!(bump.times.iter().all(|t| t.is_some()), "{bump:?}");
                assert_eq!(bump.decisions, if retrial { 2 } else { 1 }, "{n} objects: {bump:?}");
                println!("{test}: {n} objects: {bump:?}");
            } else {
                assert!(choices.is_empty(), "{waves:?} times nothing: {choices:?}");
            }
        }
    }
}

/// On the CPU backend every choice of grid runs one wave grid (its worker threads take
/// contiguous shares), and nothing is timed.
#[test]
fn the_plain_loop_grid_is_one_wave_grid_on_cpu() {
    use dynasoar::host::DoAllWaves;
    for waves in [DoAllWaves::Auto, DoAllWaves::Fixed(4)] {
        let rt = dynasoar_tests::runtime_builder::<DemoAlloc>(None)
            .unwrap()
            .heap_bytes(8 << 20)
            .do_all_waves(waves)
            .build()
            .unwrap();
        assert_eq!(rt.do_all_wave_choice(), DoAllWaves::Fixed(1));
        rt.parallel_new(Foo::create, 100).unwrap();
        for _ in 0..14 {
            rt.parallel_do_with(Foo::increment, 1i32).unwrap();
        }
        assert!(rt.do_all_waves().is_empty(), "{waves:?}: {:?}", rt.do_all_waves());
        let mut a: Vec<i32> = rt.collect::<Foo>().unwrap().iter().map(|f| f.a).collect();
        a.sort();
        assert_eq!(a, (14..114).collect::<Vec<i32>>());
    }
}

/// The adaptive choice times both loops on the first launches of a method and then keeps one,
/// without changing what the method does.
#[test]
fn the_adaptive_loop_decides_on_gpu() {
    let test = "the_adaptive_loop_decides_on_gpu";
    let Some(rt) = runtime_with_loop::<DemoAlloc>(Some(test), 64 << 20, DoAllLoop::Adaptive) else { return };
    let n = 100_000;
    rt.parallel_new(Foo::create, n).unwrap();
    let launches = 2 + 2 * TIMED_LAUNCHES + 4;
    for _ in 0..launches {
        rt.parallel_do_with(Foo::increment, 1i32).unwrap();
    }
    let foos = rt.collect::<Foo>().unwrap();
    assert_eq!(foos.len() as u64, n);
    let fresh = runtime_with_loop::<DemoAlloc>(None, 64 << 20, DoAllLoop::Plain).unwrap();
    fresh.parallel_new(Foo::create, n).unwrap();
    for _ in 0..launches {
        fresh.parallel_do_with(Foo::increment, 1i32).unwrap();
    }
    let mut expected: Vec<i32> = fresh.collect::<Foo>().unwrap().iter().map(|f| f.a).collect();
    let mut got: Vec<i32> = foos.iter().map(|f| f.a).collect();
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    let choices = rt.do_all_loops();
    let foo = choices.iter().find(|c| c.kernel.contains("Foo__increment")).expect("Foo::increment was tuned");
    assert!(foo.streaming.is_some(), "no decision after {launches} launches: {foo:?}");
    assert!(foo.plain.is_some() && foo.streamed.is_some(), "{foo:?}");
    println!("{test}: {foo:?}");
}

#[test]
fn the_adaptive_and_auto_loops_are_plain_on_cpu() {
    for choice in [DoAllLoop::Adaptive, DoAllLoop::Auto] {
        let rt = runtime_with_loop::<DemoAlloc>(None, 8 << 20, choice).unwrap();
        assert_eq!(rt.do_all_loop(), DoAllLoop::Plain);
        rt.parallel_new(Foo::create, 100).unwrap();
        for _ in 0..12 {
            rt.parallel_do_with(Foo::increment, 1i32).unwrap();
        }
        assert!(rt.do_all_loops().is_empty(), "{choice:?}: {:?}", rt.do_all_loops());
        let mut a: Vec<i32> = rt.collect::<Foo>().unwrap().iter().map(|f| f.a).collect();
        a.sort();
        assert_eq!(a, (12..112).collect::<Vec<i32>>());
    }
}

/// The default choice streams a method exactly when its streaming kernel fills a
/// multiprocessor, decides on the first launch, and changes no result.
#[test]
fn the_auto_loop_follows_occupancy_on_gpu() {
    let test = "the_auto_loop_follows_occupancy_on_gpu";
    let Some(rt) = runtime_with_loop::<Zoo>(Some(test), 64 << 20, DoAllLoop::default()) else { return };
    assert_eq!(rt.do_all_loop(), DoAllLoop::Auto);
    zoo_semantics(&rt);
    let choices = rt.do_all_loops();
    assert!(!choices.is_empty());
    for c in &choices {
        assert!(c.streaming.is_some() && c.plain.is_none() && c.streamed.is_none(), "{c:?}");
    }
    let Some(rt) = runtime_with_loop::<DemoAlloc>(Some(test), 64 << 20, DoAllLoop::Auto) else { return };
    rt.parallel_new(Foo::create, 1000).unwrap();
    rt.parallel_do_with(Foo::increment, 1i32).unwrap();
    let streaming = Foo::increment.streaming_kernel().expect("Foo::increment reads this.a");
    let fills = rt.executor().fills_multiprocessors(streaming, 256).unwrap();
    let choice = rt.do_all_loops().into_iter().find(|c| c.kernel.contains("Foo__increment")).unwrap();
    assert_eq!(choice.streaming, Some(fills), "{choice:?}");
    let mut a: Vec<i32> = rt.collect::<Foo>().unwrap().iter().map(|f| f.a).collect();
    a.sort();
    assert_eq!(a, (1..1001).collect::<Vec<i32>>());
    println!("{test}: {choices:?}; Foo::increment fills a multiprocessor: {fills}");
}

/// An enumeration of a class in which nothing was allocated or freed since the last one reuses
/// it; any allocation or free, in either parity of the alternating enumerations, forces a new
/// one.
fn enumeration_reuse(rt: &Runtime<Zoo>) {
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 40u32).unwrap();
    // Five unchanged enumerations in a row (both parities, several times each).
    for _ in 0..5 {
        rt.parallel_do(Animal::tick).unwrap();
    }
    assert!(animal_ticks(rt).iter().all(|&(_, t)| t == 5), "{:?}", animal_ticks(rt));
    // Cats change (kittens appear); dogs do not. Then an odd and an even number of
    // enumerations after each change.
    for round in 0..3u32 {
        rt.parallel_do(Cat::have_kitten).unwrap();
        for _ in 0..=round {
            rt.parallel_do(Animal::tick).unwrap();
        }
    }
    let cats = rt.collect::<Cat>().unwrap();
    assert_eq!(cats.len(), 40 * 8, "every cat has a kitten in each of 3 rounds");
    assert_eq!(rt.count::<Dog>().unwrap(), 40);
    // Frees: the freed cats must not be visited again, the survivors must.
    rt.parallel_do(Cat::leave_if_odd).unwrap();
    let before = animal_ticks(rt);
    rt.parallel_do(Animal::tick).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    let after = animal_ticks(rt);
    assert_eq!(before.len(), after.len());
    assert!(before.iter().zip(&after).all(|(b, a)| b.0 == a.0 && a.1 == b.1 + 2), "{before:?} -> {after:?}");
}

#[test]
fn enumeration_reuse_on_cpu() {
    enumeration_reuse(&cpu_runtime::<Zoo>(8 << 20));
}

#[test]
fn enumeration_reuse_on_gpu() {
    let Some(rt) = gpu_runtime::<Zoo>("enumeration_reuse_on_gpu", 64 << 20) else { return };
    enumeration_reuse(&rt);
}

/// Steps that reuse lists: `tick` and `report` never name `dev` (they change no class), the
/// declared kitten and leave methods change cats only, `have_kitten` is undeclared (it changes
/// any class). Returns every animal's (id, ticks), sorted.
fn listing_steps(rt: &Runtime<Zoo>) -> Vec<(u32, u32)> {
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 40u32).unwrap();
    for round in 0..3 {
        rt.parallel_do(Cat::have_declared_kitten).unwrap();
        for _ in 0..=round {
            rt.parallel_do(Animal::tick).unwrap();
        }
        rt.parallel_do(Dog::report).unwrap();
    }
    rt.parallel_do(Cat::leave_if_odd_declared).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    rt.parallel_do(Cat::have_kitten).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    animal_ticks(rt)
}

/// Every animal's (id, ticks), sorted.
fn animal_ticks(rt: &Runtime<Zoo>) -> Vec<(u32, u32)> {
    let mut t: Vec<(u32, u32)> = rt.collect::<Animal>().unwrap().iter().map(|a| (a.id, a.ticks)).collect();
    t.sort();
    t
}

/// A zoo on `backend` (16 MiB heap, four CPU workers) whose profile counts enumerations,
/// keeping lists between `parallel_do`s if `reuse`.
fn profiled_zoo(backend: Backend, test: &str, reuse: bool) -> Runtime<Zoo> {
    Runtime::<Zoo>::builder(dynasoar_examples::MODELS_PTX)
        .backend(backend)
        .cpu_threads(4)
        .heap_bytes(16 << 20)
        .quiet(true)
        .profile(true)
        .reuse_listings(reuse)
        .build()
        .unwrap_or_else(|e| panic!("{test}: {e}"))
}

/// [`listing_steps`] on the host: (id, ticks) of cats and dogs.
fn listing_steps_reference() -> Vec<(u32, u32)> {
    let mut cats: Vec<(u32, u32)> = (0..40).map(|i| (i, 0)).collect();
    let mut dogs: Vec<(u32, u32)> = (1000..1040).map(|i| (i, 0)).collect();
    let kittens = |cats: &mut Vec<(u32, u32)>| {
        let born: Vec<(u32, u32)> = cats.iter().map(|&(id, _)| (id + 100_000, 0)).collect();
        cats.iter_mut().for_each(|c| c.1 += 10);
        cats.extend(born);
    };
    let tick = |cats: &mut Vec<(u32, u32)>, dogs: &mut Vec<(u32, u32)>| {
        cats.iter_mut().chain(dogs.iter_mut()).for_each(|a| a.1 += 1);
    };
    for round in 0..3 {
        kittens(&mut cats);
        for _ in 0..=round {
            tick(&mut cats, &mut dogs);
        }
    }
    cats.retain(|&(id, _)| id % 2 == 0);
    tick(&mut cats, &mut dogs);
    tick(&mut cats, &mut dogs);
    kittens(&mut cats);
    tick(&mut cats, &mut dogs);
    let mut all: Vec<(u32, u32)> = cats.into_iter().chain(dogs).collect();
    all.sort();
    all
}

/// Enumeration launches that listed `class` in `rt`'s profile (named `enumerate A+B` for the
/// classes each listed).
fn enumerations(rt: &Runtime<Zoo>, class: &str) -> u64 {
    let lists =
        |name: &str| name.strip_prefix("enumerate ").is_some_and(|c| c.split('+').any(|c| c == class));
    rt.kernel_profile().unwrap().iter().filter(|k| lists(&k.name)).map(|k| k.launches).sum()
}

/// Lists kept from one `parallel_do` to the next give what listing anew every time gives, and
/// classes no launch changed are not listed again.
fn listing_reuse(backend: Backend, test: &str) {
    if backend == Backend::Cuda && gpu_executor(test).is_none() {
        return;
    }
    let (reusing, listing_anew) = (profiled_zoo(backend, test, true), profiled_zoo(backend, test, false));
    let want = listing_steps_reference();
    assert_eq!(listing_steps(&reusing), want);
    assert_eq!(listing_steps(&listing_anew), want);
    let (dogs_reusing, dogs_anew) = (enumerations(&reusing, "Dog"), enumerations(&listing_anew, "Dog"));
    // Dogs are listed after `populate` and after the undeclared `have_kitten` (and by
    // `collect`); listing anew lists them for each of the 9 ticks and 3 reports too.
    assert!(dogs_reusing + 6 <= dogs_anew, "Dog listed {dogs_reusing} times reusing, {dogs_anew} anew");
    let cats_reusing = enumerations(&reusing, "Cat");
    assert!(cats_reusing < enumerations(&listing_anew, "Cat"));
}

#[test]
fn listing_reuse_on_cpu() {
    listing_reuse(Backend::Cpu, "listing_reuse_on_cpu");
}

#[test]
fn listing_reuse_on_gpu() {
    listing_reuse(Backend::Cuda, "listing_reuse_on_gpu");
}

/// A `parallel_do` that must list a class also lists, in the same launch, the classes that
/// do-alls listed before, whose lists are out of date and that its method leaves alone: the
/// next do-all over them lists nothing. Every animal's ticks are checked against the rules.
fn stale_lists_made_together(backend: Backend, test: &str) {
    if backend == Backend::Cuda && gpu_executor(test).is_none() {
        return;
    }
    let rt = profiled_zoo(backend, test, true);
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 40u32).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    // Undeclared: every list is out of date after it.
    rt.parallel_do(Cat::have_kitten).unwrap();
    let cats = enumerations(&rt, "Cat");
    // `report` changes no class: listing the dogs, the launch lists the cats too...
    rt.parallel_do(Dog::report).unwrap();
    assert_eq!(enumerations(&rt, "Cat"), cats + 1, "{test}: the cats were listed with the dogs");
    let (cats, dogs) = (enumerations(&rt, "Cat"), enumerations(&rt, "Dog"));
    // ... so that a do-all over both lists nothing.
    rt.parallel_do(Animal::tick).unwrap();
    assert_eq!((enumerations(&rt, "Cat"), enumerations(&rt, "Dog")), (cats, dogs), "{test}");
    let got = animal_ticks(&rt);
    let mut want: Vec<(u32, u32)> = (0..40)
        .flat_map(|id| [(id, 1 + 10 + 1), (id + 100_000, 1)])
        .chain((1000..1040).map(|id| (id, 2)))
        .collect();
    want.sort();
    assert_eq!(got, want, "{test}");
}

#[test]
fn stale_lists_made_together_on_cpu() {
    stale_lists_made_together(Backend::Cpu, "stale_lists_made_together_on_cpu");
}

#[test]
fn stale_lists_made_together_on_gpu() {
    stale_lists_made_together(Backend::Cuda, "stale_lists_made_together_on_gpu");
}

/// A `parallel_do` over a class whose concrete classes have as many objects per block runs
/// as one launch that visits them all (`merge_subclass_launches`, on by default), and one
/// launch per class when asked: every bird is visited once a `parallel_do` either way, and
/// birds hatched during a launch are not visited by it. Cats and dogs, whose blocks hold
/// different numbers of objects, get a launch each.
fn subclasses_in_one_launch(backend: Backend, test: &str) {
    use dynasoar_models::semantics::{Aviary, Crow, Sparrow};
    if backend == Backend::Cuda && gpu_executor(test).is_none() {
        return;
    }
    // A runtime (16 MiB heap, four CPU workers) whose profile counts each kernel's launches.
    fn counting<A: AllocatorSpec>(backend: Backend, test: &str, merge: bool) -> Runtime<A> {
        Runtime::<A>::builder(dynasoar_examples::MODELS_PTX)
            .backend(backend)
            .cpu_threads(4)
            .heap_bytes(16 << 20)
            .quiet(true)
            .profile_methods(true)
            .merge_subclass_launches(merge)
            .build()
            .unwrap_or_else(|e| panic!("{test}: {e}"))
    }
    fn launches<A: AllocatorSpec>(rt: &Runtime<A>, method: &str) -> u64 {
        let profile = rt.kernel_profile().unwrap();
        profile.iter().filter(|k| k.name.ends_with(method)).map(|k| k.launches).sum()
    }
    for merge in [true, false] {
        let aviary = counting::<Aviary>(backend, test, merge);
        let (sparrow, crow) =
            (Aviary::CLASSES[Sparrow::TYPE_ID as usize], Aviary::CLASSES[Crow::TYPE_ID as usize]);
        assert_eq!(sparrow.objects_per_block, crow.objects_per_block, "{test}: the test needs equal blocks");
        aviary_visits(&aviary, &format!("{test}: merged {merge}"));
        let per_do_all = if merge { 1 } else { 2 };
        assert_eq!(launches(&aviary, "__Bird__visit"), 2 * per_do_all, "{test}: merged {merge}");
        assert_eq!(launches(&aviary, "__Bird__hatch_other"), per_do_all, "{test}: merged {merge}");

        // Cats and dogs: a launch each, merged or not.
        let zoo = counting::<Zoo>(backend, test, merge);
        let (cat, dog) = (Zoo::CLASSES[Cat::TYPE_ID as usize], Zoo::CLASSES[Dog::TYPE_ID as usize]);
        assert_ne!(cat.objects_per_block, dog.objects_per_block, "{test}: the test needs unequal blocks");
        zoo.parallel_new(Registry::create, 1).unwrap();
        zoo.parallel_do_with(Registry::populate, 40u32).unwrap();
        zoo.parallel_do(Animal::tick).unwrap();
        assert_eq!(launches(&zoo, "__Animal__tick"), 2, "{test}: merged {merge}");
        let want: Vec<(u32, u32)> = (0..40).chain(1000..1040).map(|id| (id, 1)).collect();
        assert_eq!(animal_ticks(&zoo), want, "{test}: merged {merge}");
    }
}

/// 100 sparrows and 70 crows in `rt`: two `parallel_do`s over birds visit each bird twice, a
/// third hatches a bird of the other class for each (not visited by it); checks every bird's
/// visits and the counts.
fn aviary_visits(rt: &Runtime<dynasoar_models::semantics::Aviary>, test: &str) {
    use dynasoar_models::semantics::{Bird, Crow, Sparrow};
    rt.parallel_new(Sparrow::hatch, 100).unwrap();
    rt.parallel_new(Crow::hatch, 70).unwrap();
    for _ in 0..2 {
        rt.parallel_do(Bird::visit).unwrap();
    }
    rt.parallel_do(Bird::hatch_other).unwrap();
    let mut got: Vec<(u32, u32)> = rt.collect::<Bird>().unwrap().iter().map(|b| (b.id, b.visits)).collect();
    got.sort();
    let old = || (0..100).chain(1000..1070);
    let mut want: Vec<(u32, u32)> =
        old().map(|id| (id, 3)).chain(old().map(|id| (id + 100_000, 0))).collect();
    want.sort();
    assert_eq!(got, want, "{test}");
    assert_eq!((rt.count::<Sparrow>().unwrap(), rt.count::<Crow>().unwrap()), (170, 170), "{test}");
}

/// 1,000 cats, each having a litter of `id % 11` kittens with one `make_new_each` (a warp's
/// lanes ask for 0 to 10 objects each, about 160 together: several blocks a round, lanes whose
/// kittens straddle two blocks): every kitten exists once with its own fields, was stored
/// before its parent got it, and was not visited by the launch.
fn litters(rt: &Runtime<Zoo>, test: &str) {
    const CATS: u32 = 1_000;
    const SIZE: u32 = 11;
    rt.parallel_new(Cat::born, CATS as u64).unwrap();
    rt.parallel_do_with(Cat::have_litter, SIZE).unwrap();
    let cats = rt.collect::<Cat>().unwrap();
    let (parents, kittens): (Vec<&Cat>, Vec<&Cat>) = cats.iter().partition(|c| c.base.id < CATS);
    let mut got: Vec<(u32, u32, u32, u32)> =
        parents.iter().map(|c| (c.base.id, c.base.ticks, c.base.cats_seen, c.lives)).collect();
    got.sort();
    let want: Vec<(u32, u32, u32, u32)> = (0..CATS).map(|id| (id, 100, id % SIZE, 9)).collect();
    same(&got, &want, &format!("{test}: the parents (id, ticks, kittens got, lives)"));
    let mut got: Vec<(u32, u32, u32)> = kittens.iter().map(|c| (c.base.id, c.base.ticks, c.lives)).collect();
    got.sort();
    let want: Vec<(u32, u32, u32)> =
        (0..CATS).flat_map(|id| (0..id % SIZE).map(move |k| (200_000 + 16 * id + k, 0, k))).collect();
    same(&got, &want, &format!("{test}: the kittens (id, ticks, lives)"));
    assert_eq!(rt.count::<Cat>().unwrap() as usize, CATS as usize + want.len(), "{test}");
}

/// `got == want`, or a failure that names the first difference (the lists are long).
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    if let Some(i) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: entry {i} is {:?}, expected {:?} ({} entries, {} expected)",
            got[i],
            want[i],
            got.len(),
            want.len()
        );
    }
    assert_eq!(got.len(), want.len(), "{what}: entries");
}

#[test]
fn litters_on_cpu() {
    litters(&cpu_runtime::<Zoo>(16 << 20), "litters_on_cpu");
}

#[test]
fn litters_on_gpu() {
    if let Some(rt) = gpu_runtime::<Zoo>("litters_on_gpu", 16 << 20) {
        litters(&rt, "litters_on_gpu");
    }
}

/// A `make_new_each` that finds no memory gives the objects it could not make `None`, and the
/// host reports the method that ran out.
#[test]
fn out_of_memory_in_make_new_each_names_the_method() {
    let rt = cpu_runtime::<Zoo>(256 << 10);
    rt.parallel_new(Cat::born, 2_000).unwrap();
    let err = rt.parallel_do_with(Cat::have_litter, 16u32).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
    assert!(err.to_string().contains("dynasoar_do__Zoo__Cat__have_litter"), "{err}");
    // Every parent counted only the kittens it got: they are all there.
    let cats = rt.collect::<Cat>().unwrap();
    let got: u32 = cats.iter().filter(|c| c.base.id < 2_000).map(|c| c.base.cats_seen).sum();
    let kittens = cats.iter().filter(|c| c.base.id >= 200_000).count() as u32;
    assert_eq!(got, kittens);
    assert!(kittens < (0..2_000).map(|id| id % 16).sum::<u32>(), "the heap was meant to run out");
}

#[test]
fn subclasses_in_one_launch_on_cpu() {
    subclasses_in_one_launch(Backend::Cpu, "subclasses_in_one_launch_on_cpu");
}

#[test]
fn subclasses_in_one_launch_on_gpu() {
    subclasses_in_one_launch(Backend::Cuda, "subclasses_in_one_launch_on_gpu");
}

/// A launch that frees objects of a class and creates none keeps the class's list right as it
/// frees (each free clears its object's bit in the list), once the runtime has seen a method
/// that does so and its listings note their entries: the next do-alls over the class list
/// nothing and visit the survivors only. Without the frees' upkeep the cats would be listed
/// again; with a list kept but not kept right, the tally would count the freed cats.
fn frees_keep_lists(backend: Backend, test: &str) {
    use dynasoar::host::{Total, TotalValue};
    if backend == Backend::Cuda && gpu_executor(test).is_none() {
        return;
    }
    let rt = profiled_zoo(backend, test, true);
    rt.parallel_new(Registry::create, 1).unwrap();
    // `tally` fills seven totals; the first counts the animals it visits.
    let kinds = [
        Total::Count,
        Total::SumU64,
        Total::MinI64,
        Total::MaxI64,
        Total::MaxF64,
        Total::SumF64,
        Total::MinF64,
    ];
    let totals = rt.totals(&kinds).unwrap();
    // First batch: the odd cats leave (declared `frees(Cat)`); the runtime learns that cats'
    // lists can be kept through such launches.
    rt.parallel_do_with(Registry::populate, 40u32).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    rt.parallel_do(Cat::leave_if_odd_declared).unwrap();
    // Second batch (`populate` may change any class): its listing notes the cats' entries.
    rt.parallel_do_with(Registry::populate, 40u32).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    let listed = (enumerations(&rt, "Cat"), enumerations(&rt, "Dog"));
    rt.parallel_do(Cat::leave_if_odd_declared).unwrap();
    rt.parallel_do_with(Animal::tally, totals.device()).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    assert_eq!((enumerations(&rt, "Cat"), enumerations(&rt, "Dog")), listed, "{test}: listed again");
    assert_eq!(rt.read_totals(&totals).unwrap()[0], TotalValue::U64(40 + 80), "{test}: animals tallied");
    let even = || (0..40).step_by(2);
    let mut want: Vec<(u32, u32)> = even()
        .chain(1000..1040)
        .map(|id| (id, 3))
        .chain(even().chain(1000..1040).map(|id| (id, 2)))
        .collect();
    want.sort();
    assert_eq!(animal_ticks(&rt), want, "{test}");
}

#[test]
fn frees_keep_lists_on_cpu() {
    frees_keep_lists(Backend::Cpu, "frees_keep_lists_on_cpu");
}

#[test]
fn frees_keep_lists_on_gpu() {
    frees_keep_lists(Backend::Cuda, "frees_keep_lists_on_gpu");
}

/// The heap of `rt`, checked (every invariant of `HeapSnapshot::check`).
fn checked_heap(rt: &Runtime<Zoo>, test: &str) -> dynasoar::host::SnapshotSummary {
    let heap = rt.heap().expect("a DynaSOAr heap");
    heap.snapshot(rt.executor()).unwrap().check().unwrap_or_else(|e| panic!("{test}: heap inconsistent: {e}"))
}

/// A launch that frees objects of one class and creates objects of another only keeps the
/// blocks its frees empty with their class (`Heap::free_in_launch_not_creating_its_class`, and
/// in a launch that creates one class only, as this one, `Heap::free_in_sole_launch`): the dogs
/// made in the cats' place go to other blocks, the heap's check allows the kept blocks, and the
/// cats' next listing anew frees those that no cat filled since.
fn frees_keep_their_emptied_blocks(backend: Backend, test: &str) {
    if backend == Backend::Cuda && gpu_executor(test).is_none() {
        return;
    }
    let rt = profiled_zoo(backend, test, true);
    let check = || checked_heap(&rt, test);
    let cat = Cat::TYPE_ID as usize;
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 2000u32).unwrap();
    let cat_blocks = check().classes[cat].0;
    assert!(cat_blocks > 4, "{test}: {cat_blocks} blocks of cats");
    rt.parallel_do(Cat::make_way_for_a_dog).unwrap();
    let kept = check();
    assert_eq!(kept.classes[cat], (cat_blocks, 0), "{test}: no cat left, every block of theirs kept");
    assert_eq!(kept.empty_blocks, cat_blocks, "{test}");
    let mut ids: Vec<u32> = rt.collect::<Animal>().unwrap().iter().map(|a| a.id).collect();
    ids.sort();
    let mut want: Vec<u32> = (1000..3000).chain(300_000..302_000).collect();
    want.sort();
    assert_eq!(ids, want, "{test}: the dogs, old and new");
    // `populate` may change any class: the cats' next listing is made anew.
    rt.parallel_do_with(Registry::populate, 10u32).unwrap();
    rt.parallel_do(Animal::tick).unwrap();
    let listed = check();
    assert_eq!(listed.empty_blocks, 0, "{test}: the cats' listing freed their empty blocks");
    assert!(listed.classes[cat].0 < cat_blocks / 2, "{test}: {:?}", listed.classes[cat]);
    assert_eq!(rt.count::<Cat>().unwrap(), 10, "{test}");
}

#[test]
fn frees_keep_their_emptied_blocks_on_cpu() {
    frees_keep_their_emptied_blocks(Backend::Cpu, "frees_keep_their_emptied_blocks_on_cpu");
}

#[test]
fn frees_keep_their_emptied_blocks_on_gpu() {
    frees_keep_their_emptied_blocks(Backend::Cuda, "frees_keep_their_emptied_blocks_on_gpu");
}

/// A launch that creates objects of one class only frees without waiting for the blocks'
/// bitmaps (`Heap::free_in_sole_launch`): the blocks that odd cats leave for dogs keep their
/// even cats, with room that the frees did not make active, and the cats' class is `STALE`,
/// which the heap's check allows for it alone. Before a launch that allocates as the paper does
/// (the registry's `populate`, which may change any class and lists no cats), the runtime makes
/// the cats' bitmaps exact again (`heap_reactivate`): after it no class is stale, and the check
/// finds every cat block with room active.
fn unwaited_frees_are_made_exact_before_a_launch_that_needs_it(backend: Backend, test: &str) {
    if backend == Backend::Cuda && gpu_executor(test).is_none() {
        return;
    }
    let rt = profiled_zoo(backend, test, true);
    let check = || checked_heap(&rt, test);
    let cat = Cat::TYPE_ID;
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 2000u32).unwrap();
    let before = check();
    assert_eq!((before.classes[cat as usize].1, before.stale_classes), (2000, 0), "{test}");
    rt.parallel_do(Cat::make_way_if_odd).unwrap();
    let stale = check();
    assert_eq!(stale.stale_classes, 1 << cat, "{test}: the cats' frees did not wait");
    assert_eq!(stale.classes[cat as usize], (before.classes[cat as usize].0, 1000), "{test}");
    rt.parallel_do_with(Registry::populate, 10u32).unwrap();
    let exact = check();
    assert_eq!(exact.stale_classes, 0, "{test}: the cats' bitmaps were not made exact");
    assert_eq!(exact.classes[cat as usize].1, 1010, "{test}");
    let mut ids: Vec<u32> = rt.collect::<Cat>().unwrap().iter().map(|c| c.base.id).collect();
    ids.sort();
    let mut want: Vec<u32> = (0..2000).filter(|i| i % 2 == 0).chain(0..10).collect();
    want.sort();
    assert_eq!(ids, want, "{test}: the even cats and the new ones");
}

#[test]
fn unwaited_frees_are_made_exact_before_a_launch_that_needs_it_on_cpu() {
    unwaited_frees_are_made_exact_before_a_launch_that_needs_it(
        Backend::Cpu,
        "unwaited_frees_are_made_exact_before_a_launch_that_needs_it_on_cpu",
    );
}

#[test]
fn unwaited_frees_are_made_exact_before_a_launch_that_needs_it_on_gpu() {
    unwaited_frees_are_made_exact_before_a_launch_that_needs_it(
        Backend::Cuda,
        "unwaited_frees_are_made_exact_before_a_launch_that_needs_it_on_gpu",
    );
}

/// A method that creates or frees objects of a class it did not declare is refused: nothing
/// is created, and the runtime reports which kernel did it.
#[test]
fn an_undeclared_change_is_refused_and_reported() {
    let rt = cpu_runtime::<Zoo>(8 << 20);
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 10u32).unwrap();
    let err = rt.parallel_do(Cat::have_undeclared_kitten).unwrap_err();
    assert!(matches!(err, Error::UndeclaredChange { .. }), "{err}");
    assert!(err.to_string().contains("dynasoar_do__Zoo__Cat__have_undeclared_kitten"), "{err}");
    assert_eq!(rt.count::<Cat>().unwrap(), 10, "no kitten was created");
    // The runtime goes on: a declared method works after it.
    rt.parallel_do(Cat::have_declared_kitten).unwrap();
    assert_eq!(rt.count::<Cat>().unwrap(), 20);
}

/// A method's kernel launched by hand with a grid that is not a multiple of its class's objects
/// per block visits nothing and is reported (`parallel_do` sizes its grids so).
#[test]
fn a_do_all_launched_with_a_bad_grid_is_reported() {
    let rt = cpu_runtime::<Zoo>(8 << 20);
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 10u32).unwrap();
    let cat = rt.classes().iter().find(|c| c.name == "Cat").unwrap();
    let heap = rt.heap().unwrap();
    let parity = heap.enumerate(rt.executor(), cat.type_id).unwrap();
    let params = DoParams {
        store: heap.ptr().cast(),
        class: cat.type_id as u32,
        objects_per_block: cat.objects_per_block,
        parity,
        keep: 0,
        also: 0,
        also_parities: 0,
        ranked: dynasoar::DevPtr::null(),
        arg: (),
    };
    let grid = Grid::new(1, cat.objects_per_block + 1);
    rt.executor().launch(Animal::tick.kernel(), grid, params).unwrap();
    let err = rt.sync().unwrap_err();
    assert!(matches!(err, Error::BadGrid { .. }), "{err}");
    assert!(rt.collect::<Cat>().unwrap().iter().all(|c| c.base.ticks == 0), "a cat was visited");
    // A launch by the runtime works after it.
    rt.parallel_do(Animal::tick).unwrap();
    assert!(rt.collect::<Cat>().unwrap().iter().all(|c| c.base.ticks == 1));
}

/// The API example, deterministic: sorted values.
fn api_demo(rt: &Runtime<DemoAlloc>, n: u64) -> (Vec<Foo>, Vec<Bar>) {
    rt.parallel_new(Foo::create, n).unwrap();
    rt.parallel_do_with(Foo::increment, 3i32).unwrap();
    rt.parallel_do(Bar::increment).unwrap();
    rt.parallel_do_with(Foo::increment, -1i32).unwrap();
    let mut foos = rt.collect::<Foo>().unwrap();
    let mut bars = rt.collect::<Bar>().unwrap();
    foos.sort_by_key(|f| f.a);
    bars.sort_by_key(|b| b.c);
    (foos, bars)
}

fn check_api_demo(foos: &[Foo], bars: &[Bar], n: u64) {
    assert_eq!(foos.len() as u64, n);
    assert_eq!(bars.len() as u64, n);
    for (i, f) in foos.iter().enumerate() {
        assert_eq!(f.a, i as i32 + 2);
        assert_eq!(f.b, 2.0);
        assert!(!f.partner.is_null());
    }
    for (i, b) in bars.iter().enumerate() {
        assert_eq!(b.c, 10 * i as i32 + 3);
        // d[i] started at i; increments landed at a % 4 after each Foo::increment.
        let mut d = [i as u32; 4];
        d[(i + 3) % 4] += 1;
        d[(i + 2) % 4] += 1;
        assert_eq!(b.d, d, "bar {i}");
    }
}

#[test]
fn api_example_on_cpu() {
    let (foos, bars) = api_demo(&cpu_runtime::<DemoAlloc>(8 << 20), 5000);
    check_api_demo(&foos, &bars, 5000);
}

#[test]
fn api_example_gives_the_same_results_on_gpu_and_cpu() {
    let Some(gpu) = gpu_runtime::<DemoAlloc>("api_example_gives_the_same_results_on_gpu_and_cpu", 64 << 20)
    else {
        return;
    };
    let n = 200_000;
    let on_gpu = api_demo(&gpu, n);
    check_api_demo(&on_gpu.0, &on_gpu.1, n);
    let on_cpu = api_demo(&cpu_runtime::<DemoAlloc>(64 << 20), n);
    // Handles differ (addresses); everything else is identical.
    let strip = |fs: &[Foo]| fs.iter().map(|f| (f.a, f.b.to_bits())).collect::<Vec<_>>();
    assert_eq!(strip(&on_gpu.0), strip(&on_cpu.0));
    assert_eq!(on_gpu.1, on_cpu.1);
}

/// `parallel_new` on the GPU fills its objects' blocks: each warp opens whole blocks for its
/// objects, where warps asking for a warp's worth each opened a block of their own (n-body's
/// 20,000 bodies lay in 625 blocks of 64). Objects the constructor creates on the side (each
/// `Foo` makes a `Bar`) are allocated as any others. Two creations: blocks are not shared
/// between them, and each leaves at most one block part full.
#[test]
fn parallel_new_fills_its_blocks_on_gpu() {
    let test = "parallel_new_fills_its_blocks_on_gpu";
    let Some(rt) = gpu_runtime::<DemoAlloc>(test, 64 << 20) else { return };
    let (first, second) = (10_037u64, 100u64);
    rt.parallel_new(Foo::create, first).unwrap();
    let stats = rt.stats().unwrap();
    let foo = stats.classes.iter().find(|c| c.name == "Foo").unwrap();
    assert_eq!(foo.objects_per_block, 64);
    assert_eq!((foo.objects, foo.blocks), (first, first.div_ceil(64)), "{stats:?}");
    rt.parallel_new(Foo::create, second).unwrap();
    let stats = rt.stats().unwrap();
    let foo = stats.classes.iter().find(|c| c.name == "Foo").unwrap();
    assert_eq!(foo.blocks, first.div_ceil(64) + second.div_ceil(64), "{stats:?}");
    // Every index made once, each with its partner.
    let mut a: Vec<i32> = rt.collect::<Foo>().unwrap().iter().map(|f| f.a).collect();
    a.sort();
    let mut expected: Vec<i32> = (0..first as i32).chain(0..second as i32).collect();
    expected.sort();
    assert_eq!(a, expected);
    assert_eq!(rt.count::<Bar>().unwrap(), first + second);
    // A class of fewer objects per block (rounds of other sizes).
    let Some(zoo) = gpu_runtime::<Zoo>(test, 64 << 20) else { return };
    zoo.parallel_new(Cat::born, 1_000).unwrap();
    let stats = zoo.stats().unwrap();
    let cat = stats.classes.iter().find(|c| c.name == "Cat").unwrap();
    assert_eq!(
        (cat.objects, cat.blocks),
        (1_000, 1_000u64.div_ceil(cat.objects_per_block as u64)),
        "{stats:?}"
    );
    let mut ids: Vec<u32> = zoo.collect::<Cat>().unwrap().iter().map(|c| c.base.id).collect();
    ids.sort();
    assert_eq!(ids, (0..1_000).collect::<Vec<u32>>());
    println!(
        "{test}: Foo in {} blocks, Cat ({} per block) in {}",
        foo.blocks, cat.objects_per_block, cat.blocks
    );
}

#[test]
fn out_of_memory_in_a_method_names_it() {
    let rt = cpu_runtime::<Zoo>(256 << 10);
    rt.parallel_new(Registry::create, 1).unwrap();
    let err = rt.parallel_do_with(Registry::populate, 20_000u32).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
    assert!(err.to_string().contains("dynasoar_do__Zoo__Registry__populate"), "{err}");
    // The heap stays usable.
    rt.parallel_do(Animal::tick).unwrap();
    assert!(rt.count::<Animal>().unwrap() > 0);
}

fn device_arrays(rt: &Runtime<Zoo>) {
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 20u32).unwrap();
    let exec = rt.executor();
    let animals = exec.alloc_zeroed::<Handle<Animal>>(2000).unwrap();
    let counts = exec.alloc_zeroed::<u32>(1).unwrap();
    let tables = Tables { animals: animals.device_array(), counts: counts.device_array() };
    rt.parallel_do_with(Animal::record, tables).unwrap();
    assert_eq!(exec.read_all(&counts).unwrap(), vec![40]);
    let recorded = exec.read_all(&animals).unwrap().into_iter().filter(|h| !h.is_null()).count();
    assert_eq!(recorded, 40, "cats have ids 0..20, dogs 1000..1020: 40 distinct slots");
}

#[test]
fn device_arrays_on_cpu() {
    device_arrays(&cpu_runtime::<Zoo>(8 << 20));
}

#[test]
fn device_arrays_on_gpu() {
    let Some(rt) = gpu_runtime::<Zoo>("device_arrays_on_gpu", 64 << 20) else { return };
    device_arrays(&rt);
}

#[test]
fn device_array_index_out_of_bounds_is_a_kernel_error() {
    let rt = cpu_runtime::<Zoo>(8 << 20);
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 2u32).unwrap();
    let animals = rt.executor().alloc_zeroed::<Handle<Animal>>(4).unwrap();
    let counts = rt.executor().alloc_zeroed::<u32>(1).unwrap();
    let tables = Tables { animals: animals.device_array(), counts: counts.device_array() };
    let err = rt.parallel_do_with(Animal::record_out_of_bounds, tables).unwrap_err();
    assert!(matches!(err, Error::KernelFailed { .. }), "{err}");
    assert!(err.to_string().contains("record_out_of_bounds"), "{err}");
}

/// Every general-purpose allocator as an AOS object store (the paper's `parallel_do` helper):
/// the same semantics, and the API example's exact results.
#[test]
fn dsl_semantics_on_every_allocator_on_cpu() {
    for store in general_stores() {
        zoo_semantics(&cpu_runtime_on::<Zoo>(store, 16 << 20));
        let (foos, bars) = api_demo(&cpu_runtime_on::<DemoAlloc>(store, 16 << 20), 2000);
        check_api_demo(&foos, &bars, 2000);
        // Sparrows and crows share each launch (`merge_subclass_launches`) on every store.
        aviary_visits(&cpu_runtime_on(store, 16 << 20), &format!("aviary on {store}"));
        litters(&cpu_runtime_on(store, 16 << 20), &format!("litters on {store}"));
    }
}

#[test]
fn dsl_semantics_on_every_allocator_on_gpu() {
    // 400,000 objects. The BulkAllocator's buddy tree covers the largest power of two of 4 KiB
    // blocks that fits (32 MiB of a 64 MiB pool), and its per-multiprocessor arenas keep their
    // chunks: with 64 MiB it ran out once on an H200 that another process shared, and with
    // 96 MiB (a 64 MiB tree) once more on 2026-11-22 (45,632 of the API example's mallocs).
    // 160 MiB gives its tree 128 MiB.
    const POOL: u64 = 160 << 20;
    for store in general_stores() {
        // Progress (shown with --nocapture): a store that hangs is the last one named.
        eprintln!("store {store}");
        let Some(rt) = gpu_runtime_on::<Zoo>("dsl_semantics_on_every_allocator_on_gpu", store, POOL) else {
            return;
        };
        zoo_semantics(&rt);
        drop(rt);
        let rt = gpu_runtime_on::<DemoAlloc>("dsl_semantics_on_every_allocator_on_gpu", store, POOL).unwrap();
        let (foos, bars) = api_demo(&rt, 200_000);
        check_api_demo(&foos, &bars, 200_000);
        drop(rt);
        // Sparrows and crows share each launch (`merge_subclass_launches`) on every store.
        let rt = gpu_runtime_on("dsl_semantics_on_every_allocator_on_gpu", store, POOL).unwrap();
        aviary_visits(&rt, &format!("aviary on {store}"));
        drop(rt);
        let rt = gpu_runtime_on("dsl_semantics_on_every_allocator_on_gpu", store, POOL).unwrap();
        litters(&rt, &format!("litters on {store}"));
    }
}

#[test]
fn out_of_memory_of_a_general_allocator_names_it() {
    let rt = cpu_runtime_on::<Zoo>(StoreChoice::Malloc(MallocKind::Atomic), 256 << 10);
    rt.parallel_new(Registry::create, 1).unwrap();
    let err = rt.parallel_do_with(Registry::populate, 20_000u32).unwrap_err();
    let Error::Malloc { allocator, what, .. } = &err else {
        panic!("expected an allocator error, got {err}")
    };
    assert_eq!(*allocator, "atomic");
    assert!(what.contains("out of memory"), "{err}");
    assert!(err.to_string().contains("dynasoar_do__Zoo__Registry__populate"), "{err}");
    rt.parallel_do(Animal::tick).unwrap();
    assert!(rt.count::<Animal>().unwrap() > 0);
}

#[test]
fn a_store_needs_the_aos_build() {
    let err = Runtime::<Zoo>::builder(dynasoar_examples::MODELS_PTX)
        .store(StoreChoice::Malloc(MallocKind::Atomic))
        .backend(dynasoar::host::Backend::Cpu)
        .build()
        .err()
        .expect("no AOS PTX given");
    assert!(err.to_string().contains("PtxBuilder::aos"), "{err}");
}

#[test]
fn grouped_fields_share_one_record_per_object() {
    use dynasoar::engine::Prefetch;
    // Where `#[soa_class]` puts each field (group start, bytes per slot, offset in the slot's
    // record), as the accessors and the streaming loop's prefetch use it: `Animal` is
    // `id: u32` then the group `visits` (`ticks`, `cats_seen`); `Dog` adds `registry` (a
    // handle, at 16) and the group `kennel` (`bones: [u16; 3]` at 24, `collar: u16` at 30).
    assert_eq!(Animal::__dynasoar_field("id"), Some(Prefetch::field(0, 4, 0)));
    assert_eq!(Animal::__dynasoar_field("ticks"), Some(Prefetch::field(4, 8, 0)));
    assert_eq!(Animal::__dynasoar_field("cats_seen"), Some(Prefetch::field(4, 8, 4)));
    assert_eq!(Dog::__dynasoar_field("registry"), Some(Prefetch::field(16, 8, 0)));
    assert_eq!(Dog::__dynasoar_field("bones"), Some(Prefetch::field(24, 8, 0)));
    assert_eq!(Dog::__dynasoar_field("collar"), Some(Prefetch::field(24, 8, 6)));
    assert_eq!(Dog::__dynasoar_field("ticks"), Some(Prefetch::field(4, 8, 0)), "inherited, same place");
    assert_eq!(Registry::__dynasoar_field("weight"), Some(Prefetch::field(0, 8, 4)));
    assert_eq!(Registry::__dynasoar_field("last"), Some(Prefetch::field(8, 8, 0)));
}
