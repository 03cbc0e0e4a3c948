//! The memory a general-purpose allocator manages: a header the host fills in, then the
//! allocator's own metadata and pool (its "body").

use dynasoar_device::Plain;
use dynasoar_device::arch::atomic::{Atomic32, Atomic64};

use super::MallocKind;

/// Bytes of the header at the start of every region; the body starts this far in, so it is
/// as aligned as the region (the host aligns regions to at least 256 bytes).
pub const HEADER_BYTES: u64 = 256;

/// The header of a region. The host writes the first four fields before initialisation and
/// never changes them afterwards, so device code reads them with plain loads.
#[repr(C)]
pub struct RegionHeader {
    /// The [`MallocKind`] as its id.
    pub kind: u32,
    /// Multiprocessors of the GPU (the CPU backend: its threads), for allocators that keep
    /// state per multiprocessor.
    pub multiprocessors: u32,
    /// Bytes of the whole region, header included.
    pub bytes: u64,
    /// An allocator-specific parameter, 0 for its default (BitmapAlloc: the slot size).
    pub param: u64,
    /// [`errors`](super::errors) bits raised since the host last cleared them.
    pub errors: Atomic32,
    /// Mallocs that returned null since the host last cleared the count.
    pub failed_mallocs: Atomic32,
    _reserved: [u64; 28],
}

const _: () = assert!(core::mem::size_of::<RegionHeader>() == HEADER_BYTES as usize);

/// The host's copy of a header's fields (plain integers, the same layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionHeaderWords {
    pub kind: u32,
    pub multiprocessors: u32,
    pub bytes: u64,
    pub param: u64,
    pub errors: u32,
    pub failed_mallocs: u32,
}
// SAFETY: `repr(C)` integers.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for RegionHeaderWords {}

const _: () = assert!(
    core::mem::offset_of!(RegionHeader, failed_mallocs)
        == core::mem::offset_of!(RegionHeaderWords, failed_mallocs)
);

/// A region of device memory holding one allocator: a pointer to its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Region {
    header: *mut RegionHeader,
}

// SAFETY: a region is an address; all shared mutation goes through atomics.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    /// The region whose header is at `header`.
    ///
    /// # Safety
    /// `header` points to a region whose header the host filled in, aligned to 256 bytes and
    /// alive while the value is used.
    #[inline(always)]
    pub const unsafe fn from_header(header: *mut RegionHeader) -> Self {
        Region { header }
    }

    #[inline(always)]
    fn header(&self) -> &RegionHeader {
        // SAFETY: `from_header`'s contract.
        unsafe { &*self.header }
    }

    /// The header's address.
    #[inline(always)]
    pub fn header_ptr(&self) -> *mut RegionHeader {
        self.header
    }

    /// The allocator the host put here. A header with an unknown id traps: the host writes
    /// only valid ids, so this is memory corruption.
    #[inline(always)]
    pub fn kind(&self) -> MallocKind {
        match MallocKind::from_id(self.header().kind) {
            Some(kind) => kind,
            None => dynasoar_device::arch::trap(),
        }
    }

    /// Bytes of the whole region, header included.
    #[inline(always)]
    pub fn bytes(&self) -> u64 {
        self.header().bytes
    }

    /// The allocator-specific parameter (0: default).
    #[inline(always)]
    pub fn param(&self) -> u64 {
        self.header().param
    }

    /// Multiprocessors of the GPU (at least 1).
    #[inline(always)]
    pub fn multiprocessors(&self) -> u32 {
        self.header().multiprocessors.max(1)
    }

    /// This thread's multiprocessor, in `0..multiprocessors()` (index per-multiprocessor state
    /// with this, never with `arch::sm_id()` itself: the CPU backend's stand-in is unbounded).
    #[inline(always)]
    pub fn sm_slot(&self) -> u32 {
        dynasoar_device::arch::sm_id() % self.multiprocessors()
    }

    /// Start of the allocator's own memory (metadata and pool), 256-byte aligned.
    #[inline(always)]
    pub fn body(&self) -> *mut u8 {
        (self.header as *mut u8).wrapping_add(HEADER_BYTES as usize)
    }

    /// Address of the body's start, as an integer.
    #[inline(always)]
    pub fn body_addr(&self) -> u64 {
        self.body() as u64
    }

    /// Bytes of the body.
    #[inline(always)]
    pub fn body_bytes(&self) -> u64 {
        self.bytes().saturating_sub(HEADER_BYTES)
    }

    /// Whether `ptr` lies in the body.
    #[inline(always)]
    pub fn contains(&self, ptr: *const u8) -> bool {
        let (p, start) = (ptr as u64, self.body_addr());
        p >= start && p < start + self.body_bytes()
    }

    /// The 32-bit word at byte `offset` of the body, as an atomic.
    ///
    /// # Safety
    /// `offset` is 4-byte aligned and inside the body, and the word is only accessed atomically
    /// while the allocator runs.
    #[inline(always)]
    pub unsafe fn atomic32(&self, offset: u64) -> &Atomic32 {
        // SAFETY: the caller's contract.
        unsafe { Atomic32::from_ptr(self.body().add(offset as usize) as *mut u32) }
    }

    /// The 64-bit word at byte `offset` of the body, as an atomic.
    ///
    /// # Safety
    /// As for [`atomic32`](Self::atomic32), 8-byte aligned.
    #[inline(always)]
    pub unsafe fn atomic64(&self, offset: u64) -> &Atomic64 {
        // SAFETY: the caller's contract.
        unsafe { Atomic64::from_ptr(self.body().add(offset as usize) as *mut u64) }
    }

    /// Raise error bits (see [`errors`](super::errors)) for the host to report.
    #[inline(always)]
    pub fn raise(&self, bits: u32) {
        self.header().errors.fetch_or(bits);
    }

    /// A malloc failed: raise `bits` and count it.
    #[inline(always)]
    pub fn fail(&self, bits: u32) {
        self.raise(bits);
        self.header().failed_mallocs.fetch_add(1);
    }

    /// Error bits raised so far.
    #[inline(always)]
    pub fn errors(&self) -> u32 {
        self.header().errors.load()
    }
}
