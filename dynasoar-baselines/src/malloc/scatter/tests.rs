extern crate alloc;
use alloc::vec::Vec;

use super::layout::{MAX_PAGE_MASKS, REGION_PAGES, SUPER_BLOCKS};
use super::*;
use crate::malloc::HEADER_BYTES;
use crate::malloc::check::check_allocations;
use crate::malloc::testing::{HostRegion, StormConfig, run_grid};
use dynasoar_device::rand::Rng;

fn scatter(bytes: u64, param: u64) -> (HostRegion, ScatterAlloc) {
    let region = HostRegion::new(MallocKind::Scatter, bytes, param);
    let m = region.typed::<ScatterAlloc>();
    (region, m)
}

/// Every page is free and clean: no chunk size, no reservation, empty usage bitfield.
fn assert_all_pages_free(m: &ScatterAlloc) {
    for page in 0..m.layout.pages {
        assert_eq!(m.state(page).load(), 0, "page {page} is not free");
        assert_eq!(m.usage(page).load(), 0, "page {page} has bits left in its usage bitfield");
    }
}

/// Allocate `size` bytes until the allocator returns null; the blocks in order.
fn fill_with(m: &ScatterAlloc, size: u32) -> Vec<*mut u8> {
    let mut blocks = Vec::new();
    loop {
        let ptr = m.malloc(size);
        if ptr.is_null() {
            return blocks;
        }
        blocks.push(ptr);
    }
}

/// The page of the pool holding `ptr`.
fn page_of(m: &ScatterAlloc, ptr: *mut u8) -> u32 {
    ((ptr as u64 - m.pool_addr()) >> m.layout.page_shift) as u32
}

fn write_pattern(ptr: *mut u8, size: u32, tag: u32) {
    for i in 0..size as usize {
        // SAFETY: the test owns the block of `size` bytes at `ptr`.
        unsafe { ptr.add(i).write_volatile((tag as usize).wrapping_mul(31).wrapping_add(i) as u8) };
    }
}

fn assert_pattern(ptr: *mut u8, size: u32, tag: u32) {
    for i in 0..size as usize {
        // SAFETY: as above.
        let byte = unsafe { ptr.add(i).read_volatile() };
        assert_eq!(byte, (tag as usize).wrapping_mul(31).wrapping_add(i) as u8, "byte {i} of block {ptr:?}");
    }
}

#[test]
fn layouts_fit_their_bodies_and_small_regions_get_smaller_pages() {
    let cases = [
        // (region bytes, parameter, page size expected)
        (64u64 << 10, 0, 2048),
        (256 << 10, 0, 4096),
        (17 << 20, 0, 4096),
        (1 << 30, 0, 4096),
        (100 << 30, 0, 4096),
        (1 << 20, 16384, 16384),
        (256 << 10, 16384, 8192),
        (1 << 20, 3000, 2048),
        (1 << 20, 1, 1024),
        (1 << 30, 1 << 20, 65536),
    ];
    for (bytes, param, page_bytes) in cases {
        let body = bytes - HEADER_BYTES;
        let l = Layout::new(body, param);
        assert_eq!(l.page_bytes(), page_bytes, "{bytes} bytes, parameter {param}");
        assert!(l.pages >= REGION_PAGES, "{l:?}");
        assert_eq!(l.pool_offset % 256, 0);
        assert!(l.fill_levels_offset + 4 * l.regions as u64 <= l.pool_offset, "{l:?}");
        assert!(l.pool_offset + l.pool_bytes() <= body, "{l:?} overflows {body}");
        // No room left for another page and its metadata.
        assert!(body - (l.pool_offset + l.pool_bytes()) < page_bytes as u64 + 512, "{l:?} wastes room");
        assert_eq!(l.regions, l.pages.div_ceil(REGION_PAGES));
        assert!(l.super_blocks >= 1 && l.super_blocks <= SUPER_BLOCKS, "{l:?}");
        assert!(l.super_blocks * l.regions_per_super_block >= l.regions, "{l:?}");
        assert!((l.super_blocks - 1) * l.regions_per_super_block < l.regions, "{l:?}");
        assert_eq!(l.min_chunk, if page_bytes <= 16384 { 16 } else { page_bytes / 1024 });
    }
    // Small bodies get the smallest pages, however few.
    assert_eq!((Layout::new(4096, 0).pages, Layout::new(4096, 0).page_bytes()), (3, 1024));
    // Too small for a page (below the minimum region): every request fails, nothing breaks.
    assert_eq!(Layout::new(1024 - HEADER_BYTES, 0).pages, 0);
    let (region, m) = scatter(1024, 0);
    assert!(m.malloc(16).is_null() && m.malloc(5000).is_null());
    unsafe { m.free(region.region().body()) };
    assert_eq!(region.errors(), errors::INVALID_FREE);
}

#[test]
fn page_geometries_keep_chunks_clear_of_their_bitfields() {
    for shift in 10..=16 {
        let page_bytes = 1u32 << shift;
        let min_chunk = Layout::new(1 << 40, page_bytes as u64).min_chunk;
        for chunk in (min_chunk..=page_bytes).step_by(16) {
            let g = Geometry::new(page_bytes, chunk);
            assert!(g.capacity >= 1 && g.capacity <= 1024, "{g:?}");
            if g.masks == 0 {
                assert!(g.capacity <= 32 && g.capacity * chunk <= page_bytes, "{g:?}");
                assert!(33 * chunk + 8 > page_bytes, "{g:?} should be hierarchical");
            } else {
                assert!(g.capacity > 32 && g.masks <= MAX_PAGE_MASKS, "{g:?}");
                assert!(
                    g.capacity * chunk <= g.mask_offset(page_bytes, 0),
                    "{g:?}: chunks overlap the bitfields"
                );
                assert_eq!(g.masks, g.capacity.div_ceil(32), "{g:?}");
                let covered: u32 = (0..g.masks).map(|mask| g.chunks_in_mask(mask)).sum();
                assert_eq!(covered, g.capacity, "{g:?}");
                assert!((0..g.masks).all(|mask| (1..=32).contains(&g.chunks_in_mask(mask))), "{g:?}");
                // The bitfields lie in the tail that page resets zero.
                assert!(page_bytes - g.mask_offset(page_bytes, 0) <= MASK_TAIL_BYTES as u32);
            }
        }
    }
    let g = |chunk| Geometry::new(4096, chunk);
    assert_eq!((g(16).capacity, g(16).masks), (254, 8));
    assert_eq!((g(112).capacity, g(112).masks), (36, 2));
    assert_eq!((g(128).capacity, g(128).masks), (32, 0));
    assert_eq!((g(272).capacity, g(272).masks), (15, 0));
    assert_eq!((g(4096).capacity, g(4096).masks), (1, 0));
    assert_eq!(Geometry::new(16384, 16).capacity, 1016);
}

#[test]
fn sizes_at_class_boundaries_are_aligned_disjoint_and_within_the_waste_factor() {
    let (region, m) = scatter(1 << 20, 0);
    let sizes = [1, 15, 16, 17, 32, 100, 112, 113, 128, 129, 256, 2048, 2049, 4095, 4096, 4097, 8192, 12289];
    let (start, end) = region.bounds();
    let mut entries = Vec::new();
    for (tag, &size) in sizes.iter().enumerate() {
        let ptr = m.malloc(size);
        assert!(!ptr.is_null(), "{size} bytes");
        let addr = ptr as u64;
        assert_eq!(addr % 16, 0, "{size} bytes at {addr:#x}");
        assert!(
            addr >= start + m.layout.pool_offset && addr + size as u64 <= end,
            "{size} bytes at {addr:#x}"
        );
        let page = page_of(&m, ptr);
        let chunk = chunk_of(m.state(page).load());
        let rounded = round_up(size as u64, 16) as u32;
        if rounded <= 4096 {
            assert!(
                chunk >= rounded && chunk <= (2 * rounded).max(16),
                "{size} bytes got a {chunk}-byte chunk"
            );
        } else {
            assert_eq!(chunk, LARGE_HEAD | rounded.div_ceil(4096), "{size} bytes");
            assert_eq!((addr - m.pool_addr()) % 4096, 0, "runs of pages start on a page");
        }
        write_pattern(ptr, size, tag as u32);
        entries.push((addr, size as u64));
    }
    assert_eq!(check_allocations(&entries, 16, Some((start, end))), Ok(sizes.len()));
    for (tag, &(addr, size)) in entries.iter().enumerate() {
        assert_pattern(addr as *mut u8, size as u32, tag as u32);
        unsafe { m.free(addr as *mut u8) };
    }
    assert_eq!(region.errors(), 0);
    assert_all_pages_free(&m);
}

#[test]
fn freed_pages_take_any_chunk_size_and_out_of_memory_recovers() {
    let (region, m) = scatter(256 << 10, 0);
    let pages = m.layout.pages as usize;
    assert_eq!(m.layout.page_bytes(), 4096);
    // Every page cut into 254 chunks of 16 bytes (two levels of bitfields) ...
    let small = fill_with(&m, 16);
    assert_eq!(small.len(), pages * 254);
    let entries: Vec<(u64, u64)> = small.iter().map(|&p| (p as u64, 16)).collect();
    assert_eq!(check_allocations(&entries, 16, Some(region.bounds())), Ok(small.len()));
    assert!(m.malloc(16).is_null(), "out of memory stays out of memory");
    assert!(m.malloc(300).is_null());
    // ... then freed: each page is free again and takes 256-byte chunks, 16 of them ...
    for &ptr in &small {
        unsafe { m.free(ptr) };
    }
    assert_all_pages_free(&m);
    let large = fill_with(&m, 256);
    assert_eq!(large.len(), pages * 16);
    for &ptr in &large {
        unsafe { m.free(ptr) };
    }
    // ... and freeing memory after running out of it serves requests again.
    let again = fill_with(&m, 16);
    assert_eq!(again.len(), pages * 254);
    unsafe { m.free(again[again.len() / 2]) };
    assert!(!m.malloc(16).is_null(), "a freed chunk is taken again");
    assert!(m.malloc(16).is_null());
    for &ptr in &again {
        unsafe { m.free(ptr) };
    }
    assert_eq!(region.errors(), 0);
    assert_all_pages_free(&m);
}

#[test]
fn requests_over_a_page_take_runs_of_pages_from_the_top() {
    let (region, m) = scatter(1 << 20, 0);
    let pages = m.layout.pages;
    let a = m.malloc(4097);
    let b = m.malloc(3 * 4096);
    assert_eq!(page_of(&m, a), pages - 2, "the first run ends the pool");
    assert_eq!(page_of(&m, b), pages - 5, "the next one lies just below");
    write_pattern(a, 4097, 1);
    write_pattern(b, 3 * 4096, 2);
    assert_pattern(a, 4097, 1);
    assert_eq!(m.state(pages - 1).load() >> 32, LARGE_TAIL as u64);
    // Pointers into a run are not allocations.
    unsafe { m.free(a.wrapping_add(4096)) };
    assert_eq!(region.errors(), errors::INVALID_FREE);
    let (region, m) = scatter(1 << 20, 0);
    let a = m.malloc(4097);
    let b = m.malloc(3 * 4096);
    unsafe { m.free(a) };
    unsafe { m.free(b) };
    assert_eq!(region.errors(), 0);
    assert_all_pages_free(&m);
    // A freed run is searched again (the search start moved back up).
    assert_eq!(m.malloc(2 * 4096), a);
    unsafe { m.free(a) };
    // The whole pool at once when it is all free; then nothing else fits, until it is freed.
    let whole = m.malloc(pages * 4096);
    assert_eq!(whole as u64, m.pool_addr());
    assert!(m.malloc(16).is_null());
    assert!(m.malloc(pages * 4096 + 1).is_null());
    unsafe { m.free(whole) };
    assert!(!m.malloc(16).is_null());
    // A second free of a run is detected.
    let c = m.malloc(5000);
    unsafe { m.free(c) };
    assert_eq!(region.errors(), 0);
    unsafe { m.free(c) };
    assert_eq!(region.errors(), errors::INVALID_FREE);
}

#[test]
fn a_run_that_cannot_be_claimed_gives_back_the_pages_it_took() {
    let (region, m) = scatter(256 << 10, 0);
    let chunk = m.malloc(64);
    let page = page_of(&m, chunk);
    let head = page.saturating_sub(2).min(m.layout.pages - 4);
    assert!(!m.claim_run(head, 4), "page {page} holds a chunk");
    for p in head..head + 4 {
        if p != page {
            assert_eq!(m.state(p).load(), 0, "page {p} was not given back");
        }
    }
    unsafe { m.free(chunk) };
    assert!(m.claim_run(head, 4));
    assert_eq!(chunk_of(m.state(head).load()), LARGE_HEAD | 4);
    unsafe { m.free(m.page_addr(head) as *mut u8) };
    assert_eq!(region.errors(), 0);
    assert_all_pages_free(&m);
}

#[test]
fn bad_frees_raise_invalid_free() {
    type Case = (&'static str, fn(&ScatterAlloc));
    let cases: [Case; 6] = [
        ("outside the pool", |m| unsafe { m.free(m.region.body()) }),
        ("past the pool", |m| unsafe { m.free((m.pool_addr() + m.layout.pool_bytes()) as *mut u8) }),
        ("on a free page", |m| unsafe { m.free(m.pool_addr() as *mut u8) }),
        ("inside a chunk", |m| {
            let ptr = m.malloc(64);
            unsafe { m.free(ptr.wrapping_add(16)) };
        }),
        ("twice, on a page still in use", |m| {
            let (a, b) = (m.malloc(64), m.malloc(64));
            assert_eq!(page_of(m, a), page_of(m, b), "one page");
            unsafe { m.free(a) };
            unsafe { m.free(a) };
        }),
        ("twice, on a hierarchical page still in use", |m| {
            let (a, b) = (m.malloc(16), m.malloc(16));
            assert_eq!(page_of(m, a), page_of(m, b), "one page");
            unsafe { m.free(b) };
            unsafe { m.free(b) };
        }),
    ];
    for (what, case) in cases {
        let (region, m) = scatter(256 << 10, 0);
        case(&m);
        assert_eq!(region.errors(), errors::INVALID_FREE, "a free {what}");
    }
    // A freed chunk whose page was reset: the page is free.
    let (region, m) = scatter(256 << 10, 0);
    let ptr = m.malloc(48);
    unsafe { m.free(ptr) };
    assert_eq!(region.errors(), 0);
    unsafe { m.free(ptr) };
    assert_eq!(region.errors(), errors::INVALID_FREE);
}

#[test]
fn storms_reuse_memory() {
    let region = HostRegion::new(MallocKind::Scatter, 4 << 20, 0);
    let report = region.storm(StormConfig { threads: 16, per_thread: 200, sizes: (1, 256), rounds: 6 });
    assert_eq!(report.failed, 0);
    assert_eq!(report.checked, 16 * 200 * 6);
    assert_eq!(region.errors(), 0);
    assert_all_pages_free(&region.typed::<ScatterAlloc>());
}

#[test]
fn storms_with_requests_over_a_page() {
    let region = HostRegion::new(MallocKind::Scatter, 16 << 20, 0);
    let report = region.storm(StormConfig { threads: 8, per_thread: 40, sizes: (1, 3 * 4096), rounds: 4 });
    assert_eq!(report.failed, 0);
    assert_eq!(report.checked, 8 * 40 * 4);
    assert_eq!(region.errors(), 0);
    assert_all_pages_free(&region.typed::<ScatterAlloc>());
}

#[test]
fn a_small_pool_runs_out_under_a_storm_and_recovers() {
    let region = HostRegion::new(MallocKind::Scatter, 256 << 10, 0);
    let report = region.storm(StormConfig { threads: 16, per_thread: 200, sizes: (16, 256), rounds: 2 });
    assert!(report.failed > 0, "{report:?}");
    assert_eq!(region.errors(), errors::OUT_OF_MEMORY);
    let m = region.typed::<ScatterAlloc>();
    assert_all_pages_free(&m);
    let report = region.storm(StormConfig { threads: 8, per_thread: 8, sizes: (16, 256), rounds: 2 });
    assert_eq!(report.failed, 0);
}

#[test]
fn concurrent_allocations_and_frees_keep_every_block_intact() {
    let region = HostRegion::new(MallocKind::Scatter, 4 << 20, 0);
    let m = region.typed::<ScatterAlloc>();
    const LIVE: usize = 8;
    run_grid(16, |t| {
        let mut rng = Rng::new(7, t as u64);
        let mut live: Vec<(*mut u8, u32, u32)> = Vec::new();
        for j in 0..1500u32 {
            // Mostly small requests of a few sizes (pages are shared, reset and re-cut),
            // now and then a run of pages.
            let size = match rng.next_u64() % 16 {
                0 => 4097 + (rng.next_u64() % 8192) as u32,
                1..=5 => 16,
                _ => 1 + (rng.next_u64() % 512) as u32,
            };
            let ptr = m.malloc(size);
            assert!(!ptr.is_null(), "thread {t}, request {j} of {size} bytes");
            let tag = t << 16 | j;
            write_pattern(ptr, size, tag);
            live.push((ptr, size, tag));
            if live.len() == LIVE || rng.next_u64().is_multiple_of(3) {
                let (ptr, size, tag) = live.swap_remove((rng.next_u64() % live.len() as u64) as usize);
                assert_pattern(ptr, size, tag);
                unsafe { m.free(ptr) };
            }
        }
        for (ptr, size, tag) in live {
            assert_pattern(ptr, size, tag);
            unsafe { m.free(ptr) };
        }
    });
    assert_eq!(region.errors(), 0);
    assert_all_pages_free(&m);
}

#[test]
fn pages_are_reset_and_recut_under_contention() {
    // A small pool and few live blocks: pages keep emptying, resetting and being opened again
    // with another chunk size while other threads join, fill and free them.
    let region = HostRegion::new(MallocKind::Scatter, 64 << 10, 0);
    let m = region.typed::<ScatterAlloc>();
    let sizes = [16, 48, 96, 200, 1000, 16, 2048];
    run_grid(16, |t| {
        let mut live: Vec<(*mut u8, u32, u32)> = Vec::new();
        let mut served = 0;
        for j in 0..3000u32 {
            let size = sizes[((t + j) % sizes.len() as u32) as usize];
            let ptr = m.malloc(size);
            if !ptr.is_null() {
                served += 1;
                let tag = t << 16 | j;
                write_pattern(ptr, size, tag);
                live.push((ptr, size, tag));
            }
            if live.len() == 2 || (ptr.is_null() && !live.is_empty()) {
                let (ptr, size, tag) = live.remove(0);
                assert_pattern(ptr, size, tag);
                unsafe { m.free(ptr) };
            }
        }
        for (ptr, size, tag) in live {
            assert_pattern(ptr, size, tag);
            unsafe { m.free(ptr) };
        }
        assert!(served > 1500, "thread {t}: only {served} of 3000 requests served");
    });
    assert_eq!(region.errors(), 0);
    assert_all_pages_free(&m);
}
