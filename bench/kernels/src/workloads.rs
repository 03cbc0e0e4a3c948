//! Kernels of the allocator suite's "real workloads" (`dynasoar-bench workloads`):
//!
//! - a dynamic graph (the survey `002_...` 4.4.3 "Graph Initialization" and 4.4.4 "Graph
//!   Updates"): every vertex keeps its adjacency in an array from the allocator, sized to a power
//!   of two; an update that makes an adjacency cross a power-of-two boundary allocates a new
//!   array, copies and frees the old one ([`graph_workload`]);
//! - a breadth-first kd-tree build (`000_...` section 6, "\[DS\] Data structure build", Table 2):
//!   every node's primitive-reference array comes from the allocator, is split into two child
//!   arrays (primitives straddling the split plane go into both) and is freed
//!   ([`kdtree_workload`]).
//!
//! Both take the region as a parameter and use it through [`AnyMalloc`], so one PTX entry point
//! serves every allocator kind. Nothing here panics: failures (null from malloc, an entry that
//! is not where it should be, a full output array) are counted in a statistics buffer the host
//! reads after the launches.

use dynasoar_macros::kernel;

use dynasoar_baselines::malloc::{AnyMalloc, Region, RegionHeader};
use dynasoar_device::arch::atomic::{Atomic32, Atomic64};
use dynasoar_device::{DevPtr, Plain};

/// Smallest adjacency capacity (entries): 16 bytes, the granularity most allocators have.
pub const MIN_CAPACITY: u32 = 4;

/// Bit of an update entry that makes it a deletion (vertex ids stay below it).
pub const DELETE: u32 = 1 << 31;

/// The capacity (entries) of an adjacency of `degree` edges: the next power of two, at least
/// [`MIN_CAPACITY`] (`u32::MAX` for degrees no power of two holds).
#[inline(always)]
pub fn capacity_for(degree: u32) -> u32 {
    let d = if degree < MIN_CAPACITY { MIN_CAPACITY } else { degree };
    d.checked_next_power_of_two().unwrap_or(u32::MAX)
}

/// What one launch of [`graph_workload`] does.
pub mod graph_step {
    /// Thread `v` allocates vertex `v`'s adjacency (capacity [`capacity_for`](super::capacity_for)
    /// of its degree) and copies its edges from the CSR arrays `offsets`/`edges`.
    pub const INIT: u32 = 0;
    /// Thread `t` applies the updates of source `upd_vertex[t]`
    /// (`upd_edges[upd_offsets[t]..upd_offsets[t + 1]]`): deletions (entries with
    /// [`DELETE`](super::DELETE)) first, then insertions; when the degree crosses a power of two
    /// the adjacency moves to a new allocation (copy, free the old one).
    pub const UPDATE: u32 = 1;
    /// Thread `v` copies vertex `v`'s adjacency to `edges[offsets[v]..]` (for the host's check).
    pub const GATHER: u32 = 2;
    /// Thread `v` frees vertex `v`'s adjacency.
    pub const FREE: u32 = 3;
}

/// Indices of [`GraphParams::stats`].
pub mod graph_stat {
    /// Mallocs that returned null.
    pub const FAILED: usize = 0;
    /// Adjacencies moved to a new allocation by updates.
    pub const REALLOCS: usize = 1;
    /// Deletions whose edge was not in the adjacency.
    pub const MISSING: usize = 2;
    /// Insertions that found no room (cannot happen unless the capacity bookkeeping is wrong).
    pub const OVERFLOW: usize = 3;
    /// Successful mallocs.
    pub const ALLOCS: usize = 4;
    /// Number of entries.
    pub const COUNT: usize = 5;
}

/// Parameters of [`graph_workload`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GraphParams {
    pub region: DevPtr<RegionHeader>,
    /// CSR offsets (`vertices + 1`) of the initial graph ([`graph_step::INIT`]) or of the
    /// gathered output ([`graph_step::GATHER`]).
    pub offsets: DevPtr<u32>,
    /// CSR edges of the initial graph, or the gathered output.
    pub edges: DevPtr<u32>,
    /// Per vertex: the address of its adjacency (0: none).
    pub adj: DevPtr<u64>,
    /// Per vertex: its degree.
    pub degree: DevPtr<u32>,
    /// Per vertex: the capacity of its adjacency, in entries.
    pub capacity: DevPtr<u32>,
    /// Per updating thread: its source vertex.
    pub upd_vertex: DevPtr<u32>,
    /// Per updating thread: where its updates start in `upd_edges` (one more entry at the end).
    pub upd_offsets: DevPtr<u32>,
    /// Target vertices; [`DELETE`] marks a deletion.
    pub upd_edges: DevPtr<u32>,
    /// [`graph_stat`] counters, updated atomically.
    pub stats: DevPtr<u64>,
    /// Vertices, or updating threads for [`graph_step::UPDATE`].
    pub threads: u32,
    /// One of [`graph_step`].
    pub step: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for GraphParams {}

/// Add `value` to counter `index` of a statistics buffer.
///
/// # Safety
/// `stats` holds more than `index` entries, only updated atomically.
#[inline(always)]
unsafe fn count(stats: DevPtr<u64>, index: usize, value: u64) {
    // SAFETY: the caller's contract.
    unsafe { Atomic64::from_ptr(stats.as_ptr().add(index)) }.fetch_add(value);
}

/// Copy `n` words from `from` to `to` (non-overlapping).
///
/// # Safety
/// Both address `n` words that only this thread uses.
#[inline(always)]
unsafe fn copy_words(from: *const u32, to: *mut u32, n: u32) {
    for i in 0..n as usize {
        // SAFETY: the caller's contract.
        unsafe { to.add(i).write(from.add(i).read()) };
    }
}

/// One step (see [`graph_step`]) of the dynamic-graph workload over the allocator in
/// `p.region`.
#[kernel(crate = dynasoar_device, name = "dynasoar_workload_graph")]
pub fn graph_workload(p: GraphParams) {
    let t = dynasoar_device::arch::global_thread_id() as u32;
    if t >= p.threads {
        return;
    }
    // SAFETY: the host launches this on an initialised region.
    let malloc = unsafe { AnyMalloc::attach(Region::from_header(p.region.as_ptr())) };
    let v = t as usize;
    match p.step {
        graph_step::INIT => {
            // SAFETY: the host passes `threads + 1` offsets and the edges they index.
            let (start, end) = unsafe { (p.offsets.read(v), p.offsets.read(v + 1)) };
            let degree = end.saturating_sub(start);
            let capacity = capacity_for(degree);
            let ptr = malloc.malloc(capacity.wrapping_mul(4)) as *mut u32;
            let (degree, capacity) = if ptr.is_null() {
                // SAFETY: the buffer has `graph_stat::COUNT` entries.
                unsafe { count(p.stats, graph_stat::FAILED, 1) };
                (0, 0)
            } else {
                // SAFETY: as above.
                unsafe { count(p.stats, graph_stat::ALLOCS, 1) };
                // SAFETY: a fresh allocation of `capacity >= degree` words; the CSR range is
                // this vertex's.
                unsafe { copy_words(p.edges.as_ptr().add(start as usize), ptr, degree) };
                (degree, capacity)
            };
            // SAFETY: the per-vertex entries `v` are this thread's own.
            unsafe {
                p.adj.write(v, ptr as u64);
                p.degree.write(v, degree);
                p.capacity.write(v, capacity);
            }
        }
        graph_step::UPDATE => {
            // SAFETY: the host passes `threads` sources and `threads + 1` offsets; each source
            // appears once per batch, so its per-vertex entries are this thread's own.
            let (vertex, start, end) =
                unsafe { (p.upd_vertex.read(v) as usize, p.upd_offsets.read(v), p.upd_offsets.read(v + 1)) };
            // SAFETY: as above.
            let (mut ptr, mut degree, mut capacity) = unsafe {
                (p.adj.read(vertex) as usize as *mut u32, p.degree.read(vertex), p.capacity.read(vertex))
            };
            if ptr.is_null() {
                // The vertex lost its adjacency to a failed malloc (already counted).
                return;
            }
            let mut inserts = 0u32;
            for k in start..end {
                // SAFETY: `k` lies in this thread's range of the update entries.
                let entry = unsafe { p.upd_edges.read(k as usize) };
                if entry & DELETE == 0 {
                    inserts += 1;
                    continue;
                }
                let target = entry & !DELETE;
                let mut found = false;
                for j in 0..degree as usize {
                    // SAFETY: `j < degree <= capacity` words of this vertex's adjacency.
                    if unsafe { ptr.add(j).read() } == target {
                        // SAFETY: as above; `degree >= 1` here.
                        unsafe { ptr.add(j).write(ptr.add(degree as usize - 1).read()) };
                        degree -= 1;
                        found = true;
                        break;
                    }
                }
                if !found {
                    // SAFETY: the buffer has `graph_stat::COUNT` entries.
                    unsafe { count(p.stats, graph_stat::MISSING, 1) };
                }
            }
            let wanted = capacity_for(degree.saturating_add(inserts));
            if wanted != capacity {
                // The adjacency crosses a power of two: move it.
                let fresh = malloc.malloc(wanted.wrapping_mul(4)) as *mut u32;
                if fresh.is_null() {
                    // SAFETY: as above.
                    unsafe { count(p.stats, graph_stat::FAILED, 1) };
                } else {
                    // SAFETY: as above.
                    unsafe {
                        count(p.stats, graph_stat::ALLOCS, 1);
                        count(p.stats, graph_stat::REALLOCS, 1);
                    }
                    // SAFETY: `degree` words of the old adjacency into a fresh one of
                    // `wanted >= degree` words; the old one was this vertex's allocation and
                    // is replaced below, so it is freed once.
                    unsafe {
                        copy_words(ptr, fresh, degree);
                        malloc.free(ptr as *mut u8);
                    }
                    ptr = fresh;
                    capacity = wanted;
                }
            }
            for k in start..end {
                // SAFETY: as above.
                let entry = unsafe { p.upd_edges.read(k as usize) };
                if entry & DELETE != 0 {
                    continue;
                }
                if degree < capacity {
                    // SAFETY: `degree < capacity` words of this vertex's adjacency.
                    unsafe { ptr.add(degree as usize).write(entry) };
                    degree += 1;
                } else {
                    // SAFETY: as above.
                    unsafe { count(p.stats, graph_stat::OVERFLOW, 1) };
                }
            }
            // SAFETY: the vertex's entries are this thread's own (see above).
            unsafe {
                p.adj.write(vertex, ptr as u64);
                p.degree.write(vertex, degree);
                p.capacity.write(vertex, capacity);
            }
        }
        graph_step::GATHER => {
            // SAFETY: per-vertex entries; the host sized the output from the degrees.
            unsafe {
                let ptr = p.adj.read(v) as usize as *const u32;
                if !ptr.is_null() {
                    copy_words(ptr, p.edges.as_ptr().add(p.offsets.read(v) as usize), p.degree.read(v));
                }
            }
        }
        graph_step::FREE => {
            // SAFETY: the entry holds null or this vertex's allocation; it is cleared, so the
            // allocation is freed once.
            unsafe {
                malloc.free(p.adj.read(v) as usize as *mut u8);
                p.adj.write(v, 0);
                p.degree.write(v, 0);
                p.capacity.write(v, 0);
            }
        }
        _ => {}
    }
}

/// A node of the level being built by [`kdtree_workload`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KdNode {
    /// Bounds of the node.
    pub lo: [f32; 3],
    pub hi: [f32; 3],
    /// Address of its primitive-reference array (`count` `u32` primitive indices); 0 when its
    /// malloc failed or `count` is 0.
    pub refs: u64,
    /// Index of its first reference among all the references of its level.
    pub start: u64,
    pub count: u32,
    pub depth: u32,
    /// Split axis (0..3), or [`KD_LEAF`].
    pub axis: u32,
    pub split: f32,
    /// References going left and right (counted atomically by [`kd_step::CLASSIFY`]).
    pub n_left: u32,
    pub n_right: u32,
    /// Index of the left child in the next level (right: `child + 1`), or [`KD_NONE`].
    pub child: u32,
    /// References scattered into this node so far (atomic, by its parent's
    /// [`kd_step::SCATTER`]).
    pub fill: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for KdNode {}

/// A finished leaf of the kd-tree.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KdLeaf {
    pub lo: [f32; 3],
    pub hi: [f32; 3],
    pub refs: u64,
    pub count: u32,
    pub depth: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for KdLeaf {}

/// [`KdNode::axis`] of a node that will not be split.
pub const KD_LEAF: u32 = 3;
/// [`KdNode::child`] of a node without children.
pub const KD_NONE: u32 = u32::MAX;
/// Bits of the reference count in [`kd_stat::NEXT`] (the node count is above them).
pub const KD_REF_BITS: u32 = 40;

/// What one launch of [`kdtree_workload`] does. A level is `CLASSIFY`, `ALLOC`, `SCATTER`,
/// `FREE`; the host then reads [`kd_stat::NEXT`] for the next level's size.
pub mod kd_step {
    /// One thread: allocate the root's reference array (`nodes[0]`, `count` references).
    pub const ROOT: u32 = 0;
    /// Thread `i < nodes[0].count`: the root's reference `i` is primitive `i`.
    pub const FILL: u32 = 1;
    /// Thread per reference of the level: count it into its node's left and/or right side.
    pub const CLASSIFY: u32 = 2;
    /// Thread per node: a leaf is recorded in `leaves`; a split node reserves its two children
    /// in the next level, allocates their arrays and writes them.
    pub const ALLOC: u32 = 3;
    /// Thread per reference: copy it into the child arrays of its node.
    pub const SCATTER: u32 = 4;
    /// Thread per node: a split node frees its array.
    pub const FREE: u32 = 5;
    /// Thread per leaf: copy its references to `out[offsets[leaf]..]` (for the host's check).
    pub const GATHER: u32 = 6;
    /// Thread per leaf: free its array.
    pub const FREE_LEAVES: u32 = 7;
}

/// Indices of [`KdParams::stats`].
pub mod kd_stat {
    /// Mallocs that returned null.
    pub const FAILED: usize = 0;
    /// Allocation requests (the root's included).
    pub const ALLOCS: usize = 1;
    /// Sum of the requested sizes, in bytes.
    pub const BYTES: usize = 2;
    /// Sum of the squares of the requested sizes.
    pub const BYTES_SQ: usize = 3;
    /// Leaves recorded (may exceed the capacity of `leaves`; see `OVERFLOW`).
    pub const LEAVES: usize = 4;
    /// Leaves or nodes that found their output array full.
    pub const OVERFLOW: usize = 5;
    /// The next level: nodes `<< KD_REF_BITS` plus references, reserved atomically.
    pub const NEXT: usize = 6;
    /// References held by the leaves.
    pub const LEAF_REFS: usize = 7;
    /// References that did not fit their child array (the counts disagree).
    pub const LOST: usize = 8;
    /// Number of entries.
    pub const COUNT: usize = 9;
}

/// Parameters of [`kdtree_workload`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KdParams {
    pub region: DevPtr<RegionHeader>,
    /// Per primitive: its bounds, `[lo x, lo y, lo z, hi x, hi y, hi z]`.
    pub prims: DevPtr<[f32; 6]>,
    /// The level being built (`nodes` entries).
    pub nodes: DevPtr<KdNode>,
    /// The next level (`capacity` entries).
    pub next: DevPtr<KdNode>,
    /// Finished leaves (`leaf_capacity` entries).
    pub leaves: DevPtr<KdLeaf>,
    /// [`kd_step::GATHER`]: per leaf, where its references go in `out`.
    pub offsets: DevPtr<u32>,
    pub out: DevPtr<u32>,
    /// [`kd_stat`] counters, updated atomically.
    pub stats: DevPtr<u64>,
    /// Nodes of this level, or leaves for the leaf steps.
    pub nodes_count: u32,
    /// References of this level.
    pub refs_count: u32,
    pub capacity: u32,
    pub leaf_capacity: u32,
    /// Nodes of at most this many references are leaves.
    pub leaf_size: u32,
    /// Nodes this deep are leaves.
    pub max_depth: u32,
    /// One of [`kd_step`].
    pub step: u32,
    pub _pad: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters and store internals: not offered to users as examples of plain types.
#[diagnostic::do_not_recommend]
unsafe impl Plain for KdParams {}

/// Bytes requested for an array of `count` references: padded to 16 bytes, as `000_...` pads
/// every request.
#[inline(always)]
pub fn kd_request(count: u32) -> u32 {
    (count.saturating_mul(4).saturating_add(15)) & !15
}

/// Decide how a fresh node is split: the spatial median of its longest axis, unless it is
/// small, deep or flat enough to be a leaf.
#[inline(always)]
pub fn kd_plan(node: &mut KdNode, leaf_size: u32, max_depth: u32) {
    let mut axis = 0;
    let mut extent = node.hi[0] - node.lo[0];
    for a in 1..3 {
        let e = node.hi[a] - node.lo[a];
        if e > extent {
            axis = a;
            extent = e;
        }
    }
    if node.count <= leaf_size
        || node.depth >= max_depth
        || extent.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater)
    {
        node.axis = KD_LEAF;
        node.split = 0.0;
    } else {
        node.axis = axis as u32;
        node.split = (node.lo[axis] + node.hi[axis]) * 0.5;
    }
}

/// Which sides of the plane `split` on `axis` the primitive bounds `b` touch (closed
/// half-spaces: a primitive on the plane goes to both).
#[inline(always)]
pub fn kd_sides(b: &[f32; 6], axis: usize, split: f32) -> (bool, bool) {
    // Clamped so the indexing needs no bounds check (callers pass an axis below 3).
    let a = if axis < 3 { axis } else { 2 };
    (b[a] <= split, b[a + 3] >= split)
}

/// The node of the level holding reference `r`: the last one starting at or before it.
///
/// # Safety
/// `nodes` holds `n >= 1` nodes whose `start`s do not decrease.
#[inline(always)]
unsafe fn node_of(nodes: DevPtr<KdNode>, n: u32, r: u64) -> usize {
    let (mut lo, mut hi) = (0usize, n as usize);
    // Invariant: nodes[lo].start <= r (nodes[0].start is 0), the answer is below `hi`.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        // SAFETY: `mid < n`.
        if unsafe { (*nodes.as_ptr().add(mid)).start } <= r {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Record `node` as a leaf.
///
/// # Safety
/// `p.leaves` has `p.leaf_capacity` entries, `p.stats` `kd_stat::COUNT`.
#[inline(always)]
unsafe fn kd_emit_leaf(p: &KdParams, node: &KdNode) {
    // SAFETY: the caller's contract.
    let index = unsafe { Atomic64::from_ptr(p.stats.as_ptr().add(kd_stat::LEAVES)) }.fetch_add(1);
    // SAFETY: as above.
    unsafe { count(p.stats, kd_stat::LEAF_REFS, node.count as u64) };
    if index < p.leaf_capacity as u64 {
        let leaf = KdLeaf { lo: node.lo, hi: node.hi, refs: node.refs, count: node.count, depth: node.depth };
        // SAFETY: entry `index` was reserved by this thread alone.
        unsafe { p.leaves.write(index as usize, leaf) };
    } else {
        // SAFETY: as above.
        unsafe { count(p.stats, kd_stat::OVERFLOW, 1) };
    }
}

/// Allocate `count` references for a node; null (counted) on failure or when `count` is 0.
///
/// # Safety
/// `p.stats` has `kd_stat::COUNT` entries.
#[inline(always)]
unsafe fn kd_alloc(p: &KdParams, malloc: &AnyMalloc, n: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    let bytes = kd_request(n);
    let ptr = malloc.malloc(bytes) as u64;
    // SAFETY: the caller's contract.
    unsafe {
        count(p.stats, kd_stat::ALLOCS, 1);
        count(p.stats, kd_stat::BYTES, bytes as u64);
        count(p.stats, kd_stat::BYTES_SQ, (bytes as u64).wrapping_mul(bytes as u64));
        if ptr == 0 {
            count(p.stats, kd_stat::FAILED, 1);
        }
    }
    ptr
}

/// One step (see [`kd_step`]) of the breadth-first kd-tree build over the allocator in
/// `p.region`.
#[kernel(crate = dynasoar_device, name = "dynasoar_workload_kdtree")]
pub fn kdtree_workload(p: KdParams) {
    let t = dynasoar_device::arch::global_thread_id() as u64;
    // SAFETY: the host launches this on an initialised region.
    let malloc = unsafe { AnyMalloc::attach(Region::from_header(p.region.as_ptr())) };
    let node_ptr = |i: usize| p.nodes.as_ptr().wrapping_add(i);
    match p.step {
        kd_step::ROOT => {
            if t != 0 || p.nodes_count == 0 {
                return;
            }
            // SAFETY: node 0 exists (the host wrote the root) and only this thread uses it.
            unsafe {
                let root = node_ptr(0);
                (*root).refs = kd_alloc(&p, &malloc, (*root).count);
            }
        }
        kd_step::FILL => {
            if p.nodes_count == 0 {
                return;
            }
            // SAFETY: ROOT (the previous launch) wrote the root; nobody writes it now.
            let root = unsafe { node_ptr(0).read() };
            if t < root.count as u64 && root.refs != 0 {
                // SAFETY: entry `t` of the root's array, this thread's own.
                unsafe { (root.refs as usize as *mut u32).add(t as usize).write(t as u32) };
            }
        }
        kd_step::CLASSIFY => {
            if t >= p.refs_count as u64 || p.nodes_count == 0 {
                return;
            }
            // SAFETY: the level's nodes; their `start`s grow with the index (reserved in one
            // atomic with the node index). Only the plain fields are read here; the counters
            // are updated atomically.
            unsafe {
                let node = node_ptr(node_of(p.nodes, p.nodes_count, t));
                let (refs, start, axis) = ((*node).refs, (*node).start, (*node).axis);
                if refs == 0 || axis >= KD_LEAF || t < start || t - start >= (*node).count as u64 {
                    return;
                }
                let prim = (refs as usize as *const u32).add((t - start) as usize).read();
                let bounds = p.prims.read(prim as usize);
                let (left, right) = kd_sides(&bounds, axis as usize, (*node).split);
                if left {
                    Atomic32::from_ptr(core::ptr::addr_of_mut!((*node).n_left)).fetch_add(1);
                }
                if right {
                    Atomic32::from_ptr(core::ptr::addr_of_mut!((*node).n_right)).fetch_add(1);
                }
            }
        }
        kd_step::ALLOC => {
            if t >= p.nodes_count as u64 {
                return;
            }
            // SAFETY: node `t` is this thread's alone in this launch.
            let mut node = unsafe { node_ptr(t as usize).read() };
            node.child = KD_NONE;
            if node.refs == 0 && node.count > 0 {
                // Its malloc failed (counted): the subtree is lost.
            } else if node.axis >= KD_LEAF || (node.n_left == node.count && node.n_right == node.count) {
                // SAFETY: the buffers the host passes.
                unsafe { kd_emit_leaf(&p, &node) };
            } else {
                let (nl, nr) = (node.n_left, node.n_right);
                let add = (2u64 << KD_REF_BITS) | (nl as u64 + nr as u64);
                // SAFETY: the buffer has `kd_stat::COUNT` entries.
                let base = unsafe { Atomic64::from_ptr(p.stats.as_ptr().add(kd_stat::NEXT)) }.fetch_add(add);
                let index = base >> KD_REF_BITS;
                let ref_base = base & ((1u64 << KD_REF_BITS) - 1);
                if index + 2 > p.capacity as u64 {
                    // SAFETY: as above.
                    unsafe { count(p.stats, kd_stat::OVERFLOW, 1) };
                } else {
                    node.child = index as u32;
                    // Below 3 here (a leaf took the other branch); clamped for the bounds check.
                    let axis = if node.axis < 3 { node.axis as usize } else { 2 };
                    for (side, n) in [(0usize, nl), (1, nr)] {
                        let mut c = KdNode {
                            lo: node.lo,
                            hi: node.hi,
                            start: if side == 0 { ref_base } else { ref_base + nl as u64 },
                            count: n,
                            depth: node.depth + 1,
                            child: KD_NONE,
                            ..KdNode::default()
                        };
                        if side == 0 {
                            c.hi[axis] = node.split;
                        } else {
                            c.lo[axis] = node.split;
                        }
                        // SAFETY: the buffers the host passes.
                        c.refs = unsafe { kd_alloc(&p, &malloc, n) };
                        kd_plan(&mut c, p.leaf_size, p.max_depth);
                        // SAFETY: entries `index..index + 2` were reserved by this thread.
                        unsafe { p.next.write(index as usize + side, c) };
                    }
                }
            }
            // SAFETY: node `t` is this thread's alone.
            unsafe { (*node_ptr(t as usize)).child = node.child };
        }
        kd_step::SCATTER => {
            if t >= p.refs_count as u64 || p.nodes_count == 0 {
                return;
            }
            // SAFETY: the level's nodes, written by the previous launches only.
            unsafe {
                let node = node_ptr(node_of(p.nodes, p.nodes_count, t)).read();
                if node.child == KD_NONE
                    || node.refs == 0
                    || t < node.start
                    || t - node.start >= node.count as u64
                {
                    return;
                }
                let prim = (node.refs as usize as *const u32).add((t - node.start) as usize).read();
                let bounds = p.prims.read(prim as usize);
                let (left, right) = kd_sides(&bounds, node.axis as usize, node.split);
                for (side, goes) in [(0usize, left), (1, right)] {
                    if !goes {
                        continue;
                    }
                    let child = p.next.as_ptr().add(node.child as usize + side);
                    let (refs, n) = ((*child).refs, (*child).count);
                    let slot = Atomic32::from_ptr(core::ptr::addr_of_mut!((*child).fill)).fetch_add(1);
                    if refs != 0 && slot < n {
                        (refs as usize as *mut u32).add(slot as usize).write(prim);
                    } else if refs != 0 {
                        count(p.stats, kd_stat::LOST, 1);
                    }
                }
            }
        }
        kd_step::FREE => {
            if t >= p.nodes_count as u64 {
                return;
            }
            // SAFETY: node `t` is this thread's; a split node's array was its own and is freed
            // once (the node is dropped after this level).
            unsafe {
                let node = node_ptr(t as usize);
                if (*node).child != KD_NONE {
                    malloc.free((*node).refs as usize as *mut u8);
                    (*node).refs = 0;
                }
            }
        }
        kd_step::GATHER => {
            if t >= p.nodes_count as u64 {
                return;
            }
            // SAFETY: leaf `t` and its output range (sized by the host from the counts).
            unsafe {
                let leaf = p.leaves.read(t as usize);
                if leaf.refs != 0 {
                    copy_words(
                        leaf.refs as usize as *const u32,
                        p.out.as_ptr().add(p.offsets.read(t as usize) as usize),
                        leaf.count,
                    );
                }
            }
        }
        kd_step::FREE_LEAVES => {
            if t >= p.nodes_count as u64 {
                return;
            }
            // SAFETY: leaf `t`'s array is its own; the entry is cleared, so it is freed once.
            unsafe {
                let leaf = p.leaves.as_ptr().add(t as usize);
                malloc.free((*leaf).refs as usize as *mut u8);
                (*leaf).refs = 0;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_are_powers_of_two_with_a_floor() {
        assert_eq!(capacity_for(0), MIN_CAPACITY);
        assert_eq!(capacity_for(3), 4);
        assert_eq!(capacity_for(5), 8);
        assert_eq!(capacity_for(64), 64);
        assert_eq!(capacity_for(u32::MAX), u32::MAX);
    }

    #[test]
    fn requests_are_padded_to_16_bytes_and_straddlers_go_both_ways() {
        assert_eq!(kd_request(1), 16);
        assert_eq!(kd_request(4), 16);
        assert_eq!(kd_request(5), 32);
        let b = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        assert_eq!(kd_sides(&b, 0, 0.5), (true, true));
        assert_eq!(kd_sides(&b, 1, 2.0), (true, false));
        assert_eq!(kd_sides(&b, 2, -1.0), (false, true));
        let mut n = KdNode { hi: [1.0, 4.0, 2.0], count: 100, ..KdNode::default() };
        kd_plan(&mut n, 8, 20);
        assert_eq!((n.axis, n.split), (1, 2.0));
        n.count = 8;
        kd_plan(&mut n, 8, 20);
        assert_eq!(n.axis, KD_LEAF);
    }
}
