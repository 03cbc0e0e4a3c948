//! Objects by index: a table of handles that is computed instead of read where the objects lie
//! in the order of their indices.
//!
//! A grid of cells made by one `parallel_new` on a fresh heap lies block-full by block-full in
//! the order of its indices (`parallel_new` asks for block `first_block + k` for its `k`-th
//! block-full): cell `i` is slot `i % N` of the block `i / N` blocks after the first one, `N`
//! the class's objects per block. A model that finds a cell's neighbours by their indices then
//! needs no table, and no field holding their handles: [`ByIndex::get`] computes the handle,
//! and [`ByIndex::index_of`] an object's index from its handle, where a load of the table or
//! of a field would be one more dependent round trip to memory for each step of a walk.
//!
//! The host makes a [`ByIndex`] from a table of the handles by index
//! (`Runtime::by_index`), which it checks entry by entry: where every handle is where the
//! rule above puts it, the table is not read at all (*dense*); otherwise (a heap whose blocks
//! were taken, a store that does not keep its objects in blocks, such as the comparison
//! suite's AOS store) `get` reads the table and `index_of` returns `None`, so a model keeps a
//! way that does not need the index (a field holding the neighbours' handles, say).

use core::fmt;
use core::marker::PhantomData;

use crate::class::{ClassSpec, Concrete};
use crate::handle::RawHandle;
use crate::kernel::DevPtr;
use crate::object::Handle;
use crate::parallel::block_full;
use crate::plain::Plain;

/// Handles of `len` objects of class `T` by index (see the module docs): plain data that
/// kernels take as (part of) their argument.
#[repr(C)]
pub struct ByIndex<T> {
    /// The handles by index.
    table: DevPtr<Handle<T>>,
    /// Address of the block of index 0 where the table is dense, else 0.
    first: u64,
    /// Bytes from one block to the next.
    block_bytes: u64,
    /// `ceil(2^64 / block_bytes)`: `(d * magic) >> 64` is `d / block_bytes` for every
    /// multiple `d` of it below 2^64.
    magic: u64,
    /// Number of objects.
    len: u32,
    _pad: u32,
    _class: PhantomData<fn() -> T>,
}

impl<T> Clone for ByIndex<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ByIndex<T> {}

impl<T> fmt::Debug for ByIndex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByIndex")
            .field("len", &self.len)
            .field("dense", &(self.first != 0))
            .field("first", &format_args!("{:#x}", self.first))
            .finish()
    }
}

// SAFETY: `repr(C)` of a device pointer, three `u64` and two `u32` (no padding), and a
// zero-sized marker: any bytes are a valid value.
unsafe impl<T: 'static> Plain for ByIndex<T> {}

impl<T: Concrete + ClassSpec> ByIndex<T> {
    /// Objects per block of `T`: a constant, so the divisions by it are multiplications.
    const N: u32 = block_full::<T>() as u32;

    /// The handles of `table` (`len` of them, the handle of object `i` at `i`): dense, with
    /// index 0 in the block at `first` and blocks `block_bytes` apart (`dense`), or read from
    /// the table.
    /// The host builds it (`Runtime::by_index`), having checked the rule; a dense value whose
    /// handles are not where the rule puts them would name other objects.
    #[doc(hidden)]
    pub fn new(table: DevPtr<Handle<T>>, len: u32, dense: Option<(u64, u64)>) -> Self {
        let (first, block_bytes) = dense.unwrap_or((0, 1));
        let magic = (u64::MAX / block_bytes).wrapping_add(1);
        ByIndex { table, first, block_bytes, magic, len, _pad: 0, _class: PhantomData }
    }

    /// Number of objects.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the handles are computed, not read (see the module docs).
    #[inline(always)]
    pub fn is_dense(&self) -> bool {
        self.first != 0
    }

    /// The handle of object `i`; null where `i >= len`.
    #[inline(always)]
    pub fn get(&self, i: u32) -> Handle<T> {
        if i >= self.len {
            return Handle::NULL;
        }
        if self.is_dense() {
            let block = self.first + (i / Self::N) as u64 * self.block_bytes;
            // SAFETY: where the table is dense, object `i` of class `T` is slot `i % N` of
            // that block (the host checked every entry).
            unsafe { Handle::from_raw(RawHandle::new(block, i % Self::N, Self::N, T::TYPE_ID)) }
        } else {
            // SAFETY: `i < len`, the table's length, which the runtime keeps alive.
            unsafe { self.table.read(i as usize) }
        }
    }

    /// The index of the object `h`, where the table is dense and `h` is one of its objects;
    /// else `None`.
    #[inline(always)]
    pub fn index_of(&self, h: Handle<T>) -> Option<u32> {
        let raw = h.raw();
        if !self.is_dense() || raw.is_null() || raw.type_id() != T::TYPE_ID {
            return None;
        }
        // A handle below the first block wraps to an offset near 2^64: its quotient, and so its
        // index, is then far above `len`, as for a handle past the last block (the quotient is
        // the offset's, exact or one more, and `block * N` does not overflow: a block holds
        // more bytes than objects). So `index < len` alone says whether `h` is one of them.
        let offset = raw.block_addr().wrapping_sub(self.first);
        let block = ((offset as u128 * self.magic as u128) >> 64) as u64;
        let index = block * Self::N as u64 + raw.slot() as u64;
        (index < self.len as u64).then_some(index as u32)
    }
}
