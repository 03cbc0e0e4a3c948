//! Profiling a [`Runtime`]: device time of enumerations and methods ([`Timings`]), per kernel
//! ([`KernelTime`]), and the table a runtime prints when dropped with `DYNASOAR_PROFILE=1`.

use std::time::Duration;

use super::Runtime;
use crate::backend::Marker;
use crate::error::Result;

/// What a span of profiled work was, and for which class or kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Enumerate(&'static str),
    /// Listing the classes of a mask (bits by type id) in one call of the store's
    /// `list_several`.
    List(u64),
    /// Building a class's ranked list before a launch of a method with lanes.
    Rank(&'static str),
    Method(&'static str),
}

/// Device time of one kernel (or of one class's enumeration) over a run, from
/// [`Runtime::kernel_profile`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelTime {
    /// The kernel's name, or `enumerate <class>`.
    pub name: String,
    pub launches: u64,
    pub total: Duration,
}

/// Profiled work not yet timed, and the per-kernel totals of what was.
///
/// `marks` is a sequence of markers; a mark with a phase ends a span that began at the mark
/// before it. A `parallel_do`'s enumeration and method spans share their boundary marker.
/// Spans of different calls do not: when the host cannot keep the GPU busy, a shared marker
/// would count the GPU's wait for the next call as that call's work.
#[derive(Default)]
pub(super) struct Profile {
    /// Whether method kernels are timed too (else only enumerations, each span on its own).
    methods: bool,
    marks: Vec<(Option<Phase>, Marker)>,
    /// Launches and device time of each phase timed so far.
    totals: Vec<(Phase, u64, Duration)>,
}

impl Profile {
    /// A profile that times enumerations, and method kernels too if `methods`.
    pub(super) fn new(methods: bool) -> Self {
        Profile { methods, ..Profile::default() }
    }

    fn add(&mut self, phase: Phase, d: Duration) {
        match self.totals.iter_mut().find(|t| t.0 == phase) {
            Some(t) => {
                t.1 += 1;
                t.2 += d;
            }
            None => self.totals.push((phase, 1, d)),
        }
    }
}

/// Device time spent since the last [`Runtime::take_timings`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// Listing blocks and snapshotting iteration bitmaps before do-all kernels, and listing
    /// the objects of a class before a launch of a method with lanes.
    pub enumeration: Duration,
    /// The do-all and constructor kernels themselves.
    pub methods: Duration,
    /// Do-all launches (one per concrete class per `parallel_do`).
    pub launches: u64,
}

impl<A> Runtime<A> {
    /// Run `f` (which queues work) and time it as `phase`; `chained` when it follows another
    /// span of the same call, whose end marker then starts this one.
    pub(super) fn timed<R>(&self, phase: Phase, chained: bool, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let Some(profile) = self.profile.as_ref().filter(|_| !self.exec.capturing()) else { return f() };
        {
            let mut p = profile.lock().unwrap();
            if matches!(phase, Phase::Method(_)) && !p.methods {
                drop(p);
                return f();
            }
            // Without method spans, the mark before an enumeration may end a span of an
            // earlier call: each enumeration gets its own start.
            if !chained || !p.methods || p.marks.is_empty() {
                let start = self.exec.marker()?;
                p.marks.push((None, start));
            }
        }
        let r = f()?;
        let end = self.exec.marker()?;
        let mut p = profile.lock().unwrap();
        p.marks.push((Some(phase), end));
        Ok(r)
    }

    /// Device time spent in enumeration and in methods since the last call (needs
    /// `profile(true)` on the builder, and `profile_methods(true)` for the methods; zero
    /// otherwise). Waits for queued work.
    pub fn take_timings(&self) -> Result<Timings> {
        let Some(profile) = &self.profile else { return Ok(Timings::default()) };
        let mut profile = profile.lock().unwrap();
        let marks = std::mem::take(&mut profile.marks);
        let mut t = Timings::default();
        for pair in marks.windows(2) {
            let (start, (phase, end)) = (&pair[0].1, &pair[1]);
            let Some(phase) = *phase else { continue };
            let d = self.exec.elapsed(start, end)?;
            match phase {
                Phase::Enumerate(_) | Phase::List(_) | Phase::Rank(_) => t.enumeration += d,
                Phase::Method(_) => {
                    t.methods += d;
                    t.launches += 1;
                }
            }
            profile.add(phase, d);
        }
        for (_, marker) in marks {
            self.exec.recycle(marker);
        }
        Ok(t)
    }

    /// Device time per kernel and per class enumeration since the runtime was built (needs
    /// `profile(true)`; empty otherwise), most expensive first. Waits for queued work.
    pub fn kernel_profile(&self) -> Result<Vec<KernelTime>> {
        let Some(profile) = &self.profile else { return Ok(Vec::new()) };
        self.take_timings()?;
        let totals = profile.lock().unwrap().totals.clone();
        let mut kernels: Vec<KernelTime> = totals
            .into_iter()
            .map(|(phase, launches, total)| KernelTime {
                name: match phase {
                    Phase::Enumerate(what) => format!("enumerate {what}"),
                    Phase::List(classes) => {
                        let names: Vec<&str> = self
                            .classes
                            .iter()
                            .filter(|c| classes & 1 << c.type_id != 0)
                            .map(|c| c.name)
                            .collect();
                        format!("enumerate {}", names.join("+"))
                    }
                    Phase::Rank(class) => format!("rank {class}"),
                    Phase::Method(kernel) => kernel.to_string(),
                },
                launches,
                total,
            })
            .collect();
        kernels.sort_by_key(|k| std::cmp::Reverse(k.total));
        Ok(kernels)
    }

    /// The per-kernel profile as a table, for `DYNASOAR_PROFILE`.
    fn profile_table(&self) -> Result<String> {
        let kernels = self.kernel_profile()?;
        let total: Duration = kernels.iter().map(|k| k.total).sum();
        let mut out = format!(
            "{:<48} {:>9} {:>12} {:>10} {:>6}\n",
            "kernel", "launches", "total ms", "mean us", "share"
        );
        for k in &kernels {
            out += &format!(
                "{:<48} {:>9} {:>12.3} {:>10.2} {:>5.1}%\n",
                k.name,
                k.launches,
                k.total.as_secs_f64() * 1e3,
                k.total.as_secs_f64() * 1e6 / k.launches.max(1) as f64,
                100.0 * k.total.as_secs_f64() / total.as_secs_f64().max(1e-12),
            );
        }
        Ok(out)
    }

    /// The heap's occupancy per class as a table, for `DYNASOAR_PROFILE`: how full a class's
    /// blocks are decides what a walk over them costs (each block of a class is visited by
    /// every `device_do` over it, full or not). Stores without blocks list objects only.
    fn occupancy_table(&self) -> Result<String> {
        let stats = self.store.stats(&self.exec, self.classes)?;
        let mut out = format!(
            "{:<24} {:>10} {:>12} {:>12} {:>11}\n",
            "class", "blocks", "per block", "objects", "free slots"
        );
        for c in stats.classes.iter().filter(|c| c.objects > 0 || c.blocks > 0) {
            out += &format!(
                "{:<24} {:>10} {:>12} {:>12} {:>10.1}%\n",
                c.name,
                c.blocks,
                c.objects_per_block,
                c.objects,
                100.0 * c.fragmentation(),
            );
        }
        Ok(out)
    }
}

/// With `DYNASOAR_PROFILE=1`, a profiled runtime prints its device time per kernel and the
/// heap's occupancy per class when it is dropped: where a simulation spends its time, and
/// how full the blocks its walks visit are, without a profiler.
impl<A> Drop for Runtime<A> {
    fn drop(&mut self) {
        if self.profile.is_none() || !self.exec.settings().profile {
            return;
        }
        match self.profile_table() {
            Ok(table) => eprint!("device time per kernel ({}):\n{table}", self.exec.description()),
            Err(e) => eprintln!("DYNASOAR_PROFILE: no profile: {e}"),
        }
        match self.occupancy_table() {
            Ok(table) => eprint!("heap occupancy at the end:\n{table}"),
            Err(e) => eprintln!("DYNASOAR_PROFILE: no heap occupancy: {e}"),
        }
    }
}
