//! [`Runtime::by_index`]: a table of handles by index, made dense where the objects lie in the
//! order of their indices (see `ByIndex` in the device crate).

use std::any::Any;

use dynasoar_device::{AllocatorSpec, ByIndex, ClassSpec, Concrete, Handle, MemberOf};

use super::Runtime;
use crate::backend::Buffer;
use crate::error::{Error, Result};

impl<A: AllocatorSpec> Runtime<A> {
    /// The objects whose handles `table` holds by index (the handle of object `i` at `i`), for
    /// kernels: [`ByIndex::get`] computes a handle and [`ByIndex::index_of`] an index instead of
    /// reading a table where every handle is where a creation in index order on a fresh heap
    /// puts it (object `i` in slot `i % N` of the block `i / N` blocks after object 0's, `N` the
    /// class's objects per block); otherwise `get` reads the table and `index_of` says `None`.
    ///
    /// Reads the table once (waiting for the launches queued before), and keeps it for as
    /// long as the runtime lives. Make it after the objects are created and before any of
    /// them is freed: a handle of a freed object names whatever is made in its slot later.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the table holds more than `u32::MAX` entries, or a null
    /// entry; errors of reading the table.
    pub fn by_index<T>(&self, table: Buffer<Handle<T>>) -> Result<ByIndex<T>>
    where
        T: Concrete + ClassSpec + MemberOf<A>,
    {
        let class = <T as ClassSpec>::NAME;
        let len = u32::try_from(table.len()).map_err(|_| {
            Error::InvalidArgument(format!(
                "by_index: a table of {} {class} handles; at most {} fit (u32 indices)",
                table.len(),
                u32::MAX
            ))
        })?;
        let handles = self.exec.read_all(&table)?;
        if let Some(i) = handles.iter().position(|h| h.is_null()) {
            return Err(Error::InvalidArgument(format!(
                "by_index: entry {i} of the {class} table is null; fill every entry with its object's \
                 handle (after the creation, before any of them is freed)"
            )));
        }
        // Dense where the device's own rule (`ByIndex::get` of a dense value) gives every entry.
        let dense = (self.heap().is_some() && !handles.is_empty())
            .then(|| (handles[0].raw().block_addr(), A::BLOCK_BYTES))
            .filter(|&dense| {
                let computed = ByIndex::new(table.ptr(), len, Some(dense));
                handles.iter().enumerate().all(|(i, &h)| computed.get(i as u32) == h)
            });
        let index = ByIndex::new(table.ptr(), len, dense);
        self.kept.lock().expect("kept tables").push(Box::new(table));
        Ok(index)
    }
}

/// What [`Runtime::by_index`] keeps: its tables, which dense or not stay valid while the
/// runtime lives.
pub(super) type Kept = std::sync::Mutex<Vec<Box<dyn Any + Send>>>;
