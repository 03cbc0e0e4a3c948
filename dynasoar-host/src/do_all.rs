//! How a `parallel_do` kernel runs: which loop (the plain one, or the streaming one, which
//! shares list entries across a warp and prefetches the next object's first field, see
//! `for_each_listed_streaming` in the device crate; [`LoopTuner`]), and how large the plain
//! loop's grid is ([`WaveTuner`]). Both tuners time trial launches with events read without
//! waiting ([`Trial`]).
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
pub use crate::options::{DoAllLoop, DoAllWaves, MAX_WAVES};

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

/// Timed trials of `N` ways to launch one method over one class (see [`LoopTuner`] and
/// [`WaveTuner`]): launches so far (since the decision, once decided), the timed ones not
/// read yet, and the time of those read.
struct Trial<const N: usize> {
    launches: u32,
    /// Timed launches not read yet: which way, and the markers around the launch.
    pending: Vec<(usize, Marker, Marker)>,
    /// Total time and count of the timed launches read, by way.
    time: [Duration; N],
    samples: [u32; N],
    /// The way chosen, once decided.
    chosen: Option<usize>,
    /// Decisions made, this one and those of earlier trials of the same launches.
    decisions: u32,
}

impl<const N: usize> Default for Trial<N> {
    fn default() -> Self {
        Trial {
            launches: 0,
            pending: Vec::new(),
            time: [Duration::ZERO; N],
            samples: [0; N],
            chosen: None,
            decisions: 0,
        }
    }
}

impl<const N: usize> Trial<N> {
    fn mean(&self, way: usize) -> Option<Duration> {
        (self.samples[way] > 0).then(|| self.time[way] / self.samples[way])
    }

    /// Timed launches of `way` not read yet.
    fn pending_of(&self, way: usize) -> u32 {
        self.pending.iter().filter(|p| p.0 == way).count() as u32
    }

    /// Whether every way has [`TIMED_LAUNCHES`] timed launches read.
    fn complete(&self) -> bool {
        self.samples.iter().all(|&n| n >= TIMED_LAUNCHES)
    }

    /// The way of the next trial launch (the ways in turn, so that a run whose work grows or
    /// shrinks weighs them alike) and whether to time it: not the first launch of each way
    /// (its module load, cold caches), and only until the way has its timed launches.
    fn next_launch(&mut self) -> (usize, bool) {
        let way = self.launches as usize % N;
        let timed = self.launches >= N as u32 && self.samples[way] + self.pending_of(way) < TIMED_LAUNCHES;
        self.launches += 1;
        (way, timed)
    }

    /// Decide for `way` and give the markers of launches still pending back.
    fn decide(&mut self, exec: &Executor, way: usize) {
        self.chosen = Some(way);
        self.decisions += 1;
        self.launches = 0;
        for (_, start, end) in self.pending.drain(..) {
            exec.recycle(start);
            exec.recycle(end);
        }
    }

    /// Add the timed launches the GPU has finished (without waiting for the others).
    fn read_finished(&mut self, exec: &Executor) -> Result<()> {
        let mut i = 0;
        while i < self.pending.len() {
            let (way, start, end) = &self.pending[i];
            match exec.elapsed_if_reached(start, end)? {
                Some(d) => {
                    self.time[*way] += d;
                    self.samples[*way] += 1;
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

/// The trials of every method and class, by kernel name and type id.
struct Trials<const N: usize>(Mutex<HashMap<(&'static str, u8), Trial<N>>>);

impl<const N: usize> Trials<N> {
    fn new() -> Self {
        Trials(Mutex::new(HashMap::new()))
    }

    /// Remember the markers around a timed launch of `way`.
    fn timed(&self, kernel: &'static str, class: u8, way: usize, start: Marker, end: Marker) {
        self.0.lock().unwrap().entry((kernel, class)).or_default().pending.push((way, start, end));
    }

    /// `f` of each trial, sorted by kernel name and class.
    fn each<T>(&self, f: impl Fn(&'static str, u8, &Trial<N>) -> T) -> Vec<T> {
        let trials = self.0.lock().unwrap();
        let mut keys: Vec<_> = trials.keys().copied().collect();
        keys.sort();
        keys.into_iter().map(|key| f(key.0, key.1, &trials[&key])).collect()
    }
}

pub(crate) struct LoopTuner {
    mode: DoAllLoop,
    trials: Trials<2>,
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
        LoopTuner { mode, trials: Trials::new(), report: exec.settings().do_all_report }
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
        let mut trials = self.trials.0.lock().unwrap();
        let trial = trials.entry((kernel, class)).or_default();
        if let Some(way) = trial.chosen {
            return Ok(Pick { streaming: way == 1, timed: false });
        }
        if self.mode == DoAllLoop::Auto {
            let fills = exec.fills_multiprocessors(streaming, threads)?;
            trial.chosen = Some(fills as usize);
            return Ok(Pick { streaming: fills, timed: false });
        }
        trial.read_finished(exec)?;
        if let (Some(plain), Some(streamed)) = (trial.mean(0), trial.mean(1))
            && trial.complete()
        {
            let streaming = streamed < plain.mul_f64(STREAMING_MUST_TAKE);
            trial.decide(exec, streaming as usize);
            return Ok(Pick { streaming, timed: false });
        }
        let (way, timed) = trial.next_launch();
        Ok(Pick { streaming: way == 1, timed })
    }

    /// Remember the markers around a timed launch.
    pub fn timed(&self, kernel: &'static str, class: u8, streaming: bool, start: Marker, end: Marker) {
        self.trials.timed(kernel, class, streaming as usize, start, end);
    }

    /// The decisions and timings so far, by kernel name and class.
    pub fn choices(&self) -> Vec<LoopChoice> {
        self.trials.each(|kernel, class, t| LoopChoice {
            kernel,
            class,
            streaming: t.chosen.map(|way| way == 1),
            plain: t.mean(0),
            streamed: t.mean(1),
        })
    }
}

/// The multiples of the wave grid that [`DoAllWaves::Auto`] times.
pub const WAVE_CHOICES: [u32; 3] = [1, 2, 4];

/// Launches of a method over a class after a decision of [`DoAllWaves::Auto`], after which it
/// times the grids again (the objects' work may have changed: timed only on its first
/// launches, generation kept grids that made its whole run 8-16% slower on an H200).
pub const WAVE_RETRIAL_AFTER: u32 = 500;

/// A larger grid is kept only if it took less than this share of one wave grid's time, and
/// at least [`MORE_WAVES_MUST_SAVE`] less: on a tie the smaller grid, which launches fewer
/// thread blocks, stays.
const MORE_WAVES_MUST_TAKE: f64 = 0.97;

/// What a larger grid must save a launch to be kept. Kernels of a few microseconds (tiny
/// problems, where a step's time is its launches) differ by less than the timing's noise, and
/// a larger grid only adds thread blocks to them.
const MORE_WAVES_MUST_SAVE: Duration = Duration::from_micros(2);

/// The wave multiple to keep from the mean time of a launch at each of [`WAVE_CHOICES`]: the
/// fastest, but one wave grid unless the other took less than 97% of its time and at least
/// 2 us less.
fn fastest_waves(means: [Duration; WAVE_CHOICES.len()]) -> usize {
    let best = (0..means.len()).min_by_key(|&i| means[i]).unwrap_or(0);
    let saves = means[0].saturating_sub(means[best]);
    if means[best] < means[0].mul_f64(MORE_WAVES_MUST_TAKE) && saves >= MORE_WAVES_MUST_SAVE {
        best
    } else {
        0
    }
}

/// How many waves the grid of the next plain-loop launch of a method over one class has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WavePick {
    /// The multiple of the wave grid.
    pub waves: u32,
    /// Which of [`WAVE_CHOICES`] it is where the launch is to be timed (a trial of
    /// [`DoAllWaves::Auto`]); `None`: not timed.
    pub timed: Option<usize>,
}

/// What the runtime decided for the grid of one method and class (see
/// [`Runtime::do_all_waves`](crate::Runtime::do_all_waves)).
#[derive(Clone, Debug, PartialEq)]
pub struct WaveChoice {
    /// The method's plain kernel.
    pub kernel: &'static str,
    /// The concrete class's type id.
    pub class: u8,
    /// The multiple of the wave grid kept; `None` while still timing.
    pub waves: Option<u32>,
    /// Mean device time of a timed launch at each of [`WAVE_CHOICES`], in the current trial.
    pub times: Vec<Option<Duration>>,
    /// Decisions made so far (one per trial: the grids are timed again every
    /// [`WAVE_RETRIAL_AFTER`] launches).
    pub decisions: u32,
}

/// Chooses the grid of each method's plain-loop launches over each class ([`DoAllWaves`]).
///
/// Why: a do-all's threads stride over the class's listed blocks, and a grid of whole waves
/// gives each thread a fixed share. Where the objects' work is uneven (objects that allocate
/// or free among many that return at once, blocks with many free slots), the threads with
/// the slowest shares keep the kernel running while the multiprocessors empty; a larger grid
/// gives each thread less and lets the hardware hand the next thread blocks to the
/// multiprocessors that finished. Where the work is even and each thread's loop long, the
/// larger grid only adds thread blocks and cuts the loop's overlap of one object's loads with
/// the next. On an H200 (docs/performance-log.md, "Grids of more waves"), twice the grid took
/// the Game of Life's four do-alls 10% faster and Wa-Tor's `OceanCell::decide` 3% slower,
/// so the runtime times the choices per method and class.
pub(crate) struct WaveTuner {
    mode: DoAllWaves,
    trials: Trials<{ WAVE_CHOICES.len() }>,
    /// Print the decisions when the runtime goes (`DYNASOAR_DO_ALL_REPORT=1`).
    report: bool,
}

impl WaveTuner {
    pub fn new(mode: DoAllWaves, exec: &Executor) -> Self {
        let mode = match (mode, exec.kind()) {
            (_, BackendKind::Cpu) => DoAllWaves::Fixed(1),
            (DoAllWaves::Fixed(n), _) => DoAllWaves::Fixed(n.clamp(1, MAX_WAVES)),
            (mode, _) => mode,
        };
        WaveTuner { mode, trials: Trials::new(), report: exec.settings().do_all_report }
    }

    /// The choice in force (one wave grid on the CPU backend).
    pub fn mode(&self) -> DoAllWaves {
        self.mode
    }

    /// The grid multiple of the next plain-loop launch of `kernel` over `class`. While a
    /// launch is captured into a graph (which cannot be timed) an undecided trial runs one
    /// wave grid and counts nothing.
    pub fn pick(&self, exec: &Executor, kernel: &'static str, class: u8) -> Result<WavePick> {
        if let DoAllWaves::Fixed(waves) = self.mode {
            return Ok(WavePick { waves, timed: None });
        }
        let mut trials = self.trials.0.lock().unwrap();
        let trial = trials.entry((kernel, class)).or_default();
        if let Some(way) = trial.chosen {
            // A kept choice holds for `WAVE_RETRIAL_AFTER` launches; then the grids are timed
            // again, as the objects' work may have changed since.
            trial.launches += 1;
            if trial.launches < WAVE_RETRIAL_AFTER || exec.capturing() {
                return Ok(WavePick { waves: WAVE_CHOICES[way], timed: None });
            }
            *trial = Trial { decisions: trial.decisions, ..Trial::default() };
        }
        if exec.capturing() {
            return Ok(WavePick { waves: 1, timed: None });
        }
        trial.read_finished(exec)?;
        if trial.complete() {
            let means = core::array::from_fn(|i| trial.mean(i).unwrap_or_default());
            let way = fastest_waves(means);
            trial.decide(exec, way);
            return Ok(WavePick { waves: WAVE_CHOICES[way], timed: None });
        }
        let (way, timed) = trial.next_launch();
        Ok(WavePick { waves: WAVE_CHOICES[way], timed: timed.then_some(way) })
    }

    /// Remember the markers around a timed launch of choice `way`.
    pub fn timed(&self, kernel: &'static str, class: u8, way: usize, start: Marker, end: Marker) {
        self.trials.timed(kernel, class, way, start, end);
    }

    /// The decisions and timings so far, by kernel name and class.
    pub fn choices(&self) -> Vec<WaveChoice> {
        self.trials.each(|kernel, class, t| WaveChoice {
            kernel,
            class,
            waves: t.chosen.map(|way| WAVE_CHOICES[way]),
            times: (0..WAVE_CHOICES.len()).map(|i| t.mean(i)).collect(),
            decisions: t.decisions,
        })
    }
}

impl Drop for WaveTuner {
    fn drop(&mut self) {
        if !self.report {
            return;
        }
        for c in self.choices() {
            let times: Vec<String> = WAVE_CHOICES
                .iter()
                .zip(&c.times)
                .map(|(w, t)| {
                    format!(
                        "x{w} {}",
                        t.map_or("-".to_string(), |d| format!("{:.1} us", d.as_secs_f64() * 1e6))
                    )
                })
                .collect();
            let choice = c.waves.map_or("undecided".to_string(), |w| format!("x{w}"));
            eprintln!(
                "do-all grid {} class {}: {choice} ({}; {} decisions)",
                c.kernel,
                c.class,
                times.join(", "),
                c.decisions
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: [u64; 3]) -> [Duration; 3] {
        v.map(Duration::from_micros)
    }

    #[test]
    fn a_larger_grid_is_kept_only_where_it_is_clearly_faster() {
        assert_eq!(fastest_waves(us([100, 80, 85])), 1);
        assert_eq!(fastest_waves(us([100, 90, 70])), 2);
        // Slower, or within 3% of one wave grid: one wave grid.
        assert_eq!(fastest_waves(us([100, 110, 120])), 0);
        assert_eq!(fastest_waves(us([100, 98, 99])), 0);
        // Faster by a large share of a short kernel, but by less than 2 us: one wave grid.
        assert_eq!(fastest_waves(us([5, 4, 4])), 0);
        assert_eq!(fastest_waves(us([5, 3, 4])), 1);
    }

    #[test]
    fn trials_take_the_ways_in_turn_and_time_each_after_its_first_launch() {
        let mut trial = Trial::<3>::default();
        let launches: Vec<(usize, bool)> = (0..6).map(|_| trial.next_launch()).collect();
        assert_eq!(launches, [(0, false), (1, false), (2, false), (0, true), (1, true), (2, true)]);
        // A way with its timed launches read is not timed again.
        trial.samples = [TIMED_LAUNCHES, 0, TIMED_LAUNCHES];
        assert_eq!(trial.next_launch(), (0, false));
        assert_eq!(trial.next_launch(), (1, true));
        assert!(!trial.complete());
        trial.samples[1] = TIMED_LAUNCHES;
        assert!(trial.complete());
    }
}
