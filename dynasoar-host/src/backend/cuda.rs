//! The CUDA backend: cudarc's driver API, libcuda loaded at run time.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaGraph, CudaModule, CudaSlice, CudaStream, DevicePtr,
    DeviceRepr, LaunchConfig, PushKernelArg,
};
use dynasoar_device::{Kernel, Plain};

use super::cuda_link::{self, LinkInput};
use super::{Grid, ModuleCompile};
use crate::error::{Error, Result};

/// Kernel parameters as the driver sees them: the bytes of one `#[repr(C)]` plain value, which
/// the PTX entry point declares as one `.param` aggregate of the same layout.
#[repr(transparent)]
struct RawParams<P>(P);
// SAFETY: `P: Plain` is `repr(C)` plain data without pointers into host memory.
unsafe impl<P: Plain> DeviceRepr for RawParams<P> {}

pub struct CudaExec {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// While capturing: the stream that records the launches (the legacy default stream
    /// cannot be captured). Nothing ever runs on it: replays run on `stream`.
    capturing: Mutex<Option<Arc<CudaStream>>>,
    /// Each entry point loaded so far, and whether it is launched as a programmatic dependent
    /// launch (in `dependent`): one look-up per launch.
    functions: Mutex<HashMap<&'static str, (CudaFunction, bool)>>,
    /// The entry points launched as programmatic dependent launches: those whose PTX waits
    /// for the grids before them first ([`entries_that_wait`]), on a GPU of sm_90 or later,
    /// unless `DYNASOAR_DEPENDENT_LAUNCH=0`. Empty otherwise. Read when an entry point is
    /// first loaded.
    dependent: HashSet<String>,
    /// CUDA events whose time was read, for reuse by markers.
    events: Mutex<Vec<CudaEvent>>,
    /// Resident blocks per multiprocessor, by kernel and block size.
    occupancy: Mutex<HashMap<(&'static str, u32), u32>>,
    description: String,
    resident_threads: usize,
    multiprocessors: usize,
}

/// Device memory: the allocation and its address.
pub struct DeviceMem {
    slice: CudaSlice<u8>,
    addr: u64,
    len: usize,
}

impl DeviceMem {
    pub fn addr(&self) -> u64 {
        self.addr
    }
}

impl CudaExec {
    /// A context on device `ordinal` with the module of `ptx`, compiled as `compile` says or
    /// loaded from a cubin in `cubin_dir` (see [`load_models`]).
    /// `dependent_launch`: launch the kernels that wait for the grids before them
    /// (`griddepcontrol.wait`, in every entry point of a model built for sm_90 or later) as
    /// programmatic dependent launches where the GPU has them.
    pub fn new(
        ptx: &str,
        ordinal: usize,
        compile: ModuleCompile,
        cubin_dir: Option<&Path>,
        dependent_launch: bool,
    ) -> Result<Self> {
        // cudarc panics on its first driver call when libcuda is missing: ask first.
        // SAFETY: only tries to open the library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoCudaDriver);
        }
        let count = CudaContext::device_count()
            .map_err(|e| Error::NoCudaDevice { reason: format!("the driver failed to start: {e}") })?;
        if count <= 0 {
            return Err(Error::NoCudaDevice { reason: "the driver reports 0 devices".into() });
        }
        if ordinal >= count as usize {
            return Err(Error::NoCudaDevice {
                reason: format!("device {ordinal} requested, the driver reports {count}"),
            });
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| Error::NoCudaDevice { reason: format!("creating a context failed: {e}") })?;
        // One stream, used in order: cudarc's per-buffer event tracking would only add
        // driver calls to every copy and launch.
        // SAFETY: no other stream of this context uses our buffers.
        unsafe { ctx.disable_event_tracking() };
        // The legacy default stream. It cannot be captured into a graph, so captures record on
        // a side stream (`begin_capture`) and replays run here. (Running everything on a stream
        // of our own instead made no difference beyond the noise at the apps' tiny sizes on an
        // H200: docs/results/2026-11-26-s4/launch-overhead-streams-ab.txt.)
        let stream = ctx.default_stream();
        let (major, minor) =
            ctx.compute_capability().map_err(|e| Error::driver("reading the compute capability", e))?;
        let module = load_models(&ctx, ptx, major, minor, compile, cubin_dir)?;

        let attr = |a: Attr| ctx.attribute(a).map_err(|e| Error::driver("reading device attributes", e));
        let sms = attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as usize;
        let per_sm = attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as usize;
        let name = ctx.name().map_err(|e| Error::driver("reading the device name", e))?;
        let dependent = if dependent_launch && major >= 9 { entries_that_wait(ptx) } else { HashSet::new() };
        Ok(CudaExec {
            description: format!(
                "{name} (sm_{major}{minor}, {sms} SMs{})",
                if dependent.is_empty() { "" } else { ", dependent launches" }
            ),
            resident_threads: sms * per_sm,
            multiprocessors: sms,
            ctx,
            stream,
            module,
            capturing: Mutex::new(None),
            functions: Mutex::new(HashMap::new()),
            dependent,
            events: Mutex::new(Vec::new()),
            occupancy: Mutex::new(HashMap::new()),
        })
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    pub fn resident_threads(&self) -> usize {
        self.resident_threads
    }

    pub fn multiprocessors(&self) -> usize {
        self.multiprocessors
    }

    /// Entry point `name`, and whether it is launched as a dependent launch.
    fn function(&self, name: &'static str) -> std::result::Result<(CudaFunction, bool), String> {
        let mut functions = self.functions.lock().unwrap();
        if let Some(loaded) = functions.get(name) {
            return Ok(loaded.clone());
        }
        let f = self
            .module
            .load_function(name)
            .map_err(|e| format!("{} (is the kernel in the PTX? rebuild the app)", e))?;
        let loaded = (f, self.dependent.contains(name));
        functions.insert(name, loaded.clone());
        Ok(loaded)
    }

    /// Blocks of `threads` of kernel `name` that fit on one multiprocessor at once.
    pub fn resident_blocks(&self, name: &'static str, threads: u32) -> std::result::Result<u32, String> {
        if let Some(&n) = self.occupancy.lock().unwrap().get(&(name, threads)) {
            return Ok(n);
        }
        let n = self
            .function(name)?
            .0
            .occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)
            .map_err(|e| format!("occupancy of `{name}`: {e}"))?;
        self.occupancy.lock().unwrap().insert((name, threads), n);
        Ok(n)
    }

    /// Queue a launch. `Err` carries the driver's message.
    pub fn launch<P: Plain>(
        &self,
        kernel: &Kernel<P>,
        grid: Grid,
        params: P,
    ) -> std::result::Result<(), String> {
        self.launch_on(&self.stream, kernel, grid, params)
    }

    /// Record a launch on the capture's side stream (between `begin_capture` and
    /// `end_capture`). `Err` carries the driver's message.
    pub fn record<P: Plain>(
        &self,
        kernel: &Kernel<P>,
        grid: Grid,
        params: P,
    ) -> std::result::Result<(), String> {
        let side = self.capturing.lock().unwrap().clone().ok_or("no capture was started")?;
        self.launch_on(&side, kernel, grid, params)
    }

    fn launch_on<P: Plain>(
        &self,
        stream: &Arc<CudaStream>,
        kernel: &Kernel<P>,
        grid: Grid,
        params: P,
    ) -> std::result::Result<(), String> {
        let (f, dependent) = self.function(kernel.name())?;
        let mut raw = RawParams(params);
        if dependent {
            return launch_dependent(stream, &f, grid, &mut raw);
        }
        let cfg = LaunchConfig {
            grid_dim: (grid.blocks, 1, 1),
            block_dim: (grid.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut builder = stream.launch_builder(&f);
        builder.arg(&raw);
        // SAFETY: the entry point takes exactly one parameter of `P`'s layout (generated
        // together with the kernel token), and `P` holds only plain data and device addresses.
        unsafe { builder.launch(cfg) }.map(|_| ()).map_err(|e| e.to_string())
    }

    pub fn synchronize(&self) -> std::result::Result<(), String> {
        self.stream.synchronize().map_err(|e| e.to_string())
    }

    /// Put the stream in capture mode: its launches are recorded into a graph, not run.
    /// Relaxed mode: the executor itself refuses what cannot be captured, and other driver
    /// calls of this thread (function and occupancy look-ups) stay allowed.
    pub fn begin_capture(&self) -> Result<()> {
        let side = self.ctx.new_stream().map_err(|e| Error::driver("creating a capture stream", e))?;
        side.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .map_err(|e| Error::driver("starting a stream capture", e))?;
        *self.capturing.lock().unwrap() = Some(side);
        Ok(())
    }

    /// End the capture: the recorded graph, instantiated (`None` if nothing was recorded).
    pub fn end_capture(&self) -> Result<Option<CudaGraph>> {
        let side = self.capturing.lock().unwrap().take().ok_or_else(|| Error::Driver {
            action: "ending a stream capture".into(),
            message: "no capture was started".into(),
        })?;
        side.end_capture(CUgraphInstantiate_flags(0)).map_err(|e| Error::driver("ending a stream capture", e))
    }

    /// Queue a captured graph on the stream (not on the side stream that recorded it).
    pub fn replay(&self, graph: &CudaGraph) -> std::result::Result<(), String> {
        // SAFETY: the graph's executable lives as long as `graph`, which outlives the call
        // (the driver copies what it needs at launch); the stream is this context's.
        unsafe { cudarc::driver::result::graph::launch(graph.cu_graph_exec(), self.stream.cu_stream()) }
            .map_err(|e| e.to_string())
    }

    pub fn alloc_zeroed(&self, bytes: usize) -> Result<DeviceMem> {
        // The driver refuses empty allocations; keep a byte so every buffer has an address.
        let slice = self
            .stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(|e| Error::driver(format!("allocating {bytes} bytes of device memory"), e))?;
        let addr = {
            let (ptr, _sync) = slice.device_ptr(&self.stream);
            ptr
        };
        Ok(DeviceMem { slice, addr, len: bytes })
    }

    pub fn write(&self, mem: &mut DeviceMem, at: usize, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut view = mem.slice.slice_mut(at..at + bytes.len());
        self.stream.memcpy_htod(bytes, &mut view).map_err(|e| Error::driver("copying to the device", e))?;
        self.stream.synchronize().map_err(|e| Error::driver("copying to the device", e))
    }

    /// Copy to device memory through a shared reference (the caller guarantees no kernel
    /// uses it).
    pub fn write_shared(&self, mem: &DeviceMem, at: usize, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: `at + len` lies within the allocation (checked by the caller), the source is
        // a host slice valid for the call, and the copy completes before returning.
        unsafe {
            cudarc::driver::result::memcpy_htod_async(mem.addr + at as u64, bytes, self.stream.cu_stream())
        }
        .map_err(|e| Error::driver("copying to the device", e))?;
        self.stream.synchronize().map_err(|e| Error::driver("copying to the device", e))
    }

    /// Zero device memory through a shared reference (the caller guarantees no kernel uses it).
    pub fn zero_shared(&self, mem: &DeviceMem) -> Result<()> {
        // SAFETY: the whole allocation, which lives as long as `mem`; the memset is queued on
        // our only stream and completes before returning.
        unsafe {
            cudarc::driver::result::memset_d8_async(mem.addr, 0, mem.slice.len(), self.stream.cu_stream())
        }
        .map_err(|e| Error::driver("zeroing device memory", e))?;
        self.stream.synchronize().map_err(|e| Error::driver("zeroing device memory", e))
    }

    pub fn read(&self, mem: &DeviceMem, at: usize, out: &mut [u8]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        debug_assert!(at + out.len() <= mem.len);
        let view = mem.slice.slice(at..at + out.len());
        self.stream.memcpy_dtoh(&view, out).map_err(|e| Error::driver("copying from the device", e))?;
        self.stream.synchronize().map_err(|e| Error::driver("copying from the device", e))
    }

    pub fn copy(&self, src: &DeviceMem, dst: &mut DeviceMem) -> Result<()> {
        if src.len == 0 {
            return Ok(());
        }
        self.stream
            .memcpy_dtod(&src.slice, &mut dst.slice)
            .map_err(|e| Error::driver("copying on the device", e))
    }

    /// Record an event (with timing) on the stream, reusing a recycled one if there is one.
    pub fn record_event(&self) -> Result<CudaEvent> {
        let recycled = self.events.lock().unwrap().pop();
        let event = match recycled {
            Some(event) => event,
            None => self
                .ctx
                .new_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| Error::driver("creating an event", e))?,
        };
        event.record(&self.stream).map_err(|e| Error::driver("recording an event", e))?;
        Ok(event)
    }

    /// Keep an event whose time was read for the next [`record_event`](Self::record_event).
    pub fn recycle_event(&self, event: CudaEvent) {
        self.events.lock().unwrap().push(event);
    }

    pub fn elapsed(&self, start: &CudaEvent, end: &CudaEvent) -> Result<Duration> {
        let ms = start.elapsed_ms(end).map_err(|e| Error::driver("reading an event", e))?;
        Ok(Duration::from_secs_f64(ms as f64 / 1e3))
    }

    /// Make CUDA's device `malloc` heap at least `bytes` large. CUDA fixes it at the first
    /// kernel that uses `malloc` in the context; a later, larger request is an error that says so.
    pub fn set_malloc_heap(&self, bytes: usize) -> Result<()> {
        use cudarc::driver::sys::CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE as LIMIT;
        let current =
            self.ctx.get_limit(LIMIT).map_err(|e| Error::driver("reading CUDA's malloc heap size", e))?;
        if current >= bytes {
            return Ok(());
        }
        self.ctx.set_limit(LIMIT, bytes).map_err(|e| {
            Error::driver(
                format!(
                    "setting CUDA's malloc heap to {bytes} bytes (it is {current}; CUDA fixes it once a \
                     kernel has used malloc: create the largest CUDA-malloc heap first, or use a new process)"
                ),
                e,
            )
        })
    }
}

/// The module of the models' PTX, compiled as `compile` says (see [`cuda_link`] for why the
/// AOS build is compiled as relocatable code).
///
/// A cubin built ahead of time in `cubin_dir` ([`prebuilt_cubin`]) skips the compile: an
/// executable one is loaded, a relocatable one (`ptxas -c`) linked. One the driver refuses (e.g.
/// from a newer toolkit) is no loss: the PTX is compiled instead.
fn load_models(
    ctx: &Arc<CudaContext>,
    ptx: &str,
    major: i32,
    minor: i32,
    compile: ModuleCompile,
    cubin_dir: Option<&Path>,
) -> Result<Arc<CudaModule>> {
    let load =
        |image: Vec<u8>| ctx.load_module(cudarc::nvrtc::Ptx::from_binary(image)).map_err(|e| e.to_string());
    ctx.bind_to_thread().map_err(|e| Error::driver("making the context current", e))?;
    let from_ptx = || match compile {
        ModuleCompile::WholeProgram => {
            ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx)).map_err(|e| e.to_string())
        }
        ModuleCompile::Relocatable => cuda_link::link(LinkInput::Ptx(ptx)).and_then(load),
    };
    let module = match cubin_dir.and_then(|dir| prebuilt_cubin(dir, ptx, major, minor)) {
        Some(cubin) if cuda_link::is_relocatable(&cubin) => {
            cuda_link::link(LinkInput::RelocatableCubin(&cubin)).and_then(load).or_else(|_| from_ptx())
        }
        Some(cubin) => load(cubin).or_else(|_| from_ptx()),
        None => from_ptx(),
    };
    module.map_err(|message| Error::ModuleLoad { message })
}

/// A cubin of `ptx` for this device (executable, or relocatable from `ptxas -c`), built ahead
/// of time into `dir` (`DYNASOAR_CUBIN_DIR`) as
/// `<ptx_digest(ptx) in hex>.sm_<major><minor>.cubin` (`scripts/gpu-bundle.sh` does this with
/// ptxas).
fn prebuilt_cubin(dir: &Path, ptx: &str, major: i32, minor: i32) -> Option<Vec<u8>> {
    let name = format!("{:016x}.sm_{major}{minor}.cubin", ptx_digest(ptx));
    std::fs::read(dir.join(name)).ok()
}

/// Queue `f` on `stream` as a programmatic dependent launch (`cuLaunchKernelEx` with
/// programmatic stream serialization): the driver may start readying it before the kernel
/// before it on the stream has finished, and `f`'s threads wait for that kernel's completion
/// and writes in their first instruction (`griddepcontrol.wait`). Only for entry points that
/// do so ([`entries_that_wait`]): in one that does not, the kernel could read what the one
/// before it has not written yet.
fn launch_dependent<P: Plain>(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    grid: Grid,
    params: &mut RawParams<P>,
) -> std::result::Result<(), String> {
    use cudarc::driver::sys;
    stream.context().bind_to_thread().map_err(|e| e.to_string())?;
    let mut value = sys::CUlaunchAttributeValue { pad: [0; 64] };
    value.programmaticStreamSerializationAllowed = 1;
    let mut attribute = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    };
    let config = sys::CUlaunchConfig {
        gridDimX: grid.blocks,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: grid.threads,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: stream.cu_stream(),
        attrs: &mut attribute,
        numAttrs: 1,
    };
    let mut args = [params as *mut RawParams<P> as *mut std::ffi::c_void];
    // SAFETY: `config` and the attribute it points to live across the call; the entry point
    // takes exactly one parameter of `P`'s layout (see `launch_on`), passed by the address of
    // `params`, which the driver copies at the call; the context is current on this thread.
    unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), args.as_mut_ptr(), std::ptr::null_mut()) }
        .result()
        .map_err(|e| e.to_string())
}

/// The names of the PTX entry points of `ptx` whose body waits for the grids before them
/// (`griddepcontrol.wait`): every entry point of a model built for sm_90 or later (the
/// `#[kernel]`, do-all and gather entry points call `arch::wait_for_prior_grids` first), none
/// of one built for an earlier GPU.
fn entries_that_wait(ptx: &str) -> HashSet<String> {
    let mut waiting = HashSet::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        rest = &rest[at + ".entry ".len()..];
        let name_end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
        let name = &rest[..name_end];
        // The body ends at the first line that is only `}`.
        let body_end = rest.find("\n}").unwrap_or(rest.len());
        if rest[..body_end].contains("griddepcontrol.wait") {
            waiting.insert(name.to_string());
        }
        rest = &rest[body_end..];
    }
    waiting
}

/// 64-bit FNV-1a of the PTX text: names its prebuilt cubins (the bundle script computes the
/// same).
fn ptx_digest(ptx: &str) -> u64 {
    ptx.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    #[test]
    fn ptx_digest_is_fnv1a() {
        // Reference values of 64-bit FNV-1a.
        assert_eq!(super::ptx_digest(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::ptx_digest("a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn only_entries_whose_body_waits_are_launched_as_dependent() {
        let ptx = "\
.version 7.8
.target sm_90
.func helper()
{
\tgriddepcontrol.wait;
}
\t// .globl\tfirst
.visible .entry first(
\t.param .align 8 .b8 first_param_0[16]
)
.maxnreg 64
{
\t.reg .b32 \t%r<4>;
\tgriddepcontrol.wait;
\tret;
}
\t// .globl\tsecond
.visible .entry second(
\t.param .align 8 .b8 second_param_0[16]
)
{
\tret;
}
.visible .entry third()
{
\tgriddepcontrol.wait;
\tret;
}
";
        let waiting = super::entries_that_wait(ptx);
        let mut names: Vec<&str> = waiting.iter().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["first", "third"]);
        assert!(super::entries_that_wait(".version 7.0\n.target sm_70\n").is_empty());
    }
}
