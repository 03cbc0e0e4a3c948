//! The allocator's own kernel: releasing the runs of blocks.

use dynasoar_macros::kernel;

use crate::allocator::release_run_entry;
use crate::arch;
use crate::heap::Heap;
use crate::heap::kernels::InitParams;

/// Release every run of every class (see the allocator's `runs`): the slots reserved for them
/// and not handed out are freed, and so are the blocks that held nothing else. One thread per
/// run entry.
#[kernel(crate = crate, name = "dynasoar_heap_release_runs")]
pub fn heap_release_runs(p: InitParams) {
    // SAFETY: the host launches this on an initialised heap.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let c = heap.config();
    let total = c.num_classes as usize * c.run_slots as usize;
    let mut i = arch::global_thread_id();
    while i < total {
        let class = (i / c.run_slots as usize) as u8;
        release_run_entry(&heap, class, &heap.run_table(class)[i % c.run_slots as usize]);
        i += arch::global_thread_count();
    }
}
