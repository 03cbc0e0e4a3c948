//! The `DYNASOAR_*` environment variables that the host reads, in one place: [`Settings`],
//! read from the environment when an executor is made ([`Settings::from_env`]). A value that
//! a variable does not accept is an error that names the variable and what it accepts.
//!
//! | Variable | Values | Default | What it does |
//! |---|---|---|---|
//! | `DYNASOAR_BACKEND` | `auto`, `cuda` (or `gpu`), `cpu`, in any case; empty is unset | unset | The backend that [`Backend::from_env`] returns (the apps' `--backend` reads the variable itself). |
//! | `DYNASOAR_CPU_THREADS` | a number, at least 1 | all cores | Threads of the CPU backend where [`ExecutorOptions::cpu_threads`](crate::ExecutorOptions::cpu_threads) does not say. |
//! | `DYNASOAR_SYNC_EACH_LAUNCH` | `1` (on), `0` (off) | off | Synchronise after every launch, so that a failure names exactly its kernel: the default of [`ExecutorOptions::sync_each_launch`](crate::ExecutorOptions::sync_each_launch). |
//! | `DYNASOAR_JIT` | `whole`, `relocatable` | as the options say | How the CUDA driver compiles the PTX ([`ModuleCompile`]), whatever the executor's options (or the store) chose. |
//! | `DYNASOAR_CUBIN_DIR` | a folder | unset | Where cubins built ahead of time are (`scripts/gpu-bundle.sh`): one for the PTX and the GPU is loaded instead of compiling the PTX. |
//! | `DYNASOAR_BLOCK_RUNS` | `on`, `off` | `on` | Whether warps that allocate at least half a block of a class with `ClassSpec::OWNS_BLOCKS` take their slots from runs of blocks reserved for them. |
//! | `DYNASOAR_ALLOCATOR_VARIANT` | `default`, or `nocoal`, `noshift`, `nolast` or several joined by `+` (`nocoal+noshift`) | `default` | A variant of DynaSOAr's allocator for comparisons ([`AllocatorVariant`]): heaps made by this executor's runtimes start with it, where [`RuntimeBuilder::allocator_variant`](crate::RuntimeBuilder::allocator_variant) does not say. |
//! | `DYNASOAR_ENUMERATION` | `flat`, `hierarchical` | the builder's ([`Enumeration::Hierarchical`]) | How the heap lists a class's blocks before a do-all, where [`RuntimeBuilder::enumeration`](crate::RuntimeBuilder::enumeration) does not say (and for heaps made without a builder). |
//! | `DYNASOAR_DO_ALL` | `auto`, `plain`, `streaming`, `adaptive` | the builder's ([`DoAllLoop::Auto`]) | Which loop `parallel_do` kernels run, over [`RuntimeBuilder::do_all_loop`](crate::RuntimeBuilder::do_all_loop). |
//! | `DYNASOAR_DO_ALL_WAVES` | `auto`, or a number from 1 to 16 | the builder's ([`DoAllWaves::Auto`]) | How many times the grid of whole waves a `parallel_do` on the plain loop launches, over [`RuntimeBuilder::do_all_waves`](crate::RuntimeBuilder::do_all_waves). |
//! | `DYNASOAR_DO_ALL_REPORT` | `1` (on), `0` (off) | off | Print each method's do-all loop and grid, and why, when the runtime is dropped. |
//! | `DYNASOAR_REUSE_LISTINGS` | `0` (off), `1` (on) | on | Let `parallel_do` skip listing a class that no launch since could have changed: the default of [`RuntimeBuilder::reuse_listings`](crate::RuntimeBuilder::reuse_listings). |
//! | `DYNASOAR_MERGE_SUBCLASSES` | `0` (off), `1` (on) | on | Let a `parallel_do` over a class with subclasses visit several concrete classes in one launch: the default of [`RuntimeBuilder::merge_subclass_launches`](crate::RuntimeBuilder::merge_subclass_launches). |
//! | `DYNASOAR_DEPENDENT_LAUNCH` | `1` (on), `0` (off) | on | Launch the kernels of a model built for sm_90 or later as programmatic dependent launches on a GPU that has them (each kernel's threads wait for the kernel before it, and the driver readies it meanwhile); `0` launches every kernel after the one before it has finished. |
//! | `DYNASOAR_PROFILE` | `1` (on), `0` (off) | off | Time every kernel (the default of [`RuntimeBuilder::profile_methods`](crate::RuntimeBuilder::profile_methods)), and print the device time per kernel and the heap's occupancy per class (blocks, objects, free slots) when a profiled runtime is dropped. |

use std::ffi::OsString;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::options::{
    AllocatorVariant, Backend, DoAllLoop, DoAllWaves, Enumeration, MAX_WAVES, ModuleCompile,
};

/// The `DYNASOAR_*` environment variables that the host reads (see the table in the module
/// documentation). [`Default`] is the settings of an environment that sets none of them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// `DYNASOAR_BACKEND`.
    pub backend: Option<Backend>,
    /// `DYNASOAR_CPU_THREADS`.
    pub cpu_threads: Option<usize>,
    /// `DYNASOAR_SYNC_EACH_LAUNCH`.
    pub sync_each_launch: bool,
    /// `DYNASOAR_JIT`.
    pub jit: Option<ModuleCompile>,
    /// `DYNASOAR_CUBIN_DIR`.
    pub cubin_dir: Option<PathBuf>,
    /// `DYNASOAR_BLOCK_RUNS`.
    pub block_runs: bool,
    /// `DYNASOAR_ALLOCATOR_VARIANT`.
    pub allocator_variant: AllocatorVariant,
    /// `DYNASOAR_ENUMERATION`.
    pub enumeration: Option<Enumeration>,
    /// `DYNASOAR_DO_ALL`.
    pub do_all: Option<DoAllLoop>,
    /// `DYNASOAR_DO_ALL_WAVES`.
    pub do_all_waves: Option<DoAllWaves>,
    /// `DYNASOAR_DO_ALL_REPORT`.
    pub do_all_report: bool,
    /// `DYNASOAR_REUSE_LISTINGS`.
    pub reuse_listings: bool,
    /// `DYNASOAR_MERGE_SUBCLASSES`.
    pub merge_subclasses: bool,
    /// `DYNASOAR_DEPENDENT_LAUNCH`.
    pub dependent_launch: bool,
    /// `DYNASOAR_PROFILE`.
    pub profile: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            backend: None,
            cpu_threads: None,
            sync_each_launch: false,
            jit: None,
            cubin_dir: None,
            block_runs: true,
            allocator_variant: AllocatorVariant::DEFAULT,
            enumeration: None,
            do_all: None,
            do_all_waves: None,
            do_all_report: false,
            reuse_listings: true,
            merge_subclasses: true,
            dependent_launch: true,
            profile: false,
        }
    }
}

impl Settings {
    /// The settings of this process's environment.
    pub fn from_env() -> Result<Settings> {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// The settings of an environment in which `lookup(name)` is the value of variable `name`
    /// (`None` where it is unset).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Result<Settings> {
        let lookup = &lookup;
        let defaults = Settings::default();
        Ok(Settings {
            backend: read(lookup, "DYNASOAR_BACKEND", "auto, cuda (or gpu) or cpu", |v| match v {
                "" => Some(None),
                v => v.parse().ok().map(Some),
            })?
            .flatten(),
            cpu_threads: read(lookup, "DYNASOAR_CPU_THREADS", "a number of threads, at least 1", |v| {
                v.parse().ok().filter(|&n| n > 0)
            })?,
            sync_each_launch: read(lookup, "DYNASOAR_SYNC_EACH_LAUNCH", "1 or 0", flag)?
                .unwrap_or(defaults.sync_each_launch),
            jit: read(lookup, "DYNASOAR_JIT", "whole or relocatable", |v| match v {
                "whole" => Some(ModuleCompile::WholeProgram),
                "relocatable" => Some(ModuleCompile::Relocatable),
                _ => None,
            })?,
            cubin_dir: lookup("DYNASOAR_CUBIN_DIR").map(PathBuf::from),
            block_runs: read(lookup, "DYNASOAR_BLOCK_RUNS", "on or off", |v| match v {
                "on" => Some(true),
                "off" => Some(false),
                _ => None,
            })?
            .unwrap_or(defaults.block_runs),
            allocator_variant: read(
                lookup,
                "DYNASOAR_ALLOCATOR_VARIANT",
                "default, or nocoal, noshift, nolast or several joined by +",
                |v| v.parse().ok(),
            )?
            .unwrap_or(defaults.allocator_variant),
            enumeration: read(lookup, "DYNASOAR_ENUMERATION", "flat or hierarchical", |v| v.parse().ok())?,
            do_all: read(lookup, "DYNASOAR_DO_ALL", "auto, plain, streaming or adaptive", |v| match v {
                "auto" => Some(DoAllLoop::Auto),
                "plain" => Some(DoAllLoop::Plain),
                "streaming" => Some(DoAllLoop::Streaming),
                "adaptive" => Some(DoAllLoop::Adaptive),
                _ => None,
            })?,
            do_all_waves: read(
                lookup,
                "DYNASOAR_DO_ALL_WAVES",
                "auto or a number from 1 to 16",
                |v| match v {
                    "auto" => Some(DoAllWaves::Auto),
                    n => n.parse().ok().filter(|n| (1..=MAX_WAVES).contains(n)).map(DoAllWaves::Fixed),
                },
            )?,
            do_all_report: read(lookup, "DYNASOAR_DO_ALL_REPORT", "1 or 0", flag)?
                .unwrap_or(defaults.do_all_report),
            reuse_listings: read(lookup, "DYNASOAR_REUSE_LISTINGS", "0 or 1", flag)?
                .unwrap_or(defaults.reuse_listings),
            merge_subclasses: read(lookup, "DYNASOAR_MERGE_SUBCLASSES", "0 or 1", flag)?
                .unwrap_or(defaults.merge_subclasses),
            dependent_launch: read(lookup, "DYNASOAR_DEPENDENT_LAUNCH", "1 or 0", flag)?
                .unwrap_or(defaults.dependent_launch),
            profile: read(lookup, "DYNASOAR_PROFILE", "1 or 0", flag)?.unwrap_or(defaults.profile),
        })
    }
}

/// Variable `name` as `parse` reads its value, `None` where it is unset. A value that `parse`
/// refuses (or that is not Unicode) is an error naming the variable and what it accepts,
/// `expected`.
fn read<T>(
    lookup: &dyn Fn(&str) -> Option<OsString>,
    name: &str,
    expected: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    let Some(value) = lookup(name) else { return Ok(None) };
    let value = value.to_string_lossy();
    match parse(&value) {
        Some(parsed) => Ok(Some(parsed)),
        None => Err(Error::InvalidArgument(format!("{name}={value}: expected {expected}"))),
    }
}

/// A switch: `1` on, `0` off.
fn flag(value: &str) -> Option<bool> {
    match value {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::ffi::OsString;
    use std::path::PathBuf;

    use super::Settings;
    use crate::error::Result;
    use crate::options::{AllocatorVariant, Backend, DoAllLoop, DoAllWaves, Enumeration, ModuleCompile};

    fn settings(vars: &[(&str, &str)]) -> Result<Settings> {
        Settings::from_lookup(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v)))
    }

    fn error(vars: &[(&str, &str)]) -> String {
        match settings(vars) {
            Ok(s) => panic!("{vars:?} gave {s:?}, not an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn an_empty_environment_gives_the_defaults() {
        let s = settings(&[]).unwrap();
        assert_eq!(s, Settings::default());
        assert!(s.block_runs && s.reuse_listings && s.merge_subclasses && s.dependent_launch);
        assert!(!s.profile && !s.sync_each_launch && !s.do_all_report);
        assert_eq!((s.backend, s.cpu_threads, s.jit, s.do_all, s.cubin_dir), (None, None, None, None, None));
        assert_eq!(s.enumeration, None);
        assert_eq!(s.allocator_variant, AllocatorVariant::DEFAULT);
    }

    #[test]
    fn every_variable_is_read() {
        let s = settings(&[
            ("DYNASOAR_BACKEND", "GPU"),
            ("DYNASOAR_CPU_THREADS", "3"),
            ("DYNASOAR_SYNC_EACH_LAUNCH", "1"),
            ("DYNASOAR_JIT", "relocatable"),
            ("DYNASOAR_CUBIN_DIR", "/tmp/cubins"),
            ("DYNASOAR_BLOCK_RUNS", "off"),
            ("DYNASOAR_ALLOCATOR_VARIANT", "nocoal+noshift"),
            ("DYNASOAR_ENUMERATION", "flat"),
            ("DYNASOAR_DO_ALL", "streaming"),
            ("DYNASOAR_DO_ALL_WAVES", "2"),
            ("DYNASOAR_DO_ALL_REPORT", "1"),
            ("DYNASOAR_REUSE_LISTINGS", "0"),
            ("DYNASOAR_MERGE_SUBCLASSES", "0"),
            ("DYNASOAR_DEPENDENT_LAUNCH", "0"),
            ("DYNASOAR_PROFILE", "1"),
        ])
        .unwrap();
        assert_eq!(
            s,
            Settings {
                backend: Some(Backend::Cuda),
                cpu_threads: Some(3),
                sync_each_launch: true,
                jit: Some(ModuleCompile::Relocatable),
                cubin_dir: Some(PathBuf::from("/tmp/cubins")),
                block_runs: false,
                allocator_variant: AllocatorVariant { coalescing: false, rotation: false, last_block: true },
                enumeration: Some(Enumeration::Flat),
                do_all: Some(DoAllLoop::Streaming),
                do_all_waves: Some(DoAllWaves::Fixed(2)),
                do_all_report: true,
                reuse_listings: false,
                merge_subclasses: false,
                dependent_launch: false,
                profile: true,
            }
        );
    }

    #[test]
    fn values_as_today() {
        // An empty backend is unset; any case is accepted.
        assert_eq!(settings(&[("DYNASOAR_BACKEND", "")]).unwrap().backend, None);
        assert_eq!(settings(&[("DYNASOAR_BACKEND", "Cpu")]).unwrap().backend, Some(Backend::Cpu));
        // `DYNASOAR_PROFILE=0` is off (it was on when set at all), and an empty value is an error.
        assert!(!settings(&[("DYNASOAR_PROFILE", "0")]).unwrap().profile);
        assert!(settings(&[("DYNASOAR_PROFILE", "1")]).unwrap().profile);
        assert!(settings(&[("DYNASOAR_PROFILE", "")]).unwrap_err().to_string().contains("DYNASOAR_PROFILE"));
        // The other switches take their other value too.
        let s = settings(&[
            ("DYNASOAR_SYNC_EACH_LAUNCH", "0"),
            ("DYNASOAR_REUSE_LISTINGS", "1"),
            ("DYNASOAR_MERGE_SUBCLASSES", "1"),
            ("DYNASOAR_BLOCK_RUNS", "on"),
            ("DYNASOAR_JIT", "whole"),
            ("DYNASOAR_DO_ALL", "adaptive"),
            ("DYNASOAR_DO_ALL_WAVES", "auto"),
            ("DYNASOAR_ENUMERATION", "hierarchical"),
            ("DYNASOAR_ALLOCATOR_VARIANT", "noshift"),
        ])
        .unwrap();
        assert!(!s.sync_each_launch && s.reuse_listings && s.merge_subclasses && s.block_runs);
        assert_eq!(s.enumeration, Some(Enumeration::Hierarchical));
        assert_eq!(s.allocator_variant, AllocatorVariant::NO_ROTATION);
        assert_eq!((s.jit, s.do_all), (Some(ModuleCompile::WholeProgram), Some(DoAllLoop::Adaptive)));
        assert_eq!(s.do_all_waves, Some(DoAllWaves::Auto));
    }

    #[test]
    fn a_bad_value_is_an_error_naming_the_variable_and_its_values() {
        assert_eq!(
            error(&[("DYNASOAR_DO_ALL", "fast")]),
            "invalid argument: DYNASOAR_DO_ALL=fast: expected auto, plain, streaming or adaptive"
        );
        assert_eq!(
            error(&[("DYNASOAR_BLOCK_RUNS", "yes")]),
            "invalid argument: DYNASOAR_BLOCK_RUNS=yes: expected on or off"
        );
        for (name, value, expected) in [
            ("DYNASOAR_BACKEND", "tpu", "auto, cuda (or gpu) or cpu"),
            ("DYNASOAR_CPU_THREADS", "0", "a number of threads, at least 1"),
            ("DYNASOAR_CPU_THREADS", "many", "a number of threads, at least 1"),
            ("DYNASOAR_SYNC_EACH_LAUNCH", "yes", "1 or 0"),
            ("DYNASOAR_JIT", "fast", "whole or relocatable"),
            ("DYNASOAR_DO_ALL", "", "auto, plain, streaming or adaptive"),
            ("DYNASOAR_DO_ALL_WAVES", "0", "auto or a number from 1 to 16"),
            ("DYNASOAR_DO_ALL_WAVES", "17", "auto or a number from 1 to 16"),
            ("DYNASOAR_DO_ALL_REPORT", "true", "1 or 0"),
            ("DYNASOAR_DEPENDENT_LAUNCH", "on", "1 or 0"),
            ("DYNASOAR_REUSE_LISTINGS", "off", "0 or 1"),
            ("DYNASOAR_MERGE_SUBCLASSES", "yes", "0 or 1"),
            ("DYNASOAR_ENUMERATION", "Flat", "flat or hierarchical"),
            (
                "DYNASOAR_ALLOCATOR_VARIANT",
                "fast",
                "default, or nocoal, noshift, nolast or several joined by +",
            ),
        ] {
            let message = error(&[(name, value)]);
            assert!(message.contains(&format!("{name}={value}: expected {expected}")), "{message}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_value_that_is_not_unicode_is_an_error() {
        use std::os::unix::ffi::OsStringExt;
        let value = OsString::from_vec(vec![b'o', 0xff]);
        let e = Settings::from_lookup(|name| (name == "DYNASOAR_BLOCK_RUNS").then(|| value.clone()));
        assert!(e.unwrap_err().to_string().contains("DYNASOAR_BLOCK_RUNS=o\u{fffd}: expected on or off"));
    }

    /// The module's table has one row for each variable read, and no other.
    #[test]
    fn the_table_documents_every_variable() {
        let read = RefCell::new(Vec::new());
        Settings::from_lookup(|name| {
            read.borrow_mut().push(name.to_string());
            None
        })
        .unwrap();
        let mut read = read.into_inner();
        read.sort();
        let mut rows: Vec<String> = include_str!("settings.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! | `DYNASOAR_"))
            .map(|l| format!("DYNASOAR_{}", &l[..l.find('`').unwrap()]))
            .collect();
        rows.sort();
        assert_eq!(read.len(), 15);
        assert_eq!(read, rows);
    }
}
