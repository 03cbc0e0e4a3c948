//! Runs: consecutive blocks reserved for the bulk allocations of one warp slot.
//!
//! A warp that allocates a whole warp's objects of one class at a time (Linux Scalability, the
//! storms' two largest classes) pays the paper's search for every half block: find an active
//! block, reserve, fence, check the type, and open a new block every other request. Classes that
//! opt in ([`ClassSpec::OWNS_BLOCKS`]) give such leaders a run instead: up to [`MAX_RUN_BLOCKS`]
//! consecutive blocks, opened at once with every slot reserved, whose slots the warps keyed to
//! one entry of the class's run table take in order with one `fetch_add` on the entry.
//!
//! - A run's blocks are full from the start (all their slots are reserved), so no search finds
//!   them and no free empties them: a warp that takes slots from the run needs no type check.
//! - A block's `handed` bitmap tells the run's reserved slots (clear) from its objects: each
//!   lane sets the bit of the slot it gets, so the objects are `alloc & handed` wherever
//!   objects are listed or counted.
//! - The leader shuffles the entry's value to its group, and each lane computes its own slot
//!   from it: a request costs one round trip (the `fetch_add`) and a few dozen instructions.
//! - The entry's cursor only grows; a leader whose `fetch_add` finds the run exhausted (or no
//!   run) opens the next one, twice as long, next to it, and swaps it in. A run displaced
//!   by another warp sharing the entry, and every run when blocks run out, is *released*: the
//!   slots past its cursor are freed like objects (Alg. 2), which frees the blocks that nobody
//!   took slots from.
//! - Any warp may take slots from any run (the entry is the only state), so a run left by a
//!   warp that exited is simply continued by the next one on its slot.

use super::{BlockLayout, BlockStore, claim_free_blocks, first_seed, load_latest64, release_slots};
use crate::arch::{self, atomic::Atomic64, ones_from};
use crate::bitmap::next_seed;
use crate::block::preset_mask;
use crate::class::ClassSpec;
use crate::handle::RawHandle;

/// Most blocks of a run: one container of the free bitmap, so that a run is claimed with one
/// atomic there and in the allocated bitmap.
const MAX_RUN_BLOCKS: u32 = 64;

/// The bits of an entry that hold the run's first block plus 1 (0: no run).
const FIRST: u64 = 0xffff_ffff;
/// Where an entry holds the run's length in blocks, minus 1 (6 bits).
const LEN_SHIFT: u32 = 32;
/// Where an entry holds its cursor: the run's next slot (counting the slots of all its blocks
/// in order). In the top bits, so that adds past the run's end never carry into the run's
/// description: they can only overflow off the word. They cannot wrap round to a valid slot
/// either: an exhausted run is replaced (or cleared) by the first leader that sees it, and the
/// adds in between, at most one per warp on the GPU, stay far below 2^24.
const CURSOR_SHIFT: u32 = 40;

/// A run as its entry describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    first: u64,
    len: u32,
    cursor: u64,
}

impl Run {
    /// The run in `entry`, if any, in a heap of `blocks` blocks.
    #[inline(always)]
    fn decode(entry: u64, blocks: u64) -> Option<Run> {
        let first = entry & FIRST;
        let len = ((entry >> LEN_SHIFT) & (MAX_RUN_BLOCKS as u64 - 1)) as u32 + 1;
        // Written only by `encode`, but checked all the same, so that no corrupted entry can
        // make us touch memory outside the heap.
        (first != 0 && first - 1 + len as u64 <= blocks).then(|| Run {
            first: first - 1,
            len,
            cursor: entry >> CURSOR_SHIFT,
        })
    }

    #[inline(always)]
    fn encode(self) -> u64 {
        (self.first + 1) | ((self.len as u64 - 1) << LEN_SHIFT) | (self.cursor << CURSOR_SHIFT)
    }

    /// Slots of the run for a class with `objects` per block.
    #[inline(always)]
    fn end(self, objects: u32) -> u64 {
        self.len as u64 * objects as u64
    }
}

/// Call `f(index, slots)` for each block of the run from `first` that the run's slots
/// `from..to` lie in, with those slots as bits.
#[inline(always)]
fn for_each_block(first: u64, objects: u32, from: u64, to: u64, mut f: impl FnMut(u64, u64)) {
    let n = objects as u64;
    let mut at = from;
    while at < to {
        let upto = ((at / n + 1) * n).min(to);
        f(first + at / n, ones_from((at % n) as u32, (upto - at) as u32));
        at = upto;
    }
}

/// What a leader took from its warp slot's run for its group: the run's entry as the leader's
/// `fetch_add` found it, or as the leader opened the run (cursor 0), so that the group's
/// `k`-th lane gets the run's slot `cursor + k` if the run has one there. Each lane computes
/// its own handle from this one word: the group needs a single shuffle and no other sync.
/// 0: no run (no block was free to open one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Taken(pub(super) u64);

impl Taken {
    /// The `k`-th slot of what was taken, marked handed out, if the run has it.
    ///
    /// The lane that gets the slot marks it (a reduction, which it does not wait for): the
    /// mark comes before anything the lane does with the object in its own order (a free
    /// starts with a fence), and a free by another thread must come after the allocation
    /// anyway, through whatever synchronisation passed it the handle.
    #[inline(always)]
    pub(super) fn handle<C: ClassSpec, S: BlockStore>(
        self,
        store: &S,
        layout: BlockLayout,
        k: u32,
    ) -> Option<RawHandle> {
        let run = Run::decode(self.0, layout.count)?;
        let n = C::OBJECTS_PER_BLOCK;
        // The cursor stays below 2^24 (see `CURSOR_SHIFT`): 32-bit arithmetic, cheaper on a GPU.
        let at = run.cursor as u32 + k;
        if at as u64 >= run.end(n) {
            return None;
        }
        let addr = layout.addr(run.first + (at / n) as u64);
        let slot = at % n;
        store.block_at_addr(addr).handed.reduce_or(1 << slot);
        Some(RawHandle::new(addr, slot, n, C::TYPE_ID))
    }

    /// How many lanes of a group of `size` got a slot.
    #[inline(always)]
    pub(super) fn count<C: ClassSpec>(self, layout: BlockLayout, size: u32) -> u32 {
        Run::decode(self.0, layout.count)
            .map_or(0, |run| run.end(C::OBJECTS_PER_BLOCK).saturating_sub(run.cursor).min(size as u64) as u32)
    }
}

/// The leader's part: take up to `wanted` slots of class `C` from its warp slot's run `entry`
/// with one `fetch_add`, opening the next run when it has none left.
#[inline(always)]
pub(super) fn take<C: ClassSpec, S: BlockStore>(
    store: &S,
    layout: BlockLayout,
    entry: &Atomic64,
    wanted: u32,
) -> Taken {
    // Loaded first, so that its round trip overlaps the entry's.
    let flags = store.class_flags(C::TYPE_ID);
    let seen = entry.fetch_add((wanted as u64) << CURSOR_SHIFT);
    let taken = match Run::decode(seen, layout.count) {
        Some(run) if run.cursor < run.end(C::OBJECTS_PER_BLOCK) => seen,
        _ => open::<C, S>(store, wanted, entry, seen),
    };
    if taken != 0 {
        store.class_changed(C::TYPE_ID, flags);
    }
    Taken(taken)
}

/// Open a run for `entry`, whose run (`seen` there) is exhausted or none, and take `wanted`
/// slots from it: the run with its cursor at 0 (the caller's slots are its first ones), or 0
/// if no block is free. Out of line: once per run.
#[inline(never)]
fn open<C: ClassSpec, S: BlockStore>(store: &S, wanted: u32, entry: &Atomic64, seen: u64) -> u64 {
    let n = C::OBJECTS_PER_BLOCK;
    // Read once: the block loops below then compute addresses without reading the heap's
    // header again after each atomic, so that their atomics pipeline.
    let layout = store.block_layout();
    let blocks = layout.count;
    let old = Run::decode(seen, blocks);
    // Twice as long as the last run, so that a warp that allocates a lot opens few, and next
    // to it, where the free blocks it did not get last time may still be.
    let len = old.map_or(1, |r| (r.len * 2).min(MAX_RUN_BLOCKS));
    let near = old.map(|r| r.first + r.len as u64);
    let Some((first, len)) = claim_blocks(store, len, first_seed(store), near) else {
        // No block to open. Clear the exhausted run, so that the adds of the warps on this
        // entry do not grow its cursor meanwhile (see `CURSOR_SHIFT`).
        let now = entry.load();
        if Run::decode(now, blocks).is_some_and(|r| r.cursor >= r.end(n)) {
            let _ = entry.compare_exchange(now, 0);
        }
        return 0;
    };
    // Acquire: pairs with the release in `release_slots` before the blocks were published as
    // free, so that their previous lives' writes happen before our resets.
    arch::fence();
    for index in first..first + len as u64 {
        // A swap, as in `initialize_free_block`.
        store.block_at_addr(layout.addr(index)).type_id.swap(C::TYPE_ID as u32);
    }
    // Release: the type id is visible to anyone whose reservation in these blocks succeeds
    // (once frees make room in them).
    arch::fence();
    for index in first..first + len as u64 {
        // Every slot reserved: the run's blocks are full, so no search finds them and no free
        // empties them; `handed` is 0 since the blocks were freed, so none is an object yet.
        store.block_at_addr(layout.addr(index)).alloc.swap(u64::MAX);
    }
    store.allocated(C::TYPE_ID).set_stretch(first, len);
    let count = (wanted as u64).min(len as u64 * n as u64);
    // Release: whoever takes slots from the run through the entry finds its blocks initialised.
    arch::fence();
    let displaced = entry.swap(Run { first, len, cursor: count }.encode());
    // Release: whoever sees this run no longer opening sees it in the entry (where blocks that
    // run out release it).
    arch::fence();
    store.initializing().reduce_sub(1);
    // A warp sharing the entry may have opened a run meanwhile, with slots left.
    if let Some(run) = Run::decode(displaced, blocks) {
        release(store, C::TYPE_ID, run);
    }
    Run { first, len, cursor: 0 }.encode()
}

/// Claim up to `len` consecutive free blocks (at least one), next to block `near` if there are
/// any there; counted as initialising until the caller has put them in a run. `None` if no
/// block is free.
#[inline(always)]
fn claim_blocks<S: BlockStore>(store: &S, len: u32, seed: u64, near: Option<u64>) -> Option<(u64, u32)> {
    // Read the count first: when it is out, a claim would make all starving leaders hammer it.
    let free = store.free_count().load() as i64;
    if free <= 0 {
        return None;
    }
    // Short runs when blocks get scarce: what a run keeps in reserve is lost to classes without
    // runs, which do not release runs when blocks run out (see `search_or_open`).
    let mut len = len.min((free as u64 / 64).clamp(1, MAX_RUN_BLOCKS as u64) as u32);
    if !claim_free_blocks(store, len as u64) {
        if len == 1 || !claim_free_blocks(store, 1) {
            return None;
        }
        len = 1;
    }
    store.initializing().reduce_add(1);
    let free_blocks = store.free_blocks();
    let mut seed = seed;
    // The claim promises at least one free bit: search until we have it.
    let (first, got) = loop {
        if let Some(stretch) = free_blocks.clear_stretch(near, len, seed, 64) {
            break stretch;
        }
        seed = next_seed(seed);
    };
    if got < len {
        store.free_count().reduce_add((len - got) as u64);
    }
    Some((first, got))
}

/// Free the slots of `run` (of `class`) that nobody took: those past its cursor. `true` if
/// there were any.
fn release<S: BlockStore>(store: &S, class: u8, run: Run) -> bool {
    let objects = store.class_objects(class);
    let end = run.end(objects);
    if run.cursor >= end {
        return false;
    }
    let preset = preset_mask(objects);
    let layout = store.block_layout();
    for_each_block(run.first, objects, run.cursor, end, |index, slots| {
        let block = store.block_at_addr(layout.addr(index));
        // Ordinary free slots from now on: whoever reserves them hands them out at once.
        block.handed.reduce_or(slots);
        // Release: whoever reserves them once they are freed below sees their handed bits.
        arch::fence();
        if !release_slots::<S, false>(store, block, index, slots, class, preset) {
            store.raise(crate::errors::DOUBLE_FREE);
        }
    });
    // Blocks may have been freed: the class's next enumeration must list its blocks afresh.
    store.class_changed(class, store.class_flags(class));
    true
}

/// Release every run of every class: when blocks run out (their reserved slots are all there
/// is). `true` if any had slots left.
#[cold]
#[inline(never)]
pub fn release_all<S: BlockStore>(store: &S) -> bool {
    let mut any = false;
    for class in 0..store.num_classes() {
        for entry in store.run_table(class) {
            any |= release_entry(store, class, entry);
        }
    }
    any
}

/// Release the run in `entry` of `class`'s run table (see [`release_all`]); `true` if it had
/// slots left.
#[inline]
pub fn release_entry<S: BlockStore>(store: &S, class: u8, entry: &Atomic64) -> bool {
    let blocks = store.active(class).len();
    let objects = store.class_objects(class);
    // A load first: most entries have no slots left, and swapping them all would make every
    // starving leader write the whole table.
    let seen = Run::decode(load_latest64(entry), blocks);
    if seen.is_some_and(|r| r.cursor < r.end(objects))
        && let Some(run) = Run::decode(entry.swap(0), blocks)
    {
        return release(store, class, run);
    }
    false
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_adds_never_touch_the_run() {
        let run = Run { first: 1234, len: 64, cursor: 100 };
        assert_eq!(Run::decode(run.encode(), 1298), Some(run));
        assert_eq!(Run::decode(run.encode(), 1297), None, "past the heap's blocks");
        assert_eq!(Run::decode(0, 10), None);
        // Adds that overflow the cursor drop off the word.
        let full = Run { first: 7, len: 3, cursor: (1 << 24) - 1 }.encode();
        let after = full.wrapping_add(32 << CURSOR_SHIFT);
        assert_eq!(Run::decode(after, 100), Some(Run { first: 7, len: 3, cursor: 31 }));
        // An entry without a run stays one whatever is added.
        assert_eq!(Run::decode(5 << CURSOR_SHIFT, 100), None);
    }

    #[test]
    fn run_slots_split_at_block_ends() {
        let mut seen = std::vec::Vec::new();
        for_each_block(10, 12, 5, 30, |index, slots| seen.push((index, slots)));
        assert_eq!(seen, [(10, 0b1111111 << 5), (11, 0xfff), (12, 0b111111)]);
        seen.clear();
        for_each_block(0, 64, 32, 96, |index, slots| seen.push((index, slots)));
        assert_eq!(seen, [(0, u64::MAX << 32), (1, u32::MAX as u64)]);
    }
}
