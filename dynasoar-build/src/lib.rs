//! The PTX builder: compiles a model crate for `nvptx64-nvidia-cuda` from a build script.
//!
//! **One package** (a model and its app together; see `templates/minimal`): the package's
//! `build.rs` compiles the package's own library to PTX (the whole of its `main`):
//!
//! ```no_run
//! dynasoar_build::PtxBuilder::this_package().embed();
//! ```
//!
//! and the app (`src/main.rs`) embeds it with `dynasoar::include_ptx!()`. The library is the
//! model: `#![no_std]` and `#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]` at the top
//! of `src/lib.rs` (the builder checks both), and the app's own dependencies under
//! `[target.'cfg(not(target_arch = "nvptx64"))'.dependencies]`, since the device build
//! compiles the library's dependencies too. The device build of the package runs its build
//! script once more, for `nvptx64`; there the builder does nothing.
//!
//! **Two crates** (a model crate and an app crate, as `examples/apps` and `examples/models`):
//!
//! ```no_run
//! dynasoar_build::PtxBuilder::new("../models").build_or_exit("models.ptx");
//! ```
//!
//! and in the app: `include_str!(concat!(env!("OUT_DIR"), "/models.ptx"))`. Or
//! `PtxBuilder::new("../models").embed_as("models")` and `dynasoar::include_ptx!("models")`,
//! which report a compile error of the model once instead of twice ([`PtxBuilder::embed_as`]).
//!
//! To run the model on the general-purpose allocators of the comparison suite too
//! (`dynasoar-baselines`), build its AOS variant as well,
//! `PtxBuilder::new("../models").aos().build_or_exit("models-aos.ptx")`, and give the runtime
//! both (`ModelPtx::with_aos`). That build enables the facade's feature `baselines` (the model
//! crate must depend on `dynasoar` directly) and sets `cfg(dynasoar_aos)` for every crate,
//! which makes the AOS store the one object handles and `make_new`/`free`/`device_do` are
//! compiled against, so neither PTX pays for the other layout and the default build holds
//! none of the suite's kernels.
//!
//! BitmapAlloc as the paper built it (one allocation bitmap per class, which `parallel_do` and
//! `device_do` use) has a third build, `PtxBuilder::new("../models").bitmap_alloc()`: the AOS
//! build with `cfg(dynasoar_bitmap_alloc)` as well, which compiles the model against the
//! comparison suite's `BitmapStore` instead of the AOS store's pointer tables; the runtime
//! takes all three with `ModelPtx::with_bitmap_alloc`. The AOS build is not changed by it.
//!
//! The host builds on stable; the device build runs the pinned nightly through
//! `rustup run` (installing it with `rust-src` when missing), with `-Zbuild-std=core`, fat LTO,
//! `panic=abort` and `--emit=asm`, in its own target directory and a clean environment, so the
//! outer build's settings never leak into it. Dependencies of the device build (read from its
//! dep-info) become `rerun-if-changed` lines, so editing any device source rebuilds the PTX.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The nightly toolchain the device build is pinned to (rustc 1.97.0-nightly, LLVM 22).
pub const DEVICE_TOOLCHAIN: &str = "nightly-2026-05-20";

/// The GPU architecture compiled for when neither an option nor `DYNASOAR_GPU_ARCH` says.
pub const DEFAULT_GPU_ARCH: &str = "sm_70";

/// The lowest architecture our device code supports (independent thread scheduling,
/// `nanosleep`, `.relaxed.gpu` atomics).
const MIN_SM: u32 = 70;

const TARGET: &str = "nvptx64-nvidia-cuda";

/// The name [`PtxBuilder::embed`] gives the PTX, and the one `dynasoar::include_ptx!()` reads:
/// `$OUT_DIR/model.ptx`.
pub const DEFAULT_PTX_NAME: &str = "model";

/// Set for the device build to the directory of the crate it compiles: that crate's own build
/// script, run again by the device build, then knows not to start another one.
const NESTED_ENV: &str = "DYNASOAR_PTX_BUILD_OF";

/// The crate attributes every model crate's root needs, as the line to add, and how to find
/// each (whitespace removed, after `#![`).
const REQUIRED_ATTRIBUTES: [(&str, &str); 2] =
    [("#![no_std]", "no_std"), ("#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]", "abi_ptx")];

/// Why a PTX build failed.
#[derive(Debug)]
pub enum BuildError {
    /// The GPU architecture string is not of the accepted form.
    BadArch {
        value: String,
        source: &'static str,
    },
    /// rustup is not on the PATH.
    NoRustup(std::io::Error),
    /// Installing the pinned toolchain failed.
    InstallFailed {
        command: String,
        output: String,
    },
    /// The model crate's root (`file`) lacks crate attributes the device build needs; `lines`
    /// are the lines to add.
    MissingAttributes {
        file: PathBuf,
        lines: Vec<&'static str>,
    },
    /// The device crate failed to compile; `output` is cargo/rustc's own report.
    CompileFailed {
        output: String,
    },
    /// The build succeeded but left no PTX where expected.
    MissingOutput(PathBuf),
    Io(String, std::io::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::BadArch { value, source } => write!(
                f,
                "{source} = `{value}` is not a GPU architecture dynasoar can build for: expected \
                 `sm_XY` (optionally with an `a` suffix) with XY >= {MIN_SM}, e.g. sm_70, sm_80, \
                 sm_90 or sm_90a"
            ),
            BuildError::NoRustup(e) => write!(
                f,
                "the device (PTX) build needs rustup to run the pinned toolchain \
                 {DEVICE_TOOLCHAIN}, but `rustup` could not be started: {e}. Install rustup from \
                 https://rustup.rs"
            ),
            BuildError::InstallFailed { command, output } => write!(
                f,
                "installing the device toolchain failed. Run this yourself and build again:\n    \
                 {command}\n{output}"
            ),
            BuildError::MissingAttributes { file, lines } => {
                writeln!(
                    f,
                    "{} is the root of a model crate, compiled for the GPU too, and lacks {}. Add \
                     at the top of the file:",
                    file.display(),
                    if lines.len() == 1 { "a crate attribute" } else { "crate attributes" }
                )?;
                for line in lines {
                    writeln!(f, "    {line}")?;
                }
                for line in lines {
                    if line.contains("no_std") {
                        writeln!(f, "(`no_std`: the GPU has no standard library)")?;
                    } else {
                        writeln!(
                            f,
                            "(the `cfg_attr`: the GPU's kernel entries need the nightly feature \
                             `abi_ptx`, enabled only in the device build, so that the host build \
                             stays on stable Rust)"
                        )?;
                    }
                }
                Ok(())
            }
            BuildError::CompileFailed { output } => {
                write!(f, "the device (PTX) build failed:\n{output}{}", compile_hint(output))
            }
            BuildError::MissingOutput(p) => {
                write!(f, "the device build finished but wrote no PTX at {}", p.display())
            }
            BuildError::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// `ptx` with `.maxnreg n` on every do-all and constructor entry (`dynasoar_do__*`,
/// `dynasoar_new__*`) for which `cap(entry name)` is `Some(n)`, between the parameter list and
/// the body, and on no other entry (rustc never writes the directive, so any there came from an
/// earlier build with a cap).
pub fn cap_registers(ptx: &str, cap: impl Fn(&str) -> Option<u32>) -> String {
    let mut out = String::with_capacity(ptx.len() + 1024);
    let mut pending = None;
    for line in ptx.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with(".maxnreg") {
            continue;
        }
        out.push_str(line);
        if let Some(name) = trimmed.strip_prefix(".visible .entry ")
            && (name.starts_with("dynasoar_do__") || name.starts_with("dynasoar_new__"))
        {
            pending = cap(name.split('(').next().unwrap_or(name));
        } else if trimmed == ")"
            && let Some(n) = pending.take()
        {
            out.push_str(&format!(".maxnreg {n}\n"));
        }
    }
    out
}

/// A register cap for the kernels whose entry names contain `pattern` (see
/// [`PtxBuilder::max_registers_for`]).
#[derive(Clone, Debug)]
struct RegisterCap {
    pattern: String,
    registers: u32,
}

/// Builds one model crate to PTX.
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    arch: Option<String>,
    features: Vec<String>,
    target_dir: Option<PathBuf>,
    quiet: bool,
    aos: bool,
    bitmap_alloc: bool,
    max_registers: Option<u32>,
    register_caps: Vec<RegisterCap>,
}

/// What a successful build produced.
#[derive(Clone, Debug)]
pub struct PtxOutput {
    /// The PTX file (in the device build's target directory).
    pub ptx: PathBuf,
    /// The GPU architecture it was compiled for.
    pub arch: String,
    /// Source files the PTX depends on (from the device build's dep-info).
    pub sources: Vec<PathBuf>,
}

impl PtxBuilder {
    /// A builder for the crate at `crate_dir` (relative paths are relative to the calling
    /// crate's manifest directory when run from a build script).
    pub fn new(crate_dir: impl AsRef<Path>) -> Self {
        // Without `.` components, so that paths in messages read well.
        let dir: PathBuf =
            crate_dir.as_ref().components().filter(|c| *c != std::path::Component::CurDir).collect();
        let dir = if dir.is_relative() {
            match env::var_os("CARGO_MANIFEST_DIR") {
                Some(base) => PathBuf::from(base).join(dir),
                None => dir.to_path_buf(),
            }
        } else {
            dir.to_path_buf()
        };
        PtxBuilder {
            crate_dir: dir,
            arch: None,
            features: Vec::new(),
            target_dir: None,
            quiet: false,
            aos: false,
            bitmap_alloc: false,
            max_registers: None,
            register_caps: Vec::new(),
        }
    }

    /// A builder for the library of the package whose build script calls it (the one-package
    /// form: see the crate docs).
    pub fn this_package() -> Self {
        Self::new(".")
    }

    /// Whether this is the build script of the crate being compiled by one of our device
    /// builds (which runs the crate's build script again), or of a crate compiled for the GPU:
    /// then there is no PTX to make.
    fn is_nested(&self) -> bool {
        let device_target = env::var("TARGET").is_ok_and(|t| t.starts_with("nvptx64"));
        let same_crate = env::var_os(NESTED_ENV).is_some_and(|dir| {
            let dir = PathBuf::from(dir);
            dir == self.crate_dir || dir.canonicalize().ok() == self.crate_dir.canonicalize().ok()
        });
        device_target || same_crate
    }

    /// Compile for this GPU architecture (`sm_XY`); overrides `DYNASOAR_GPU_ARCH`.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = Some(arch.into());
        self
    }

    /// Enable a cargo feature of the model crate in the device build.
    pub fn feature(mut self, feature: impl Into<String>) -> Self {
        self.features.push(feature.into());
        self
    }

    /// Use this target directory for the device build (default: next to the outer build's).
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Build the AOS variant (objects of general-purpose allocators; see the module docs).
    pub fn aos(mut self) -> Self {
        self.aos = true;
        self
    }

    /// Build the BitmapAlloc variant: the AOS variant with `cfg(dynasoar_bitmap_alloc)` too,
    /// whose store keeps one allocation bitmap per class over BitmapAlloc's slots (see the
    /// module docs). Implies [`aos`](Self::aos); its own target directory
    /// (`<crate>-bitmap-aos`).
    pub fn bitmap_alloc(mut self) -> Self {
        self.aos = true;
        self.bitmap_alloc = true;
        self
    }

    /// The name of this build's variant: its target directory's name.
    fn variant(&self, crate_name: &str) -> String {
        match (self.aos, self.bitmap_alloc) {
            (_, true) => format!("{crate_name}-bitmap-aos"),
            (true, false) => format!("{crate_name}-aos"),
            (false, false) => crate_name.to_string(),
        }
    }

    /// Cap the registers of the do-all and constructor kernels at `n` per thread (PTX
    /// `.maxnreg`; ptxas spills what does not fit). Kernels that allocate inline the allocator
    /// and need 110-136 registers, so a multiprocessor holds only 512 of their threads; a cap
    /// trades spills for occupancy. Kernels below the cap are unchanged.
    pub fn max_registers(mut self, n: u32) -> Self {
        self.max_registers = Some(n);
        self
    }

    /// Like [`max_registers`](Self::max_registers), for the do-all and constructor kernels
    /// whose entry names contain `pattern` only, e.g. the name of one heap
    /// (`dynasoar_do__<Heap>__<Class>__<method>`): a cap pays off for some apps and costs
    /// others. The first matching pattern wins; kernels that match none get the
    /// `max_registers` cap, if any.
    pub fn max_registers_for(mut self, pattern: &str, n: u32) -> Self {
        self.register_caps.push(RegisterCap { pattern: pattern.to_owned(), registers: n });
        self
    }

    /// The register cap of the kernel `entry`.
    fn register_cap(&self, entry: &str) -> Option<u32> {
        match self.register_caps.iter().find(|c| entry.contains(&c.pattern)) {
            Some(c) => Some(c.registers),
            None => self.max_registers,
        }
    }

    /// Do not print `cargo:` directives (for use outside build scripts).
    pub fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }

    fn directive(&self, line: impl fmt::Display) {
        if !self.quiet {
            println!("cargo:{line}");
        }
    }

    /// The architecture to build for, validated.
    pub fn resolve_arch(&self) -> Result<String, BuildError> {
        let (value, source) = match (&self.arch, env::var("DYNASOAR_GPU_ARCH")) {
            (Some(a), _) => (a.clone(), "the PtxBuilder arch option"),
            (None, Ok(v)) if !v.trim().is_empty() => (v.trim().to_string(), "DYNASOAR_GPU_ARCH"),
            _ => (DEFAULT_GPU_ARCH.to_string(), "the default"),
        };
        validate_arch(&value).map_err(|()| BuildError::BadArch { value: value.clone(), source })?;
        Ok(value)
    }

    /// Build the PTX and return where it is.
    pub fn build(&self) -> Result<PtxOutput, BuildError> {
        self.directive("rerun-if-env-changed=DYNASOAR_GPU_ARCH");
        let arch = self.resolve_arch()?;
        // The model's attributes first: a missing one is named before anything is installed
        // or compiled.
        let manifest = self.crate_dir.join("Cargo.toml");
        let crate_name = read_package_name(&manifest)?;
        let root = self.crate_dir.join(read_lib_path(&manifest)?);
        check_crate_attributes(&root)?;
        ensure_toolchain(|msg| self.directive(format_args!("warning={msg}")))?;
        let variant = self.variant(&crate_name);
        let target_dir = self.target_dir.clone().unwrap_or_else(|| default_target_dir(&variant));

        let mut cmd = clean_command("rustup");
        cmd.env(NESTED_ENV, &self.crate_dir)
            .args(["run", DEVICE_TOOLCHAIN, "cargo", "rustc"])
            .arg("--manifest-path")
            .arg(&manifest)
            // The library alone (a package may hold an app's binaries too).
            .args(["--lib", "--release", "--target", TARGET, "-Zbuild-std=core", "--crate-type", "cdylib"])
            .arg("--target-dir")
            .arg(&target_dir)
            // The overrides touch only this nested build's profile, never the host's.
            .args(["--config", "profile.release.panic=\"abort\""])
            .args(["--config", "profile.release.lto=\"fat\""])
            .args(["--config", "profile.release.codegen-units=1"])
            .args(["--config", "profile.release.opt-level=3"])
            .args(["--config", "profile.release.debug=false"]);
        let mut features = self.features.clone();
        if self.aos {
            // The comparison suite's crate, linked only into this build: the default build of
            // a model gets none of its kernels.
            features.push("dynasoar/baselines".to_string());
        }
        if !features.is_empty() {
            cmd.arg("--features").arg(features.join(","));
        }
        // For every crate of the build (the device crate decides the layout and emits the
        // entry points' waits), not just the model crate as arguments after `--` would be.
        let cfgs = device_cfgs(&arch, self.aos, self.bitmap_alloc);
        if !cfgs.is_empty() {
            let flags: Vec<String> = cfgs.iter().map(|c| format!("\"--cfg\", \"{c}\"")).collect();
            cmd.arg("--config").arg(format!("build.rustflags=[{}]", flags.join(", ")));
        }
        cmd.args(["--", "--emit=asm", "-C"])
            .arg(format!("target-cpu={arch}"))
            // Nothing is left to link after `--emit=asm` of a fat-LTO cdylib; the target's
            // default linker (llvm-bitcode-linker) is not shipped with the toolchain.
            .args(["-C", "linker=true"]);

        let output = run(&mut cmd).map_err(BuildError::NoRustup)?;
        if !output.status.success() {
            return Err(BuildError::CompileFailed { output: combined(&output) });
        }

        let deps = target_dir.join(TARGET).join("release").join("deps");
        let stem = crate_name.replace('-', "_");
        let ptx = deps.join(format!("{stem}.s"));
        if !ptx.is_file() {
            return Err(BuildError::MissingOutput(ptx));
        }
        // In place, so that every user of the device build's PTX (the GPU bundle's cubins
        // included) sees the same text; cargo may keep the file from an earlier build, with or
        // without a cap.
        let text = std::fs::read_to_string(&ptx)
            .map_err(|e| BuildError::Io(format!("reading {}", ptx.display()), e))?;
        let capped = cap_registers(&text, |entry| self.register_cap(entry));
        if capped != text {
            std::fs::write(&ptx, capped)
                .map_err(|e| BuildError::Io(format!("writing {}", ptx.display()), e))?;
        }
        let sources = read_dep_info(&deps, &self.crate_dir);
        self.directive(format_args!("rerun-if-changed={}", manifest.display()));
        for src in &sources {
            self.directive(format_args!("rerun-if-changed={}", src.display()));
        }
        Ok(PtxOutput { ptx, arch, sources })
    }

    /// Build the PTX for `dynasoar::include_ptx!()`: [`embed_as`](Self::embed_as) with the
    /// name [`DEFAULT_PTX_NAME`].
    pub fn embed(&self) {
        self.embed_as(DEFAULT_PTX_NAME)
    }

    /// Build the PTX for `dynasoar::include_ptx!("<name>")`: copy it to `$OUT_DIR/<name>.ptx`
    /// and write `$OUT_DIR/<name>.ptx.rs`, the expression the macro includes. Does nothing in
    /// the build script's run for the GPU (see [`this_package`](Self::this_package)).
    ///
    /// A compile error of the model is reported once. Rather than fail the build script with
    /// the device build's report of errors that the host build of the same crate reports too
    /// (the model is compiled for the host after this build script in one package, and beside
    /// it in two crates), the builder keeps the report in `$OUT_DIR/<name>.ptx.log` and makes
    /// `<name>.ptx.rs` a `compile_error!` holding it. The
    /// host build of the model then reports its errors, and the app, which is compiled only
    /// if the model compiles for the host, reports the device build's errors at
    /// `include_ptx!` where the host build has none (code only the GPU build compiles). Other
    /// failures (no toolchain, a missing crate attribute) fail the build script.
    pub fn embed_as(&self, name: &str) {
        if self.is_nested() {
            return;
        }
        if let Err(err) = self.try_embed(name) {
            eprintln!("error: {err}");
            std::process::exit(1);
        }
    }

    fn try_embed(&self, name: &str) -> Result<(), BuildError> {
        let out_dir = env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
            BuildError::Io("OUT_DIR is not set".into(), std::io::ErrorKind::NotFound.into())
        })?;
        let ptx_dest = out_dir.join(format!("{name}.ptx"));
        let rs_dest = out_dir.join(format!("{name}.ptx.rs"));
        let log_dest = out_dir.join(format!("{name}.ptx.log"));
        let write = |path: &Path, text: &str| {
            std::fs::write(path, text).map_err(|e| BuildError::Io(format!("writing {}", path.display()), e))
        };
        match self.build() {
            Ok(out) => {
                std::fs::copy(&out.ptx, &ptx_dest).map_err(|e| {
                    BuildError::Io(format!("copying {} to {}", out.ptx.display(), ptx_dest.display()), e)
                })?;
                let _ = std::fs::remove_file(&log_dest);
                write(&rs_dest, &format!("include_str!({})\n", rust_string(&ptx_dest.to_string_lossy())))
            }
            Err(BuildError::CompileFailed { output }) => {
                let crate_name = read_package_name(&self.crate_dir.join("Cargo.toml"))?;
                let _ = std::fs::remove_file(&ptx_dest);
                write(&log_dest, &output)?;
                let report = format!(
                    "the device (PTX) build of `{crate_name}` failed with errors that the host build \
                     does not have (code that only the GPU build compiles, or a dependency that \
                     does not build for the GPU):\n{output}{}",
                    compile_hint(&output)
                );
                write(&rs_dest, &format!("compile_error!({})\n", rust_string(&report)))?;
                // Rebuild once any source of the model changes (the last good build's dep-info
                // names its dependencies too).
                let manifest = self.crate_dir.join("Cargo.toml");
                self.directive(format_args!("rerun-if-changed={}", manifest.display()));
                self.directive(format_args!("rerun-if-changed={}", self.crate_dir.join("src").display()));
                let target_dir =
                    self.target_dir.clone().unwrap_or_else(|| default_target_dir(&self.variant(&crate_name)));
                for src in
                    read_dep_info(&target_dir.join(TARGET).join("release").join("deps"), &self.crate_dir)
                {
                    self.directive(format_args!("rerun-if-changed={}", src.display()));
                }
                Ok(())
            }
            Err(err) => Err(err),
        }
    }

    /// Build and copy the PTX to `$OUT_DIR/<file_name>`, for `include_str!`. On failure print
    /// the error (rustc's own messages included) and exit, failing the build script. (A compile
    /// error of the model is then reported by the host build of the model crate too;
    /// [`embed_as`](Self::embed_as) reports it once.)
    pub fn build_or_exit(&self, file_name: &str) -> PathBuf {
        if self.is_nested() {
            return PathBuf::new();
        }
        let result = self.build().and_then(|out| {
            let out_dir = env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                BuildError::Io("OUT_DIR is not set".into(), std::io::ErrorKind::NotFound.into())
            })?;
            let dest = out_dir.join(file_name);
            std::fs::copy(&out.ptx, &dest).map_err(|e| {
                BuildError::Io(format!("copying {} to {}", out.ptx.display(), dest.display()), e)
            })?;
            Ok(dest)
        });
        match result {
            Ok(dest) => dest,
            Err(err) => {
                eprintln!("error: {err}");
                std::process::exit(1);
            }
        }
    }
}

/// `sm_XY` or `sm_XYa` with XY >= 70.
fn validate_arch(arch: &str) -> Result<(), ()> {
    let sm = sm_number(arch).ok_or(())?;
    if sm < MIN_SM { Err(()) } else { Ok(()) }
}

/// The number of `sm_XY` (or `sm_XYa`, `sm_XYZ`): `None` if `arch` is not of that form.
fn sm_number(arch: &str) -> Option<u32> {
    let digits = arch.strip_prefix("sm_")?;
    let digits = digits.strip_suffix('a').unwrap_or(digits);
    if digits.len() < 2 || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The first architecture with `griddepcontrol` (programmatic dependent launch).
const GRIDDEPCONTROL_SM: u32 = 90;

/// The `--cfg`s of a device build for `arch` (validated): the AOS store's and the BitmapAlloc
/// store's for those builds, and from sm_90 on `dynasoar_griddepcontrol`, which makes every
/// PTX entry point wait for the grids before it (`griddepcontrol.wait`), so that the host may
/// launch its kernels as programmatic dependent launches.
fn device_cfgs(arch: &str, aos: bool, bitmap_alloc: bool) -> Vec<&'static str> {
    let mut cfgs = Vec::new();
    if aos || bitmap_alloc {
        cfgs.push("dynasoar_aos");
    }
    if bitmap_alloc {
        cfgs.push("dynasoar_bitmap_alloc");
    }
    if sm_number(arch).is_some_and(|sm| sm >= GRIDDEPCONTROL_SM) {
        cfgs.push("dynasoar_griddepcontrol");
    }
    cfgs
}

/// A command with the outer cargo build's environment removed: a nested
/// cargo that inherits `CARGO_*`, `RUSTFLAGS` or `RUSTUP_TOOLCHAIN` builds the wrong thing.
fn clean_command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let keep = matches!(key, "CARGO_HOME")
            || key.starts_with("CARGO_NET_")
            || key.starts_with("CARGO_HTTP_")
            || key.starts_with("CARGO_REGISTRIES_");
        let outer = key == "CARGO"
            || key.starts_with("CARGO_")
            || matches!(
                key,
                "RUSTUP_TOOLCHAIN"
                    | "RUSTFLAGS"
                    | "RUSTDOCFLAGS"
                    | "RUSTC"
                    | "RUSTDOC"
                    | "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "RUSTC_BOOTSTRAP"
                    | "OUT_DIR"
                    | "TARGET"
                    | "HOST"
                    | "PROFILE"
                    | "OPT_LEVEL"
                    | "DEBUG"
                    | "NUM_JOBS"
            );
        if outer && !keep {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn run(cmd: &mut Command) -> std::io::Result<Output> {
    cmd.output()
}

fn combined(output: &Output) -> String {
    let mut s = String::from_utf8_lossy(&output.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !stdout.trim().is_empty() {
        s.push('\n');
        s.push_str(&stdout);
    }
    s
}

/// Make sure the pinned nightly and its `rust-src` are installed, installing them if not.
fn ensure_toolchain(warn: impl Fn(&str)) -> Result<(), BuildError> {
    let sysroot = run(clean_command("rustup").args(["run", DEVICE_TOOLCHAIN, "rustc", "--print", "sysroot"]))
        .map_err(BuildError::NoRustup)?;
    let have_src = sysroot.status.success() && {
        let root = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
        root.join("lib/rustlib/src/rust/library/core/Cargo.toml").is_file()
    };
    if have_src {
        return Ok(());
    }
    let args = ["toolchain", "install", DEVICE_TOOLCHAIN, "--profile", "minimal", "--component", "rust-src"];
    let command = format!("rustup {}", args.join(" "));
    warn(&format!("dynasoar: installing the device toolchain for the PTX build: {command}"));
    let out = run(clean_command("rustup").args(args)).map_err(BuildError::NoRustup)?;
    if !out.status.success() {
        return Err(BuildError::InstallFailed { command, output: combined(&out) });
    }
    Ok(())
}

/// The `name` of `[package]` in a manifest (a tiny TOML read: `name = "..."` under `[package]`).
fn read_package_name(manifest: &Path) -> Result<String, BuildError> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| BuildError::Io(format!("reading {}", manifest.display()), e))?;
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if in_package
            && let Some(rest) = line.strip_prefix("name")
            && let Some(value) = rest.trim_start().strip_prefix('=')
        {
            return Ok(value.trim().trim_matches('"').to_string());
        }
    }
    Err(BuildError::Io(
        format!("no [package] name in {}", manifest.display()),
        std::io::ErrorKind::InvalidData.into(),
    ))
}

/// A hint for a failed device build's `output`, or nothing.
fn compile_hint(output: &str) -> &'static str {
    if output.contains("can't find crate for `std`") {
        "\nhint: a dependency of the model crate needs the standard library, which the GPU \
         lacks. An app's own dependencies go under \
         [target.'cfg(not(target_arch = \"nvptx64\"))'.dependencies] in its Cargo.toml."
    } else {
        ""
    }
}

/// `text` as a Rust string literal.
fn rust_string(text: &str) -> String {
    format!("{text:?}")
}

/// The path of the library's root in a manifest: `path` under `[lib]`, else `src/lib.rs`.
fn read_lib_path(manifest: &Path) -> Result<PathBuf, BuildError> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| BuildError::Io(format!("reading {}", manifest.display()), e))?;
    let mut in_lib = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_lib = line == "[lib]";
            continue;
        }
        if in_lib
            && let Some(rest) = line.strip_prefix("path")
            && let Some(value) = rest.trim_start().strip_prefix('=')
        {
            return Ok(PathBuf::from(value.trim().trim_matches('"')));
        }
    }
    Ok(PathBuf::from("src/lib.rs"))
}

/// Fails, naming the file and the lines to add, if the crate root `root` lacks a crate
/// attribute of [`REQUIRED_ATTRIBUTES`].
fn check_crate_attributes(root: &Path) -> Result<(), BuildError> {
    let text = std::fs::read_to_string(root)
        .map_err(|e| BuildError::Io(format!("reading the model crate's root {}", root.display()), e))?;
    let lines = missing_crate_attributes(&text);
    if lines.is_empty() {
        Ok(())
    } else {
        Err(BuildError::MissingAttributes { file: root.to_path_buf(), lines })
    }
}

/// The lines of [`REQUIRED_ATTRIBUTES`] whose attribute the crate root `text` lacks. An
/// attribute counts where an inner attribute (`#![...]`, whitespace and line comments aside)
/// names it: `#![no_std]` or `#![cfg_attr(not(test), no_std)]`; `feature(abi_ptx)` under a
/// `cfg_attr` that names `nvptx64`.
fn missing_crate_attributes(text: &str) -> Vec<&'static str> {
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .flat_map(|line| line.chars())
        .filter(|c| !c.is_whitespace())
        .collect();
    // The inner attributes, each up to its closing bracket.
    let mut attrs = Vec::new();
    let mut rest = code.as_str();
    while let Some(start) = rest.find("#![") {
        let body = &rest[start + 3..];
        let mut depth = 1usize;
        let end = body
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '[' | '(' => depth += 1,
                    ']' | ')' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map_or(body.len(), |(i, _)| i);
        attrs.push(&body[..end]);
        rest = &body[end..];
    }
    // A word of the attribute outside string literals.
    let has_word = |attr: &str, word: &str| {
        attr.split('"')
            .step_by(2)
            .flat_map(|part| part.split(|c: char| !(c.is_alphanumeric() || c == '_')))
            .any(|w| w == word)
    };
    REQUIRED_ATTRIBUTES
        .iter()
        .filter(|&&(_, word)| {
            !attrs.iter().any(|attr| {
                has_word(attr, word)
                    && (word != "abi_ptx" || (attr.starts_with("cfg_attr(") && attr.contains("\"nvptx64\"")))
            })
        })
        .map(|&(line, _)| line)
        .collect()
}

/// `<outer target dir>/dynasoar-ptx/<crate>`, found from `OUT_DIR`
/// (`<target>/<profile>/build/<pkg>/out`), else under the system's temp dir.
fn default_target_dir(crate_name: &str) -> PathBuf {
    let base = env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .and_then(|out| out.ancestors().nth(4).map(Path::to_path_buf))
        .unwrap_or_else(|| env::temp_dir().join("dynasoar"));
    base.join("dynasoar-ptx").join(crate_name)
}

/// Source files the device build read, from the dep-info (`.d`) files cargo wrote into `deps`
/// (one per crate: the model crate and each of its dependencies). Relative paths are relative to
/// the workspace root of `crate_dir`, which cargo runs rustc in. The toolchain's own sources and
/// the cargo registry are left out (they change only with the pinned toolchain or the lock
/// file), and so are files that no longer exist (stale dep-info of old builds; a missing file
/// would make cargo rerun the build script every time).
fn read_dep_info(deps: &Path, crate_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(deps) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "d")
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            out.extend(parse_dep_info(&text).into_iter().filter_map(|p| resolve(&p, crate_dir)));
        }
    }
    out.retain(|p| {
        let s = p.to_string_lossy();
        !s.contains("/.rustup/") && !s.contains("/registry/src/") && !s.contains("/lib/rustlib/")
    });
    out.sort();
    out.dedup();
    out
}

/// The prerequisites named in a make-style dep-info text.
fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((_, rhs)) = line.split_once(": ") else {
            continue;
        };
        let mut token = String::new();
        let mut chars = rhs.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    token.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !token.is_empty() {
                        out.push(PathBuf::from(std::mem::take(&mut token)));
                    }
                }
                c => token.push(c),
            }
        }
        if !token.is_empty() {
            out.push(PathBuf::from(token));
        }
    }
    out
}

/// An existing absolute path for `path`: itself if absolute, else joined to the first ancestor
/// of `crate_dir` where it exists.
fn resolve(path: &Path, crate_dir: &Path) -> Option<PathBuf> {
    if path.is_absolute() {
        return path.is_file().then(|| path.to_path_buf());
    }
    crate_dir.ancestors().map(|a| a.join(path)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_cap_goes_on_do_all_and_constructor_entries_once() {
        let ptx = ".visible .entry dynasoar_do__H__C__m(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
                   .visible .entry dynasoar_heap_enumerate(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
                   .visible .entry dynasoar_new__H__C__create(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
        let capped = cap_registers(ptx, |_| Some(80));
        assert_eq!(capped.matches(".maxnreg 80").count(), 2, "{capped}");
        assert!(capped.contains("dynasoar_do__H__C__m(\n\t.param .u64 p\n)\n.maxnreg 80\n{"), "{capped}");
        assert!(
            capped.contains("dynasoar_heap_enumerate(\n\t.param .u64 p\n)\n{"),
            "other kernels untouched"
        );
        assert_eq!(cap_registers(&capped, |_| Some(80)), capped, "idempotent");
        assert_eq!(cap_registers(&capped, |_| Some(64)).matches(".maxnreg 64").count(), 2);
        assert_eq!(cap_registers(&capped, |_| None), ptx, "a build without a cap removes it");
    }

    #[test]
    fn register_caps_follow_the_first_matching_pattern() {
        let ptx = ".visible .entry dynasoar_do__Ocean__C__m(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
                   .visible .entry dynasoar_do__Life__C__m(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
                   .visible .entry dynasoar_new__Other__C__create(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
        let b =
            PtxBuilder::new("/nowhere").max_registers_for("__Ocean__", 80).max_registers_for("__Life__", 64);
        let capped = cap_registers(ptx, |e| b.register_cap(e));
        assert!(capped.contains("Ocean__C__m(\n\t.param .u64 p\n)\n.maxnreg 80\n{"), "{capped}");
        assert!(capped.contains("Life__C__m(\n\t.param .u64 p\n)\n.maxnreg 64\n{"), "{capped}");
        assert!(capped.contains("Other__C__create(\n\t.param .u64 p\n)\n{"), "no cap, no default: {capped}");
        let b = b.max_registers(96);
        let capped = cap_registers(ptx, |e| b.register_cap(e));
        assert!(
            capped.contains("Other__C__create(\n\t.param .u64 p\n)\n.maxnreg 96\n{"),
            "default: {capped}"
        );
        assert_eq!(capped.matches(".maxnreg").count(), 3);
    }

    #[test]
    fn entry_points_wait_for_prior_grids_from_sm_90_on() {
        assert_eq!(device_cfgs("sm_70", false, false), Vec::<&str>::new());
        assert_eq!(device_cfgs("sm_89", true, false), ["dynasoar_aos"]);
        assert_eq!(device_cfgs("sm_90", false, false), ["dynasoar_griddepcontrol"]);
        assert_eq!(device_cfgs("sm_90a", false, false), ["dynasoar_griddepcontrol"]);
        assert_eq!(
            device_cfgs("sm_120a", false, true),
            ["dynasoar_aos", "dynasoar_bitmap_alloc", "dynasoar_griddepcontrol"]
        );
    }

    #[test]
    fn arch_strings_are_validated() {
        for ok in ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_90a", "sm_100", "sm_120a"] {
            assert!(validate_arch(ok).is_ok(), "{ok}");
        }
        for bad in ["", "sm70", "sm_", "sm_60", "compute_90", "sm_9", "sm_90b", "SM_90", "sm_1000", "sm_x0"] {
            assert!(validate_arch(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_arch_error_names_the_accepted_form() {
        let err = PtxBuilder::new(".").arch("ampere").quiet().resolve_arch().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`ampere`") && msg.contains("sm_XY") && msg.contains("sm_90"), "{msg}");
    }

    const NO_STD: &str = "#![no_std]";
    const ABI_PTX: &str = "#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]";

    #[test]
    fn crate_attributes_are_found_in_any_layout() {
        let both = "//! A model.\n#![no_std]\n#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]\n\npub mod a;\n";
        assert!(missing_crate_attributes(both).is_empty());
        let spread = "#![cfg_attr(\n    target_arch = \"nvptx64\",\n    feature(abi_ptx, core_intrinsics)\n)]\n#![ no_std ]\n";
        assert!(missing_crate_attributes(spread).is_empty());
        let conditional =
            "#![cfg_attr(not(test), no_std)]\n#![cfg_attr(target_arch=\"nvptx64\",feature(abi_ptx))]";
        assert!(missing_crate_attributes(conditional).is_empty());
    }

    #[test]
    fn missing_crate_attributes_are_named_with_the_line_to_add() {
        assert_eq!(missing_crate_attributes("pub mod a;\n"), vec![NO_STD, ABI_PTX]);
        assert_eq!(missing_crate_attributes("#![no_std]\npub mod a;\n"), vec![ABI_PTX]);
        // What rustc suggests breaks the stable host build: it does not count.
        assert_eq!(missing_crate_attributes("#![no_std]\n#![feature(abi_ptx)]\n"), vec![ABI_PTX]);
        // Comments and other attributes do not count.
        let commented =
            "// #![no_std]\n#![cfg_attr(target_arch = \"x86_64\", feature(abi_ptx))]\n#![doc = \"no_std\"]\n";
        assert_eq!(missing_crate_attributes(commented), vec![NO_STD, ABI_PTX]);
        assert_eq!(
            missing_crate_attributes(
                "#![allow(no_std_x)]\n#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]"
            ),
            vec![NO_STD]
        );
    }

    #[test]
    fn a_model_without_its_attributes_fails_before_compiling_naming_file_and_line() {
        let dir = env::temp_dir().join(format!("dynasoar-attrs-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"m\"\n").unwrap();
        std::fs::write(dir.join("src/lib.rs"), "#![no_std]\npub fn f() {}\n").unwrap();
        // No toolchain is run: the check comes first (an arch is given so that the environment
        // does not matter, and the toolchain check would come after it).
        let err = PtxBuilder::new(&dir).quiet().build().unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, BuildError::MissingAttributes { .. }), "{msg}");
        assert!(msg.contains(&dir.join("src/lib.rs").display().to_string()), "{msg}");
        assert!(msg.contains(&format!("\n    {ABI_PTX}\n")), "{msg}");
        assert!(!msg.contains("    #![no_std]"), "{msg}");
        // `[lib] path` names the root.
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"m\"\n[lib]\npath = \"model.rs\"\n")
            .unwrap();
        std::fs::write(dir.join("model.rs"), "pub fn f() {}\n").unwrap();
        let msg = PtxBuilder::new(&dir).quiet().build().unwrap_err().to_string();
        assert!(msg.contains(&dir.join("model.rs").display().to_string()), "{msg}");
        assert!(msg.contains(&format!("\n    {NO_STD}\n    {ABI_PTX}\n")), "{msg}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rust_string_round_trips_quotes_backslashes_and_newlines() {
        assert_eq!(rust_string("a \"b\"\\c\nd"), "\"a \\\"b\\\"\\\\c\\nd\"");
    }

    #[test]
    fn dep_info_lists_existing_project_sources_only() {
        let dir = env::temp_dir().join(format!("dynasoar-depinfo-{}", std::process::id()));
        let deps = dir.join("target/deps");
        let krate = dir.join("ws/models");
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::create_dir_all(krate.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("ws/dev ice/src")).unwrap();
        std::fs::write(krate.join("src/lib.rs"), "").unwrap();
        std::fs::write(dir.join("ws/dev ice/src/a.rs"), "").unwrap();
        std::fs::write(
            deps.join("models.d"),
            "/t/models.s: models/src/lib.rs dev\\ ice/src/a.rs /root/.rustup/toolchains/x/lib/rustlib/src/core.rs gone.rs\n\nmodels/src/lib.rs:\n",
        )
        .unwrap();
        std::fs::write(deps.join("other.txt"), "x: y").unwrap();
        let got = read_dep_info(&deps, &krate);
        assert_eq!(got, vec![dir.join("ws/dev ice/src/a.rs"), krate.join("src/lib.rs")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
