//! Recording a sequence of launches once and replaying it ([`Recording`]): a CUDA graph on the
//! GPU, the list of launches on the CPU backend.
//!
//! While an executor captures ([`Executor::begin_capture`](super::Executor::begin_capture)),
//! its launches are recorded, not run: on the GPU a side stream is in capture mode and the
//! driver builds a graph of the kernels (replays run on the executor's stream); on the CPU backend each launch is kept as its kernel function,
//! grid and parameters. Nothing that needs the device's work to have happened can be captured
//! (a synchronisation, a copy to or from the host, a timing marker): the executor refuses it
//! with [`Error::NotCapturable`](crate::Error::NotCapturable). A replay queues every recorded
//! launch in order, with the parameters they were captured with, as one operation: one driver
//! call for the whole graph on the GPU, where each launch of the sequence costs the host a
//! driver call of its own.

use cudarc::driver::CudaGraph;
use dynasoar_device::{Kernel, Plain};

use super::Grid;
use super::cpu::CpuExec;

/// One recorded launch of the CPU backend: runs its kernel on its grid with its parameters.
pub(super) type CpuLaunch = Box<dyn Fn(&CpuExec) -> std::result::Result<(), String> + Send + Sync>;

/// The CPU backend's record of `kernel` on `grid` with `params`.
pub(super) fn cpu_launch<P: Plain>(kernel: &Kernel<P>, grid: Grid, params: P) -> CpuLaunch {
    let body = kernel.host_fn();
    Box::new(move |cpu: &CpuExec| cpu.run(body, grid, params))
}

/// What an executor has recorded so far while capturing.
#[derive(Default)]
pub(super) struct Capture {
    /// The CPU backend's launches (empty on the GPU, where the stream records them).
    pub(super) cpu: Vec<CpuLaunch>,
    /// Every recorded launch's kernel, in order (repeats included).
    pub(super) kernels: Vec<&'static str>,
}

/// How a recording replays.
pub(super) enum Replay {
    /// The instantiated graph; `None` when no launch was recorded.
    Cuda(Option<CudaGraph>),
    Cpu(Vec<CpuLaunch>),
}

/// Launches recorded by an executor ([`Executor::end_capture`](super::Executor::end_capture)),
/// replayed by [`Executor::replay`](super::Executor::replay) on the same executor only.
pub struct Recording {
    pub(super) replay: Replay,
    pub(super) kernels: Vec<&'static str>,
    /// The id of the executor that recorded it.
    pub(super) executor: u64,
}

impl Recording {
    /// The recorded launches' kernels, in launch order (repeats included).
    pub fn kernels(&self) -> &[&'static str] {
        &self.kernels
    }

    /// How many launches were recorded.
    pub fn launches(&self) -> usize {
        self.kernels.len()
    }
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let backend = match self.replay {
            Replay::Cuda(_) => "cuda graph",
            Replay::Cpu(_) => "cpu launches",
        };
        f.debug_struct("Recording").field("replay", &backend).field("kernels", &self.kernels).finish()
    }
}
