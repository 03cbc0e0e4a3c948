//! Error bits device code raises in its heap's state, for the host to report after a launch.

/// An allocation found no memory; the caller got no object.
pub const OUT_OF_MEMORY: u32 = 1 << 0;
/// An object was freed that was not allocated (a double free).
pub const DOUBLE_FREE: u32 = 1 << 1;
/// A null handle was freed or used where an object is required.
pub const NULL_HANDLE: u32 = 1 << 2;
/// The AOS object store's table of a class was full: the object was not created (or, for a
/// free, not recorded and so never given back to the allocator).
pub const TABLE_FULL: u32 = 1 << 3;
/// A `#[parallel]` method created or freed an object of a class its `creates(..)`/`frees(..)`
/// declaration leaves out; the object was not created (or not freed).
pub const UNDECLARED_CHANGE: u32 = 1 << 4;
/// A do-all or gather kernel was launched with a grid whose thread count is not a multiple of
/// the class's objects per block; it visited no object. (`Runtime` never does this; a launch of
/// a method's kernel by hand can.)
pub const BAD_GRID: u32 = 1 << 5;
/// A thread of a `parallel_do` over a class freed an object of that class (or a subclass) other
/// than its own `this` (paper section 2.1 forbids it: that object may not have been visited
/// yet). Checked on the CPU backend (not in GPU kernels); the object was not freed.
pub const FREED_ITERATED: u32 = 1 << 6;
/// A `device_do` or `device_reduce` walked a heap whose block size or objects per block differ
/// from those of the allocator its kernel was compiled for (a kernel launched by hand on
/// another allocator's heap); it visited no object. (`Runtime` never does this.)
pub const WRONG_HEAP: u32 = 1 << 7;
/// An allocation's warp-coalesced hand-out skipped a lane although its leader served the whole
/// group (an allocator fault, not a lack of memory): the lane got no object, and the heap's
/// `coalescing_misses` counts it.
pub const SKIPPED_LANE: u32 = 1 << 8;
