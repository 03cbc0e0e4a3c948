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
            assert_eq!(queue.enqueue(thread * 500 + i), Ok(()));
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
                assert_eq!(queue.enqueue(thread * 3000 + i), Ok(()));
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

// ---- Virtualized queues: storage promise, ring rounds, bounded waits ----

extern crate std;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use queue::{QueueError, Segments, WaitSite, jitter, with_wait_rounds};

/// Tests that make one region's queues stall run one at a time (the stall switch is global).
static JITTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Body offsets of a stand-alone virtualized queue, its pool and its storage counters.
const T_NEXT: u64 = 0;
const T_COMMITTED: u64 = 8;
const T_RETURNED_META: u64 = 64;
const T_QUEUE_META: u64 = 128;
const T_MAPPED: u64 = 160;
const T_RESERVED: u64 = 168;
const T_HEAD: u64 = 176;
const T_TAIL: u64 = 184;
const T_RETURNED_SLOTS: u64 = 256;
const T_ENTRIES: u64 = 4096;
const T_POOL: u64 = 16384;

/// A virtualized queue alone in a region: segments of `slots` slots, `length` segments in its
/// ring (or window), `reserved` chunks promised to it, and a pool of `chunks` chunks.
struct TestQueue {
    region: HostRegion,
    queue: queue::IndexQueue,
    segments: Segments,
}

impl TestQueue {
    fn new(linked: bool, slots: u64, length: u64, reserved: u64, chunks: u64) -> Self {
        let region =
            HostRegion::new(MallocKind::OuroPageArray, HEADER_BYTES + T_POOL + chunks * CHUNK_BYTES, 0);
        let r = region.region();
        let pool = ChunkPool {
            region: r,
            base: T_POOL,
            chunks,
            next: T_NEXT,
            committed: T_COMMITTED,
            returned_meta: T_RETURNED_META,
            returned_slots: T_RETURNED_SLOTS,
        };
        assert!(T_RETURNED_SLOTS + 4 * chunks <= T_ENTRIES && T_ENTRIES + 8 * length <= T_POOL);
        let segments = Segments { pool, slots, mapped: T_MAPPED, reserved: T_RESERVED };
        // (More reserved than chunks only in the test of a broken promise.)
        for _ in 0..reserved.min(chunks) {
            assert!(pool.commit());
        }
        // SAFETY: the counter lies in the zeroed body; only accessed atomically.
        unsafe { r.atomic64(T_RESERVED) }.store(reserved);
        let storage = if linked {
            queue::Storage::Linked { head: T_HEAD, tail: T_TAIL, window: length, segments }
        } else {
            queue::Storage::Array { entries: T_ENTRIES, length, segments }
        };
        let queue =
            queue::IndexQueue { region: r, meta: T_QUEUE_META, capacity: (length - 1) * slots, storage };
        TestQueue { region, queue, segments }
    }

    fn word(&self, offset: u64) -> &Atomic64 {
        // SAFETY: a counter of this test's layout, only accessed atomically.
        unsafe { self.queue.region.atomic64(offset) }
    }

    /// Chunks in the pool (returned or never taken).
    fn chunks_in_pool(&self) -> u64 {
        self.segments.pool.returned_count() + self.segments.pool.untouched_count()
    }

    fn wait_bits(&self) -> u32 {
        self.region.errors() & !(errors::OURO_WAIT_TIMEOUT - 1)
    }
}

fn site_bit(site: WaitSite) -> u32 {
    errors::ouro_wait_site(site as u32)
}

#[test]
fn a_later_segment_never_takes_the_array_entry_of_an_earlier_one() {
    // Two entries, four slots a segment: segment 2 maps through entry 0, but only after
    // segment 0 was mapped and drained. Before the fix, an enqueuer of segment 2 that found
    // entry 0 unmapped took it, and the enqueuers and dequeuers of segment 0 then waited for
    // it forever.
    let t = TestQueue::new(false, 4, 2, 3, 8);
    // An enqueuer of ticket 8 (segment 2) arrives before anyone of segment 0.
    t.word(T_QUEUE_META + 8).store(8);
    let result = with_wait_rounds(256, || t.queue.enqueue(42));
    assert_eq!(result, Err(QueueError::TimedOut));
    assert_eq!(t.word(T_ENTRIES).load(), 0, "entry 0 stays free for segment 0");
    assert_eq!(t.segments.mapped_count(), 0);
    assert_eq!(t.chunks_in_pool(), 8);
    assert_eq!(t.wait_bits(), site_bit(WaitSite::SegmentMapped));
}

#[test]
fn array_entries_serve_their_rounds_in_order() {
    // One thread through many laps of a two-entry ring with four-slot segments, with up to
    // three entries queued (the capacity is four).
    let t = TestQueue::new(false, 4, 2, 2, 2);
    let mut model = std::collections::VecDeque::new();
    for value in 0..400u32 {
        if model.len() < 3 && value % 5 != 4 {
            assert_eq!(t.queue.enqueue(value), Ok(()));
            model.push_back(value);
        } else {
            assert_eq!(t.queue.dequeue(), model.pop_front());
        }
    }
    while let Some(value) = model.pop_front() {
        assert_eq!(t.queue.dequeue(), Some(value));
    }
    assert_eq!(t.queue.dequeue(), None);
    // At most the last segment (partly filled) is still mapped.
    assert!(t.segments.mapped_count() <= 1);
    assert_eq!(t.chunks_in_pool() + t.segments.mapped_count(), 2);
    assert_eq!(t.region.errors(), 0);
}

/// Enqueues 4 + 4 values with the first segment's last entry still queued, then (on another
/// thread) one more, in a third segment: with two chunks promised it must wait for the
/// first segment to drain instead of taking a third chunk from the pool.
fn mapping_waits_for_the_promise(linked: bool) {
    let t = TestQueue::new(linked, 4, 8, 2, 3);
    for value in 0..4 {
        assert_eq!(t.queue.enqueue(value), Ok(()));
    }
    for value in 0..3 {
        assert_eq!(t.queue.dequeue(), Some(value));
    }
    for value in 4..8 {
        assert_eq!(t.queue.enqueue(value), Ok(()));
    }
    assert_eq!(t.segments.mapped_count(), 2);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(t.queue.enqueue(8), Ok(()));
            done.store(true, Relaxed);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!done.load(Relaxed), "linked {linked}: a third segment was mapped");
        assert_eq!(t.segments.mapped_count(), 2, "linked {linked}");
        assert_eq!(t.chunks_in_pool(), 1, "linked {linked}: the unpromised chunk stays in the pool");
        // The first segment drains: its chunk comes back and the waiting enqueuer maps it.
        assert_eq!(t.queue.dequeue(), Some(3));
    });
    assert!(done.load(Relaxed));
    for value in 4..9 {
        assert_eq!(t.queue.dequeue(), Some(value), "linked {linked}");
    }
    assert_eq!(t.queue.dequeue(), None);
    assert!(t.segments.mapped_count() <= 2, "linked {linked}");
    assert_eq!(t.chunks_in_pool() + t.segments.mapped_count(), 3, "linked {linked}");
    assert_eq!(t.region.errors(), 0, "linked {linked}");
}

#[test]
fn array_mapping_waits_for_a_drain_instead_of_exceeding_the_promise() {
    mapping_waits_for_the_promise(false);
}

#[test]
fn linked_mapping_waits_for_a_drain_instead_of_exceeding_the_promise() {
    mapping_waits_for_the_promise(true);
}

/// Threads that each keep up to `keep` entries queued, with stalls at every step: tickets
/// straggle across many small segments while the pool holds exactly the promised storage.
/// Before the fix, stragglers kept old segments mapped, later segments took the remaining
/// chunks, and an enqueuer waited in the empty pool for a drain that needed dequeuers, which
/// were the same threads, waiting as enqueuers.
fn stragglers_through_small_segments(linked: bool, slots: u64, threads: u32, keep: u32, per_thread: u32) {
    let entries = (threads * (keep + 1)) as u64;
    let reserved = entries.div_ceil(slots) + 1;
    let length = entries.div_ceil(slots) + 2;
    let t = TestQueue::new(linked, slots, length, reserved, reserved);
    let seen: Vec<AtomicU32> = (0..threads * per_thread).map(|_| AtomicU32::new(0)).collect();
    let _serial = JITTER.lock().unwrap_or_else(|e| e.into_inner());
    jitter::set(Some(&t.region.region()), 20, 300);
    run_grid(threads, |thread| {
        for i in 0..per_thread {
            assert_eq!(t.queue.enqueue(thread * per_thread + i), Ok(()), "linked {linked}");
            if i >= keep {
                let mut backoff = arch::Backoff::new();
                let value = loop {
                    if let Some(value) = t.queue.dequeue() {
                        break value;
                    }
                    assert_eq!(t.region.errors(), 0, "linked {linked}");
                    backoff.snooze();
                };
                seen[value as usize].fetch_add(1, Relaxed);
            }
        }
    });
    jitter::set(None, 0, 0);
    while let Some(value) = t.queue.dequeue() {
        seen[value as usize].fetch_add(1, Relaxed);
    }
    assert_eq!(t.region.errors(), 0, "linked {linked}");
    assert!(seen.iter().all(|n| n.load(Relaxed) == 1), "linked {linked}: an entry was lost or doubled");
    assert!(t.segments.mapped_count() <= 2, "linked {linked}");
    assert_eq!(t.chunks_in_pool() + t.segments.mapped_count(), reserved, "linked {linked}");
}

#[test]
fn array_queues_survive_stragglers_with_exactly_the_promised_storage() {
    stragglers_through_small_segments(false, 8, 12, 4, 1500);
    stragglers_through_small_segments(false, 3, 6, 1, 1500);
}

#[test]
fn linked_queues_survive_stragglers_with_exactly_the_promised_storage() {
    stragglers_through_small_segments(true, 8, 12, 4, 1500);
    stragglers_through_small_segments(true, 3, 6, 1, 1500);
}

#[test]
fn a_dequeuer_whose_enqueuer_never_writes_gives_up_with_an_error() {
    for linked in [false, true] {
        let t = TestQueue::new(linked, 4, 4, 3, 4);
        assert_eq!(t.queue.enqueue(7), Ok(()));
        // An enqueuer took ticket 1 and vanished; a later one wrote ticket 2.
        t.word(T_QUEUE_META + 8).store(2);
        assert_eq!(t.queue.enqueue(9), Ok(()));
        assert_eq!(t.queue.dequeue(), Some(7));
        assert_eq!(with_wait_rounds(256, || t.queue.dequeue()), None, "linked {linked}");
        assert_eq!(t.wait_bits(), site_bit(WaitSite::SlotWritten), "linked {linked}");
    }
}

#[test]
fn a_pool_that_breaks_its_promise_becomes_an_error() {
    // Two chunks promised to the queue but only one in the pool (a broken promise): the
    // second segment's enqueuer gives up instead of waiting forever, and leaves the segment
    // free for another try.
    let t = TestQueue::new(false, 2, 4, 2, 1);
    assert_eq!(t.queue.enqueue(1), Ok(()));
    assert_eq!(t.queue.enqueue(2), Ok(()));
    assert_eq!(with_wait_rounds(256, || t.queue.enqueue(3)), Err(QueueError::TimedOut));
    assert_eq!(t.wait_bits(), site_bit(WaitSite::PoolChunk));
    assert_eq!(t.segments.mapped_count(), 1);
    assert_eq!(t.word(T_ENTRIES + 8).load(), 0, "entry 1 is free again");
}

/// Runs `test` on a fresh region of each virtualized kind.
fn with_each_virtual_kind(bytes: u64, test: impl Fn(MallocKind, &HostRegion, &dyn Fn(u32) -> *mut u8)) {
    fn run<M: DeviceMalloc>(
        kind: MallocKind,
        bytes: u64,
        test: &impl Fn(MallocKind, &HostRegion, &dyn Fn(u32) -> *mut u8),
    ) {
        let region = HostRegion::new(kind, bytes, 0);
        let m = region.typed::<M>();
        test(kind, &region, &|size| m.malloc(size));
    }
    run::<PageArray>(MallocKind::OuroPageArray, bytes, &test);
    run::<PageLinked>(MallocKind::OuroPageLinked, bytes, &test);
    run::<ChunkArray>(MallocKind::OuroChunkArray, bytes, &test);
    run::<ChunkLinked>(MallocKind::OuroChunkLinked, bytes, &test);
}

#[test]
fn a_refill_that_never_ends_makes_malloc_fail_with_an_error() {
    with_each_virtual_kind(256 * 1024, |kind, region, malloc| {
        // The 16-byte class's refiller took the flag and never finished.
        // SAFETY: the class block's refill flag, only accessed atomically.
        let handle = region.region();
        unsafe { handle.atomic64(CLASS_META_BYTES + CLASS_REFILLING) }.store(1);
        let p = with_wait_rounds(512, || malloc(16));
        assert!(p.is_null(), "{kind:?}");
        let bits = region.errors();
        assert_ne!(bits & site_bit(WaitSite::Refill), 0, "{kind:?}: {bits:#x}");
        // Other page sizes still work.
        assert!(!malloc(64).is_null(), "{kind:?}");
        // Once a wait of the region gave up, the next one gives up early, even with the full
        // bound.
        let start = std::time::Instant::now();
        assert!(malloc(16).is_null(), "{kind:?}");
        assert!(start.elapsed().as_secs() < 10, "{kind:?}");
    });
}

#[test]
fn virtualized_variants_survive_stragglers_and_an_exhausted_pool() {
    // Page sizes that share a small pool, threads that stall at queue steps: segments cross,
    // storage competes with data chunks for the last chunks of the pool, and nothing waits
    // for a thread that is not in progress.
    let _serial = JITTER.lock().unwrap_or_else(|e| e.into_inner());
    for kind in [
        MallocKind::OuroPageArray,
        MallocKind::OuroPageLinked,
        MallocKind::OuroChunkArray,
        MallocKind::OuroChunkLinked,
    ] {
        for bytes in [600 * 1024, 3 << 20] {
            let region = HostRegion::new(kind, bytes, 0);
            jitter::set(Some(&region.region()), 5, 200);
            let report =
                region.storm(StormConfig { threads: 64, per_thread: 64, sizes: (1, 256), rounds: 3 });
            jitter::set(None, 0, 0);
            assert!(report.checked > 0, "{kind:?}");
            assert_eq!(region.errors() & !errors::OUT_OF_MEMORY, 0, "{kind:?} {bytes}");
            // Everything was freed: a modest round succeeds in full.
            let report =
                region.storm(StormConfig { threads: 16, per_thread: 16, sizes: (1, 256), rounds: 2 });
            assert_eq!(report.failed, 0, "{kind:?} {bytes}");
            assert_eq!(region.errors() & !errors::OUT_OF_MEMORY, 0, "{kind:?} {bytes}");
        }
    }
}
