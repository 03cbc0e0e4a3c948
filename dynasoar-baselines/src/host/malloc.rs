//! Host side of the general-purpose device allocators ([`crate::malloc`]): a region
//! of device memory holding one of them, created, initialised and checked from here.

use crate::malloc::bitmap::SlotPool;
use crate::malloc::kernels::{MALLOC_INIT, MallocInitParams};
use crate::malloc::{HEADER_BYTES, MallocKind, RegionHeader, RegionHeaderWords, errors};
use dynasoar_device::DevPtr;

use dynasoar_host::{Buffer, Executor};
use dynasoar_host::{Error, KernelNames, Result};

/// Threads per block of the initialisation kernels.
const INIT_THREADS: u32 = 256;

/// A region of device memory holding one general-purpose allocator, ready for kernels to
/// `malloc` and `free` from (pass [`ptr`](Self::ptr) to them).
pub struct MallocHeap {
    buffer: Buffer<u64>,
    kind: MallocKind,
    pool_bytes: u64,
}

impl MallocHeap {
    /// An allocator of `kind` managing `bytes` bytes (its metadata included), with its
    /// parameter `param` (0: the default; see [`MallocKind`]).
    ///
    /// CUDA's own allocator ([`MallocKind::System`]) keeps its heap outside the region: it is
    /// sized here to at least `bytes` (CUDA allows that only before the first kernel that uses
    /// it). On the CPU backend the C library's `malloc` stands in for it.
    pub fn new(exec: &Executor, kind: MallocKind, bytes: u64, param: u64) -> Result<Self> {
        let caps = kind.caps();
        if bytes < caps.min_region_bytes {
            return Err(Error::HeapConfig(format!(
                "allocator `{kind}` needs at least {} bytes; {bytes} were given",
                caps.min_region_bytes
            )));
        }
        // CUDA's allocator holds all of a `System` heap, and the large requests of allocators
        // that relay them as their originals do.
        if caps.uses_cuda_heap() && exec.kind() == dynasoar_host::BackendKind::Cuda {
            exec.set_device_malloc_heap(bytes as usize)?;
        }
        let region_bytes = if kind == MallocKind::System { HEADER_BYTES } else { bytes };
        let buffer = exec.alloc_zeroed::<u64>(region_bytes.div_ceil(8) as usize)?;
        let header = RegionHeaderWords {
            kind: kind as u32,
            multiprocessors: exec.multiprocessors() as u32,
            bytes: region_bytes,
            param,
            errors: 0,
            failed_mallocs: 0,
        };
        exec.write_bytes(&buffer, 0, header_bytes(&header))?;
        let heap = MallocHeap { buffer, kind, pool_bytes: bytes };
        heap.init(exec)?;
        Ok(heap)
    }

    fn init(&self, exec: &Executor) -> Result<()> {
        let grid = exec.full_grid(INIT_THREADS);
        for phase in 0..self.kind.init_phases() {
            exec.launch(&MALLOC_INIT, grid, MallocInitParams { region: self.ptr(), phase, _pad: 0 })?;
        }
        exec.synchronize()
    }

    /// Start over: every allocation is forgotten and the whole pool is free again (not for
    /// CUDA's own allocator, whose heap cannot be reset).
    pub fn reset(&self, exec: &Executor) -> Result<()> {
        if self.kind == MallocKind::System {
            return Err(Error::InvalidArgument(
                "CUDA's device allocator cannot be reset; free what was allocated instead".into(),
            ));
        }
        let header = RegionHeaderWords { errors: 0, failed_mallocs: 0, ..self.header(exec)? };
        exec.zero(&self.buffer)?;
        exec.write_bytes(&self.buffer, 0, header_bytes(&header))?;
        self.init(exec)
    }

    /// The region, for kernel parameters.
    pub fn ptr(&self) -> DevPtr<RegionHeader> {
        self.buffer.ptr().cast()
    }

    pub fn kind(&self) -> MallocKind {
        self.kind
    }

    /// Bytes the allocator manages (as given to [`new`](Self::new)).
    pub fn bytes(&self) -> u64 {
        self.pool_bytes
    }

    /// The address range of the allocator's memory (metadata and pool), or `None` for CUDA's
    /// allocator, whose heap is elsewhere.
    pub fn bounds(&self) -> Option<(u64, u64)> {
        (self.kind != MallocKind::System)
            .then(|| (self.ptr().addr() + HEADER_BYTES, self.ptr().addr() + self.buffer.len() as u64 * 8))
    }

    /// The header as it is now (waits for queued kernels).
    pub fn header(&self, exec: &Executor) -> Result<RegionHeaderWords> {
        let words = exec.read(&self.buffer, 0, std::mem::size_of::<RegionHeaderWords>() / 8)?;
        // SAFETY: `RegionHeaderWords` is plain integers, `words` holds exactly its bytes.
        Ok(unsafe { std::ptr::read_unaligned(words.as_ptr() as *const RegionHeaderWords) })
    }

    /// Report (and clear) what went wrong in kernels since the last check, naming `kernels`.
    pub fn take_errors(&self, exec: &Executor, kernels: &[&'static str]) -> Result<()> {
        let header = self.header(exec)?;
        if header.errors == 0 {
            return Ok(());
        }
        let cleared = RegionHeaderWords { errors: 0, failed_mallocs: 0, ..header };
        exec.write_bytes(&self.buffer, 0, header_bytes(&cleared))?;
        let mut what = describe_errors(self.kind, header.errors, header.failed_mallocs, self.pool_bytes);
        if header.errors & errors::OUT_OF_MEMORY != 0
            && let Some((free, pool)) = self.free_slots(exec, header.param)?
        {
            // Whether the pool was full or the searches missed free slots.
            what.push_str(&format!(
                "; {free} of its {} slots of {} bytes were free afterwards",
                pool.slots, pool.slot_bytes
            ));
        }
        Err(Error::Malloc { allocator: self.kind.name(), kernels: KernelNames(kernels.to_vec()), what })
    }

    /// BitmapAlloc's free slots now, counted from its free-slot bitmap, with its pool's plan
    /// (`None` for other allocators).
    fn free_slots(&self, exec: &Executor, param: u64) -> Result<Option<(u64, SlotPool)>> {
        if self.kind != MallocKind::Bitmap {
            return Ok(None);
        }
        let pool = SlotPool::plan(self.pool_bytes.saturating_sub(HEADER_BYTES), param);
        if pool.free_words == 0 {
            return Ok(Some((0, pool)));
        }
        let first = ((HEADER_BYTES + pool.free_offset) / 8) as usize;
        let words = exec.read(&self.buffer, first, pool.free_words as usize)?;
        Ok(Some((words.iter().map(|w| w.count_ones() as u64).sum(), pool)))
    }
}

/// What the error bits of a region mean, in words that say what to do.
pub fn describe_errors(kind: MallocKind, bits: u32, failed: u32, bytes: u64) -> String {
    let caps = kind.caps();
    let mut parts = Vec::new();
    if bits & errors::OUT_OF_MEMORY != 0 {
        parts.push(format!(
            "out of memory: {failed} malloc(s) returned null (pool of {bytes} bytes); give it a larger heap"
        ));
    }
    if bits & errors::TOO_LARGE != 0 {
        parts.push(format!(
            "a request of 0 bytes or over its largest size ({} bytes) returned null",
            caps.max_size
        ));
    }
    if bits & errors::INVALID_FREE != 0 {
        parts.push("a pointer it did not hand out was freed (or one was freed twice)".to_string());
    }
    if bits & errors::UNSUPPORTED != 0 {
        parts.push(format!("an operation `{kind}` does not support was asked for (see its documentation)"));
    }
    if bits & errors::OURO_WAIT_TIMEOUT != 0 {
        let waits: Vec<&str> = errors::OURO_WAIT_SITES
            .iter()
            .enumerate()
            .filter(|(site, _)| bits & (1 << (errors::OURO_WAIT_SITE_SHIFT + *site as u32)) != 0)
            .map(|(_, what)| *what)
            .collect();
        parts.push(format!(
            "a wait inside the allocator made no progress for several seconds and gave up (the \
             wait of {}): the operation failed (a malloc returned null, or a freed block was \
             lost); this is an allocator bug, please report it",
            if waits.is_empty() { "an unknown site".to_string() } else { waits.join("; and of ") }
        ));
    }
    parts.join("; ")
}

fn header_bytes(header: &RegionHeaderWords) -> &[u8] {
    // SAFETY: plain integers, read as their bytes.
    unsafe {
        std::slice::from_raw_parts(
            header as *const RegionHeaderWords as *const u8,
            std::mem::size_of::<RegionHeaderWords>(),
        )
    }
}
