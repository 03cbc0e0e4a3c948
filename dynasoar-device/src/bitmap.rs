//! Lock-free hierarchical bitmaps (paper section 4.1, Alg. 3-5).
//!
//! A bitmap of `N` bits is an array of 64-bit containers (level 0) plus, when `N > 64`, a nested
//! bitmap with one bit per container that is set iff the container has a set bit (level 1), and
//! so on up to a level of one container. Containers change only through atomic AND/OR; the
//! value an atomic returns tells the thread whether it set a container's first bit or cleared
//! its last, and then that thread, and only that one, updates the level above. Levels are thus
//! eventually consistent with their containers and exactly consistent once all operations have
//! finished (paper section 5.1).
//!
//! `set` and `clear` retry until *they* switched the bit (another thread may have the bit in
//! the target state only transiently, on its way to switching it back); `try_find_set` walks
//! the hierarchy top-down, picking in each container the first set bit at a rotation given by a
//! seed, so that warps with different seeds tend to pick different bits (paper section 4.2).

use core::marker::PhantomData;

use crate::arch::{Backoff, atomic::Atomic64, ones_from, rotate_find};

/// Most levels a bitmap can have: 64^6 = 2^36 bits.
pub const MAX_LEVELS: usize = 6;

/// The shape of a hierarchical bitmap of `bits` bits: how many containers each level has and
/// where each level starts. Level 0 holds the bits themselves; the last level has one container.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitmapGeometry {
    pub bits: u64,
    pub levels: u32,
    pub _reserved: u32,
    /// Index of the first container of each level.
    pub level_start: [u64; MAX_LEVELS],
    /// Number of containers of each level.
    pub level_len: [u64; MAX_LEVELS],
    /// Containers of all levels together.
    pub containers: u64,
}

impl BitmapGeometry {
    /// The geometry of a bitmap of `bits` bits (`1 <= bits <= 2^36`).
    pub const fn new(bits: u64) -> Option<Self> {
        if bits == 0 || bits > 1 << (6 * MAX_LEVELS) {
            return None;
        }
        let mut g = BitmapGeometry {
            bits,
            levels: 0,
            _reserved: 0,
            level_start: [0; MAX_LEVELS],
            level_len: [0; MAX_LEVELS],
            containers: 0,
        };
        let mut n = bits;
        loop {
            let len = n.div_ceil(64);
            g.level_start[g.levels as usize] = g.containers;
            g.level_len[g.levels as usize] = len;
            g.containers += len;
            g.levels += 1;
            if len == 1 {
                return Some(g);
            }
            n = len;
        }
    }

    /// Bytes taken by the containers of all levels.
    pub const fn bytes(&self) -> u64 {
        self.containers * 8
    }
}

impl BitmapGeometry {
    /// Index of the first container of `level` (`level < levels`).
    #[inline(always)]
    pub fn start(&self, level: u32) -> u64 {
        debug_assert!(level < self.levels);
        // SAFETY: `levels <= MAX_LEVELS` by construction and callers pass `level < levels`;
        // unchecked, so the hot paths carry no bounds-check panics.
        unsafe { *self.level_start.get_unchecked(level as usize) }
    }

    /// Number of containers of `level` (`level < levels`).
    #[inline(always)]
    pub fn len(&self, level: u32) -> u64 {
        debug_assert!(level < self.levels);
        // SAFETY: as for `start`.
        unsafe { *self.level_len.get_unchecked(level as usize) }
    }
}

/// A view of a hierarchical bitmap in memory shared by all threads.
#[derive(Clone, Copy)]
pub struct Bitmap<'a> {
    geometry: &'a BitmapGeometry,
    containers: *const Atomic64,
    _memory: PhantomData<&'a [Atomic64]>,
}

// SAFETY: a `Bitmap` is a shared view of atomics (like `&[Atomic64]`, which is Send + Sync).
unsafe impl Send for Bitmap<'_> {}
// SAFETY: as above.
unsafe impl Sync for Bitmap<'_> {}

impl<'a> Bitmap<'a> {
    /// A bitmap over `containers` (which must hold `geometry.containers` containers).
    pub fn new(geometry: &'a BitmapGeometry, containers: &'a [Atomic64]) -> Self {
        assert!(containers.len() as u64 >= geometry.containers, "bitmap storage too small");
        Bitmap { geometry, containers: containers.as_ptr(), _memory: PhantomData }
    }

    /// A bitmap over the containers at `containers`.
    ///
    /// # Safety
    /// `containers` must point to `geometry.containers` containers valid for `'a` and accessed
    /// only atomically.
    #[inline(always)]
    pub unsafe fn from_raw(geometry: &'a BitmapGeometry, containers: *const Atomic64) -> Self {
        Bitmap { geometry, containers, _memory: PhantomData }
    }

    pub fn geometry(&self) -> &'a BitmapGeometry {
        self.geometry
    }

    /// Number of bits.
    pub fn len(&self) -> u64 {
        self.geometry.bits
    }

    pub fn is_empty(&self) -> bool {
        self.geometry.bits == 0
    }

    /// Container `index` of `level` (`level < levels`, `index < len(level)`: every caller
    /// derives both from the geometry or from a position below `bits`).
    #[inline(always)]
    pub fn container(&self, level: u32, index: u64) -> &'a Atomic64 {
        debug_assert!(index < self.geometry.len(level), "container {index} of level {level}");
        let at = self.geometry.start(level) + index;
        // SAFETY: `at < containers` for a valid (level, index), see above; the storage is
        // valid for `'a` (constructors).
        unsafe { &*self.containers.add(at as usize) }
    }

    /// Whether bit `pos` is set.
    #[inline(always)]
    pub fn get(&self, pos: u64) -> bool {
        self.container(0, pos / 64).load() & (1 << (pos % 64)) != 0
    }

    /// Switch bit `pos` from 0 to 1, waiting while it is 1 (it must be on its way to 0).
    #[inline]
    pub fn set(&self, pos: u64) {
        self.set_from_level(0, pos);
    }

    /// Container `index` of `level` got its first bit (by a caller that manages that level
    /// itself): set its bit one level up, and further up while that fills empty containers.
    #[inline]
    pub fn set_in_level_above(&self, level: u32, index: u64) {
        self.set_from_level(level + 1, index);
    }

    /// [`set`](Self::set) of bit `pos` of `first` and the levels above.
    #[inline]
    fn set_from_level(&self, first: u32, pos: u64) {
        let mut pos = pos;
        for level in first..self.geometry.levels {
            let container = self.container(level, pos / 64);
            let mask = 1u64 << (pos % 64);
            let mut backoff = Backoff::new();
            let prev = loop {
                let prev = container.fetch_or(mask);
                if prev & mask == 0 {
                    break prev;
                }
                backoff.snooze();
            };
            if prev != 0 {
                // Not the container's first bit: the level above already has this container's
                // bit (or will get it from the thread that set the first one).
                return;
            }
            pos /= 64;
        }
    }

    /// Switch bit `pos` from 1 to 0, waiting while it is 0 (it must be on its way to 1).
    #[inline]
    pub fn clear(&self, pos: u64) {
        let mut backoff = Backoff::new();
        while !self.try_clear(pos) {
            backoff.snooze();
        }
    }

    /// Clear bit `pos`; `true` if this call switched it from 1 to 0.
    #[inline]
    pub fn try_clear(&self, pos: u64) -> bool {
        let container = self.container(0, pos / 64);
        let mask = 1u64 << (pos % 64);
        let prev = container.fetch_and(!mask);
        if prev & mask == 0 {
            return false;
        }
        if prev == mask {
            self.clear_in_level_above(0, pos / 64);
        }
        true
    }

    /// Container `index` of `level` lost its last bit: clear its bit one level up (and further
    /// up while that empties containers too).
    #[inline]
    pub fn clear_in_level_above(&self, level: u32, index: u64) {
        let mut pos = index;
        for level in level + 1..self.geometry.levels {
            let container = self.container(level, pos / 64);
            let mask = 1u64 << (pos % 64);
            let mut backoff = Backoff::new();
            let prev = loop {
                let prev = container.fetch_and(!mask);
                if prev & mask != 0 {
                    break prev;
                }
                // The thread that set this container's first bit below has not set our bit yet.
                backoff.snooze();
            };
            if prev != mask {
                return;
            }
            pos /= 64;
        }
    }

    /// Position of some set bit, found top-down with a rotation per level taken from `seed`;
    /// `None` if none was found (the bitmap may be empty, or transiently inconsistent).
    #[inline]
    pub fn try_find_set(&self, seed: u64) -> Option<u64> {
        self.find_set::<false>(seed)
    }

    /// A set bit in the bottom container that holds bit `pos` (the 64 bits around it), from a
    /// rotation taken from `seed`; `None` if that container has none. One load, where
    /// [`try_find_set`](Self::try_find_set) takes one per level.
    #[inline(always)]
    pub fn try_find_set_near(&self, pos: u64, seed: u64) -> Option<u64> {
        let index = pos / 64;
        let bit = rotate_find(self.container(0, index).load(), seed as u32)?;
        let found = index * 64 + bit as u64;
        (found < self.geometry.bits).then_some(found)
    }

    /// [`try_find_set`](Self::try_find_set) with each rotation spread over the bits its
    /// container has: in the last container of a level, which may hold fewer than 64 bits
    /// (the top level's only container always does unless the bitmap has a power of 64 bits),
    /// the rotations past its last bit would all wrap around to its first set bit. With 16
    /// level-2 containers under the top, 49 of 64 rotations start in the first of them: the
    /// searches of a whole grid crowd a sixteenth of the bitmap, and under BitmapAlloc's
    /// contention (every thread of a 640k-thread constructor searching at once) some came
    /// back empty 32 times while four fifths of the pool were free. Here the rotation is
    /// scaled to the container's bits (`rotation * bits / 64`), so every bit of every level is
    /// a start equally often. Costs a multiply per level.
    #[inline]
    pub fn try_find_set_spread(&self, seed: u64) -> Option<u64> {
        self.find_set::<true>(seed)
    }

    #[inline(always)]
    fn find_set<const SPREAD: bool>(&self, seed: u64) -> Option<u64> {
        let mut index = 0u64;
        let mut level = self.geometry.levels;
        while level > 0 {
            level -= 1;
            let bits = self.container(level, index).load();
            let mut rotation = (seed >> (6 * level)) as u32;
            if SPREAD {
                // Bits of the level: the bitmap's own at level 0, else one per container below.
                let level_bits = if level == 0 { self.geometry.bits } else { self.geometry.len(level - 1) };
                let here = (level_bits - index * 64).min(64) as u32;
                rotation = ((rotation & 63) * here) >> 6;
            }
            let bit = rotate_find(bits, rotation)?;
            index = index * 64 + bit as u64;
        }
        (index < self.geometry.bits).then_some(index)
    }

    /// Clear up to `max` consecutive set bits (a *stretch*) of the level-0 container `index`,
    /// starting at its first set bit at or after `from` (or its first set bit): the first
    /// position and the number cleared, or `None` if the container is empty or other threads
    /// took the stretch first. Bits of the stretch that others took meanwhile split it; we keep
    /// the first part and give the rest back.
    #[inline]
    pub fn try_clear_stretch(&self, index: u64, from: u32, max: u32) -> Option<(u64, u32)> {
        let container = self.container(0, index);
        let bits = container.load();
        let after = bits & (u64::MAX << (from & 63));
        let start = if after != 0 { after.trailing_zeros() } else { rotate_find(bits, 0)? };
        let wanted = ones_from(start, (!(bits >> start)).trailing_zeros().min(max));
        let before = container.fetch_and(!wanted);
        let got = before & wanted;
        if before != 0 && before & !wanted == 0 {
            // We emptied the container.
            self.clear_in_level_above(0, index);
        }
        if got == 0 {
            return None;
        }
        let first = got.trailing_zeros();
        let kept = ones_from(first, (!(got >> first)).trailing_zeros());
        if got != kept {
            self.set_in_container(index, got & !kept);
        }
        Some((index * 64 + first as u64, kept.count_ones()))
    }

    /// Clear a stretch of up to `max` consecutive set bits (see [`try_clear_stretch`]), in the
    /// container of bit `near` first, then wherever a search seeded by `seed` finds set bits;
    /// `None` after `attempts` searches found nothing.
    ///
    /// [`try_clear_stretch`]: Self::try_clear_stretch
    #[inline]
    pub fn clear_stretch(&self, near: Option<u64>, max: u32, seed: u64, attempts: u32) -> Option<(u64, u32)> {
        if let Some(near) = near.filter(|&n| n < self.geometry.bits)
            && let Some(stretch) = self.try_clear_stretch(near / 64, (near % 64) as u32, max)
        {
            return Some(stretch);
        }
        let mut seed = seed;
        let mut backoff = Backoff::new();
        for _ in 0..attempts {
            if let Some(pos) = self.try_find_set(seed)
                && let Some(stretch) = self.try_clear_stretch(pos / 64, (pos % 64) as u32, max)
            {
                return Some(stretch);
            }
            backoff.retry();
            seed = next_seed(seed);
        }
        None
    }

    /// Set `len` consecutive bits from `pos` (all in one level-0 container), which must be
    /// clear.
    #[inline]
    pub fn set_stretch(&self, pos: u64, len: u32) {
        self.set_in_container(pos / 64, ones_from((pos % 64) as u32, len));
    }

    /// Set `bits` (clear) in the level-0 container `index`, and its bit one level up if they are
    /// its first.
    #[inline]
    fn set_in_container(&self, index: u64, bits: u64) {
        if self.container(0, index).fetch_or(bits) == 0 {
            self.set_in_level_above(0, index);
        }
    }

    /// Find and clear some set bit (paper's `clear()`), retrying with new seeds; `None` after
    /// `attempts` finds came back empty.
    #[inline]
    pub fn clear_any(&self, seed: u64, attempts: u32) -> Option<u64> {
        self.clear_found::<false>(seed, attempts)
    }

    /// [`clear_any`](Self::clear_any), searching with
    /// [`try_find_set_spread`](Self::try_find_set_spread).
    #[inline]
    pub fn clear_any_spread(&self, seed: u64, attempts: u32) -> Option<u64> {
        self.clear_found::<true>(seed, attempts)
    }

    #[inline(always)]
    fn clear_found<const SPREAD: bool>(&self, seed: u64, attempts: u32) -> Option<u64> {
        let mut seed = seed;
        let mut backoff = Backoff::new();
        for _ in 0..attempts {
            if let Some(pos) = self.find_set::<SPREAD>(seed)
                && self.try_clear(pos)
            {
                return Some(pos);
            }
            backoff.retry();
            seed = next_seed(seed);
        }
        None
    }

    /// Call `f` with the position of every set bit, skipping empty containers through the
    /// level above (Alg. 5 in one thread). Bits that change meanwhile may or may not be seen.
    #[inline]
    pub fn for_each_set(&self, mut f: impl FnMut(u64)) {
        let g = self.geometry;
        let visit = |index: u64, f: &mut dyn FnMut(u64)| {
            let mut bits = self.container(0, index).load();
            while bits != 0 {
                let bit = bits.trailing_zeros() as u64;
                bits &= bits - 1;
                f(index * 64 + bit);
            }
        };
        if g.levels == 1 {
            visit(0, &mut f);
            return;
        }
        for upper in 0..g.len(1) {
            let mut nonempty = self.container(1, upper).load();
            while nonempty != 0 {
                let index = upper * 64 + nonempty.trailing_zeros() as u64;
                nonempty &= nonempty - 1;
                visit(index, &mut f);
            }
        }
    }

    /// Number of set bits (level 0 only; meaningful when no operation is in flight).
    pub fn count_ones(&self) -> u64 {
        (0..self.geometry.len(0)).map(|i| self.container(0, i).load().count_ones() as u64).sum()
    }

    /// Check that every level is consistent with the one below (after all operations finished):
    /// `Err((level, index))` names the first container whose bit disagrees.
    pub fn check_consistent(&self) -> Result<(), (u32, u64)> {
        for level in 1..self.geometry.levels {
            for index in 0..self.geometry.level_len[level as usize - 1] {
                let below = self.container(level - 1, index).load() != 0;
                let bit = self.container(level, index / 64).load() & (1 << (index % 64)) != 0;
                if below != bit {
                    return Err((level, index));
                }
            }
            // Bits beyond the containers of the level below are never set.
            let len = self.geometry.level_len[level as usize - 1];
            let last = self.container(level, (len - 1) / 64).load();
            let used = len - (len - 1) / 64 * 64;
            if used < 64 && last >> used != 0 {
                return Err((level, len));
            }
        }
        Ok(())
    }
}

/// The next seed of a retry (a 64-bit LCG step: cheap, and changes every 6-bit rotation field).
///
/// 0 stays 0: a search seeded with 0 finds the first set bit of each container (no rotation),
/// and so do its retries: the allocator's NoShift variant (`heap::VARIANT_NO_ROTATION`), whose
/// leaders start from seed 0. The allocator's own seeds are odd at first; should a step reach
/// 0 (one value in 2^64), that search merely stops rotating.
#[inline(always)]
pub fn next_seed(seed: u64) -> u64 {
    if seed == 0 { 0 } else { seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) }
}

/// Write the containers of a bitmap with bits `0..ones` set and the rest clear, consistently
/// on every level. Used by the heap's init kernel (container `index` of the flattened array;
/// every container is written exactly once by exactly one thread).
#[inline]
pub fn init_container(geometry: &BitmapGeometry, flat_index: u64, ones: u64) -> u64 {
    let mut level = 0;
    while level + 1 < geometry.levels && flat_index >= geometry.level_start[level as usize + 1] {
        level += 1;
    }
    let index = flat_index - geometry.level_start[level as usize];
    // Bits of this level that are set: containers (or bits) below with at least one one.
    let mut set_below = ones;
    for _ in 0..level {
        set_below = set_below.div_ceil(64);
    }
    let first = index * 64;
    if set_below <= first {
        0
    } else if set_below >= first + 64 {
        u64::MAX
    } else {
        (1u64 << (set_below - first)) - 1
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn storage(g: &BitmapGeometry, ones: u64) -> Vec<Atomic64> {
        (0..g.containers).map(|i| Atomic64::new(init_container(g, i, ones))).collect()
    }

    #[test]
    fn stretches_are_consecutive_bits_of_one_container() {
        let g = BitmapGeometry::new(5000).unwrap();
        let s = storage(&g, 5000);
        let b = Bitmap::new(&g, &s);
        // Container 1 with bits 70..80 and 90 cleared: stretches 64..70, 80..90, 91..128.
        for pos in (70..80).chain([90]) {
            b.clear(pos);
        }
        assert_eq!(b.try_clear_stretch(1, 0, 64), Some((64, 6)));
        assert_eq!(b.try_clear_stretch(1, 85, 4), Some((85, 4)), "from bit 85, at most 4");
        assert_eq!(b.try_clear_stretch(1, 85, 64), Some((89, 1)), "up to the next clear bit");
        assert_eq!(b.try_clear_stretch(1, 85, 64), Some((91, 37)), "the next set bit on");
        assert_eq!(b.try_clear_stretch(1, 120, 64), Some((80, 5)), "wraps to the first set bit");
        assert_eq!(b.try_clear_stretch(1, 0, 64), None, "container 1 is empty now");
        assert_eq!(b.check_consistent(), Ok(()));
        b.set_stretch(100, 28);
        assert_eq!(b.check_consistent(), Ok(()));
        assert_eq!(b.clear_stretch(Some(64), 64, 7, 4), Some((100, 28)), "near bit 64: container 1");
        // Past the last bit: from the bit a search finds to the end of its (full) container.
        let (pos, len) = b.clear_stretch(Some(5000), 64, 3, 4).unwrap();
        let container_end = if pos / 64 == 78 { 5000 } else { (pos / 64 + 1) * 64 };
        assert!(pos / 64 != 1 && pos + len as u64 == container_end, "{pos} {len}");
        assert_eq!(b.count_ones(), 5000 - 64 - len as u64);
        assert_eq!(b.check_consistent(), Ok(()));
    }

    #[test]
    fn geometry_has_one_container_on_top() {
        let g = BitmapGeometry::new(1).unwrap();
        assert_eq!((g.levels, g.containers), (1, 1));
        let g = BitmapGeometry::new(64).unwrap();
        assert_eq!((g.levels, g.containers), (1, 1));
        let g = BitmapGeometry::new(65).unwrap();
        assert_eq!((g.levels, g.level_len[0], g.level_len[1]), (2, 2, 1));
        let g = BitmapGeometry::new(64 * 64 * 64 + 1).unwrap();
        assert_eq!(g.levels, 4);
        assert_eq!(g.level_len[..4], [4097, 65, 2, 1]);
        assert_eq!(g.level_start[..4], [0, 4097, 4162, 4164]);
        assert!(BitmapGeometry::new(0).is_none());
    }

    #[test]
    fn init_is_consistent_for_any_fill() {
        for bits in [1, 63, 64, 65, 4096, 4097, 300_000] {
            let g = BitmapGeometry::new(bits).unwrap();
            for ones in [0, 1, 63, 64, 65, bits / 2, bits].into_iter().filter(|&o| o <= bits) {
                let s = storage(&g, ones);
                let b = Bitmap::new(&g, &s);
                assert_eq!(b.check_consistent(), Ok(()), "bits {bits} ones {ones}");
                assert_eq!(b.count_ones(), ones);
                if ones > 0 {
                    assert!(b.get(ones - 1));
                }
                if ones < bits {
                    assert!(!b.get(ones));
                }
            }
        }
    }

    #[test]
    fn set_clear_keep_levels_consistent() {
        let g = BitmapGeometry::new(10_000).unwrap();
        let s = storage(&g, 0);
        let b = Bitmap::new(&g, &s);
        for pos in [0, 63, 64, 4095, 4096, 9999] {
            b.set(pos);
            assert!(b.get(pos));
            assert_eq!(b.check_consistent(), Ok(()));
        }
        assert_eq!(b.count_ones(), 6);
        assert!(!b.try_clear(1));
        for pos in [0, 63, 64, 4095, 4096, 9999] {
            assert!(b.try_clear(pos));
            assert_eq!(b.check_consistent(), Ok(()));
        }
        assert_eq!(b.count_ones(), 0);
        assert_eq!(b.try_find_set(0), None);
    }

    #[test]
    fn for_each_set_visits_exactly_the_set_bits() {
        for bits in [40u64, 5000, 300_000] {
            let g = BitmapGeometry::new(bits).unwrap();
            let s = storage(&g, 0);
            let b = Bitmap::new(&g, &s);
            let want: Vec<u64> = (0..bits).filter(|i| i % 7 == 3 || i % 1000 == 999).collect();
            for &i in &want {
                b.set(i);
            }
            let mut got = Vec::new();
            b.for_each_set(|i| got.push(i));
            assert_eq!(got, want, "{bits} bits");
        }
    }

    #[test]
    fn try_find_set_near_looks_in_the_bottom_container_of_its_bit_only() {
        let g = BitmapGeometry::new(300).unwrap();
        let s = storage(&g, 0);
        let b = Bitmap::new(&g, &s);
        b.set(70);
        b.set(10);
        b.set(299);
        for seed in [1u64, 7, 40, 63, 1 << 40] {
            assert_eq!(b.try_find_set_near(64, seed), Some(70), "seed {seed}");
            assert_eq!(b.try_find_set_near(127, seed), Some(70), "seed {seed}");
            assert_eq!(b.try_find_set_near(0, seed), Some(10), "seed {seed}");
            assert_eq!(b.try_find_set_near(256, seed), Some(299), "seed {seed}");
            assert_eq!(b.try_find_set_near(130, seed), None, "seed {seed}: nothing set in 128..192");
        }
    }

    #[test]
    fn try_find_set_finds_the_only_bit_from_any_seed() {
        let g = BitmapGeometry::new(300_000).unwrap();
        let s = storage(&g, 0);
        let b = Bitmap::new(&g, &s);
        b.set(123_457);
        let mut seed = 1;
        for _ in 0..100 {
            assert_eq!(b.try_find_set(seed), Some(123_457));
            seed = next_seed(seed);
        }
    }

    /// A full bitmap whose top container holds 16 bits (16 level-2 containers, as BitmapAlloc's
    /// pool of 3.9M slots has): the plain search starts 49 of 64 rotations in the first of
    /// them, the spread one a sixteenth; the same for a partial last container at level 0.
    #[test]
    fn spread_searches_start_evenly_in_partial_containers() {
        let bits = 16 * 64 * 64 * 64;
        let g = BitmapGeometry::new(bits).unwrap();
        assert_eq!((g.levels, g.len(2), g.len(3)), (4, 16, 1));
        let s = storage(&g, bits);
        let b = Bitmap::new(&g, &s);
        let share = 64 * 64 * 64;
        let (mut plain, mut spread) = ([0u32; 16], [0u32; 16]);
        let mut seed = 12345;
        let n = 64_000;
        for _ in 0..n {
            plain[(b.try_find_set(seed).unwrap() / share) as usize] += 1;
            spread[(b.try_find_set_spread(seed).unwrap() / share) as usize] += 1;
            seed = next_seed(seed);
        }
        assert!(plain[0] > n / 2, "the plain search crowds the first sixteenth: {plain:?}");
        for (part, &count) in spread.iter().enumerate() {
            assert!((n / 32..n / 8).contains(&count), "part {part}: {count} of {n} ({spread:?})");
        }
        // 100 bits: the last level-0 container holds 36, and its bits are starts evenly.
        let g = BitmapGeometry::new(100).unwrap();
        let s = storage(&g, 100);
        let b = Bitmap::new(&g, &s);
        let mut last = [0u32; 36];
        let mut seed = 7;
        for _ in 0..36_000 {
            seed = next_seed(seed);
            // Rotation 0 at level 1 (the top): container 0 holds bits 0-63; pick container 1
            // through the seed's level-1 field (bits 6-11) set to 63.
            if let Some(pos) = b.try_find_set_spread(seed | (63 << 6)) {
                assert!(pos >= 64, "{pos}");
                last[(pos - 64) as usize] += 1;
            }
        }
        assert!(last.iter().all(|&c| c > 400), "{last:?}");
    }

    #[test]
    fn rotation_spreads_finds() {
        let g = BitmapGeometry::new(4096).unwrap();
        let s = storage(&g, 4096);
        let b = Bitmap::new(&g, &s);
        let mut seen = std::collections::HashSet::new();
        let mut seed = 99;
        for _ in 0..200 {
            seen.insert(b.try_find_set(seed).unwrap());
            seed = next_seed(seed);
        }
        assert!(seen.len() > 100, "only {} distinct positions", seen.len());
    }

    /// Seed 0 is no rotation (the allocator's NoShift variant): every search finds the lowest
    /// set bit, and its retries stay at seed 0.
    #[test]
    fn seed_zero_finds_the_first_set_bit_and_stays_zero() {
        assert_eq!(next_seed(0), 0);
        assert_ne!(next_seed(1), 0);
        let g = BitmapGeometry::new(300_000).unwrap();
        let s = storage(&g, 0);
        let b = Bitmap::new(&g, &s);
        for pos in [299_999, 70_000, 4_097, 4_096, 130] {
            b.set(pos);
            assert_eq!(b.try_find_set(0), Some(pos), "the lowest set bit");
        }
        for pos in [130, 4_096, 4_097, 70_000, 299_999] {
            assert_eq!(b.clear_any(0, 4), Some(pos), "cleared in order");
        }
        assert_eq!(b.clear_any(0, 4), None);
    }

    #[test]
    fn clear_any_empties_the_bitmap_exactly() {
        let g = BitmapGeometry::new(5000).unwrap();
        let s = storage(&g, 5000);
        let b = Bitmap::new(&g, &s);
        let mut got = std::collections::HashSet::new();
        let mut seed = 5;
        while let Some(pos) = b.clear_any(seed, 4) {
            assert!(got.insert(pos), "{pos} cleared twice");
            seed = next_seed(seed);
        }
        assert_eq!(got.len(), 5000);
        assert_eq!(b.check_consistent(), Ok(()));
        assert_eq!(b.count_ones(), 0);
    }

    #[test]
    fn concurrent_set_clear_storm_ends_consistent() {
        let g = BitmapGeometry::new(64 * 64 * 3).unwrap();
        let s = storage(&g, 0);
        let b = Bitmap::new(&g, &s);
        // Each thread owns the positions congruent to its id modulo 8 and toggles them many
        // times, sharing containers (and upper-level bits) with the other threads.
        let expected: Vec<u64> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..8u64)
                .map(|t| {
                    scope.spawn(move || {
                        let mut mine: i64 = 0;
                        for round in 0..5000u64 {
                            let pos = (round * 8 + t) % g.bits;
                            if b.get(pos) {
                                b.clear(pos);
                                mine -= 1;
                            } else {
                                b.set(pos);
                                mine += 1;
                            }
                        }
                        mine as u64
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(b.check_consistent(), Ok(()));
        assert_eq!(b.count_ones(), expected.iter().sum::<u64>());
    }
}
