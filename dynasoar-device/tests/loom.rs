//! loom models of the bitmap and block races (run with `RUSTFLAGS="--cfg loom"`; see
//! README's "Tests"). They drive the allocator's own code through a `BlockStore` whose
//! bitmaps and block headers are vectors of loom atomics, and explore the interleavings of
//! 2-3 threads (bounded preemptions) under the same relaxed-plus-fences ordering as the GPU.
#![cfg(loom)]

use std::sync::Arc;

use dynasoar_device::allocator::vec_store::{VecStore as Store, containers};
use dynasoar_device::allocator::{
    BlockStore, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, ROLLBACKS, allocate_in_group, release_runs,
};
use dynasoar_device::arch::WarpGroup;
use dynasoar_device::bitmap::{Bitmap, BitmapGeometry};
use dynasoar_device::{ClassSpec, RawHandle};
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(f);
}

/// Class 0: two objects per block.
struct A;
impl ClassSpec for A {
    const TYPE_ID: u8 = 0;
    const OBJECTS_PER_BLOCK: u32 = 2;
    const BLOCK_BYTES: u64 = 4096;
    const NAME: &'static str = "A";
}

/// Class 1: two objects per block.
struct B;
impl ClassSpec for B {
    const TYPE_ID: u8 = 1;
    const OBJECTS_PER_BLOCK: u32 = 2;
    const BLOCK_BYTES: u64 = 4096;
    const NAME: &'static str = "B";
}

/// Class 0 of heaps with runs: two objects per block, so that a lone thread takes half a block
/// and allocates from runs.
struct R;
impl ClassSpec for R {
    const TYPE_ID: u8 = 0;
    const OBJECTS_PER_BLOCK: u32 = 2;
    const BLOCK_BYTES: u64 = 4096;
    const NAME: &'static str = "R";
    const OWNS_BLOCKS: bool = true;
}

fn alloc<C: ClassSpec>(store: &Store) -> Option<RawHandle> {
    allocate_in_group::<C, Store, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, false>(store, WarpGroup::current())
}

/// An allocation in a launch that creates objects of `C` only and frees none of them.
fn alloc_sole<C: ClassSpec>(store: &Store) -> Option<RawHandle> {
    allocate_in_group::<C, Store, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, true>(store, WarpGroup::current())
}

#[test]
fn racing_set_and_clear_keep_container_and_nested_bit_consistent() {
    model(|| {
        let geometry = BitmapGeometry::new(128).unwrap();
        let storage = Arc::new(containers(&geometry, 0));
        // Two threads toggle bits of the same container, so both race on its bit one level
        // up; a third works on the other container.
        let t1 = {
            let s = storage.clone();
            thread::spawn(move || {
                let b = Bitmap::new(&geometry, &s);
                b.set(0);
                b.clear(0);
            })
        };
        let t2 = {
            let s = storage.clone();
            thread::spawn(move || {
                let b = Bitmap::new(&geometry, &s);
                b.set(1);
                b.clear(1);
                b.set(1);
            })
        };
        let b = Bitmap::new(&geometry, &storage);
        b.set(64);
        assert!(b.try_clear(64));
        t1.join().unwrap();
        t2.join().unwrap();
        assert_eq!(b.check_consistent(), Ok(()));
        assert!(!b.get(0) && b.get(1) && !b.get(64));
        assert_eq!(b.try_find_set(0), Some(1));
    });
}

#[test]
fn racing_reserve_free_and_invalidate_never_share_or_lose_a_slot() {
    model(|| {
        let store = Arc::new(Store::new(2, &[2]));
        // One live object: its block is active (one free slot).
        let first = alloc::<A>(&store).unwrap();
        // T1 frees it (the block empties and is invalidated and freed, or the invalidation is
        // rolled back because T2 got in first); T2 allocates meanwhile.
        let t1 = {
            let s = store.clone();
            thread::spawn(move || s.free(first))
        };
        let t2 = {
            let s = store.clone();
            thread::spawn(move || alloc::<A>(&s))
        };
        t1.join().unwrap();
        let second = t2.join().unwrap().expect("a free slot existed throughout");
        assert_eq!(store.errors.load(), 0);
        let live = store.check();
        assert_eq!(live, vec![1], "exactly T2's object is live");
        let index = store.index_of(second);
        assert!(store.blocks[index as usize].alloc.load() & (1 << second.slot()) != 0);
        // Freeing it leaves an empty heap.
        store.free(second);
        assert_eq!(store.check(), vec![0]);
        assert_eq!(store.free_count.load(), 2);
    });
}

#[test]
fn two_allocators_never_get_the_same_slot() {
    model(|| {
        let store = Arc::new(Store::new(2, &[2]));
        let spawn = |s: Arc<Store>| thread::spawn(move || alloc::<A>(&s).unwrap());
        let (t1, t2) = (spawn(store.clone()), spawn(store.clone()));
        let mine = alloc::<A>(&store).unwrap();
        let (h1, h2) = (t1.join().unwrap(), t2.join().unwrap());
        assert!(h1 != h2 && h1 != mine && h2 != mine, "{h1:?} {h2:?} {mine:?}");
        assert_eq!(store.check(), vec![3]);
    });
}

#[test]
fn block_reused_for_another_class_during_allocation_is_rolled_back() {
    ROLLBACKS.store(0, std::sync::atomic::Ordering::Relaxed);
    model(|| {
        // Block 0: one A object (active for A). Block 1: two B objects (full, no active B
        // block). Block 2: free.
        let store = Arc::new(Store::new(3, &[2, 2]));
        let a = alloc::<A>(&store).unwrap();
        let _b1 = alloc::<B>(&store).unwrap();
        let _b2 = alloc::<B>(&store).unwrap();
        // T1 allocates an A (it may find block 0 through the active bitmap). T2 frees the A
        // object, which frees block 0, then allocates a B, which needs a new block and may
        // re-initialise block 0 as a B block under T1's feet.
        let t1 = {
            let s = store.clone();
            thread::spawn(move || alloc::<A>(&s))
        };
        let t2 = {
            let s = store.clone();
            thread::spawn(move || {
                s.free(a);
                alloc::<B>(&s)
            })
        };
        let got_a = t1.join().unwrap();
        let got_b = t2.join().unwrap().expect("a block was free for the B");
        assert_eq!(got_b.type_id(), 1);
        assert_eq!(store.blocks[store.index_of(got_b) as usize].type_id.load(), 1);
        if let Some(h) = got_a {
            assert_eq!(h.type_id(), 0);
            assert_eq!(store.blocks[store.index_of(h) as usize].type_id.load(), 0, "A object in a B block");
        }
        let live = store.check();
        assert_eq!(live[1], 3);
        assert_eq!(live[0], got_a.is_some() as u64);
    });
    assert!(
        ROLLBACKS.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "no explored interleaving reached the rollback"
    );
}

#[test]
fn run_slot_taken_while_the_run_is_released_and_its_block_freed_is_handed_out_once() {
    model(|| {
        let store = Arc::new(Store::new(2, &[2]));
        // A run of one block: slot 0 handed out, slot 1 reserved.
        let first = alloc::<R>(&store).unwrap();
        let index = store.index_of(first);
        assert_eq!(store.blocks[index as usize].alloc.load(), u64::MAX, "a run's blocks are full");
        // T1 takes the reserved slot (or opens a new run if T2 released it first), T2 releases
        // the runs as when blocks run out, and this thread frees the first object meanwhile,
        // which frees the block if the release came first.
        let t1 = {
            let s = store.clone();
            thread::spawn(move || alloc::<R>(&s).unwrap())
        };
        let t2 = {
            let s = store.clone();
            thread::spawn(move || release_runs(&*s))
        };
        store.free(first);
        let second = t1.join().unwrap();
        t2.join().unwrap();
        // (`second` may be `first`'s slot again, freed meanwhile.)
        assert_eq!(store.errors.load(), 0);
        assert_eq!(store.check(), vec![1]);
        store.free(second);
        release_runs(&*store);
        assert_eq!(store.check(), vec![0]);
        assert_eq!(store.free_count.load(), 2, "every block free again");
    });
}

#[test]
fn runs_opened_at_once_on_one_entry_lose_no_slot() {
    model(|| {
        let store = Arc::new(Store::new(3, &[2]));
        // Exhaust a first run, so that both threads below find it exhausted and open runs: a
        // second swap displaces the first run, whose reserved slots must be released, not
        // lost; or one thread finds no block left and releases the other's run.
        let h = [alloc::<R>(&store).unwrap(), alloc::<R>(&store).unwrap()];
        let spawn = |s: Arc<Store>| thread::spawn(move || alloc::<R>(&s).unwrap());
        let (t1, t2) = (spawn(store.clone()), spawn(store.clone()));
        let (h1, h2) = (t1.join().unwrap(), t2.join().unwrap());
        assert!(h1 != h2 && !h.contains(&h1) && !h.contains(&h2), "{h:?} {h1:?} {h2:?}");
        assert_eq!(store.errors.load(), 0);
        assert_eq!(store.check(), vec![4]);
        for x in h.into_iter().chain([h1, h2]) {
            store.free(x);
        }
        release_runs(&*store);
        assert_eq!(store.check(), vec![0]);
        assert_eq!(store.free_count.load(), 3, "every block free again");
    });
}

#[test]
fn sole_allocations_take_no_slot_of_another_class() {
    ROLLBACKS.store(0, std::sync::atomic::Ordering::Relaxed);
    model(|| {
        // An earlier launch: block 0 holds one B object and one free slot, and A's last-block
        // note still names it (as a note left from before the block changed class does). Block
        // 1 holds one A object (active for A); block 2 is free.
        let store = Arc::new(Store::new(3, &[2, 2]));
        let b = alloc::<B>(&store).unwrap();
        let a = alloc::<A>(&store).unwrap();
        let b_block = store.index_of(b);
        assert_ne!(store.index_of(a), b_block);
        store.last[0].store(b_block + 1);
        // This launch creates A only and frees B only: T1 frees the B object as such a launch
        // does, without waiting for the bitmap (its emptied block stays B's), T2 and this thread
        // allocate an A each, from the note, the active bitmap or a new block.
        let t1 = {
            let s = store.clone();
            thread::spawn(move || s.free_unwaited(b))
        };
        let t2 = {
            let s = store.clone();
            thread::spawn(move || alloc_sole::<A>(&s).unwrap())
        };
        let mine = alloc_sole::<A>(&store).unwrap();
        t1.join().unwrap();
        let theirs = t2.join().unwrap();
        assert_ne!(mine, theirs);
        for h in [a, mine, theirs] {
            assert_eq!(h.type_id(), 0);
            assert_eq!(store.blocks[store.index_of(h) as usize].type_id.load(), 0, "A object in a B block");
        }
        assert_eq!(store.errors.load(), 0);
        // B's next listing (or the host's reactivation) makes its bitmaps exact.
        store.reactivate(1);
        assert_eq!(store.check(), vec![3, 0]);
    });
    assert!(
        ROLLBACKS.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "no explored interleaving reserved in the B block through the note"
    );
}

/// Two allocations of a launch that creates A only fill a block that an unwaited free of an
/// earlier such launch gave room without making it active: each clears the block's active bit
/// without waiting (`try_clear`), neither waits for good, and no slot is handed out twice.
#[test]
fn sole_allocations_fill_a_block_an_unwaited_free_left_inactive() {
    model(|| {
        let store = Arc::new(Store::new(2, &[2, 2]));
        let first = alloc::<A>(&store).unwrap();
        let second = alloc::<A>(&store).unwrap();
        let block = store.index_of(first);
        assert_eq!(store.index_of(second), block, "one full block of A");
        store.free_unwaited(first);
        store.free_unwaited(second);
        assert!(!store.active(0).get(block), "left inactive");
        store.last[0].store(block + 1);
        let t = {
            let s = store.clone();
            thread::spawn(move || alloc_sole::<A>(&s).unwrap())
        };
        let mine = alloc_sole::<A>(&store).unwrap();
        let theirs = t.join().unwrap();
        assert_ne!(mine, theirs);
        assert_eq!(store.errors.load(), 0);
        store.reactivate(0);
        assert_eq!(store.check(), vec![2, 0]);
    });
}
