//! BitmapAlloc (`003_...` section 7, "BitmapAlloc"): the pool is one array of equal slots, and
//! a hierarchical bitmap says which slots are free.
//!
//! The paper built BitmapAlloc to measure bitmap-based allocation without DynaSOAr's blocks,
//! SOA layout and object handles: it "treats the entire heap as one large array, whose slots
//! are managed by bitmaps". Here the slots are managed by one free-slot bitmap, the crate's own
//! lock-free hierarchical bitmap ([`dynasoar_device::bitmap`], paper Alg. 3-5):
//!
//! - `malloc` finds and clears a set bit ([`Bitmap::clear_any_spread`]), searching top-down
//!   with a rotation seeded per thread and changed on every retry (paper section 4.2), so
//!   concurrent requests spread over the bitmap instead of racing for its first bits. The
//!   rotation is scaled to the bits a container has: with the plain rotation, a pool whose top
//!   container holds 16 bits started three quarters of all searches in its first sixteenth,
//!   and Sugarscape's, structure's and traffic's constructors (every thread of a 520k-640k
//!   thread grid creating one object) had creations fail on the GPU while a fifth to a half of
//!   the slots were taken;
//! - `free` sets the slot's bit again. The level-0 `fetch_or` returns the container's previous
//!   value: a bit that was already set is a double free ([`errors::INVALID_FREE`]), and a
//!   container that was empty makes this thread, and only this one, mark it non-empty in the
//!   levels above (the same protocol as [`Bitmap::set`], reached through the upper levels seen
//!   as a bitmap of their own: see `Layout::upper`).
//!
//! Slot size: `region.param()` bytes rounded up to a multiple of 16 (at least 16); 0 picks
//! [`DEFAULT_SLOT_BYTES`]. [`Caps::max_size`] must be a constant, so it is a generous bound
//! ([`MAX_SIZE`]); a request larger than the configured slot returns null and raises
//! [`errors::TOO_LARGE`] here (the dispatcher then counts it as a failed malloc and raises
//! `OUT_OF_MEMORY` as well).
//!
//! Departures from the paper and limits:
//! - The default slot is 256 bytes, not the 64 the brief suggested: the shared storm tests
//!   (`tests/tests/malloc.rs`) create every region with parameter 0 and request up to 256 bytes.
//! - No per-type allocation bitmaps here: the paper's BitmapAlloc also kept one per class for
//!   `parallel_do`/`device_do`; a general `malloc` has no types. The BitmapAlloc PTX build's
//!   object store keeps them over this pool's slots ([`crate::bitmap_store`], through
//!   [`BitmapAlloc::take_slot`] and [`BitmapAlloc::give_back_slots`]); the AOS object store
//!   (the AOS build) keeps its own pointer array, as for every general allocator.
//! - No warp aggregation: each thread searches the bitmap alone. The crate's bitmap claims one
//!   bit per atomic; reserving several bits of a container for a warp would need a multi-bit
//!   claim in [`dynasoar_device::bitmap`]. Lanes of a warp start their search in the same container but at
//!   their own bit (the seed's lowest six bits are the lane), so a warp mostly claims
//!   neighbouring slots without colliding.
//! - Internal fragmentation: every request takes a whole slot, whatever its size (the paper
//!   names this BitmapAlloc's main downside).
//! - Out of memory is reported after `SEARCH_ATTEMPTS` searches came back empty; near a full
//!   pool, under heavy contention, a request can fail while a few slots are still free.

use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region, errors, round_up};
use dynasoar_device::arch::{self, atomic::Atomic64};
use dynasoar_device::bitmap::{Bitmap, BitmapGeometry, init_container};

/// Slot size when the region's parameter is 0.
pub const DEFAULT_SLOT_BYTES: u64 = 256;
/// Largest request the dispatcher lets through; the configured slot size limits it further.
pub const MAX_SIZE: u32 = 1 << 16;
/// Alignment of every slot (slot sizes are multiples of it, the pool starts aligned to it).
const ALIGN: u64 = 16;
/// Largest slot size a parameter can ask for (keeps the layout arithmetic far from overflow).
const MAX_SLOT_BYTES: u64 = 1 << 32;
/// Most slots a bitmap can manage (`dynasoar_device::bitmap::MAX_LEVELS` levels of 64-bit containers).
const MAX_SLOTS: u64 = 1 << (6 * dynasoar_device::bitmap::MAX_LEVELS);
/// Bytes at the start of the body reserved for [`Layout`].
const LAYOUT_BYTES: u64 = 512;
/// The pool starts on a boundary of this many bytes.
const POOL_ALIGN: u64 = 256;
/// Searches of the bitmap before a malloc reports out of memory.
const SEARCH_ATTEMPTS: u32 = 32;

/// Where everything lies in the body. Written once at initialisation (by thread 0, after every
/// thread computed it from the header with [`Layout::plan`]) and never changed afterwards, so
/// `malloc` and `free` read it with plain loads.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Layout {
    slot_bytes: u64,
    /// Slots in the pool (0: the region cannot hold one; every malloc fails).
    slots: u64,
    /// Body offset of the bitmap's containers.
    containers_offset: u64,
    /// Body offset of slot 0.
    pool_offset: u64,
    /// The free-slot bitmap (bit set: slot free).
    free_slots: BitmapGeometry,
    /// The levels of `free_slots` above level 0, as a bitmap of their own: one bit per level-0
    /// container, stored from `free_slots.level_start[1]` on with exactly the same layout
    /// (level `i` of this is level `i + 1` there). Setting a bit here is what
    /// [`Bitmap::set`] does above level 0. Meaningless when `free_slots` has one level.
    upper: BitmapGeometry,
}

const _: () = assert!(core::mem::size_of::<Layout>() as u64 <= LAYOUT_BYTES);

impl Layout {
    /// The layout of a body of `body_bytes` bytes with slot parameter `param` (a pure function:
    /// every initialising thread computes the same one).
    fn plan(body_bytes: u64, param: u64) -> Layout {
        let slot_bytes = slot_bytes(param);
        let empty = Layout {
            slot_bytes,
            slots: 0,
            containers_offset: LAYOUT_BYTES,
            pool_offset: body_bytes,
            free_slots: ONE_BIT,
            upper: ONE_BIT,
        };
        // Size the bitmap for every slot the body could hold without it; the bitmap for the
        // slots that remain is no larger, so the pool laid out after it fits.
        let most = (body_bytes.saturating_sub(LAYOUT_BYTES) / slot_bytes).min(MAX_SLOTS);
        if most == 0 {
            return empty;
        }
        let Some(largest) = BitmapGeometry::new(most) else { return empty };
        let pool_offset = round_up(LAYOUT_BYTES + largest.bytes(), POOL_ALIGN);
        let slots = (body_bytes.saturating_sub(pool_offset) / slot_bytes).min(most);
        let Some(free_slots) = BitmapGeometry::new(slots) else { return empty };
        let Some(upper) = BitmapGeometry::new(free_slots.level_len[0]) else { return empty };
        Layout { slot_bytes, slots, containers_offset: LAYOUT_BYTES, pool_offset, free_slots, upper }
    }
}

/// The geometry of a bitmap of one bit, for layouts without slots.
const ONE_BIT: BitmapGeometry = match BitmapGeometry::new(1) {
    Some(geometry) => geometry,
    None => panic!("a bitmap of one bit exists"),
};

/// The slot size a region parameter asks for.
const fn slot_bytes(param: u64) -> u64 {
    let asked = if param == 0 { DEFAULT_SLOT_BYTES } else { param };
    let asked = if asked > MAX_SLOT_BYTES { MAX_SLOT_BYTES } else { asked };
    round_up(asked, ALIGN)
}

/// Where a BitmapAlloc region's slots lie: what the BitmapAlloc store needs to keep its
/// per-class allocation bitmaps over them ([`crate::bitmap_store`]). The plan the region's
/// initialisation makes, so the host computes it without reading the region back. (Host only:
/// the PTX builds hold nothing that the BitmapAlloc store alone needs, see `take_slot`.)
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotPool {
    /// Byte offset of slot 0 from the body's start.
    pub pool_offset: u64,
    /// Bytes of a slot (a multiple of 16).
    pub slot_bytes: u64,
    /// Slots in the pool (0: the region cannot hold one).
    pub slots: u64,
    /// Byte offset from the body's start of the free-slot bitmap's level 0: one bit per slot
    /// (set: free), in `free_words` 64-bit words.
    pub free_offset: u64,
    pub free_words: u64,
}

#[cfg(not(target_arch = "nvptx64"))]
impl SlotPool {
    /// The slots of a BitmapAlloc region whose body has `body_bytes` bytes, with slot
    /// parameter `param` (the region header's `param`).
    pub fn plan(body_bytes: u64, param: u64) -> SlotPool {
        let layout = Layout::plan(body_bytes, param);
        SlotPool {
            pool_offset: layout.pool_offset,
            slot_bytes: layout.slot_bytes,
            slots: layout.slots,
            free_offset: layout.containers_offset + layout.free_slots.level_start[0] * 8,
            free_words: if layout.slots == 0 { 0 } else { layout.free_slots.level_len[0] },
        }
    }
}

/// A first seed for this thread's bitmap search: the warp and the clock choose the containers
/// (so repeated requests do not retrace one path), the lane chooses the starting bit within the
/// level-0 container, so the lanes of a warp that search together claim neighbouring bits.
#[inline(always)]
pub(super) fn search_seed() -> u64 {
    let warp = arch::global_warp_id() as u64;
    let mixed =
        warp.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ arch::clock64().wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (mixed & !63) | arch::lane_id() as u64
}

/// BitmapAlloc over a region.
#[derive(Clone, Copy, Debug)]
pub struct BitmapAlloc {
    region: Region,
}

impl BitmapAlloc {
    #[inline(always)]
    fn layout(&self) -> &Layout {
        // SAFETY: `init` wrote the layout at the body's start (aligned to 256 bytes) and nothing
        // writes it afterwards (`attach`'s contract: the region was initialised).
        unsafe { &*(self.region.body() as *const Layout) }
    }

    #[inline(always)]
    fn containers(&self, layout: &Layout) -> *const Atomic64 {
        self.region.body().wrapping_add(layout.containers_offset as usize) as *const Atomic64
    }

    #[inline(always)]
    fn free_slots<'a>(&self, layout: &'a Layout) -> Bitmap<'a> {
        // SAFETY: the layout's containers lie in the body, 8-byte aligned, and are only accessed
        // atomically once initialised.
        unsafe { Bitmap::from_raw(&layout.free_slots, self.containers(layout)) }
    }

    /// The levels of the free-slot bitmap above level 0 (see [`Layout::upper`]).
    #[inline(always)]
    fn upper_levels<'a>(&self, layout: &'a Layout) -> Bitmap<'a> {
        let first = layout.free_slots.level_start[1];
        // SAFETY: as for `free_slots`: `upper` describes the containers from level 1 on.
        unsafe { Bitmap::from_raw(&layout.upper, self.containers(layout).wrapping_add(first as usize)) }
    }
}

// In the BitmapAlloc PTX build and on the host only: the AOS build, which every other
// allocator runs, stays as it was, byte for byte (a public function, even one it never calls,
// would change the names LLVM gives its anonymous constants).
#[cfg(any(not(target_arch = "nvptx64"), dynasoar_bitmap_alloc))]
impl BitmapAlloc {
    /// A free slot for `size` bytes, claimed: its index (its address is the pool's start plus
    /// `index * slot_bytes`, see [`SlotPool`]). `None` when the pool is full or `size` is 0 or
    /// larger than a slot, raised and counted in the region as a failed `malloc` is. For the
    /// BitmapAlloc store's per-class bitmaps, which index objects by slot.
    #[inline]
    pub fn take_slot(&self, size: u32) -> Option<u64> {
        let layout = self.layout();
        if size == 0 || size as u64 > layout.slot_bytes {
            self.region.fail(errors::TOO_LARGE);
            return None;
        }
        let found = if layout.slots == 0 {
            None
        } else {
            self.free_slots(layout).clear_any_spread(search_seed(), SEARCH_ATTEMPTS)
        };
        match found {
            Some(slot) => {
                // Acquire: the previous owner's writes (ordered before its release) are visible.
                arch::fence();
                Some(slot)
            }
            None => {
                self.region.fail(errors::OUT_OF_MEMORY);
                None
            }
        }
    }

    /// Give back the slots `bits` of level-0 container `container` (slots `container * 64 +
    /// i` for each set bit `i`) at once: one atomic OR for up to 64 slots. A slot that is free
    /// already, or outside the pool, raises [`errors::INVALID_FREE`] (its bit changes nothing).
    ///
    /// # Safety
    /// Each slot was claimed by [`take_slot`](Self::take_slot) (or handed out by `malloc`) and
    /// is not used after this call.
    #[inline]
    pub unsafe fn give_back_slots(&self, container: u64, bits: u64) {
        let layout = self.layout();
        if layout.slots == 0 || container >= layout.free_slots.level_len[0] {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        // Bits past the last slot (the last container may be partial) are no slots.
        let past = (container + 1) * 64;
        let valid = if past > layout.slots { u64::MAX >> (past - layout.slots) } else { u64::MAX };
        if bits & !valid != 0 {
            self.region.raise(errors::INVALID_FREE);
        }
        let bits = bits & valid;
        if bits == 0 {
            return;
        }
        // Release: the slots' last writes happen before their next owners'.
        arch::fence();
        let before = self.free_slots(layout).container(0, container).fetch_or(bits);
        if before & bits != 0 {
            self.region.raise(errors::INVALID_FREE);
        }
        if before == 0 && layout.free_slots.levels > 1 {
            // The container was empty: mark it non-empty above, as `Bitmap::set` would.
            self.upper_levels(layout).set(container);
        }
    }
}

// SAFETY: a slot is handed out only by the thread whose atomic AND cleared its bit, and its bit
// is set again only by `free`; slots are disjoint, `slot_bytes` apart from a 256-byte aligned
// pool inside the body, and `slot_bytes` is a multiple of 16.
unsafe impl DeviceMalloc for BitmapAlloc {
    const KIND: MallocKind = MallocKind::Bitmap;
    const CAPS: Caps = Caps {
        max_size: MAX_SIZE,
        align: ALIGN as u32,
        free: FreeSupport::Reuses,
        // Room for the layout, a bitmap and a dozen default slots.
        min_region_bytes: HEADER_BYTES + 4096,
        relays_above: u32::MAX,
    };

    unsafe fn init(region: Region, _phase: u32) {
        let layout = Layout::plan(region.body_bytes(), region.param());
        let (thread, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
        if thread == 0 {
            // SAFETY: the body's first bytes are reserved for the layout; nothing else runs.
            unsafe { (region.body() as *mut Layout).write(layout) };
        }
        if layout.slots == 0 {
            return;
        }
        let containers = region.body().wrapping_add(layout.containers_offset as usize) as *mut u64;
        let mut index = thread;
        while index < layout.free_slots.containers {
            let bits = init_container(&layout.free_slots, index, layout.slots);
            // SAFETY: container `index` lies in the body; each is written by one thread only.
            unsafe { Atomic64::from_ptr(containers.add(index as usize)) }.store(bits);
            index += threads.max(1);
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        BitmapAlloc { region }
    }

    #[inline]
    fn malloc(&self, size: u32) -> *mut u8 {
        let layout = self.layout();
        if size as u64 > layout.slot_bytes {
            self.region.raise(errors::TOO_LARGE);
            return core::ptr::null_mut();
        }
        if layout.slots == 0 {
            return core::ptr::null_mut();
        }
        match self.free_slots(layout).clear_any_spread(search_seed(), SEARCH_ATTEMPTS) {
            Some(slot) => {
                // Acquire: the previous owner's writes (ordered before its `free`) are visible.
                arch::fence();
                let offset = layout.pool_offset + slot * layout.slot_bytes;
                self.region.body().wrapping_add(offset as usize)
            }
            None => core::ptr::null_mut(),
        }
    }

    #[inline]
    unsafe fn free(&self, ptr: *mut u8) {
        let layout = self.layout();
        let pool = self.region.body_addr() + layout.pool_offset;
        let addr = ptr as u64;
        let offset = addr.wrapping_sub(pool);
        if !self.region.contains(ptr) || addr < pool || !offset.is_multiple_of(layout.slot_bytes) {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let slot = offset / layout.slot_bytes;
        if slot >= layout.slots {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        // Release: this thread's writes to the slot happen before its next owner's.
        arch::fence();
        let bit = 1u64 << (slot % 64);
        let before = self.free_slots(layout).container(0, slot / 64).fetch_or(bit);
        if before & bit != 0 {
            self.region.raise(errors::INVALID_FREE);
        } else if before == 0 && layout.free_slots.levels > 1 {
            // The container was empty: mark it non-empty above, as `Bitmap::set` would.
            self.upper_levels(layout).set(slot / 64);
        }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::malloc::testing::{HostRegion, StormConfig, run_grid};
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::vec::Vec;

    fn layout_of(region: &HostRegion) -> Layout {
        *region.typed::<BitmapAlloc>().layout()
    }

    /// Every slot free, and the bitmap's levels agree with each other.
    fn assert_all_free(region: &HostRegion) {
        let m = region.typed::<BitmapAlloc>();
        let layout = m.layout();
        let bitmap = m.free_slots(layout);
        assert_eq!(bitmap.check_consistent(), Ok(()));
        assert_eq!(bitmap.count_ones(), layout.slots);
    }

    #[test]
    fn slot_size_comes_from_the_parameter() {
        assert_eq!(slot_bytes(0), DEFAULT_SLOT_BYTES);
        assert_eq!(slot_bytes(1), 16);
        assert_eq!(slot_bytes(16), 16);
        assert_eq!(slot_bytes(17), 32);
        assert_eq!(slot_bytes(100), 112);
        assert_eq!(slot_bytes(u64::MAX), MAX_SLOT_BYTES);
    }

    #[test]
    fn layout_fits_the_body_for_any_size() {
        for body in [0, 100, 512, 1000, 4096, 65_536, 1 << 20, (1 << 30) + 12_345] {
            for param in [0, 16, 48, 4096, 1 << 20] {
                let l = Layout::plan(body, param);
                if l.slots == 0 {
                    continue;
                }
                assert!(l.containers_offset + l.free_slots.bytes() <= l.pool_offset, "{body} {param}");
                assert!(l.pool_offset + l.slots * l.slot_bytes <= body, "{body} {param}");
                assert_eq!(l.pool_offset % POOL_ALIGN, 0);
                assert_eq!(l.free_slots.bits, l.slots);
                if l.free_slots.levels > 1 {
                    // The upper levels seen as their own bitmap sit exactly where they are.
                    for level in 1..l.free_slots.levels as usize {
                        assert_eq!(l.upper.level_len[level - 1], l.free_slots.level_len[level]);
                        assert_eq!(
                            l.upper.level_start[level - 1] + l.free_slots.level_start[1],
                            l.free_slots.level_start[level]
                        );
                    }
                }
                // Nearly all of a large body is pool.
                if body >= 1 << 20 {
                    assert!(l.slots * l.slot_bytes > body / 10 * 9, "{body} {param}: {} slots", l.slots);
                }
            }
        }
    }

    #[test]
    fn serves_up_to_the_slot_size_and_raises_too_large_above() {
        let region = HostRegion::new(MallocKind::Bitmap, 1 << 16, 48);
        let m = region.typed::<BitmapAlloc>();
        let layout = layout_of(&region);
        assert_eq!(layout.slot_bytes, 48);
        let pool = region.region().body_addr() + layout.pool_offset;
        for size in [1, 15, 16, 17, 47, 48] {
            let p = m.malloc(size);
            assert!(!p.is_null(), "{size} bytes");
            assert_eq!(p as u64 % 16, 0);
            assert_eq!((p as u64 - pool) % 48, 0);
        }
        assert_eq!(region.errors(), 0);
        assert!(m.malloc(49).is_null());
        assert_eq!(region.errors(), errors::TOO_LARGE);
        // Through the dispatcher the failure is also counted.
        assert!(region.any().malloc(49).is_null());
        assert!(region.any().malloc(MAX_SIZE + 1).is_null());
        assert_eq!(region.region().errors(), errors::TOO_LARGE | errors::OUT_OF_MEMORY);
    }

    #[test]
    fn default_slot_holds_the_storm_sizes() {
        let region = HostRegion::new(MallocKind::Bitmap, 1 << 16, 0);
        let m = region.typed::<BitmapAlloc>();
        assert!(!m.malloc(256).is_null());
        assert!(m.malloc(257).is_null());
    }

    #[test]
    fn runs_out_exactly_and_recovers_after_a_free() {
        let region = HostRegion::new(MallocKind::Bitmap, 8192, 64);
        let m = region.typed::<BitmapAlloc>();
        let layout = layout_of(&region);
        assert!(layout.slots > 64, "{} slots", layout.slots);
        let mut got = HashSet::new();
        loop {
            let p = m.malloc(64);
            if p.is_null() {
                break;
            }
            assert!(got.insert(p as u64), "{p:?} handed out twice");
        }
        assert_eq!(got.len() as u64, layout.slots, "every slot, and only once");
        assert!(m.malloc(1).is_null());
        let some = *got.iter().next().unwrap();
        unsafe { m.free(some as *mut u8) };
        assert_eq!(m.malloc(64) as u64, some, "the only free slot");
        for &p in &got {
            unsafe { m.free(p as *mut u8) };
        }
        assert_eq!(region.errors(), 0);
        assert_all_free(&region);
    }

    #[test]
    fn reuses_freed_slots() {
        let region = HostRegion::new(MallocKind::Bitmap, 8192, 0);
        let m = region.typed::<BitmapAlloc>();
        let slots = layout_of(&region).slots;
        for _ in 0..10 * slots {
            let p = m.malloc(200);
            assert!(!p.is_null());
            unsafe { m.free(p) };
        }
        assert_eq!(region.errors(), 0);
        assert_all_free(&region);
    }

    #[test]
    fn detects_double_and_foreign_frees() {
        let region = HostRegion::new(MallocKind::Bitmap, 1 << 16, 0);
        let m = region.typed::<BitmapAlloc>();
        let (p, _q) = (m.malloc(32), m.malloc(32));
        unsafe { m.free(p) };
        assert_eq!(region.errors(), 0);
        unsafe { m.free(p) };
        assert_eq!(region.errors(), errors::INVALID_FREE, "double free");
        // The double free changed nothing: the slot is free once, `q` is still taken.
        let layout = layout_of(&region);
        let bitmap = m.free_slots(&layout);
        assert_eq!(bitmap.check_consistent(), Ok(()));
        assert_eq!(bitmap.count_ones(), layout.slots - 1);

        let region = HostRegion::new(MallocKind::Bitmap, 1 << 16, 0);
        let m = region.typed::<BitmapAlloc>();
        unsafe { m.free(m.malloc(32).wrapping_add(16)) };
        assert_eq!(region.errors(), errors::INVALID_FREE, "a pointer inside a slot");

        let region = HostRegion::new(MallocKind::Bitmap, 1 << 16, 0);
        let m = region.typed::<BitmapAlloc>();
        let mut outside = 0u64;
        unsafe { m.free(&mut outside as *mut u64 as *mut u8) };
        assert_eq!(region.errors(), errors::INVALID_FREE, "a pointer outside the region");

        let region = HostRegion::new(MallocKind::Bitmap, 1 << 16, 0);
        let m = region.typed::<BitmapAlloc>();
        unsafe { m.free(region.region().body().wrapping_add(16)) };
        assert_eq!(region.errors(), errors::INVALID_FREE, "a pointer into the metadata");
        assert_all_free(&region);
    }

    #[test]
    fn slots_are_where_the_plan_says_and_go_back_by_container() {
        let region = HostRegion::new(MallocKind::Bitmap, 8192, 48);
        let m = region.typed::<BitmapAlloc>();
        let layout = layout_of(&region);
        let pool = SlotPool::plan(region.region().body_bytes(), 48);
        assert_eq!(
            (pool.pool_offset, pool.slot_bytes, pool.slots),
            (layout.pool_offset, layout.slot_bytes, layout.slots)
        );
        assert!(pool.slots > 64, "{} slots", pool.slots);
        // Every slot once, then out of memory (raised and counted as a failed malloc).
        let mut got = HashSet::new();
        while let Some(slot) = m.take_slot(48) {
            assert!(slot < pool.slots && got.insert(slot), "slot {slot}");
        }
        assert_eq!(got.len() as u64, pool.slots);
        assert_eq!(region.errors(), errors::OUT_OF_MEMORY);
        assert!(m.take_slot(49).is_none() && m.take_slot(0).is_none());
        assert_eq!(region.errors(), errors::OUT_OF_MEMORY | errors::TOO_LARGE);
        // One container at a time.
        let containers = pool.slots.div_ceil(64);
        for c in 0..containers {
            let bits = (0..64).filter(|b| got.contains(&(c * 64 + b))).fold(0u64, |w, b| w | 1 << b);
            unsafe { m.give_back_slots(c, bits) };
        }
        assert_all_free(&region);
        assert_eq!(region.errors(), errors::OUT_OF_MEMORY | errors::TOO_LARGE, "no invalid free");
        // A slot given back twice, and bits past the pool, are invalid frees.
        let slot = m.take_slot(16).unwrap();
        unsafe { m.give_back_slots(slot / 64, 1 << (slot % 64)) };
        assert_eq!(region.errors() & errors::INVALID_FREE, 0);
        unsafe { m.give_back_slots(slot / 64, 1 << (slot % 64)) };
        assert_ne!(region.errors() & errors::INVALID_FREE, 0, "given back twice");
        let region = HostRegion::new(MallocKind::Bitmap, 8192, 48);
        let m = region.typed::<BitmapAlloc>();
        if !pool.slots.is_multiple_of(64) {
            unsafe { m.give_back_slots(containers - 1, 1 << 63) };
            assert_eq!(region.errors(), errors::INVALID_FREE, "a bit past the last slot");
        }
        let region = HostRegion::new(MallocKind::Bitmap, 8192, 48);
        let m = region.typed::<BitmapAlloc>();
        unsafe { m.give_back_slots(containers, 1) };
        assert_eq!(region.errors(), errors::INVALID_FREE, "a container past the pool");
        assert_all_free(&region);
    }

    #[test]
    fn storm_reuses_slots_over_rounds() {
        // 16 threads x 200 blocks of up to 256 bytes in a pool of about 4000 slots, 6 rounds.
        let region = HostRegion::new(MallocKind::Bitmap, 1 << 20, 0);
        let report = region.storm(StormConfig { threads: 16, per_thread: 200, sizes: (1, 256), rounds: 6 });
        assert_eq!(report.failed, 0);
        assert_eq!(report.checked, 6 * 16 * 200);
        assert_eq!(region.errors(), 0);
        assert_all_free(&region);
    }

    #[test]
    fn concurrent_exhaustion_hands_out_every_slot_once() {
        let region = HostRegion::new(MallocKind::Bitmap, 1 << 16, 16);
        let slots = layout_of(&region).slots;
        let got = Mutex::new(Vec::new());
        run_grid(16, |_| {
            let m = region.typed::<BitmapAlloc>();
            let mut mine = Vec::new();
            // Keep asking past the first failure: frees are not happening, so failures must
            // only come from an empty bitmap.
            let mut failures = 0;
            while failures < 3 {
                let p = m.malloc(16);
                if p.is_null() {
                    failures += 1;
                } else {
                    mine.push(p as u64);
                }
            }
            got.lock().unwrap().extend(mine);
        });
        let got = got.into_inner().unwrap();
        let unique: HashSet<u64> = got.iter().copied().collect();
        assert_eq!(unique.len(), got.len(), "a slot was handed out twice");
        assert_eq!(got.len() as u64, slots, "every slot was found");
        run_grid(16, |t| {
            let m = region.typed::<BitmapAlloc>();
            for &p in got.iter().skip(t as usize).step_by(16) {
                unsafe { m.free(p as *mut u8) };
            }
        });
        assert_eq!(region.errors(), 0);
        assert_all_free(&region);
    }
}
