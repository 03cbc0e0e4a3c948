//! Kernels of the allocator benchmark suite (`dynasoar-bench`, the survey `002_...` section 4):
//! one kernel whose steps the host times one launch at a time, and one pair of probe kernels
//! per allocator kind whose only purpose is that `ptxas -v` reports the registers of that
//! allocator's `malloc` and `free` paths on their own.
//!
//! Like the storm kernels they take the region as a parameter, so [`malloc_bench`] serves
//! every allocator kind with one PTX entry point.

use dynasoar_macros::kernel;

use dynasoar_baselines::malloc::{
    AnyMalloc, MallocKind, Region, RegionHeader, dispatch, free_checked, malloc_checked,
};
use dynasoar_device::arch::{WarpGroup, atomic::Atomic64};
use dynasoar_device::rand::Rng;
use dynasoar_device::{DevPtr, Plain};

/// What one launch of [`malloc_bench`] does. The host times each launch on its own, so every
/// step is one kernel.
pub mod bench_step {
    /// Every thread draws a size (see [`draw_size`](super::draw_size)), mallocs it and records
    /// the pointer in `ptrs[thread]` (0 on failure, counted in `stats[FAILED]`).
    pub const ALLOCATE: u32 = 0;
    /// Every thread frees `ptrs[thread]` (null is skipped) and clears it.
    pub const FREE: u32 = 1;
    /// Every thread writes its size's worth of words at `ptrs[thread]` and reads them back
    /// (mismatches counted in `stats[CORRUPT]`): the memory-access test.
    pub const WRITE: u32 = 2;
    /// Prefix-sum baseline, pass 1: thread `c` sums the sizes of chunk `c` into `aux[c]`.
    pub const CHUNK_SUMS: u32 = 3;
    /// Prefix-sum baseline, pass 2: thread `c` adds up `aux[..c]` (its chunk's offset) and
    /// places its chunk's buffers one after the other in `buffer`, writing their addresses
    /// to `ptrs`.
    pub const PLACE: u32 = 4;
}

/// Bits of [`MallocBenchParams::flags`].
pub mod bench_flags {
    /// [`ALLOCATE`](super::bench_step::ALLOCATE): the leader of each converged group of lanes
    /// allocates for the whole group in one request and hands out the pieces (the survey's
    /// warp-based test). Only the leader's entry records the pointer (it alone frees).
    pub const WARP_BASED: u32 = 1 << 0;
    /// [`ALLOCATE`](super::bench_step::ALLOCATE): write the buffer right after allocating it
    /// (the survey's work generation test).
    pub const WRITE_AFTER_ALLOCATE: u32 = 1 << 1;
}

/// Indices of [`MallocBenchParams::stats`].
pub mod bench_stat {
    /// Mallocs that returned null.
    pub const FAILED: usize = 0;
    /// Lowest address handed out (the host starts it at `u64::MAX`).
    pub const MIN_ADDR: usize = 1;
    /// Highest end address (`ptr + size`) handed out (the host starts it at 0).
    pub const MAX_END: usize = 2;
    /// Words that did not read back as written.
    pub const CORRUPT: usize = 3;
    /// Number of entries.
    pub const COUNT: usize = 4;
}

/// Parameters of [`malloc_bench`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MallocBenchParams {
    pub region: DevPtr<RegionHeader>,
    /// One entry per thread: the address it allocated (0: none).
    pub ptrs: DevPtr<u64>,
    /// [`bench_stat`] counters, updated atomically.
    pub stats: DevPtr<u64>,
    /// Per-chunk sums of the prefix-sum baseline (`threads.div_ceil(chunk)` entries).
    pub aux: DevPtr<u64>,
    /// The prefix-sum baseline's one big buffer (sum of all sizes).
    pub buffer: DevPtr<u8>,
    pub threads: u32,
    /// Sizes are drawn uniformly from `min_size..=max_size` (equal: one fixed size).
    pub min_size: u32,
    pub max_size: u32,
    /// One of [`bench_step`].
    pub step: u32,
    /// [`bench_flags`] bits.
    pub flags: u32,
    /// Entries per chunk of the prefix-sum baseline.
    pub chunk: u32,
    pub seed: u64,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for MallocBenchParams {}

/// The size thread `thread` requests: the same in every step of a run (so `WRITE` and the
/// baseline know it without storing it), drawn from `min..=max` and rounded down to whole
/// words (at least one), so that the baseline's buffers, placed back to back, stay aligned.
#[inline(always)]
pub fn draw_size(seed: u64, thread: u32, min: u32, max: u32) -> u32 {
    if min >= max {
        return min;
    }
    let span = (max - min) as u64 + 1;
    ((min + (Rng::new(seed, thread as u64).next_u64() % span) as u32) & !3).max(4)
}

/// The word a thread writes at word `w` of its buffer.
#[inline(always)]
fn pattern(thread: u32, w: u32) -> u32 {
    thread.wrapping_mul(0x9E37_79B1) ^ w
}

/// Write `size / 4` pattern words at `addr`, then read them back; returns the mismatches.
///
/// # Safety
/// `addr` is 4-byte aligned and addresses `size` bytes that only this thread uses.
#[inline(always)]
unsafe fn write_and_check(addr: u64, size: u32, thread: u32) -> u32 {
    let words = addr as usize as *mut u32;
    for w in 0..size / 4 {
        // SAFETY: the caller's contract; volatile so the writes are really performed.
        unsafe { words.add(w as usize).write_volatile(pattern(thread, w)) };
    }
    let mut bad = 0;
    for w in 0..size / 4 {
        // SAFETY: as above.
        if unsafe { words.add(w as usize).read_volatile() } != pattern(thread, w) {
            bad += 1;
        }
    }
    bad
}

/// One step (see [`bench_step`]) of a benchmark over the allocator in `p.region`.
#[kernel(crate = dynasoar_device, name = "dynasoar_malloc_bench")]
pub fn malloc_bench(p: MallocBenchParams) {
    let thread = dynasoar_device::arch::global_thread_id() as u32;
    // SAFETY: the host passes a `bench_stat::COUNT`-entry buffer, only updated atomically.
    let stat = |index: usize| unsafe { Atomic64::from_ptr(p.stats.as_ptr().add(index)) };
    match p.step {
        bench_step::ALLOCATE => {
            if thread >= p.threads {
                return;
            }
            // SAFETY: the host launches this on an initialised region.
            let malloc = unsafe { AnyMalloc::attach(Region::from_header(p.region.as_ptr())) };
            let size = draw_size(p.seed, thread, p.min_size, p.max_size);
            let (addr, owned) = if p.flags & bench_flags::WARP_BASED != 0 {
                // One request per converged group; each lane's piece starts after those of
                // the lanes below it.
                let group = WarpGroup::current();
                let (below, total) = group.exclusive_sum(size);
                let mut base = 0u64;
                if group.is_leader() {
                    base = malloc.malloc(total) as u64;
                    track(&p, base, total as u64);
                }
                let base = group.broadcast_u64(base);
                let addr = if base == 0 { 0 } else { base + below as u64 };
                (addr, if group.is_leader() { base } else { 0 })
            } else {
                let addr = malloc.malloc(size) as u64;
                track(&p, addr, size as u64);
                (addr, addr)
            };
            if p.flags & bench_flags::WRITE_AFTER_ALLOCATE != 0 && addr != 0 {
                // SAFETY: the thread's own piece of a fresh allocation, 4-aligned (sizes and
                // pieces are multiples of 4 in every test that writes).
                let bad = unsafe { write_and_check(addr, size, thread) };
                if bad != 0 {
                    stat(bench_stat::CORRUPT).fetch_add(bad as u64);
                }
            }
            // SAFETY: entry `thread` is this thread's own.
            unsafe { p.ptrs.write(thread as usize, owned) };
        }
        bench_step::FREE => {
            if thread >= p.threads {
                return;
            }
            // SAFETY: as above.
            let malloc = unsafe { AnyMalloc::attach(Region::from_header(p.region.as_ptr())) };
            // SAFETY: entry `thread` is this thread's own.
            let addr = unsafe { p.ptrs.read(thread as usize) };
            // SAFETY: the entry holds null or the block this thread owns from the allocate
            // step (a warp-based block is its group leader's; the other lanes hold null);
            // it is cleared below, so the block is freed once.
            unsafe { malloc.free(addr as usize as *mut u8) };
            // SAFETY: as above.
            unsafe { p.ptrs.write(thread as usize, 0) };
        }
        bench_step::WRITE => {
            if thread >= p.threads {
                return;
            }
            // SAFETY: entry `thread` is this thread's own.
            let addr = unsafe { p.ptrs.read(thread as usize) };
            if addr != 0 {
                let size = draw_size(p.seed, thread, p.min_size, p.max_size);
                // SAFETY: the buffer at `addr` was allocated (or placed) for this thread with
                // this size.
                let bad = unsafe { write_and_check(addr, size, thread) };
                if bad != 0 {
                    stat(bench_stat::CORRUPT).fetch_add(bad as u64);
                }
            }
        }
        bench_step::CHUNK_SUMS => {
            let Some((start, end)) = chunk_bounds(&p, thread) else { return };
            let sum: u64 = (start..end).map(|t| draw_size(p.seed, t, p.min_size, p.max_size) as u64).sum();
            // SAFETY: entry `thread` of `aux` is this chunk's own.
            unsafe { p.aux.write(thread as usize, sum) };
        }
        bench_step::PLACE => {
            let Some((start, end)) = chunk_bounds(&p, thread) else { return };
            let mut offset = 0u64;
            for c in 0..thread as usize {
                // SAFETY: `CHUNK_SUMS` (the previous launch) wrote every chunk's sum.
                offset += unsafe { p.aux.read(c) };
            }
            for t in start..end {
                // SAFETY: entry `t` belongs to this thread's chunk.
                unsafe { p.ptrs.write(t as usize, p.buffer.addr() + offset) };
                offset += draw_size(p.seed, t, p.min_size, p.max_size) as u64;
            }
        }
        _ => {}
    }
}

/// The entries `start..end` of chunk `chunk` of the prefix-sum baseline, if it exists.
#[inline(always)]
fn chunk_bounds(p: &MallocBenchParams, chunk: u32) -> Option<(u32, u32)> {
    let size = p.chunk.max(1);
    let start = chunk.checked_mul(size)?;
    (start < p.threads).then(|| (start, (start + size).min(p.threads)))
}

/// Record an allocation of `bytes` at `addr` (0: a failed malloc) in the statistics.
#[inline(always)]
fn track(p: &MallocBenchParams, addr: u64, bytes: u64) {
    // SAFETY: the host passes a `bench_stat::COUNT`-entry buffer, only updated atomically.
    let stat = |index: usize| unsafe { Atomic64::from_ptr(p.stats.as_ptr().add(index)) };
    if addr == 0 {
        stat(bench_stat::FAILED).fetch_add(1);
    } else {
        stat(bench_stat::MIN_ADDR).fetch_min(addr);
        stat(bench_stat::MAX_END).fetch_max(addr + bytes);
    }
}

/// Parameters of the register probes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RegisterProbeParams {
    pub region: DevPtr<RegionHeader>,
    /// One entry per thread: the malloc probe stores its pointer, the free probe frees it.
    pub ptrs: DevPtr<u64>,
    pub threads: u32,
    pub size: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for RegisterProbeParams {}

/// One probe pair per allocator kind. The kind is a constant in each, so LLVM folds the
/// dispatch and the entry holds that allocator's path alone: `ptxas -v` then reports its
/// registers (the survey's section 4.1). Only the host's `registers` report uses them.
macro_rules! register_probes {
    ($($variant:ident: $malloc_fn:ident = $malloc_name:literal, $free_fn:ident = $free_name:literal;)*) => {
        $(
            #[doc = concat!("`malloc` of `", stringify!($variant), "` alone, for `ptxas -v`.")]
            #[kernel(crate = dynasoar_device, name = $malloc_name)]
            pub fn $malloc_fn(p: RegisterProbeParams) {
                let thread = dynasoar_device::arch::global_thread_id() as u32;
                if thread >= p.threads {
                    return;
                }
                // SAFETY: the host launches probes only on a region of this kind.
                let region = unsafe { Region::from_header(p.region.as_ptr()) };
                let ptr = dispatch!(MallocKind::$variant, M => malloc_checked::<M>(region, p.size));
                // SAFETY: entry `thread` is this thread's own.
                unsafe { p.ptrs.write(thread as usize, ptr as u64) };
            }

            #[doc = concat!("`free` of `", stringify!($variant), "` alone, for `ptxas -v`.")]
            #[kernel(crate = dynasoar_device, name = $free_name)]
            pub fn $free_fn(p: RegisterProbeParams) {
                let thread = dynasoar_device::arch::global_thread_id() as u32;
                if thread >= p.threads {
                    return;
                }
                // SAFETY: as above.
                let region = unsafe { Region::from_header(p.region.as_ptr()) };
                // SAFETY: entry `thread` is this thread's own.
                let ptr = unsafe { p.ptrs.read(thread as usize) } as usize as *mut u8;
                // SAFETY: the host fills `ptrs` from the malloc probe on the same region
                // (or with nulls), and launches the free probe once.
                dispatch!(MallocKind::$variant, M => unsafe { free_checked::<M>(region, ptr) });
            }
        )*

        /// Every allocator kind with the PTX entry names of its malloc and free probes.
        pub const REGISTER_PROBES: &[(MallocKind, &str, &str)] =
            &[$((MallocKind::$variant, $malloc_name, $free_name)),*];
    };
}

register_probes! {
    System: probe_malloc_system = "dynasoar_probe_malloc__cuda", probe_free_system = "dynasoar_probe_free__cuda";
    Atomic: probe_malloc_atomic = "dynasoar_probe_malloc__atomic", probe_free_atomic = "dynasoar_probe_free__atomic";
    AtomicWrap: probe_malloc_aw = "dynasoar_probe_malloc__aw", probe_free_aw = "dynasoar_probe_free__aw";
    Bitmap: probe_malloc_bitmap = "dynasoar_probe_malloc__bitmap", probe_free_bitmap = "dynasoar_probe_free__bitmap";
    Scatter: probe_malloc_scatter = "dynasoar_probe_malloc__scatter", probe_free_scatter = "dynasoar_probe_free__scatter";
    Halloc: probe_malloc_halloc = "dynasoar_probe_malloc__halloc", probe_free_halloc = "dynasoar_probe_free__halloc";
    XMalloc: probe_malloc_xmalloc = "dynasoar_probe_malloc__xmalloc", probe_free_xmalloc = "dynasoar_probe_free__xmalloc";
    Fdg: probe_malloc_fdg = "dynasoar_probe_malloc__fdg", probe_free_fdg = "dynasoar_probe_free__fdg";
    Circular: probe_malloc_circular = "dynasoar_probe_malloc__circular", probe_free_circular = "dynasoar_probe_free__circular";
    CircularFused: probe_malloc_circular_fused = "dynasoar_probe_malloc__circular_fused", probe_free_circular_fused = "dynasoar_probe_free__circular_fused";
    CircularMulti: probe_malloc_circular_multi = "dynasoar_probe_malloc__circular_multi", probe_free_circular_multi = "dynasoar_probe_free__circular_multi";
    CircularFusedMulti: probe_malloc_circular_fused_multi = "dynasoar_probe_malloc__circular_fused_multi", probe_free_circular_fused_multi = "dynasoar_probe_free__circular_fused_multi";
    Buddy: probe_malloc_buddy = "dynasoar_probe_malloc__buddy", probe_free_buddy = "dynasoar_probe_free__buddy";
    OuroPageStatic: probe_malloc_ouro_s_p = "dynasoar_probe_malloc__ouro_s_p", probe_free_ouro_s_p = "dynasoar_probe_free__ouro_s_p";
    OuroPageArray: probe_malloc_ouro_va_p = "dynasoar_probe_malloc__ouro_va_p", probe_free_ouro_va_p = "dynasoar_probe_free__ouro_va_p";
    OuroPageLinked: probe_malloc_ouro_vl_p = "dynasoar_probe_malloc__ouro_vl_p", probe_free_ouro_vl_p = "dynasoar_probe_free__ouro_vl_p";
    OuroChunkStatic: probe_malloc_ouro_s_c = "dynasoar_probe_malloc__ouro_s_c", probe_free_ouro_s_c = "dynasoar_probe_free__ouro_s_c";
    OuroChunkArray: probe_malloc_ouro_va_c = "dynasoar_probe_malloc__ouro_va_c", probe_free_ouro_va_c = "dynasoar_probe_free__ouro_va_c";
    OuroChunkLinked: probe_malloc_ouro_vl_c = "dynasoar_probe_malloc__ouro_vl_c", probe_free_ouro_vl_c = "dynasoar_probe_free__ouro_vl_c";
    Kma: probe_malloc_kma = "dynasoar_probe_malloc__kma", probe_free_kma = "dynasoar_probe_free__kma";
    Bulk: probe_malloc_bulk = "dynasoar_probe_malloc__bulk", probe_free_bulk = "dynasoar_probe_free__bulk";
}
