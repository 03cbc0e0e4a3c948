//! Step graphs: a simulation step's launches recorded once and replayed ([`StepGraph`]).
//!
//! A step of an SMMO model is the same sequence of launches every time (listings, do-alls,
//! constructors), and at small sizes the host's cost of queuing them, a driver call each,
//! exceeds the kernels' own time. [`Runtime::capture`] runs the step's host code once with the
//! executor recording (a CUDA graph on the GPU, see `backend/capture.rs`), and
//! [`Runtime::replay`] queues the whole step with one call.
//!
//! What a replay repeats is the launches, with the parameters they were captured with; the
//! host code of the step does not run again. So a step can be captured when its launches do not
//! depend on what earlier steps computed on the host: the same methods, arguments and grids
//! every step (the runtime sizes do-all grids by the machine, not by the objects, so growing or
//! shrinking populations are fine). The host keeps a state that a step's listings depend on
//! (`HostStore::listing_state`: the parity of each class's next enumeration, which a listing
//! flips); a step that lists a class an odd number of times leaves it changed, so such a step
//! is recorded twice, once from each state, and a replay runs the recording that starts from
//! the state it finds. Replays and steps run directly can then follow each other in any
//! order (a replay after direct steps that left some other state lists the classes that
//! differ once first).

use dynasoar_device::AllocatorSpec;

use super::Runtime;
use crate::backend::Recording;
use crate::error::Result;

/// A step recorded by [`Runtime::capture`], to run with [`Runtime::replay`] on the runtime that
/// captured it.
#[derive(Debug)]
pub struct StepGraph {
    /// One recording per listing state the step can start from (see the module docs): the
    /// first from the state at the capture, the second (if the step flips it) from the state
    /// the first leaves.
    recordings: Vec<Captured>,
}

/// One recording of the step and the store's listing states before and after it, and the
/// classes it assumed and leaves with their allocation state not exact (see `unwaited.rs`).
#[derive(Debug)]
struct Captured {
    recording: Recording,
    from: u64,
    to: u64,
    unwaited_from: u64,
    unwaited_to: u64,
}

impl StepGraph {
    /// How many kernel launches a replay queues.
    pub fn launches(&self) -> usize {
        self.recordings[0].recording.launches()
    }

    /// The recorded launches' kernels, in launch order (repeats included).
    pub fn kernels(&self) -> &[&'static str] {
        self.recordings[0].recording.kernels()
    }
}

impl<A: AllocatorSpec> Runtime<A> {
    /// Record one step: call `step` (which launches work: `parallel_do`, `parallel_new`, ...)
    /// with the executor recording its launches instead of running them, and return them as a
    /// [`StepGraph`] for [`replay`](Self::replay). **Nothing runs during the capture**; each
    /// replay runs the step once. `step` is called once, or twice where the step lists a class
    /// an odd number of times (one recording for each parity of its listings).
    ///
    /// Waits for queued work and reports its errors first. Inside `step`, anything that needs
    /// the device's work to have run (`sync`, `collect`, `count`, buffer reads and writes,
    /// timing) fails with [`Error::NotCapturable`](crate::Error::NotCapturable), and so does
    /// the capture. Profiling (`RuntimeBuilder::profile`) does not time captured launches, and
    /// the adaptive do-all loop choice records its current pick without timing it.
    ///
    /// ```ignore
    /// let step = |rt: &Runtime<GolHeap>| -> Result<()> {
    ///     rt.parallel_do_with(Cell::prepare, world)?;
    ///     rt.parallel_do_with(Cell::update, world)
    /// };
    /// let graph = rt.capture(step)?;
    /// for _ in 0..steps {
    ///     rt.replay(&graph)?;
    /// }
    /// rt.sync()?;
    /// ```
    pub fn capture(&self, mut step: impl FnMut(&Self) -> Result<()>) -> Result<StepGraph> {
        self.sync()?;
        let state = self.store.listing_state();
        let first = self.capture_once(&mut step);
        let second = match &first {
            Ok(c) if c.to != c.from => Some(self.capture_once(&mut step)),
            _ => None,
        };
        // None of the captured listings ran: the host's record of them goes back.
        self.store.set_listing_state(state);
        let mut recordings = vec![first?];
        if let Some(second) = second {
            let second = second?;
            debug_assert_eq!(second.to, state, "a step flips the same classes from either state");
            recordings.push(second);
        }
        Ok(StepGraph { recordings })
    }

    /// Record `step` once, from the store's listing state now.
    fn capture_once(&self, step: &mut impl FnMut(&Self) -> Result<()>) -> Result<Captured> {
        let from = self.store.listing_state();
        self.forget_listings();
        self.exec.begin_capture()?;
        let saved = self.unwaited.lock().unwrap().begin_recording();
        let recorded = step(self);
        let ended = self.exec.end_capture();
        let (unwaited_from, unwaited_to) = self.unwaited.lock().unwrap().end_recording(saved);
        self.forget_listings();
        let to = self.store.listing_state();
        recorded?;
        Ok(Captured { recording: ended?, from, to, unwaited_from, unwaited_to })
    }

    /// Run a step captured by [`capture`](Self::capture) on this runtime: queue its launches,
    /// in order, with one call. Errors raised by its kernels are reported as those of
    /// `parallel_do` are (by the next check, naming the step's kernels).
    pub fn replay(&self, graph: &StepGraph) -> Result<()> {
        let now = self.store.listing_state();
        let captured = match graph.recordings.iter().find(|c| c.from == now) {
            Some(c) => c,
            None => {
                // Steps run directly left the listings in a state no recording starts from:
                // list what differs once (real launches, which flip it).
                let first = &graph.recordings[0];
                self.store.list_into_state(&self.exec, A::CLASSES, first.from)?;
                first
            }
        };
        let stale = self.unwaited.lock().unwrap().before_replay(captured.unwaited_from);
        self.reactivate(stale, false)?;
        self.forget_listings();
        self.exec.replay(&captured.recording)?;
        // The recorded listings ran: the host's record follows them.
        self.store.set_listing_state(captured.to);
        self.unwaited.lock().unwrap().after_replay(captured.unwaited_to);
        // (The error check names each kernel once.)
        self.launched(captured.recording.kernels())
    }

    /// Forget the enumeration lists kept for the next `parallel_do`: across a capture or a
    /// replay they are not what the next launches will find.
    fn forget_listings(&self) {
        if let Some(l) = &self.listings {
            l.lock().unwrap().forget();
        }
    }
}
