//! Allocation microbenchmarks: the paper's Linux Scalability test (section 7.4) on our
//! allocator, a bump-pointer allocator (the floor) and CUDA's device `malloc`.
//!
//! Every thread allocates `per_thread` objects of 64 bytes, storing the handles (coalesced:
//! allocation `j` of thread `t` at `j * threads + t`), then a second kernel frees them.

use dynasoar::arch::{self, atomic::Atomic64};
use dynasoar::engine::layout;
use dynasoar::prelude::*;
use dynasoar::{ClassSpec, Heap, HeapHeader, RawHandle};

/// Bytes of the benchmark's object.
pub const OBJECT_BYTES: usize = 64;

/// The benchmark's only class: 64-byte objects, 64 per block.
pub struct Obj64;
impl ClassSpec for Obj64 {
    const TYPE_ID: u8 = 0;
    const OBJECTS_PER_BLOCK: u32 = layout::objects_per_block(OBJECT_BYTES, OBJECT_BYTES as u64);
    const BLOCK_BYTES: u64 = layout::block_bytes(OBJECT_BYTES as u64);
    const NAME: &'static str = "Obj64";
    // Allocated in bulk by whole warps: the case runs of blocks are for.
    const OWNS_BLOCKS: bool = true;
}

/// The benchmark's object as a model declares it: a `#[soa_class]` of 64 bytes in an
/// allocator of its own, with the class defaults that `allocator!` derives (64 per block, no
/// runs of blocks: leaders search and open blocks as the paper's allocator does). `Obj64`
/// opts in to runs with a hand-written `ClassSpec`.
#[soa_class]
pub struct Ls64 {
    pub words: [u64; 8],
}

dynasoar::allocator!(pub LsHeap: Ls64);

/// Parameters of the benchmark kernels.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct AllocBenchParams {
    pub heap: DevPtr<HeapHeader>,
    /// `per_thread * threads` results (handles or addresses).
    pub out: DevPtr<u64>,
    pub threads: u32,
    pub per_thread: u32,
    /// Bump allocator: the next free byte (an offset into `arena`).
    pub bump: DevPtr<u64>,
    pub arena: u64,
    pub arena_bytes: u64,
    /// Allocations that failed (null results).
    pub failures: DevPtr<u64>,
}

fn thread_index(p: &AllocBenchParams) -> Option<usize> {
    let t = arch::global_thread_id();
    (t < p.threads as usize).then_some(t)
}

fn count_failure(p: &AllocBenchParams) {
    // SAFETY: a counter updated atomically only.
    unsafe { Atomic64::from_ptr(p.failures.as_ptr()) }.fetch_add(1);
}

/// DynaSOAr: `per_thread` warp-coalesced allocations per thread.
#[kernel]
pub fn ls_alloc(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    // SAFETY: an initialised heap, and `out` with room for every allocation; each thread
    // writes its own entries.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    for j in 0..p.per_thread as usize {
        let h = heap.allocate::<Obj64>();
        if h.is_none() {
            count_failure(&p);
        }
        // SAFETY: see above.
        unsafe { p.out.write(j * p.threads as usize + t, h.unwrap_or_default().0) };
    }
}

/// DynaSOAr whose leaders open a new block after losing the race for active blocks twice.
#[kernel]
pub fn ls_alloc_eager(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    // SAFETY: as in `ls_alloc`.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    for j in 0..p.per_thread as usize {
        let h = heap.allocate_tuned::<Obj64, 2>();
        if h.is_none() {
            count_failure(&p);
        }
        // SAFETY: as in `ls_alloc`.
        unsafe { p.out.write(j * p.threads as usize + t, h.unwrap_or_default().0) };
    }
}

/// DynaSOAr with the default class [`Ls64`] (no runs of blocks), on a heap of [`LsHeap`].
#[kernel]
pub fn ls_alloc_default(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    // SAFETY: as in `ls_alloc`, on a heap laid out for `LsHeap`.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    for j in 0..p.per_thread as usize {
        let h = heap.allocate::<Ls64>();
        if h.is_none() {
            count_failure(&p);
        }
        // SAFETY: as in `ls_alloc`.
        unsafe { p.out.write(j * p.threads as usize + t, h.unwrap_or_default().0) };
    }
}

/// Free what `ls_alloc_default` allocated.
#[kernel]
pub fn ls_free_default(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    // SAFETY: as in `ls_free`.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    for j in 0..p.per_thread as usize {
        let h = RawHandle(unsafe { p.out.read(j * p.threads as usize + t) });
        if !h.is_null() {
            heap.free::<Ls64>(h);
        }
    }
}

/// DynaSOAr without request coalescing (the paper's DynaSOAr-NoCoal).
#[kernel]
pub fn ls_alloc_uncoalesced(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    // SAFETY: as in `ls_alloc`.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    for j in 0..p.per_thread as usize {
        let h = heap.allocate_uncoalesced::<Obj64>();
        if h.is_none() {
            count_failure(&p);
        }
        // SAFETY: as in `ls_alloc`.
        unsafe { p.out.write(j * p.threads as usize + t, h.unwrap_or_default().0) };
    }
}

/// DynaSOAr: free what `ls_alloc` allocated.
#[kernel]
pub fn ls_free(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    // SAFETY: as in `ls_alloc`; each handle is freed by the thread that allocated it.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    for j in 0..p.per_thread as usize {
        let h = RawHandle(unsafe { p.out.read(j * p.threads as usize + t) });
        if !h.is_null() {
            heap.free::<Obj64>(h);
        }
    }
}

/// The floor: a bump pointer advanced with one `atomicAdd` per allocation (never frees).
#[kernel]
pub fn bump_alloc(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    // SAFETY: a counter updated atomically only.
    let bump = unsafe { Atomic64::from_ptr(p.bump.as_ptr()) };
    for j in 0..p.per_thread as usize {
        let offset = bump.fetch_add(OBJECT_BYTES as u64);
        let addr = if offset + OBJECT_BYTES as u64 <= p.arena_bytes {
            p.arena + offset
        } else {
            count_failure(&p);
            0
        };
        // SAFETY: each thread writes its own entries of `out`.
        unsafe { p.out.write(j * p.threads as usize + t, addr) };
    }
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    fn malloc(size: usize) -> *mut u8;
    fn free(ptr: *mut u8);
}

/// CUDA's device `malloc`: an address, or 0. Only the GPU has it.
fn device_malloc(size: usize) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: CUDA's device heap; any size is valid to ask for.
    return unsafe { malloc(size) } as u64;
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("CUDA's device malloc ({size} bytes) exists only on the GPU");
}

/// CUDA's device `free`. Only the GPU has it.
fn device_free(ptr: u64) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: callers pass pointers `device_malloc` returned, each freed once.
    unsafe {
        free(ptr as usize as *mut u8)
    };
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("CUDA's device free ({ptr:#x}) exists only on the GPU");
}

/// CUDA's device `malloc` (GPU only; on the CPU backend the kernel panics).
#[kernel]
pub fn cuda_malloc_alloc(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    for j in 0..p.per_thread as usize {
        let ptr = device_malloc(OBJECT_BYTES);
        if ptr == 0 {
            count_failure(&p);
        }
        // SAFETY: each thread writes its own entries of `out`.
        unsafe { p.out.write(j * p.threads as usize + t, ptr) };
    }
}

/// CUDA's device `free` of what `cuda_malloc_alloc` allocated.
#[kernel]
pub fn cuda_malloc_free(p: AllocBenchParams) {
    let Some(t) = thread_index(&p) else { return };
    for j in 0..p.per_thread as usize {
        // SAFETY: each thread reads its own entries of `out`.
        let ptr = unsafe { p.out.read(j * p.threads as usize + t) };
        if ptr != 0 {
            device_free(ptr);
        }
    }
}
