//! A model that exercises the DSL's semantics, for the tests: inheritance and abstract classes,
//! `parallel_do` visiting exactly the objects that existed at launch, objects freeing
//! themselves, `device_do`, atomic fields, type checks and casts; and fields in groups (one
//! record per object: in an abstract class, atomic, with an array) through all of them.

use dynasoar::prelude::*;

/// Animals are abstract: only cats and dogs exist.
#[soa_class(abstract)]
#[derive(Debug, PartialEq)]
pub struct Animal {
    pub id: u32,
    /// How many times `Animal::tick` visited this object.
    #[group(visits)]
    pub ticks: u32,
    /// Filled by `count_cats`.
    #[group(visits)]
    pub cats_seen: u32,
}

#[soa_class(extends = Animal)]
#[derive(Debug, PartialEq)]
pub struct Cat {
    pub lives: u32,
}

#[soa_class(extends = Animal)]
#[derive(Debug, PartialEq)]
pub struct Dog {
    pub registry: Handle<Registry>,
    #[group(kennel)]
    pub bones: [u16; 3],
    /// Its first bone's number when it was born (unchanged since: `report` changes `bones`).
    #[group(kennel)]
    pub collar: u16,
}

/// One object counts, atomically, what many threads report.
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Registry {
    #[atomic]
    #[group(tally)]
    pub dogs: u32,
    #[atomic]
    #[group(tally)]
    pub weight: f32,
    #[atomic]
    pub last: Handle<Dog>,
}

dynasoar::allocator!(pub Zoo: Animal, Cat, Dog, Registry);

/// Shared tables for `Animal::record`.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct Tables {
    pub animals: DeviceArray<Handle<Animal>>,
    pub counts: DeviceArray<u32>,
}

#[soa_methods]
impl Registry {
    #[parallel_new]
    pub fn create(_dev: &Device<Zoo>, _index: u64) -> Self {
        Registry { dogs: 0, weight: 0.0, last: Handle::NULL }
    }

    /// Cats: index `i` gets id `i`; dogs: id `1000 + i`, registered in the (only) registry.
    #[parallel]
    pub fn populate(this: Obj<Self>, dev: &Device<Zoo>, count: u32) {
        for i in 0..count {
            let base = Animal { id: i, ticks: 0, cats_seen: 0 };
            let _ = dev.make_new(Cat { base, lives: 9 });
            let base = Animal { id: 1000 + i, ticks: 0, cats_seen: 0 };
            let _ = dev.make_new(Dog { base, registry: this.handle(), bones: [1, 2, 3], collar: 1 });
        }
    }
}

#[soa_methods]
impl Animal {
    /// Every animal, of either class, counts one visit.
    #[parallel]
    pub fn tick(this: Obj<Self>, _dev: &Device<Zoo>) {
        this.set_ticks(this.ticks() + 1);
    }

    /// Count the cats with `device_do`.
    #[parallel]
    pub fn count_cats(this: Obj<Self>, dev: &Device<Zoo>) {
        let mut n = 0;
        dev.device_do::<Cat>(|_| n += 1);
        this.set_cats_seen(n);
    }

    /// `cats_seen`: a chain over the cats' ids on 8 threads per animal (`device_reduce`), its
    /// parts combined by a function that is neither commutative nor associative, so the order
    /// of every fold and combination shows in the result.
    #[parallel(lanes = 8)]
    pub fn chain_cats(this: Obj<Self>, dev: &Device<Zoo>) {
        let chain =
            dev.device_reduce::<Cat, u32>(1, |acc, _, cat| chain_step(acc, cat.base.id), chain_combine);
        this.set_cats_seen(chain);
    }

    /// [`chain_cats`](Self::chain_cats) with the dense walk (the same chain: same parts, same
    /// order), here over half-empty blocks, where it is correct though not faster.
    #[parallel(lanes = 8, dense)]
    pub fn chain_cats_dense(this: Obj<Self>, dev: &Device<Zoo>) {
        let chain =
            dev.device_reduce::<Cat, u32>(1, |acc, _, cat| chain_step(acc, cat.base.id), chain_combine);
        this.set_cats_seen(chain);
    }

    /// [`chain_cats`](Self::chain_cats) on one thread per animal.
    #[parallel]
    pub fn chain_cats_one_lane(this: Obj<Self>, dev: &Device<Zoo>) {
        let chain = dev.device_reduce::<Cat, u32>(1, |acc, cat, _| chain_step(acc, cat.id()), chain_combine);
        this.set_cats_seen(chain);
    }

    /// A method with lanes that tries to create a cat: refused (every lane would).
    #[parallel(lanes = 4)]
    pub fn kitten_on_lanes(this: Obj<Self>, dev: &Device<Zoo>) {
        let base = Animal { id: this.id() + 300_000, ticks: 0, cats_seen: 0 };
        let _ = dev.make_new(Cat { base, lives: 1 });
    }

    /// Record this animal's handle at index `id % len` of `table` and count it in slot 0 of
    /// `counts` (a shared table and counter: atomic, bounds-checked, no `unsafe`).
    #[parallel]
    pub fn record(this: Obj<Self>, _dev: &Device<Zoo>, tables: Tables) {
        tables.animals.set(this.id() as u64 % tables.animals.len(), this.handle());
        tables.counts.at(0).fetch_add(1);
    }

    /// Write one past the end of `tables.animals`: an index out of bounds traps.
    #[parallel]
    pub fn record_out_of_bounds(this: Obj<Self>, _dev: &Device<Zoo>, tables: Tables) {
        tables.animals.set(tables.animals.len(), this.handle());
    }

    /// Every animal counts a visit and has a young one of the other class (cats have puppies,
    /// dogs kittens), created during the launch: neither kind of newborn is visited by it,
    /// although the runtime launches the cats and the dogs one after the other (their blocks
    /// hold different numbers of objects; see [`Bird::hatch_other`] for classes in one launch).
    #[parallel]
    pub fn have_young_of_the_other_class(this: Obj<Self>, dev: &Device<Zoo>) {
        this.set_ticks(this.ticks() + 1);
        let base = Animal { id: this.id() + 200_000, ticks: 0, cats_seen: 0 };
        if this.is::<Cat>() {
            let _ = dev.make_new(Dog { base, registry: Handle::NULL, bones: [0; 3], collar: 0 });
        } else {
            let _ = dev.make_new(Cat { base, lives: 9 });
        }
    }

    /// Statistics of the animals in parallel: their number, the sum, minimum and maximum of
    /// their ids (signed, to check the ordered encodings), the largest id as a float, and the
    /// sum of their ids halved as a float.
    #[parallel]
    pub fn tally(this: Ref<Self>, _dev: &Device<Zoo>, totals: Totals) {
        let id = this.id() as i64;
        totals.count(0);
        totals.add_u64(1, id as u64);
        totals.min_i64(2, id - 500);
        totals.max_i64(3, id - 500);
        totals.max_f64(4, id as f64);
        totals.add_f64(5, id as f64 * 0.5);
        totals.min_f64(6, -(id as f64));
    }

    /// A read-only method: checks run-time types without writing.
    #[parallel]
    pub fn check_types(this: Ref<Self>, _dev: &Device<Zoo>) {
        assert!(this.is::<Animal>());
        assert!(this.is::<Cat>() != this.is::<Dog>());
        assert!(!this.is::<Registry>());
    }
}

#[soa_methods]
impl Cat {
    /// Each cat has a kitten (created during the launch: not visited by it), which gets the
    /// parent's id plus 100000 and one fewer life.
    #[parallel]
    pub fn have_kitten(this: Obj<Self>, dev: &Device<Zoo>) {
        Self::kitten(this, dev);
    }

    /// Cats with an odd id free themselves.
    #[parallel]
    pub fn leave_if_odd(this: Obj<Self>, dev: &Device<Zoo>) {
        Self::free_if_odd(this, dev);
    }

    /// [`have_kitten`](Self::have_kitten), declaring what it creates: the runtime keeps the
    /// other classes' lists.
    #[parallel(creates(Cat))]
    pub fn have_declared_kitten(this: Obj<Self>, dev: &Device<Zoo>) {
        Self::kitten(this, dev);
    }

    /// [`leave_if_odd`](Self::leave_if_odd), declaring what it frees.
    #[parallel(frees(Cat))]
    pub fn leave_if_odd_declared(this: Obj<Self>, dev: &Device<Zoo>) {
        Self::free_if_odd(this, dev);
    }

    /// Every cat leaves and a dog with id `id + 300_000` takes its place: declared, so that
    /// the frees of cats run in a launch that creates dogs only (they keep the cats' emptied
    /// blocks from the dogs until the launch ends; tests/ptx.rs counts their fences).
    #[parallel(creates(Dog), frees(Cat))]
    pub fn make_way_for_a_dog(this: Obj<Self>, dev: &Device<Zoo>) {
        Self::leave_for_a_dog(this, dev);
    }

    /// Cats with an odd id leave, each for a dog with id `id + 300_000`: as
    /// [`make_way_for_a_dog`](Self::make_way_for_a_dog), but the cats' blocks keep cats, now
    /// with room that their frees (which do not wait for the blocks' bitmaps) did not make
    /// active.
    #[parallel(creates(Dog), frees(Cat))]
    pub fn make_way_if_odd(this: Obj<Self>, dev: &Device<Zoo>) {
        if this.id() % 2 == 1 {
            Self::leave_for_a_dog(this, dev);
        }
    }

    /// Declares that it creates dogs but tries to create a kitten: refused, and reported.
    #[parallel(creates(Dog), frees())]
    pub fn have_undeclared_kitten(this: Obj<Self>, dev: &Device<Zoo>) {
        Self::kitten(this, dev);
    }

    /// Each cat has a litter of `id % size` kittens at once (`make_new_each`; created during
    /// the launch, so not visited by it): kitten `k` gets id `200_000 + 16 * id + k` and `k`
    /// lives (`size` at most 16). The parent counts 100 ticks and, in `cats_seen`, the kittens
    /// it got whose fields were stored before it was handed them.
    #[parallel(creates(Cat))]
    pub fn have_litter(this: Obj<Self>, dev: &Device<Zoo>, size: u32) {
        this.set_ticks(this.ticks() + 100);
        let id = this.id();
        let mut born = 0;
        dev.make_new_each(
            id % size,
            |k| Cat { base: Animal { id: 200_000 + 16 * id + k, ticks: 0, cats_seen: 0 }, lives: k },
            |k, kitten| {
                born += kitten.is_some_and(|c| c.lives() == k && c.id() == 200_000 + 16 * id + k) as u32
            },
        );
        this.set_cats_seen(born);
    }

    /// One cat, created by index (`id` = index), for sizing tests.
    #[parallel_new]
    pub fn born(_dev: &Device<Zoo>, index: u64) -> Self {
        Cat { base: Animal { id: index as u32, ticks: 0, cats_seen: 0 }, lives: 9 }
    }

    /// Each cat tries to free another cat: the rules forbid it (only `this` may be freed in a
    /// `parallel_do` over its class), and the CPU backend refuses and reports it.
    #[parallel]
    pub fn free_another_cat(this: Obj<Self>, dev: &Device<Zoo>) {
        let mut other = None;
        dev.device_do::<Cat>(|c| {
            if c != this && other.is_none() {
                other = Some(c);
            }
        });
        if let Some(other) = other {
            dev.free(other);
        }
    }

    /// Inlined, so that each kernel's free is compiled with its method's effects.
    #[inline(always)]
    fn leave_for_a_dog(this: Obj<Self>, dev: &Device<Zoo>) {
        let base = Animal { id: this.id() + 300_000, ticks: 0, cats_seen: 0 };
        dev.free(this);
        let _ = dev.make_new(Dog { base, registry: Handle::NULL, bones: [0; 3], collar: 0 });
    }

    fn kitten(this: Obj<Self>, dev: &Device<Zoo>) {
        this.set_ticks(this.ticks() + 10);
        let base = Animal { id: this.id() + 100_000, ticks: 0, cats_seen: 0 };
        let _ = dev.make_new(Cat { base, lives: this.lives().saturating_sub(1) });
    }

    /// Inlined, so that each kernel's free is compiled with its method's effects (a launch
    /// that creates nothing frees without a fence; tests/ptx.rs counts them).
    #[inline(always)]
    fn free_if_odd(this: Obj<Self>, dev: &Device<Zoo>) {
        if this.id() % 2 == 1 {
            dev.free(this);
        }
    }
}

#[soa_methods]
impl Dog {
    /// Every dog reports to its registry atomically, and checks its casts.
    #[parallel]
    pub fn report(this: Obj<Self>, _dev: &Device<Zoo>) {
        let animal: Obj<Animal> = this.up();
        assert!(animal.cast::<Dog>().is_some() && animal.cast::<Cat>().is_none());
        assert!(animal.is_exactly::<Dog>() && !animal.is_exactly::<Animal>());
        if let Some(registry) = this.registry().get() {
            registry.dogs_atomic().fetch_add(1);
            registry.weight_atomic().fetch_add(0.5);
            registry.last_atomic().store(this.handle());
        }
        this.set_bones_at(2, this.bones_at(2) + this.bones_at(0));
    }
}

/// The fold of [`Animal::chain_cats`].
pub fn chain_step(acc: u32, id: u32) -> u32 {
    acc.wrapping_mul(31).wrapping_add(id)
}

/// The combination of [`Animal::chain_cats`]: neither commutative nor associative.
pub fn chain_combine(a: u32, b: u32) -> u32 {
    a.wrapping_mul(1_000_003) ^ b.wrapping_add(0x5bd1)
}

/// Birds are abstract; sparrows and crows are the same size, so their blocks hold as many
/// objects, and a `parallel_do` over birds visits both in one launch (see
/// `RuntimeBuilder::merge_subclass_launches`).
#[soa_class(abstract)]
#[derive(Debug, PartialEq)]
pub struct Bird {
    pub id: u32,
    /// How many times a `parallel_do` over birds visited this one.
    pub visits: u32,
}

#[soa_class(extends = Bird)]
#[derive(Debug, PartialEq)]
pub struct Sparrow {
    pub wing: u32,
}

#[soa_class(extends = Bird)]
#[derive(Debug, PartialEq)]
pub struct Crow {
    pub beak: u32,
}

dynasoar::allocator!(pub Aviary: Bird, Sparrow, Crow);

#[soa_methods]
impl Sparrow {
    /// Sparrow `index` (its id).
    #[parallel_new]
    pub fn hatch(_dev: &Device<Aviary>, index: u64) -> Self {
        Sparrow { base: Bird { id: index as u32, visits: 0 }, wing: 1 }
    }
}

#[soa_methods]
impl Crow {
    /// Crow `index` (id `1000 + index`).
    #[parallel_new]
    pub fn hatch(_dev: &Device<Aviary>, index: u64) -> Self {
        Crow { base: Bird { id: 1000 + index as u32, visits: 0 }, beak: 2 }
    }
}

#[soa_methods]
impl Bird {
    /// Every bird counts a visit.
    #[parallel]
    pub fn visit(this: Obj<Self>, _dev: &Device<Aviary>) {
        this.set_visits(this.visits() + 1);
    }

    /// Every bird counts a visit and hatches a bird of the other class (id + 100,000), created
    /// during the launch: no newborn is visited by it, although the launch visits sparrows and
    /// crows alike.
    #[parallel(creates(Sparrow, Crow))]
    pub fn hatch_other(this: Obj<Self>, dev: &Device<Aviary>) {
        this.set_visits(this.visits() + 1);
        let base = Bird { id: this.id() + 100_000, visits: 0 };
        if this.is::<Sparrow>() {
            let _ = dev.make_new(Crow { base, beak: 0 });
        } else {
            let _ = dev.make_new(Sparrow { base, wing: 0 });
        }
    }
}
