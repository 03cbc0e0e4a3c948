//! Host side of the allocator storms: drive rounds of random allocation and freeing, then check
//! the heap and the handles against each other.

use std::collections::HashSet;

use dynasoar::RawHandle;
use dynasoar::host::{Buffer, DeviceHeap, Executor, Grid, HeapClass, Result};
use dynasoar_models::storm::{BLOCK_BYTES, CLASSES, STORM_FREE_ALL, STORM_ROUND, StormParams, expected_tag};

/// A storm: a heap of the three storm classes and one handle slot per thread.
pub struct Storm {
    pub heap: DeviceHeap,
    handles: Buffer<u64>,
    corrupted: Buffer<u64>,
    threads: u32,
    seed: u64,
}

/// What a check of a storm found (when it found nothing wrong).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StormCheck {
    pub live_objects: u64,
    pub free_blocks: u64,
    pub allocated_blocks: u64,
    /// Slots that runs hold in reserve.
    pub reserved_slots: u64,
    /// Allocated blocks without objects, stranded by the allocator's give-back (rare races;
    /// counted in `allocated_blocks` too).
    pub empty_blocks: u64,
}

impl Storm {
    pub fn new(exec: &Executor, heap_bytes: u64, threads: u32, seed: u64) -> Result<Self> {
        let classes: Vec<HeapClass> =
            CLASSES.iter().map(|&(name, objects_per_block)| HeapClass { name, objects_per_block }).collect();
        Ok(Storm {
            heap: DeviceHeap::new(exec, heap_bytes, BLOCK_BYTES, &classes)?,
            handles: exec.alloc_zeroed(threads as usize)?,
            corrupted: exec.alloc_zeroed(1)?,
            threads,
            seed,
        })
    }

    fn params(&self, round: u32, alloc_per_256: u32, free_per_256: u32) -> StormParams {
        StormParams {
            heap: self.heap.ptr(),
            handles: self.handles.ptr(),
            threads: self.threads,
            round,
            seed: self.seed,
            alloc_per_256,
            free_per_256,
            corrupted: self.corrupted.ptr(),
        }
    }

    fn grid(&self) -> Grid {
        Grid::for_elements(self.threads as usize, 256)
    }

    /// One round: threads without an object allocate one with chance `alloc_per_256`/256,
    /// threads with one free it with chance `free_per_256`/256.
    pub fn round(&self, exec: &Executor, round: u32, alloc_per_256: u32, free_per_256: u32) -> Result<()> {
        exec.launch(&STORM_ROUND, self.grid(), self.params(round, alloc_per_256, free_per_256))
    }

    /// Every thread frees its object; then the runs are released, so that the heap has every
    /// block free again.
    pub fn free_all(&self, exec: &Executor) -> Result<()> {
        exec.launch(&STORM_FREE_ALL, self.grid(), self.params(0, 0, 0))?;
        self.heap.release_runs(exec)
    }

    /// Device errors raised since the last call (out of memory, double free).
    pub fn take_errors(&self, exec: &Executor) -> Result<()> {
        self.heap.take_errors(exec, &[STORM_ROUND.name(), STORM_FREE_ALL.name()])
    }

    /// Check, with no kernel running: the heap's invariants hold; no slot is held by two
    /// threads; every held handle names a live object carrying its owner's tag; and the heap
    /// holds exactly the held objects.
    pub fn check(&self, exec: &Executor) -> std::result::Result<StormCheck, String> {
        let err = |e: dynasoar::host::Error| e.to_string();
        let snapshot = self.heap.snapshot(exec).map_err(err)?;
        let summary = snapshot.check()?;
        let corrupted = exec.read_all(&self.corrupted).map_err(err)?[0];
        if corrupted != 0 {
            return Err(format!("{corrupted} objects carried another thread's tag when freed"));
        }
        let handles = exec.read_all(&self.handles).map_err(err)?;
        let mut seen = HashSet::new();
        for (thread, &h) in handles.iter().enumerate() {
            if h == 0 {
                continue;
            }
            let handle = RawHandle(h);
            if !seen.insert(h) {
                return Err(format!("handle {h:#x} held by two threads (one is {thread})"));
            }
            if !snapshot.is_live(handle) {
                return Err(format!("thread {thread} holds {h:#x}, which is not a live object"));
            }
            let tag = snapshot.object_word(handle, 0);
            if tag != expected_tag(thread as u64, handle) {
                return Err(format!("thread {thread}'s object {h:#x} has tag {tag:#x}"));
            }
        }
        let live: u64 = summary.classes.iter().map(|c| c.1).sum();
        if live != seen.len() as u64 {
            return Err(format!("the heap holds {live} objects, the threads {}", seen.len()));
        }
        for class in 0..CLASSES.len() as u8 {
            for h in snapshot.live_objects(class) {
                if !seen.contains(&h.0) {
                    return Err(format!("live object {:#x} of class {class} is held by no thread", h.0));
                }
            }
        }
        Ok(StormCheck {
            live_objects: live,
            free_blocks: summary.free_blocks,
            allocated_blocks: summary.classes.iter().map(|c| c.0).sum(),
            reserved_slots: summary.reserved_slots,
            empty_blocks: summary.empty_blocks,
        })
    }
}
