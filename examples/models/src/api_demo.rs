//! The DynaSOAr API in the style of the paper's Appendix A: two classes with increment methods.
//!
//! `Foo` objects each own a `Bar` partner, created in `Foo`'s constructor on the device.
//! `Foo::increment` adds to its own field and its partner's; `Bar::increment` adds to its own.

use dynasoar::prelude::*;

/// A class with a scalar, a float and a handle to another class's object.
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Foo {
    pub a: i32,
    pub b: f32,
    pub partner: Handle<Bar>,
}

/// A class with a counter and a fixed array.
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Bar {
    pub c: i32,
    pub d: [u32; 4],
}

dynasoar::allocator!(
    /// The allocator of the API example.
    pub DemoAlloc: Foo, Bar
);

#[soa_methods]
impl Foo {
    /// Object `index`: `a = index`, with a new `Bar` partner whose `c = 10 * index`.
    #[parallel_new]
    pub fn create(dev: &Device<DemoAlloc>, index: u64) -> Self {
        let partner = dev.make_new(Bar { c: 10 * index as i32, d: [index as u32; 4] });
        Foo { a: index as i32, b: 0.5, partner: partner.map(Obj::handle).unwrap_or_default() }
    }

    /// `a += by`, `b *= 2`, and the partner's `c += 1` and `d[a % 4] += 1`.
    #[parallel]
    pub fn increment(this: Obj<Self>, _dev: &Device<DemoAlloc>, by: i32) {
        this.set_a(this.a() + by);
        this.set_b(this.b() * 2.0);
        if let Some(bar) = this.partner().get() {
            bar.set_c(bar.c() + 1);
            let i = this.a().rem_euclid(4) as usize;
            bar.set_d_at(i, bar.d_at(i) + 1);
        }
    }
}

#[soa_methods]
impl Bar {
    /// `c += 1`.
    #[parallel]
    pub fn increment(this: Obj<Self>, _dev: &Device<DemoAlloc>) {
        this.set_c(this.c() + 1);
    }
}
