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
    /// Classes that a launch of this runtime freed without creating any (type ids below 32):
    /// their listings note what frees need to keep the lists right (`HostStore::note_entries`,
    /// a store per listed block, which other classes' listings save). A property of the
    /// methods run so far, kept when the lists are forgotten; not learned while a step is
    /// captured, so that both recordings of a step keep the same lists.
    unlistable: u64,
    /// Classes whose current list was made noting its entries (of `unlistable` then).
    noted: u64,
    /// Classes whose lists a launch kept through its frees and no do-all has visited since.
    unused: u64,
    /// Classes whose list, kept through frees, went out of date before a do-all visited it
    /// (traffic's cars: their `advance` frees them, and the next step creates cars before any
    /// do-all over them): not learned as unlistable again, so that their listings note nothing
    /// and their frees keep nothing. Like `unlistable`, kept when the lists are forgotten.
    wasted: u64,
}

impl Listings {
    pub(super) fn new(exec: &Executor) -> Self {
        Self::after_writes(exec.device_writes())
    }

    /// No list kept, nothing learned, `writes` device writes seen.
    fn after_writes(writes: u64) -> Self {
        Listings {
            current: 0,
            used: 0,
            parity: [0; MAX_CLASSES],
            writes,
            ranked: None,
            unlistable: 0,
            noted: 0,
            unused: 0,
            wasted: 0,
        }
    }

    /// Forget every list: the next `parallel_do` over any class lists it.
    pub(super) fn forget(&mut self) {
        self.current = 0;
        self.used = 0;
        self.ranked = None;
        self.noted = 0;
        self.unused = 0;
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

    /// `class` was listed with `parity`, noting its entries if it is
    /// [`unlistable`](Self::unlistable).
    pub(super) fn listed(&mut self, class: u8, parity: u32) {
        self.current |= 1 << class;
        self.used |= 1 << class;
        self.noted = self.noted & !(1 << class) | self.unlistable & 1 << class;
        self.parity[class as usize] = parity;
    }

    /// The classes whose listings note their entries (`HostStore::note_entries`).
    pub(super) fn unlistable(&self) -> u64 {
        self.unlistable
    }

    /// A launch with `effects` ran (not captured): the classes it frees without creating any
    /// are unlistable from now on, unless a list of theirs was kept in vain before.
    fn learn(&mut self, effects: Effects) {
        self.unlistable |= effects.frees & !effects.creates & u32::MAX as u64 & !self.wasted;
    }

    /// A do-all visits `class` (from its current list).
    pub(super) fn visited(&mut self, class: u8) {
        self.unused &= !(1 << class);
    }

    /// Classes to list together with those a `parallel_do` must list: classes that do-alls
    /// listed before, whose lists are out of date, and that a launch changing `changes` (the
    /// method's [`Effects::changed`](dynasoar_device::Effects::changed)) leaves alone, so that
    /// their lists are still right after it.
    pub(super) fn also_listable(&self, changes: u64) -> u64 {
        self.used & !self.current & !changes
    }

    /// Classes whose lists a launch with `effects` keeps right with its frees (`DoParams::keep`):
    /// current lists, made noting their entries, of classes it may free and creates none of
    /// (type ids below 32).
    pub(super) fn keepable(&self, effects: Effects) -> u32 {
        (self.current & self.noted & effects.frees & !effects.creates) as u32
    }

    /// A launch with `effects` may have created or freed objects of the classes it changes:
    /// their lists are no longer right, but for those of `kept`, which its frees kept right
    /// (see [`keepable`](Self::keepable)). The ranked list holds objects, so any change spoils
    /// it. If `learning` (the launch is not captured), a kept list that goes out of date before
    /// a do-all visited it marks its class [`wasted`](Self::wasted), and then the launch's
    /// frees are learned ([`learn`](Self::learn)).
    pub(super) fn changed(&mut self, effects: Effects, kept: u32, learning: bool) {
        let classes = effects.changed();
        let (kept, spoilt) = (kept as u64, classes & !(kept as u64));
        if learning {
            self.wasted |= spoilt & self.current & self.unused;
            self.unlistable &= !self.wasted;
            self.learn(effects);
        }
        self.unused = self.unused & !spoilt | kept;
        self.current &= !spoilt;
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
        let mut l = Listings::after_writes(0);
        assert_eq!(l.also_listable(0), 0, "no class was listed yet");
        l.listed(0, 1);
        l.listed(2, 0);
        assert_eq!(l.also_listable(0), 0, "both lists are right");
        let mask = 1 << 0 | 1 << 2 | 1 << 3;
        l.changed(Effects { creates: mask, frees: mask }, 0, true);
        assert_eq!(l.also_listable(0), 1 << 0 | 1 << 2, "class 3 was never listed");
        assert_eq!(l.also_listable(1 << 2), 1 << 0, "a launch that changes class 2 would spoil its list");
        l.listed(0, 0);
        assert_eq!(l.also_listable(0), 1 << 2);
        l.forget();
        assert_eq!(l.also_listable(0), 0);
    }

    /// A launch keeps (through its frees) the current lists of the classes it frees and creates
    /// none of, once they are listed noting their entries, which they are after a launch that
    /// freed them without creating any; forgetting the lists keeps what was learned.
    #[test]
    fn frees_keep_lists_noted_for_classes_freed_without_creating() {
        let mut l = Listings::after_writes(0);
        let frees = Effects { creates: 0, frees: 1 << 1 | 1 << 2 };
        l.listed(1, 0);
        l.listed(2, 0);
        assert_eq!(l.keepable(frees), 0, "listed before any such launch: no entries noted");
        l.learn(frees);
        l.learn(Effects { creates: 1 << 3, frees: 1 << 3 });
        l.learn(Effects::ANY);
        assert_eq!(l.unlistable(), 1 << 1 | 1 << 2, "not class 3, which the launch that frees it creates");
        l.listed(1, 1);
        assert_eq!(l.keepable(frees), 1 << 1, "class 2's list was made before");
        assert_eq!(l.keepable(Effects { creates: 1 << 1, frees: 1 << 1 }), 0, "a launch creating class 1");
        l.changed(frees, l.keepable(frees), true);
        assert_eq!(l.kept(1), Some(1), "kept through the frees");
        assert_eq!(l.kept(2), None);
        l.forget();
        assert_eq!(l.unlistable(), 1 << 1 | 1 << 2);
        l.listed(2, 1);
        assert_eq!(l.keepable(frees), 1 << 2);
    }

    /// A list kept through frees that goes out of date before any do-all visits it was kept in
    /// vain: its class is no longer unlistable, and later launches that free it do not make it
    /// so again; a kept list that is visited first stays in use.
    #[test]
    fn lists_kept_in_vain_are_not_kept_again() {
        let mut l = Listings::after_writes(0);
        let frees = Effects { creates: 0, frees: 1 << 1 | 1 << 2 };
        let creates = Effects { creates: 1 << 1 | 1 << 2, frees: 0 };
        l.learn(frees);
        l.listed(1, 0);
        l.listed(2, 0);
        let keep = l.keepable(frees);
        assert_eq!(keep, 1 << 1 | 1 << 2);
        l.changed(frees, keep, true);
        // Class 1 is visited before the classes are created again, class 2 is not.
        l.visited(1);
        l.changed(creates, 0, true);
        assert_eq!(l.unlistable(), 1 << 1, "class 2's kept list was not used");
        l.learn(frees);
        assert_eq!(l.unlistable(), 1 << 1, "and is not learned again");
        // Not learned while capturing.
        l.listed(1, 1);
        let keep = l.keepable(frees);
        l.changed(frees, keep, false);
        l.changed(creates, 0, false);
        assert_eq!(l.unlistable(), 1 << 1);
    }
}
