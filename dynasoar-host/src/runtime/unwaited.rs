//! Classes whose allocation state may not be exact: what frees that did not wait for their
//! blocks' bitmaps left behind, and when it must be made exact again.
//!
//! A launch that creates objects of one class only and frees none of them
//! ([`Effects::creates_one_class_only`]) frees the objects of other classes without waiting for
//! the old value of the block's bitmap (`ObjectStore::free_in_sole_launch`; in DynaSOAr's heap
//! a `red.and`): a block that was full does not become active, an emptied block is not counted.
//! The launch's own allocations never wait for an active bit to change, and neither do those
//! of any later launch with such effects, so the Game of Life's and generation's updates (each
//! freeing one kind of cell and creating the other) run one after the other with the bitmaps
//! so. An enumeration that lists a class anew makes them exact again as it goes (each listed
//! block with room active, each empty one freed). Every other launch that allocates or frees
//! waits for active bits that a concurrent free or allocation is about to change (paper
//! Alg. 1-2): on a block that such a free left inactive it would wait for good. So before it
//! the runtime makes the classes exact (`HostStore::reactivate`, one kernel), unless they were
//! listed since.
//!
//! What is tracked is an upper bound: classes that such a launch freed since their last
//! listing or reactivation. A step graph (`graph.rs`) is recorded as if every class ever freed
//! so might be stale when a replay starts (so that the recording reactivates wherever it must
//! whatever came before); what it leaves is what its recording left.

use dynasoar_device::{AllocatorSpec, Effects};

/// See the module docs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unwaited {
    /// Classes (bits by type id) that may be stale now.
    maybe: u64,
    /// Classes that such a launch of this runtime ever freed (what a recording assumes).
    ever: u64,
}

impl Unwaited {
    /// Whether a launch with `effects` frees without waiting (see the module docs).
    fn frees_unwaited<A: AllocatorSpec>(effects: Effects) -> bool {
        effects.creates_one_class_only() && !A::ANY_OWNS_BLOCKS
    }

    /// Before a launch with `effects`: the classes to make exact first (then counted exact),
    /// or 0. A launch that neither creates nor frees needs nothing, nor does one that frees
    /// without waiting.
    pub(super) fn before<A: AllocatorSpec>(&mut self, effects: Effects) -> u64 {
        if effects.changed() == 0 || Self::frees_unwaited::<A>(effects) {
            return 0;
        }
        std::mem::take(&mut self.maybe)
    }

    /// After a launch with `effects`.
    pub(super) fn after<A: AllocatorSpec>(&mut self, effects: Effects) {
        if Self::frees_unwaited::<A>(effects) {
            self.maybe |= effects.frees;
            self.ever |= effects.frees;
        }
    }

    /// After a listing of `classes` (anew or not: a class freed so changed, so its listing
    /// is anew), or their reactivation.
    pub(super) fn exact(&mut self, classes: u64) {
        self.maybe &= !classes;
    }

    /// After the heap was reset.
    pub(super) fn reset(&mut self) {
        self.maybe = 0;
    }

    /// At the start of a step's recording: the state to restore after it (nothing recorded
    /// runs), and from now on every class ever freed so counts as stale.
    pub(super) fn begin_recording(&mut self) -> Unwaited {
        let saved = *self;
        self.maybe |= self.ever;
        saved
    }

    /// At the end of a recording begun with `saved`: the classes the recording assumed stale
    /// at its start and those it leaves stale, and the state before it back.
    pub(super) fn end_recording(&mut self, saved: Unwaited) -> (u64, u64) {
        let left = self.maybe;
        let assumed = saved.maybe | saved.ever;
        *self = Unwaited { ever: self.ever, ..saved };
        (assumed, left)
    }

    /// Before replaying a recording that assumed `assumed` stale at its start: the classes to
    /// make exact first (where more may be stale than it assumed), or 0.
    pub(super) fn before_replay(&mut self, assumed: u64) -> u64 {
        if self.maybe & !assumed == 0 { 0 } else { std::mem::take(&mut self.maybe) }
    }

    /// After replaying a recording that leaves `left` stale.
    pub(super) fn after_replay(&mut self, left: u64) {
        self.maybe = left;
    }
}

#[cfg(test)]
mod tests {
    use dynasoar_device::{ClassInfo, Effects};

    use super::Unwaited;

    enum Plain {}
    impl dynasoar_device::AllocatorSpec for Plain {
        const NAME: &'static str = "plain";
        const BLOCK_BYTES: u64 = 4096;
        const CLASSES: &'static [ClassInfo] = &[];
        type Store = dynasoar_device::Heap<'static>;
    }
    enum WithRuns {}
    impl dynasoar_device::AllocatorSpec for WithRuns {
        const NAME: &'static str = "runs";
        const BLOCK_BYTES: u64 = 4096;
        const CLASSES: &'static [ClassInfo] = &[];
        const ANY_OWNS_BLOCKS: bool = true;
        type Store = dynasoar_device::Heap<'static>;
    }

    const ALIVE: u64 = 1 << 1;
    const CANDIDATE: u64 = 1 << 2;
    /// The Game of Life's updates.
    const ALIVE_UPDATE: Effects = Effects { creates: CANDIDATE, frees: ALIVE };
    const CANDIDATE_UPDATE: Effects = Effects { creates: ALIVE, frees: CANDIDATE };
    /// A launch that creates and frees candidates.
    const CHURN: Effects = Effects { creates: CANDIDATE, frees: CANDIDATE };

    #[test]
    fn launches_creating_one_class_only_leave_what_they_free_to_make_exact() {
        let mut u = Unwaited::default();
        assert_eq!(u.before::<Plain>(ALIVE_UPDATE), 0);
        u.after::<Plain>(ALIVE_UPDATE);
        assert_eq!(u.before::<Plain>(CANDIDATE_UPDATE), 0, "such launches need nothing exact");
        u.after::<Plain>(CANDIDATE_UPDATE);
        assert_eq!(u.before::<Plain>(Effects::NONE), 0, "nor do launches that change nothing");
        assert_eq!(u.before::<Plain>(CHURN), ALIVE | CANDIDATE, "a launch that waits for bits");
        assert_eq!(u.before::<Plain>(CHURN), 0, "made exact once");
        u.after::<Plain>(ALIVE_UPDATE);
        u.exact(ALIVE);
        assert_eq!(u.before::<Plain>(Effects::ANY), 0, "listed since");
        u.after::<Plain>(ALIVE_UPDATE);
        u.reset();
        assert_eq!(u.before::<Plain>(Effects::ANY), 0, "a reset heap is exact");
    }

    #[test]
    fn allocators_with_runs_keep_the_frees_that_wait() {
        let mut u = Unwaited::default();
        u.after::<WithRuns>(ALIVE_UPDATE);
        assert_eq!(u.before::<WithRuns>(CHURN), 0);
    }

    #[test]
    fn a_recording_assumes_every_class_ever_freed_so_stale() {
        let mut u = Unwaited::default();
        u.after::<Plain>(ALIVE_UPDATE);
        u.exact(ALIVE);
        let saved = u.begin_recording();
        // Recorded: the step reactivates the alive cells before a launch that waits.
        assert_eq!(u.before::<Plain>(Effects::ANY), ALIVE);
        u.after::<Plain>(CANDIDATE_UPDATE);
        let (assumed, left) = u.end_recording(saved);
        assert_eq!((assumed, left), (ALIVE, CANDIDATE));
        assert_eq!(u, saved.with_ever(ALIVE | CANDIDATE), "nothing recorded ran");
        assert_eq!(u.before_replay(assumed), 0);
        u.after_replay(left);
        u.after::<Plain>(ALIVE_UPDATE);
        assert_eq!(u.before_replay(assumed), ALIVE | CANDIDATE, "more stale than assumed");
    }

    impl Unwaited {
        fn with_ever(self, ever: u64) -> Unwaited {
            Unwaited { ever, ..self }
        }
    }
}
