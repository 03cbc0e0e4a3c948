//! Where ScatterAlloc keeps what, as pure functions of the region's size and parameter: the
//! body's layout ([`Layout`]) and how a page is cut into chunks ([`Geometry`]).
//!
//! Body of the region:
//!
//! ```text
//! [ control: 256 bytes ][ page table: 16 bytes per page ][ region fill levels: 4 bytes per region ]
//! [ pool: pages of `page_bytes`, 256-byte aligned ]
//! ```
//!
//! The control block holds the [`Layout`] itself (written once by `init`, read with plain
//! loads afterwards) and, each on its own 64-byte line, the shared counters: the active super
//! block, and the lock and search start of multi-page allocations.

use crate::malloc::round_up;

/// Page size when the region's parameter is 0 (mallocMC's default).
pub const DEFAULT_PAGE_BYTES: u64 = 4096;
/// Smallest page size: pages shrink to this for small regions, and smaller parameters are
/// raised to it.
pub const MIN_PAGE_BYTES: u64 = 1024;
/// Largest page size a parameter may ask for (a page holds at most 1024 chunks, so larger
/// pages would only raise the smallest chunk).
pub const MAX_PAGE_BYTES: u64 = 65536;
/// Pages per region (mallocMC's `regionsize`): the unit of the fill-level counters.
pub const REGION_PAGES: u32 = 16;
/// Super blocks the pool is divided into (mallocMC's `accessblocks`).
pub const SUPER_BLOCKS: u32 = 8;
/// Alignment, and granularity, of every chunk.
pub const CHUNK_ALIGN: u32 = 16;
/// Bitfields a page can hold on itself (32 of 32 chunks each: at most 1024 chunks per page).
pub const MAX_PAGE_MASKS: u32 = 32;
/// Bytes at the end of every page where on-page bitfields can lie, whatever the chunk size:
/// zeroed whenever a page is given back, so that any chunk size finds clean bitfields there.
pub const MASK_TAIL_BYTES: u64 = 4 * MAX_PAGE_MASKS as u64;

/// Bytes of the control block at the start of the body.
pub const CONTROL_BYTES: u64 = 256;
/// Control block: the super block where chunk searches start (u32).
pub const ACTIVE_SUPER_BLOCK_OFFSET: u64 = 64;
/// Control block: the lock that serialises multi-page allocations, as the original does (u32).
pub const LARGE_LOCK_OFFSET: u64 = 128;
/// Control block: multi-page searches start below this page (u32).
pub const LARGE_SEARCH_TOP_OFFSET: u64 = 192;
/// Bytes of a page table entry: the page's state (u64: chunk size and fill count), its
/// usage bitfield (u32), and padding to keep the states 8-byte aligned.
pub const PAGE_ENTRY_BYTES: u64 = 16;
/// Offset of the usage bitfield in a page table entry.
pub const PAGE_USAGE_OFFSET: u64 = 8;
/// The pool starts on this boundary.
const POOL_ALIGN: u64 = 256;
/// A page count that keeps every page index, and the page count of a multi-page allocation
/// in a state word, well inside 31 bits.
const MAX_PAGES: u64 = (1 << 30) - 1;

/// The body's layout (stored at its start by `init`; it never changes afterwards).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Pages in the pool (0 only for a region below the minimum size).
    pub pages: u32,
    /// log2 of the page size.
    pub page_shift: u32,
    /// Regions of [`REGION_PAGES`] pages (the last one may be shorter).
    pub regions: u32,
    /// Regions per super block (the last super block may be shorter).
    pub regions_per_super_block: u32,
    /// Super blocks (at most [`SUPER_BLOCKS`]).
    pub super_blocks: u32,
    /// Smallest chunk a page is cut into (keeps a page at or under 1024 chunks).
    pub min_chunk: u32,
    /// Offset in the body of the region fill levels.
    pub fill_levels_offset: u64,
    /// Offset in the body of the first page.
    pub pool_offset: u64,
}

const _: () = assert!(core::mem::size_of::<Layout>() <= ACTIVE_SUPER_BLOCK_OFFSET as usize);

impl Layout {
    /// The layout of a body of `body_bytes` bytes for the parameter `param` (the page size
    /// in bytes; 0: [`DEFAULT_PAGE_BYTES`]).
    ///
    /// The page size is `param` rounded down to a power of two in
    /// [`MIN_PAGE_BYTES`]`..=`[`MAX_PAGE_BYTES`], halved while the pool would hold less than
    /// one region (small regions get smaller pages rather than a handful of pages).
    pub fn new(body_bytes: u64, param: u64) -> Layout {
        let asked = if param == 0 { DEFAULT_PAGE_BYTES } else { param.clamp(MIN_PAGE_BYTES, MAX_PAGE_BYTES) };
        let mut page_bytes = 1u64 << (63 - asked.leading_zeros());
        let mut pages = pages_fitting(body_bytes, page_bytes);
        while pages < REGION_PAGES as u64 && page_bytes > MIN_PAGE_BYTES {
            page_bytes /= 2;
            pages = pages_fitting(body_bytes, page_bytes);
        }
        let regions = pages.div_ceil(REGION_PAGES as u64);
        let regions_per_super_block = regions.div_ceil(SUPER_BLOCKS as u64).max(1);
        let super_blocks = regions.div_ceil(regions_per_super_block);
        // At most 1024 chunks (32 bitfields of 32) fit a page together with their bitfields.
        let min_chunk = ((page_bytes - MASK_TAIL_BYTES).div_ceil(1024)).max(1);
        let fill_levels_offset = CONTROL_BYTES + PAGE_ENTRY_BYTES * pages;
        Layout {
            pages: pages as u32,
            page_shift: page_bytes.trailing_zeros(),
            regions: regions as u32,
            regions_per_super_block: regions_per_super_block as u32,
            super_blocks: super_blocks as u32,
            min_chunk: round_up(min_chunk, CHUNK_ALIGN as u64) as u32,
            fill_levels_offset,
            pool_offset: metadata_bytes(pages),
        }
    }

    #[inline(always)]
    pub fn page_bytes(&self) -> u32 {
        1 << self.page_shift
    }

    /// Bytes of the pool.
    #[inline(always)]
    pub fn pool_bytes(&self) -> u64 {
        (self.pages as u64) << self.page_shift
    }

    /// Pages of region `region` (`REGION_PAGES`, fewer for the last one).
    #[inline(always)]
    pub fn pages_in_region(&self, region: u32) -> u32 {
        (self.pages - region * REGION_PAGES).min(REGION_PAGES)
    }

    /// Pages of each super block but perhaps the last.
    #[inline(always)]
    pub fn pages_per_super_block(&self) -> u32 {
        self.regions_per_super_block * REGION_PAGES
    }
}

/// Bytes of the control block, page table and fill levels for `pages` pages, up to the pool.
fn metadata_bytes(pages: u64) -> u64 {
    let regions = pages.div_ceil(REGION_PAGES as u64);
    round_up(CONTROL_BYTES + PAGE_ENTRY_BYTES * pages + 4 * regions, POOL_ALIGN)
}

/// The most pages of `page_bytes` that fit in `body_bytes` with their metadata.
fn pages_fitting(body_bytes: u64, page_bytes: u64) -> u64 {
    let fits = |pages: u64| metadata_bytes(pages) + pages * page_bytes <= body_bytes;
    // An estimate from the exact cost per page (16.25 bytes of metadata in quarters), then
    // the steps that rounding calls for.
    let quarters_per_page = 4 * (page_bytes + PAGE_ENTRY_BYTES) + 1;
    let mut pages = body_bytes.saturating_sub(CONTROL_BYTES + POOL_ALIGN + 4) * 4 / quarters_per_page;
    pages = pages.min(MAX_PAGES);
    while pages < MAX_PAGES && fits(pages + 1) {
        pages += 1;
    }
    while pages > 0 && !fits(pages) {
        pages -= 1;
    }
    pages
}

/// How a page with chunks of one size is organised.
///
/// Up to 32 chunks a page is *flat*: the usage bitfield of its page table entry has one bit
/// per chunk. Where 33 or more chunks fit, the page is *hierarchical* (the paper's second
/// level): `masks` bitfields at the end of the page have one bit per chunk, 32 chunks each
/// (the last may have fewer), and bit `s` of the usage bitfield says that bitfield `s` was
/// seen full (a hint: see `claim_in_hierarchy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub chunk: u32,
    /// Chunks on the page.
    pub capacity: u32,
    /// On-page bitfields (0: flat).
    pub masks: u32,
    /// On-page bitfields covering 32 chunks each (the rest: one covering fewer).
    pub full_masks: u32,
}

impl Geometry {
    /// The geometry of a page of `page_bytes` cut into chunks of `chunk` bytes
    /// (`1..=page_bytes`).
    #[inline(always)]
    pub fn new(page_bytes: u32, chunk: u32) -> Geometry {
        let chunk = chunk.max(1);
        // Hierarchical where 33 chunks and two bitfields fit (mallocMC's `HierarchyThreshold`).
        if 33 * chunk + 8 <= page_bytes {
            // Lay out as many groups of (32 chunks + their bitfield) as fit, then as many
            // chunks as fit with one more bitfield.
            let group = 32 * chunk + 4;
            let full_masks = (page_bytes / group).min(MAX_PAGE_MASKS);
            let rest = page_bytes - full_masks * group;
            let extra = if full_masks < MAX_PAGE_MASKS && rest >= 4 + chunk {
                ((rest - 4) / chunk).min(31)
            } else {
                0
            };
            Geometry {
                chunk,
                capacity: 32 * full_masks + extra,
                masks: full_masks + (extra > 0) as u32,
                full_masks,
            }
        } else {
            Geometry { chunk, capacity: (page_bytes / chunk).min(32), masks: 0, full_masks: 0 }
        }
    }

    /// Chunks covered by on-page bitfield `mask`.
    #[inline(always)]
    pub fn chunks_in_mask(&self, mask: u32) -> u32 {
        if mask < self.full_masks { 32 } else { self.capacity - 32 * self.full_masks }
    }

    /// Offset in the page of on-page bitfield `mask` (they end the page).
    #[inline(always)]
    pub fn mask_offset(&self, page_bytes: u32, mask: u32) -> u32 {
        page_bytes - 4 * (self.masks - mask)
    }
}
