//! Reusing enumeration lists: which classes a `parallel_do` need not list again
//! ([`Listings`]).

use dynasoar_device::Effects;
use dynasoar_device::heap::MAX_CLASSES;

use crate::backend::Executor;

/// Which classes' enumeration lists a `parallel_do` may use again, so that it need not list
/// them: a list stays right until a launch that may create or free objects of its class (a
/// method's [`Effects`]). Skipping the listing saves a launch; classes that never change (the
/// cells of a grid) are then listed once.
///
/// A list also stays usable, though no longer exact, after launches that may only have freed
/// objects of its class and created no object of any class of the heap: it then names every
/// object of the class, some that were freed since, and blocks that are the class's or free
/// (no creation can have opened an emptied block for another class). A do-all without lanes
/// over a method that creates nothing (an object it created could take a freed slot the list
/// names) and frees no object of the class (a block its frees empty reads as full while it is
/// being freed) takes such a list with `freed_since` set and visits only the objects still
/// allocated (`Listing::freed_since` in the device crate): structure's nodes, which its springs
/// free, are then listed once per run of substeps instead of before each `Node::update`.
pub(super) struct Listings {
    /// Classes (bits by type id) listed since the last launch that could change their objects.
    current: u64,
    /// Classes listed since, whose objects launches since may have freed and none created, and
    /// no launch since may have created an object of any class (see the type's docs).
    freed: u64,
    /// The parity of each class's last listing (which counter its do-all reads).
    parity: [u32; MAX_CLASSES],
    /// [`Executor::device_writes`] after this runtime's last `parallel_do`. Any other count
    /// means that something else ran since (a `parallel_new`, a `collect`, an app's own
    /// kernel), and no list is trusted.
    writes: u64,
    /// The class whose ranked list (built before a launch of a method with lanes) is still
    /// right, if any: the store keeps one list, and a launch that may create or free objects of
    /// the class makes it wrong, as it does the class's enumeration list.
    ranked: Option<u8>,
}

/// A list [`Listings::kept`] found for a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Kept {
    /// Which counter the do-all reads.
    pub(super) parity: u32,
    /// Launches since the listing may have freed objects of the class (see [`Listings`]).
    pub(super) freed_since: bool,
}

impl Listings {
    pub(super) fn new(exec: &Executor) -> Self {
        Listings::with_writes(exec.device_writes())
    }

    fn with_writes(writes: u64) -> Self {
        Listings { current: 0, freed: 0, parity: [0; MAX_CLASSES], writes, ranked: None }
    }

    /// Forget every list: the next `parallel_do` over any class lists it.
    pub(super) fn forget(&mut self) {
        self.current = 0;
        self.freed = 0;
        self.ranked = None;
    }

    /// Forget every list if anything but this runtime's `parallel_do`s ran since the last one.
    pub(super) fn check_writes(&mut self, exec: &Executor) {
        if self.writes != exec.device_writes() {
            self.forget();
        }
    }

    /// The list of `class`, if it is still usable: exact, or (where `freed_ok`, for a loop
    /// that can take it) naming objects freed since.
    pub(super) fn kept(&self, class: u8, freed_ok: bool) -> Option<Kept> {
        let bit = 1 << class;
        let parity = self.parity[class as usize];
        if self.current & bit != 0 {
            Some(Kept { parity, freed_since: false })
        } else if freed_ok && self.freed & bit != 0 {
            Some(Kept { parity, freed_since: true })
        } else {
            None
        }
    }

    /// `class` was listed with `parity`.
    pub(super) fn listed(&mut self, class: u8, parity: u32) {
        self.current |= 1 << class;
        self.freed &= !(1 << class);
        self.parity[class as usize] = parity;
    }

    /// A launch may have created or freed objects as `effects` say (bits by type id): the
    /// lists of the classes it may have changed are no longer exact. If it created nothing,
    /// those it may only have freed stay usable with `freed_since`; if it may have created
    /// anything, no such list does (a new object may live in a block that frees emptied).
    pub(super) fn changed(&mut self, effects: Effects) {
        let usable = self.current | self.freed;
        self.current &= !effects.changed();
        self.freed = if effects.creates == 0 { usable & !self.current } else { 0 };
        if self.ranked.is_some_and(|c| effects.changed() & (1 << c) != 0) {
            self.ranked = None;
        }
    }

    /// Whether the store's ranked list is `class`'s and still right.
    pub(super) fn ranked(&self, class: u8) -> bool {
        self.ranked == Some(class)
    }

    /// The store's ranked list is now `class`'s.
    pub(super) fn set_ranked(&mut self, class: u8) {
        self.ranked = Some(class);
    }

    /// This runtime's `parallel_do` is done: remember [`Executor::device_writes`] after it.
    pub(super) fn done(&mut self, exec: &Executor) {
        self.writes = exec.device_writes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: u8 = 0;
    const B: u8 = 1;
    const C: u8 = 2;

    fn effects(creates: u64, frees: u64) -> Effects {
        Effects { creates, frees }
    }

    /// A class's list is exact until a launch may change its objects, usable with
    /// `freed_since` while launches may only free them and create nothing in the heap, and
    /// gone after a launch that may create anything.
    #[test]
    fn lists_follow_the_effects_of_the_launches_since() {
        let mut l = Listings::with_writes(0);
        assert_eq!(l.kept(A, true), None, "nothing is listed at first");
        l.listed(A, 1);
        l.listed(B, 0);
        let exact = |parity| Some(Kept { parity, freed_since: false });
        let freed = |parity| Some(Kept { parity, freed_since: true });
        l.changed(Effects::NONE);
        assert_eq!((l.kept(A, true), l.kept(B, false)), (exact(1), exact(0)));
        // Frees of A only: A's list names objects freed since; B's stays exact.
        l.changed(effects(0, 1 << A));
        assert_eq!((l.kept(A, true), l.kept(A, false), l.kept(B, true)), (freed(1), None, exact(0)));
        // More frees, of both: both usable with `freed_since`, still with their parities.
        l.changed(effects(0, 1 << A | 1 << B));
        assert_eq!((l.kept(A, true), l.kept(B, true)), (freed(1), freed(0)));
        // Listed again: exact.
        l.listed(A, 0);
        assert_eq!(l.kept(A, false), exact(0));
        // A creation of C, which neither A nor B is: B's list may now name a block that C's
        // object opened; A's stays exact.
        l.changed(effects(1 << C, 0));
        assert_eq!((l.kept(A, false), l.kept(B, true), l.kept(C, true)), (exact(0), None, None));
        // A launch that may do anything leaves no list.
        l.changed(Effects::ANY);
        assert_eq!(l.kept(A, true), None);
        // A class never listed does not become usable by frees.
        l.changed(effects(0, 1 << C));
        assert_eq!(l.kept(C, true), None);
        l.listed(B, 1);
        l.changed(effects(0, 1 << B));
        l.forget();
        assert_eq!(l.kept(B, true), None, "forget drops lists usable with frees too");
    }
}
