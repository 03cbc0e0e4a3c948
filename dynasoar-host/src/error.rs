//! The host's typed errors. Messages say what happened and what to do about it.

use std::fmt;

/// Result of host-side dynasoar operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong on the host side.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `Backend::Cuda` was requested but libcuda could not be loaded.
    #[error(
        "no CUDA driver found (libcuda.so could not be loaded); install the NVIDIA driver, or run \
         on the CPU with Backend::Cpu (--backend cpu) or let Backend::Auto pick"
    )]
    NoCudaDriver,

    /// `Backend::Cuda` was requested but the driver reports no usable device.
    #[error(
        "no CUDA device available ({reason}); run on the CPU with Backend::Cpu (--backend cpu) or \
         let Backend::Auto pick"
    )]
    NoCudaDevice { reason: String },

    /// A CUDA driver call failed outside of a kernel launch.
    #[error("CUDA driver call failed while {action}: {message}")]
    Driver { action: String, message: String },

    /// The embedded PTX module could not be loaded.
    #[error(
        "could not load the PTX module: {message}; rebuild the app (the PTX is compiled by its \
         build script) and check that DYNASOAR_GPU_ARCH does not exceed this GPU's architecture"
    )]
    ModuleLoad { message: String },

    /// A kernel token names an entry point that the loaded PTX does not have.
    #[error(
        "kernel `{kernel}` is not in the loaded PTX module; the PTX and the host code come from \
         different builds: rebuild the app"
    )]
    MissingKernel { kernel: String },

    /// A kernel could not be launched, or failed while running (a trap, a fault, a device-side
    /// panic).
    #[error("kernel {kernels} failed: {message}")]
    KernelFailed { kernels: KernelNames, message: String },

    /// An earlier kernel failure left the device context unusable.
    #[error(
        "the device context is unusable since kernel {kernels} failed ({message}); create a new \
         Executor/Runtime in a new process"
    )]
    ContextUnusable { kernels: KernelNames, message: String },

    /// A buffer or launch argument is out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The heap cannot be laid out as asked.
    #[error("cannot create a heap: {0}")]
    HeapConfig(String),

    /// Device code asked for more objects than the heap holds. The heap stays consistent: the
    /// failed allocations returned no object and everything else is intact.
    #[error(
        "the device heap ran out of memory in kernel {kernels}: {failed} allocation(s) of {classes} got no object (heap of {heap_bytes} bytes, {blocks} blocks); give the runtime a larger heap, e.g. RuntimeBuilder::heap_bytes({suggested_bytes}) (or size it from object counts with RuntimeBuilder::heap_for)"
    )]
    OutOfMemory {
        kernels: KernelNames,
        failed: u32,
        heap_bytes: u64,
        blocks: u64,
        /// The classes whose allocations failed, by name.
        classes: String,
        /// A heap size to try: room for the failed objects, and at least twice this heap.
        suggested_bytes: u64,
    },

    /// A general-purpose allocator (`dynasoar::baselines::malloc`) could not serve requests or was misused.
    /// Its region stays consistent: failed mallocs returned null and nothing else changed.
    #[error("allocator `{allocator}` in kernel {kernels}: {what}")]
    Malloc { allocator: &'static str, kernels: KernelNames, what: String },

    /// Device code freed an object that was not allocated, or used a null handle.
    #[error("kernel {kernels} {what}")]
    InvalidFree { kernels: KernelNames, what: &'static str },

    /// A `#[parallel(creates(..), frees(..))]` method created or freed an object of a class
    /// its declaration leaves out. Nothing was created or freed there (`make_new` returned
    /// `None`), so the heap is consistent, but the run did not do what the model says.
    #[error(
        "kernel {kernels} created or freed an object of a class that its method's \
         #[parallel(creates(..), frees(..))] leaves out (nothing was created or freed there); add \
         the class to the declaration, or remove the declaration to allow every class (a method \
         with #[parallel(lanes = ..)] may create and free nothing: do that in another method)"
    )]
    UndeclaredChange { kernels: KernelNames },

    /// A thread of a `parallel_do` over a class freed an object of that class other than its
    /// own `this`, which the paper's rules forbid (the object may not have been visited yet).
    /// Checked on the CPU backend (GPU kernels do not check it); the object was not freed.
    #[error(
        "kernel {kernels} freed an object of the class its parallel_do iterates other than the \
         method's own `this` (nothing was freed there): only `this` may be freed, since the other \
         object may not have been visited yet; mark the object and let it free itself in a later \
         parallel_do, or free it from a method of another class"
    )]
    FreedIterated { kernels: KernelNames },

    /// A method's kernel was launched by hand with a grid that `parallel_do` would not use (its
    /// thread count must be a multiple of the class's objects per block). It did nothing.
    #[error(
        "kernel {kernels} was launched with a grid whose thread count is not a multiple of its \
         class's objects per block, and visited no object; launch methods with \
         Runtime::parallel_do, which sizes their grids"
    )]
    BadGrid { kernels: KernelNames },

    /// A kernel that walks a class's blocks (`device_do`, `device_reduce`) ran on a heap whose
    /// block size or objects per block differ from those of the allocator it was compiled for.
    /// It visited no object.
    #[error(
        "kernel {kernels} walked a heap planned for another allocator (its block size or \
         objects per block differ from the kernel's allocator's) and visited no object; launch \
         a model's kernels through the Runtime of the allocator its classes belong to"
    )]
    WrongHeap { kernels: KernelNames },

    /// An allocation's warp-coalesced hand-out skipped a lane although its leader served the
    /// whole group: an allocator fault (the heap had memory), seen once on an H200 with a
    /// compiler that took a warp's active mask for uniform. The lane got no object.
    #[error(
        "kernel {kernels}: an allocation skipped a lane of its warp's hand-out, which got no \
         object although the heap had memory (an allocator fault, please report it with the GPU \
         and driver); DYNASOAR_ALLOCATOR_VARIANT=nocoal, where every lane allocates alone, \
         avoids the hand-out"
    )]
    SkippedLane { kernels: KernelNames },

    /// An operation that needs the device's work to have run (a synchronisation, a copy, a
    /// read, a timing marker) was asked for while launches were being captured into a step
    /// graph ([`Runtime::capture`](crate::Runtime::capture)).
    #[error(
        "{operation} while capturing a step graph: a captured step may only launch kernels \
         (parallel_do, parallel_new, device_do); do reads, writes, syncs and timing before or \
         after Runtime::capture, not inside it"
    )]
    NotCapturable { operation: String },
}

/// The kernel(s) that may have caused a failure: the one launched, or, when launches are not
/// synchronised one by one, those launched since the last synchronisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelNames(pub Vec<&'static str>);

impl fmt::Display for KernelNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.as_slice() {
            [] => write!(f, "(none)"),
            [one] => write!(f, "`{one}`"),
            many => {
                write!(
                    f,
                    "`{}` (or one of the kernels launched before it since the last sync: ",
                    many[many.len() - 1]
                )?;
                for (i, k) in many[..many.len() - 1].iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "`{k}`")?;
                }
                write!(f, ")")
            }
        }
    }
}

impl Error {
    pub(crate) fn driver(action: impl Into<String>, err: impl fmt::Display) -> Self {
        Error::Driver { action: action.into(), message: err.to_string() }
    }
}
