//! The block geometry an allocator's `#[blocks(..)]` chooses, as the host sees it.

use dynasoar::prelude::*;
use dynasoar::{AllocatorSpec, ClassSpec};

#[soa_class]
pub struct Small {
    pub a: u32,
}

#[soa_class]
pub struct Large {
    pub a: [u32; 9],
}

#[soa_class]
pub struct SmallToo {
    pub a: u32,
}

#[soa_class]
pub struct LargeToo {
    pub a: [u32; 9],
}

dynasoar::allocator!(pub Compact: Small, Large);

dynasoar::allocator!(
    /// Every class 64 objects a block.
    #[blocks(uniform)]
    pub Uniform: SmallToo, LargeToo
);

/// The paper's geometry by default: the smallest class fills 64 slots, the class nine times its
/// size gets 7; uniform blocks give both 64, in blocks sized for the larger class.
#[test]
fn uniform_blocks_give_every_class_64_objects() {
    assert_eq!((Small::OBJECTS_PER_BLOCK, Large::OBJECTS_PER_BLOCK), (64, 7));
    assert_eq!((SmallToo::OBJECTS_PER_BLOCK, LargeToo::OBJECTS_PER_BLOCK), (64, 64));
    let (compact, uniform) =
        (<Compact as AllocatorSpec>::BLOCK_BYTES, <Uniform as AllocatorSpec>::BLOCK_BYTES);
    assert_eq!(compact, Small::BLOCK_BYTES);
    assert!(uniform >= 64 * 36 && uniform < compact + 64 * 36, "{compact} and {uniform} bytes");
    let objects: Vec<u32> = <Uniform as AllocatorSpec>::CLASSES.iter().map(|c| c.objects_per_block).collect();
    assert_eq!(objects, [64, 64], "the host's class table agrees");
}
