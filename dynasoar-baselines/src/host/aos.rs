//! Host side of the AOS object store ([`crate::aos`]): objects of an allocator's classes
//! allocated one by one from a general-purpose allocator, with per-class pointer tables and the
//! compaction that runs before each `parallel_do`; on BitmapAlloc, per-class allocation bitmaps
//! over its slots and a listing per class instead.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::aos::kernels::{
    AOS_CLEAR, AOS_FILTER, AOS_LIST, AOS_MARK, AOS_RELEASE, AosListParams, AosParams, RELEASE_ONLY,
};
use crate::aos::{AOS_MAGIC, AosClass, AosHeader, SlotIndex};
use crate::malloc::bitmap::SlotPool;
use crate::malloc::{HEADER_BYTES, MallocKind};
use dynasoar_device::StorePtr;
use dynasoar_device::bitmap::BitmapGeometry;
use dynasoar_device::heap::MAX_CLASSES;
use dynasoar_device::{ClassInfo, errors};

use std::any::Any;

use super::malloc::MallocHeap;
use dynasoar_device::RawHandle;
use dynasoar_host::heap::HeapStats;
use dynasoar_host::{Buffer, Executor, Grid, HostStore};
use dynasoar_host::{Error, KernelNames, Result};

/// Most objects a class's table holds (counts are 32-bit).
const MAX_CAPACITY: u64 = u32::MAX as u64 - 1;

/// How many objects each class's table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableCapacity {
    /// This many, for every class.
    Objects(u64),
    /// As many of the class's objects as this many bytes hold.
    ForBytes(u64),
}

/// An AOS object store in device memory.
pub struct AosHeap {
    header: Buffer<AosHeader>,
    /// Per concrete class: its two lists and its deleted array, `3 * capacity` entries.
    tables: Vec<Buffer<u64>>,
    hash: Buffer<u64>,
    malloc: MallocHeap,
    classes: Vec<ClassInfo>,
    capacity: Vec<u64>,
    grid: Grid,
    /// On BitmapAlloc: the per-class allocation bitmaps and listings.
    bitmaps: Option<ClassBitmaps>,
}

/// The per-class allocation bitmaps of a store on BitmapAlloc (see [`crate::aos`]).
struct ClassBitmaps {
    /// Where the slots lie and the bitmaps' geometry, as in the header.
    index: SlotIndex,
    /// Per class (by type id; `None` for abstract classes): its allocation bitmap and its
    /// listing (two words per level-0 container).
    classes: Vec<Option<(Buffer<u64>, Buffer<u64>)>>,
    /// The deferred frees, one bit per slot (level 0 only).
    deferred: Buffer<u64>,
    /// Per class: the parity of its last listing.
    parity: Vec<AtomicU32>,
}

impl ClassBitmaps {
    /// Bitmaps over the slots of the BitmapAlloc region `malloc`, for `classes`; the header's
    /// fields and the classes' addresses filled in.
    fn new(
        exec: &Executor,
        malloc: &MallocHeap,
        param: u64,
        classes: &[ClassInfo],
        header: &mut AosHeader,
    ) -> Result<Self> {
        let pool = SlotPool::plan(malloc.bytes().saturating_sub(HEADER_BYTES), param);
        let geometry = BitmapGeometry::new(pool.slots).ok_or_else(|| {
            Error::HeapConfig(format!(
                "a heap of {} bytes holds no slot of {} bytes of BitmapAlloc",
                malloc.bytes(),
                pool.slot_bytes
            ))
        })?;
        let words = geometry.level_len[0] as usize;
        let deferred = exec.alloc_zeroed::<u64>(words)?;
        let index = SlotIndex {
            pool: malloc.ptr().addr() + HEADER_BYTES + pool.pool_offset,
            slot_bytes: pool.slot_bytes,
            deferred: deferred.ptr().addr(),
            geometry,
        };
        let mut buffers = Vec::new();
        for (i, c) in classes.iter().enumerate() {
            if c.is_abstract {
                buffers.push(None);
                continue;
            }
            let bitmap = exec.alloc_zeroed::<u64>(geometry.containers as usize)?;
            let listing = exec.alloc_zeroed::<u64>(2 * words)?;
            header.classes[i].bitmap = bitmap.ptr().addr();
            header.classes[i].listed = listing.ptr().addr();
            buffers.push(Some((bitmap, listing)));
        }
        header.class_bitmaps = 1;
        header.slots = index;
        let parity = classes.iter().map(|_| AtomicU32::new(0)).collect();
        Ok(ClassBitmaps { index, classes: buffers, deferred, parity })
    }

    /// Level 0 of class `class`'s allocation bitmap (empty for a class without one).
    fn level0(&self, exec: &Executor, class: u8) -> Result<Vec<u64>> {
        match self.classes.get(class as usize) {
            Some(Some((bitmap, _))) => exec.read(bitmap, 0, self.index.geometry.level_len[0] as usize),
            _ => Ok(Vec::new()),
        }
    }

    /// Handles of the objects of class `class`, from its bitmap.
    fn handles(&self, exec: &Executor, class: u8) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        for (w, mut bits) in self.level0(exec, class)?.into_iter().enumerate() {
            while bits != 0 {
                let slot = w as u64 * 64 + bits.trailing_zeros() as u64;
                bits &= bits - 1;
                out.push(RawHandle::aos(self.index.pool + slot * self.index.slot_bytes, class).0);
            }
        }
        Ok(out)
    }

    /// Objects of class `class`, from its bitmap.
    fn count(&self, exec: &Executor, class: u8) -> Result<u64> {
        Ok(self.level0(exec, class)?.iter().map(|w| w.count_ones() as u64).sum())
    }
}

impl AosHeap {
    /// A store for `classes` (an allocator's, in type-id order) whose objects come from a
    /// general-purpose allocator of `kind` managing `heap_bytes`, each class's table holding
    /// `capacity` objects.
    pub fn new(
        exec: &Executor,
        kind: MallocKind,
        heap_bytes: u64,
        classes: &[ClassInfo],
        capacity: TableCapacity,
    ) -> Result<Self> {
        if classes.len() > MAX_CLASSES {
            return Err(Error::HeapConfig(format!(
                "{} classes; a store holds 1 to {MAX_CLASSES}",
                classes.len()
            )));
        }
        let caps = kind.caps();
        let concrete: Vec<&ClassInfo> = classes.iter().filter(|c| !c.is_abstract).collect();
        let largest = concrete.iter().map(|c| c.size).max().unwrap_or(8) as u64;
        for c in &concrete {
            if c.align > caps.align as usize {
                return Err(Error::HeapConfig(format!(
                    "class `{}` needs {}-byte alignment; allocator `{kind}` gives {} bytes",
                    c.name, c.align, caps.align
                )));
            }
            if c.size as u64 > caps.max_size as u64 {
                return Err(Error::HeapConfig(format!(
                    "class `{}` has {} bytes; allocator `{kind}` serves at most {} bytes",
                    c.name, c.size, caps.max_size
                )));
            }
        }
        // BitmapAlloc's slots must hold the largest class.
        let param = if kind == MallocKind::Bitmap { largest.next_multiple_of(16) } else { 0 };
        let malloc = MallocHeap::new(exec, kind, heap_bytes, param)?;

        let mut header = AosHeader {
            magic: AOS_MAGIC,
            region: malloc.ptr().addr(),
            hash: 0,
            hash_capacity: 0,
            num_classes: classes.len() as u32,
            errors: 0,
            failed: 0,
            class_bitmaps: 0,
            _reserved: [0; 4],
            slots: SlotIndex { pool: 0, slot_bytes: 0, deferred: 0, geometry: ONE_BIT },
            classes: [AosClass::default(); MAX_CLASSES],
        };
        // On BitmapAlloc, the paper's design: one allocation bitmap per class over the slots,
        // used by `parallel_do` and `device_do`; no pointer tables.
        let bitmaps = if kind == MallocKind::Bitmap {
            Some(ClassBitmaps::new(exec, &malloc, param, classes, &mut header)?)
        } else {
            None
        };
        let mut tables = Vec::new();
        let mut capacities = Vec::new();
        for (i, c) in classes.iter().enumerate() {
            if let Some(b) = &bitmaps {
                // Every slot can hold an object of any class.
                capacities.push(if c.is_abstract { 0 } else { b.index.geometry.bits });
                continue;
            }
            let cap = if c.is_abstract {
                0
            } else {
                match capacity {
                    TableCapacity::Objects(n) => n,
                    TableCapacity::ForBytes(bytes) => bytes / c.size.max(1) as u64,
                }
                .clamp(1, MAX_CAPACITY)
            };
            capacities.push(cap);
            if cap == 0 {
                continue;
            }
            let table = exec.alloc_zeroed::<u64>(3 * cap as usize)?;
            let base = table.ptr().addr();
            header.classes[i] = AosClass {
                lists: [base, base + 8 * cap],
                deleted: base + 16 * cap,
                capacity: cap,
                size: c.size as u32,
                ..AosClass::default()
            };
            tables.push(table);
        }
        let hash_capacity = if bitmaps.is_some() {
            2
        } else {
            (2 * capacities.iter().sum::<u64>()).next_power_of_two().max(2)
        };
        let hash = exec.alloc_zeroed::<u64>(hash_capacity as usize)?;
        header.hash = hash.ptr().addr();
        header.hash_capacity = hash_capacity;
        let header = exec.upload(&[header])?;
        Ok(AosHeap {
            header,
            tables,
            hash,
            malloc,
            classes: classes.to_vec(),
            capacity: capacities,
            grid: exec.full_grid(256),
            bitmaps,
        })
    }

    /// Whether the store keeps per-class allocation bitmaps (its allocator is BitmapAlloc):
    /// do-alls then visit listings of the bitmaps, `device_do` walks them, and there are no
    /// pointer tables to compact.
    pub fn keeps_class_bitmaps(&self) -> bool {
        self.bitmaps.is_some()
    }

    /// With class bitmaps: give the slots freed since the last listing back to BitmapAlloc and,
    /// with `class`, list it for the next do-all over it: its parity.
    fn list_bitmap(&self, exec: &Executor, bitmaps: &ClassBitmaps, class: Option<u8>) -> Result<u32> {
        let (class, parity) = match class {
            Some(c) => {
                let parity = bitmaps.parity[c as usize].fetch_xor(1, Ordering::Relaxed) ^ 1;
                (c as u32, parity)
            }
            None => (RELEASE_ONLY, 0),
        };
        exec.launch(&AOS_LIST, self.grid, AosListParams { store: self.header.ptr(), class, parity })?;
        Ok(parity)
    }

    /// With class bitmaps: the entries (non-empty containers) of each class's last listing, in
    /// type-id order (each covers 64 slots); `None` without class bitmaps.
    pub fn listed_containers(&self, exec: &Executor) -> Result<Option<Vec<u64>>> {
        let Some(bitmaps) = &self.bitmaps else { return Ok(None) };
        let header = self.header(exec)?;
        Ok(Some(
            (0..self.classes.len())
                .map(|i| {
                    let parity = bitmaps.parity[i].load(Ordering::Relaxed) as usize & 1;
                    header.classes[i].listed_counts[parity] as u64
                })
                .collect(),
        ))
    }

    /// The store, for kernel parameters.
    pub fn ptr(&self) -> StorePtr {
        self.header.ptr().cast()
    }

    /// The general-purpose allocator underneath.
    pub fn malloc(&self) -> &MallocHeap {
        &self.malloc
    }

    /// Remove the objects freed since the last compaction from the tables and give their
    /// memory back to the allocator; afterwards a do-all visits exactly the live objects.
    /// With class bitmaps there is nothing to compact: the slots freed since the last listing
    /// go back to BitmapAlloc.
    pub fn compact(&self, exec: &Executor) -> Result<()> {
        if let Some(bitmaps) = &self.bitmaps {
            return self.list_bitmap(exec, bitmaps, None).map(|_| ());
        }
        let params = AosParams { store: self.header.ptr() };
        exec.launch(&AOS_MARK, self.grid, params)?;
        exec.launch(&AOS_FILTER, self.grid, params)?;
        exec.launch(&AOS_RELEASE, self.grid, params)
    }

    /// The header as it is now (waits for queued kernels).
    pub fn header(&self, exec: &Executor) -> Result<AosHeader> {
        Ok(exec.read(&self.header, 0, 1)?[0])
    }

    /// Objects of each class (in type-id order) that the last compaction listed.
    pub fn listed(&self, exec: &Executor) -> Result<Vec<u64>> {
        if let Some(bitmaps) = &self.bitmaps {
            // The objects there are now (the bitmaps are always up to date).
            return (0..self.classes.len()).map(|i| bitmaps.count(exec, i as u8)).collect();
        }
        let header = self.header(exec)?;
        Ok((0..self.classes.len()).map(|i| header.classes[i].launch_count as u64).collect())
    }

    /// Handles of every object of class `class` that the last compaction listed.
    pub fn listed_handles(&self, exec: &Executor, class: u8) -> Result<Vec<u64>> {
        if let Some(bitmaps) = &self.bitmaps {
            return bitmaps.handles(exec, class);
        }
        let header = self.header(exec)?;
        let table = &header.classes[class as usize];
        let n = table.launch_count as usize;
        let Some(buffer) = self.table_of(class) else { return Ok(Vec::new()) };
        let list_start = if table.current & 1 == 0 { 0 } else { table.capacity as usize };
        exec.read(buffer, list_start, n)
    }

    fn table_of(&self, class: u8) -> Option<&Buffer<u64>> {
        let concrete_before = self.capacity[..class as usize].iter().filter(|&&c| c > 0).count();
        (self.capacity.get(class as usize).copied().unwrap_or(0) > 0).then(|| &self.tables[concrete_before])
    }

    /// Entries of each class's table (its most objects).
    pub fn capacity(&self) -> &[u64] {
        &self.capacity
    }

    /// Report (and clear) errors raised by device code since the last check, naming `kernels`.
    pub fn take_errors(&self, exec: &Executor, kernels: &[&'static str]) -> Result<()> {
        let header = self.header(exec)?;
        if header.errors != 0 {
            let cleared = AosHeader { errors: 0, failed: 0, ..header };
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
        let allocator = self.malloc.kind().name();
        let what = if header.errors & errors::TABLE_FULL != 0 {
            format!(
                "a class's object table is full ({} object(s) not created or not freed); give the \
                 runtime a larger `aos_capacity`",
                header.failed
            )
        } else if header.errors & errors::OUT_OF_MEMORY != 0 {
            format!("out of memory: {} object(s) not created; give the runtime a larger heap", header.failed)
        } else if header.errors & errors::DOUBLE_FREE != 0 {
            "an object was freed twice".to_string()
        } else {
            "a null handle was freed".to_string()
        };
        Err(Error::Malloc { allocator, kernels, what })
    }

    /// Forget every object: each is given back to the allocator (which then starts over, where
    /// it can) and the tables are emptied.
    pub fn reset(&self, exec: &Executor) -> Result<()> {
        exec.launch(&AOS_CLEAR, self.grid, AosParams { store: self.header.ptr() })?;
        exec.synchronize()?;
        let mut header = self.header(exec)?;
        for table in &self.tables {
            exec.zero(table)?;
        }
        exec.zero(&self.hash)?;
        if let Some(bitmaps) = &self.bitmaps {
            for (bitmap, listing) in bitmaps.classes.iter().flatten() {
                exec.zero(bitmap)?;
                exec.zero(listing)?;
            }
            exec.zero(&bitmaps.deferred)?;
        }
        for class in header.classes.iter_mut() {
            *class = AosClass {
                lists: class.lists,
                deleted: class.deleted,
                capacity: class.capacity,
                size: class.size,
                bitmap: class.bitmap,
                listed: class.listed,
                ..AosClass::default()
            };
        }
        header.errors = 0;
        header.failed = 0;
        exec.write_bytes(&self.header, 0, as_bytes(&header))?;
        if self.malloc.kind() == MallocKind::System { Ok(()) } else { self.malloc.reset(exec) }
    }
}

/// The geometry of a bitmap of one bit (the header's placeholder without class bitmaps).
const ONE_BIT: BitmapGeometry = match BitmapGeometry::new(1) {
    Some(geometry) => geometry,
    None => panic!("a bitmap of one bit exists"),
};

fn as_bytes(header: &AosHeader) -> &[u8] {
    // SAFETY: plain integers, read as their bytes.
    unsafe {
        std::slice::from_raw_parts(header as *const AosHeader as *const u8, std::mem::size_of::<AosHeader>())
    }
}

impl HostStore for AosHeap {
    fn name(&self) -> String {
        self.malloc.kind().name().to_string()
    }

    fn ptr(&self) -> StorePtr {
        AosHeap::ptr(self)
    }

    fn lists_classes(&self) -> bool {
        // With class bitmaps, each do-all lists its classes (and a listing stays right while
        // nothing changes its class); the tables are compacted by `prepare` instead.
        self.bitmaps.is_some()
    }

    fn streams(&self) -> bool {
        false
    }

    fn prepares(&self) -> bool {
        self.bitmaps.is_none()
    }

    fn prepare(&self, exec: &Executor) -> Result<()> {
        self.compact(exec)
    }

    fn list(&self, exec: &Executor, class: u8) -> Result<u32> {
        match &self.bitmaps {
            Some(bitmaps) => self.list_bitmap(exec, bitmaps, Some(class)),
            None => Ok(0),
        }
    }

    fn listed_objects(&self, exec: &Executor, class: &ClassInfo, parity: u32) -> Result<usize> {
        let table = &self.header(exec)?.classes[class.type_id as usize];
        Ok(match self.bitmaps {
            // At most 64 objects per listed container.
            Some(_) => table.listed_counts[parity as usize & 1] as usize * 64,
            None => table.launch_count as usize,
        })
    }

    fn block_threads(&self, _class: &ClassInfo, threads: u32) -> u32 {
        // The store's loop takes any grid.
        threads
    }

    fn take_errors(&self, exec: &Executor, kernels: &[&'static str]) -> Result<()> {
        AosHeap::take_errors(self, exec, kernels)
    }

    fn stats(&self, exec: &Executor, classes: &[ClassInfo]) -> Result<HeapStats> {
        self.compact(exec)?;
        let listed = self.listed(exec)?;
        Ok(HeapStats::from_object_counts(classes, &listed))
    }

    fn handles(&self, exec: &Executor, classes: &[u8]) -> Result<Vec<RawHandle>> {
        self.compact(exec)?;
        let mut out = Vec::new();
        for &class in classes {
            out.extend(self.listed_handles(exec, class)?.into_iter().map(RawHandle));
        }
        Ok(out)
    }

    fn reset(&self, exec: &Executor) -> Result<()> {
        AosHeap::reset(self, exec)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
