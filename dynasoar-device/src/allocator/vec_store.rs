//! A [`BlockStore`] over vectors of atomics, for the allocator's tests on the CPU and its loom
//! models (`tests/loom.rs`, which see it under `--cfg loom`, with loom's atomics): both drive
//! the allocator's own code through it.

use std::vec;
use std::vec::Vec;

use super::{BlockLayout, BlockStore, release_slot, release_slot_unwaited};
use crate::arch::atomic::{Atomic32, Atomic64};
use crate::bitmap::{Bitmap, BitmapGeometry, init_container};
use crate::block::{BlockHeader, preset_mask};
use crate::handle::RawHandle;

/// `geometry.containers` containers of a bitmap with its first `ones` bits set.
pub fn containers(geometry: &BitmapGeometry, ones: u64) -> Vec<Atomic64> {
    (0..geometry.containers).map(|i| Atomic64::new(init_container(geometry, i, ones))).collect()
}

/// Blocks and bitmaps in vectors. Block `i` "lives" at address `(i + 1) * 4096`.
pub struct VecStore {
    pub geometry: BitmapGeometry,
    pub free: Vec<Atomic64>,
    pub allocated: Vec<Vec<Atomic64>>,
    pub active: Vec<Vec<Atomic64>>,
    pub blocks: Vec<BlockHeader>,
    /// One run entry per class, shared by all threads (as warps sharing an entry would).
    pub runs: Vec<Vec<Atomic64>>,
    /// One last-block note per class, shared by all threads (as warps sharing an entry would).
    pub last: Vec<Atomic64>,
    pub free_count: Atomic64,
    pub failed: Atomic32,
    pub initializing: Atomic32,
    pub starved: Atomic32,
    pub misses: Atomic32,
    /// Per class, blocks that a give-back or a free left empty (see
    /// `BlockStore::stranded_blocks`).
    pub stranded: Vec<Atomic32>,
    pub errors: Atomic32,
    pub objects: Vec<u32>,
}

impl VecStore {
    /// `blocks` free blocks for classes with `objects[c]` objects per block.
    pub fn new(blocks: u64, objects: &[u32]) -> Self {
        let geometry = BitmapGeometry::new(blocks).unwrap();
        VecStore {
            free: containers(&geometry, blocks),
            allocated: objects.iter().map(|_| containers(&geometry, 0)).collect(),
            active: objects.iter().map(|_| containers(&geometry, 0)).collect(),
            blocks: (0..blocks).map(|_| BlockHeader::free()).collect(),
            runs: objects.iter().map(|_| vec![Atomic64::new(0)]).collect(),
            last: objects.iter().map(|_| Atomic64::new(0)).collect(),
            free_count: Atomic64::new(blocks),
            failed: Atomic32::new(0),
            initializing: Atomic32::new(0),
            starved: Atomic32::new(0),
            misses: Atomic32::new(0),
            stranded: objects.iter().map(|_| Atomic32::new(0)).collect(),
            errors: Atomic32::new(0),
            objects: objects.to_vec(),
            geometry,
        }
    }

    /// The index of the block that `h` lies in.
    pub fn index_of(&self, h: RawHandle) -> u64 {
        h.block_addr() / 4096 - 1
    }

    /// Free the object `h`.
    pub fn free(&self, h: RawHandle) {
        self.free_with::<false>(h);
    }

    /// Free the object `h` as in a launch that allocates no object of its class (an emptied
    /// block stays with the class, see `release_slots`).
    pub fn free_keeping_block(&self, h: RawHandle) {
        self.free_with::<true>(h);
    }

    /// Free the object `h` as in a launch that creates objects of one other class only
    /// (`release_slot_unwaited`: the block's active bit and count of empty blocks are left
    /// as they are, see [`reactivate`](Self::reactivate)).
    pub fn free_unwaited(&self, h: RawHandle) {
        release_slot_unwaited(self, &self.blocks[self.index_of(h) as usize], h.slot(), h.type_id());
    }

    /// What an enumeration anew or `heap_reactivate` does for `class` after frees that did not
    /// wait: every allocated block with room active, every empty one counted.
    pub fn reactivate(&self, class: u8) {
        let preset = preset_mask(self.objects[class as usize]);
        for index in 0..self.geometry.bits {
            if self.allocated(class).get(index) {
                let alloc = self.blocks[index as usize].alloc.load();
                if alloc == preset {
                    self.stranded[class as usize].fetch_add(1);
                }
                if alloc != u64::MAX && !self.active(class).get(index) {
                    self.active(class).set(index);
                }
            }
        }
    }

    fn free_with<const KEEP: bool>(&self, h: RawHandle) {
        let index = self.index_of(h);
        release_slot::<_, KEEP>(
            self,
            &self.blocks[index as usize],
            index,
            h.slot(),
            h.type_id(),
            preset_mask(h.objects_per_block()),
        );
    }

    /// Invariants after all threads finished; returns live objects per class. An allocated
    /// block is empty only where a give-back or a free left it so (at most `stranded[c]` such
    /// blocks of class `c`).
    pub fn check(&self) -> Vec<u64> {
        let mut empty = vec![0; self.objects.len()];
        let free = self.free_blocks();
        assert_eq!(free.check_consistent(), Ok(()));
        let mut live = vec![0; self.objects.len()];
        let mut free_blocks = 0;
        for index in 0..self.geometry.bits {
            let owners: Vec<u8> =
                (0..self.objects.len() as u8).filter(|&c| self.allocated(c).get(index)).collect();
            match (free.get(index), owners.as_slice()) {
                (true, []) => {
                    free_blocks += 1;
                    assert_eq!(self.blocks[index as usize].handed.load(), 0, "free block {index} handed");
                }
                (false, [c]) => {
                    let block = &self.blocks[index as usize];
                    assert_eq!(block.type_id.load(), *c as u32, "block {index} type");
                    let preset = preset_mask(self.objects[*c as usize]);
                    let alloc = block.alloc.load();
                    empty[*c as usize] += (alloc == preset) as u32;
                    assert_eq!(alloc & preset, preset);
                    let reserved = !block.handed.load() & !preset;
                    assert_eq!(reserved & !alloc, 0, "block {index}: reserved slots not allocated");
                    assert_eq!(self.active(*c).get(index), alloc != u64::MAX, "block {index} active");
                    live[*c as usize] += (alloc & !reserved & !preset).count_ones() as u64;
                }
                other => panic!("block {index}: {other:?}"),
            }
        }
        assert_eq!(self.free_count.load(), free_blocks);
        for (c, (empty, stranded)) in empty.iter().zip(&self.stranded).enumerate() {
            assert!(
                *empty <= stranded.load(),
                "class {c}: {empty} allocated blocks empty, {} stranded",
                stranded.load()
            );
        }
        live
    }
}

impl BlockStore for VecStore {
    fn free_blocks(&self) -> Bitmap<'_> {
        Bitmap::new(&self.geometry, &self.free)
    }
    fn allocated(&self, class: u8) -> Bitmap<'_> {
        Bitmap::new(&self.geometry, &self.allocated[class as usize])
    }
    fn active(&self, class: u8) -> Bitmap<'_> {
        Bitmap::new(&self.geometry, &self.active[class as usize])
    }
    fn block(&self, index: u64) -> &BlockHeader {
        &self.blocks[index as usize]
    }
    fn block_addr(&self, index: u64) -> u64 {
        (index + 1) * 4096
    }
    fn block_layout(&self) -> BlockLayout {
        BlockLayout { first: 4096, stride: 4096, count: self.blocks.len() as u64 }
    }
    fn block_at_addr(&self, addr: u64) -> &BlockHeader {
        &self.blocks[(addr / 4096 - 1) as usize]
    }
    fn free_count(&self) -> &Atomic64 {
        &self.free_count
    }
    fn failed_allocations(&self) -> &Atomic32 {
        &self.failed
    }
    fn initializing(&self) -> &Atomic32 {
        &self.initializing
    }
    fn starved_leaders(&self) -> &Atomic32 {
        &self.starved
    }
    fn coalescing_misses(&self) -> &Atomic32 {
        &self.misses
    }
    fn stranded_blocks(&self, class: u8) -> &Atomic32 {
        &self.stranded[class as usize]
    }
    fn num_classes(&self) -> u8 {
        self.objects.len() as u8
    }
    fn runs_enabled(&self) -> bool {
        true
    }
    fn run_entry(&self, class: u8) -> &Atomic64 {
        &self.runs[class as usize][0]
    }
    fn run_table(&self, class: u8) -> &[Atomic64] {
        &self.runs[class as usize]
    }
    fn last_block(&self, class: u8) -> Option<&Atomic64> {
        Some(&self.last[class as usize])
    }
    fn class_objects(&self, class: u8) -> u32 {
        self.objects[class as usize]
    }
    fn raise(&self, error: u32) {
        self.errors.fetch_or(error);
    }
}
