use dynasoar::prelude::*;

// The record of `pair` is 12 bytes (a u32, then a u64 at offset 8 of the value, which starts
// 4 bytes into it): a second slot's `id` would not be 8-byte aligned.
#[soa_class]
pub struct Tagged {
    pub kind: u32,
    #[group(pair)]
    pub count: u32,
    #[group(pair)]
    pub id: u64,
}

fn main() {}
