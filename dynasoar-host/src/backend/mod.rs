//! Backends: where kernels run. One [`Executor`] API over CUDA and the CPU.

mod capture;
mod cpu;
mod cuda;
mod cuda_link;
mod pending;

use std::marker::PhantomData;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use dynasoar_device::{DevPtr, Kernel, Plain};

use crate::error::{Error, KernelNames, Result};
pub use crate::options::{Backend, ModuleCompile};
use crate::settings::Settings;
pub use capture::Recording;
use capture::{Capture, Replay};
use pending::PendingKernels;

impl Backend {
    /// The backend named by the `DYNASOAR_BACKEND` environment variable, if set (an error if
    /// it, or another `DYNASOAR_*` variable, has a value that [`Settings`] does not accept).
    pub fn from_env() -> Result<Option<Backend>> {
        Ok(Settings::from_env()?.backend)
    }
}

/// The backend an executor actually runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Cuda,
    Cpu,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Cpu => "cpu",
        }
    }
}

/// Emulated threads per worker thread in the CPU backend's grids of the runtime's kernels
/// ([`Executor::wave_grid`]: do-alls, gathers, constructors, enumerations).
///
/// The CPU backend runs the threads of an emulated block one after the other, each to the end
/// of its loop. A do-all thread keeps one slot and strides over the listed blocks by the grid's
/// threads / N (see `for_each_listed` in the device crate), so the threads of one block
/// position reuse each other's cache lines only if what one thread touches on its whole way
/// through the list stays in cache until the next one comes. With the full grid (256 threads
/// per worker), a thread of Wa-Tor's cell class at 2048 x 2048 (65,536 blocks of 64) visits
/// 16,384 blocks, a line of every field it reads in each: 1 MiB per field, the whole L2 of the
/// 2-core AMD EPYC of docs/results/2026-11-26-perf/cpu-backend.txt. There, on one thread,
/// 2,048 to 16,384 threads per worker ran Wa-Tor and the Game of Life at 2048 x 2048 faster
/// than 256 (medians of 3: 18.8-20.4 s against 26.0 s, 25.6-28.4 s against 40.9 s; the runs
/// vary by a third from one to the next). A thread with nothing to do still costs a call (about
/// 15 ns), which a launch over a few objects pays for all of them: a 16 x 16 Wa-Tor took 51 ms
/// for 200 steps with 256, 106 ms with 4,096 and 258 ms with 16,384. 4,096 is between.
const CPU_WAVE_THREADS: usize = 4096;

/// A one-dimensional launch: `blocks` thread blocks of `threads` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub blocks: u32,
    pub threads: u32,
}

impl Grid {
    pub const fn new(blocks: u32, threads: u32) -> Self {
        Grid { blocks, threads }
    }

    /// Enough blocks of `threads` threads for one thread per element.
    pub fn for_elements(elements: usize, threads: u32) -> Self {
        let blocks = elements.div_ceil(threads as usize).max(1);
        Grid { blocks: blocks.min(u32::MAX as usize) as u32, threads }
    }

    pub fn total_threads(self) -> usize {
        self.blocks as usize * self.threads as usize
    }
}

/// How to build an [`Executor`].
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    pub backend: Backend,
    /// CUDA device ordinal.
    pub device: usize,
    /// Threads of the CPU backend (default: all cores, or `DYNASOAR_CPU_THREADS`).
    pub cpu_threads: Option<usize>,
    /// Synchronise after every launch, so a failure names exactly its kernel (slower; also set
    /// by `DYNASOAR_SYNC_EACH_LAUNCH=1`).
    pub sync_each_launch: bool,
    /// Do not print which backend `Auto` chose.
    pub quiet: bool,
    /// How the CUDA driver compiles the PTX (the runtime picks relocatable for the AOS build).
    pub module_compile: ModuleCompile,
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        ExecutorOptions {
            backend: Backend::Auto,
            device: 0,
            cpu_threads: None,
            // A bad value is reported by `Executor::new`, which reads the settings too.
            sync_each_launch: Settings::from_env().is_ok_and(|s| s.sync_each_launch),
            quiet: false,
            module_compile: ModuleCompile::default(),
        }
    }
}

enum Imp {
    Cuda(Box<cuda::CudaExec>),
    Cpu(cpu::CpuExec),
}

/// Runs kernels of one PTX module on one backend, and owns the backend's context.
///
/// Launches are asynchronous on the GPU; [`Executor::synchronize`] waits for them and reports a
/// failure with the kernel(s) it may have come from. After a kernel failure the executor refuses
/// further work with [`Error::ContextUnusable`] (a CUDA context cannot recover from a trap).
pub struct Executor {
    imp: Imp,
    sync_each_launch: bool,
    /// The `DYNASOAR_*` settings, read when the executor was made.
    settings: Settings,
    /// The kernels launched since the last check, to name them in errors (the runtime's
    /// checks too).
    pending: Mutex<PendingKernels>,
    /// Set once a kernel failed: (kernels, message).
    failed: Mutex<Option<(KernelNames, String)>>,
    /// Operations queued so far that may change device memory (see
    /// [`device_writes`](Executor::device_writes)).
    writes: AtomicU64,
    /// What is being recorded while capturing ([`begin_capture`](Executor::begin_capture)).
    capture: Mutex<Option<Capture>>,
    /// Whether `capture` holds a capture: read on every launch without taking the lock.
    capturing: AtomicBool,
    /// Tells this executor's [`Recording`]s from others'.
    id: u64,
}

/// The next [`Executor`]'s id.
static NEXT_EXECUTOR_ID: AtomicU64 = AtomicU64::new(1);

impl Executor {
    /// An executor for `ptx` on `options.backend`.
    pub fn new(ptx: &str, options: ExecutorOptions) -> Result<Self> {
        let settings = Settings::from_env()?;
        let cpu_threads = options.cpu_threads.or(settings.cpu_threads);
        let compile = settings.jit.unwrap_or(options.module_compile);
        let cubin_dir = settings.cubin_dir.as_deref();
        let mut fallback_reason = None;
        let cuda = || cuda::CudaExec::new(ptx, options.device, compile, cubin_dir, settings.dependent_launch);
        let imp = match options.backend {
            Backend::Cuda => Imp::Cuda(Box::new(cuda()?)),
            Backend::Cpu => Imp::Cpu(cpu::CpuExec::new(cpu_threads)?),
            Backend::Auto => match cuda() {
                Ok(exec) => Imp::Cuda(Box::new(exec)),
                Err(Error::NoCudaDriver) => {
                    fallback_reason = Some("no CUDA driver: libcuda.so could not be loaded".to_string());
                    Imp::Cpu(cpu::CpuExec::new(cpu_threads)?)
                }
                Err(Error::NoCudaDevice { reason }) => {
                    fallback_reason = Some(format!("no CUDA device: {reason}"));
                    Imp::Cpu(cpu::CpuExec::new(cpu_threads)?)
                }
                Err(other) => return Err(other),
            },
        };
        let exec = Executor {
            imp,
            sync_each_launch: options.sync_each_launch,
            settings,
            pending: Mutex::new(PendingKernels::default()),
            failed: Mutex::new(None),
            writes: AtomicU64::new(0),
            capture: Mutex::new(None),
            capturing: AtomicBool::new(false),
            id: NEXT_EXECUTOR_ID.fetch_add(1, Ordering::Relaxed),
        };
        if options.backend == Backend::Auto && !options.quiet {
            match fallback_reason {
                Some(reason) => eprintln!("dynasoar: backend auto -> {} ({reason})", exec.description()),
                None => eprintln!("dynasoar: backend auto -> {}", exec.description()),
            }
        }
        Ok(exec)
    }

    /// An executor on `backend` with default options.
    pub fn with_backend(ptx: &str, backend: Backend) -> Result<Self> {
        Self::new(ptx, ExecutorOptions { backend, ..Default::default() })
    }

    pub fn kind(&self) -> BackendKind {
        match self.imp {
            Imp::Cuda(_) => BackendKind::Cuda,
            Imp::Cpu(_) => BackendKind::Cpu,
        }
    }

    /// The device in words, e.g. `cuda: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)`.
    pub fn description(&self) -> String {
        match &self.imp {
            Imp::Cuda(c) => format!("cuda: {}", c.description()),
            Imp::Cpu(c) => format!("cpu: {} threads", c.threads()),
        }
    }

    /// Threads that can be resident at once: the size of a grid that fills the machine.
    pub fn resident_threads(&self) -> usize {
        match &self.imp {
            Imp::Cuda(c) => c.resident_threads(),
            Imp::Cpu(c) => c.threads() * 256,
        }
    }

    /// Multiprocessors of the GPU; on the CPU backend, its worker threads.
    pub fn multiprocessors(&self) -> usize {
        match &self.imp {
            Imp::Cuda(c) => c.multiprocessors(),
            Imp::Cpu(c) => c.threads(),
        }
    }

    /// How many launches, writes and copies this executor has queued: an operation that may
    /// change device memory increments it. A caller that remembers the count after its own
    /// work can tell later whether anything else ran since (the runtime keeps a class's listing
    /// for the next `parallel_do` only if so).
    pub fn device_writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    fn count_write(&self) {
        self.writes.fetch_add(1, Ordering::Relaxed);
    }

    /// A grid that fills the machine, in blocks of `threads` (for grid-stride kernels).
    pub fn full_grid(&self, threads: u32) -> Grid {
        let blocks = self.resident_threads().div_ceil(threads as usize).max(1);
        Grid::new(blocks as u32, threads)
    }

    /// A grid of whole waves of `kernel` in blocks of `threads`, about as many threads as
    /// [`full_grid`](Self::full_grid). A wave is as many blocks as can be resident at once
    /// given the kernel's registers (the driver's occupancy calculator). A grid-stride kernel
    /// whose threads wait on memory runs a partial last wave with the machine mostly idle: with
    /// 39 registers a multiprocessor holds 1,536 threads, so the full grid of 2,048 took two
    /// waves, the second a third full. Measured on an H200: Wa-Tor's cell kernel took 76 us
    /// instead of 93 in one wave; kernels that allocate (110-121 registers, a wave of 512
    /// threads per multiprocessor) were slower in one wave than in the four of the full grid.
    /// On the CPU backend, `CPU_WAVE_THREADS` threads per worker thread.
    pub fn wave_grid<P: Plain>(&self, kernel: &Kernel<P>, threads: u32) -> Result<Grid> {
        match &self.imp {
            Imp::Cuda(c) => {
                let per_sm = self.resident_blocks(c, kernel, threads)?.max(1) as usize;
                let wave = per_sm * c.multiprocessors();
                let full = self.full_grid(threads).blocks as usize;
                let waves = ((full + wave / 2) / wave).max(1);
                Ok(Grid::new((waves * wave) as u32, threads))
            }
            Imp::Cpu(c) => {
                let blocks = (c.threads() * CPU_WAVE_THREADS).div_ceil(threads as usize).max(1);
                Ok(Grid::new(blocks as u32, threads))
            }
        }
    }

    /// Of `candidates` (threads per block, the preferred first), the one with which most
    /// threads of `kernel` are resident on a multiprocessor at once ([`most_resident`]); the
    /// first on the CPU backend, whose blocks are not resident. Called for every plain-loop
    /// launch: no allocation, and the occupancy figures are cached per kernel and size.
    pub(crate) fn most_resident_threads<P: Plain>(
        &self,
        kernel: &Kernel<P>,
        candidates: [u32; 2],
    ) -> Result<u32> {
        match &self.imp {
            Imp::Cuda(c) => {
                let mut resident = [(0, 0); 2];
                for (pair, threads) in resident.iter_mut().zip(candidates) {
                    *pair = (threads, self.resident_blocks(c, kernel, threads)?);
                }
                Ok(most_resident(&resident))
            }
            Imp::Cpu(_) => Ok(candidates[0]),
        }
    }

    /// Whether blocks of `threads` of `kernel` fill a multiprocessor to its thread limit (its
    /// registers do not cut occupancy). `false` on the CPU backend.
    pub fn fills_multiprocessors<P: Plain>(&self, kernel: &Kernel<P>, threads: u32) -> Result<bool> {
        match &self.imp {
            Imp::Cuda(c) => {
                let per_sm = self.resident_blocks(c, kernel, threads)? as usize;
                Ok(per_sm * threads as usize >= c.resident_threads() / c.multiprocessors())
            }
            Imp::Cpu(_) => Ok(false),
        }
    }

    /// Blocks of `threads` of `kernel` resident on one multiprocessor at once.
    fn resident_blocks<P: Plain>(&self, c: &cuda::CudaExec, kernel: &Kernel<P>, threads: u32) -> Result<u32> {
        c.resident_blocks(kernel.name(), threads)
            .map_err(|message| self.fail(KernelNames(vec![kernel.name()]), message))
    }

    fn check_usable(&self) -> Result<()> {
        match &*self.failed.lock().unwrap() {
            Some((kernels, message)) => {
                Err(Error::ContextUnusable { kernels: kernels.clone(), message: message.clone() })
            }
            None => Ok(()),
        }
    }

    fn fail(&self, kernels: KernelNames, message: String) -> Error {
        *self.failed.lock().unwrap() = Some((kernels.clone(), message.clone()));
        Error::KernelFailed { kernels, message }
    }

    /// Launch `kernel` on `grid` with `params`.
    ///
    /// On the GPU this returns once the launch is queued; a failure while the kernel runs is
    /// reported by the next [`synchronize`](Self::synchronize) (or right here with
    /// `sync_each_launch`). On the CPU the kernel has finished when this returns.
    pub fn launch<P: Plain>(&self, kernel: &Kernel<P>, grid: Grid, params: P) -> Result<()> {
        self.check_usable()?;
        if grid.blocks == 0 || grid.threads == 0 || grid.threads > 1024 {
            return Err(Error::InvalidArgument(format!(
                "launch of `{}` with {} blocks of {} threads: need at least one block and 1..=1024 \
                 threads per block",
                kernel.name(),
                grid.blocks,
                grid.threads
            )));
        }
        if self.capturing()
            && let Some(capture) = &mut *self.capture.lock().unwrap()
        {
            // Recorded, not run: the GPU's side stream records it; the CPU backend keeps it. It
            // counts as a write: the runtime's listings must see that it will have run.
            self.count_write();
            capture.kernels.push(kernel.name());
            return match &self.imp {
                Imp::Cuda(c) => c.record(kernel, grid, params).map_err(|message| Error::Driver {
                    action: format!("recording a launch of `{}` into a step graph", kernel.name()),
                    message,
                }),
                Imp::Cpu(_) => {
                    capture.cpu.push(capture::cpu_launch(kernel, grid, params));
                    Ok(())
                }
            };
        }
        self.count_write();
        self.pending.lock().unwrap().launched(kernel.name());
        let launched = match &self.imp {
            Imp::Cuda(c) => c.launch(kernel, grid, params),
            Imp::Cpu(c) => c.launch(kernel, grid, params),
        };
        if let Err(message) = launched {
            return Err(self.fail(KernelNames(vec![kernel.name()]), message));
        }
        if self.sync_each_launch { self.synchronize() } else { Ok(()) }
    }

    /// Whether launches are being recorded ([`begin_capture`](Self::begin_capture)).
    pub fn capturing(&self) -> bool {
        self.capturing.load(Ordering::Relaxed)
    }

    /// [`Error::NotCapturable`] for `operation` while capturing.
    fn refuse_while_capturing(&self, operation: &str) -> Result<()> {
        if self.capturing() {
            return Err(Error::NotCapturable { operation: operation.to_string() });
        }
        Ok(())
    }

    /// Record launches instead of running them, until [`end_capture`](Self::end_capture)
    /// (see [`Recording`]). Waits for queued work first. Until then, anything that needs the
    /// device's work to have run (a synchronisation, a read, a write, a copy, a marker) fails
    /// with [`Error::NotCapturable`].
    pub fn begin_capture(&self) -> Result<()> {
        self.refuse_while_capturing("starting another capture")?;
        self.synchronize()?;
        if let Imp::Cuda(c) = &self.imp {
            c.begin_capture()?;
        }
        *self.capture.lock().unwrap() = Some(Capture::default());
        self.capturing.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Stop recording: the launches since [`begin_capture`](Self::begin_capture), ready to
    /// [`replay`](Self::replay). None of them has run.
    pub fn end_capture(&self) -> Result<Recording> {
        let capture =
            self.capture.lock().unwrap().take().ok_or_else(|| {
                Error::InvalidArgument("Executor::end_capture without a begin_capture".into())
            })?;
        self.capturing.store(false, Ordering::Relaxed);
        let replay = match &self.imp {
            Imp::Cuda(c) => Replay::Cuda(c.end_capture()?),
            Imp::Cpu(_) => Replay::Cpu(capture.cpu),
        };
        Ok(Recording { replay, kernels: capture.kernels, executor: self.id })
    }

    /// Queue every launch of `recording` (made by this executor), in order, as one operation.
    /// Like [`launch`](Self::launch), a failure while the kernels run is reported by the next
    /// [`synchronize`](Self::synchronize); on the CPU the launches have finished on return.
    pub fn replay(&self, recording: &Recording) -> Result<()> {
        self.check_usable()?;
        self.refuse_while_capturing("replaying a step graph")?;
        if recording.executor != self.id {
            return Err(Error::InvalidArgument(
                "a step graph replayed on another executor or runtime than the one that captured it; \
                 capture it on this one"
                    .into(),
            ));
        }
        if recording.kernels.is_empty() {
            return Ok(());
        }
        self.count_write();
        {
            let mut pending = self.pending.lock().unwrap();
            for kernel in &recording.kernels {
                pending.launched(kernel);
            }
        }
        let replayed = match (&self.imp, &recording.replay) {
            (Imp::Cuda(c), Replay::Cuda(Some(graph))) => c.replay(graph),
            (Imp::Cpu(c), Replay::Cpu(launches)) => launches.iter().try_for_each(|launch| launch(c)),
            _ => Ok(()),
        };
        if let Err(message) = replayed {
            return Err(self.fail(KernelNames(recording.kernels.clone()), message));
        }
        if self.sync_each_launch { self.synchronize() } else { Ok(()) }
    }

    /// Wait for all launched work; report a failure with the kernel(s) it may have come from.
    pub fn synchronize(&self) -> Result<()> {
        self.check_usable()?;
        self.refuse_while_capturing("waiting for the device (a sync, a read or a write)")?;
        let result = match &self.imp {
            Imp::Cuda(c) => c.synchronize(),
            Imp::Cpu(_) => Ok(()),
        };
        let kernels = self.pending.lock().unwrap().take_since_sync();
        result.map_err(|message| self.fail(KernelNames(kernels), message))
    }

    /// The runtime launched `kernels` (for `parallel_do` or `parallel_new`): the next
    /// [`take_for_check`](Self::take_for_check) names them (see [`PendingKernels`]).
    pub(crate) fn note_for_check(&self, kernels: &[&'static str]) {
        self.pending.lock().unwrap().note_for_check(kernels);
    }

    /// The kernels the runtime launched since its last error check, for this one to name.
    pub(crate) fn take_for_check(&self) -> Vec<&'static str> {
        self.pending.lock().unwrap().take_for_check()
    }

    /// The kernel launched on this executor whose [`kernel_tag`](dynasoar_device::kernel_tag)
    /// is `tag` (what device code records with the first error it raises).
    pub(crate) fn tagged_kernel(&self, tag: u32) -> Option<&'static str> {
        self.pending.lock().unwrap().tagged(tag)
    }

    /// Whether every launch is synchronised ([`ExecutorOptions::sync_each_launch`]).
    pub fn syncs_each_launch(&self) -> bool {
        self.sync_each_launch
    }

    /// The `DYNASOAR_*` settings, read from the environment when the executor was made.
    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    /// A zero-filled buffer of `len` elements.
    pub fn alloc_zeroed<T: Plain>(&self, len: usize) -> Result<Buffer<T>> {
        self.check_usable()?;
        self.refuse_while_capturing("allocating a buffer")?;
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::InvalidArgument(format!("buffer of {len} elements overflows")))?;
        let mem = match &self.imp {
            Imp::Cuda(c) => BufMem::Cuda(c.alloc_zeroed(bytes)?),
            Imp::Cpu(_) => BufMem::Host(cpu::HostMem::zeroed(bytes)?),
        };
        Ok(Buffer { mem, len, _marker: PhantomData })
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Plain>(&self, data: &[T]) -> Result<Buffer<T>> {
        let mut buf = self.alloc_zeroed(data.len())?;
        self.write(&mut buf, 0, data)?;
        Ok(buf)
    }

    /// Copy `data` into `buf` starting at element `offset` (waits for queued kernels first).
    pub fn write<T: Plain>(&self, buf: &mut Buffer<T>, offset: usize, data: &[T]) -> Result<()> {
        self.check_range(buf, offset, data.len())?;
        self.synchronize()?;
        self.count_write();
        let bytes = as_bytes(data);
        let at = offset * std::mem::size_of::<T>();
        match &mut buf.mem {
            BufMem::Cuda(m) => self.cuda()?.write(m, at, bytes),
            BufMem::Host(m) => {
                m.as_mut_slice()[at..at + bytes.len()].copy_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Copy `bytes` into a buffer shared with device code, at byte `offset`. Waits for queued
    /// kernels first, so no kernel can be using the buffer; for setting up device-side
    /// structures (like a heap's header) without exclusive access to their buffer.
    pub fn write_bytes<T: Plain>(&self, buf: &Buffer<T>, offset: usize, bytes: &[u8]) -> Result<()> {
        let size = buf.len() * std::mem::size_of::<T>();
        if offset.checked_add(bytes.len()).is_none_or(|end| end > size) {
            return Err(Error::InvalidArgument(format!(
                "bytes {offset}..+{} of a {size}-byte buffer",
                bytes.len()
            )));
        }
        self.synchronize()?;
        self.count_write();
        match &buf.mem {
            BufMem::Cuda(m) => self.cuda()?.write_shared(m, offset, bytes),
            BufMem::Host(m) => {
                // SAFETY: in range (checked above) and no kernel runs (synchronised above; CPU
                // launches complete before returning).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr(),
                        (m.addr() as usize + offset) as *mut u8,
                        bytes.len(),
                    )
                };
                Ok(())
            }
        }
    }

    /// Zero a whole buffer shared with device code (waits for queued kernels first).
    pub fn zero<T: Plain>(&self, buf: &Buffer<T>) -> Result<()> {
        self.synchronize()?;
        self.count_write();
        match &buf.mem {
            BufMem::Cuda(m) => self.cuda()?.zero_shared(m),
            BufMem::Host(m) => {
                // SAFETY: the buffer's own bytes, and no kernel runs (synchronised above).
                unsafe { std::ptr::write_bytes(m.addr() as usize as *mut u8, 0, m.as_slice().len()) };
                Ok(())
            }
        }
    }

    /// Copy `len` elements of `buf` from element `offset` to the host (waits for queued kernels).
    pub fn read<T: Plain>(&self, buf: &Buffer<T>, offset: usize, len: usize) -> Result<Vec<T>> {
        self.check_range(buf, offset, len)?;
        self.synchronize()?;
        let mut out: Vec<T> = Vec::with_capacity(len);
        let size = std::mem::size_of::<T>();
        // SAFETY: the spare capacity holds `len * size` bytes; `T: Plain` is valid for any bytes
        // a kernel can have written (plain data), and the copy below initialises all of them
        // before `set_len`.
        let dst = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, len * size) };
        match &buf.mem {
            BufMem::Cuda(m) => self.cuda()?.read(m, offset * size, dst)?,
            BufMem::Host(m) => dst.copy_from_slice(&m.as_slice()[offset * size..(offset + len) * size]),
        }
        // SAFETY: all `len` elements were initialised by the copy.
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// The whole buffer, on the host.
    pub fn read_all<T: Plain>(&self, buf: &Buffer<T>) -> Result<Vec<T>> {
        self.read(buf, 0, buf.len())
    }

    /// Copy all of `src` into `dst` on the device (queued like a kernel).
    pub fn copy<T: Plain>(&self, src: &Buffer<T>, dst: &mut Buffer<T>) -> Result<()> {
        self.check_usable()?;
        self.refuse_while_capturing("copying a buffer")?;
        if src.len() != dst.len() {
            return Err(Error::InvalidArgument(format!(
                "copy between buffers of {} and {} elements",
                src.len(),
                dst.len()
            )));
        }
        self.count_write();
        match (&src.mem, &mut dst.mem) {
            (BufMem::Cuda(s), BufMem::Cuda(d)) => self.cuda()?.copy(s, d),
            (BufMem::Host(s), BufMem::Host(d)) => {
                d.as_mut_slice().copy_from_slice(s.as_slice());
                Ok(())
            }
            _ => Err(Error::InvalidArgument("buffers of different executors".into())),
        }
    }

    /// Give a marker back once its time was read, so the next [`marker`](Self::marker) reuses
    /// its CUDA event instead of creating one (event creation costs the host microseconds per
    /// launch when every launch is timed).
    pub fn recycle(&self, marker: Marker) {
        if let (Imp::Cuda(c), MarkerImp::Cuda(event)) = (&self.imp, marker.0) {
            c.recycle_event(event);
        }
    }

    /// A point in the executor's stream of work, for timing what is queued between two markers
    /// without waiting for it now.
    pub fn marker(&self) -> Result<Marker> {
        self.refuse_while_capturing("timing (a marker)")?;
        match &self.imp {
            Imp::Cuda(c) => Ok(Marker(MarkerImp::Cuda(c.record_event()?))),
            Imp::Cpu(_) => Ok(Marker(MarkerImp::Cpu(std::time::Instant::now()))),
        }
    }

    /// Device time between two markers (waits for the later one).
    pub fn elapsed(&self, from: &Marker, to: &Marker) -> Result<Duration> {
        match (&self.imp, &from.0, &to.0) {
            (Imp::Cuda(c), MarkerImp::Cuda(a), MarkerImp::Cuda(b)) => c.elapsed(a, b),
            (_, MarkerImp::Cpu(a), MarkerImp::Cpu(b)) => Ok(b.saturating_duration_since(*a)),
            _ => Err(Error::InvalidArgument("markers of different executors".into())),
        }
    }

    /// Device time between two markers if the GPU has passed the later one, `None` if not yet
    /// (does not wait).
    pub fn elapsed_if_reached(&self, from: &Marker, to: &Marker) -> Result<Option<Duration>> {
        match (&self.imp, &from.0, &to.0) {
            (Imp::Cuda(c), MarkerImp::Cuda(a), MarkerImp::Cuda(b)) => {
                if b.is_complete() {
                    c.elapsed(a, b).map(Some)
                } else {
                    Ok(None)
                }
            }
            _ => self.elapsed(from, to).map(Some),
        }
    }

    /// Run `f` and measure the device time it takes: CUDA events around it on the GPU (after
    /// the work it queues has finished), wall-clock time on the CPU.
    pub fn time<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<(R, Duration)> {
        self.synchronize()?;
        match &self.imp {
            Imp::Cuda(c) => {
                let start = c.record_event()?;
                let r = f()?;
                let end = c.record_event()?;
                self.synchronize()?;
                Ok((r, c.elapsed(&start, &end)?))
            }
            Imp::Cpu(_) => {
                let t = std::time::Instant::now();
                let r = f()?;
                Ok((r, t.elapsed()))
            }
        }
    }

    /// Make CUDA's own device-side `malloc` heap at least `bytes` large (for comparisons with
    /// it). CUDA allows growing it only before the first kernel that uses `malloc`. The CPU
    /// backend has no such heap.
    pub fn set_device_malloc_heap(&self, bytes: usize) -> Result<()> {
        self.check_usable()?;
        match &self.imp {
            Imp::Cuda(c) => c.set_malloc_heap(bytes),
            Imp::Cpu(_) => {
                Err(Error::InvalidArgument("CUDA's device malloc heap exists only on the GPU".into()))
            }
        }
    }

    fn cuda(&self) -> Result<&cuda::CudaExec> {
        match &self.imp {
            Imp::Cuda(c) => Ok(c),
            Imp::Cpu(_) => Err(Error::InvalidArgument("a CUDA buffer on a CPU executor".into())),
        }
    }

    fn check_range<T>(&self, buf: &Buffer<T>, offset: usize, len: usize) -> Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > buf.len()) {
            return Err(Error::InvalidArgument(format!(
                "elements {offset}..{} of a buffer of {}",
                offset.saturating_add(len),
                buf.len()
            )));
        }
        Ok(())
    }
}

fn as_bytes<T: Plain>(data: &[T]) -> &[u8] {
    // SAFETY: plain data has no padding-sensitive invariants for reading as bytes in our uses
    // (copies to device memory); the slice covers exactly `size_of_val(data)` bytes.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

/// A point in an executor's work (see [`Executor::marker`]).
pub struct Marker(MarkerImp);

enum MarkerImp {
    Cuda(cudarc::driver::CudaEvent),
    Cpu(std::time::Instant),
}

enum BufMem {
    Cuda(cuda::DeviceMem),
    Host(cpu::HostMem),
}

/// An array of `T` in the executor's device memory (host memory on the CPU backend).
pub struct Buffer<T> {
    mem: BufMem,
    len: usize,
    _marker: PhantomData<T>,
}

impl<T> Buffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The buffer's address, to pass to kernels.
    pub fn ptr(&self) -> DevPtr<T> {
        match &self.mem {
            BufMem::Cuda(m) => DevPtr::from_addr(m.addr()),
            BufMem::Host(m) => DevPtr::from_addr(m.addr()),
        }
    }
}

impl<T: dynasoar_device::AtomicValue> Buffer<T> {
    /// The buffer as a [`DeviceArray`](dynasoar_device::DeviceArray) for kernels and methods:
    /// every element accessed atomically and bounds-checked on the device.
    ///
    /// The array is valid while the buffer lives: keep the buffer until the kernels that use
    /// the array have finished (`Runtime::sync`; CPU launches finish before returning).
    pub fn device_array(&self) -> dynasoar_device::DeviceArray<T> {
        // SAFETY: the buffer holds `len` elements of `T` for as long as it lives (see above);
        // device code reaches them only through the array's atomic accessors.
        unsafe { dynasoar_device::DeviceArray::from_raw(self.ptr(), self.len as u64) }
    }
}

impl<T> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} x {}, {:?})", self.len, std::any::type_name::<T>(), self.ptr())
    }
}

/// Of `(threads per block, blocks resident on a multiprocessor)` pairs, the thread count with
/// the most resident threads, the first of equals. Registers are allocated per warp but blocks
/// are resident whole, so smaller blocks can hold more warps: a kernel of 72 registers keeps
/// 28 warps a multiprocessor in blocks of 4 warps and 24 in blocks of 8 (on Hopper). The
/// callers pass at least one pair.
pub(crate) fn most_resident(candidates: &[(u32, u32)]) -> u32 {
    let mut best = candidates[0];
    for &(threads, blocks) in &candidates[1..] {
        if threads * blocks > best.0 * best.1 {
            best = (threads, blocks);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::most_resident;

    #[test]
    fn smaller_blocks_are_chosen_only_where_more_threads_reside() {
        // 72 registers on Hopper: 28 warps fit, so 3 blocks of 256 threads or 7 of 128.
        assert_eq!(most_resident(&[(256, 3), (128, 7)]), 128);
        // 80 registers: 25 warps fit, 3 blocks of 256 or 6 of 128, the same threads: the first.
        assert_eq!(most_resident(&[(256, 3), (128, 6)]), 256);
        // Short kernels fill the multiprocessor with either.
        assert_eq!(most_resident(&[(256, 8), (128, 16)]), 256);
        // A class of 42 objects a block: 252 or 126 threads.
        assert_eq!(most_resident(&[(252, 2), (126, 5)]), 126);
        assert_eq!(most_resident(&[(256, 1)]), 256);
    }
}
