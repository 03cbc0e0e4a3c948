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
//! shrinking populations are fine). The host state that a step's listings depend on is made
//! the same at the end of the captured step as at its start (a class listed an odd number of
//! times is listed once more, see `HostStore::listing_state`), so replays can follow each
//! other, and steps run directly, in any order.

use dynasoar_device::AllocatorSpec;

use super::Runtime;
use crate::backend::Recording;
use crate::error::Result;

/// A step recorded by [`Runtime::capture`], to run with [`Runtime::replay`] on the runtime that
/// captured it.
#[derive(Debug)]
pub struct StepGraph {
    recording: Recording,
    /// The store's listing state when the step was captured, which each replay needs.
    listing_state: u64,
    /// The kernels an error check after a replay names: the recorded ones, each once.
    checked: Vec<&'static str>,
}

impl StepGraph {
    /// How many kernel launches a replay queues.
    pub fn launches(&self) -> usize {
        self.recording.launches()
    }

    /// The recorded launches' kernels, in launch order (repeats included).
    pub fn kernels(&self) -> &[&'static str] {
        self.recording.kernels()
    }
}

impl<A: AllocatorSpec> Runtime<A> {
    /// Record one step: call `step` (which launches work: `parallel_do`, `parallel_new`, ...)
    /// with the executor recording its launches instead of running them, and return them as a
    /// [`StepGraph`] for [`replay`](Self::replay). **Nothing runs during the capture**; each
    /// replay runs the step once.
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
    pub fn capture(&self, step: impl FnOnce(&Self) -> Result<()>) -> Result<StepGraph> {
        self.sync()?;
        let state = self.store.listing_state();
        self.forget_listings();
        self.exec.begin_capture()?;
        let recorded = step(self).and_then(|()| self.restore_listings_to(state));
        let ended = self.exec.end_capture();
        self.forget_listings();
        let recording = match (recorded, ended) {
            (Ok(()), Ok(recording)) => recording,
            (Err(e), _) | (Ok(()), Err(e)) => {
                // None of the captured listings ran: the host's record goes back with them.
                self.store.restore_listing_state(state);
                return Err(e);
            }
        };
        let mut checked = Vec::new();
        for &kernel in recording.kernels() {
            if !checked.contains(&kernel) {
                checked.push(kernel);
            }
        }
        Ok(StepGraph { recording, listing_state: state, checked })
    }

    /// Run a step captured by [`capture`](Self::capture) on this runtime: queue its launches,
    /// in order, with one call. Errors raised by its kernels are reported as those of
    /// `parallel_do` are (by the next check, naming the step's kernels).
    pub fn replay(&self, graph: &StepGraph) -> Result<()> {
        if self.store.listing_state() != graph.listing_state {
            // Steps run directly since left a class's listings in another state: list those
            // classes once (real launches) to bring them back.
            self.restore_listings_to(graph.listing_state)?;
        }
        self.forget_listings();
        self.exec.replay(&graph.recording)?;
        self.launched(&graph.checked)
    }

    /// List every class whose listing state differs from `state` once, which flips it.
    fn restore_listings_to(&self, state: u64) -> Result<()> {
        let differ = self.store.listing_state() ^ state;
        for class in A::CLASSES.iter().filter(|c| differ & (1 << c.type_id) != 0) {
            self.store.list(&self.exec, class.type_id)?;
        }
        debug_assert_eq!(self.store.listing_state(), state, "listing once flips a class's state");
        Ok(())
    }

    /// Forget the enumeration lists kept for the next `parallel_do`: across a capture they
    /// are not what the replays will find.
    fn forget_listings(&self) {
        if let Some(l) = &self.listings {
            l.lock().unwrap().forget();
        }
    }
}
