//! The compaction before each `parallel_do` on an AOS store (the paper's `parallel_do` helper):
//! three launches over all classes at once, each relying on the previous one having finished.
//!
//! 1. [`aos_mark`]: stash each class's current list, its length and its deletions; put the
//!    deleted addresses in the hash set (a second free of one address is a double free).
//! 2. [`aos_filter`]: copy the entries of the current list that are not in the set to the other
//!    list (order is not kept, as the paper allows), with warp-aggregated appends.
//! 3. [`aos_release`]: give the deleted objects back to the allocator, clear the old list and
//!    the set, and switch each class to its compacted list; set the number of objects the next
//!    do-all visits.
//!
//! A class without deletions is not copied: only its launch count moves on.

use dynasoar_macros::kernel;

use super::{AosHeader, AosStore, Insert};
use dynasoar_device::arch::{self, WarpGroup};
use dynasoar_device::handle::RawHandle;
use dynasoar_device::{DevPtr, Plain, errors};

/// Parameters of the compaction kernels.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AosParams {
    pub store: DevPtr<AosHeader>,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for AosParams {}

fn store(p: AosParams) -> AosStore {
    // SAFETY: the host launches the compaction on a store it created, with nothing else running.
    unsafe { AosStore::from_ptr(p.store.as_ptr()) }
}

/// Deletions stashed for this compaction, over all classes.
fn stashed_deletions(store: &AosStore) -> u64 {
    (0..store.num_classes()).map(|c| store.class(c as u8).from_deleted().load() as u64).sum()
}

/// Step 1 (see the module docs).
#[kernel(crate = dynasoar_device, name = "dynasoar_aos_mark")]
pub fn aos_mark(p: AosParams) {
    let store = store(p);
    let (thread, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
    let mut deletions = 0;
    for c in 0..store.num_classes() {
        let table = store.class(c as u8);
        deletions += table.used(table.deleted_count());
    }
    let set = store.deleted_set(deletions);
    for c in 0..store.num_classes() {
        let table = store.class(c as u8);
        let list = table.current().load();
        let deleted = table.used(table.deleted_count());
        if thread == 0 {
            table.from().store(list);
            table.from_count().store(table.used(table.counts(list)) as u32);
            table.from_deleted().store(deleted as u32);
        }
        let mut i = thread;
        while i < deleted {
            let entry = table.deleted_entry(i);
            // SAFETY: written by `free` in an earlier launch; this thread owns entry `i` now.
            let key = unsafe { entry.read() };
            let duplicate = match set.insert(key) {
                Insert::Added => false,
                Insert::Present => {
                    store.raise(errors::DOUBLE_FREE);
                    true
                }
                Insert::Full => {
                    store.raise(errors::TABLE_FULL);
                    true
                }
            };
            if duplicate {
                // SAFETY: as above; the release step skips zero entries.
                unsafe { entry.write(0) };
            }
            i += threads;
        }
    }
}

/// Step 2 (see the module docs).
#[kernel(crate = dynasoar_device, name = "dynasoar_aos_filter")]
pub fn aos_filter(p: AosParams) {
    let store = store(p);
    let deletions = stashed_deletions(&store);
    if deletions == 0 {
        return;
    }
    let set = store.deleted_set(deletions);
    let (thread, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
    for c in 0..store.num_classes() {
        let table = store.class(c as u8);
        if table.from_deleted().load() == 0 {
            continue;
        }
        let from = table.from().load();
        let n = table.from_count().load() as u64;
        let target = table.counts(from ^ 1);
        let mut i = thread;
        while i < n {
            // SAFETY: entries below the stashed count were written by earlier launches.
            let entry = unsafe { table.list_entry(from, i).read() };
            let keep = entry != 0 && !set.contains(entry);
            if keep {
                // Grouped by class: lanes that finished this class early can meet lanes still
                // on the previous one here (seen on an H200: holes in one class's compacted
                // list, as its counter also counted the other class's entries).
                let at = WarpGroup::current_with_key(c).fetch_add_one_u32(target) as u64;
                // SAFETY: the compacted list has room for every kept entry (at most `n`, which
                // is at most the capacity), and entry `at` is this thread's.
                unsafe { table.list_entry(from ^ 1, at).write(entry) };
            }
            i += threads;
        }
    }
}

/// Step 3 (see the module docs).
#[kernel(crate = dynasoar_device, name = "dynasoar_aos_release")]
pub fn aos_release(p: AosParams) {
    let store = store(p);
    let deletions = stashed_deletions(&store);
    let (thread, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
    let malloc = store.malloc();
    for c in 0..store.num_classes() {
        let table = store.class(c as u8);
        let deleted = table.from_deleted().load() as u64;
        if deleted == 0 {
            if thread == 0 {
                let list = table.current().load();
                table.launch_count().store(table.used(table.counts(list)) as u32);
            }
            continue;
        }
        let from = table.from().load();
        let mut i = thread;
        while i < deleted {
            // SAFETY: entries below the stash were written by `free` (or zeroed by the mark).
            let handle = RawHandle(unsafe { table.deleted_entry(i).read() });
            if !handle.is_null() {
                // SAFETY: deleted handles name objects `make_new` of this store allocated; the
                // mark zeroed repeats, so each is given back once per compaction. (A handle
                // freed again after a compaction released it is a use after free in the
                // model, as in C; allocators that can tell raise INVALID_FREE.)
                unsafe { malloc.free(handle.aos_addr() as usize as *mut u8) };
            }
            i += threads;
        }
        let n = table.from_count().load() as u64;
        let mut i = thread;
        while i < n {
            // SAFETY: the old list is no longer read by anyone; cleared so that the entries a
            // later append reserves read as empty until written.
            unsafe { table.list_entry(from, i).write(0) };
            i += threads;
        }
        if thread == 0 {
            table.counts(from).store(0);
            table.deleted_count().store(0);
            table.current().store(from ^ 1);
            table.launch_count().store(table.used(table.counts(from ^ 1)) as u32);
        }
    }
    if deletions != 0 {
        store.deleted_set(deletions).clear(thread, threads);
    }
}

/// Give every object of every class back to the allocator (a reset of the store; the host then
/// empties the tables). Objects freed since the last compaction are in the lists too.
#[kernel(crate = dynasoar_device, name = "dynasoar_aos_clear")]
pub fn aos_clear(p: AosParams) {
    let store = store(p);
    let (thread, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
    let malloc = store.malloc();
    for c in 0..store.num_classes() {
        let table = store.class(c as u8);
        let list = table.current().load();
        let n = table.used(table.counts(list));
        let mut i = thread;
        while i < n {
            // SAFETY: entries below the count were written by earlier launches.
            let handle = RawHandle(unsafe { table.list_entry(list, i).read() });
            if !handle.is_null() {
                // SAFETY: every listed entry is a live object `make_new` of this store
                // allocated, and the host empties the lists after this reset.
                unsafe { malloc.free(handle.aos_addr() as usize as *mut u8) };
            }
            i += threads;
        }
    }
}
