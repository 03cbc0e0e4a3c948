//! Kernels over a general-purpose allocator's region: initialisation, and the storm the tests
//! run on both backends. Like the heap's kernels they take the region as a parameter, so one
//! PTX entry point of each serves every allocator kind.

use dynasoar_macros::kernel;

use super::{AnyMalloc, Region, RegionHeader, dispatch};
use dynasoar_device::arch::{self, atomic::Atomic32};
use dynasoar_device::rand::Rng;
use dynasoar_device::{DevPtr, Plain};

/// Parameters of [`malloc_init`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MallocInitParams {
    pub region: DevPtr<RegionHeader>,
    /// Which of the kind's `INIT_PHASES` to run.
    pub phase: u32,
    pub _pad: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for MallocInitParams {}

/// Phase `p.phase` of initialising the allocator in `p.region` (the host launches the kind's
/// phases in order, each over a grid of any size).
#[kernel(crate = dynasoar_device, name = "dynasoar_malloc_init")]
pub fn malloc_init(p: MallocInitParams) {
    // SAFETY: the host launches this on a region whose header it has just written.
    let region = unsafe { Region::from_header(p.region.as_ptr()) };
    // SAFETY: phases run in order with nothing else on the region (the host's contract).
    dispatch!(region.kind(), M => unsafe { <M as super::DeviceMalloc>::init(region, p.phase) })
}

/// What one launch of [`malloc_storm`] does.
pub mod storm_step {
    /// Allocate `per_thread` blocks of random sizes, fill them with the thread's pattern and
    /// record them in `out`.
    pub const ALLOCATE: u32 = 0;
    /// Check that every recorded block still holds its pattern (counting corrupted words).
    pub const CHECK: u32 = 1;
    /// Free every recorded block and clear its entry.
    pub const FREE: u32 = 2;
}

/// Parameters of [`malloc_storm`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MallocStormParams {
    pub region: DevPtr<RegionHeader>,
    /// Two words per allocation, `threads * per_thread` of them: address (0 if the malloc
    /// failed) and size.
    pub out: DevPtr<u64>,
    /// `[0]`: mallocs that failed; `[1]`: words found not to hold their pattern.
    pub counters: DevPtr<u32>,
    pub threads: u32,
    pub per_thread: u32,
    /// Sizes are drawn uniformly from `min_size..=max_size`.
    pub min_size: u32,
    pub max_size: u32,
    pub seed: u64,
    /// One of [`storm_step`].
    pub step: u32,
    pub _pad: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for MallocStormParams {}

/// The pattern word `w` of allocation `j` of thread `t` holds.
#[inline(always)]
pub fn storm_pattern(thread: u32, j: u32, w: u32) -> u32 {
    thread.wrapping_mul(0x9E37_79B1) ^ j.wrapping_mul(0x85EB_CA77) ^ w
}

/// Many threads allocating, checking and freeing blocks of random sizes at once (see
/// [`storm_step`]); the host checks the recorded blocks for overlap and alignment.
#[kernel(crate = dynasoar_device, name = "dynasoar_malloc_storm")]
pub fn malloc_storm(p: MallocStormParams) {
    let thread = arch::global_thread_id() as u32;
    if thread >= p.threads {
        return;
    }
    // SAFETY: the host launches this on an initialised region.
    let malloc = unsafe { AnyMalloc::attach(Region::from_header(p.region.as_ptr())) };
    // SAFETY: two counters the kernel updates atomically.
    let (failed, corrupt) =
        unsafe { (Atomic32::from_ptr(p.counters.as_ptr()), Atomic32::from_ptr(p.counters.as_ptr().add(1))) };
    let mut rng = Rng::new(p.seed, thread as u64);
    for j in 0..p.per_thread {
        let entry = 2 * (thread as usize * p.per_thread as usize + j as usize);
        match p.step {
            storm_step::ALLOCATE => {
                let span = (p.max_size - p.min_size) as u64 + 1;
                let size = p.min_size + (rng.next_u64() % span) as u32;
                let ptr = malloc.malloc(size);
                if ptr.is_null() {
                    failed.fetch_add(1);
                } else {
                    let words = ptr as *mut u32;
                    for w in 0..size / 4 {
                        // SAFETY: the block is this thread's, `size` bytes long, 4-aligned.
                        unsafe { words.add(w as usize).write_volatile(storm_pattern(thread, j, w)) };
                    }
                }
                // SAFETY: entry `j` of this thread is its own, inside `out`.
                unsafe {
                    p.out.write(entry, ptr as u64);
                    p.out.write(entry + 1, size as u64);
                }
            }
            storm_step::CHECK => {
                // SAFETY: as above.
                let (addr, size) = unsafe { (p.out.read(entry), p.out.read(entry + 1)) };
                if addr != 0 {
                    let words = addr as usize as *const u32;
                    let mut bad = 0;
                    for w in 0..size as u32 / 4 {
                        // SAFETY: the thread's own live block.
                        if unsafe { words.add(w as usize).read_volatile() } != storm_pattern(thread, j, w) {
                            bad += 1;
                        }
                    }
                    if bad != 0 {
                        corrupt.fetch_add(bad);
                    }
                }
            }
            _ => {
                // SAFETY: as above.
                let addr = unsafe { p.out.read(entry) };
                // SAFETY: the entry holds null or the block this thread allocated in the
                // ALLOCATE step; the entry is cleared below, so it is freed once.
                unsafe { malloc.free(addr as usize as *mut u8) };
                // SAFETY: as above.
                unsafe { p.out.write(entry, 0) };
            }
        }
    }
}
