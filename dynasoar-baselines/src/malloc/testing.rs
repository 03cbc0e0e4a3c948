//! Test support for the allocators' unit tests: a region in host memory, emulated grids of
//! OS threads, and a storm with every check.

extern crate alloc;
use alloc::vec::Vec;
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::sync::Mutex;

use super::check::check_allocations;
use super::kernels::storm_pattern;
use super::{AnyMalloc, DeviceMalloc, FreeSupport, MallocKind, Region, RegionHeader};
use dynasoar_device::arch::{LaunchCoords, with_launch_coords};
use dynasoar_device::rand::Rng;

/// Multiprocessors the host regions pretend to have.
pub const TEST_MULTIPROCESSORS: u32 = 4;

/// Run `f(thread)` on `threads` OS threads at once, each as its own emulated GPU thread
/// (thread block `thread` of a grid of `threads` blocks of one thread).
pub fn run_grid(threads: u32, f: impl Fn(u32) + Sync) {
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            s.spawn(move || {
                let coords = LaunchCoords { block_idx: t, thread_idx: 0, block_dim: 1, grid_dim: threads };
                with_launch_coords(coords, || f(t));
            });
        }
    });
}

/// A region of one allocator in host memory, initialised.
pub struct HostRegion {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the region is shared between test threads exactly as device memory is shared
// between GPU threads (through the allocator's atomics).
unsafe impl Sync for HostRegion {}

/// A storm's shape (see [`HostRegion::storm`]).
#[derive(Clone, Copy, Debug)]
pub struct StormConfig {
    pub threads: u32,
    pub per_thread: u32,
    /// Sizes drawn from `min..=max`.
    pub sizes: (u32, u32),
    /// Rounds of allocate-check-free.
    pub rounds: u32,
}

/// What a storm saw (it panics on any violation).
#[derive(Clone, Copy, Debug, Default)]
pub struct StormReport {
    /// Mallocs that returned null, over all rounds.
    pub failed: u64,
    /// Allocations checked, over all rounds.
    pub checked: u64,
}

impl HostRegion {
    /// A region of `bytes` bytes (header included) holding allocator `kind` with parameter
    /// `param`, initialised by a grid of 8 threads per phase.
    pub fn new(kind: MallocKind, bytes: u64, param: u64) -> Self {
        let layout = Layout::from_size_align(bytes as usize, 4096).expect("region layout");
        // SAFETY: a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "host region of {bytes} bytes");
        let header = ptr as *mut RegionHeader;
        // SAFETY: the header lies at the start of the fresh, zeroed allocation.
        unsafe {
            (*header).kind = kind as u32;
            (*header).multiprocessors = TEST_MULTIPROCESSORS;
            (*header).bytes = bytes;
            (*header).param = param;
        }
        let region = HostRegion { ptr, layout };
        for phase in 0..kind.init_phases() {
            let r = region.region();
            run_grid(8, |_| {
                // SAFETY: phases run in order, each over the whole grid, nothing else meanwhile.
                super::dispatch!(kind, M => unsafe { <M as DeviceMalloc>::init(r, phase) })
            });
        }
        region
    }

    pub fn region(&self) -> Region {
        // SAFETY: the header was written in `new`; the region lives as long as `self`.
        unsafe { Region::from_header(self.ptr as *mut RegionHeader) }
    }

    /// The allocator, whichever kind.
    pub fn any(&self) -> AnyMalloc {
        // SAFETY: initialised in `new`.
        unsafe { AnyMalloc::attach(self.region()) }
    }

    /// The allocator as its own type (which must be the region's kind).
    pub fn typed<M: DeviceMalloc>(&self) -> M {
        assert_eq!(self.region().kind(), M::KIND);
        // SAFETY: initialised for `M` in `new`.
        unsafe { M::attach(self.region()) }
    }

    /// Error bits raised so far.
    pub fn errors(&self) -> u32 {
        self.region().errors()
    }

    /// The body's address range.
    pub fn bounds(&self) -> (u64, u64) {
        let r = self.region();
        (r.body_addr(), r.body_addr() + r.body_bytes())
    }

    /// Rounds of: every thread allocates `per_thread` blocks of random sizes at once and fills
    /// them with its pattern; then every block is checked (pattern intact, aligned, inside the
    /// pool, no two overlapping) and freed. Panics on any violation.
    pub fn storm(&self, cfg: StormConfig) -> StormReport {
        let kind = self.region().kind();
        let caps = kind.caps();
        let bounds = (kind != MallocKind::System).then(|| self.bounds());
        let mut report = StormReport::default();
        let any = self.any();
        for round in 0..cfg.rounds {
            let blocks: Mutex<Vec<(u32, u32, u64, u64)>> = Mutex::new(Vec::new());
            run_grid(cfg.threads, |t| {
                let mut rng = Rng::new(round as u64, t as u64);
                let mut mine = Vec::new();
                for j in 0..cfg.per_thread {
                    let size = cfg.sizes.0 + (rng.next_u64() % (cfg.sizes.1 - cfg.sizes.0 + 1) as u64) as u32;
                    let ptr = any.malloc(size);
                    if !ptr.is_null() {
                        for w in 0..size / 4 {
                            // SAFETY: the block is this thread's, `size` bytes, aligned.
                            unsafe {
                                (ptr as *mut u32).add(w as usize).write_volatile(storm_pattern(t, j, w))
                            };
                        }
                    }
                    mine.push((t, j, ptr as u64, size as u64));
                }
                blocks.lock().unwrap().extend(mine);
            });
            let blocks = blocks.into_inner().unwrap();
            for &(t, j, addr, size) in &blocks {
                if addr == 0 {
                    report.failed += 1;
                    continue;
                }
                for w in 0..size as u32 / 4 {
                    // SAFETY: a live block of this storm.
                    let v = unsafe { (addr as *const u32).add(w as usize).read_volatile() };
                    assert_eq!(
                        v,
                        storm_pattern(t, j, w),
                        "{kind}: word {w} of block {addr:#x} ({size} bytes) was overwritten"
                    );
                }
            }
            let entries: Vec<(u64, u64)> = blocks.iter().map(|&(_, _, a, s)| (a, s)).collect();
            if caps.free != FreeSupport::Wraps {
                match check_allocations(&entries, caps.align as u64, bounds) {
                    Ok(n) => report.checked += n as u64,
                    Err(e) => panic!("{kind}, round {round}: {e}"),
                }
            }
            let per_thread: Vec<Vec<u64>> =
                (0..cfg.threads).map(|t| blocks.iter().filter(|b| b.0 == t).map(|b| b.2).collect()).collect();
            run_grid(cfg.threads, |t| {
                for &addr in &per_thread[t as usize] {
                    // SAFETY: each recorded block was allocated by this storm and is freed
                    // once, by the thread that allocated it.
                    unsafe { any.free(addr as usize as *mut u8) };
                }
            });
        }
        report
    }
}

impl Drop for HostRegion {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Every block `malloc` hands out until it returns null (filling the pool).
pub(crate) fn take_until_null(mut malloc: impl FnMut() -> *mut u8) -> Vec<*mut u8> {
    core::iter::from_fn(|| Some(malloc()).filter(|p| !p.is_null())).collect()
}
