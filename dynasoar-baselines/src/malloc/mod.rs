//! General-purpose device allocators from the literature, behind one interface.
//!
//! DynaSOAr's own allocator (`dynasoar-device`) serves objects of known classes. The
//! allocators here serve `malloc(size)` / `free(ptr)` from GPU threads, as the papers'
//! comparisons need (`003_...` Table 2, Figure 10; the survey `002_...`; `000_...`, `001_...`,
//! `004_...`). Each lives in its own module and implements [`DeviceMalloc`] over one
//! [`Region`] of device memory; [`AnyMalloc`] picks one at run time by [`MallocKind`].
//!
//! Rules every implementation follows (the same as the object allocator's, on Volta and later
//! GPUs, where plain loads may be served stale from L1 and lanes of a warp need not run in
//! lockstep): shared state is read and written only through [`dynasoar_device::arch::atomic`] types;
//! every warp collective takes a mask from `activemask` at the collective; every retry loop
//! backs off; nothing assumes that the lanes of a warp run in lockstep (independent thread
//! scheduling; the survey notes most originals only work with warp-synchronous execution).
//! Out of memory is a null pointer, never a hang.

#[cfg(not(target_arch = "nvptx64"))]
pub mod check;
pub mod kernels;
mod region;

pub mod atomic;
pub mod aw;
pub mod bitmap;
pub mod buddy;
pub mod bulk;
pub mod circular;
pub mod fdg;
pub mod halloc;
pub mod kma;
pub mod ouroboros;
pub mod scatter;
pub mod system;
pub mod xmalloc;

#[cfg(all(test, not(target_arch = "nvptx64")))]
pub(crate) mod testing;

pub use region::{HEADER_BYTES, Region, RegionHeader, RegionHeaderWords};

/// What an allocator does with `free`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeSupport {
    /// Freed memory is reused by later allocations.
    Reuses,
    /// `free` is accepted but the memory is never reused (bump allocators: their defined
    /// behaviour, not an error).
    Leaks,
    /// Freed memory may be handed out again while older allocations still use it: the
    /// allocator wraps around its pool (AWMalloc). Correct only for short-lived allocations.
    Wraps,
}

/// What an allocator can serve, for callers and for the error messages of misuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Largest request served, in bytes (a larger one fails and raises [`errors::TOO_LARGE`]).
    pub max_size: u32,
    /// Alignment of every pointer returned, in bytes (at least 8).
    pub align: u32,
    /// What `free` does.
    pub free: FreeSupport,
    /// Smallest region (header included) the allocator can lay itself out in.
    pub min_region_bytes: u64,
    /// Requests above this many bytes are relayed to CUDA's allocator
    /// ([`system::SystemMalloc`]), as the original does (`u32::MAX`: never). Their memory lies
    /// outside the region, in CUDA's heap, which the host sizes like the region.
    pub relays_above: u32,
}

/// Error bits an allocator raises in its region's header (the host reports them after a
/// launch). Failed mallocs are also counted.
pub mod errors {
    /// A request could not be served: the pool is exhausted (or too fragmented).
    pub const OUT_OF_MEMORY: u32 = 1 << 0;
    /// A request was larger than the allocator's [`Caps::max_size`](super::Caps).
    pub const TOO_LARGE: u32 = 1 << 1;
    /// `free` of a pointer the allocator did not hand out, or freed twice (where detectable).
    pub const INVALID_FREE: u32 = 1 << 2;
    /// An operation the allocator does not support (e.g. FDGMalloc's `free` of one pointer).
    pub const UNSUPPORTED: u32 = 1 << 3;
    /// Ouroboros: a wait for another thread's step went several seconds without progress and
    /// gave up, so a hang became this error. The operation failed: its malloc returned null,
    /// or the block (or queue entry) it was freeing was lost. Bits
    /// [`OURO_WAIT_SITE_SHIFT`]`..` say which waits gave up ([`OURO_WAIT_SITES`] names them).
    pub const OURO_WAIT_TIMEOUT: u32 = 1 << 4;
    /// First bit of the Ouroboros wait sites that gave up (see [`OURO_WAIT_TIMEOUT`]).
    pub const OURO_WAIT_SITE_SHIFT: u32 = 16;
    /// The Ouroboros waits, by site number (`ouroboros::queue::WaitSite`).
    pub const OURO_WAIT_SITES: [&str; 7] = [
        "an enqueuer for the previous round's dequeuer of its slot",
        "a dequeuer for the enqueuer of its ticket to write the entry",
        "a queue operation for its segment to be mapped (or an older one to drain)",
        "a queue for one of its segments to drain (all storage promised to it in use)",
        "a promised chunk of the pool",
        "a malloc for its page size's refill or for a listed chunk",
        "a chunk holder for a freed page's bit",
    ];

    /// The bits to raise when Ouroboros wait `site` gives up.
    pub const fn ouro_wait_site(site: u32) -> u32 {
        OURO_WAIT_TIMEOUT | (1 << (OURO_WAIT_SITE_SHIFT + site))
    }
}

/// A general-purpose device allocator living in one [`Region`].
///
/// The host creates the region (header filled in: kind, size, parameter, multiprocessors),
/// launches [`INIT_PHASES`](Self::INIT_PHASES) initialisation kernels one after the other over
/// a grid of any size, and then any kernel may call [`malloc`](Self::malloc) and
/// [`free`](Self::free) from any thread.
///
/// # Safety
/// Implementations return pointers that are aligned to `CAPS.align`, lie inside the region
/// (or, for [`system::SystemMalloc`], in CUDA's heap), and are not handed out again until
/// freed (except as `CAPS.free` documents), under any interleaving of concurrent calls.
pub unsafe trait DeviceMalloc: Sized {
    /// Which allocator this is.
    const KIND: MallocKind;
    /// What it can serve.
    const CAPS: Caps;
    /// Initialisation kernels the host launches, in order (each may rely on the previous one
    /// having finished on the whole grid).
    const INIT_PHASES: u32 = 1;

    /// Phase `phase` of initialising `region`, as thread `arch::global_thread_id()` of
    /// `arch::global_thread_count()` (split the work with a grid-stride loop).
    ///
    /// # Safety
    /// `region` is a region of this kind whose header the host filled in; no other kernel
    /// uses it meanwhile; phases run in order.
    unsafe fn init(region: Region, phase: u32);

    /// The allocator of an initialised region (cheap: called at every `malloc`).
    ///
    /// # Safety
    /// `region` was initialised for this kind and stays alive while the value is used.
    unsafe fn attach(region: Region) -> Self;

    /// `size` bytes (`1..=CAPS.max_size`), or null when out of memory. [`AnyMalloc`] checks
    /// the size and raises the error bits; implementations just return null.
    fn malloc(&self, size: u32) -> *mut u8;

    /// Give back `ptr`. Implementations raise [`errors::INVALID_FREE`] where they detect a
    /// bad pointer cheaply, but not every allocator can (a relayed pointer goes to CUDA's
    /// `free`, and some allocators keep no per-block state at all).
    ///
    /// # Safety
    /// `ptr` was returned by `malloc` of this allocator on the same region, is not null, and
    /// has not been freed since.
    unsafe fn free(&self, ptr: *mut u8);
}

macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident = $id:literal, $name:literal, $module:ident::$ty:ident;)*) => {
        /// Which general-purpose allocator a region holds (stored in its header).
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum MallocKind {
            $($(#[$doc])* $variant = $id,)*
        }

        impl MallocKind {
            /// Every allocator, in a stable order.
            pub const ALL: &'static [MallocKind] = &[$(MallocKind::$variant),*];

            /// The name used on command lines and in reports.
            pub const fn name(self) -> &'static str {
                match self {
                    $(MallocKind::$variant => $name,)*
                }
            }

            /// The kind named `name` (see [`name`](Self::name)).
            pub fn from_name(name: &str) -> Option<MallocKind> {
                match name {
                    $($name => Some(MallocKind::$variant),)*
                    _ => None,
                }
            }

            /// The kind stored as `id` in a region header.
            pub const fn from_id(id: u32) -> Option<MallocKind> {
                match id {
                    $($id => Some(MallocKind::$variant),)*
                    _ => None,
                }
            }

            /// What the allocator can serve.
            pub const fn caps(self) -> Caps {
                match self {
                    $(MallocKind::$variant => <$crate::malloc::$module::$ty as $crate::malloc::DeviceMalloc>::CAPS,)*
                }
            }

            /// Number of initialisation kernels.
            pub const fn init_phases(self) -> u32 {
                match self {
                    $(MallocKind::$variant => <$crate::malloc::$module::$ty as $crate::malloc::DeviceMalloc>::INIT_PHASES,)*
                }
            }
        }

        /// Run `$body` with `$m` bound to the allocator type of `$kind` (monomorphised per
        /// kind: one copy of `$body` for each allocator).
        #[macro_export]
        #[doc(hidden)]
        macro_rules! __dispatch_malloc {
            ($kind:expr, $m:ident => $body:expr) => {
                match $kind {
                    $($crate::malloc::MallocKind::$variant => {
                        type $m = $crate::malloc::$module::$ty;
                        $body
                    })*
                }
            };
        }
        pub use __dispatch_malloc as dispatch;
    };
}

kinds! {
    /// CUDA's own device `malloc`/`free` (on the CPU backend: the C library's).
    System = 0, "cuda", system::SystemMalloc;
    /// AtomicMalloc: one atomic add on a bump pointer, no reuse (`000_...` 3.1, Alg. 1).
    Atomic = 1, "atomic", atomic::AtomicMalloc;
    /// AWMalloc: AtomicMalloc that wraps around its pool (`000_...` 4.1, Alg. 2).
    AtomicWrap = 2, "aw", aw::AwMalloc;
    /// BitmapAlloc: equal slots managed by hierarchical bitmaps (`003_...` section 7).
    Bitmap = 3, "bitmap", bitmap::BitmapAlloc;
    /// ScatterAlloc (mallocMC): pages in super blocks and regions, found by hashing.
    Scatter = 4, "scatter", scatter::ScatterAlloc;
    /// Halloc: slabs with bitmaps searched by hashing, warp-aggregated counters.
    Halloc = 5, "halloc", halloc::Halloc;
    /// XMalloc: coalesced requests, basic blocks from superblocks, lock-free FIFO buffers.
    XMalloc = 6, "xmalloc", xmalloc::XMalloc;
    /// FDGMalloc: warp heaps of superblocks with a voting leader; frees only everything.
    Fdg = 7, "fdg", fdg::FdgMalloc;
    /// CircularMalloc: a circular pool as a linked list of chunks (`000_...` 4.2, Alg. 3).
    Circular = 8, "circular", circular::Circular;
    /// Circular Fused Malloc: one header word per chunk (`000_...` 4.3).
    CircularFused = 9, "circular-fused", circular::CircularFused;
    /// Circular Multi Malloc: one offset per multiprocessor (`000_...` 4.4).
    CircularMulti = 10, "circular-multi", circular::CircularMulti;
    /// Circular Fused Multi Malloc.
    CircularFusedMulti = 11, "circular-fused-multi", circular::CircularFusedMulti;
    /// The 3L allocator's non-blocking buddy system (`001_...`).
    Buddy = 12, "buddy", buddy::BuddyAlloc;
    /// Ouroboros, page-based static queues (Ouro-S-P).
    OuroPageStatic = 13, "ouro-s-p", ouroboros::PageStatic;
    /// Ouroboros, page-based virtualized array queues (Ouro-VA-P).
    OuroPageArray = 14, "ouro-va-p", ouroboros::PageArray;
    /// Ouroboros, page-based virtualized linked-chunk queues (Ouro-VL-P).
    OuroPageLinked = 15, "ouro-vl-p", ouroboros::PageLinked;
    /// Ouroboros, chunk-based static queues (Ouro-S-C).
    OuroChunkStatic = 16, "ouro-s-c", ouroboros::ChunkStatic;
    /// Ouroboros, chunk-based virtualized array queues (Ouro-VA-C).
    OuroChunkArray = 17, "ouro-va-c", ouroboros::ChunkArray;
    /// Ouroboros, chunk-based virtualized linked-chunk queues (Ouro-VL-C).
    OuroChunkLinked = 18, "ouro-vl-c", ouroboros::ChunkLinked;
    /// KMA: superblocks of power-of-two pages found through a hash map, lock-free free list.
    Kma = 19, "kma", kma::Kma;
    /// BulkAllocator: bulk semaphores, UAlloc arenas per multiprocessor, TBuddy tree.
    Bulk = 20, "bulk", bulk::BulkAlloc;
}

impl core::fmt::Display for MallocKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// The allocator of a region, whichever kind it is (chosen at run time from the header).
#[derive(Clone, Copy)]
pub struct AnyMalloc {
    region: Region,
    kind: MallocKind,
}

impl AnyMalloc {
    /// The allocator of an initialised region.
    ///
    /// # Safety
    /// `region` was created and initialised by the host for the kind in its header, and
    /// stays alive while the value is used.
    #[inline(always)]
    pub unsafe fn attach(region: Region) -> Self {
        let kind = region.kind();
        AnyMalloc { region, kind }
    }

    #[inline(always)]
    pub fn kind(&self) -> MallocKind {
        self.kind
    }

    #[inline(always)]
    pub fn region(&self) -> Region {
        self.region
    }

    /// `size` bytes, or null (out of memory or too large: the region's error bits say which).
    ///
    /// Not inlined: the application kernels of the AOS object store call it from many
    /// places, and one call to a dispatcher of all allocators keeps them small.
    #[inline(never)]
    pub fn malloc(&self, size: u32) -> *mut u8 {
        let region = self.region;
        dispatch!(self.kind, M => malloc_checked::<M>(region, size))
    }

    /// Give back `ptr` (null is ignored, as C's `free` does).
    ///
    /// # Safety
    /// `ptr` is null or was returned by [`AnyMalloc::malloc`] on this region and not freed
    /// since.
    #[inline(never)]
    pub unsafe fn free(&self, ptr: *mut u8) {
        let region = self.region;
        // SAFETY: the caller's contract.
        dispatch!(self.kind, M => unsafe { free_checked::<M>(region, ptr) })
    }
}

/// [`DeviceMalloc::malloc`] with the size checked and failures raised in the region.
#[inline(always)]
pub fn malloc_checked<M: DeviceMalloc>(region: Region, size: u32) -> *mut u8 {
    if size == 0 || size > M::CAPS.max_size {
        region.fail(errors::TOO_LARGE);
        return core::ptr::null_mut();
    }
    // SAFETY: the region was initialised for its kind, which the caller dispatched on.
    let ptr = unsafe { M::attach(region) }.malloc(size);
    if ptr.is_null() {
        region.fail(errors::OUT_OF_MEMORY);
    }
    ptr
}

/// [`DeviceMalloc::free`], ignoring null.
///
/// # Safety
/// `ptr` is null or was returned by `malloc_checked::<M>` on `region` and not freed since.
#[inline(always)]
pub unsafe fn free_checked<M: DeviceMalloc>(region: Region, ptr: *mut u8) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: the region as for `malloc_checked`; the pointer by the caller's contract.
    unsafe { M::attach(region).free(ptr) }
}

/// Round `size` up to a multiple of `align` (a power of two).
#[inline(always)]
pub const fn round_up(size: u64, align: u64) -> u64 {
    (size + align - 1) & !(align - 1)
}

// (After the module's other impls: their order names the kernels' device functions.)
impl Caps {
    /// Whether some requests go to CUDA's own heap (all of them for [`system::SystemMalloc`],
    /// the large ones for allocators that relay): the host must size that heap.
    pub const fn uses_cuda_heap(&self) -> bool {
        self.relays_above < self.max_size
    }
}
