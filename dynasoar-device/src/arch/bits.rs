//! Bit tricks shared by the bitmaps, blocks and warp code.

/// Index of the `n`-th (0-based) set bit of `bits`; `bits` must have more than `n` set bits.
///
/// Clears the lowest set bit `n` times and takes the first set bit of what is left (paper
/// section 4.3), which is cheaper than scanning bit by bit.
#[inline(always)]
pub fn nth_set_bit(mut bits: u64, n: u32) -> u32 {
    for _ in 0..n {
        bits &= bits.wrapping_sub(1);
    }
    bits.trailing_zeros()
}

/// The lowest `k` set bits of `bits` (all of them if it has fewer than `k`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn lowest_set_bits(bits: u64, k: u32) -> u64 {
    if k >= bits.count_ones() {
        return bits;
    }
    let mut rest = bits;
    for _ in 0..k {
        rest &= rest.wrapping_sub(1);
    }
    bits & !rest
}

/// The lowest `k` set bits of `bits` (all of them if it has fewer than `k`).
///
/// On the host without a population count: x86-64's baseline has no `popcnt`, and the software
/// count cost the CPU backend's allocator about 25 instructions per object, where its groups of
/// one lane ask for one slot (one step of this loop).
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub fn lowest_set_bits(bits: u64, k: u32) -> u64 {
    bits & !clear_lowest_set_bits(bits, k)
}

/// `bits` less its lowest `k` set bits (0 if it has no more than `k`), one cleared bit per
/// step.
#[inline(always)]
pub fn clear_lowest_set_bits(bits: u64, k: u32) -> u64 {
    let (mut rest, mut k) = (bits, k);
    while k > 0 && rest != 0 {
        rest &= rest - 1;
        k -= 1;
    }
    rest
}

/// Position of a set bit of `bits`, searching from a rotation of `seed`: the first set bit at or
/// after `seed % 64`, wrapping around. `None` when `bits == 0`.
///
/// Threads that start from different seeds tend to pick different bits, which is the bitmap
/// rotation of paper section 4.2.
#[inline(always)]
pub fn rotate_find(bits: u64, seed: u32) -> Option<u32> {
    if bits == 0 {
        return None;
    }
    let shift = seed & 63;
    let rotated = bits.rotate_right(shift);
    Some((rotated.trailing_zeros() + shift) & 63)
}

/// `len` consecutive one bits from bit `start` (`start + len <= 64`): a stretch of a bitmap
/// container or of a block's slots.
#[inline(always)]
pub fn ones_from(start: u32, len: u32) -> u64 {
    (if len >= 64 { u64::MAX } else { (1u64 << len) - 1 }) << start
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn nth_set_bit_walks_set_bits_in_order() {
        let bits = 0b1011_0100u64 | (1 << 63);
        let expected = [2, 4, 5, 7, 63];
        for (n, want) in expected.iter().enumerate() {
            assert_eq!(nth_set_bit(bits, n as u32), *want);
        }
    }

    #[test]
    fn lowest_set_bits_takes_at_most_k() {
        assert_eq!(lowest_set_bits(0b1011_0100, 2), 0b0001_0100);
        assert_eq!(lowest_set_bits(0b1011_0100, 9), 0b1011_0100);
        assert_eq!(lowest_set_bits(0, 3), 0);
        assert_eq!(lowest_set_bits(u64::MAX, 64), u64::MAX);
        assert_eq!(lowest_set_bits(u64::MAX, 0), 0);
    }

    #[test]
    fn rotate_find_wraps_around_from_the_seed() {
        let bits = (1u64 << 3) | (1 << 40);
        assert_eq!(rotate_find(bits, 0), Some(3));
        assert_eq!(rotate_find(bits, 4), Some(40));
        assert_eq!(rotate_find(bits, 41), Some(3));
        assert_eq!(rotate_find(bits, 64 + 4), Some(40));
        assert_eq!(rotate_find(0, 7), None);
        assert_eq!(rotate_find(1 << 63, 63), Some(63));
    }
}
