//! CUDA's own device `malloc` and `free` (the survey's "CUDA-Allocator", `002_...` 2.1).
//!
//! Its heap lives outside the region: the host sizes it once per context
//! (`cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE)`) before the first kernel that uses it, and the
//! region is only a header. On the CPU backend the C library's `malloc` stands in for it.

use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region};

#[cfg(target_arch = "nvptx64")]
mod sys {
    unsafe extern "C" {
        /// CUDA's device-side `malloc` (16-byte aligned, null when its heap is exhausted).
        pub fn malloc(size: usize) -> *mut u8;
        pub fn free(ptr: *mut u8);
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod sys {
    unsafe extern "C" {
        /// The C library's `malloc` (16-byte aligned on 64-bit Linux).
        pub fn malloc(size: usize) -> *mut u8;
        pub fn free(ptr: *mut u8);
    }
}

/// CUDA's device allocator.
#[derive(Clone, Copy, Debug)]
pub struct SystemMalloc;

// SAFETY: CUDA's (or the C library's) allocator hands out disjoint, 16-byte aligned memory.
unsafe impl DeviceMalloc for SystemMalloc {
    const KIND: MallocKind = MallocKind::System;
    const CAPS: Caps = Caps {
        max_size: u32::MAX,
        align: 16,
        free: FreeSupport::Reuses,
        min_region_bytes: HEADER_BYTES,
        relays_above: 0,
    };
    const INIT_PHASES: u32 = 0;

    unsafe fn init(_region: Region, _phase: u32) {}

    #[inline(always)]
    unsafe fn attach(_region: Region) -> Self {
        SystemMalloc
    }

    #[inline(always)]
    fn malloc(&self, size: u32) -> *mut u8 {
        // SAFETY: `malloc` has no preconditions.
        unsafe { sys::malloc(size as usize) }
    }

    #[inline(always)]
    unsafe fn free(&self, ptr: *mut u8) {
        // SAFETY: the trait's contract: `ptr` came from this allocator's `malloc`.
        unsafe { sys::free(ptr) }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::malloc::testing::{HostRegion, StormConfig};

    #[test]
    fn storm_on_the_c_library() {
        let region = HostRegion::new(MallocKind::System, 4096, 0);
        let report = region.storm(StormConfig { threads: 8, per_thread: 64, sizes: (1, 512), rounds: 3 });
        assert_eq!(report.failed, 0);
    }
}
