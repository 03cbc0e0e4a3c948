//! Handles packed into 32 bits, for scratch that holds many of them per thread.
//!
//! A [`Handle`] is 64 bits: the block's address, the slot, the class's objects per block and
//! its type id (see the `handle` module). Inside one heap the block's address is an index, and
//! the objects per block follow from the type id, so 32 bits hold the rest:
//!
//! | bits           | meaning                                                  |
//! |----------------|----------------------------------------------------------|
//! | 0 to t-1       | type id (t bits: enough for the allocator's classes)     |
//! | t to t+5       | slot                                                     |
//! | t+6 to 31      | block index + 1                                          |
//!
//! with 0 the null handle, so that zeroed memory holds null packed handles as it holds null
//! handles (a grid of them needs no fill before use). Where a thread keeps many handles in local memory, e.g.
//! the stack of a tree walk, half the bytes is half the traffic: a variant of Barnes-Hut's
//! force walk whose stack held packed entries took 7.9 s of a 4,000-step run against 14.7 s
//! with handles on an H200 (docs/performance-log.md, "Barnes-Hut against its AOS baseline").
//!
//! A [`Packer`] comes from [`Device::packer`](crate::Device::packer): only for a store that
//! keeps its objects in blocks (DynaSOAr's heap, not the AOS store of the comparison suite), an
//! allocator of at most [`MAX_CLASSES`] classes, and a heap of at most
//! [`Packer::MAX_BLOCKS`] blocks; otherwise `None`, and the caller keeps the 64-bit handles.

use core::fmt;
use core::marker::PhantomData;

use crate::handle::RawHandle;
use crate::object::Handle;
use crate::registry::{AllocatorSpec, Registered};
use crate::store::BlockSpan;

/// Most classes an allocator may have for its handles to pack: each class's objects per block
/// (at most 64, 7 bits) sit in one 64-bit constant that [`Packer::unpack`] shifts.
pub const MAX_CLASSES: usize = 8;

/// A [`Handle<T>`] packed into 32 bits by a [`Packer`] (see the module docs). It means
/// something only to a packer of the same heap.
#[repr(transparent)]
pub struct Packed<T> {
    bits: u32,
    _class: PhantomData<fn() -> T>,
}

impl<T> Packed<T> {
    /// The packed null handle.
    pub const NULL: Packed<T> = Packed::from_bits(0);

    #[inline(always)]
    const fn from_bits(bits: u32) -> Self {
        Packed { bits, _class: PhantomData }
    }

    #[inline(always)]
    pub const fn is_null(self) -> bool {
        self.bits == 0
    }

    /// The 32 bits.
    #[inline(always)]
    pub const fn bits(self) -> u32 {
        self.bits
    }
}

// SAFETY: `repr(transparent)` over a `u32`; all zeroes is the null handle.
unsafe impl<T: 'static> crate::plain::Plain for Packed<T> {}

impl<T> Clone for Packed<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Packed<T> {}

impl<T> PartialEq for Packed<T> {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        self.bits == other.bits
    }
}
impl<T> Eq for Packed<T> {}

impl<T> fmt::Debug for Packed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Packed({:#010x})", self.bits)
    }
}

/// Packs handles of one heap into 32 bits and back (see the module docs).
pub struct Packer<A> {
    /// Address of block 0 less one block (wrapping): the address that a packed block number
    /// (block index + 1) counts from.
    base: u64,
    _alloc: PhantomData<fn() -> A>,
}

impl<A> Clone for Packer<A> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for Packer<A> {}

impl<A: AllocatorSpec> Packer<A> {
    /// Bits of the type id.
    const TYPE_BITS: u32 = type_bits(A::CLASSES.len());

    /// Objects per block of each type id, 7 bits each (type id `i` at bit `7 * i`).
    const OBJECTS: u64 = objects_table::<A>();

    /// Most blocks a heap may have for its handles to pack (block numbers start at 1: the
    /// null handle keeps number 0).
    pub const MAX_BLOCKS: u64 = (1 << (32 - 6 - Self::TYPE_BITS)) - 1;

    /// Whether the handles of a heap of blocks `span` fit in 32 bits.
    #[inline(always)]
    pub fn packs(span: BlockSpan) -> bool {
        A::CLASSES.len() <= MAX_CLASSES && span.bytes == A::BLOCK_BYTES && span.count <= Self::MAX_BLOCKS
    }

    /// A packer for the blocks `span`, if its handles fit in 32 bits.
    #[inline(always)]
    pub(crate) fn new(span: BlockSpan) -> Option<Self> {
        Self::packs(span)
            .then_some(Packer { base: span.first.wrapping_sub(A::BLOCK_BYTES), _alloc: PhantomData })
    }

    /// The packer of the heap whose blocks are `span`, for the host (which reads packed
    /// handles back from the device): what [`Device::packer`](crate::Device::packer) gives
    /// kernels, where the handles fit in 32 bits.
    ///
    /// # Safety
    /// `span` must be the blocks of the heap whose handles this packer will unpack: the
    /// handles it makes name the objects of that heap.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn for_heap(span: BlockSpan) -> Option<Self> {
        Self::new(span)
    }

    /// `h` in 32 bits (`h` an object of this packer's heap, or null).
    #[inline(always)]
    pub fn pack<T>(&self, h: Handle<T>) -> Packed<T> {
        let raw = h.raw();
        if raw.is_null() {
            return Packed::NULL;
        }
        // A constant divisor: the division compiles to a multiplication. Counted from `base`,
        // block `i` is number `i + 1`.
        let number = (raw.block_addr().wrapping_sub(self.base) / A::BLOCK_BYTES) as u32;
        Packed::from_bits(((number << 6) | raw.slot()) << Self::TYPE_BITS | raw.type_id() as u32)
    }

    /// The type-id bits of `p` (0 for the null handle).
    #[inline(always)]
    const fn type_bits_of<T>(p: Packed<T>) -> u32 {
        p.bits & ((1 << Self::TYPE_BITS) - 1)
    }

    /// Type id of the object's runtime class (`None` for the null handle), without unpacking.
    #[inline(always)]
    pub fn type_id<T>(&self, p: Packed<T>) -> Option<u8> {
        (!p.is_null()).then_some(Self::type_bits_of(p) as u8)
    }

    /// Whether `p` names an object whose runtime class is `U` or a subclass of `U` (false for
    /// the null handle), without unpacking: a test of the low bits, as
    /// [`Obj::is`](crate::Obj::is) tests a handle's type id.
    #[inline(always)]
    pub fn is<U: Registered, T>(&self, p: Packed<T>) -> bool {
        !p.is_null() && U::SUBTREE & (1u64 << Self::type_bits_of(p)) != 0
    }

    /// The handle `p` was packed from.
    #[inline(always)]
    pub fn unpack<T>(&self, p: Packed<T>) -> Handle<T> {
        if p.is_null() {
            return Handle::NULL;
        }
        let type_id = Self::type_bits_of(p);
        let rest = p.bits >> Self::TYPE_BITS;
        let block = self.base.wrapping_add((rest >> 6) as u64 * A::BLOCK_BYTES);
        let objects = (Self::OBJECTS >> (7 * type_id)) as u32 & 127;
        // SAFETY: the fields of a handle of class `T` (or a subclass) that `pack` was given:
        // the same block, slot and type id, and the objects per block of that type id.
        unsafe { Handle::from_raw(RawHandle::new(block, rest & 63, objects, type_id as u8)) }
    }
}

/// Bits that hold every type id below `classes` (capped, for allocators that cannot pack).
const fn type_bits(classes: usize) -> u32 {
    let mut bits = 0;
    while bits < 6 && (1usize << bits) < classes {
        bits += 1;
    }
    bits
}

/// The objects per block of the first [`MAX_CLASSES`] classes, 7 bits each.
const fn objects_table<A: AllocatorSpec>() -> u64 {
    let mut table = 0u64;
    let mut i = 0;
    while i < A::CLASSES.len() && i < MAX_CLASSES {
        table |= (A::CLASSES[i].objects_per_block as u64 & 127) << (7 * i);
        i += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::class::ClassInfo;

    /// An allocator of three classes (64, 12 and 45 objects per block) in blocks of 4,224 bytes.
    struct Three;

    const fn info(type_id: u8, objects_per_block: u32) -> ClassInfo {
        ClassInfo {
            name: "C",
            type_id,
            objects_per_block,
            parent: None,
            is_abstract: false,
            size: 8,
            align: 8,
            subtree: 1 << type_id,
        }
    }

    impl AllocatorSpec for Three {
        const NAME: &'static str = "Three";
        const BLOCK_BYTES: u64 = 4224;
        const CLASSES: &'static [ClassInfo] = &[info(0, 64), info(1, 12), info(2, 45)];
        type Store = crate::heap::Heap<'static>;
    }

    const SPAN: BlockSpan = BlockSpan { first: 0x7f00_0010_0000, count: 5000, bytes: 4224 };

    #[test]
    fn handles_round_trip() {
        let packer = Packer::<Three>::new(SPAN).expect("a heap of 5,000 blocks packs");
        for (index, slot, class) in [(0u64, 0u32, 0u8), (4999, 63, 0), (17, 11, 1), (4998, 44, 2), (1, 5, 2)]
        {
            let objects = Three::CLASSES[class as usize].objects_per_block;
            let raw = RawHandle::new(SPAN.first + index * SPAN.bytes, slot, objects, class);
            // SAFETY: a test handle, never dereferenced.
            let h: Handle<u8> = unsafe { Handle::from_raw(raw) };
            let p = packer.pack(h);
            assert!(!p.is_null());
            assert_eq!(p.bits() & 3, class as u32, "type id in the low bits");
            assert_eq!(packer.type_id(p), Some(class));
            assert_eq!(p.bits() >> 8, index as u32 + 1, "block number: index + 1");
            assert_eq!(packer.unpack(p).raw(), raw, "block {index} slot {slot} class {class}");
        }
        assert!(packer.pack(Handle::<u8>::NULL).is_null());
        assert!(packer.unpack(Packed::<u8>::NULL).is_null());
        assert_eq!(packer.type_id(Packed::<u8>::NULL), None);
        assert_eq!(Packed::<u8>::NULL.bits(), 0, "zeroed memory holds null packed handles");
    }

    #[test]
    fn packers_exist_only_where_handles_fit() {
        assert_eq!(Packer::<Three>::MAX_BLOCKS, (1 << 24) - 1);
        let most = BlockSpan { count: Packer::<Three>::MAX_BLOCKS, ..SPAN };
        assert!(Packer::<Three>::new(most).is_some());
        // The last block's last slot of the last class is still not the null handle.
        let last = RawHandle::new(most.first + (most.count - 1) * most.bytes, 63, 45, 2);
        // SAFETY: a test handle, never dereferenced.
        let h: Handle<u8> = unsafe { Handle::from_raw(last) };
        assert!(!Packer::<Three>::new(most).unwrap().pack(h).is_null());
        assert!(Packer::<Three>::new(BlockSpan { count: most.count + 1, ..SPAN }).is_none());
        assert!(Packer::<Three>::new(BlockSpan { bytes: 4096, ..SPAN }).is_none(), "another block size");
    }

    #[test]
    fn type_bits_hold_every_type_id() {
        assert_eq!([type_bits(1), type_bits(2), type_bits(3), type_bits(4), type_bits(5)], [0, 1, 2, 2, 3]);
        assert_eq!(type_bits(8), 3);
    }
}
