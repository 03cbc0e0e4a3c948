//! The host's object store seam: what a [`Runtime`](crate::Runtime) needs of the store its
//! objects live in. DynaSOAr's heap ([`DeviceHeap`]) implements [`HostStore`] here; the
//! comparison suite (`dynasoar-baselines`, feature `host`) implements it for its AOS store.
//! A [`StoreFactory`] makes one for a runtime ([`RuntimeBuilder::store`]); the default is
//! [`DynasoarStore`].
//!
//! [`RuntimeBuilder::store`]: crate::RuntimeBuilder::store

use std::any::Any;
use std::borrow::Cow;

use dynasoar_device::{ClassInfo, DevPtr, RankedPtr, RawHandle, StorePtr, do_all_block_threads};

use crate::backend::{Executor, ModuleCompile};
use crate::error::Result;
use crate::heap::{DeviceHeap, HeapClass, HeapStats, type_ids};

/// A model crate's PTX: the default build (DynaSOAr's heap) and, optionally, the build for the
/// comparison suite's AOS stores (`PtxBuilder::aos`), which those stores need, and the build
/// for its BitmapAlloc store with one allocation bitmap per class (`PtxBuilder::bitmap_alloc`),
/// which the `bitmap` allocator needs.
#[derive(Clone, Debug)]
pub struct ModelPtx {
    soa: Cow<'static, str>,
    aos: Option<Cow<'static, str>>,
    bitmap_alloc: Option<Cow<'static, str>>,
}

impl ModelPtx {
    /// The default build only.
    pub const fn new(soa: &'static str) -> Self {
        ModelPtx { soa: Cow::Borrowed(soa), aos: None, bitmap_alloc: None }
    }

    /// The default and the AOS builds.
    pub const fn with_aos(soa: &'static str, aos: &'static str) -> Self {
        ModelPtx { soa: Cow::Borrowed(soa), aos: Some(Cow::Borrowed(aos)), bitmap_alloc: None }
    }

    /// All three builds: the default, the AOS and the BitmapAlloc build.
    pub const fn with_bitmap_alloc(soa: &'static str, aos: &'static str, bitmap_alloc: &'static str) -> Self {
        ModelPtx {
            soa: Cow::Borrowed(soa),
            aos: Some(Cow::Borrowed(aos)),
            bitmap_alloc: Some(Cow::Borrowed(bitmap_alloc)),
        }
    }

    /// The default build.
    pub fn soa(&self) -> &str {
        &self.soa
    }

    /// The AOS build, if the app embedded one.
    pub fn aos(&self) -> Option<&str> {
        self.aos.as_deref()
    }

    /// The BitmapAlloc build, if the app embedded one.
    pub fn bitmap_alloc(&self) -> Option<&str> {
        self.bitmap_alloc.as_deref()
    }
}

impl From<&'static str> for ModelPtx {
    fn from(soa: &'static str) -> Self {
        ModelPtx::new(soa)
    }
}

impl From<String> for ModelPtx {
    fn from(soa: String) -> Self {
        ModelPtx { soa: Cow::Owned(soa), aos: None, bitmap_alloc: None }
    }
}

/// What a runtime is built with, for a [`StoreFactory`] to make its store.
#[derive(Clone, Copy, Debug)]
pub struct StoreSpec<'a> {
    /// Bytes of device memory the builder was given for the objects.
    pub heap_bytes: u64,
    /// The allocator's block size.
    pub block_bytes: u64,
    /// The allocator's classes, in type-id order.
    pub classes: &'a [ClassInfo],
}

/// Makes the store a runtime keeps its objects in.
pub trait StoreFactory: Send + Sync {
    /// The store's name, for messages (`dynasoar`, or a general allocator's).
    fn name(&self) -> String;

    /// The PTX build whose kernels run on this store.
    fn ptx<'a>(&self, ptx: &'a ModelPtx) -> Result<&'a str>;

    /// How the module must be compiled, if not as the executor options say.
    fn module_compile(&self) -> Option<ModuleCompile> {
        None
    }

    /// The store, on `exec`.
    fn create(&self, exec: &Executor, spec: StoreSpec<'_>) -> Result<Box<dyn HostStore>>;
}

/// An object store as the runtime uses it.
pub trait HostStore: Send + Sync + Any {
    /// The store's name, for messages.
    fn name(&self) -> String;

    /// The header address the object kernels receive.
    fn ptr(&self) -> StorePtr;

    /// Whether a class is listed for each launch ([`list`](Self::list)), and lists may be kept
    /// between launches that do not change the class.
    fn lists_classes(&self) -> bool;

    /// Whether do-alls may run the streaming loop (`DoAll::Streaming`).
    fn streams(&self) -> bool;

    /// Whether the store's lists must be brought up to date before launches over its objects
    /// ([`prepare`](Self::prepare)).
    fn prepares(&self) -> bool;

    /// Bring the store's lists up to date before launches over its objects (queued work,
    /// timed as the store's listing).
    fn prepare(&self, exec: &Executor) -> Result<()>;

    /// List `class` for the next launch over it; the launch's parity.
    fn list(&self, exec: &Executor, class: u8) -> Result<u32>;

    /// Whether [`list_several`](Self::list_several) lists several classes in one launch (else
    /// the runtime lists only the classes it must).
    fn lists_several_at_once(&self) -> bool {
        false
    }

    /// Whether a do-all's frees can keep a class's current list right (the device store's
    /// `ObjectStore::unlist`, asked for with `DoParams::keep`), so that a launch that only
    /// frees objects of a class leaves its list current.
    fn unlists(&self) -> bool {
        false
    }

    /// Have the next listings of `classes` (bits by type id) note what frees need to keep
    /// their lists right (see [`unlists`](Self::unlists)); the others' need not.
    fn note_entries(&self, _classes: u64) {}

    /// Make the allocation state of `classes` (bits by type id) exact again after launches
    /// whose frees did not wait for it (`ObjectStore::free_in_sole_launch`), before a launch
    /// that needs it so (queued work; see `Runtime`'s `unwaited`). A listing of a class does
    /// it too. Nothing to do for a store whose frees always wait.
    fn reactivate(&self, _exec: &Executor, _classes: u64) -> Result<()> {
        Ok(())
    }

    /// [`list`](Self::list) every class of `classes` (bits by type id), in as few launches as
    /// the store can; the parity of each (bit by type id). By default one `list` each.
    fn list_several(&self, exec: &Executor, classes: u64) -> Result<u64> {
        let mut parities = 0;
        for class in type_ids(classes) {
            parities |= (self.list(exec, class)? as u64 & 1) << class;
        }
        Ok(parities)
    }

    /// The host's state of the store's listings that the next [`list`](Self::list) calls
    /// depend on, as bits (the heap: each class's next parity; 0 for stores without such
    /// state). A captured step graph replays its listings with the state they were captured
    /// in (`Runtime::capture`).
    fn listing_state(&self) -> u64 {
        0
    }

    /// Set the host's state of the listings to `state`, a value of
    /// [`listing_state`](Self::listing_state): back to where it was after a capture (whose
    /// listings never ran), or to where a replayed step's listings leave it.
    fn set_listing_state(&self, state: u64) {
        let _ = state;
    }

    /// Run listings (real launches) that bring the listing state from what it is to `state`,
    /// for a replay of a step captured in `state` after steps run directly left it elsewhere.
    /// By default each bit is a class's parity (the heap's state): the classes of `classes`
    /// whose bits differ are listed once, which flips them. A store with another state
    /// overrides this.
    fn list_into_state(&self, exec: &Executor, classes: &[ClassInfo], state: u64) -> Result<()> {
        let differ = self.listing_state() ^ state;
        for class in classes.iter().filter(|c| differ & (1 << c.type_id) != 0) {
            self.list(exec, class.type_id)?;
        }
        Ok(())
    }

    /// Before a launch of a method with lanes over `class`: the address of the store's ranked
    /// list of `class` (`dynasoar_device::heap::ranked`), queued to be built anew first if
    /// `build`; null where the store keeps none (its `device_reduce` walks find the parts
    /// themselves).
    fn ranked_list(&self, exec: &Executor, class: u8, build: bool) -> Result<RankedPtr> {
        let _ = (exec, class, build);
        Ok(DevPtr::null())
    }

    /// At most how many objects of `class` the last listing (of `parity`) holds.
    fn listed_objects(&self, exec: &Executor, class: &ClassInfo, parity: u32) -> Result<usize>;

    /// Threads per block of a plain do-all or gather over `class`, at most `threads`.
    fn block_threads(&self, class: &ClassInfo, threads: u32) -> u32;

    /// Report the errors raised by device code since the last check, naming `kernels`.
    fn take_errors(&self, exec: &Executor, kernels: &[&'static str]) -> Result<()>;

    /// Blocks, objects and fragmentation per class.
    fn stats(&self, exec: &Executor, classes: &[ClassInfo]) -> Result<HeapStats>;

    /// Handles of every live object of each of `classes` (concrete ones).
    fn handles(&self, exec: &Executor, classes: &[u8]) -> Result<Vec<RawHandle>>;

    /// Free every object.
    fn reset(&self, exec: &Executor) -> Result<()>;

    /// The store itself, for store-specific calls (e.g. [`DeviceHeap::snapshot`]).
    fn as_any(&self) -> &dyn Any;
}

/// DynaSOAr's heap: the default store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DynasoarStore;

impl StoreFactory for DynasoarStore {
    fn name(&self) -> String {
        "dynasoar".to_string()
    }

    fn ptx<'a>(&self, ptx: &'a ModelPtx) -> Result<&'a str> {
        Ok(ptx.soa())
    }

    fn create(&self, exec: &Executor, spec: StoreSpec<'_>) -> Result<Box<dyn HostStore>> {
        let classes: Vec<HeapClass> = spec
            .classes
            .iter()
            .map(|c| HeapClass { name: c.name, objects_per_block: c.objects_per_block })
            .collect();
        Ok(Box::new(DeviceHeap::new(exec, spec.heap_bytes, spec.block_bytes, &classes)?))
    }
}

impl HostStore for DeviceHeap {
    fn name(&self) -> String {
        "dynasoar".to_string()
    }

    fn ptr(&self) -> StorePtr {
        DeviceHeap::ptr(self).cast()
    }

    fn lists_classes(&self) -> bool {
        true
    }

    fn streams(&self) -> bool {
        true
    }

    fn prepares(&self) -> bool {
        false
    }

    fn prepare(&self, _exec: &Executor) -> Result<()> {
        Ok(())
    }

    fn list(&self, exec: &Executor, class: u8) -> Result<u32> {
        self.enumerate(exec, class)
    }

    fn lists_several_at_once(&self) -> bool {
        self.enumeration() == crate::Enumeration::Flat
    }

    fn unlists(&self) -> bool {
        true
    }

    fn note_entries(&self, classes: u64) {
        DeviceHeap::note_entries(self, classes);
    }

    fn list_several(&self, exec: &Executor, classes: u64) -> Result<u64> {
        self.enumerate_several(exec, classes)
    }

    fn reactivate(&self, exec: &Executor, classes: u64) -> Result<()> {
        DeviceHeap::reactivate(self, exec, classes)
    }

    fn ranked_list(&self, exec: &Executor, class: u8, build: bool) -> Result<RankedPtr> {
        if build { self.rank(exec, class) } else { Ok(self.ranked_ptr()) }
    }

    fn listing_state(&self) -> u64 {
        self.parities()
    }

    fn set_listing_state(&self, state: u64) {
        self.set_parities(state)
    }

    fn listed_objects(&self, exec: &Executor, class: &ClassInfo, parity: u32) -> Result<usize> {
        let blocks = self.enumerated_blocks(exec, class.type_id, parity)?;
        Ok(blocks as usize * class.objects_per_block as usize)
    }

    fn block_threads(&self, class: &ClassInfo, threads: u32) -> u32 {
        do_all_block_threads(class.objects_per_block, threads)
    }

    fn take_errors(&self, exec: &Executor, kernels: &[&'static str]) -> Result<()> {
        DeviceHeap::take_errors(self, exec, kernels)
    }

    fn stats(&self, exec: &Executor, _classes: &[ClassInfo]) -> Result<HeapStats> {
        DeviceHeap::stats(self, exec)
    }

    fn handles(&self, exec: &Executor, classes: &[u8]) -> Result<Vec<RawHandle>> {
        let snapshot = self.snapshot(exec)?;
        Ok(classes.iter().flat_map(|&class| snapshot.live_objects(class)).collect())
    }

    fn reset(&self, exec: &Executor) -> Result<()> {
        DeviceHeap::reset(self, exec)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
