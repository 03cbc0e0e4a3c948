//! Run grants of many slots at once, on the CPU. The storms' lone CPU lanes take one slot per
//! request; here a "leader" takes up to a warp's worth, so grants span blocks as on the GPU.

use std::collections::HashSet;
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
