//! Which loop a `parallel_do` kernel runs: the plain one, or the streaming one, which shares
//! list entries across a warp and prefetches the next object's first field (see
//! `for_each_listed_streaming` in the device crate).
//!
//! The streaming loop makes short methods over many objects faster (`x += 1.0` over 16M
//! objects on an H100: 75 -> 63 us, 64% -> 76% of the copy's bandwidth) and long ones slower,
//! for its 11 more registers on average (run for every method: traffic +20%, Generation +26%,
//! Sugarscape +18% on an H200). So by default ([`DoAllLoop::Auto`]) a method streams only where
//! its streaming kernel still fills a multiprocessor (on Hopper: at most 32 registers), which
//! is what short methods compile to. The adaptive choice, which times both loops on the first
//! launches of each method and class, is not the default: what it keeps there does not always
//! hold for the whole run (on an H100: Sugarscape -3%, but Wa-Tor +5% and traffic +4 to 10%
//! against the plain loop, every kernel it kept being faster in its trials).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use dynasoar_device::{Kernel, Plain};

use crate::backend::{BackendKind, Executor, Marker};
use crate::error::Result;
pub use crate::options::DoAllLoop;

/// Timed launches of each loop before [`DoAllLoop::Adaptive`] decides.
pub const TIMED_LAUNCHES: u32 = 3;

/// The streaming loop is kept only if it took less than this share of the plain loop's time:
/// on a tie the plain loop, which costs other kernels nothing, stays.
const STREAMING_MUST_TAKE: f64 = 0.97;

/// How the next launch of a method over one class runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pick {
    pub streaming: bool,
    /// Whether to time the launch (a trial of [`DoAllLoop::Adaptive`]).
    pub timed: bool,
}

/// What the runtime decided for one method and class (see [`Runtime::do_all_loops`](crate::Runtime::do_all_loops)).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopChoice {
    /// The method's plain kernel.
    pub kernel: &'static str,
    /// The concrete class's type id.
    pub class: u8,
    /// `None` while still timing.
    pub streaming: Option<bool>,
    /// Mean device time of a timed launch of the plain and of the streaming loop.
    pub plain: Option<Duration>,
    pub streamed: Option<Duration>,
}

#[derive(Default)]
struct Trial {
    launches: u32,
    /// Timed launches not read yet: streaming or not, and the markers around the launch.
    pending: Vec<(bool, Marker, Marker)>,
    /// Total time and count of the timed launches read, plain first.
    time: [Duration; 2],
    samples: [u32; 2],
    streaming: Option<bool>,
}

impl Trial {
    fn mean(&self, loop_index: usize) -> Option<Duration> {
        (self.samples[loop_index] > 0).then(|| self.time[loop_index] / self.samples[loop_index])
    }

    /// Timed launches of `streaming` not read yet.
    fn pending_of(&self, streaming: bool) -> u32 {
        self.pending.iter().filter(|p| p.0 == streaming).count() as u32
    }

    /// Add the timed launches the GPU has finished (without waiting for the others).
    fn read_finished(&mut self, exec: &Executor) -> Result<()> {
        let mut i = 0;
        while i < self.pending.len() {
            let (streaming, start, end) = &self.pending[i];
            match exec.elapsed_if_reached(start, end)? {
                Some(d) => {
                    let k = *streaming as usize;
                    self.time[k] += d;
                    self.samples[k] += 1;
                    let (_, start, end) = self.pending.swap_remove(i);
                    exec.recycle(start);
                    exec.recycle(end);
                }
                None => i += 1,
            }
        }
        Ok(())
    }
}

pub(crate) struct LoopTuner {
    mode: DoAllLoop,
    trials: Mutex<HashMap<(&'static str, u8), Trial>>,
    /// Print the decisions when the runtime goes (`DYNASOAR_DO_ALL_REPORT=1`).
    report: bool,
}

impl Drop for LoopTuner {
    fn drop(&mut self) {
        if !self.report {
            return;
        }
        let us = |d: Option<Duration>| d.map_or("-".to_string(), |d| format!("{:.1}", d.as_secs_f64() * 1e6));
        for c in self.choices() {
            let choice = match c.streaming {
                Some(true) => "streaming",
                Some(false) => "plain",
                None => "undecided",
            };
            let why = match (c.plain, c.streamed) {
                (None, None) => "by the streaming kernel's occupancy".to_string(),
                (plain, streamed) => format!("plain {} us, streaming {} us", us(plain), us(streamed)),
            };
            eprintln!("do-all loop {} class {}: {choice} ({why})", c.kernel, c.class);
        }
    }
}

impl LoopTuner {
    pub fn new(mode: DoAllLoop, exec: &Executor) -> Self {
        let mode = match (mode, exec.kind()) {
            (DoAllLoop::Adaptive | DoAllLoop::Auto, BackendKind::Cpu) => DoAllLoop::Plain,
            (mode, _) => mode,
        };
        LoopTuner { mode, trials: Mutex::new(HashMap::new()), report: exec.settings().do_all_report }
    }

    /// The choice in force (adaptive and auto on the CPU backend are plain).
    pub fn mode(&self) -> DoAllLoop {
        self.mode
    }

    /// The loop of the next launch of `kernel` (a method whose streaming kernel is
    /// `streaming`, launched in blocks of `threads`) over `class`.
    pub fn pick<P: Plain>(
        &self,
        exec: &Executor,
        kernel: &'static str,
        streaming: &Kernel<P>,
        threads: u32,
        class: u8,
    ) -> Result<Pick> {
        match self.mode {
            DoAllLoop::Plain => return Ok(Pick { streaming: false, timed: false }),
            DoAllLoop::Streaming => return Ok(Pick { streaming: true, timed: false }),
            DoAllLoop::Auto | DoAllLoop::Adaptive => {}
        }
        let mut trials = self.trials.lock().unwrap();
        let trial = trials.entry((kernel, class)).or_default();
        if let Some(streaming) = trial.streaming {
            return Ok(Pick { streaming, timed: false });
        }
        if self.mode == DoAllLoop::Auto {
            let fills = exec.fills_multiprocessors(streaming, threads)?;
            trial.streaming = Some(fills);
            return Ok(Pick { streaming: fills, timed: false });
        }
        trial.read_finished(exec)?;
        if let (Some(plain), Some(streamed)) = (trial.mean(0), trial.mean(1))
            && trial.samples.iter().all(|&n| n >= TIMED_LAUNCHES)
        {
            let streaming = streamed < plain.mul_f64(STREAMING_MUST_TAKE);
            trial.streaming = Some(streaming);
            for (_, start, end) in trial.pending.drain(..) {
                exec.recycle(start);
                exec.recycle(end);
            }
            return Ok(Pick { streaming, timed: false });
        }
        // Alternate, so that a run whose work grows or shrinks weighs both alike; the first
        // launch of each loop (its module load, cold caches) is not timed.
        let streaming = trial.launches % 2 == 1;
        let timed = trial.launches >= 2
            && trial.samples[streaming as usize] + trial.pending_of(streaming) < TIMED_LAUNCHES;
        trial.launches += 1;
        Ok(Pick { streaming, timed })
    }

    /// Remember the markers around a timed launch.
    pub fn timed(&self, kernel: &'static str, class: u8, streaming: bool, start: Marker, end: Marker) {
        let mut trials = self.trials.lock().unwrap();
        trials.entry((kernel, class)).or_default().pending.push((streaming, start, end));
    }

    /// The decisions and timings so far, by kernel name and class.
    pub fn choices(&self) -> Vec<LoopChoice> {
        let trials = self.trials.lock().unwrap();
        let mut choices: Vec<LoopChoice> = trials
            .iter()
            .map(|(&(kernel, class), t)| LoopChoice {
                kernel,
                class,
                streaming: t.streaming,
                plain: t.mean(0),
                streamed: t.mean(1),
            })
            .collect();
        choices.sort_by_key(|c| (c.kernel, c.class));
        choices
    }
}
