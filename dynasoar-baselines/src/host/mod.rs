//! The comparison suite's host half: the general allocators' regions ([`MallocHeap`]), the AOS
//! object store ([`AosHeap`], a [`HostStore`]), BitmapAlloc's store with one allocation bitmap
//! per class ([`BitmapHeap`]), and the store a runtime keeps its objects in, by name
//! ([`StoreChoice`], the apps' `--allocator NAME`).

mod aos;
mod bitmap_store;
mod malloc;

use std::fmt;
use std::str::FromStr;

use dynasoar_host::{
    DynasoarStore, Error, Executor, HostStore, ModelPtx, ModuleCompile, Result, StoreFactory, StoreSpec,
};

pub use aos::{AosHeap, TableCapacity};
pub use bitmap_store::BitmapHeap;
pub use malloc::MallocHeap;

use crate::malloc::MallocKind;

/// Where a runtime keeps its objects: DynaSOAr's heap, or the AOS object store over one of
/// the general-purpose allocators (on BitmapAlloc, `bitmap`, its own store with one allocation
/// bitmap per class, as the paper built it). Parsed from the names the apps' `--allocator`
/// takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StoreChoice {
    /// DynaSOAr's SOA heap (the default).
    #[default]
    Dynasoar,
    /// The AOS object store over a general-purpose allocator.
    Malloc(MallocKind),
}

impl StoreChoice {
    /// Every store: DynaSOAr first, then each general allocator.
    pub fn all() -> impl Iterator<Item = StoreChoice> {
        std::iter::once(StoreChoice::Dynasoar).chain(MallocKind::ALL.iter().map(|&k| StoreChoice::Malloc(k)))
    }

    /// The name `--allocator` takes.
    pub fn name(self) -> &'static str {
        match self {
            StoreChoice::Dynasoar => "dynasoar",
            StoreChoice::Malloc(kind) => kind.name(),
        }
    }

    /// This store with the AOS store's tables sized as `capacity` says (default: as many of
    /// each class's objects as the heap holds). DynaSOAr's heap and BitmapAlloc's store have no
    /// tables: unchanged.
    pub fn with_tables(self, capacity: TableCapacity) -> Store {
        Store { choice: self, tables: Some(capacity) }
    }
}

impl fmt::Display for StoreChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(StoreChoice::name(*self))
    }
}

impl FromStr for StoreChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s == "dynasoar" {
            return Ok(StoreChoice::Dynasoar);
        }
        MallocKind::from_name(s).map(StoreChoice::Malloc).ok_or_else(|| {
            let names: Vec<&str> = StoreChoice::all().map(StoreChoice::name).collect();
            format!("unknown allocator `{s}`; one of: {}", names.join(", "))
        })
    }
}

/// A [`StoreChoice`] with its AOS tables' capacity: what [`RuntimeBuilder::store`] takes.
///
/// [`RuntimeBuilder::store`]: dynasoar_host::RuntimeBuilder::store
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Store {
    choice: StoreChoice,
    tables: Option<TableCapacity>,
}

impl From<StoreChoice> for Store {
    fn from(choice: StoreChoice) -> Self {
        Store { choice, tables: None }
    }
}

impl StoreFactory for Store {
    fn name(&self) -> String {
        self.choice.name().to_string()
    }

    fn ptx<'a>(&self, ptx: &'a ModelPtx) -> Result<&'a str> {
        match self.choice {
            StoreChoice::Dynasoar => DynasoarStore.ptx(ptx),
            // No fallback to the AOS build (pointer tables over BitmapAlloc): a run named
            // `bitmap` is always the paper's BitmapAlloc, with its per-class bitmaps.
            StoreChoice::Malloc(MallocKind::Bitmap) => ptx.bitmap_alloc().ok_or_else(|| {
                Error::InvalidArgument(
                    "store `bitmap` needs the model's BitmapAlloc PTX: BitmapAlloc keeps one \
                     allocation bitmap per class, compiled into a build of its own: build the model \
                     with `PtxBuilder::bitmap_alloc()` in build.rs as well and pass \
                     `ModelPtx::with_bitmap_alloc`"
                        .to_string(),
                )
            }),
            StoreChoice::Malloc(kind) => ptx.aos().ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "store `{kind}` needs the model's AOS PTX: the allocator keeps objects in AOS \
                     layout: build the model with `PtxBuilder::aos()` in build.rs and pass \
                     `ModelPtx::with_aos`"
                ))
            }),
        }
    }

    fn module_compile(&self) -> Option<ModuleCompile> {
        matches!(self.choice, StoreChoice::Malloc(_)).then_some(ModuleCompile::Relocatable)
    }

    fn create(&self, exec: &Executor, spec: StoreSpec<'_>) -> Result<Box<dyn HostStore>> {
        match self.choice {
            StoreChoice::Dynasoar => DynasoarStore.create(exec, spec),
            StoreChoice::Malloc(MallocKind::Bitmap) => {
                Ok(Box::new(BitmapHeap::new(exec, spec.heap_bytes, spec.classes)?))
            }
            StoreChoice::Malloc(kind) => {
                let capacity = self.tables.unwrap_or(TableCapacity::ForBytes(spec.heap_bytes));
                if let TableCapacity::Objects(0) = capacity {
                    return Err(Error::InvalidArgument("an AOS store's tables need room for objects".into()));
                }
                Ok(Box::new(AosHeap::new(exec, kind, spec.heap_bytes, spec.classes, capacity)?))
            }
        }
    }
}

impl StoreFactory for StoreChoice {
    fn name(&self) -> String {
        Store::from(*self).name()
    }

    fn ptx<'a>(&self, ptx: &'a ModelPtx) -> Result<&'a str> {
        Store::from(*self).ptx(ptx)
    }

    fn module_compile(&self) -> Option<ModuleCompile> {
        Store::from(*self).module_compile()
    }

    fn create(&self, exec: &Executor, spec: StoreSpec<'_>) -> Result<Box<dyn HostStore>> {
        Store::from(*self).create(exec, spec)
    }
}
