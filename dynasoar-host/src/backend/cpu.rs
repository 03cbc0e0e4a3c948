//! The CPU backend: rayon runs kernel functions over an emulated grid.
//!
//! Every emulated GPU thread runs to completion on one OS thread (a warp has one lane, see
//! `dynasoar_device::arch`), thread blocks are distributed over a rayon pool, and a worker of
//! the pool is the multiprocessor (`arch::sm_id`) of the blocks it runs. Per emulated thread the
//! loop writes the thread's index and calls the kernel (`arch::run_blocks`). Kernels must not
//! rely on block-wide barriers or shared memory, which dynasoar's own kernels never use.

use std::alloc::Layout;
use std::panic::AssertUnwindSafe;
use std::ptr::NonNull;

use dynasoar_device::arch::run_blocks;
use dynasoar_device::{Kernel, Plain};
use rayon::prelude::*;

use super::Grid;
use crate::error::{Error, Result};

pub struct CpuExec {
    pool: rayon::ThreadPool,
}

impl CpuExec {
    pub fn new(threads: Option<usize>) -> Result<Self> {
        let mut builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("dynasoar-cpu-{i}"));
        if let Some(n) = threads {
            if n == 0 {
                return Err(Error::InvalidArgument("the CPU backend needs at least one thread".into()));
            }
            builder = builder.num_threads(n);
        }
        let pool =
            builder.build().map_err(|e| Error::InvalidArgument(format!("cannot start CPU threads: {e}")))?;
        Ok(CpuExec { pool })
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Run the kernel to completion. A panic in any emulated thread (a device-side panic or
    /// trap) becomes `Err` with its message.
    pub fn launch<P: Plain>(
        &self,
        kernel: &Kernel<P>,
        grid: Grid,
        params: P,
    ) -> std::result::Result<(), String> {
        self.run(kernel.host_fn(), grid, params)
    }

    /// Run `body`, a kernel's function, over `grid` with `params` (see [`launch`](Self::launch)).
    pub fn run<P: Plain>(&self, body: fn(P), grid: Grid, params: P) -> std::result::Result<(), String> {
        let (blocks, threads) = (grid.blocks, grid.threads);
        let run = || {
            if self.pool.current_num_threads() == 1 {
                // One worker: the calling thread runs the grid itself, as that worker would,
                // and spares the hand-over to it and back (a wake-up and a wait per launch).
                run_blocks(0..blocks, threads, blocks, 0, || body(params));
                return;
            }
            self.pool.install(|| {
                (0..blocks).into_par_iter().for_each(|block| {
                    // The worker is the block's multiprocessor: the threads one worker runs
                    // never overlap, so they can share its entries of per-multiprocessor state.
                    let sm = rayon::current_thread_index().unwrap_or(0) as u32;
                    run_blocks(block..block + 1, threads, blocks, sm, || body(params));
                })
            })
        };
        std::panic::catch_unwind(AssertUnwindSafe(run)).map_err(|payload| {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "device code panicked".into());
            format!("device code panicked: {msg}")
        })
    }
}

/// Zero-initialised host memory standing in for device memory, aligned like a CUDA allocation.
pub struct HostMem {
    ptr: NonNull<u8>,
    layout: Layout,
    len: usize,
}

// SAFETY: `HostMem` owns its allocation; concurrent access from kernels goes through raw
// pointers and the device crate's atomics, as on the GPU.
unsafe impl Send for HostMem {}
// SAFETY: as above.
unsafe impl Sync for HostMem {}

/// CUDA allocations are at least 256-byte aligned; match that so layouts agree.
const HOST_MEM_ALIGN: usize = 256;

impl HostMem {
    pub fn zeroed(len: usize) -> Result<Self> {
        let layout = Layout::from_size_align(len.max(1), HOST_MEM_ALIGN)
            .map_err(|_| Error::InvalidArgument(format!("a buffer of {len} bytes is too large")))?;
        // SAFETY: `layout` has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr)
            .ok_or_else(|| Error::InvalidArgument(format!("out of host memory allocating {len} bytes")))?;
        Ok(HostMem { ptr, layout, len })
    }

    pub fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the allocation holds `len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` excludes other host-side access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for HostMem {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}
