//! Host side of the BitmapAlloc store ([`crate::bitmap_store`]): BitmapAlloc's region, one
//! allocation bitmap and one list per class over its slots, and the listing before each
//! `parallel_do`.

use std::any::Any;
use std::sync::Mutex;

use crate::bitmap_store::kernels::{BITMAP_LIST, BitmapListParams};
use crate::bitmap_store::{BITMAP_MAGIC, BitmapClass, BitmapHeader};
use crate::malloc::bitmap::SlotPool;
use crate::malloc::{HEADER_BYTES, MallocKind};
use dynasoar_device::bitmap::BitmapGeometry;
use dynasoar_device::heap::MAX_CLASSES;
use dynasoar_device::{ClassInfo, RawHandle, StorePtr, errors};
use dynasoar_host::heap::HeapStats;
use dynasoar_host::{Buffer, Error, Executor, Grid, HostStore, KernelNames, Result};

use super::malloc::MallocHeap;

/// A BitmapAlloc store in device memory.
pub struct BitmapHeap {
    header: Buffer<BitmapHeader>,
    malloc: MallocHeap,
    /// Per class (by type id; `None` for abstract classes): its allocation bitmap and its list.
    class_buffers: Vec<Option<(Buffer<u64>, Buffer<u32>)>>,
    /// The deferred frees' bitmap.
    deferred: Buffer<u64>,
    classes: Vec<ClassInfo>,
    /// Address of slot 0 and the slot size.
    pool: u64,
    slot_bytes: u64,
    geometry: BitmapGeometry,
    /// The parity of the last listing.
    parity: Mutex<u32>,
    grid: Grid,
}

impl BitmapHeap {
    /// A store for `classes` (an allocator's, in type-id order) whose objects live in the slots
    /// of a BitmapAlloc region of `heap_bytes`, each slot holding the largest class.
    pub fn new(exec: &Executor, heap_bytes: u64, classes: &[ClassInfo]) -> Result<Self> {
        if classes.len() > MAX_CLASSES {
            return Err(Error::HeapConfig(format!(
                "{} classes; a store holds 1 to {MAX_CLASSES}",
                classes.len()
            )));
        }
        let kind = MallocKind::Bitmap;
        let caps = kind.caps();
        let concrete: Vec<&ClassInfo> = classes.iter().filter(|c| !c.is_abstract).collect();
        for c in &concrete {
            if c.align > caps.align as usize {
                return Err(Error::HeapConfig(format!(
                    "class `{}` needs {}-byte alignment; allocator `{kind}` gives {} bytes",
                    c.name, c.align, caps.align
                )));
            }
        }
        // The slots must hold the largest class.
        let largest = concrete.iter().map(|c| c.size).max().unwrap_or(8) as u64;
        let param = largest.max(1).next_multiple_of(16);
        if param > caps.max_size as u64 {
            return Err(Error::HeapConfig(format!(
                "a class has {largest} bytes; allocator `{kind}` serves at most {} bytes",
                caps.max_size
            )));
        }
        let malloc = MallocHeap::new(exec, kind, heap_bytes, param)?;
        let plan = SlotPool::plan(malloc.bytes().saturating_sub(HEADER_BYTES), param);
        let geometry = BitmapGeometry::new(plan.slots).ok_or_else(|| {
            Error::HeapConfig(format!(
                "a heap of {heap_bytes} bytes holds no slot of {} bytes of BitmapAlloc",
                plan.slot_bytes
            ))
        })?;
        if plan.slots >= u32::MAX as u64 {
            return Err(Error::HeapConfig(format!(
                "{} slots of BitmapAlloc; its store lists slots by 32-bit index: give it a smaller heap",
                plan.slots
            )));
        }
        let pool = malloc.ptr().addr() + HEADER_BYTES + plan.pool_offset;
        let deferred = exec.alloc_zeroed::<u64>(geometry.containers as usize)?;
        let mut header = BitmapHeader {
            magic: BITMAP_MAGIC,
            region: malloc.ptr().addr(),
            pool,
            slot_bytes: plan.slot_bytes,
            deferred: deferred.ptr().addr(),
            num_classes: classes.len() as u32,
            errors: 0,
            failed: 0,
            parity: 0,
            geometry,
            classes: [BitmapClass::default(); MAX_CLASSES],
        };
        let mut class_buffers = Vec::new();
        for (i, c) in classes.iter().enumerate() {
            if c.is_abstract {
                class_buffers.push(None);
                continue;
            }
            let bitmap = exec.alloc_zeroed::<u64>(geometry.containers as usize)?;
            let list = exec.alloc_zeroed::<u32>(geometry.bits as usize)?;
            header.classes[i] = BitmapClass {
                bitmap: bitmap.ptr().addr(),
                list: list.ptr().addr(),
                ..BitmapClass::default()
            };
            class_buffers.push(Some((bitmap, list)));
        }
        let header = exec.upload(&[header])?;
        Ok(BitmapHeap {
            header,
            malloc,
            class_buffers,
            deferred,
            classes: classes.to_vec(),
            pool,
            slot_bytes: plan.slot_bytes,
            geometry,
            parity: Mutex::new(0),
            grid: exec.full_grid(256),
        })
    }

    /// The store, for kernel parameters.
    pub fn ptr(&self) -> StorePtr {
        self.header.ptr().cast()
    }

    /// BitmapAlloc's region underneath.
    pub fn malloc(&self) -> &MallocHeap {
        &self.malloc
    }

    /// Slots of the pool: the most objects the store holds, of all classes together.
    pub fn slots(&self) -> u64 {
        self.geometry.bits
    }

    /// The header as it is now (waits for queued kernels).
    pub fn header(&self, exec: &Executor) -> Result<BitmapHeader> {
        Ok(exec.read(&self.header, 0, 1)?[0])
    }

    /// List every class changed since the last listing and give the slots freed since back to
    /// BitmapAlloc (queued); afterwards a do-all visits exactly the live objects.
    pub fn list_classes(&self, exec: &Executor) -> Result<()> {
        let mut parity = self.parity.lock().unwrap();
        *parity ^= 1;
        exec.launch(
            &BITMAP_LIST,
            self.grid,
            BitmapListParams { store: self.header.ptr(), parity: *parity, _reserved: 0 },
        )
    }

    /// Entries of each class's list (in type-id order) from the last listing.
    pub fn listed(&self, exec: &Executor) -> Result<Vec<u64>> {
        let header = self.header(exec)?;
        let parity = (header.parity & 1) as usize;
        Ok((0..self.classes.len()).map(|i| header.classes[i].counts[parity] as u64).collect())
    }

    /// Level 0 of class `class`'s allocation bitmap (empty for a class without one).
    fn level0(&self, exec: &Executor, class: u8) -> Result<Vec<u64>> {
        match self.class_buffers.get(class as usize) {
            Some(Some((bitmap, _))) => exec.read(bitmap, 0, self.geometry.level_len[0] as usize),
            _ => Ok(Vec::new()),
        }
    }

    /// Handles of the live objects of class `class`, from its bitmap.
    pub fn live_handles(&self, exec: &Executor, class: u8) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        for (w, mut bits) in self.level0(exec, class)?.into_iter().enumerate() {
            while bits != 0 {
                let slot = w as u64 * 64 + bits.trailing_zeros() as u64;
                bits &= bits - 1;
                out.push(RawHandle::aos(self.pool + slot * self.slot_bytes, class).0);
            }
        }
        Ok(out)
    }

    /// Live objects of each class (in type-id order), from their bitmaps.
    pub fn live(&self, exec: &Executor) -> Result<Vec<u64>> {
        (0..self.classes.len())
            .map(|class| Ok(self.level0(exec, class as u8)?.iter().map(|w| w.count_ones() as u64).sum()))
            .collect()
    }

    /// Report (and clear) errors raised by device code since the last check, naming `kernels`.
    pub fn take_errors(&self, exec: &Executor, kernels: &[&'static str]) -> Result<()> {
        let header = self.header(exec)?;
        if header.errors != 0 {
            let cleared = BitmapHeader { errors: 0, failed: 0, ..header };
            exec.write_bytes(&self.header, 0, as_bytes(&cleared))?;
        }
        // The allocator's own report comes first: it says why objects could not be made.
        self.malloc.take_errors(exec, kernels)?;
        if header.errors == 0 {
            return Ok(());
        }
        let kernels = KernelNames(kernels.to_vec());
        if header.errors & errors::UNDECLARED_CHANGE != 0 {
            return Err(Error::UndeclaredChange { kernels });
        }
        if header.errors & errors::FREED_ITERATED != 0 {
            return Err(Error::FreedIterated { kernels });
        }
        let what = if header.errors & errors::OUT_OF_MEMORY != 0 {
            format!("out of memory: {} object(s) not created; give the runtime a larger heap", header.failed)
        } else if header.errors & errors::DOUBLE_FREE != 0 {
            "an object was freed twice".to_string()
        } else if header.errors & errors::NULL_HANDLE != 0 {
            "a null handle was freed".to_string()
        } else {
            "the store's class bitmaps or lists are inconsistent (internal error)".to_string()
        };
        Err(Error::Malloc { allocator: MallocKind::Bitmap.name(), kernels, what })
    }

    /// Forget every object: the bitmaps, lists and state are zeroed and BitmapAlloc starts over.
    pub fn reset(&self, exec: &Executor) -> Result<()> {
        exec.synchronize()?;
        for (bitmap, list) in self.class_buffers.iter().flatten() {
            exec.zero(bitmap)?;
            exec.zero(list)?;
        }
        exec.zero(&self.deferred)?;
        let mut header = self.header(exec)?;
        for class in header.classes.iter_mut() {
            *class = BitmapClass { bitmap: class.bitmap, list: class.list, ..BitmapClass::default() };
        }
        header.errors = 0;
        header.failed = 0;
        header.parity = 0;
        *self.parity.lock().unwrap() = 0;
        exec.write_bytes(&self.header, 0, as_bytes(&header))?;
        self.malloc.reset(exec)
    }
}

fn as_bytes(header: &BitmapHeader) -> &[u8] {
    // SAFETY: plain integers, read as their bytes.
    unsafe {
        std::slice::from_raw_parts(
            header as *const BitmapHeader as *const u8,
            std::mem::size_of::<BitmapHeader>(),
        )
    }
}

impl HostStore for BitmapHeap {
    fn name(&self) -> String {
        MallocKind::Bitmap.name().to_string()
    }

    fn ptr(&self) -> StorePtr {
        BitmapHeap::ptr(self)
    }

    fn lists_classes(&self) -> bool {
        // One launch lists every changed class before each `parallel_do` (`prepare`), so that
        // `device_do` finds every class listed too.
        false
    }

    fn streams(&self) -> bool {
        false
    }

    fn prepares(&self) -> bool {
        true
    }

    fn prepare(&self, exec: &Executor) -> Result<()> {
        self.list_classes(exec)
    }

    fn list(&self, _exec: &Executor, _class: u8) -> Result<u32> {
        Ok(0)
    }

    fn listing_state(&self) -> u64 {
        // The parity of the last listing: the next listing writes the other one into the
        // header and flags the classes changed under it, so a captured step replays only in
        // the state it was captured in.
        *self.parity.lock().unwrap() as u64
    }

    fn set_listing_state(&self, state: u64) {
        *self.parity.lock().unwrap() = (state & 1) as u32;
    }

    fn list_into_state(&self, exec: &Executor, _classes: &[ClassInfo], state: u64) -> Result<()> {
        // One listing of every class flips the one parity.
        if self.listing_state() != state & 1 { self.list_classes(exec) } else { Ok(()) }
    }

    fn listed_objects(&self, exec: &Executor, class: &ClassInfo, _parity: u32) -> Result<usize> {
        let header = self.header(exec)?;
        Ok(header.classes[class.type_id as usize].counts[(header.parity & 1) as usize] as usize)
    }

    fn block_threads(&self, _class: &ClassInfo, threads: u32) -> u32 {
        // The store's loop takes any grid.
        threads
    }

    fn take_errors(&self, exec: &Executor, kernels: &[&'static str]) -> Result<()> {
        BitmapHeap::take_errors(self, exec, kernels)
    }

    fn stats(&self, exec: &Executor, classes: &[ClassInfo]) -> Result<HeapStats> {
        Ok(HeapStats::from_object_counts(classes, &self.live(exec)?))
    }

    fn handles(&self, exec: &Executor, classes: &[u8]) -> Result<Vec<RawHandle>> {
        let mut out = Vec::new();
        for &class in classes {
            out.extend(self.live_handles(exec, class)?.into_iter().map(RawHandle));
        }
        Ok(out)
    }

    fn reset(&self, exec: &Executor) -> Result<()> {
        BitmapHeap::reset(self, exec)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
