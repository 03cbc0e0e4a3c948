dynasoar::allocator!(pub Space:);

fn main() {}
