//! Blocks: a 64-byte header (allocation bitmap, type id, handed-out slots), padded to 128 bytes,
//! then the data segment, where the block's objects live in SOA layout (paper section 3,
//! Alg. 6-7). The paper's per-block iteration bitmap lives in the enumeration list instead (see
//! `heap`), next to the block's index.
//!
//! The allocation bitmap always has 64 bits. A class with `N < 64` objects per block keeps bits
//! `N..64` set for the block's whole life (its *preset* mask), so "full" is always `u64::MAX`
//! and "empty" is always `preset`.

use crate::arch::{
    Backoff,
    atomic::{Atomic32, Atomic64},
    lowest_set_bits,
};

/// Bytes of the block header.
pub const HEADER_BYTES: u64 = 64;

/// Bytes from a block's start to its data segment: the header, padded to a cache line.
///
/// Blocks are a multiple of [`BLOCK_ALIGN`] bytes, so every block's data segment starts on a
/// 128-byte line, and so does the SOA array of its first field (and of every field when the
/// class has 64 objects per block). With the data right after the 64-byte header, half the
/// blocks started mid-line and every warp's 128-byte access touched two lines: `x += 1` over
/// 16 M floats laid out so took 75.6 us on an H100, against 65.8 us with the data aligned
/// (60.6 us as one contiguous array). The padding costs 64 bytes a block.
pub const DATA_OFFSET: u64 = 128;

/// Block sizes are multiples of this (the heap's blocks start 256-byte aligned).
pub const BLOCK_ALIGN: u64 = 128;

/// The header at the start of every block.
#[repr(C, align(64))]
pub struct BlockHeader {
    /// Bit `i` set iff slot `i` is allocated (or unusable, see [`preset_mask`]).
    pub alloc: Atomic64,
    /// Type id of the block's class while it is allocated.
    pub type_id: Atomic32,
    /// The block's entry in its class's enumeration list, written by each enumeration that
    /// lists it: where a free that keeps the list right clears the object's bit
    /// ([`Heap::unlist`](crate::heap::Heap::unlist)). Meaningful only while that list is the
    /// class's current one; nothing else reads or resets it.
    pub listed_at: Atomic32,
    /// Bit `i` clear iff slot `i` is reserved for a run (see the allocator's `runs`) and not yet
    /// handed out: such a slot is set in `alloc` but holds no object. So the block's objects
    /// are `alloc & handed` ([`objects`](Self::objects)).
    ///
    /// 0 while the block is free; set in full when a block is opened for single requests, left
    /// 0 when it is opened for a run (each lane that gets a slot of the run sets its bit).
    /// Every write after the heap's initialisation is a read-modify-write, so that the reset of
    /// a block's previous life and the bits set in its next one form one chain.
    pub handed: Atomic64,
}

#[cfg(not(loom))]
const _: () = assert!(core::mem::size_of::<BlockHeader>() as u64 == HEADER_BYTES);

/// Bits of the allocation bitmap that never hold objects for a class with `objects` per block.
#[inline(always)]
pub const fn preset_mask(objects: u32) -> u64 {
    if objects >= 64 { 0 } else { !((1u64 << objects) - 1) }
}

/// Slots reserved by one [`BlockHeader::reserve`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// The reserved slots, as bits.
    pub slots: u64,
    /// This reservation allocated the block's last free slot: the caller must deactivate the
    /// block (clear its bit in the active bitmap).
    pub filled_block: bool,
}

/// What freeing one slot did to its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The block was full: the caller must activate it again.
    pub was_full: bool,
    /// The block has no objects left: the caller should try to invalidate and free it.
    pub emptied: bool,
}

impl BlockHeader {
    /// A standalone header (tests and loom models); blocks in a heap are initialised in place.
    pub fn new(alloc: u64, type_id: u32) -> Self {
        BlockHeader {
            alloc: Atomic64::new(alloc),
            type_id: Atomic32::new(type_id),
            listed_at: Atomic32::new(0),
            handed: Atomic64::new(u64::MAX),
        }
    }

    /// A standalone header of a free block (loom models).
    pub fn free() -> Self {
        BlockHeader {
            alloc: Atomic64::new(0),
            type_id: Atomic32::new(0),
            listed_at: Atomic32::new(0),
            handed: Atomic64::new(0),
        }
    }

    /// The slots that hold objects now (with the preset bits of classes with fewer than 64
    /// objects per block: mask them with [`preset_mask`]).
    #[inline(always)]
    pub fn objects(&self) -> u64 {
        self.alloc.load() & self.handed.load()
    }

    /// Reserve up to `wanted` free slots in one atomic OR (warp-aggregated Alg. 6). Starts from a
    /// slot rotated by `seed` to spread competing warps over the block. `None` if the block is
    /// full (or being invalidated). The OR is an acquire (`atom.acquire.gpu`): what the block's
    /// opener published before its release (the block's type) is visible after it, without a
    /// full fence (which on sm_90 also waits for this thread's own stores in flight).
    #[inline]
    pub fn reserve(&self, wanted: u32, seed: u32) -> Option<Reservation> {
        self.reserve_ordered::<true>(wanted, seed)
    }

    /// [`reserve`](Self::reserve) with a relaxed OR, for callers that need nothing its opener
    /// published (see the allocator's `reserve_in`): on sm_90 an acquire is also an invalidation
    /// of the multiprocessor's L1 (`CCTL.IVALL`), which this leaves out.
    #[inline]
    pub fn reserve_relaxed(&self, wanted: u32, seed: u32) -> Option<Reservation> {
        self.reserve_ordered::<false>(wanted, seed)
    }

    #[inline(always)]
    fn reserve_ordered<const ACQUIRE: bool>(&self, wanted: u32, seed: u32) -> Option<Reservation> {
        let rotation = seed & 63;
        let mut backoff = Backoff::new();
        loop {
            let current = self.alloc.load();
            if current == u64::MAX {
                return None;
            }
            let free = (!current).rotate_right(rotation);
            let chosen = lowest_set_bits(free, wanted).rotate_left(rotation);
            let before =
                if ACQUIRE { self.alloc.fetch_or_acquire(chosen) } else { self.alloc.fetch_or(chosen) };
            #[cfg(loom)]
            std::eprintln!(
                "[{:?}] reserve: current {current:#x} chosen {chosen:#x} before {before:#x}",
                loom::thread::current().id()
            );
            let slots = chosen & !before;
            if slots != 0 {
                let filled_block = before != u64::MAX && (before | chosen) == u64::MAX;
                return Some(Reservation { slots, filled_block });
            }
            if before == u64::MAX {
                return None;
            }
            // Others took exactly the slots we chose; look again.
            backoff.retry();
        }
    }

    /// Free `slot`. `None` if the slot was not allocated (a double free).
    #[inline]
    pub fn release(&self, slot: u32, preset: u64) -> Option<Release> {
        self.release_slots(1 << slot, preset)
    }

    /// Free the slots of `mask` at once. `None` if any of them was not allocated.
    #[inline]
    pub fn release_slots(&self, mask: u64, preset: u64) -> Option<Release> {
        let before = self.alloc.fetch_and(!mask);
        if before & mask != mask {
            return None;
        }
        Some(Release { was_full: before == u64::MAX, emptied: before & !mask == preset })
    }

    /// Invalidate an empty block by acquiring all its slots at once (Alg. 7), so that no one can
    /// allocate in it while it is being freed. `true` if this thread now owns the empty block.
    ///
    /// If other threads had allocated in the meantime, the invalidation is rolled back; should a
    /// thread free a slot during the rollback window (it then saw a full block and will activate
    /// it), `deactivate` is called first so that its activation finds the bit clear.
    #[inline]
    pub fn invalidate(&self, preset: u64, deactivate: impl Fn()) -> bool {
        loop {
            let before = self.alloc.fetch_or(u64::MAX);
            #[cfg(loom)]
            std::eprintln!("[{:?}] invalidate: before {before:#x}", loom::thread::current().id());
            if before == preset {
                return true;
            }
            if before == u64::MAX {
                // Someone else invalidated it (or filled it) first.
                return false;
            }
            // Objects were allocated after the block emptied: give back the bits we set.
            let before_rollback = self.alloc.fetch_and(before);
            if before_rollback != u64::MAX {
                deactivate();
            }
            if before_rollback & before != preset {
                return false;
            }
            // Those objects were freed again meanwhile and no one else will free the block.
        }
    }

    /// Objects in the block now (meaningful when no operation is in flight).
    pub fn live_objects(&self, preset: u64) -> u32 {
        (self.objects() & !preset).count_ones()
    }
}

/// What a class's allocator fixes at compile time of its blocks
/// ([`AllocatorSpec`](crate::AllocatorSpec)'s `CLASSES` and `BLOCK_BYTES`), for the walks of `device_do` and
/// `device_reduce`: with them constants of the kernel, DynaSOAr's heap computes the blocks'
/// and the fields' addresses without holding them in registers. Zero means not known (the
/// store reads the heap's own). A heap made for an allocator has the allocator's geometry
/// (the runtime plans it from the same constants); DynaSOAr's heap checks it at the start of
/// each walk and raises `errors::WRONG_HEAP` where it differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassShape {
    /// Objects per block of the class (`N_T`), or 0.
    pub objects: u32,
    /// Bytes per block of its heap, or 0.
    pub block_bytes: u32,
    /// The caller expects the class's blocks to be full or nearly (a method declared with
    /// `#[parallel(lanes = L, dense)]`): a store may then walk them in a form that is faster
    /// for full blocks and slower for blocks with free slots here and there. The objects
    /// visited and their order are the same either way.
    pub dense: bool,
    /// A lane reading its part from the launch's ranked list folds the objects two at a time (a
    /// method declared with `#[parallel(lanes = L, pairs)]`): both entries of the next pair are
    /// loaded before this pair is visited, so a fold without branches may load the second
    /// object's fields while it computes with the first. The objects visited and their order
    /// are the same either way.
    pub pairs: bool,
    /// The address of the launch's ranked list (`heap::ranked`; a launch of a method with
    /// lanes), or 0: where it lists the class, a lane's part is read from it instead of walking
    /// the class's blocks. The same objects in the same parts either way.
    pub ranked: u64,
}

impl ClassShape {
    /// Nothing known: the store reads what it needs.
    pub const UNKNOWN: ClassShape =
        ClassShape { objects: 0, block_bytes: 0, dense: false, pairs: false, ranked: 0 };
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn preset_masks() {
        assert_eq!(preset_mask(64), 0);
        assert_eq!(preset_mask(1), !1);
        assert_eq!(preset_mask(12), !0xfff);
    }

    #[test]
    fn reserve_hands_out_distinct_slots_until_full() {
        let preset = preset_mask(12);
        let block = BlockHeader::new(preset, 0);
        let mut all = 0u64;
        let mut fills = 0;
        for seed in 0..10 {
            match block.reserve(5, seed * 7) {
                Some(r) => {
                    assert_eq!(r.slots & all, 0);
                    assert_eq!(r.slots & preset, 0);
                    all |= r.slots;
                    fills += r.filled_block as u32;
                }
                None => break,
            }
        }
        assert_eq!(all, !preset);
        assert_eq!(fills, 1);
        assert_eq!(block.reserve(1, 0), None);
    }

    #[test]
    fn release_reports_full_and_empty_transitions() {
        let preset = preset_mask(2);
        let block = BlockHeader::new(preset, 0);
        let r = block.reserve(2, 0).unwrap();
        assert!(r.filled_block);
        assert_eq!(block.release(0, preset), Some(Release { was_full: true, emptied: false }));
        assert_eq!(block.release(0, preset), None);
        assert_eq!(block.release(1, preset), Some(Release { was_full: false, emptied: true }));
    }

    #[test]
    fn single_object_blocks_are_full_and_empty_at_once() {
        let preset = preset_mask(1);
        let block = BlockHeader::new(preset, 0);
        block.reserve(1, 0).unwrap();
        assert_eq!(block.release(0, preset), Some(Release { was_full: true, emptied: true }));
    }

    #[test]
    fn invalidate_empty_block_succeeds_once() {
        let preset = preset_mask(40);
        let block = BlockHeader::new(preset, 3);
        assert!(block.invalidate(preset, || panic!("no rollback expected")));
        assert!(!block.invalidate(preset, || panic!("no rollback expected")));
        assert_eq!(block.reserve(1, 0), None);
    }

    #[test]
    fn invalidate_rolls_back_when_objects_appeared() {
        let preset = preset_mask(64);
        let block = BlockHeader::new(preset, 0);
        let r = block.reserve(3, 0).unwrap();
        assert!(!block.invalidate(preset, || panic!("no concurrent free")));
        assert_eq!(block.alloc.load(), r.slots);
    }
}
