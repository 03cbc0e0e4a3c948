//! Size classes, chunk families, and where everything lives in a Halloc region.
//!
//! The layout is computed once, in [`Geometry::compute`], from the body's size and the region's
//! parameter; initialisation stores it at the start of the body, where it never changes again,
//! so `malloc` and `free` read it with plain loads.

use crate::malloc::round_up;

/// Size classes served from slabs (larger requests are relayed to CUDA's allocator).
pub(super) const SIZE_CLASSES: u32 = 15;
/// Chunk families: slabs switch size classes only within one (the bitmap's unit is the chunk).
pub(super) const FAMILIES: u32 = 4;
/// The largest request served from slabs (the paper's 3 KiB).
pub(super) const MAX_BLOCK_BYTES: u32 = 3072;

/// Bytes of each size class's blocks: the paper's `2 * 2^k` and `3 * 2^k` sizes from 16 bytes to
/// 3 KiB, without 24 (its blocks could not all be 16-byte aligned). The 16th entry only pads the
/// table to a power of two, so that `class & 15` indexes it without a bounds check.
const BLOCK_BYTES: [u32; 16] = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 0];
/// The chunk family of each size class.
const FAMILY: [u32; 16] = [0, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 0];
/// Chunks per block of each size class (always 1, 2, 4 or 8, so a block never straddles a
/// 64-bit bitmap word: blocks start at multiples of their own chunk count).
const CHUNKS_PER_BLOCK: [u32; 16] = [1, 2, 1, 4, 2, 8, 4, 1, 1, 2, 2, 4, 4, 8, 8, 1];
/// Bytes of a chunk of each family: every block size of a family is 1, 2, 4 or 8 of its chunks.
const CHUNK_BYTES: [u32; 4] = [16, 48, 256, 384];

// The tables agree: every block is its chunk count times its family's chunk.
const _: () = {
    let mut class = 0;
    while class < SIZE_CLASSES as usize {
        assert!(BLOCK_BYTES[class] == CHUNKS_PER_BLOCK[class] * CHUNK_BYTES[FAMILY[class] as usize]);
        class += 1;
    }
};

/// The size class serving `size` bytes (`1..=MAX_BLOCK_BYTES`).
#[inline(always)]
pub(super) fn size_class(size: u32) -> u32 {
    if size <= 16 {
        return 0;
    }
    if size <= 32 {
        return 1;
    }
    // 2^(k-1) < size <= 2^k: the class is 3 * 2^(k-2) if that is large enough, else 2^k.
    let k = 32 - (size - 1).leading_zeros();
    if size <= 3 << (k - 2) { 2 * k - 10 } else { 2 * k - 9 }
}

#[cfg(test)]
pub(super) fn block_bytes(class: u32) -> u32 {
    BLOCK_BYTES[(class & 15) as usize]
}

#[inline(always)]
pub(super) fn family(class: u32) -> u32 {
    FAMILY[(class & 15) as usize]
}

#[inline(always)]
pub(super) fn chunks_per_block(class: u32) -> u32 {
    CHUNKS_PER_BLOCK[(class & 15) as usize]
}

#[inline(always)]
pub(super) fn chunk_bytes(family: u32) -> u32 {
    CHUNK_BYTES[(family & 3) as usize]
}

/// `offset` (bytes into a slab) as a chunk index of `family`, if a chunk starts there. Divides
/// by constants, which the compiler turns into multiplications.
#[inline(always)]
pub(super) fn chunk_at(family: u32, offset: u64) -> Option<u64> {
    let (chunk, rest) = match family & 3 {
        0 => (offset >> 4, offset & 15),
        1 => (offset / 48, offset % 48),
        2 => (offset >> 8, offset & 255),
        _ => (offset / 384, offset % 384),
    };
    (rest == 0).then_some(chunk)
}

/// Smallest slab: 8 KiB still holds two blocks of the largest class.
pub(super) const MIN_SLAB_SHIFT: u32 = 13;
/// Default largest slab: the original's 4 MiB.
pub(super) const DEFAULT_MAX_SLAB_SHIFT: u32 = 22;
/// Largest slab a parameter may ask for: the paper's 8 MB.
pub(super) const MAX_SLAB_SHIFT: u32 = 23;
/// Slabs a region should have at least (the slab size shrinks, by powers of two, until it
/// does): enough for several size classes to hold a slab each and still have free ones.
pub(super) const TARGET_SLABS: u64 = 32;
/// At most this many slabs, so that `slab + 1` fits in 27 bits (warp keys pack it with more).
const MAX_SLABS: u64 = (1 << 27) - 1;

/// Slab sets (bitmaps over the slabs): free, sparse per family, roomy per size class, busy per
/// size class.
pub(super) const SET_COUNT: u32 = 1 + FAMILIES + 2 * SIZE_CLASSES;
pub(super) const FREE_SET: u32 = 0;

#[inline(always)]
pub(super) fn sparse_set(family: u32) -> u32 {
    1 + (family & 3)
}

#[inline(always)]
pub(super) fn roomy_set(class: u32) -> u32 {
    1 + FAMILIES + class
}

#[inline(always)]
pub(super) fn busy_set(class: u32) -> u32 {
    1 + FAMILIES + SIZE_CLASSES + class
}

/// Body offsets of the control words (each group on its own 128-byte line: heads are read by
/// every `malloc`, the others written now and then).
pub(super) const GEOMETRY_OFFSET: u64 = 0;
/// Per size class: the head slab's index + 1 (0: none yet).
pub(super) const HEADS_OFFSET: u64 = 512;
/// Per size class: 1 while a thread replaces the head.
pub(super) const LOCKS_OFFSET: u64 = 640;
/// Per size class: the generation + 1 at which a head search last found nothing.
pub(super) const EXHAUSTED_OFFSET: u64 = 768;
/// Counts slabs put into sets, so that a failed head search can tell whether one came since.
pub(super) const GENERATION_OFFSET: u64 = 896;
/// Where the slab state words start.
pub(super) const CONTROL_BYTES: u64 = 1024;

/// One chunk family in slabs of this region's size.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct FamilyGeometry {
    /// Chunks in a slab.
    pub chunks: u32,
    /// A slab at or below this many chunks in use is sparse (2%): it may change size class.
    pub sparse_max: u32,
    /// A slab at or below this many chunks in use is roomy (60%); above it, busy.
    pub roomy_max: u32,
    /// A head that passes this many chunks in use is replaced (83.5%).
    pub replace_above: u32,
}

/// One size class in slabs of this region's size.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SizeGeometry {
    /// Blocks in a slab.
    pub blocks: u32,
    /// The hash's stride in blocks: coprime to `blocks`, so the probe sequence visits them all.
    pub step: u32,
}

/// Where everything lives in the body, and the slab geometry of every class.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Geometry {
    /// Slabs are `1 << slab_shift` bytes.
    pub slab_shift: u32,
    pub slab_count: u32,
    /// 64-bit words of each of a slab's two bitmaps (one bit per 16-byte chunk, the smallest).
    pub bitmap_words: u32,
    /// 64-bit words of each slab set.
    pub set_words: u32,
    /// Body offset of the slab state words (one `u64` per slab).
    pub states: u64,
    /// Body offset of the slab sets (`SET_COUNT` bitmaps of `set_words` words).
    pub sets: u64,
    /// Body offset of the allocation bitmaps (a bit per chunk: in use).
    pub alloc_bits: u64,
    /// Body offset of the continuation bitmaps (a bit per chunk: part of the block before it).
    pub cont_bits: u64,
    /// Body offset of slab 0 (256-byte aligned).
    pub pool: u64,
    pub families: [FamilyGeometry; 4],
    pub sizes: [SizeGeometry; 16],
}

const _: () = assert!(core::mem::size_of::<Geometry>() as u64 <= HEADS_OFFSET);

impl Geometry {
    #[inline(always)]
    pub fn family(&self, family: u32) -> &FamilyGeometry {
        &self.families[(family & 3) as usize]
    }

    #[inline(always)]
    pub fn size(&self, class: u32) -> &SizeGeometry {
        &self.sizes[(class & 15) as usize]
    }

    #[inline(always)]
    pub fn slab_bytes(&self) -> u64 {
        1 << self.slab_shift
    }

    /// The layout of a body of `body_bytes` bytes. `param` caps the slab size (bytes, rounded
    /// down to a power of two within 8 KiB..=8 MiB; 0: 4 MiB). The slab size is the largest
    /// power of two up to that cap that gives at least [`TARGET_SLABS`] slabs, and 8 KiB in
    /// regions too small for that.
    pub fn compute(body_bytes: u64, param: u64) -> Geometry {
        let cap = match param {
            0 => DEFAULT_MAX_SLAB_SHIFT,
            p => floor_log2(p).clamp(MIN_SLAB_SHIFT, MAX_SLAB_SHIFT),
        };
        let slab_shift = floor_log2(body_bytes / TARGET_SLABS).clamp(MIN_SLAB_SHIFT, cap);
        let slab_bytes = 1u64 << slab_shift;
        let bitmap_words = (slab_bytes >> 10) as u32;

        // Each slab costs its bytes, its two bitmaps, its state word and its set bits.
        let per_slab = slab_bytes + 2 * 8 * bitmap_words as u64 + 8 + SET_COUNT as u64;
        let room = body_bytes.saturating_sub(CONTROL_BYTES + 1024);
        let mut slabs = (room / per_slab).min(MAX_SLABS);
        while slabs > 0 && Self::place(slab_shift, bitmap_words, slabs).pool_end() > body_bytes {
            slabs -= 1;
        }
        while slabs < MAX_SLABS && Self::place(slab_shift, bitmap_words, slabs + 1).pool_end() <= body_bytes {
            slabs += 1;
        }
        let mut geometry = Self::place(slab_shift, bitmap_words, slabs);
        for family in 0..FAMILIES {
            let chunks = slab_bytes.checked_div(chunk_bytes(family) as u64).unwrap_or(0) as u32;
            let fraction = |per_mille: u64| (chunks as u64 * per_mille / 1000) as u32;
            geometry.families[family as usize] = FamilyGeometry {
                chunks,
                sparse_max: fraction(20),
                roomy_max: fraction(600),
                replace_above: fraction(835),
            };
        }
        for class in 0..SIZE_CLASSES {
            let chunks = geometry.family(family(class)).chunks;
            let blocks = chunks.checked_div(chunks_per_block(class)).unwrap_or(0);
            geometry.sizes[class as usize] =
                SizeGeometry { blocks, step: coprime_step(blocks, chunks_per_block(class)) };
        }
        geometry
    }

    /// Offsets for `slabs` slabs (sizes of families and classes left empty).
    fn place(slab_shift: u32, bitmap_words: u32, slabs: u64) -> Geometry {
        let set_words = slabs.div_ceil(64);
        let states = CONTROL_BYTES;
        let sets = states + 8 * slabs;
        let alloc_bits = round_up(sets + 8 * SET_COUNT as u64 * set_words, 128);
        let cont_bits = alloc_bits + 8 * bitmap_words as u64 * slabs;
        let pool = round_up(cont_bits + 8 * bitmap_words as u64 * slabs, 256);
        Geometry {
            slab_shift,
            slab_count: slabs as u32,
            bitmap_words,
            set_words: set_words as u32,
            states,
            sets,
            alloc_bits,
            cont_bits,
            pool,
            ..Geometry::default()
        }
    }

    /// Body offset just past the last slab.
    pub fn pool_end(&self) -> u64 {
        self.pool + ((self.slab_count as u64) << self.slab_shift)
    }
}

fn floor_log2(x: u64) -> u32 {
    63u32.saturating_sub(x.leading_zeros())
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while let Some(rest) = a.checked_rem(b) {
        (a, b) = (b, rest);
    }
    a
}

/// The hash's stride for `blocks` blocks of `chunks` chunks: about 2% of the slab as in the
/// original (`blocks / 256 + blocks / 64`), but at least a bitmap word further (a probe already
/// looks at the whole word), raised to the next value coprime to `blocks` so that `blocks`
/// probes visit every block once. 0 when there is at most one block.
fn coprime_step(blocks: u32, chunks: u32) -> u32 {
    if blocks <= 1 {
        return 0;
    }
    let per_word = 64 / chunks.max(1);
    let mut step = (blocks / 256 + blocks / 64).max(per_word + 1);
    if step >= blocks {
        step = 1;
    }
    while gcd(step, blocks) != 1 {
        step += 1;
    }
    step
}
