//! Reusing enumeration lists: which classes a `parallel_do` need not list again
//! ([`Listings`]).

use dynasoar_device::Effects;
use dynasoar_device::heap::MAX_CLASSES;

use crate::backend::Executor;

/// Which classes' enumeration lists are still right, so that a `parallel_do` need not list
/// them again: a list stays right until a launch that may create objects of its class, or
/// free them where the store cannot keep the list right as it frees (a method's
/// [`Effects`](dynasoar_device::Effects); [`keepable`](Self::keepable)). Skipping the listing
/// saves a launch; classes that never change (the cells of a grid) are then listed once, and
/// classes that only lose objects (structure's springs and nodes) are listed once while no
/// launch creates any.
///
/// A `parallel_do` that lists a class also lists, in the same launch where the store can
/// ([`HostStore::list_several`](crate::store::HostStore::list_several)), the classes that do-alls
/// listed before, whose lists are out of date, and that its method cannot change
/// ([`also_listable`](Self::also_listable)): their next do-alls then need no listing launch of
/// their own.
pub(super) struct Listings {
    /// Classes (bits by type id) listed since the last launch that could change their objects.
    current: u64,
    /// Classes a `parallel_do` has listed since the lists were last forgotten (those that
    /// do-alls visit). Forgotten with them, so that what a step lists depends only on the step
    /// (a step captured twice, from each listing state, lists the same classes both times).
    used: u64,
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

impl Listings {
    pub(super) fn new(exec: &Executor) -> Self {
        Listings { current: 0, used: 0, parity: [0; MAX_CLASSES], writes: exec.device_writes(), ranked: None }
    }

    /// Forget every list: the next `parallel_do` over any class lists it.
    pub(super) fn forget(&mut self) {
        self.current = 0;
        self.used = 0;
        self.ranked = None;
    }

    /// Forget every list if anything but this runtime's `parallel_do`s ran since the last one.
    pub(super) fn check_writes(&mut self, exec: &Executor) {
        if self.writes != exec.device_writes() {
            self.forget();
        }
    }

    /// The parity of `class`'s list, if it is still right.
    pub(super) fn kept(&self, class: u8) -> Option<u32> {
        (self.current & (1 << class) != 0).then(|| self.parity[class as usize])
    }

    /// `class` was listed with `parity`.
    pub(super) fn listed(&mut self, class: u8, parity: u32) {
        self.current |= 1 << class;
        self.used |= 1 << class;
        self.parity[class as usize] = parity;
    }

    /// Classes to list together with those a `parallel_do` must list: classes that do-alls
    /// listed before, whose lists are out of date, and that a launch changing `changes` (the
    /// method's [`Effects::changed`](dynasoar_device::Effects::changed)) leaves alone, so that
    /// their lists are still right after it.
    pub(super) fn also_listable(&self, changes: u64) -> u64 {
        self.used & !self.current & !changes
    }

    /// Classes whose lists a launch with `effects` keeps right with its frees (`DoParams::keep`):
    /// current lists of classes it may free and creates none of (type ids below 32).
    pub(super) fn keepable(&self, effects: Effects) -> u32 {
        (self.current & effects.frees & !effects.creates) as u32
    }

    /// A launch may have created or freed objects of `classes` (bits by type id): their lists
    /// are no longer right, but for those of `kept`, which its frees kept right (see
    /// [`keepable`](Self::keepable)). The ranked list holds objects, so any change spoils it.
    pub(super) fn changed(&mut self, classes: u64, kept: u32) {
        self.current &= !(classes & !(kept as u64));
        if self.ranked.is_some_and(|c| classes & (1 << c) != 0) {
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

    /// Classes listed before whose lists are out of date, less those a launch may change, are
    /// listable with another class's listing; forgetting the lists forgets them too.
    #[test]
    fn also_listable_are_stale_used_classes_the_launch_leaves_alone() {
        let mut l = Listings { current: 0, used: 0, parity: [0; MAX_CLASSES], writes: 0, ranked: None };
        assert_eq!(l.also_listable(0), 0, "no class was listed yet");
        l.listed(0, 1);
        l.listed(2, 0);
        assert_eq!(l.also_listable(0), 0, "both lists are right");
        l.changed(1 << 0 | 1 << 2 | 1 << 3, 0);
        assert_eq!(l.also_listable(0), 1 << 0 | 1 << 2, "class 3 was never listed");
        assert_eq!(l.also_listable(1 << 2), 1 << 0, "a launch that changes class 2 would spoil its list");
        l.listed(0, 0);
        assert_eq!(l.also_listable(0), 1 << 2);
        l.forget();
        assert_eq!(l.also_listable(0), 0);
    }
}
