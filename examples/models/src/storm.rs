//! Allocator storms: many threads allocate and free objects of four classes of different
//! sizes at random, tagging each object with its owner so that a slot handed out twice shows.
//!
//! The classes are registered by hand here (the allocator core's own test; apps get theirs from
//! the class macros): 8, 16, 40 and 256-byte objects, hence 64, 32, 12 and 2 objects per block.

use dynasoar::arch::{self, atomic::Atomic64};
use dynasoar::engine::layout;
use dynasoar::prelude::*;
use dynasoar::{ClassSpec, Heap, HeapHeader, RawHandle};

/// Object sizes of the storm classes.
pub const SIZES: [usize; 4] = [8, 16, 40, 256];
const SMALLEST: u64 = layout::smallest_size(&SIZES);

macro_rules! storm_class {
    ($name:ident, $id:literal, $owns:literal) => {
        pub struct $name;
        impl ClassSpec for $name {
            const TYPE_ID: u8 = $id;
            const OBJECTS_PER_BLOCK: u32 = layout::objects_per_block(SIZES[$id], SMALLEST);
            const BLOCK_BYTES: u64 = layout::block_bytes(SMALLEST);
            const NAME: &'static str = stringify!($name);
            const OWNS_BLOCKS: bool = $owns;
        }
    };
}
storm_class!(Small, 0, false);
storm_class!(Medium, 1, false);
// Classes with runs (see the allocator's `runs`): 12 per block, which a warp's group of 6 or
// more lanes takes from runs on the GPU, and 2 per block, which every request takes from runs,
// the CPU backend's lone threads included. So the storms exercise runs too (their sharing,
// release when blocks run out, and release by the host).
storm_class!(Large, 2, true);
storm_class!(Huge, 3, true);

/// Bytes per block of the storm heap.
pub const BLOCK_BYTES: u64 = layout::block_bytes(SMALLEST);

/// `(name, objects per block)` of the storm classes, in type-id order.
pub const CLASSES: [(&str, u32); 4] = [
    (Small::NAME, Small::OBJECTS_PER_BLOCK),
    (Medium::NAME, Medium::OBJECTS_PER_BLOCK),
    (Large::NAME, Large::OBJECTS_PER_BLOCK),
    (Huge::NAME, Huge::OBJECTS_PER_BLOCK),
];

/// Parameters of the storm kernels.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct StormParams {
    pub heap: DevPtr<HeapHeader>,
    /// One handle per thread (0 = none).
    pub handles: DevPtr<u64>,
    pub threads: u32,
    pub round: u32,
    pub seed: u64,
    /// Chance in 256 that a thread without an object allocates one.
    pub alloc_per_256: u32,
    /// Chance in 256 that a thread with an object frees it.
    pub free_per_256: u32,
    /// Counts objects whose tag was not their owner's (a slot handed out twice).
    pub corrupted: DevPtr<u64>,
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The tag a thread writes into its object: unique per thread and round of allocation.
fn tag(thread: u64, handle: RawHandle) -> u64 {
    (thread << 20) ^ handle.slot() as u64 ^ 0x5a5a_0000_0000_0000
}

fn tag_addr(handle: RawHandle) -> *mut u64 {
    // Field 0 of every storm class is an 8-byte word at offset 0.
    handle.field_addr(0, 8) as usize as *mut u64
}

/// One round: each thread frees its object or allocates a new one, at random.
#[kernel]
pub fn storm_round(p: StormParams) {
    let thread = arch::global_thread_id();
    if thread >= p.threads as usize {
        return;
    }
    // SAFETY: the host passes an initialised heap and buffers of `threads` entries; each
    // thread touches only its own handle entry and its own object.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let current = RawHandle(unsafe { p.handles.read(thread) });
    let dice = mix(p.seed ^ ((p.round as u64) << 40) ^ thread as u64);
    if !current.is_null() {
        if (dice & 255) < p.free_per_256 as u64 {
            // SAFETY: this thread owns the object (see `storm_round`'s contract above).
            let found = unsafe { tag_addr(current).read_volatile() };
            if found != tag(thread as u64, current) {
                // SAFETY: a counter updated atomically only.
                unsafe { Atomic64::from_ptr(p.corrupted.as_ptr()) }.fetch_add(1);
            }
            heap.free::<Small>(current);
            // SAFETY: own entry.
            unsafe { p.handles.write(thread, 0) };
        }
    } else if ((dice >> 8) & 255) < p.alloc_per_256 as u64 {
        let made = match (dice >> 16) % 4 {
            0 => heap.allocate::<Small>(),
            1 => heap.allocate::<Medium>(),
            2 => heap.allocate::<Large>(),
            _ => heap.allocate::<Huge>(),
        };
        if let Some(h) = made {
            // SAFETY: a fresh object owned by this thread.
            unsafe { tag_addr(h).write_volatile(tag(thread as u64, h)) };
            // SAFETY: own entry.
            unsafe { p.handles.write(thread, h.0) };
        }
    }
}

/// Free every thread's object (after checking its tag).
#[kernel]
pub fn storm_free_all(p: StormParams) {
    let thread = arch::global_thread_id();
    if thread >= p.threads as usize {
        return;
    }
    // SAFETY: as in `storm_round`.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let current = RawHandle(unsafe { p.handles.read(thread) });
    if !current.is_null() {
        // SAFETY: this thread owns the object.
        if unsafe { tag_addr(current).read_volatile() } != tag(thread as u64, current) {
            // SAFETY: a counter updated atomically only.
            unsafe { Atomic64::from_ptr(p.corrupted.as_ptr()) }.fetch_add(1);
        }
        heap.free::<Small>(current);
        // SAFETY: own entry.
        unsafe { p.handles.write(thread, 0) };
    }
}

/// The tag `thread` wrote into its object `handle`, for host-side checks of a heap snapshot.
pub fn expected_tag(thread: u64, handle: RawHandle) -> u64 {
    tag(thread, handle)
}
