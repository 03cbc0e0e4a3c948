//! The BitmapAlloc store's one kernel: the listing before each `parallel_do` (see the module
//! docs of [`super`]).

use dynasoar_macros::kernel;

use super::{BitmapHeader, BitmapStore};
use dynasoar_device::arch::atomic::{Atomic32, Atomic64};
use dynasoar_device::arch::{self, WarpGroup};
use dynasoar_device::bitmap::Bitmap;
use dynasoar_device::{DevPtr, Plain, errors};

/// Parameters of [`bitmap_list`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BitmapListParams {
    pub store: DevPtr<BitmapHeader>,
    /// This listing's parity: the previous listing's, flipped.
    pub parity: u32,
    pub _reserved: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for BitmapListParams {}

/// Bits of a level-1 container that each lane tests (two on the GPU, all 64 on the CPU
/// backend, whose warps have one lane).
const ROUNDS: usize = 64 / arch::WARP_SIZE as usize;

/// A plain load of a bitmap container: the listing runs alone on the store, so nothing writes
/// the bitmaps it reads meanwhile (an atomic would be a compiler barrier between the loads).
#[inline(always)]
fn quiet_load(word: &Atomic64) -> u64 {
    // SAFETY: `word` is a live, aligned u64 with no concurrent writer (the listing is alone).
    unsafe { word.as_ptr().read() }
}

/// Bit `i` of the result: level-0 container `64 * word + i` of `bitmap` is not empty. Level 2
/// is read first where there is one (a clear bit there skips the level-1 word); levels above 2
/// are not read (a bit of level 3 stands for 262,144 slots, and the listing has a warp per
/// 4,096). A bitmap of one level has one container, word 0's bit 0. `load` reads a container.
#[inline(always)]
fn non_empty_words(bitmap: &Bitmap<'_>, word: u64, load: impl Fn(&Atomic64) -> u64) -> u64 {
    let levels = bitmap.geometry().levels;
    if levels == 1 {
        (load(bitmap.container(0, 0)) != 0) as u64
    } else if levels > 2 && load(bitmap.container(2, word / 64)) & (1 << (word % 64)) == 0 {
        0
    } else {
        load(bitmap.container(1, word))
    }
}

/// Before a `parallel_do` (or `collect`), alone on the store: list every class whose objects
/// changed since the last listing, carry the other classes' lists over to this parity, and give
/// the slots freed since back to BitmapAlloc.
///
/// One warp per level-1 container of a bitmap (4,096 slots), striding: `non_empty_words`
/// says which of its 64 level-0 words to read; lane `l` reads words `l` and `l + 32` of them
/// (on the CPU backend one thread reads all), and the warp reserves room in the class's list
/// for the slots of all its words with one atomic, each lane then writing its own slots' indices
/// (so the list's order is not fixed). The grid must be whole warps (as the host launches it,
/// in blocks of 256); one that is not raises `BAD_GRID`.
#[kernel(crate = dynasoar_device, name = "dynasoar_bitmap_list")]
pub fn bitmap_list(p: BitmapListParams) {
    // SAFETY: the host launches the listing on a store it created, with nothing else running.
    let store = unsafe { BitmapStore::from_ptr(p.store.as_ptr()) };
    let parity = p.parity & 1;
    let before = parity ^ 1;
    let lanes = arch::WARP_SIZE as u64;
    let (thread, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
    if !threads.is_multiple_of(lanes) {
        store.raise(errors::BAD_GRID);
        return;
    }
    let (warp, warps, lane) = (thread / lanes, threads / lanes, thread % lanes);
    let geometry = *store.geometry();
    let words = if geometry.levels > 1 { geometry.level_len[1] } else { 1 };
    let mut any_changed = false;
    for c in 0..store.num_classes() {
        let class = c as u8;
        // Raised by the launches since the last listing (which zeroed this parity's flags).
        let changed = store.changed(class, before).load() != 0;
        any_changed |= changed;
        if thread == 0 {
            // Thread 0 alone touches these words in this launch; a changed class's count of
            // this parity (zeroed by the last listing) is the other threads' append target.
            if !changed {
                store.counts(class, parity).store(store.counts(class, before).load());
            }
            store.counts(class, before).store(0);
            store.changed(class, parity).store(0);
        }
        if !changed {
            continue;
        }
        let Some(bitmap) = store.class_bitmap(class) else { continue };
        let counter = store.counts(class, parity);
        let list = store.list(class);
        let mut word = warp;
        while word < words {
            let non_empty = non_empty_words(&bitmap, word, quiet_load);
            if non_empty != 0 {
                list_words(&bitmap, word, non_empty, lane, counter, list, geometry.bits, &store);
            }
            word += warps;
        }
    }
    if thread == 0 {
        store.set_parity(parity);
    }
    if !any_changed {
        // Nothing was created or freed since the last listing: nothing was deferred either.
        return;
    }
    let deferred = store.deferred();
    let malloc = store.bitmap_alloc();
    let mut word = warp;
    while word < words {
        // Atomic loads: other lanes clear the levels above 0 meanwhile. A container's bits above
        // are cleared only once all its own bits are, by the warp that walks it.
        let non_empty = non_empty_words(&deferred, word, Atomic64::load);
        let mut round = 0;
        while round < ROUNDS {
            let bit = round as u64 * lanes + lane;
            if non_empty >> bit & 1 != 0 {
                let index = word * 64 + bit;
                let freed = deferred.container(0, index).swap(0);
                if freed != 0 {
                    // The container emptied: clear it above, as `Bitmap::try_clear` would (the
                    // lanes reading the level above meanwhile test their own bits only).
                    deferred.clear_in_level_above(0, index);
                    // SAFETY: each deferred bit is the slot of an object that `free` removed
                    // from its class's bitmap since the last listing (once: its class bit was
                    // set), which no launch after the one that freed it may use; `swap` hands it
                    // to this thread only.
                    unsafe { malloc.give_back_slots(index, freed) };
                }
            }
            round += 1;
        }
        word += warps;
    }
}

/// The warp's part of a listing: append the slots set in the level-0 words of `bitmap` that
/// `non_empty` names (bits of level-1 container `word`) to `list`, lane `lane` taking bits
/// `lane`, `lane + WARP_SIZE`, ...
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn list_words(
    bitmap: &Bitmap<'_>,
    word: u64,
    non_empty: u64,
    lane: u64,
    counter: &Atomic32,
    list: *mut u32,
    capacity: u64,
    store: &BitmapStore,
) {
    let lanes = arch::WARP_SIZE as u64;
    // Every word first (their loads overlap), then one scan and one atomic.
    let mut bits = [0u64; ROUNDS];
    let mut count = 0;
    for (round, bits) in bits.iter_mut().enumerate() {
        let bit = round as u64 * lanes + lane;
        if non_empty >> bit & 1 != 0 {
            *bits = quiet_load(bitmap.container(0, word * 64 + bit));
            count += bits.count_ones();
        }
    }
    let at = WarpGroup::current().fetch_add_u32(counter, count) as u64;
    if at + count as u64 > capacity {
        // More objects than slots: the bitmaps are corrupt.
        store.raise(errors::TABLE_FULL);
        return;
    }
    let mut entry = at as usize;
    for (round, &bits) in bits.iter().enumerate() {
        let first = (word * 64 + round as u64 * lanes + lane) * 64;
        let mut rest = bits;
        while rest != 0 {
            // SAFETY: the warp reserved `count` entries from `at` for this lane's slots, inside
            // the list's `capacity`; each is written once, read by later launches only. Slot
            // indices fit in 32 bits (the host allows fewer than 2^32 slots).
            unsafe { list.add(entry).write((first + rest.trailing_zeros() as u64) as u32) };
            rest &= rest - 1;
            entry += 1;
        }
    }
}
