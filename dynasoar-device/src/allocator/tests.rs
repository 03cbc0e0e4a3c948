//! Run grants of many slots at once, on the CPU. The storms' lone CPU lanes take one slot per
//! request; here a "leader" takes up to a warp's worth, so grants span blocks as on the GPU.

use std::collections::HashSet;
use std::vec;
use std::vec::Vec;

use super::vec_store::VecStore;
use super::*;

/// Twelve objects per block, like the storms' `Large`: a warp's request spans up to four blocks.
struct Twelve;
impl ClassSpec for Twelve {
    const TYPE_ID: u8 = 0;
    const OBJECTS_PER_BLOCK: u32 = 12;
    const BLOCK_BYTES: u64 = 4096;
    const NAME: &'static str = "Twelve";
    const OWNS_BLOCKS: bool = true;
}

#[test]
fn run_grants_span_blocks_and_hand_out_every_slot_once() {
    let store = VecStore::new(200, &[Twelve::OBJECTS_PER_BLOCK]);
    let preset = preset_mask(12);
    let mut handles = Vec::new();
    let mut seen = HashSet::new();
    // The last request takes one slot, so that the run has slots left to release.
    let requests = [32u32, 7, 32, 6, 19, 32, 32, 12, 32, 25].into_iter().cycle().take(40).chain([1]);
    for (i, wanted) in requests.enumerate() {
        let layout = store.block_layout();
        let taken = runs::take::<Twelve, _>(&store, layout, store.run_entry(0), wanted);
        let count = taken.count::<Twelve>(layout, wanted);
        assert!(count >= 1 && count <= wanted, "request {i}: {count} of {wanted}");
        for k in 0..count {
            let h = taken.handle::<Twelve, _>(&store, layout, k).expect("a slot taken");
            assert!(seen.insert(h), "slot {h:?} handed out twice");
            assert_eq!((h.objects_per_block(), h.type_id()), (12, 0));
            let block = store.block(store.index_of(h));
            assert_ne!(block.objects() & (1 << h.slot()), 0, "a handed-out slot is an object");
            handles.push(h);
        }
    }
    assert_eq!(store.errors.load(), 0, "no error raised");
    let allocated: Vec<u64> = (0..200).filter(|&i| store.allocated(0).get(i)).collect();
    let objects: u32 = allocated.iter().map(|&i| (store.block(i).objects() & !preset).count_ones()).sum();
    assert_eq!(objects as usize, handles.len(), "objects are exactly the handed-out slots");
    for &i in &allocated {
        assert_eq!(store.block(i).alloc.load(), u64::MAX, "run blocks are full until released");
        assert_eq!(store.block(i).type_id.load(), 0);
        assert!(!store.active(0).get(i), "no search finds a run's block");
    }
    // Runs doubled: 40 requests took far fewer than one block each.
    assert!(allocated.len() < 100, "{} blocks for {} objects", allocated.len(), handles.len());

    let reserved: u32 =
        allocated.iter().map(|&i| (!store.block(i).handed.load() & !preset).count_ones()).sum();
    assert!(reserved > 0, "the last run has slots left");
    assert_eq!(objects + reserved, 12 * allocated.len() as u32, "every slot an object or reserved");

    // Releasing the run frees its reserved slots, and the blocks that held nothing else.
    let free_before = store.free_count.load();
    release_runs(&store);
    let still: Vec<u64> = (0..200).filter(|&i| store.allocated(0).get(i)).collect();
    let objects_after: u32 = still.iter().map(|&i| (store.block(i).objects() & !preset).count_ones()).sum();
    assert_eq!(objects_after, objects, "releasing a run frees no object");
    assert_eq!(store.free_count.load(), free_before + (allocated.len() - still.len()) as u64);
    for &i in &still {
        let block = store.block(i);
        assert_eq!(!block.handed.load() & !preset & block.alloc.load(), 0, "no slot still reserved");
        assert_eq!(store.active(0).get(i), block.alloc.load() != u64::MAX, "active iff not full");
    }

    // Freeing every object frees every block.
    for h in handles {
        store.free(h);
    }
    assert_eq!(store.errors.load(), 0, "no double free");
    assert_eq!(store.free_count.load(), 200);
    assert_eq!(store.free_blocks().count_ones(), 200);
    assert!((0..200).all(|i| store.block(i).handed.load() == 0), "free blocks hand out nothing");
}

/// Four objects per block, without runs.
struct Four;
impl ClassSpec for Four {
    const TYPE_ID: u8 = 0;
    const OBJECTS_PER_BLOCK: u32 = 4;
    const BLOCK_BYTES: u64 = 4096;
    const NAME: &'static str = "Four";
}

/// One object of `Four` from a lone lane, with the CPU backend's own placement hint cleared, so
/// that only the store's last-block note can steer it.
fn allocate_four(store: &VecStore) -> RawHandle {
    arch::set_place_hint(arch::NO_HINT);
    allocate_in_group::<Four, _, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, false>(store, WarpGroup::solo())
        .expect("memory left")
}

#[test]
fn a_leader_tries_the_noted_block_first_and_notes_the_block_it_found() {
    let store = VecStore::new(16, &[Four::OBJECTS_PER_BLOCK]);
    // Four full blocks, then two objects of each freed: four active blocks with room for two.
    let handles: Vec<RawHandle> = (0..16).map(|_| allocate_four(&store)).collect();
    let mut blocks: Vec<u64> = handles.iter().map(|&h| store.index_of(h)).collect();
    blocks.dedup();
    assert_eq!(blocks.len(), 4, "16 objects fill 4 blocks in order");
    for pair in handles.chunks(4) {
        store.free(pair[0]);
        store.free(pair[1]);
    }
    for &b in &blocks {
        store.last[0].store(b + 1);
        let h = allocate_four(&store);
        assert_eq!(store.index_of(h), b, "the noted block is tried first");
        assert_eq!(store.last[0].load(), b + 1, "a block with room left stays noted");
        let h2 = allocate_four(&store);
        assert_eq!(store.index_of(h2), b);
        assert_eq!(
            store.last[0].load(),
            (b + 1) | NOTE_FULL,
            "a block the allocation filled is noted as full"
        );
        store.free(h);
        store.free(h2);
    }
    // Without a note the leader searches, and notes the block it found.
    store.last[0].store(0);
    let h = allocate_four(&store);
    assert_eq!(store.last[0].load(), store.index_of(h) + 1);
    // A note of a full block sends the leader to the search: the block just found (now with
    // one free slot) filled through the note, then noted again.
    let full = store.index_of(h);
    store.last[0].store(full + 1);
    assert_eq!(store.index_of(allocate_four(&store)), full);
    store.last[0].store(full + 1);
    let elsewhere = allocate_four(&store);
    assert_ne!(store.index_of(elsewhere), full, "a full block hands out nothing");
    assert_eq!(store.last[0].load(), store.index_of(elsewhere) + 1);
    assert_eq!(store.check(), vec![8 + 3]);
}

/// A note of a block that filled up (flagged, or found full when tried) sends the search to the
/// active blocks next to it first: the bottom container of the active bitmap that holds it,
/// before the search from the top, which here would pick one of the other three containers.
#[test]
fn a_full_note_sends_the_search_to_the_blocks_next_to_it() {
    let store = VecStore::new(256, &[Four::OBJECTS_PER_BLOCK]);
    let handles: Vec<RawHandle> = (0..1024).map(|_| allocate_four(&store)).collect();
    assert!((0..256).all(|b| !store.active(0).get(b)), "every block full");
    let in_block = |b: u64| *handles.iter().find(|&&h| store.index_of(h) == b).expect("an object");
    // Every block of the bottom containers 0, 2 and 3 gets room for one, and in container 1
    // only block 75.
    for b in (0..64).chain(128..256).chain([75]) {
        store.free(in_block(b));
    }
    store.last[0].store((70 + 1) | NOTE_FULL);
    let h = allocate_four(&store);
    assert_eq!(store.index_of(h), 75, "the active block next to the noted one");
    assert_eq!(store.last[0].load(), (75 + 1) | NOTE_FULL, "it filled, and is noted as full");
    // A note without the flag whose block turns out full does the same.
    store.free(in_block(80));
    store.last[0].store(70 + 1);
    let h = allocate_four(&store);
    assert_eq!(store.index_of(h), 80, "the active block next to the noted one");
    // With no active block next to it, the search goes on from the top.
    store.last[0].store((70 + 1) | NOTE_FULL);
    let h = allocate_four(&store);
    let b = store.index_of(h);
    assert!(!(64..128).contains(&b), "block {b} of container 1, where none had room");
    assert_eq!(store.last[0].load(), (b + 1) | NOTE_FULL);
    assert_eq!(store.check(), vec![1024 - 192 - 2 + 3]);
}

#[test]
fn an_opened_block_holds_the_lowest_slots_asked_for_and_is_active_while_not_full() {
    let store = VecStore::new(3, &[Four::OBJECTS_PER_BLOCK]);
    let full = open_block::<Four, _>(&store, 4, 0).expect("a free block");
    assert_eq!(store.block(full).objects() & 0xf, 0xf, "every slot an object");
    assert!(store.allocated(0).get(full) && !store.active(0).get(full), "full: not active");
    // Asking for more than a block holds takes the whole block.
    let whole = open_block::<Four, _>(&store, 9, 0).expect("a free block");
    assert_eq!(store.block(whole).objects() & 0xf, 0xf);
    let part = open_block::<Four, _>(&store, 3, 0).expect("a free block");
    assert_eq!(store.block(part).objects() & 0xf, 0b0111, "the lowest three slots");
    assert!(store.active(0).get(part), "a slot left: active");
    assert_eq!(store.block(part).type_id.load(), 0);
    // No block left: `None`, nothing raised, and the slot left is what allocation finds.
    assert_eq!(open_block::<Four, _>(&store, 1, 0), None);
    assert_eq!(store.errors.load(), 0, "running out is the caller's to report");
    assert_eq!(store.index_of(allocate_four(&store)), part);
    assert_eq!(store.check(), vec![12]);
}

/// Two objects per block, a class the blocks of [`Four`] may be reused for.
struct Two;
impl ClassSpec for Two {
    const TYPE_ID: u8 = 1;
    const OBJECTS_PER_BLOCK: u32 = 2;
    const BLOCK_BYTES: u64 = 4096;
    const NAME: &'static str = "Two";
}

/// In a launch that creates one class only and frees none of it (`SOLE`), a block named by a
/// hint (a note) may still be another class's: its type is read with the reservation, and the
/// slots go back as in the paper's order. A block of the class itself is reserved in.
#[test]
fn a_sole_reservation_through_a_hint_checks_the_blocks_class() {
    let store = VecStore::new(4, &[Four::OBJECTS_PER_BLOCK, Two::OBJECTS_PER_BLOCK]);
    let b = open_block::<Two, _>(&store, 1, 0).expect("a free block");
    let before = store.block(b).alloc.load();
    assert!(
        reserve_in::<Four, _, true>(&store, b, 1, 0, false).is_none(),
        "nothing for `Four` in a `Two` block"
    );
    assert_eq!(store.block(b).alloc.load(), before, "the slot went back");
    assert!(store.active(1).get(b), "active again for its own class");
    assert_eq!(store.check(), vec![0, 1]);
    let f = open_block::<Four, _>(&store, 1, 0).expect("a free block");
    let r = reserve_in::<Four, _, true>(&store, f, 1, 0, false).expect("a free slot of `Four`");
    assert_eq!(r.slots.count_ones(), 1);
    assert_eq!(store.check(), vec![2, 1]);
}

/// A free that does not wait for the block's bitmap (`release_slot_unwaited`, in a launch that
/// creates one other class only) clears its slot's bit and nothing else: a block that was full
/// stays out of the active bitmap. A reservation of such a launch (`SOLE`) that fills the block
/// through a hint then clears the active bit without waiting for it to be set (it never will
/// be), and the block is as the paper's order leaves a full block.
#[test]
fn a_sole_reservation_fills_a_block_that_an_unwaited_free_left_inactive() {
    let store = VecStore::new(4, &[Four::OBJECTS_PER_BLOCK, Two::OBJECTS_PER_BLOCK]);
    let b = open_block::<Two, _>(&store, 2, 0).expect("a free block");
    assert_eq!(store.block(b).objects() & 0b11, 0b11, "full");
    assert!(!store.active(1).get(b), "a full block is not active");
    release_slot_unwaited(&store, store.block(b), 1, Two::TYPE_ID);
    assert_eq!(store.block(b).objects() & 0b11, 0b01, "slot 1 freed");
    assert!(!store.active(1).get(b), "the unwaited free left the block inactive");
    assert_eq!(store.errors.load(), 0);
    let r = reserve_in::<Two, _, true>(&store, b, 1, 0, false).expect("slot 1 through the hint");
    assert_eq!((r.slots & 0b11, r.filled_block), (0b10, true));
    assert!(!store.active(1).get(b), "full and not active");
    assert_eq!(store.check(), vec![0, 2]);
}

/// A reservation in a block that another class holds now gives its slots back as that class's:
/// the block's objects and bits as before, active again where the reservation had filled it,
/// and a block that the give-back leaves empty stays allocated and active for its class,
/// counted as stranded, until a free empties it again.
#[test]
fn a_reservation_in_a_block_of_another_class_is_given_back() {
    let store = VecStore::new(4, &[Four::OBJECTS_PER_BLOCK, Two::OBJECTS_PER_BLOCK]);
    let b = open_block::<Two, _>(&store, 1, 0).expect("a free block");
    let before = store.block(b).alloc.load();
    // A leader of `Four` that found block `b` (say through a stale note) takes its last slot.
    assert!(
        reserve_in::<Four, _, false>(&store, b, 1, 0, true).is_none(),
        "nothing for `Four` in a `Two` block"
    );
    assert_eq!(store.block(b).alloc.load(), before, "the slot went back");
    assert!(store.active(1).get(b), "the reservation filled the block; the give-back made it active again");
    assert_eq!(store.stranded[1].load(), 0);
    assert_eq!(store.check(), vec![0, 1]);
    // Now the block's one object is freed between the reservation and the give-back.
    let r = store.block(b).reserve(1, 0).expect("a free slot");
    assert!(r.filled_block);
    store.active(1).clear(b); // as `reserve_in` does for a reservation that fills a block
    let object = RawHandle::new(store.block_addr(b), 0, Two::OBJECTS_PER_BLOCK, Two::TYPE_ID);
    store.free(object);
    assert!(store.allocated(1).get(b), "the reserved slot keeps the block from being freed");
    give_back::<_, true>(&store, store.block(b), b, r.slots, Two::TYPE_ID);
    assert_eq!(store.block(b).objects() & 0b11, 0, "empty");
    assert!(store.allocated(1).get(b) && store.active(1).get(b), "stranded: its class's, active");
    assert_eq!(store.stranded[1].load(), 1);
    assert_eq!(store.check(), vec![0, 0]);
    // Its class allocates there next, and the free that empties it frees it.
    arch::set_place_hint(arch::NO_HINT);
    let h = allocate_in_group::<Two, _, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, false>(&store, WarpGroup::solo())
        .unwrap();
    assert_eq!(store.index_of(h), b);
    store.free(h);
    assert!(store.free_blocks().get(b), "freed");
    assert_eq!(store.free_count.load(), 4);
    assert_eq!(store.check(), vec![0, 0]);
    assert_eq!(store.errors.load(), 0);
}

/// A free in a launch that allocates no object of its class keeps the block it empties: the
/// block stays allocated to its class and active, counted as stranded, so that another class
/// allocating in the same launch cannot take it (here it runs out of memory instead); once
/// the launch is over, `free_empty_block` (the enumeration's) frees it for anyone.
#[test]
fn a_free_that_keeps_its_emptied_block_leaves_it_to_its_class() {
    let store = VecStore::new(2, &[Four::OBJECTS_PER_BLOCK, Two::OBJECTS_PER_BLOCK]);
    arch::set_place_hint(arch::NO_HINT);
    let b = open_block::<Two, _>(&store, 2, 0).expect("a free block");
    assert!(!store.active(1).get(b), "opened full");
    let object = |k| RawHandle::new(store.block_addr(b), k, Two::OBJECTS_PER_BLOCK, Two::TYPE_ID);
    store.free_keeping_block(object(0));
    assert!(store.active(1).get(b), "room again");
    assert_eq!(store.stranded[1].load(), 0, "not empty yet");
    store.free_keeping_block(object(1));
    assert!(store.allocated(1).get(b) && store.active(1).get(b), "kept: its class's, active");
    assert!(!store.free_blocks().get(b), "not free");
    assert_eq!(store.free_count.load(), 1, "the other block only");
    assert_eq!(store.stranded[1].load(), 1);
    assert_eq!(store.check(), vec![0, 0]);
    // `Four` fills the other block and finds no more room.
    let allocate =
        || allocate_in_group::<Four, _, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, false>(&store, WarpGroup::solo());
    let fours: Vec<RawHandle> = (0..4).map(|_| allocate().expect("the free block")).collect();
    assert!(fours.iter().all(|&h| store.index_of(h) != b), "none in the kept block");
    assert_eq!(allocate(), None, "the kept block is not free");
    store.errors.store(0);
    // After the launch: the enumeration frees the empty block.
    free_empty_block(&store, b, Two::TYPE_ID);
    assert!(store.free_blocks().get(b) && !store.allocated(1).get(b) && !store.active(1).get(b));
    assert_eq!((store.block(b).alloc.load(), store.block(b).handed.load()), (u64::MAX, 0), "as a free block");
    assert_eq!(store.check(), vec![4, 0]);
    let h = allocate().expect("the freed block");
    assert_eq!(store.index_of(h), b);
    assert_eq!(store.check(), vec![5, 0]);
}

/// A lane that its group's hand-out skips (the fault that an inconsistent active mask once
/// caused) gets no object and raises `SKIPPED_LANE`, not out of memory; a group served in
/// full raises nothing. Here the lane's rank lies past the group, so the leader (this lane)
/// serves the group's two slots and none of them is its own.
#[test]
fn a_lane_the_hand_out_skips_is_reported_as_an_allocator_fault() {
    let store = VecStore::new(16, &[Four::OBJECTS_PER_BLOCK]);
    arch::set_place_hint(arch::NO_HINT);
    let served = WarpGroup { mask: 0b11, leader: 0, rank: 1, size: 2 };
    let h = allocate_in_group::<Four, _, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, false>(&store, served);
    assert!(h.is_some(), "rank 1 of 2 gets the group's second slot");
    assert_eq!((store.errors.load(), store.misses.load()), (0, 0));

    let skipped = WarpGroup { mask: 0b11, leader: 0, rank: 2, size: 2 };
    let h = allocate_in_group::<Four, _, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, false>(&store, skipped);
    assert_eq!(h, None, "no slot of the group's grant is the skipped lane's");
    assert_eq!(store.errors.load(), crate::errors::SKIPPED_LANE, "an allocator fault, not out of memory");
    assert_eq!(store.misses.load(), 1, "counted as a coalescing miss");
    assert_eq!(store.failed.load(), 0, "not a failed allocation for lack of memory");
}

/// `allocate_each_in_group`: one lane's objects over several grants (blocks of four), in
/// order, each once; then a lane that asks for more than the store holds gets `None` for the
/// rest, after the objects it got, and out of memory is raised once for all of them.
#[test]
fn a_lane_gets_its_objects_over_several_blocks_and_none_past_the_heap() {
    let store = VecStore::new(5, &[Four::OBJECTS_PER_BLOCK]);
    arch::set_place_hint(arch::NO_HINT);
    let mut got = Vec::new();
    let missed =
        allocate_each_in_group::<Four, _, false>(&store, WarpGroup::solo(), 10, |k, h| got.push((k, h)));
    assert_eq!(missed, 0);
    assert_eq!(got.iter().map(|&(k, _)| k).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>(), "k ascending");
    let handles: HashSet<RawHandle> = got.iter().map(|&(_, h)| h.expect("memory left")).collect();
    assert_eq!(handles.len(), 10, "each object once");
    for h in &handles {
        assert_eq!((h.objects_per_block(), h.type_id()), (4, 0));
        assert_ne!(store.block(store.index_of(*h)).objects() & (1 << h.slot()), 0, "an allocated slot");
    }
    let blocks: HashSet<u64> = handles.iter().map(|&h| store.index_of(h)).collect();
    assert_eq!(blocks.len(), 3, "ten objects of four a block");
    assert_eq!(store.errors.load(), 0);

    // 20 slots in all, 10 taken: of 14 more, 10 are made and 4 are not.
    let mut got = Vec::new();
    let missed =
        allocate_each_in_group::<Four, _, false>(&store, WarpGroup::solo(), 14, |k, h| got.push((k, h)));
    assert_eq!(missed, 4);
    assert_eq!(got.iter().map(|&(k, _)| k).collect::<Vec<_>>(), (0..14).collect::<Vec<_>>());
    assert!(
        got[..10].iter().all(|(_, h)| h.is_some()) && got[10..].iter().all(|(_, h)| h.is_none()),
        "{got:?}"
    );
    assert_eq!(store.errors.load(), crate::errors::OUT_OF_MEMORY);
    assert_eq!(store.failed_allocations().load(), 4);
}
