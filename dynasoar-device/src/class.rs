//! What the allocator needs to know about a class, as compile-time constants.

/// A class registered in a heap: its type id and block geometry. Implemented by the allocator
/// declaration (`allocator!`); the allocator's hot paths are monomorphised over it, so the
/// numbers below are immediates in the generated code.
pub trait ClassSpec: 'static {
    /// Index of the class among its heap's classes.
    const TYPE_ID: u8;
    /// Objects per block (`N_T`, 1..=64).
    const OBJECTS_PER_BLOCK: u32;
    /// Bytes per block (the same for every class of the heap).
    const BLOCK_BYTES: u64;
    /// The class's name, for messages.
    const NAME: &'static str;
}
