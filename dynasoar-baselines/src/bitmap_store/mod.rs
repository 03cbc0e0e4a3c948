//! The BitmapAlloc object store: the paper's BitmapAlloc (`003_...` section 7) as it was built,
//! "one allocation bitmap per type and one free slot bitmap. Allocation bitmaps are also used
//! for `parallel_do` and `device_do`." The free-slot bitmap is [`BitmapAlloc`]'s own; this store
//! keeps one allocation bitmap per class over the same slots, and lists them for do-alls.
//!
//! It is compiled only into the BitmapAlloc PTX build (`PtxBuilder::bitmap_alloc`, which sets
//! `cfg(dynasoar_bitmap_alloc)` with `cfg(dynasoar_aos)`), where it is the store the model's
//! kernels are compiled against (object handles are AOS addresses, as in the AOS build). The AOS
//! build, which every other general allocator runs, does not contain it: neither pays for the
//! other. On the host every store is compiled in and the header's magic tells them apart.
//!
//! ```text
//! header       magic, BitmapAlloc's region, the pool's first slot and the slot size,
//!              errors, failed creations, the parity of the last listing,
//!              the bitmaps' geometry (one bit per slot), per class:
//!   bitmap     allocation bitmap, hierarchical (dynasoar_device::bitmap)
//!   list       u32 slot indices: the class's objects when it was last listed
//!   counts[2]  entries of the list, by the listing's parity
//!   changed[2] objects of the class were created or freed since the listing of that parity
//! deferred     one bit per slot freed since the last listing, hierarchical
//! ```
//!
//! - `make_new` takes a slot from BitmapAlloc's free-slot bitmap, writes the object, then
//!   (release fence) sets the slot's bit in its class's bitmap and flags the class changed (one
//!   store per group of lanes creating objects of one class).
//! - `free` clears the bit ([`Bitmap::try_clear`]: a bit already clear is a double free), sets
//!   the slot's bit in `deferred` and flags the class changed. The slot goes back to BitmapAlloc
//!   at the next listing, before the next `parallel_do`: as with the AOS store's deferred frees,
//!   the memory of an object freed during a kernel stays valid until the next `parallel_do`,
//!   and a slot cannot be in two classes' bitmaps.
//! - Before every `parallel_do` (and `collect`), one launch ([`kernels::bitmap_list`]) lists
//!   every class flagged changed: one warp per level-1 container of the class's bitmap (4,096
//!   slots) skips it when its bit in level 2 is clear, reads the level-1 word, and its lanes read
//!   the non-empty level-0 words (two each on the GPU) and write the slot indices of their set
//!   bits into the class's list, with one atomic per warp (a scan of the lanes' counts by
//!   shuffles). A class not flagged keeps its list (its count is carried to the new parity).
//!   The same launch gives the deferred slots back to BitmapAlloc, walking the `deferred`
//!   bitmap the same way (one atomic OR per 64 slots).
//! - A do-all runs one thread per listed object (runs of `lanes` threads for methods with
//!   lanes): it never reads an empty slot, and objects created during the do-all are not in the
//!   list, so they are not visited.
//! - `device_do` iterates the class's list too, while the class is not flagged changed since the
//!   listing; once it is (objects of the class were created or freed since, in an earlier
//!   launch or this one), it walks the class's live bitmap from its top level down, skipping
//!   empty containers at every level. Either way it visits every object that existed at the
//!   launch and was not freed, which is what `Device::device_do` promises.
//!
//! The flags and counts are kept by parity so that the listing needs no other launch: the
//! listing of parity `p` reads the flags of `p ^ 1` (raised since the previous listing), appends
//! to the count of `p` (zeroed by the previous listing) and zeroes the count and flags of
//! `p ^ 1`, which nothing reads in that launch; launches after it flag and read parity `p`.

pub mod kernels;

use crate::malloc::bitmap::BitmapAlloc;
use crate::malloc::{DeviceMalloc, Region, RegionHeader};
use dynasoar_device::arch::atomic::{Atomic32, Atomic64};
use dynasoar_device::arch::{self, WarpGroup};
use dynasoar_device::bitmap::{Bitmap, BitmapGeometry};
use dynasoar_device::errors;
use dynasoar_device::handle::RawHandle;
use dynasoar_device::heap::MAX_CLASSES;
use dynasoar_device::{ClassShape, ClassSpec, Concrete, Listing, ObjectStore, Plain};

/// Marks a BitmapAlloc store's header.
pub const BITMAP_MAGIC: u64 = 0x4249_544d_5f73_746f; // "BITM_sto"

/// One class's bitmap and list. Addresses are written by the host and never change; the
/// counts and flags are state, accessed atomically.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitmapClass {
    /// Address of the class's allocation bitmap ([`BitmapHeader::geometry`]); 0 for an
    /// abstract class.
    pub bitmap: u64,
    /// Address of the class's list: `geometry.bits` slot indices (u32).
    pub list: u64,
    /// Entries of the list, by the listing's parity.
    pub counts: [u32; 2],
    /// Nonzero: objects of the class were created or freed since the listing of that parity.
    pub changed: [u32; 2],
}

/// The store's header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BitmapHeader {
    pub magic: u64,
    /// Address of BitmapAlloc's region.
    pub region: u64,
    /// Address of slot 0.
    pub pool: u64,
    /// Bytes of a slot (nonzero).
    pub slot_bytes: u64,
    /// Address of the deferred frees' bitmap (the same geometry as the class bitmaps).
    pub deferred: u64,
    pub num_classes: u32,
    /// [`errors`] bits (atomic).
    pub errors: u32,
    /// Objects that could not be created (atomic).
    pub failed: u32,
    /// Parity of the last listing: written by the listing launch, read by the launches after it.
    pub parity: u32,
    /// Geometry of every bitmap: one bit per slot of the pool.
    pub geometry: BitmapGeometry,
    pub classes: [BitmapClass; MAX_CLASSES],
}

// SAFETY: `repr(C)` integers.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for BitmapClass {}
// SAFETY: `repr(C)` integers.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for BitmapHeader {}

/// A BitmapAlloc store as device code sees it.
#[derive(Clone, Copy, Debug)]
pub struct BitmapStore {
    header: *mut BitmapHeader,
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

impl BitmapStore {
    /// The store whose header is at `header`.
    ///
    /// # Safety
    /// `header` is a BitmapAlloc store the host created, alive while the value is used.
    #[inline(always)]
    pub unsafe fn from_ptr(header: *mut BitmapHeader) -> Self {
        BitmapStore { header }
    }

    #[inline(always)]
    fn header(&self) -> &BitmapHeader {
        // SAFETY: `from_ptr`'s contract; only host-written, unchanging fields are read through
        // this reference (and `parity`, see `parity`).
        unsafe { &*self.header }
    }

    #[inline(always)]
    pub fn num_classes(&self) -> u32 {
        self.header().num_classes
    }

    /// The bitmaps' geometry.
    #[inline(always)]
    pub fn geometry(&self) -> &BitmapGeometry {
        &self.header().geometry
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

    /// The parity of the last listing. A plain load: only the listing launch writes it
    /// ([`set_parity`](Self::set_parity)), and nothing reads it there.
    #[inline(always)]
    pub fn parity(&self) -> u32 {
        self.header().parity & 1
    }

    /// Record the parity of this listing, for the launches after it (the listing launch only).
    #[inline(always)]
    pub fn set_parity(&self, parity: u32) {
        // SAFETY: the parity word; written only here, by one thread of the listing launch.
        unsafe { atomic32(core::ptr::addr_of_mut!((*self.header).parity)) }.store(parity & 1);
    }

    #[inline(always)]
    fn class_ptr(&self, class: u8) -> *mut BitmapClass {
        // SAFETY: in bounds: `class & 63 < MAX_CLASSES`.
        unsafe { core::ptr::addr_of_mut!((*self.header).classes[(class & 63) as usize]) }
    }

    /// Entries of class `class`'s list, by parity.
    #[inline(always)]
    pub fn counts(&self, class: u8, parity: u32) -> &Atomic32 {
        // SAFETY: a state word of a live class entry, only accessed atomically while kernels run.
        unsafe { atomic32(core::ptr::addr_of_mut!((*self.class_ptr(class)).counts[(parity & 1) as usize])) }
    }

    /// Whether objects of class `class` were created or freed since the listing of `parity`.
    #[inline(always)]
    pub fn changed(&self, class: u8, parity: u32) -> &Atomic32 {
        // SAFETY: as for `counts`.
        unsafe { atomic32(core::ptr::addr_of_mut!((*self.class_ptr(class)).changed[(parity & 1) as usize])) }
    }

    /// Class `class`'s list of slot indices (`geometry.bits` entries).
    #[inline(always)]
    pub fn list(&self, class: u8) -> *mut u32 {
        // SAFETY: the host-written address, never changed.
        unsafe { (*self.class_ptr(class)).list as usize as *mut u32 }
    }

    /// The allocation bitmap of class `class`; `None` for an abstract class.
    #[inline(always)]
    pub fn class_bitmap(&self, class: u8) -> Option<Bitmap<'_>> {
        // SAFETY: the host-written address, never changed.
        let containers = unsafe { (*self.class_ptr(class)).bitmap } as usize as *const Atomic64;
        if containers.is_null() {
            return None;
        }
        // SAFETY: the host allocated the class's bitmap with `geometry.containers` containers,
        // alive with the store and only accessed atomically while kernels run (and plainly by
        // the listing, alone on the store).
        Some(unsafe { Bitmap::from_raw(self.geometry(), containers) })
    }

    /// The bitmap of the slots freed since the last listing.
    #[inline(always)]
    pub fn deferred(&self) -> Bitmap<'_> {
        // SAFETY: as for `class_bitmap`: the host allocated it with the same geometry.
        unsafe { Bitmap::from_raw(self.geometry(), self.header().deferred as usize as *const Atomic64) }
    }

    /// BitmapAlloc, attached to the store's region.
    #[inline(always)]
    pub fn bitmap_alloc(&self) -> BitmapAlloc {
        // SAFETY: the host created the region as a BitmapAlloc and initialised it before any
        // kernel.
        unsafe {
            BitmapAlloc::attach(Region::from_header(self.header().region as usize as *mut RegionHeader))
        }
    }

    /// The handle of the object of class `class` in slot `slot`.
    #[inline(always)]
    pub fn handle(&self, class: u8, slot: u64) -> RawHandle {
        let h = self.header();
        RawHandle::aos(h.pool + slot * h.slot_bytes, class)
    }

    /// The slot of the object `raw`, if its address is one of the pool's slots.
    #[inline(always)]
    fn slot_of(&self, raw: RawHandle) -> Option<u64> {
        let h = self.header();
        let offset = raw.aos_addr().wrapping_sub(h.pool);
        let slot = offset.checked_div(h.slot_bytes)?;
        (slot < h.geometry.bits && slot * h.slot_bytes == offset).then_some(slot)
    }

    /// Flag class `class` changed since the last listing: one store per group of converged
    /// lanes changing objects of the class.
    #[inline(always)]
    fn mark_changed(&self, class: u8) {
        let group = WarpGroup::current_with_key(class as u32);
        if group.is_leader() {
            self.changed(class, self.parity()).store(1);
        }
    }

    /// A free slot of BitmapAlloc for `bytes` bytes; out of memory raised and counted. Out of
    /// line, as the AOS build's `AnyMalloc::malloc`: the search would add registers to every
    /// kernel that may create an object.
    #[inline(never)]
    fn take_slot(&self, bytes: u32) -> Option<u64> {
        let slot = self.bitmap_alloc().take_slot(bytes);
        if slot.is_none() {
            self.raise(errors::OUT_OF_MEMORY);
            self.count_failure();
        }
        slot
    }

    /// Publish the object in `slot` as one of class `class`: set its bit in the class's
    /// allocation bitmap, after its fields, and flag the class changed.
    #[inline(never)]
    fn publish(&self, class: u8, slot: u64) {
        // Release: the object's fields before its bit, for `device_do` in this launch.
        arch::fence();
        match self.class_bitmap(class) {
            Some(bitmap) => bitmap.set(slot),
            // A concrete class always has a bitmap: the host's tables are corrupt.
            None => self.raise(errors::TABLE_FULL),
        }
        self.mark_changed(class);
    }

    /// Create an object of class `T` holding `value`: a slot from BitmapAlloc, its bit set in
    /// the class's allocation bitmap. `None` if the pool is full (raised for the host to report).
    #[inline]
    pub fn make_new<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        let slot = self.take_slot((core::mem::size_of::<T>() as u32).max(1))?;
        let raw = self.handle(T::TYPE_ID, slot);
        // SAFETY: a fresh slot of at least `size_of::<T>()` bytes (the host sizes the slots for
        // the largest class), 16-byte aligned, owned by this thread.
        unsafe { T::store(raw, value) };
        self.publish(T::TYPE_ID, slot);
        Some(raw)
    }

    /// Free `raw`: clear its bit in its class's bitmap (a bit already clear, or an address
    /// that is no slot, is a double free) and defer its slot to the next listing, which gives
    /// it back to BitmapAlloc: the memory stays valid until then. Out of line, as `publish`.
    #[inline(never)]
    pub fn free(&self, raw: RawHandle) {
        if raw.is_null() {
            self.raise(errors::NULL_HANDLE);
            return;
        }
        let class = raw.type_id();
        let (Some(slot), Some(bitmap)) = (self.slot_of(raw), self.class_bitmap(class)) else {
            self.raise(errors::DOUBLE_FREE);
            return;
        };
        if !bitmap.try_clear(slot) {
            self.raise(errors::DOUBLE_FREE);
            return;
        }
        // Set once per slot between two listings: its class bit was set, and the slot is not
        // handed out again before the listing gives it back.
        self.deferred().set(slot);
        self.mark_changed(class);
    }

    /// Call `f` on every object of class `class` in this thread (`device_do`): the class's
    /// list while the class is unchanged since it was listed, else its live bitmap.
    #[inline]
    pub fn for_each_live(&self, class: u8, f: impl FnMut(RawHandle)) {
        // One part of one: every entry, every set bit.
        self.for_each_live_part(class, 1, 0, f);
    }

    /// [`for_each_live`](Self::for_each_live)'s objects in part `part` of `parts` (a power of
    /// two), the `i`-th visited in part `i % parts`: from the list, this lane reads only its
    /// own entries (`device_reduce`'s lanes split the loop instead of each walking the whole
    /// list); from the live bitmap, every set bit is counted.
    #[inline]
    pub fn for_each_live_part(&self, class: u8, parts: u32, part: u32, mut f: impl FnMut(RawHandle)) {
        let parity = self.parity();
        let mask = parts.max(1) - 1;
        if self.changed(class, parity).load() != 0 {
            let mut i = 0u32;
            self.for_each_in_bitmap(class, |raw| {
                if i & mask == part {
                    f(raw);
                }
                i = i.wrapping_add(1);
            });
            return;
        }
        let n = (self.counts(class, parity).load() as u64).min(self.geometry().bits);
        let list = self.list(class);
        let mut i = (part & mask) as u64;
        while i < n {
            // SAFETY: entries below the count were written by the listing launch and do not
            // change until the class is listed again, in a later launch.
            let slot = unsafe { list.add(i as usize).read() };
            f(self.handle(class, slot as u64));
            i += mask as u64 + 1;
        }
    }

    /// Call `f` on every object whose bit is set in class `class`'s live bitmap, walking it from
    /// the top level down and skipping empty containers at every level (live bits: objects that
    /// this launch creates or frees may be seen either way).
    #[inline(never)]
    fn for_each_in_bitmap(&self, class: u8, mut f: impl FnMut(RawHandle)) {
        let Some(bitmap) = self.class_bitmap(class) else { return };
        let mut visit = |index: u64, mut bits: u64| {
            // Acquire: pairs with the release in `make_new`.
            arch::fence();
            while bits != 0 {
                let slot = index * 64 + bits.trailing_zeros() as u64;
                bits &= bits - 1;
                f(self.handle(class, slot));
            }
        };
        let levels = bitmap.geometry().levels;
        if levels <= 1 {
            let bits = bitmap.container(0, 0).load();
            if bits != 0 {
                visit(0, bits);
            }
            return;
        }
        // Per level above 0: the container being walked and its bits not yet visited.
        // Arrays of 8 (> MAX_LEVELS) indexed with `& 7`: no bounds checks.
        let mut rest = [0u64; 8];
        let mut at = [0u64; 8];
        let top = levels - 1;
        let mut level = top;
        rest[(top & 7) as usize] = bitmap.container(top, 0).load();
        loop {
            let l = (level & 7) as usize;
            if rest[l] == 0 {
                if level == top {
                    return;
                }
                level += 1;
                continue;
            }
            let bit = rest[l].trailing_zeros() as u64;
            rest[l] &= rest[l] - 1;
            let index = at[l] * 64 + bit;
            if level == 1 {
                let bits = bitmap.container(0, index).load();
                if bits != 0 {
                    visit(index, bits);
                }
            } else {
                level -= 1;
                let below = (level & 7) as usize;
                at[below] = index;
                rest[below] = bitmap.container(level, index).load();
            }
        }
    }

    /// The do-all's share of this thread: every `stride`-th entry of class `class`'s list from
    /// the last listing. Runs of `lanes` consecutive threads (a power of two up to a warp; 1
    /// but for methods with lanes) share each object.
    #[inline]
    pub fn for_each_listed(&self, class: u8, lanes: u32, mut f: impl FnMut(RawHandle)) {
        let n = (self.counts(class, self.parity()).load() as u64).min(self.geometry().bits);
        let list = self.list(class);
        let (id, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
        #[cfg(not(target_arch = "nvptx64"))]
        if lanes <= 1 {
            // The CPU backend runs the emulated threads one after another on a core: each takes
            // a contiguous share of the list, as it does of DynaSOAr's listed blocks.
            let share = |thread: u64| thread.min(threads) * n / threads.max(1);
            for i in share(id)..share(id + 1) {
                // SAFETY: as below.
                let slot = unsafe { list.add(i as usize).read() };
                f(self.handle(class, slot as u64));
            }
            return;
        }
        let lanes = lanes.clamp(1, dynasoar_device::MAX_LANES) as u64;
        let stride = threads / lanes;
        let mut i = id / lanes;
        while i < n {
            // SAFETY: entries below the count were written by the listing launch and do not
            // change during this one (the next listing is a later launch).
            let slot = unsafe { list.add(i as usize).read() };
            f(self.handle(class, slot as u64));
            i += stride;
        }
    }
}

// SAFETY: `make_new` hands out each slot once (BitmapAlloc's free-slot bitmap) and sets its bit
// in its class's bitmap only; the loops visit set bits of the class's bitmap, or its list,
// whose entries are objects of the class that were alive at the listing (a freed object's slot
// is given back only at the next listing, so its memory stays valid).
unsafe impl ObjectStore for BitmapStore {
    #[inline(always)]
    unsafe fn at(header: u64) -> Self {
        // SAFETY: the caller's contract.
        unsafe { BitmapStore::from_ptr(header as usize as *mut BitmapHeader) }
    }

    #[inline(always)]
    unsafe fn recognizes(header: u64) -> bool {
        // SAFETY: the caller's contract; the magic is written before any kernel and never changes.
        unsafe { (header as usize as *const u64).read() == BITMAP_MAGIC }
    }

    #[inline(always)]
    fn raise(&self, error: u32) {
        BitmapStore::raise(self, error);
    }

    #[inline(always)]
    fn make_new<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        BitmapStore::make_new(self, value)
    }

    #[inline(always)]
    fn free<T: ClassSpec>(&self, raw: RawHandle) {
        BitmapStore::free(self, raw);
    }

    #[inline(always)]
    fn for_each_object(&self, class: u8, _shape: ClassShape, f: impl FnMut(RawHandle)) {
        self.for_each_live(class, f);
    }

    #[inline(always)]
    fn for_each_listed(&self, listing: Listing, f: impl FnMut(RawHandle)) {
        BitmapStore::for_each_listed(self, listing.class, listing.lanes, f);
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
}
