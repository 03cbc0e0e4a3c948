//! The AOS object store: objects allocated one by one from a general-purpose allocator
//! ([`crate::malloc`]) in array-of-structures layout, with the `parallel_do` helper of the
//! DynaSOAr paper (`003_...` section 7, "Parallel Do-All for Other Allocators"): per class, an
//! array of pointers to the allocated objects and one of deleted objects; before each do-all,
//! deleted pointers are removed from the allocated array, which is compacted.
//!
//! It lets every app run on every allocator (the paper's Figure 10) through the same model code:
//! [`AosStore`] implements the core's [`ObjectStore`], which `Device::make_new`, `free`,
//! `device_do` and the do-all kernels go through, and object handles address fields in place
//! ([`RawHandle::aos`]).
//!
//! ```text
//! header: config (written by the host), errors, one table per class:
//!   lists[2]   pointer arrays: `current` holds the objects; the other is the compaction target
//!   deleted    objects freed since the last compaction (given back to the allocator then)
//!   counts[2], deleted_count, launch_count (objects the next do-all visits), compaction stash
//! hash set     the deleted objects' addresses during a compaction
//! ```
//!
//! Freeing is deferred to the compaction: the memory of an object freed during a kernel stays
//! valid until the next `parallel_do` (so a do-all may still read a neighbour another thread
//! freed), and no address can be in the allocated array twice.

// Not in the BitmapAlloc PTX build, whose store has no tables to compact.
#[cfg(any(not(target_arch = "nvptx64"), not(dynasoar_bitmap_alloc)))]
pub mod kernels;

use crate::malloc::{AnyMalloc, Region, RegionHeader};
use dynasoar_device::arch::atomic::{Atomic32, Atomic64};
use dynasoar_device::arch::{self, WarpGroup};
use dynasoar_device::errors;
use dynasoar_device::handle::RawHandle;
use dynasoar_device::{ClassShape, ClassSpec, Concrete, Listing, ObjectStore};
use dynasoar_device::{Plain, heap::MAX_CLASSES};

/// Marks an AOS store's header (a SOA heap's header starts with `heap::HEAP_MAGIC`).
pub const AOS_MAGIC: u64 = 0x414f_535f_7374_6f72; // "AOS_stor"

/// One class's tables. The first fields are written by the host and never change; the rest
/// is state, accessed only through the atomic accessors below.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AosClass {
    /// Addresses of the two pointer arrays.
    pub lists: [u64; 2],
    /// Address of the array of deleted objects.
    pub deleted: u64,
    /// Entries of each of the three arrays.
    pub capacity: u64,
    /// Bytes of an object (its class's value).
    pub size: u32,
    /// Which of `lists` holds the objects.
    pub current: u32,
    /// Entries used in each of `lists`.
    pub counts: [u32; 2],
    /// Entries used in `deleted`.
    pub deleted_count: u32,
    /// Objects the next do-all over the class visits (the first entries of the current list).
    pub launch_count: u32,
    /// During a compaction: the list compacted from, its length and the deletions (stashed by
    /// the first kernel so the others read stable values while the last one moves on).
    pub from: u32,
    pub from_count: u32,
    pub from_deleted: u32,
    pub _reserved: u32,
}

/// The store's header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AosHeader {
    pub magic: u64,
    /// Address of the general-purpose allocator's region.
    pub region: u64,
    /// Address of the hash set used by compactions, and its size in entries (a power of two
    /// at least twice the number of deletions it must hold).
    pub hash: u64,
    pub hash_capacity: u64,
    pub num_classes: u32,
    /// [`errors`] bits (atomic).
    pub errors: u32,
    /// Objects that could not be created (atomic).
    pub failed: u32,
    pub _reserved: [u32; 5],
    pub classes: [AosClass; MAX_CLASSES],
}

// SAFETY: `repr(C)` integers.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for AosClass {}
// SAFETY: `repr(C)` integers.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for AosHeader {}

/// A store as device code sees it.
#[derive(Clone, Copy, Debug)]
pub struct AosStore {
    header: *mut AosHeader,
}

/// The word at `ptr` as an atomic.
///
/// # Safety
/// `ptr` is a live, aligned word of the store that is only accessed atomically while kernels run.
#[inline(always)]
unsafe fn atomic32<'a>(ptr: *mut u32) -> &'a Atomic32 {
    // SAFETY: the caller's contract.
    unsafe { Atomic32::from_ptr(ptr) }
}

/// A class's tables.
#[derive(Clone, Copy, Debug)]
pub struct ClassTable {
    table: *mut AosClass,
}

macro_rules! state_word {
    ($(#[$doc:meta])* $name:ident $(, $i:ident)?) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(&self $(, $i: u32)?) -> &Atomic32 {
            // SAFETY: a state word of a live table, only accessed atomically.
            unsafe { atomic32(core::ptr::addr_of_mut!((*self.table).$name)$(.cast::<u32>().add(($i & 1) as usize))?) }
        }
    };
}

impl ClassTable {
    #[inline(always)]
    fn config(&self) -> &AosClass {
        // SAFETY: the table is live; the fields read through this are never written while
        // kernels run.
        unsafe { &*self.table }
    }

    state_word!(
        /// Which list holds the objects.
        current
    );
    state_word!(
        /// Entries used in list `i`.
        counts, i
    );
    state_word!(deleted_count);
    state_word!(launch_count);
    state_word!(from);
    state_word!(from_count);
    state_word!(from_deleted);

    #[inline(always)]
    pub fn capacity(&self) -> u64 {
        self.config().capacity
    }

    /// Entry `i` of list `which`.
    #[inline(always)]
    pub fn list_entry(&self, which: u32, i: u64) -> *mut u64 {
        (self.config().lists[(which & 1) as usize] as usize as *mut u64).wrapping_add(i as usize)
    }

    /// Entry `i` of the deleted array.
    #[inline(always)]
    pub fn deleted_entry(&self, i: u64) -> *mut u64 {
        (self.config().deleted as usize as *mut u64).wrapping_add(i as usize)
    }

    /// Entries in use of a counter, bounded by the capacity (a counter goes past it when the
    /// table is full: those entries were never written).
    #[inline(always)]
    pub fn used(&self, counter: &Atomic32) -> u64 {
        (counter.load() as u64).min(self.capacity())
    }
}

impl AosStore {
    /// The store whose header is at `header`.
    ///
    /// # Safety
    /// `header` is an AOS store the host created, alive while the value is used.
    #[inline(always)]
    pub unsafe fn from_ptr(header: *mut AosHeader) -> Self {
        AosStore { header }
    }

    #[inline(always)]
    fn header(&self) -> &AosHeader {
        // SAFETY: `from_ptr`'s contract; only host-written, unchanging fields are read through
        // this reference.
        unsafe { &*self.header }
    }

    #[inline(always)]
    pub fn num_classes(&self) -> u32 {
        self.header().num_classes
    }

    /// The tables of class `id`.
    #[inline(always)]
    pub fn class(&self, id: u8) -> ClassTable {
        // SAFETY: in bounds: `id & 63 < MAX_CLASSES`.
        ClassTable { table: unsafe { core::ptr::addr_of_mut!((*self.header).classes[(id & 63) as usize]) } }
    }

    /// The general-purpose allocator the objects come from.
    #[inline(always)]
    pub fn malloc(&self) -> AnyMalloc {
        // SAFETY: the host created and initialised the region before any kernel.
        unsafe { AnyMalloc::attach(Region::from_header(self.header().region as usize as *mut RegionHeader)) }
    }

    /// Raise [`errors`] bits for the host to report.
    #[inline(always)]
    pub fn raise(&self, bits: u32) {
        // SAFETY: the errors word, only accessed atomically.
        unsafe { atomic32(core::ptr::addr_of_mut!((*self.header).errors)) }.fetch_or(bits);
    }

    #[inline(always)]
    fn count_failure(&self) {
        // SAFETY: the failure count, only accessed atomically.
        unsafe { atomic32(core::ptr::addr_of_mut!((*self.header).failed)) }.fetch_add(1);
    }

    /// The hash set of a compaction with `deletions` deleted objects.
    #[inline(always)]
    fn deleted_set(&self, deletions: u64) -> PtrSet {
        let h = self.header();
        let entries = (2 * deletions).next_power_of_two().clamp(2, h.hash_capacity.max(2));
        PtrSet { table: h.hash as usize as *mut u64, mask: entries - 1 }
    }

    /// Create an object of class `T` holding `value`: its memory from the allocator, its
    /// address appended to the class's current list. `None` if the allocator or the table is
    /// out of room (raised for the host to report).
    #[inline]
    pub fn make_new<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        let ptr = self.malloc().malloc(core::mem::size_of::<T>() as u32);
        if ptr.is_null() {
            self.raise(errors::OUT_OF_MEMORY);
            self.count_failure();
            return None;
        }
        let raw = RawHandle::aos(ptr as u64, T::TYPE_ID);
        // SAFETY: fresh memory for one `T`, owned by this thread.
        unsafe { T::store(raw, value) };
        let table = self.class(T::TYPE_ID);
        let list = table.current().load();
        // Grouped by class: lanes of different `make_new::<T>` sites can meet here.
        let at = WarpGroup::current_with_key(T::TYPE_ID as u32).fetch_add_one_u32(table.counts(list)) as u64;
        if at >= table.capacity() {
            self.raise(errors::TABLE_FULL);
            self.count_failure();
            // SAFETY: `ptr` is the block this call allocated, never published.
            unsafe { self.malloc().free(ptr) };
            return None;
        }
        // Release: the object's fields before its entry, for `device_do` in this kernel.
        arch::fence();
        // SAFETY: entry `at` was reserved by this thread, inside the list; read atomically by
        // `device_do` in this launch and plainly only in later launches.
        unsafe { Atomic64::from_ptr(table.list_entry(list, at)) }.store(raw.0);
        Some(raw)
    }

    /// Record `raw` as deleted; its memory goes back to the allocator at the next compaction.
    #[inline]
    pub fn free(&self, raw: RawHandle) {
        if raw.is_null() {
            self.raise(errors::NULL_HANDLE);
            return;
        }
        let table = self.class(raw.type_id());
        // Grouped by class: the lanes here may free objects of different classes (e.g. a shark
        // freeing itself and one freeing its prey), whose deletions go to different tables.
        let at =
            WarpGroup::current_with_key(raw.type_id() as u32).fetch_add_one_u32(table.deleted_count()) as u64;
        if at >= table.capacity() {
            self.raise(errors::TABLE_FULL);
            return;
        }
        // SAFETY: entry `at` was reserved by this thread; read only by later launches. The
        // handle, not just the address: the mark compares it with the list's entries.
        unsafe { table.deleted_entry(at).write(raw.0) };
    }

    /// Call `f` on every object of class `class` in this thread (`device_do`), objects created
    /// by this launch included once their entry is written.
    #[inline]
    pub fn for_each_live(&self, class: u8, mut f: impl FnMut(RawHandle)) {
        self.walk_live(class, 0, 1, |_, raw| f(raw));
    }

    /// [`for_each_live`](Self::for_each_live)'s objects at the list positions `i` with
    /// `i % parts == part` (`parts` a power of two): a `device_reduce` lane reads only its own
    /// entries instead of walking the whole list.
    #[inline]
    pub fn for_each_live_part(&self, class: u8, parts: u32, part: u32, mut f: impl FnMut(RawHandle)) {
        let parts = parts.max(1) as u64;
        self.walk_live(class, part as u64 & (parts - 1), parts, |_, raw| f(raw));
    }

    /// Every object of [`for_each_live`](Self::for_each_live) with its part of `parts` as
    /// [`for_each_live_part`](Self::for_each_live_part) assigns it (its list position modulo
    /// `parts`): the CPU backend's `device_reduce`, which folds all parts in one thread.
    #[inline]
    pub fn for_each_live_parted(&self, class: u8, parts: u32, mut f: impl FnMut(u32, RawHandle)) {
        let mask = parts.max(1) as u64 - 1;
        self.walk_live(class, 0, 1, |i, raw| f((i & mask) as u32, raw));
    }

    /// The live objects of `class`'s current list at positions `start`, `start + step`, ..
    /// (below its count), each with its position: the one walk of the three above.
    #[inline(always)]
    fn walk_live(&self, class: u8, start: u64, step: u64, mut f: impl FnMut(u64, RawHandle)) {
        let table = self.class(class);
        let list = table.current().load();
        let n = table.used(table.counts(list));
        let mut i = start;
        while i < n {
            // SAFETY: an entry below the count, inside the list; written atomically.
            let entry = unsafe { Atomic64::from_ptr(table.list_entry(list, i)) }.load();
            if entry != 0 {
                // Acquire: pairs with the release in `make_new`.
                arch::fence();
                f(i, RawHandle(entry));
            }
            i += step;
        }
    }

    /// The do-all's share of this thread: every `stride`-th object of the ones the last
    /// compaction listed for `class`, from `first`. Runs of `lanes` consecutive threads (a
    /// power of two up to a warp; 1 but for methods with lanes) share each object.
    #[inline]
    pub fn for_each_listed(&self, class: u8, lanes: u32, mut f: impl FnMut(RawHandle)) {
        let table = self.class(class);
        let list = table.current().load();
        let n = table.launch_count().load() as u64;
        let lanes = lanes.clamp(1, dynasoar_device::MAX_LANES) as u64;
        let stride = arch::global_thread_count() as u64 / lanes;
        let mut i = arch::global_thread_id() as u64 / lanes;
        while i < n {
            // SAFETY: entries below the launch count were written by earlier launches and do
            // not change during this one (appends go further on).
            let entry = unsafe { table.list_entry(list, i).read() };
            f(RawHandle(entry));
            i += stride;
        }
    }
}

/// What [`PtrSet::insert`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Insert {
    Added,
    /// The key was there already.
    Present,
    /// No room (the host sizes the set so that this cannot happen).
    Full,
}

/// An open-addressing set of object addresses (never 0) in device memory, built by many
/// threads at once during a compaction.
#[derive(Clone, Copy, Debug)]
struct PtrSet {
    table: *mut u64,
    mask: u64,
}

impl PtrSet {
    #[inline(always)]
    fn slot(&self, i: u64) -> &Atomic64 {
        // SAFETY: `i & mask` is inside the table, which is only accessed atomically while a
        // compaction builds it.
        unsafe { Atomic64::from_ptr(self.table.add((i & self.mask) as usize)) }
    }

    #[inline(always)]
    fn home(key: u64) -> u64 {
        // Objects are at least 8-byte aligned: mix the address so neighbours spread out.
        (key >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17
    }

    /// Insert `key`.
    fn insert(&self, key: u64) -> Insert {
        let mut i = Self::home(key);
        for _ in 0..=self.mask {
            match self.slot(i).compare_exchange(0, key) {
                Ok(_) => return Insert::Added,
                Err(k) if k == key => return Insert::Present,
                Err(_) => i += 1,
            }
        }
        Insert::Full
    }

    fn contains(&self, key: u64) -> bool {
        let home = Self::home(key);
        for i in home..=home + self.mask {
            let k = self.slot(i).load();
            if k == key {
                return true;
            }
            if k == 0 {
                return false;
            }
        }
        false
    }

    /// Empty the set, as thread `thread` of `threads`.
    fn clear(&self, thread: u64, threads: u64) {
        let mut i = thread;
        while i <= self.mask {
            self.slot(i).store(0);
            i += threads;
        }
    }
}

// SAFETY: `make_new` appends each fresh object's handle once; the loops visit the entries of
// the class's list, which hold live objects (deletions are removed only by a compaction,
// between launches).
unsafe impl ObjectStore for AosStore {
    #[inline(always)]
    unsafe fn at(header: u64) -> Self {
        // SAFETY: the caller's contract.
        unsafe { AosStore::from_ptr(header as usize as *mut AosHeader) }
    }

    #[inline(always)]
    unsafe fn recognizes(header: u64) -> bool {
        // SAFETY: the caller's contract; the magic is written before any kernel and never changes.
        unsafe { (header as usize as *const u64).read() == AOS_MAGIC }
    }

    #[inline(always)]
    fn raise(&self, error: u32) {
        AosStore::raise(self, error);
    }

    #[inline(always)]
    fn make_new<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        AosStore::make_new(self, value)
    }

    #[inline(always)]
    fn free<T: ClassSpec>(&self, raw: RawHandle) {
        AosStore::free(self, raw);
    }

    #[inline(always)]
    fn for_each_object(&self, class: u8, _shape: ClassShape, f: impl FnMut(RawHandle)) {
        self.for_each_live(class, f);
    }

    #[inline(always)]
    fn for_each_listed(&self, listing: Listing, f: impl FnMut(RawHandle)) {
        AosStore::for_each_listed(self, listing.class, listing.lanes, f);
    }

    #[inline(always)]
    fn for_each_object_part(
        &self,
        class: u8,
        _shape: ClassShape,
        parts: u32,
        part: u32,
        f: impl FnMut(RawHandle),
    ) {
        self.for_each_live_part(class, parts, part, f);
    }

    #[inline(always)]
    fn for_each_object_parted(
        &self,
        class: u8,
        _shape: ClassShape,
        parts: u32,
        f: impl FnMut(u32, RawHandle),
    ) {
        self.for_each_live_parted(class, parts, f);
    }
}
