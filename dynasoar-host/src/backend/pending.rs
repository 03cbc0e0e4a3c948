//! The kernels launched since the last check, which errors name ([`PendingKernels`]).

use dynasoar_device::kernel_tag;

/// At most this many launches are remembered between synchronisations.
const LAUNCHES: usize = 16;

/// The kernels launched since the last check, to name them in errors. The
/// [`Executor`](super::Executor) owns the one record; two checks read it, each its own way:
///
/// - A synchronisation ([`Executor::synchronize`](super::Executor::synchronize), also inside
///   reads, writes and timing) names, when the driver reports that a kernel failed, the
///   kernels launched since the last synchronisation: every launch (the heap's own kernels
///   and an app's too), the last [`LAUNCHES`] of them, repeats included, in launch order.
/// - An error check (`Runtime::sync`, after its synchronisation) names, when device code
///   raised errors (out of memory, an invalid free), the kernels the runtime launched for
///   `parallel_do` and `parallel_new` since the last error check: each once, in the order the
///   runtime named them, across the synchronisations in between (in deferred mode, a
///   `collect` or an app's read does not forget them).
#[derive(Debug, Default)]
pub(super) struct PendingKernels {
    /// Launched since the last synchronisation.
    since_sync: Vec<&'static str>,
    /// Named by the runtime since the last error check.
    since_check: Vec<&'static str>,
    /// Every kernel launched on the executor, once each: the kernels an error's
    /// [`kernel_tag`](dynasoar_device::kernel_tag) may name.
    launched_ever: Vec<&'static str>,
}

impl PendingKernels {
    /// `kernel` was launched.
    pub(super) fn launched(&mut self, kernel: &'static str) {
        if !self.launched_ever.contains(&kernel) {
            self.launched_ever.push(kernel);
        }
        if self.since_sync.len() == LAUNCHES {
            self.since_sync.remove(0);
        }
        self.since_sync.push(kernel);
    }

    /// The kernels launched since the last synchronisation, which this one is.
    pub(super) fn take_since_sync(&mut self) -> Vec<&'static str> {
        std::mem::take(&mut self.since_sync)
    }

    /// The runtime launched `kernels`: the next error check names them.
    pub(super) fn note_for_check(&mut self, kernels: &[&'static str]) {
        for &k in kernels {
            if !self.since_check.contains(&k) {
                self.since_check.push(k);
            }
        }
    }

    /// The kernels the runtime launched since the last error check, which this one is.
    pub(super) fn take_for_check(&mut self) -> Vec<&'static str> {
        std::mem::take(&mut self.since_check)
    }

    /// The launched kernel whose tag is `tag`.
    pub(super) fn tagged(&self, tag: u32) -> Option<&'static str> {
        self.launched_ever.iter().copied().find(|&k| tag != 0 && kernel_tag(k) == tag)
    }
}

#[cfg(test)]
mod tests {
    use super::{LAUNCHES, PendingKernels, kernel_tag};

    #[test]
    fn a_synchronisation_names_the_last_launches_with_repeats() {
        let mut p = PendingKernels::default();
        p.launched("enumerate");
        p.launched("step");
        p.launched("enumerate");
        assert_eq!(p.take_since_sync(), ["enumerate", "step", "enumerate"]);
        assert!(p.take_since_sync().is_empty());
        let names: Vec<&'static str> = (0..LAUNCHES + 3).map(|i| &*format!("k{i}").leak()).collect();
        for &k in &names {
            p.launched(k);
        }
        assert_eq!(p.take_since_sync(), names[3..]);
    }

    #[test]
    fn tags_name_launched_kernels() {
        let mut p = PendingKernels::default();
        p.launched("force");
        p.launched("step");
        p.take_since_sync();
        let (a, b) = (kernel_tag("force"), kernel_tag("step"));
        assert_ne!(a, b);
        assert_eq!((p.tagged(a), p.tagged(b)), (Some("force"), Some("step")));
        assert_eq!(p.tagged(kernel_tag("never launched")), None);
        assert_eq!(p.tagged(0), None);
    }

    #[test]
    fn an_error_check_names_the_runtime_kernels_once_across_synchronisations() {
        let mut p = PendingKernels::default();
        p.launched("enumerate");
        p.note_for_check(&["force", "force_streaming"]);
        p.launched("gather");
        assert_eq!(p.take_since_sync(), ["enumerate", "gather"]);
        p.note_for_check(&["step", "force"]);
        assert_eq!(p.take_for_check(), ["force", "force_streaming", "step"]);
        assert!(p.take_for_check().is_empty());
        // Launches alone are not named by an error check.
        p.launched("enumerate");
        assert!(p.take_for_check().is_empty());
    }
}
