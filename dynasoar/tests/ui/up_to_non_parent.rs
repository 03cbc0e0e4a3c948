use dynasoar::prelude::*;

#[soa_class]
pub struct Fish {
    pub fins: u32,
}

#[soa_class]
pub struct Rock {
    pub weight: u32,
}

dynasoar::allocator!(pub Sea: Fish, Rock);

#[soa_methods]
impl Fish {
    #[parallel]
    pub fn sink(this: Obj<Self>, _dev: &Device<Sea>) {
        // A fish is no rock.
        let rock = this.up::<Rock, _>();
        rock.set_weight(1);
    }
}

fn main() {}
