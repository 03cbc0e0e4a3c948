//! nvptx64 implementations: PTX special registers, warp collectives, fences, sleep.

use core::arch::asm;
use core::arch::nvptx;

/// Lanes per warp.
pub const WARP_SIZE: u32 = 32;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn llvm_ballot_sync(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn llvm_shfl_sync_idx(mask: u32, value: i32, src_lane: i32, clamp: i32) -> i32;
    #[link_name = "llvm.nvvm.activemask"]
    fn llvm_activemask() -> u32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
    fn llvm_laneid() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.lanemask.lt"]
    fn llvm_lanemask_lt() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.clock64"]
    fn llvm_clock64() -> i64;
}

#[inline(always)]
pub fn thread_idx() -> u32 {
    // SAFETY: reads a special register; valid in any kernel.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

#[inline(always)]
pub fn block_idx() -> u32 {
    // SAFETY: reads a special register; valid in any kernel.
    unsafe { nvptx::_block_idx_x() as u32 }
}

#[inline(always)]
pub fn block_dim() -> u32 {
    // SAFETY: reads a special register; valid in any kernel.
    unsafe { nvptx::_block_dim_x() as u32 }
}

#[inline(always)]
pub fn grid_dim() -> u32 {
    // SAFETY: reads a special register; valid in any kernel.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

#[inline(always)]
pub fn lane_id() -> u32 {
    // SAFETY: reads a special register.
    unsafe { llvm_laneid() as u32 }
}

#[inline(always)]
pub fn lanemask_lt() -> u32 {
    // SAFETY: reads a special register.
    unsafe { llvm_lanemask_lt() as u32 }
}

#[inline(always)]
pub fn activemask() -> u32 {
    // SAFETY: `activemask` has no preconditions.
    let mask = unsafe { llvm_activemask() };
    // The lane's own bit is always in the mask already; or-ing it in changes no value but makes
    // the mask depend on `%laneid` in ptxas's eyes. Without it ptxas takes `activemask` as
    // warp-uniform and, where lanes of *different* `activemask` groups reconverge before a
    // `shfl.sync` (at a convergence barrier inside the callee), moves one lane's mask into a
    // uniform register, checks convergence against that one mask and shuffles unsynchronised:
    // a lane of the other group reads its leader's register while that leader is not there.
    // Seen on an H200 as warp-aggregated allocations that handed a slot to no lane (leaked
    // objects in Game of Life, stray tree nodes in Barnes-Hut); the SASS of the allocator
    // showed `R2UR UR4, <mask>; BRA.DIV UR4` before a mask-less `SHFL.IDX`.
    mask | (1 << lane_id())
}

/// Bit `i` set iff lane `i` of `mask` has `pred`. Every lane of `mask` must execute this call.
#[inline(always)]
pub fn ballot(mask: u32, pred: bool) -> u32 {
    // SAFETY: the caller passes a mask of lanes that all reach this call (see module docs).
    unsafe { llvm_ballot_sync(mask, pred) }
}

/// The lanes of `mask` whose `key` equals this lane's. Every lane of `mask` must execute this
/// call (sm_70+).
#[inline(always)]
pub fn match_any(mask: u32, key: u32) -> u32 {
    let peers: u32;
    // SAFETY: as for `ballot`.
    unsafe {
        asm!("match.any.sync.b32 {p}, {k}, {m};", p = out(reg32) peers, k = in(reg32) key, m = in(reg32) mask,
             options(nostack, nomem))
    };
    peers
}

/// `value` of lane `src`. Every lane of `mask` must execute this call and `src` must be in it.
#[inline(always)]
pub fn shfl_u32(mask: u32, value: u32, src: u32) -> u32 {
    // SAFETY: as for `ballot`; clamp 0x1f selects the whole warp as one segment.
    unsafe { llvm_shfl_sync_idx(mask, value as i32, src as i32, 0x1f) as u32 }
}

/// Ask L2 to fetch the line holding `addr` (`prefetch.global.L2`): a hint that never faults
/// and that the thread does not wait for.
#[inline(always)]
pub fn prefetch_l2(addr: u64) {
    // SAFETY: a prefetch reads nothing into registers and is dropped for invalid addresses.
    unsafe { asm!("prefetch.global.L2 [{a}];", a = in(reg64) addr, options(nostack, readonly)) }
}

/// Wait until the grids this launch depends on have finished and their writes are visible
/// (`griddepcontrol.wait`, sm_90+). Every PTX entry point calls it first when the device build
/// targets sm_90 or later (`cfg(dynasoar_griddepcontrol)`, set by the PTX builder), so that the
/// host may launch any kernel of the module as a programmatic dependent launch: the driver
/// then readies the next kernel while the previous one finishes, and the kernel's threads wait
/// here instead of the stream waiting between the two. In a launch without that attribute the
/// wait returns at once. Without the cfg (older GPUs, whose PTX has no such instruction) it is
/// nothing.
#[inline(always)]
pub fn wait_for_prior_grids() {
    // SAFETY: the instruction has no operands and only delays the thread.
    #[cfg(dynasoar_griddepcontrol)]
    unsafe {
        asm!("griddepcontrol.wait;", options(nostack))
    }
}

/// `__threadfence()`: orders this thread's memory accesses at GPU scope.
#[inline(always)]
pub fn fence() {
    // SAFETY: a fence has no operands.
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) }
}

/// Suspend the thread for about `ns` nanoseconds (sm_70+).
#[inline(always)]
pub fn nanosleep(ns: u32) {
    // SAFETY: `nanosleep` only delays the calling thread.
    unsafe { asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nostack, nomem)) }
}

/// Index of the multiprocessor running this thread (`%smid`; allocators hash with it).
#[inline(always)]
pub fn sm_id() -> u32 {
    let id: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {id}, %smid;", id = out(reg32) id, options(nostack, nomem)) };
    id
}

/// This warp's slot on its multiprocessor (`%warpid`, below 64 on every GPU so far). PTX does
/// not promise it stays fixed over a warp's life (preemption may move a warp), so it may only
/// key data that tolerates sharing, like the allocator's owned-block hints.
#[inline(always)]
pub fn warp_slot() -> u32 {
    let id: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {id}, %warpid;", id = out(reg32) id, options(nostack, nomem)) };
    id
}

/// Cycle counter of this multiprocessor.
#[inline(always)]
pub fn clock64() -> u64 {
    // SAFETY: reads a special register.
    unsafe { llvm_clock64() as u64 }
}

/// Abort the kernel; the host sees the launch fail.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` ends the kernel.
    unsafe { nvptx::trap() }
}

#[cfg(feature = "panic-location")]
unsafe extern "C" {
    /// CUDA's device-side `printf` backend.
    fn vprintf(format: *const u8, args: *const u8) -> i32;
}

/// Trap on a device panic; with the `panic-location` feature, first print the panic's file and
/// line through `vprintf`.
///
/// Off by default: the out-of-line `vprintf` call makes ptxas reserve about 18 more registers in
/// every kernel that can panic (measured: a one-line kernel went from 8 to 50), which costs
/// occupancy everywhere. The host names the failing kernel either way.
#[inline(always)]
pub(crate) fn report_panic_and_trap(info: &core::panic::PanicInfo) -> ! {
    #[cfg(feature = "panic-location")]
    print_location(info);
    #[cfg(not(feature = "panic-location"))]
    let _ = info;
    trap()
}

#[cfg(feature = "panic-location")]
fn print_location(info: &core::panic::PanicInfo) {
    #[repr(C)]
    struct Args {
        file: *const u8,
        line: u32,
    }
    if let Some(loc) = info.location() {
        // CUDA's printf has no `%.*s`, and `&str` is not NUL-terminated: copy the (tail of the)
        // file name into a terminated buffer. This is the cold path of a failing kernel.
        let mut file = [0u8; 96];
        let bytes = loc.file().as_bytes();
        let tail = &bytes[bytes.len().saturating_sub(file.len() - 1)..];
        file[..tail.len()].copy_from_slice(tail);
        let args = Args { file: file.as_ptr(), line: loc.line() };
        // SAFETY: the format string is NUL-terminated, `file` is NUL-terminated, and `Args`
        // matches the conversions (`%s` a pointer at offset 0, `%u` an unsigned int at 8).
        unsafe {
            vprintf(
                b"dynasoar: device code panicked at %s:%u\n\0".as_ptr(),
                &args as *const Args as *const u8,
            );
        }
    }
}
