extern crate alloc;
use alloc::vec::Vec;
use std::collections::HashSet;
use std::sync::Mutex;

use super::geometry::*;
use super::*;
use crate::malloc::check::check_allocations;
use crate::malloc::testing::{HostRegion, StormConfig, run_grid, take_until_null};
use crate::malloc::{AnyMalloc, HEADER_BYTES};
use dynasoar_device::rand::Rng;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn region(bytes: u64) -> HostRegion {
    HostRegion::new(MallocKind::Halloc, bytes, 0)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn fill(ptr: *mut u8, size: u32, seed: u32) {
    for i in 0..size as usize {
        // SAFETY: the block is ours and `size` bytes long.
        unsafe { ptr.add(i).write_volatile((seed as usize + i) as u8) };
    }
}

fn holds(ptr: *mut u8, size: u32, seed: u32) -> bool {
    // SAFETY: as for `fill`.
    (0..size as usize).all(|i| unsafe { ptr.add(i).read_volatile() } == (seed as usize + i) as u8)
}

/// After every block was freed: no chunk in use, every slab but the heads free and in the free
/// set, every head marked as the head of its class.
fn assert_all_free(region: &HostRegion) {
    let m = region.typed::<Halloc>();
    let g = m.geometry();
    let heads: Vec<u32> = (0..SIZE_CLASSES).map(|c| m.head(c).load()).collect();
    for slab in 0..g.slab_count {
        let state = SlabState(m.state(g, slab).load());
        assert_eq!(state.count(), 0, "slab {slab} still counts chunks in use: {state:?}");
        for w in 0..g.bitmap_words {
            assert_eq!(m.alloc_word(g, slab, w).load(), 0, "slab {slab} word {w} has allocation bits");
            assert_eq!(m.cont_word(g, slab, w).load(), 0, "slab {slab} word {w} has continuation bits");
        }
        match heads.iter().position(|&h| h == slab + 1) {
            Some(class) => {
                assert!(state.is_head() && state.class() == Some(class as u32), "head {slab}: {state:?}")
            }
            None => {
                assert_eq!(state.0, 0, "slab {slab} is neither a head nor free");
                let in_set = m.set_word(g, FREE_SET, slab / 64).load() & (1 << (slab % 64)) != 0;
                assert!(in_set, "free slab {slab} is missing from the free set");
            }
        }
    }
}

#[test]
fn size_classes_serve_every_size_with_the_smallest_fitting_block() {
    let mut previous = 0;
    for size in 1..=MAX_BLOCK_BYTES {
        let class = size_class(size);
        assert!(class < SIZE_CLASSES, "{size}");
        let bytes = block_bytes(class);
        assert!(bytes >= size && bytes.is_multiple_of(16), "{size} -> {bytes}");
        if class > 0 {
            assert!(block_bytes(class - 1) < size, "{size} could use class {}", class - 1);
        }
        assert!(class >= previous);
        previous = class;
        let chunks = chunks_per_block(class);
        assert!(matches!(chunks, 1 | 2 | 4 | 8));
        assert_eq!(chunks * chunk_bytes(family(class)), bytes);
    }
    assert_eq!(size_class(24), 1, "24 bytes take a 32-byte block (16-byte alignment)");
    assert_eq!(block_bytes(size_class(1025)), 1536);
}

#[test]
fn geometry_fits_the_region_and_scales_slabs_with_it() {
    for bytes in [256 * KIB, 300 * KIB, 532 * KIB, MIB, 17 * MIB, 64 * MIB, 1 << 30, 100 << 30, 1 << 40] {
        let body = bytes - HEADER_BYTES;
        let g = Geometry::compute(body, 0);
        let slab = g.slab_bytes();
        assert!(g.pool_end() <= body, "{bytes}: layout overruns the body");
        assert_eq!(g.pool % 256, 0);
        assert!(g.slab_count >= 16, "{bytes}: only {} slabs", g.slab_count);
        assert!((8 * KIB..=4 * MIB).contains(&slab));
        if slab > 8 * KIB && slab < 4 * MIB {
            assert!(g.slab_count as u64 >= TARGET_SLABS - 1, "{bytes}: {} slabs", g.slab_count);
        }
        // Metadata areas in order, none overlapping the next.
        assert!(CONTROL_BYTES <= g.states);
        assert!(g.states + 8 * g.slab_count as u64 <= g.sets);
        assert!(g.sets + 8 * (SET_COUNT * g.set_words) as u64 <= g.alloc_bits);
        assert!(g.alloc_bits + 8 * (g.bitmap_words as u64 * g.slab_count as u64) <= g.cont_bits);
        assert!(g.cont_bits + 8 * (g.bitmap_words as u64 * g.slab_count as u64) <= g.pool);
        assert!(g.set_words as u64 * 64 >= g.slab_count as u64);
        for class in 0..SIZE_CLASSES {
            let size = g.size(class);
            let fam = g.family(family(class));
            assert!(size.blocks >= 2, "{bytes}: class {class} has {} blocks per slab", size.blocks);
            assert!(size.blocks * chunks_per_block(class) <= fam.chunks);
            assert!(fam.chunks as u64 <= g.bitmap_words as u64 * 64);
            assert!(size.step < size.blocks && gcd(size.step, size.blocks) == 1, "{bytes}: class {class}");
            assert!(fam.sparse_max < fam.roomy_max && fam.roomy_max < fam.replace_above);
            assert!(fam.replace_above < fam.chunks);
        }
    }
    // The parameter caps the slab size.
    assert_eq!(Geometry::compute(1 << 30, 64 * KIB).slab_bytes(), 64 * KIB);
    assert_eq!(Geometry::compute(1 << 30, 1).slab_bytes(), 8 * KIB);
    assert_eq!(Geometry::compute(1 << 40, 1 << 40).slab_bytes(), 8 * MIB);
}

#[test]
fn the_hash_visits_every_block() {
    for bytes in [256 * KIB, 17 * MIB, 1 << 30] {
        let g = Geometry::compute(bytes, 0);
        for class in 0..SIZE_CLASSES {
            let SizeGeometry { blocks, step } = *g.size(class);
            let mut seen = alloc::vec![false; blocks as usize];
            let mut block = (7 * THREAD_FREQ) % blocks;
            for _ in 0..blocks {
                seen[block as usize] = true;
                block = (block + step) % blocks;
            }
            assert!(seen.iter().all(|&s| s), "{bytes}: class {class} misses blocks");
        }
    }
}

#[test]
fn blocks_have_their_class_size_and_alignment() {
    let r = region(MIB);
    let m = r.typed::<Halloc>();
    let g = *m.geometry();
    let pool = r.region().body_addr() + g.pool;
    let mut live = Vec::new();
    let boundaries =
        [1, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49, 64, 65, 96, 97, 128, 129, 192, 193, 256, 257, 384];
    let more = [385, 512, 513, 768, 769, 1024, 1025, 1536, 1537, 2048, 2049, 3071, 3072];
    for (i, &size) in boundaries.iter().chain(more.iter()).enumerate() {
        for j in 0..3 {
            let ptr = m.malloc(size);
            assert!(!ptr.is_null(), "{size} bytes");
            let addr = ptr as u64;
            assert_eq!(addr % 16, 0, "{size} bytes at {addr:#x}");
            assert!(addr >= pool && addr + size as u64 <= pool + ((g.slab_count as u64) << g.slab_shift));
            let block = block_bytes(size_class(size)) as u64;
            assert_eq!(((addr - pool) & (g.slab_bytes() - 1)) % block, 0, "{size}: not on a block boundary");
            fill(ptr, size, (i * 3 + j) as u32);
            live.push((ptr, size, (i * 3 + j) as u32));
        }
    }
    let entries: Vec<(u64, u64)> = live.iter().map(|&(p, s, _)| (p as u64, s as u64)).collect();
    assert_eq!(check_allocations(&entries, 16, Some(r.bounds())), Ok(live.len()));
    for &(ptr, size, seed) in &live {
        assert!(holds(ptr, size, seed), "{size}-byte block at {ptr:?} was overwritten");
        unsafe { m.free(ptr) };
    }
    assert_eq!(r.errors(), 0);
    assert_all_free(&r);
}

#[test]
fn freed_blocks_are_reused() {
    let r = region(256 * KIB);
    let m = r.typed::<Halloc>();
    let mut counts = Vec::new();
    for _ in 0..4 {
        let mut blocks = Vec::new();
        loop {
            let ptr = m.malloc(64);
            if ptr.is_null() {
                break;
            }
            blocks.push(ptr as u64);
        }
        let distinct: HashSet<u64> = blocks.iter().copied().collect();
        assert_eq!(distinct.len(), blocks.len(), "a block was handed out twice");
        counts.push(blocks.len());
        for &b in &blocks {
            unsafe { m.free(b as *mut u8) };
        }
        assert_all_free(&r);
    }
    assert!(counts.iter().all(|&c| c == counts[0]), "blocks per fill: {counts:?}");
    assert_eq!(r.errors(), 0);
}

#[test]
fn fills_most_of_the_pool_before_running_out() {
    for size in [16, 48, 256, 1024, 3072] {
        let r = region(4 * MIB);
        let m = r.typed::<Halloc>();
        let g = *m.geometry();
        let pool = (g.slab_count as u64) << g.slab_shift;
        let mut blocks = Vec::new();
        loop {
            let ptr = m.malloc(size);
            if ptr.is_null() {
                break;
            }
            blocks.push(ptr);
        }
        let usable = g.size(size_class(size)).blocks as u64 * g.slab_count as u64;
        assert!(blocks.len() as u64 * 10 >= usable * 8, "{size}: {} of {usable} blocks", blocks.len());
        assert!(blocks.len() as u64 * size as u64 <= pool);
        for b in blocks {
            unsafe { m.free(b) };
        }
        assert_all_free(&r);
    }
}

#[test]
fn out_of_memory_returns_null_and_recovers_after_frees() {
    let r = region(256 * KIB);
    let any: AnyMalloc = r.any();
    let sizes = [16, 100, 700, 3000];
    let mut blocks = Vec::new();
    let mut failures = 0;
    for round in 0..4000u32 {
        let ptr = any.malloc(sizes[(round % 4) as usize]);
        if ptr.is_null() {
            failures += 1;
        } else {
            blocks.push(ptr);
        }
    }
    assert!(failures > 0, "256 KiB served {} blocks of up to 3000 bytes", blocks.len());
    assert_ne!(r.errors() & errors::OUT_OF_MEMORY, 0);
    // Still failing while full: no hang, no spurious success in another class's slabs.
    assert!(any.malloc(3000).is_null());
    for b in blocks {
        unsafe { any.free(b) };
    }
    assert_eq!(r.errors() & errors::INVALID_FREE, 0);
    assert_all_free(&r);
    for size in [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072] {
        let ptr = any.malloc(size);
        assert!(!ptr.is_null(), "{size} bytes after everything was freed");
        unsafe { any.free(ptr) };
    }
}

#[test]
fn large_requests_go_to_cudas_allocator() {
    let r = region(256 * KIB);
    let m = r.typed::<Halloc>();
    let inside = m.malloc(3072);
    assert!(r.region().contains(inside));
    for size in [3073, 4096, 1 << 20] {
        let ptr = m.malloc(size);
        assert!(!ptr.is_null() && !r.region().contains(ptr), "{size} bytes should be relayed");
        fill(ptr, size, 9);
        assert!(holds(ptr, size, 9));
        unsafe { m.free(ptr) };
    }
    unsafe { m.free(inside) };
    assert_eq!(r.errors(), 0);
    assert_all_free(&r);
}

#[test]
fn bad_frees_raise_invalid_free() {
    type Case = (&'static str, fn(&Halloc, &HostRegion));
    let cases: [Case; 5] = [
        ("double free", |m, _| {
            let p = m.malloc(32);
            unsafe { m.free(p) };
            unsafe { m.free(p) };
        }),
        ("inside a block", |m, _| {
            let p = m.malloc(128);
            unsafe { m.free(p.wrapping_add(16)) };
        }),
        ("not on a chunk", |m, _| {
            let p = m.malloc(16);
            unsafe { m.free(p.wrapping_add(8)) };
        }),
        ("metadata", |m, r| unsafe { m.free(r.region().body().wrapping_add(64)) }),
        ("a free slab", |m, r| {
            let g = *m.geometry();
            unsafe { m.free(r.region().body().wrapping_add((g.pool + g.slab_bytes() * 5) as usize)) };
        }),
    ];
    for (what, case) in cases {
        let r = region(256 * KIB);
        let m = r.typed::<Halloc>();
        case(&m, &r);
        assert_eq!(r.errors(), errors::INVALID_FREE, "{what}");
    }
    // A rejected free leaves the block alone: it can still be freed properly.
    let r = region(256 * KIB);
    let m = r.typed::<Halloc>();
    let p = m.malloc(128);
    fill(p, 128, 1);
    unsafe { m.free(p.wrapping_add(32)) };
    assert!(holds(p, 128, 1));
    unsafe { m.free(p) };
    assert_eq!(r.errors(), errors::INVALID_FREE);
    assert_all_free(&r);
}

#[test]
fn sparse_slabs_switch_size_class_within_their_family() {
    let r = region(256 * KIB);
    let m = r.typed::<Halloc>();
    let g = *m.geometry();
    let pool = r.region().body_addr() + g.pool;
    let slab_of = |p: *mut u8| ((p as u64 - pool) >> g.slab_shift) as u32;
    // Fill the pool with 32-byte blocks, then keep one per slab (under 2% of a slab).
    let blocks = take_until_null(|| m.malloc(32));
    let mut kept: Vec<Option<*mut u8>> = alloc::vec![None; g.slab_count as usize];
    for p in blocks {
        let slot = &mut kept[slab_of(p) as usize];
        if slot.is_none() {
            *slot = Some(p);
            fill(p, 32, slab_of(p));
        } else {
            unsafe { m.free(p) };
        }
    }
    assert!(kept.iter().all(Option::is_some), "every slab held 32-byte blocks");
    // No slab is free, so a class of another family has nowhere to go...
    assert!(m.malloc(48).is_null());
    // ...but 64-byte blocks (same 16-byte chunks) take over the sparse slabs around the
    // blocks that are left.
    let mut bigger = Vec::new();
    loop {
        let p = m.malloc(64);
        if p.is_null() {
            break;
        }
        fill(p, 64, 1000 + bigger.len() as u32);
        bigger.push(p);
    }
    let switched: HashSet<u32> = bigger.iter().map(|&p| slab_of(p)).collect();
    assert!(switched.len() as u32 >= g.slab_count - 2, "64-byte blocks in {} slabs", switched.len());
    let mut entries: Vec<(u64, u64)> = bigger.iter().map(|&p| (p as u64, 64)).collect();
    entries.extend(kept.iter().flatten().map(|&p| (p as u64, 32)));
    assert_eq!(check_allocations(&entries, 16, Some(r.bounds())), Ok(entries.len()));
    for (i, &p) in bigger.iter().enumerate() {
        assert!(holds(p, 64, 1000 + i as u32));
        unsafe { m.free(p) };
    }
    for p in kept.into_iter().flatten() {
        assert!(holds(p, 32, slab_of(p)), "a 32-byte block of a switched slab was overwritten");
        unsafe { m.free(p) };
    }
    assert_eq!(r.errors(), 0);
    assert_all_free(&r);
    // Free again: any family can have them.
    assert!(!m.malloc(48).is_null());
}

#[test]
fn storm_of_every_size_class() {
    let r = region(64 * MIB);
    let report =
        r.storm(StormConfig { threads: 16, per_thread: 200, sizes: (1, MAX_BLOCK_BYTES), rounds: 6 });
    assert_eq!(report.failed, 0);
    assert_eq!(report.checked, 16 * 200 * 6);
    assert_eq!(r.errors(), 0);
    assert_all_free(&r);
}

#[test]
fn storm_through_a_small_pool_fails_cleanly_and_recovers() {
    let r = region(256 * KIB);
    let report = r.storm(StormConfig { threads: 32, per_thread: 64, sizes: (1, 256), rounds: 8 });
    assert!(report.failed > 0 && report.checked > 0, "{report:?}");
    assert_eq!(r.errors() & !errors::OUT_OF_MEMORY, 0);
    assert_all_free(&r);
    let report = r.storm(StormConfig { threads: 8, per_thread: 8, sizes: (1, 256), rounds: 3 });
    assert_eq!(report.failed, 0, "after running out and freeing everything");
    assert_all_free(&r);
}

#[test]
fn mixed_mallocs_and_frees_keep_blocks_intact() {
    let r = region(2 * MIB);
    let m = r.typed::<Halloc>();
    let failures = Mutex::new(0u32);
    run_grid(16, |t| {
        let mut rng = Rng::new(42, t as u64);
        let mut mine: Vec<(*mut u8, u32, u32)> = Vec::new();
        let mut failed = 0;
        for op in 0..3000u32 {
            if mine.len() < 48 && (mine.is_empty() || rng.below(3) != 0) {
                let size = 1 + rng.below(700);
                let p = m.malloc(size);
                if p.is_null() {
                    failed += 1;
                    continue;
                }
                let seed = t * 1_000_003 + op;
                fill(p, size, seed);
                mine.push((p, size, seed));
            } else {
                let (p, size, seed) = mine.swap_remove(rng.below(mine.len() as u32) as usize);
                assert!(holds(p, size, seed), "thread {t}: a {size}-byte block was overwritten");
                unsafe { m.free(p) };
            }
        }
        for (p, size, seed) in mine {
            assert!(holds(p, size, seed));
            unsafe { m.free(p) };
        }
        *failures.lock().unwrap() += failed;
    });
    assert_eq!(*failures.lock().unwrap(), 0);
    assert_eq!(r.errors(), 0);
    assert_all_free(&r);
}
