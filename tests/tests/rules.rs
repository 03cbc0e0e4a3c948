//! The rules a new user relies on, each checked where it could break: `parallel_do` over a
//! parent class visits no object created during it, whatever the classes' order; a method may
//! free only its own object of the class it iterates; errors name the kernel that raised them
//! when checks are deferred; a heap that fills mid-run stops the run; `collect_with_handles`
//! pairs each value with its own handle; `heap_for` sizes a heap from object counts.

use dynasoar::baselines::host::StoreChoice;
use dynasoar::host::{Backend, Error, ExecutorOptions, Runtime};
use dynasoar::{AllocatorSpec, Handle};
use dynasoar_models::semantics::{Animal, Cat, Dog, Registry, Zoo};
use dynasoar_tests::{cpu_runtime, cpu_runtime_on, general_stores, gpu_runtime, runtime_builder};

/// A registry, and `n` cats and `n` dogs (ids `0..n` and `1000..1000 + n`).
fn zoo(rt: &Runtime<Zoo>, n: u32) {
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, n).unwrap();
}

/// `Animal::have_young_of_the_other_class` runs over cats, then dogs (type-id order): the
/// puppies that cats create must not be visited by the dogs' launch, nor the kittens of dogs
/// by anything. Before every class was listed ahead of the first launch, the 50 puppies were
/// visited (ticks 1).
fn young_are_not_visited(rt: &Runtime<Zoo>) {
    zoo(rt, 50);
    rt.parallel_do(Animal::have_young_of_the_other_class).unwrap();
    let animals = rt.collect::<Animal>().unwrap();
    assert_eq!(animals.len(), 200);
    let (old, young): (Vec<&Animal>, Vec<&Animal>) = animals.iter().partition(|a| a.id < 200_000);
    assert_eq!((old.len(), young.len()), (100, 100));
    assert!(old.iter().all(|a| a.ticks == 1), "a parent was not visited exactly once: {old:?}");
    let visited: Vec<u32> = young.iter().filter(|a| a.ticks != 0).map(|a| a.id).collect();
    assert!(visited.is_empty(), "young animals created during the launch were visited: {visited:?}");
    // Puppies of cats (ids 200_000..200_050) are dogs; kittens of dogs are cats.
    let mut puppies: Vec<u32> =
        rt.collect::<Dog>().unwrap().iter().map(|d| d.base.id).filter(|&id| id >= 200_000).collect();
    puppies.sort();
    assert_eq!(puppies, (200_000..200_050).collect::<Vec<_>>());
    assert_eq!(rt.count::<Cat>().unwrap(), 100);
}

#[test]
fn a_parent_class_launch_visits_no_young_on_cpu() {
    young_are_not_visited(&cpu_runtime::<Zoo>(8 << 20));
}

#[test]
fn a_parent_class_launch_visits_no_young_on_gpu() {
    let Some(rt) = gpu_runtime::<Zoo>("a_parent_class_launch_visits_no_young_on_gpu", 64 << 20) else {
        return;
    };
    young_are_not_visited(&rt);
}

#[test]
fn a_parent_class_launch_visits_no_young_on_every_allocator_on_cpu() {
    for store in general_stores().into_iter().chain([StoreChoice::Dynasoar]) {
        young_are_not_visited(&cpu_runtime_on::<Zoo>(store, 16 << 20));
    }
}

/// Only `this` may be freed of the class a `parallel_do` iterates (paper section 2.1): the CPU
/// backend refuses the free, reports the kernel, and the run can go on.
#[test]
fn freeing_another_object_of_the_iterated_class_is_refused_and_reported() {
    let rt = cpu_runtime::<Zoo>(8 << 20);
    zoo(&rt, 10);
    let err = rt.parallel_do(Cat::free_another_cat).unwrap_err();
    let Error::FreedIterated { ref kernels } = err else { panic!("expected FreedIterated, got {err}") };
    assert_eq!(kernels.0, ["dynasoar_do__Zoo__Cat__free_another_cat"], "{err}");
    assert!(err.to_string().contains("only `this` may be freed"), "{err}");
    assert_eq!(rt.count::<Cat>().unwrap(), 10, "a cat was freed");
    // An object freeing itself is allowed, and so is freeing objects of other classes.
    rt.parallel_do(Cat::leave_if_odd).unwrap();
    assert_eq!(rt.count::<Cat>().unwrap(), 5);
}

/// With deferred checks, an out-of-memory in `Registry::populate` followed by launches of
/// another kernel is reported naming `populate` alone, with the classes that failed.
fn an_early_error_names_its_kernel(rt: &Runtime<Zoo>) {
    zoo(rt, 1);
    let mut err = rt.parallel_do_with(Registry::populate, 20_000u32).err();
    for _ in 0..3 {
        if err.is_none() {
            err = rt.parallel_do(Animal::tick).err();
        }
    }
    let err = err.or_else(|| rt.sync().err()).expect("the heap ran out of memory: an error is due");
    let Error::OutOfMemory { ref kernels, ref classes, heap_bytes, suggested_bytes, .. } = err else {
        panic!("expected out of memory, got {err}")
    };
    assert_eq!(kernels.0, ["dynasoar_do__Zoo__Registry__populate"], "{err}");
    assert!(classes.contains("Cat") && classes.contains("Dog"), "{err}");
    assert!(suggested_bytes >= 2 * heap_bytes, "{err}");
    assert!(err.to_string().contains(&format!("heap_bytes({suggested_bytes})")), "{err}");
    // The heap stays usable.
    rt.parallel_do(Animal::tick).unwrap();
}

fn deferred(test: Option<&str>, sync_each_launch: bool) -> Option<Runtime<Zoo>> {
    let backend = if test.is_some() { Backend::Cuda } else { Backend::Cpu };
    let options = ExecutorOptions {
        backend,
        quiet: true,
        sync_each_launch,
        cpu_threads: Some(4),
        ..Default::default()
    };
    Some(
        runtime_builder::<Zoo>(test)?
            .executor_options(options)
            .heap_bytes(256 << 10)
            .deferred_checks(true)
            .build()
            .unwrap(),
    )
}

#[test]
fn an_early_error_names_its_kernel_on_cpu() {
    an_early_error_names_its_kernel(&deferred(None, false).unwrap());
}

#[test]
fn an_early_error_names_its_kernel_on_gpu() {
    let test = "an_early_error_names_its_kernel_on_gpu";
    let Some(rt) = deferred(Some(test), false) else { return };
    an_early_error_names_its_kernel(&rt);
    an_early_error_names_its_kernel(&deferred(Some(test), true).unwrap());
}

/// Kittens double the cats each step until the heap is full: the step loop must stop with
/// the error within a few steps on the CPU (checked after every launch) and within the
/// runtime's check interval on the GPU, not after the last step.
fn a_full_heap_stops_the_run(rt: &Runtime<Zoo>, most_steps: u32) {
    zoo(rt, 10);
    const STEPS: u32 = 1_000_000;
    for step in 0..STEPS {
        if let Err(err) = rt.parallel_do(Cat::have_kitten) {
            assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
            assert!(
                step < most_steps,
                "the full heap was reported at step {step}, not before step {most_steps}"
            );
            return;
        }
    }
    panic!("{STEPS} steps of doubling cats never reported the full heap");
}

#[test]
fn a_full_heap_stops_the_run_on_cpu() {
    // 10 cats doubling: a 256 KiB heap is full after about a dozen steps.
    a_full_heap_stops_the_run(&deferred(None, false).unwrap(), 20);
}

#[test]
fn a_full_heap_stops_the_run_on_gpu() {
    let Some(rt) = deferred(Some("a_full_heap_stops_the_run_on_gpu"), false) else { return };
    // A step takes some microseconds: the 50 ms check interval is some thousands of steps.
    a_full_heap_stops_the_run(&rt, 100_000);
}

/// Each value comes with its own handle: the registry's handle is the one every dog stored,
/// and every animal's handle has the class its id says.
fn handles_match_values(rt: &Runtime<Zoo>) {
    zoo(rt, 20);
    let registries = rt.collect_with_handles::<Registry>().unwrap();
    assert_eq!(registries.len(), 1);
    let dogs = rt.collect_with_handles::<Dog>().unwrap();
    assert_eq!(dogs.len(), 20);
    assert!(dogs.iter().all(|(_, d)| d.registry == registries[0].0), "a dog's registry is not the registry");
    let mut handles: Vec<Handle<Dog>> = dogs.iter().map(|(h, _)| *h).collect();
    let mut listed = rt.handles::<Dog>().unwrap();
    handles.sort_by_key(|h| h.raw().0);
    listed.sort_by_key(|h| h.raw().0);
    assert_eq!(handles, listed);
    let cat_id = Zoo::CLASSES.iter().find(|c| c.name == "Cat").unwrap().type_id;
    for (h, a) in rt.collect_with_handles::<Animal>().unwrap() {
        assert_eq!(h.raw().type_id() == cat_id, a.id < 1000, "animal {} has handle {:?}", a.id, h);
    }
}

#[test]
fn collect_with_handles_pairs_values_and_handles_on_cpu() {
    handles_match_values(&cpu_runtime::<Zoo>(8 << 20));
}

#[test]
fn collect_with_handles_pairs_values_and_handles_on_gpu() {
    let Some(rt) = gpu_runtime::<Zoo>("collect_with_handles_pairs_values_and_handles_on_gpu", 64 << 20)
    else {
        return;
    };
    handles_match_values(&rt);
}

/// `heap_for` gives a heap that holds the objects, without much more; too small a count ends in
/// an out-of-memory error that names the class.
#[test]
fn heap_for_sizes_the_heap_from_object_counts() {
    const N: u64 = 100_000;
    let rt = runtime_builder::<Zoo>(None).unwrap().heap_for::<Cat>(N).build().unwrap();
    rt.parallel_new(Cat::born, N).unwrap();
    assert_eq!(rt.count::<Cat>().unwrap(), N);
    let cat = Zoo::CLASSES.iter().find(|c| c.name == "Cat").unwrap();
    let needed = N.div_ceil(cat.objects_per_block as u64) * Zoo::BLOCK_BYTES;
    let bytes = rt.heap().unwrap().config().total_bytes;
    let concrete = Zoo::CLASSES.iter().filter(|c| !c.is_abstract).count() as u64;
    let most = needed * 5 / 4 + 64 * concrete * Zoo::BLOCK_BYTES + (4 << 20);
    assert!(bytes >= needed && bytes <= most, "{bytes} bytes for {needed} bytes of cats (at most {most})");

    let small = runtime_builder::<Zoo>(None).unwrap().heap_for::<Cat>(N / 8).build().unwrap();
    let err = small.parallel_new(Cat::born, N).unwrap_err();
    let Error::OutOfMemory { ref classes, .. } = err else { panic!("expected out of memory, got {err}") };
    assert_eq!(classes, "Cat", "{err}");
    assert!(err.to_string().contains("dynasoar_new__Zoo__Cat__born"), "{err}");
}

/// Statistics reduced in parallel by `Animal::tally` match the same statistics of the
/// collected animals (exactly: the float sum is of halves of small integers).
fn totals_match_the_objects(rt: &Runtime<Zoo>) {
    use dynasoar::host::{Total, TotalValue};
    zoo(rt, 300);
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
    let empty = rt.read_totals(&totals).unwrap();
    assert_eq!(empty[4], TotalValue::F64(f64::NEG_INFINITY));
    assert_eq!(empty[6], TotalValue::F64(f64::INFINITY));
    rt.parallel_do_with(Animal::tally, totals.device()).unwrap();
    let ids: Vec<i64> = rt.collect::<Animal>().unwrap().iter().map(|a| a.id as i64).collect();
    let expected = [
        TotalValue::U64(ids.len() as u64),
        TotalValue::U64(ids.iter().sum::<i64>() as u64),
        TotalValue::I64(ids.iter().min().unwrap() - 500),
        TotalValue::I64(ids.iter().max().unwrap() - 500),
        TotalValue::F64(*ids.iter().max().unwrap() as f64),
        TotalValue::F64(ids.iter().sum::<i64>() as f64 * 0.5),
        TotalValue::F64(-(*ids.iter().max().unwrap() as f64)),
    ];
    assert_eq!(rt.read_totals(&totals).unwrap(), expected);
}

#[test]
fn totals_match_the_objects_on_cpu() {
    totals_match_the_objects(&cpu_runtime::<Zoo>(8 << 20));
}

#[test]
fn totals_match_the_objects_on_gpu() {
    let Some(rt) = gpu_runtime::<Zoo>("totals_match_the_objects_on_gpu", 64 << 20) else { return };
    totals_match_the_objects(&rt);
}
