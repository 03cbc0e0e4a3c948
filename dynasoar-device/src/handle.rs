//! 64-bit object handles (paper section 3, Figure 6).
//!
//! | bits  | meaning                                                            |
//! |-------|--------------------------------------------------------------------|
//! | 0-5   | slot in the block                                                  |
//! | 6-47  | block address / 64 (blocks are 64-byte aligned)                    |
//! | 48-55 | objects per block of the object's runtime class (`N_T`)            |
//! | 56-63 | type id of the object's runtime class                              |
//!
//! Unlike the paper, which stores a block *index*, we store the block's address: a field's
//! address is then `block + 128 + N_T * offset_F + slot * size_F` (the data segment starts
//! [`DATA_OFFSET`](crate::block::DATA_OFFSET) bytes into the block), with no load of the heap
//! base. A field of a group (`#[group(name)]`, [`FieldPlace`]) lies in its group's array of
//! records instead: `block + 128 + N_T * offset_G + slot * size_G + (offset_F - offset_G)`.
//! The null handle is 0 (no block lives at address 0).
//!
//! Objects of a store that keeps each object whole at its own address (the AOS object store of
//! the comparison suite, `dynasoar-baselines`) have handles of a second shape: bits 0-47 the
//! object's address, bits 48-55 [`AOS_MARK`] (no block holds 255 objects), bits 56-63 the type
//! id. A field's address is then `address + offset_F`. Which formula applies is fixed per PTX
//! build (`cfg(dynasoar_aos)`, set by the AOS build: the GPU pays nothing for the other one);
//! on the host, where one build serves both stores, the mark decides.

/// Mask of the block address bits.
pub const BLOCK_ADDR_MASK: u64 = 0x0000_FFFF_FFFF_FFC0;

/// Highest address (exclusive) a heap may occupy for its blocks to be encodable.
pub const ADDRESS_LIMIT: u64 = 1 << 48;

/// Bits 48-55 of an AOS object's handle (a SOA handle has `N_T` there, at most 64).
pub const AOS_MARK: u64 = 0xFF;

/// Mask of an AOS object's address bits.
pub const AOS_ADDR_MASK: u64 = 0x0000_FFFF_FFFF_FFFF;

/// Where a field lies in its class's block: the array it belongs to starts `N_T * group` bytes
/// into the data segment and holds one `stride`-byte element per slot, of which the field takes
/// the bytes from `inner` on. A field of its own is its own array (`group` its offset in the
/// class's `repr(C)` value, `stride` its size, `inner` 0); the fields of a `#[group(name)]`
/// share one array of records (`group` the offset of the group's first field, `stride` the
/// bytes from it to the end of the last one, `inner` the field's offset from the first).
/// Either way the arrays tile the data segment as the fields tile the value, so the block's
/// size does not change. An AOS object's field is at `address + group + inner`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldPlace {
    pub group: u64,
    pub stride: u64,
    pub inner: u64,
}

impl FieldPlace {
    /// A field of `size` bytes at `offset`, stored in an array of its own.
    #[inline(always)]
    pub const fn own(offset: u64, size: u64) -> Self {
        FieldPlace { group: offset, stride: size, inner: 0 }
    }

    /// A field at `offset` of the group whose fields take the bytes `start..end` of the value.
    #[inline(always)]
    pub const fn grouped(start: u64, end: u64, offset: u64) -> Self {
        FieldPlace { group: start, stride: end - start, inner: offset - start }
    }
}

/// An untyped object handle.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct RawHandle(pub u64);

impl RawHandle {
    pub const NULL: RawHandle = RawHandle(0);

    /// The handle of `slot` in the block at `block_addr` (64-byte aligned, below 2^48).
    #[inline(always)]
    pub const fn new(block_addr: u64, slot: u32, objects_per_block: u32, type_id: u8) -> Self {
        RawHandle(
            (block_addr & BLOCK_ADDR_MASK)
                | (slot as u64 & 63)
                | ((objects_per_block as u64 & 0xff) << 48)
                | ((type_id as u64) << 56),
        )
    }

    /// The handle of the AOS object at `addr` (below 2^48) of class `type_id`.
    #[inline(always)]
    pub const fn aos(addr: u64, type_id: u8) -> Self {
        RawHandle((addr & AOS_ADDR_MASK) | (AOS_MARK << 48) | ((type_id as u64) << 56))
    }

    /// Whether this is the handle of an AOS object (see the module docs).
    #[inline(always)]
    pub const fn is_aos(self) -> bool {
        #[cfg(target_arch = "nvptx64")]
        {
            cfg!(dynasoar_aos)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            (self.0 >> 48) & 0xff == AOS_MARK
        }
    }

    /// The address of an AOS object.
    #[inline(always)]
    pub const fn aos_addr(self) -> u64 {
        self.0 & AOS_ADDR_MASK
    }

    #[inline(always)]
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }

    #[inline(always)]
    pub const fn slot(self) -> u32 {
        (self.0 & 63) as u32
    }

    #[inline(always)]
    pub const fn block_addr(self) -> u64 {
        self.0 & BLOCK_ADDR_MASK
    }

    /// Objects per block of the object's runtime class (1 to 64, stored as is in bits 48-55).
    #[inline(always)]
    pub const fn objects_per_block(self) -> u32 {
        ((self.0 >> 48) & 0xff) as u32
    }

    #[inline(always)]
    pub const fn type_id(self) -> u8 {
        (self.0 >> 56) as u8
    }

    /// Address of the field at `offset` (bytes into the per-object layout) of size `size`:
    /// its SOA array starts at `block + 128 + N_T * offset`; an AOS object's field is at
    /// `address + offset`.
    #[inline(always)]
    pub const fn field_addr(self, offset: u64, size: u64) -> u64 {
        self.place_addr(FieldPlace::own(offset, size))
    }

    /// Address of the field at `place` (see [`FieldPlace`]).
    #[inline(always)]
    pub const fn place_addr(self, place: FieldPlace) -> u64 {
        if self.is_aos() {
            return self.aos_addr() + place.group + place.inner;
        }
        self.block_addr()
            + crate::block::DATA_OFFSET
            + self.objects_per_block() as u64 * place.group
            + self.slot() as u64 * place.stride
            + place.inner
    }

    /// The same handle with its block address moved by `delta` (host-side checks of a heap
    /// copied from the device).
    pub const fn rebased(self, delta: i64) -> Self {
        if self.is_null() {
            return self;
        }
        let addr = (self.block_addr() as i64 + delta) as u64;
        RawHandle((self.0 & !BLOCK_ADDR_MASK) | (addr & BLOCK_ADDR_MASK))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips() {
        let h = RawHandle::new(0x7f12_3456_7840, 37, 45, 9);
        assert_eq!(h.slot(), 37);
        assert_eq!(h.block_addr(), 0x7f12_3456_7840);
        assert_eq!(h.objects_per_block(), 45);
        assert_eq!(h.type_id(), 9);
        assert!(!h.is_null());
        let full = RawHandle::new(0x40, 63, 64, 255);
        assert_eq!((full.objects_per_block(), full.type_id(), full.slot()), (64, 255, 63));
        assert!(RawHandle::NULL.is_null());
    }

    #[test]
    fn field_address_follows_the_soa_formula() {
        let h = RawHandle::new(0x1000, 5, 32, 1);
        // Field at offset 8 of size 4: array at block + 128 + 32 * 8, element 5.
        assert_eq!(h.field_addr(8, 4), 0x1000 + 128 + 256 + 20);
    }

    #[test]
    fn grouped_fields_lie_in_one_record_per_slot() {
        // A group of bytes 8..20 of the value (say a Vec2 and an f32), 32 objects per block:
        // its records start at block + 128 + 32 * 8, 12 bytes each.
        let h = RawHandle::new(0x1000, 5, 32, 1);
        let first = FieldPlace::grouped(8, 20, 8);
        let second = FieldPlace::grouped(8, 20, 16);
        assert_eq!(h.place_addr(first), 0x1000 + 128 + 256 + 5 * 12);
        assert_eq!(h.place_addr(second), h.place_addr(first) + 8);
        // The next slot's record follows the whole record; the group's array ends where the
        // array of the field after it (offset 20) begins.
        let last = RawHandle::new(0x1000, 31, 32, 1);
        assert_eq!(last.place_addr(second) + 4, last.field_addr(20, 4) - 31 * 4);
        // An own field's place is the SOA formula, and AOS objects ignore the stride.
        assert_eq!(h.place_addr(FieldPlace::own(8, 4)), h.field_addr(8, 4));
        assert_eq!(RawHandle::aos(0x7f00_0000_0000, 3).place_addr(second), 0x7f00_0000_0010);
    }

    #[test]
    fn aos_handles_address_fields_in_place() {
        let h = RawHandle::aos(0x7f00_1234_5670, 3);
        assert!(h.is_aos() && !h.is_null());
        assert_eq!(h.type_id(), 3);
        assert_eq!(h.field_addr(8, 4), 0x7f00_1234_5678);
        assert!(!RawHandle::new(0x1000, 5, 64, 3).is_aos());
    }

    #[test]
    fn rebase_moves_only_the_address() {
        let h = RawHandle::new(0x10_0000, 3, 12, 2);
        let r = h.rebased(-0x8_0000);
        assert_eq!(r.block_addr(), 0x8_0000);
        assert_eq!((r.slot(), r.objects_per_block(), r.type_id()), (3, 12, 2));
    }
}
