//! Host side of the AOS object store ([`crate::aos`]): objects of an allocator's classes
//! allocated one by one from a general-purpose allocator, with per-class pointer tables and the
//! compaction that runs before each `parallel_do`.

use crate::aos::kernels::{AOS_CLEAR, AOS_FILTER, AOS_MARK, AOS_RELEASE, AosParams};
use crate::aos::{AOS_MAGIC, AosClass, AosHeader};
use crate::malloc::MallocKind;
use dynasoar_device::StorePtr;
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
            _reserved: [0; 5],
            classes: [AosClass::default(); MAX_CLASSES],
        };
        let mut tables = Vec::new();
        let mut capacities = Vec::new();
        for (i, c) in classes.iter().enumerate() {
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
        let hash_capacity = (2 * capacities.iter().sum::<u64>()).next_power_of_two().max(2);
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
        })
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
    pub fn compact(&self, exec: &Executor) -> Result<()> {
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
        let header = self.header(exec)?;
        Ok((0..self.classes.len()).map(|i| header.classes[i].launch_count as u64).collect())
    }

    /// Handles of every object of class `class` that the last compaction listed.
    pub fn listed_handles(&self, exec: &Executor, class: u8) -> Result<Vec<u64>> {
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
        for class in header.classes.iter_mut() {
            *class = AosClass {
                lists: class.lists,
                deleted: class.deleted,
                capacity: class.capacity,
                size: class.size,
                ..AosClass::default()
            };
        }
        header.errors = 0;
        header.failed = 0;
        exec.write_bytes(&self.header, 0, as_bytes(&header))?;
        if self.malloc.kind() == MallocKind::System { Ok(()) } else { self.malloc.reset(exec) }
    }
}

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
        false
    }

    fn streams(&self) -> bool {
        false
    }

    fn prepares(&self) -> bool {
        true
    }

    fn prepare(&self, exec: &Executor) -> Result<()> {
        self.compact(exec)
    }

    fn list(&self, _exec: &Executor, _class: u8) -> Result<u32> {
        Ok(0)
    }

    fn listed_objects(&self, exec: &Executor, class: &ClassInfo, _parity: u32) -> Result<usize> {
        Ok(self.header(exec)?.classes[class.type_id as usize].launch_count as usize)
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
