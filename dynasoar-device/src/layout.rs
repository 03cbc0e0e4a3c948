//! Block geometry, computed at compile time from the sizes of a heap's classes (paper
//! section 3, "Block Size").
//!
//! An object of a class is laid out like a `#[repr(C)]` struct of its fields (inherited fields
//! first): field `F` has byte offset `offset_F`, aligned for its type, and the object has size
//! `S`. In a block holding `N` objects, field `F`'s SOA array starts `N * offset_F` bytes into
//! the data segment; since `offset_F` is a multiple of `F`'s alignment and the data segment is
//! 128-byte aligned (a cache line), every array is aligned, whatever `N` is. The data segment
//! holds 64 objects of a *sizing* class, `64 * S_sizing` bytes, and a class of size `S` gets
//! `min(64, floor(64 * S_sizing / S))` objects. An allocator's `#[blocks(compact)]` (the
//! default, the paper's) sizes by its smallest concrete class, so that class gets 64 objects and
//! larger ones fewer; `#[blocks(uniform)]` sizes by its largest, so that every class gets 64.

use crate::block::{BLOCK_ALIGN, DATA_OFFSET};

/// Size a class counts with: an empty class still takes one byte per object.
pub const fn effective_size(size: usize) -> u64 {
    if size == 0 { 1 } else { size as u64 }
}

/// The smallest class size among `sizes` (each at least 1).
pub const fn smallest_size(sizes: &[usize]) -> u64 {
    let mut min = u64::MAX;
    let mut i = 0;
    while i < sizes.len() {
        let s = effective_size(sizes[i]);
        if s < min {
            min = s;
        }
        i += 1;
    }
    min
}

/// The largest class size among `sizes` (each at least 1; `usize::MAX`, an abstract class's
/// entry, does not count).
pub const fn largest_size(sizes: &[usize]) -> u64 {
    let mut max = 0;
    let mut i = 0;
    while i < sizes.len() {
        let s = effective_size(sizes[i]);
        if sizes[i] != usize::MAX && s > max {
            max = s;
        }
        i += 1;
    }
    max
}

/// Bytes of the data segment of every block of a heap whose smallest class has `smallest` bytes.
pub const fn data_segment_bytes(smallest: u64) -> u64 {
    64 * smallest
}

/// Bytes of every block: header (padded to [`DATA_OFFSET`]) plus data segment, rounded up to
/// [`BLOCK_ALIGN`] so that every block's data segment starts on a cache line.
pub const fn block_bytes(smallest: u64) -> u64 {
    (DATA_OFFSET + data_segment_bytes(smallest)).div_ceil(BLOCK_ALIGN) * BLOCK_ALIGN
}

/// Objects per block of a class of `size` bytes in a heap whose smallest class has `smallest`.
pub const fn objects_per_block(size: usize, smallest: u64) -> u32 {
    let n = data_segment_bytes(smallest) / effective_size(size);
    if n > 64 { 64 } else { n as u32 }
}

/// Whether a class of `size` bytes fits a heap whose smallest class has `smallest` (a class
/// more than 64 times the smallest would get no object per block).
pub const fn fits(size: usize, smallest: u64) -> bool {
    effective_size(size) <= 64 * smallest
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn smallest_class_gets_64_objects() {
        let sizes = [8usize, 16, 40, 512];
        let s = smallest_size(&sizes);
        assert_eq!(s, 8);
        assert_eq!(block_bytes(s), 128 + 512);
        assert_eq!(objects_per_block(8, s), 64);
        assert_eq!(objects_per_block(16, s), 32);
        assert_eq!(objects_per_block(40, s), 12);
        assert_eq!(objects_per_block(512, s), 1);
        assert!(fits(512, s) && !fits(513, s));
    }

    /// Sized by the largest class (`#[blocks(uniform)]`), every class gets 64 objects; an
    /// abstract class's entry (`usize::MAX`) counts for neither end.
    #[test]
    fn sized_by_the_largest_class_every_class_gets_64_objects() {
        let sizes = [56usize, usize::MAX, 32, 32];
        assert_eq!((smallest_size(&sizes), largest_size(&sizes)), (32, 56));
        let l = largest_size(&sizes);
        assert_eq!(block_bytes(l), 128 + 64 * 56);
        for size in [1usize, 8, 32, 55, 56] {
            assert_eq!(objects_per_block(size, l), 64, "{size} bytes");
            assert!(fits(size, l));
        }
        assert_eq!(objects_per_block(56, smallest_size(&sizes)), 36, "compact: the paper's 36");
    }

    #[test]
    fn arrays_fit_the_data_segment() {
        for smallest in [1u64, 4, 12, 97] {
            for size in 1..=(64 * smallest as usize) {
                let n = objects_per_block(size, smallest) as u64;
                assert!(n >= 1 && n * size as u64 <= data_segment_bytes(smallest));
            }
        }
        for smallest in [1u64, 3, 4, 12, 97] {
            let bytes = block_bytes(smallest);
            assert_eq!(bytes % 128, 0);
            assert!(bytes >= DATA_OFFSET + data_segment_bytes(smallest));
        }
        assert_eq!(objects_per_block(0, 1), 64);
    }
}
