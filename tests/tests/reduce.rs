//! `device_reduce` on lanes: every animal's chain over the cats equals the one computed on the
//! host from the cats' places in the heap (the `i`-th cat in heap order in part `i % lanes`,
//! or with `dense` the cat in slot `s` in part `s % lanes`; each part folded in heap order,
//! parts combined as a tree, lower part first), on the CPU backend and on the GPU, where a
//! method with `lanes = 8` runs each animal on 8 threads: for the cats' own launch from the
//! ranked list of the cats (built again after kittens are born), for the dogs' by a walk over
//! the cats' blocks. A method with lanes cannot create objects.

use dynasoar::host::{Error, Runtime};
use dynasoar_models::semantics::{Animal, Cat, Registry, Zoo, chain_combine, chain_step};
use dynasoar_tests::{cpu_runtime, gpu_runtime};

/// The chain of `cats` (handles and ids) with `lanes` parts, as `device_reduce` defines it:
/// by rank, or `by_slot` (a method declared `dense`).
fn expected_chain(cats: &[(u64, u32)], lanes: u32, by_slot: bool) -> u32 {
    let mut sorted = cats.to_vec();
    // `device_do` order: blocks in address order, slots in order (the handle's low bits).
    sorted.sort_by_key(|&(raw, _)| raw);
    let mut parts = vec![1u32; lanes as usize];
    for (rank, &(raw, id)) in sorted.iter().enumerate() {
        let slot = dynasoar::RawHandle(raw).slot() as usize;
        let part = &mut parts[if by_slot { slot } else { rank } % lanes as usize];
        *part = chain_step(*part, id);
    }
    let mut d = parts.len() / 2;
    while d > 0 {
        for i in 0..d {
            parts[i] = chain_combine(parts[i], parts[i + d]);
        }
        d /= 2;
    }
    parts[0]
}

fn chains_match(rt: &Runtime<Zoo>) {
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 300).unwrap();
    // Odd cats leave: half-empty blocks, whose parts differ in size. Then every cat has a
    // kitten: the cats' ranked list must be built again.
    rt.parallel_do(Cat::leave_if_odd).unwrap();
    for (round, cats_now) in [(0, 150), (1, 300)] {
        if round == 1 {
            rt.parallel_do(Cat::have_kitten).unwrap();
        }
        let cats: Vec<(u64, u32)> =
            rt.collect_with_handles::<Cat>().unwrap().iter().map(|(h, c)| (h.raw().0, c.base.id)).collect();
        assert_eq!(cats.len(), cats_now);
        for (method, lanes, by_slot) in [
            (Animal::chain_cats, 8, false),
            (Animal::chain_cats_dense, 8, true),
            (Animal::chain_cats_one_lane, 1, false),
        ] {
            rt.parallel_do(method).unwrap();
            let expect = expected_chain(&cats, lanes, by_slot);
            let animals = rt.collect::<Animal>().unwrap();
            assert_eq!(animals.len(), 300 + cats_now);
            let wrong: Vec<(u32, u32)> =
                animals.iter().filter(|a| a.cats_seen != expect).map(|a| (a.id, a.cats_seen)).collect();
            assert!(
                wrong.is_empty(),
                "round {round}, lanes {lanes}: expected {expect}, got {:?}",
                &wrong[..wrong.len().min(5)]
            );
        }
        // The lane counts split the cats differently, and rank and slot do where some cat's
        // rank and slot differ modulo 8: then the chains differ, so the check above tells the
        // ways apart.
        assert_ne!(expected_chain(&cats, 8, false), expected_chain(&cats, 1, false));
        let mut raws: Vec<u64> = cats.iter().map(|c| c.0).collect();
        raws.sort();
        let apart =
            raws.iter().enumerate().any(|(r, &raw)| r % 8 != dynasoar::RawHandle(raw).slot() as usize % 8);
        assert_eq!(expected_chain(&cats, 8, false) != expected_chain(&cats, 8, true), apart, "round {round}");
        // With every other cat gone, rank and slot are apart.
        assert!(apart || round == 1, "round 0 has cats whose rank and slot differ");
    }
}

#[test]
fn device_reduce_folds_parts_in_order_on_cpu() {
    chains_match(&cpu_runtime::<Zoo>(16 << 20));
}

#[test]
fn device_reduce_folds_parts_in_order_on_gpu() {
    let Some(rt) = gpu_runtime::<Zoo>("device_reduce_folds_parts_in_order_on_gpu", 64 << 20) else {
        return;
    };
    chains_match(&rt);
}

fn lanes_cannot_create(rt: &Runtime<Zoo>) {
    rt.parallel_new(Registry::create, 1).unwrap();
    rt.parallel_do_with(Registry::populate, 10).unwrap();
    let err = rt.parallel_do(Animal::kitten_on_lanes).and_then(|_| rt.sync()).unwrap_err();
    assert!(matches!(err, Error::UndeclaredChange { .. }), "{err}");
    assert!(err.to_string().contains("lanes"), "{err}");
    assert_eq!(rt.count::<Cat>().unwrap(), 10, "a method with lanes created cats");
}

#[test]
fn a_method_with_lanes_cannot_create_on_cpu() {
    lanes_cannot_create(&cpu_runtime::<Zoo>(16 << 20));
}

#[test]
fn a_method_with_lanes_cannot_create_on_gpu() {
    let Some(rt) = gpu_runtime::<Zoo>("a_method_with_lanes_cannot_create_on_gpu", 64 << 20) else {
        return;
    };
    lanes_cannot_create(&rt);
}
