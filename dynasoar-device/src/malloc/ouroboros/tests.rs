use super::*;

use crate::malloc::testing::{HostRegion, StormConfig, run_grid, take_until_null};
extern crate alloc;
use alloc::vec::Vec;

fn page_static(bytes: u64) -> HostRegion {
    HostRegion::new(MallocKind::OuroPageStatic, bytes, 0)
}

#[test]
fn layout_fits_the_body_for_all_region_sizes() {
    for body in [64 * 1024, 256 * 1024, 1 << 20, 1 << 30, 200 << 30] {
        let layout = Layout::new(body, false, false);
        assert!(layout.chunks > 0);
        assert!(layout.pool + layout.chunks * CHUNK_BYTES <= body);
        assert_eq!(layout.pool % POOL_ALIGN, 0);
        assert!(layout.chunks * CHUNK_BYTES <= MAX_POOL_BYTES);
    }
}

#[test]
fn rounds_to_page_sizes_with_sixteen_byte_alignment() {
    let region = page_static(1 << 20);
    let m = region.typed::<PageStatic>();
    for size in [1u32, 16, 17, 32, 33, 64, 100, 128, 4096, 4097, 8192] {
        let a = m.malloc(size);
        let b = m.malloc(size);
        assert!(!a.is_null() && !b.is_null());
        assert_eq!(a as u64 % 16, 0);
        let page = (size as u64).max(16).next_power_of_two();
        assert!(region.region().contains(a));
        assert_eq!((a as u64).abs_diff(b as u64), page, "size {size}");
    }
    assert_eq!(region.errors(), 0);
}

#[test]
fn reuses_freed_pages() {
    let region = page_static(1 << 20);
    let m = region.typed::<PageStatic>();
    let a = m.malloc(48);
    unsafe { m.free(a) };
    // The only free 64-byte pages are the chunk's others and `a`: all come back eventually.
    let pages: Vec<u64> = (0..(CHUNK_BYTES / 64)).map(|_| m.malloc(64) as u64).collect();
    assert!(pages.contains(&(a as u64)));
    assert_eq!(region.errors(), 0);
}

#[test]
fn runs_out_of_memory_and_recovers() {
    let region = page_static(256 * 1024);
    let m = region.typed::<PageStatic>();
    let held = take_until_null(|| m.malloc(256));
    assert!(
        held.len() as u64
            >= Layout::new(region.region().body_bytes(), false, false).chunks * (CHUNK_BYTES / 256) / 2
    );
    assert!(m.malloc(256).is_null());
    unsafe { m.free(held[3]) };
    assert_eq!(m.malloc(256), held[3]);
    assert_eq!(region.errors(), 0);
}

#[test]
fn relays_large_requests_to_the_system_allocator() {
    let region = page_static(256 * 1024);
    let m = region.typed::<PageStatic>();
    let p = m.malloc(CHUNK_BYTES as u32 + 1);
    assert!(!p.is_null());
    assert!(!region.region().contains(p));
    unsafe { m.free(p) };
    assert_eq!(region.errors(), 0);
}

#[test]
fn detects_invalid_frees() {
    let region = page_static(256 * 1024);
    let m = region.typed::<PageStatic>();
    let a = m.malloc(64);
    unsafe { m.free(a.wrapping_add(16)) };
    assert_ne!(region.errors() & errors::INVALID_FREE, 0);
    // Inside the region but in no chunk that was handed out.
    let region = page_static(256 * 1024);
    let m = region.typed::<PageStatic>();
    let _ = m.malloc(64);
    unsafe { m.free(region.region().body()) };
    assert_ne!(region.errors() & errors::INVALID_FREE, 0);
}

#[test]
fn queue_survives_concurrent_producers_and_consumers() {
    let region = page_static(1 << 20);
    let m = region.typed::<PageStatic>();
    let queue = m.queue(3).expect("class 3 exists");
    run_grid(8, |thread| {
        for i in 0..500u32 {
            assert!(queue.enqueue(thread * 500 + i));
            let mut backoff = arch::Backoff::new();
            loop {
                if queue.dequeue().is_some() {
                    break;
                }
                backoff.snooze();
            }
        }
    });
    assert!(queue.dequeue().is_none());
}

#[test]
fn storms_with_reuse_for_every_variant() {
    for kind in [
        MallocKind::OuroPageStatic,
        MallocKind::OuroPageArray,
        MallocKind::OuroPageLinked,
        MallocKind::OuroChunkStatic,
        MallocKind::OuroChunkArray,
        MallocKind::OuroChunkLinked,
    ] {
        let region = HostRegion::new(kind, 8 << 20, 0);
        let report = region.storm(StormConfig { threads: 8, per_thread: 200, sizes: (1, 2048), rounds: 6 });
        assert_eq!(report.failed, 0, "{kind:?}");
        assert!(report.checked > 0);
        assert_eq!(region.errors(), 0);
    }
}

#[test]
fn many_threads_missing_at_once_share_one_refill() {
    // 64 threads, each wanting a little of the smallest page size, in a small region: without
    // the refill gate each miss would take its own chunk and the 16-byte share would run out.
    let region = page_static(256 * 1024);
    let report = region.storm(StormConfig { threads: 64, per_thread: 20, sizes: (1, 16), rounds: 4 });
    assert_eq!(report.failed, 0);
    assert!(report.checked > 0);
    assert_eq!(region.errors(), 0);
}

fn chunk_static(bytes: u64) -> HostRegion {
    HostRegion::new(MallocKind::OuroChunkStatic, bytes, 0)
}

const ALL_KINDS: [MallocKind; 6] = [
    MallocKind::OuroPageStatic,
    MallocKind::OuroPageArray,
    MallocKind::OuroPageLinked,
    MallocKind::OuroChunkStatic,
    MallocKind::OuroChunkArray,
    MallocKind::OuroChunkLinked,
];

/// Runs `test` on a fresh region of `bytes` with the allocator of `kind`.
fn with_each_kind(
    bytes: u64,
    test: impl Fn(MallocKind, &HostRegion, &dyn Fn(u32) -> *mut u8, &dyn Fn(*mut u8)),
) {
    fn run<M: DeviceMalloc>(
        kind: MallocKind,
        bytes: u64,
        test: &impl Fn(MallocKind, &HostRegion, &dyn Fn(u32) -> *mut u8, &dyn Fn(*mut u8)),
    ) {
        let region = HostRegion::new(kind, bytes, 0);
        let m = region.typed::<M>();
        test(kind, &region, &|size| m.malloc(size), &|ptr| unsafe { m.free(ptr) });
    }
    run::<PageStatic>(ALL_KINDS[0], bytes, &test);
    run::<PageArray>(ALL_KINDS[1], bytes, &test);
    run::<PageLinked>(ALL_KINDS[2], bytes, &test);
    run::<ChunkStatic>(ALL_KINDS[3], bytes, &test);
    run::<ChunkArray>(ALL_KINDS[4], bytes, &test);
    run::<ChunkLinked>(ALL_KINDS[5], bytes, &test);
}

#[test]
fn every_variant_has_its_own_kind_and_layout() {
    assert_eq!(PageStatic::KIND, MallocKind::OuroPageStatic);
    assert_eq!(PageArray::KIND, MallocKind::OuroPageArray);
    assert_eq!(PageLinked::KIND, MallocKind::OuroPageLinked);
    assert_eq!(ChunkStatic::KIND, MallocKind::OuroChunkStatic);
    assert_eq!(ChunkArray::KIND, MallocKind::OuroChunkArray);
    assert_eq!(ChunkLinked::KIND, MallocKind::OuroChunkLinked);
    const { assert!(!PageStatic::CHUNK_BASED && !PageStatic::VIRTUAL_STORAGE) };
    const { assert!(!PageArray::CHUNK_BASED && PageArray::VIRTUAL_STORAGE && !PageArray::LINKED_STORAGE) };
    const { assert!(!PageLinked::CHUNK_BASED && PageLinked::LINKED_STORAGE) };
    const { assert!(ChunkStatic::CHUNK_BASED && !ChunkStatic::VIRTUAL_STORAGE) };
    const { assert!(ChunkArray::CHUNK_BASED && ChunkArray::VIRTUAL_STORAGE && !ChunkArray::LINKED_STORAGE) };
    const { assert!(ChunkLinked::CHUNK_BASED && ChunkLinked::LINKED_STORAGE) };
    // Virtualized queues keep no static slots: far less metadata than static page queues.
    let body = 64 << 20;
    let page_static = Layout::new(body, false, false);
    let page_virtual = Layout::new(body, false, true);
    assert!(page_virtual.chunks > page_static.chunks + page_static.chunks / 10);
    for body in [64 * 1024, 256 * 1024, 1 << 20, 1 << 30, 200 << 30] {
        for chunk_based in [false, true] {
            let layout = Layout::new(body, chunk_based, true);
            assert!(layout.chunks > 0);
            assert!(layout.pool + layout.chunks * CHUNK_BYTES <= body);
            for class in 0..CLASSES {
                assert!(layout.capacity[class] <= (layout.segments[class] - 1) * queue::SEGMENT_SLOTS);
            }
        }
    }
}

#[test]
fn every_variant_reuses_runs_out_and_recovers() {
    with_each_kind(256 * 1024, |kind, region, malloc, free| {
        let mut held = Vec::new();
        loop {
            let p = malloc(256);
            if p.is_null() {
                break;
            }
            assert_eq!(p as u64 % 16, 0);
            held.push(p);
        }
        assert!(held.len() > 200, "{kind:?}: only {} pages", held.len());
        assert!(malloc(256).is_null());
        free(held[7]);
        assert_eq!(malloc(200), held[7], "{kind:?}");
        for p in held {
            free(p);
        }
        // Everything is free again: the same number of pages comes back.
        let mut again = 0;
        let mut kept = Vec::new();
        loop {
            let p = malloc(256);
            if p.is_null() {
                break;
            }
            kept.push(p);
            again += 1;
        }
        assert!(again > 200, "{kind:?}");
        assert_eq!(region.errors(), 0, "{kind:?}");
    });
}

#[test]
fn every_variant_detects_double_and_misaligned_frees() {
    with_each_kind(256 * 1024, |kind, region, malloc, free| {
        let a = malloc(64);
        free(a.wrapping_add(16));
        assert_ne!(region.errors() & errors::INVALID_FREE, 0, "{kind:?}");
    });
    for kind in [MallocKind::OuroChunkStatic, MallocKind::OuroChunkArray, MallocKind::OuroChunkLinked] {
        let region = HostRegion::new(kind, 256 * 1024, 0);
        let m = region.any();
        let a = m.malloc(64);
        let _b = m.malloc(64);
        unsafe { m.free(a) };
        assert_eq!(region.errors(), 0);
        unsafe { m.free(a) };
        assert_ne!(region.errors() & errors::INVALID_FREE, 0, "{kind:?}");
    }
}

#[test]
fn chunk_variants_give_entirely_free_chunks_to_other_page_sizes() {
    for kind in [MallocKind::OuroChunkStatic, MallocKind::OuroChunkArray, MallocKind::OuroChunkLinked] {
        let region = HostRegion::new(kind, 512 * 1024, 0);
        let m = region.any();
        let mut counts = Vec::new();
        // Fill the pool with each size in turn, freeing everything in between.
        for size in [16u32, 256, 64, 8192, 16] {
            let held = take_until_null(|| m.malloc(size));
            counts.push(held.len() as u64 * size as u64);
            for p in held {
                unsafe { m.free(p) };
            }
        }
        // Each size got (nearly) the whole pool: chunks moved between page sizes.
        let most = *counts.iter().max().unwrap_or(&0);
        for bytes in &counts {
            assert!(*bytes * 10 >= most * 8, "{kind:?}: {counts:?}");
        }
        assert_eq!(region.errors() & errors::INVALID_FREE, 0, "{kind:?}");
    }
}

#[test]
fn virtualized_queues_cross_segments_and_return_their_chunks() {
    for kind in [MallocKind::OuroPageArray, MallocKind::OuroPageLinked] {
        let region = HostRegion::new(kind, 4 << 20, 0);
        let (queue, pool, chunks) = if kind == MallocKind::OuroPageArray {
            let m = region.typed::<PageArray>();
            assert!(m.reserve_queue_storage(0, 2 * queue::SEGMENT_SLOTS));
            (m.queue(0).expect("class 0"), m.pool(), m.layout.chunks)
        } else {
            let m = region.typed::<PageLinked>();
            assert!(m.reserve_queue_storage(0, 2 * queue::SEGMENT_SLOTS));
            (m.queue(0).expect("class 0"), m.pool(), m.layout.chunks)
        };
        let seen: Vec<core::sync::atomic::AtomicU32> = (0..8 * 3000).map(|_| Default::default()).collect();
        // Every thread keeps up to 300 entries in the queue, so segments fill and drain out of
        // order across many tickets.
        run_grid(8, |thread| {
            for i in 0..3000u32 {
                assert!(queue.enqueue(thread * 3000 + i));
                if i >= 300 {
                    let mut backoff = arch::Backoff::new();
                    let value = loop {
                        if let Some(value) = queue.dequeue() {
                            break value;
                        }
                        backoff.snooze();
                    };
                    seen[value as usize].fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                }
            }
        });
        while let Some(value) = queue.dequeue() {
            seen[value as usize].fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        }
        assert!(seen.iter().all(|n| n.load(core::sync::atomic::Ordering::Relaxed) == 1), "{kind:?}");
        // 24,000 entries went through about 12 segments; at most the last one or two are
        // still mapped.
        let handle = region.region();
        // SAFETY: the pool's bump counter, read atomically.
        let taken = unsafe { handle.atomic64(NEXT_CHUNK) }.load().min(chunks);
        let returned = pool_returned(&pool);
        assert!(taken >= 2, "{kind:?}");
        assert!(taken - returned <= 2, "{kind:?}: {taken} taken, {returned} returned");
    }
}

fn pool_returned(pool: &queue::ChunkPool) -> u64 {
    pool.returned_count()
}

#[test]
fn chunk_layout_fits_the_body_for_all_region_sizes() {
    for body in [64 * 1024, 256 * 1024, 1 << 20, 1 << 30, 200 << 30] {
        let layout = Layout::new(body, true, false);
        assert!(layout.chunks > 0);
        assert!(layout.pool + layout.chunks * CHUNK_BYTES <= body);
        assert_eq!(layout.pool % POOL_ALIGN, 0);
        assert!(layout.free_chunk_slots + 4 * layout.chunks <= layout.pool);
    }
}

#[test]
fn chunk_queues_hand_out_every_page_of_a_chunk_once() {
    let region = chunk_static(1 << 20);
    let m = region.typed::<ChunkStatic>();
    for size in [16u32, 100, 4096, 8192] {
        let page = (size as u64).next_power_of_two();
        let mut pages: Vec<u64> = (0..(CHUNK_BYTES / page)).map(|_| m.malloc(size) as u64).collect();
        assert!(pages.iter().all(|&p| p != 0 && p % 16 == 0), "size {size}");
        pages.sort_unstable();
        pages.dedup();
        assert_eq!(pages.len() as u64, CHUNK_BYTES / page, "size {size}");
        // All pages of one chunk.
        assert_eq!((pages[pages.len() - 1] - pages[0]) / CHUNK_BYTES, 0, "size {size}");
    }
    assert_eq!(region.errors(), 0);
}

#[test]
fn entirely_free_chunks_serve_other_page_sizes() {
    let region = chunk_static(256 * 1024);
    let m = region.typed::<ChunkStatic>();
    let chunks = Layout::new(region.region().body_bytes(), true, false).chunks;
    // Fill the whole pool with 16-byte pages, free them all, then fill it with 256-byte pages.
    for size in [16u32, 256, 64, 8192] {
        let held = take_until_null(|| m.malloc(size));
        assert_eq!(held.len() as u64, chunks * (CHUNK_BYTES / size as u64), "size {size}");
        for p in held {
            unsafe { m.free(p) };
        }
    }
    assert_eq!(region.errors(), 0);
}

#[test]
fn chunk_queues_run_out_of_memory_and_recover() {
    let region = chunk_static(256 * 1024);
    let m = region.typed::<ChunkStatic>();
    let held = take_until_null(|| m.malloc(512));
    assert!(m.malloc(512).is_null());
    unsafe { m.free(held[5]) };
    assert_eq!(m.malloc(300), held[5]);
    assert_eq!(region.errors(), 0);
}

#[test]
fn chunk_queues_detect_double_and_invalid_frees() {
    let region = chunk_static(256 * 1024);
    let m = region.typed::<ChunkStatic>();
    let a = m.malloc(64);
    let _b = m.malloc(64);
    unsafe { m.free(a) };
    assert_eq!(region.errors(), 0);
    unsafe { m.free(a) };
    assert_ne!(region.errors() & errors::INVALID_FREE, 0);
    let region = chunk_static(256 * 1024);
    let m = region.typed::<ChunkStatic>();
    let a = m.malloc(64);
    unsafe { m.free(a.wrapping_add(16)) };
    assert_ne!(region.errors() & errors::INVALID_FREE, 0);
}

#[test]
fn chunk_queues_storm_through_a_small_pool() {
    // Mixed sizes in a pool that must recycle chunks between page sizes.
    let region = chunk_static(1 << 20);
    let report = region.storm(StormConfig { threads: 16, per_thread: 20, sizes: (1, 4096), rounds: 8 });
    assert_eq!(report.failed, 0);
    assert!(report.checked > 0);
    assert_eq!(region.errors(), 0);
}

#[test]
fn every_variant_survives_storms_under_pool_pressure() {
    // Small pages through a pool that runs short: queue segments are mapped and drained while
    // data chunks and storage chunks compete for the pool, and chunks move between sizes.
    for kind in ALL_KINDS {
        let region = HostRegion::new(kind, 512 * 1024, 0);
        let report = region.storm(StormConfig { threads: 32, per_thread: 100, sizes: (1, 300), rounds: 6 });
        assert!(report.checked > 0, "{kind:?}");
        assert_eq!(region.errors() & !errors::OUT_OF_MEMORY, 0, "{kind:?}");
        // Once everything is freed, a modest round succeeds in full.
        let report = region.storm(StormConfig { threads: 8, per_thread: 20, sizes: (1, 64), rounds: 2 });
        assert_eq!(report.failed, 0, "{kind:?}");
    }
}

#[test]
fn layout_search_fits_at_its_first_try() {
    // `Layout::new` runs on every attach: its per-chunk estimates must be upper bounds.
    for body in [256 * 1024, 1 << 20, 1 << 30, 60 << 30] {
        for (chunk_based, virtual_storage) in [(false, false), (false, true), (true, false), (true, true)] {
            let layout = Layout::new(body, chunk_based, virtual_storage);
            let guess = Layout::estimated_chunks(body, chunk_based, virtual_storage);
            assert_eq!(layout.chunks, guess, "{body} {chunk_based} {virtual_storage}");
        }
    }
}
