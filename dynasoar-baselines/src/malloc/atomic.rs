//! AtomicMalloc (`000_...` section 3.1, Alg. 1): one atomic add on an offset into the pool.
//!
//! The floor of every allocator: a single instruction per request, no reuse. `free` leaks.

use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region, round_up};
use dynasoar_device::arch::{self, atomic::Atomic64};

/// Alignment of every allocation (requests are rounded up to it).
const ALIGN: u64 = 16;
/// The pool starts after the offset word, on its own 256-byte line.
const POOL_OFFSET: u64 = 256;

/// AtomicMalloc over a region.
#[derive(Clone, Copy, Debug)]
pub struct AtomicMalloc {
    region: Region,
}

impl AtomicMalloc {
    #[inline(always)]
    fn offset(&self) -> &Atomic64 {
        // SAFETY: the body's first word is the offset, only accessed atomically.
        unsafe { self.region.atomic64(0) }
    }
}

// SAFETY: every request gets its own range `[offset, offset + size)` of the pool, aligned to
// 16 bytes, and ranges past the pool's end are never returned.
unsafe impl DeviceMalloc for AtomicMalloc {
    const KIND: MallocKind = MallocKind::Atomic;
    const CAPS: Caps = Caps {
        max_size: u32::MAX - ALIGN as u32,
        align: ALIGN as u32,
        free: FreeSupport::Leaks,
        min_region_bytes: HEADER_BYTES + POOL_OFFSET + ALIGN,
        relays_above: u32::MAX,
    };

    unsafe fn init(region: Region, _phase: u32) {
        if arch::global_thread_id() == 0 {
            // SAFETY: `attach` on the region being initialised; nothing else runs.
            unsafe { Self::attach(region) }.offset().store(0);
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        AtomicMalloc { region }
    }

    #[inline(always)]
    fn malloc(&self, size: u32) -> *mut u8 {
        let size = round_up(size as u64, ALIGN);
        let offset = self.offset().fetch_add(size);
        let pool = self.region.body_bytes() - POOL_OFFSET;
        if offset + size > pool {
            return core::ptr::null_mut();
        }
        self.region.body().wrapping_add((POOL_OFFSET + offset) as usize)
    }

    #[inline(always)]
    unsafe fn free(&self, _ptr: *mut u8) {}
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::malloc::testing::{HostRegion, StormConfig};

    #[test]
    fn hands_out_disjoint_ranges_until_full() {
        let region = HostRegion::new(MallocKind::Atomic, 1 << 20, 0);
        let report = region.storm(StormConfig { threads: 8, per_thread: 100, sizes: (1, 256), rounds: 1 });
        assert_eq!(report.failed, 0);
        // Without reuse, a request larger than what is left fails, and keeps failing.
        let m = region.typed::<AtomicMalloc>();
        assert!(m.malloc(1 << 20).is_null());
    }

    #[test]
    fn rounds_sizes_to_sixteen_bytes() {
        let region = HostRegion::new(MallocKind::Atomic, 4096, 0);
        let m = region.typed::<AtomicMalloc>();
        let (a, b) = (m.malloc(1) as u64, m.malloc(17) as u64);
        assert_eq!(b - a, 16);
        assert_eq!(m.malloc(1) as u64 - b, 32);
    }
}
