//! Every general-purpose allocator under storms, through the same kernels on the CPU backend
//! (always) and the GPU (when present): many threads allocate blocks of random sizes at once and
//! fill them; every block must keep its contents, be aligned, lie in the pool and overlap no
//! other; everything freed must be reusable; running out of memory must be reported, not hang.

use dynasoar::baselines::host::MallocHeap;
use dynasoar::baselines::malloc::bitmap::SlotPool;
use dynasoar::baselines::malloc::kernels::{MALLOC_STORM, MallocStormParams, storm_step};
use dynasoar::baselines::malloc::{FreeSupport, HEADER_BYTES, MallocKind, check::check_allocations};
use dynasoar::host::{Backend, BackendKind, Error, Executor, ExecutorOptions, Grid, ModuleCompile};
use dynasoar_examples::MODELS_AOS_PTX;
use dynasoar_tests::gpu_executor_on;

/// A CPU executor with more threads than cores, so emulated GPU threads really race.
fn cpu() -> Executor {
    Executor::new(
        MODELS_AOS_PTX,
        ExecutorOptions { backend: Backend::Cpu, cpu_threads: Some(8), quiet: true, ..Default::default() },
    )
    .unwrap()
}

/// A storm's shape.
#[derive(Clone, Copy, Debug)]
struct Shape {
    threads: u32,
    per_thread: u32,
    min_size: u32,
    max_size: u32,
}

impl Shape {
    fn for_kind(kind: MallocKind, threads: u32, per_thread: u32, max_size: u32) -> Self {
        Shape { threads, per_thread, min_size: 4, max_size: max_size.min(kind.caps().max_size) }
    }

    fn entries(&self) -> usize {
        (self.threads * self.per_thread) as usize
    }
}

/// One allocate-check round; returns (allocations checked, failed mallocs).
fn storm_round(exec: &Executor, heap: &MallocHeap, shape: Shape, seed: u64, free: bool) -> (usize, u32) {
    let out = exec.alloc_zeroed::<u64>(2 * shape.entries()).unwrap();
    let counters = exec.alloc_zeroed::<u32>(2).unwrap();
    let params = |step| MallocStormParams {
        region: heap.ptr(),
        out: out.ptr(),
        counters: counters.ptr(),
        threads: shape.threads,
        per_thread: shape.per_thread,
        min_size: shape.min_size,
        max_size: shape.max_size,
        seed,
        step,
        _pad: 0,
    };
    let grid = Grid::for_elements(shape.threads as usize, 128);
    exec.launch(&MALLOC_STORM, grid, params(storm_step::ALLOCATE)).unwrap();
    exec.launch(&MALLOC_STORM, grid, params(storm_step::CHECK)).unwrap();
    let words = exec.read_all(&out).unwrap();
    let [failed, corrupt] = exec.read_all(&counters).unwrap()[..] else { unreachable!() };
    let kind = heap.kind();
    assert_eq!(corrupt, 0, "{kind}: {corrupt} words of live blocks were overwritten");
    let entries: Vec<(u64, u64)> = words.chunks(2).map(|e| (e[0], e[1])).collect();
    let checked = if kind.caps().free == FreeSupport::Wraps {
        entries.iter().filter(|e| e.0 != 0).count()
    } else {
        check_allocations(&entries, kind.caps().align as u64, heap.bounds())
            .unwrap_or_else(|e| panic!("{kind} on {}: {e}", exec.description()))
    };
    assert_eq!(checked + failed as usize, shape.entries(), "{kind}: every malloc succeeded or was counted");
    if free {
        exec.launch(&MALLOC_STORM, grid, params(storm_step::FREE)).unwrap();
        exec.synchronize().unwrap();
    }
    (checked, failed)
}

/// The pool of a storm, in multiples of one round's demand.
const STORM_POOL: u64 = 8;
/// Rounds of a storm on an allocator that reuses memory: more demand in all than the pool holds.
/// (The slowest allocators, CUDA's own and the page-based Ouroboros, take minutes per storm on
/// an H200, so the margin over the pool is kept small.)
const REUSE_ROUNDS: u64 = STORM_POOL + 2;

/// Allocations per thread in a storm.
const STORM_PER_THREAD: u32 = 16;
/// Threads of a storm on the GPU.
const GPU_STORM_THREADS: u32 = 1 << 16;

/// Rounds of allocate-check-free with no failure allowed, then (for allocators that reuse
/// memory) more rounds than the pool could serve without reuse.
fn storm(exec: &Executor, kind: MallocKind, threads: u32) {
    let shape = Shape::for_kind(kind, threads, STORM_PER_THREAD, 256);
    let demand = shape.entries() as u64 * (shape.min_size + shape.max_size) as u64 / 2;
    let pool = (STORM_POOL * demand).max(kind.caps().min_region_bytes);
    let heap = MallocHeap::new(exec, kind, pool, 0).unwrap();
    let started = std::time::Instant::now();
    for round in 0..3 {
        let (_, failed) = storm_round(exec, &heap, shape, round, true);
        println!("{kind}: round {round} done at {:?}", started.elapsed());
        assert_eq!(
            failed, 0,
            "{kind}: {failed} mallocs failed in round {round} with a pool of {STORM_POOL}x the demand"
        );
        heap.take_errors(exec, &["storm"]).unwrap();
    }
    if kind.caps().free == FreeSupport::Reuses {
        // More rounds of the demand than the pool holds: only reuse makes this succeed.
        for round in 3..REUSE_ROUNDS {
            let (_, failed) = storm_round(exec, &heap, shape, round, true);
            println!("{kind}: round {round} done at {:?}", started.elapsed());
            assert_eq!(
                failed, 0,
                "{kind}: {failed} mallocs failed in round {round}: freed memory is not reused"
            );
        }
        heap.take_errors(exec, &["storm"]).unwrap();
    }
    println!(
        "{kind} on {}: storm of {threads} threads passed in {:?}",
        exec.description(),
        started.elapsed()
    );
}

/// Far more than the pool holds: failures are reported as an error, nothing hangs, and after
/// freeing everything the allocator serves requests again.
fn out_of_memory(exec: &Executor, kind: MallocKind, threads: u32) {
    if kind == MallocKind::System {
        return system_out_of_memory(exec, threads.min(1024));
    }
    let shape = Shape::for_kind(kind, threads, 32, 256);
    let demand = shape.entries() as u64 * (shape.min_size + shape.max_size) as u64 / 2;
    let bytes = (demand / 4).max(kind.caps().min_region_bytes);
    let heap = MallocHeap::new(exec, kind, bytes, 0).unwrap();
    let (checked, failed) = storm_round(exec, &heap, shape, 1, true);
    assert!(failed > 0, "{kind}: {checked} allocations from a pool of a quarter of the demand");
    match heap.take_errors(exec, &["storm"]).unwrap_err() {
        Error::Malloc { what, .. } => {
            assert!(what.contains("out of memory"), "{kind}: {what}");
            if kind == MallocKind::Bitmap {
                // BitmapAlloc counts its free slots: the round freed everything it got.
                let pool = SlotPool::plan(bytes - HEADER_BYTES, 0);
                let all =
                    format!("; {0} of its {0} slots of {1} bytes were free", pool.slots, pool.slot_bytes);
                assert!(pool.slots > 0 && what.contains(&all), "{kind}: {what} (expected `{all}`)");
            }
        }
        e => panic!("{kind}: expected an allocator error, got {e}"),
    }
    if kind.caps().free == FreeSupport::Reuses {
        let small = Shape { threads: threads / 8, per_thread: 4, ..shape };
        let (_, failed) = storm_round(exec, &heap, small, 2, true);
        assert_eq!(failed, 0, "{kind}: after out of memory and freeing everything, small requests fail");
        heap.take_errors(exec, &["storm"]).unwrap();
    }
}

/// Out of memory of CUDA's own allocator (`System`), whose heap is not the region, so a pool of
/// a quarter of the demand cannot be made as for the others:
///
/// - On the GPU it is CUDA's malloc heap, which `MallocHeap::new` sizes to at least the bytes
///   asked for and CUDA fixes for the whole process at the first kernel that uses `malloc` (here
///   the storm before this test, in the same process): it is the largest heap a test of this
///   binary asked for, a storm's pool (about 1 GiB, see [`largest_cuda_heap`]).
/// - On the CPU backend it is the C library's heap, bounded only by the process's address
///   space; this test limits that (`RLIMIT_AS`) in a child process running only this test, as
///   a limit in the test process would make the tests running beside it fail.
///
/// Either way every request is `u32::MAX` bytes (the largest `malloc` takes), more than the
/// heap can hold: each must fail and be reported as out of memory (and nothing hang), after
/// which the allocator serves small requests again.
fn system_out_of_memory(exec: &Executor, threads: u32) {
    match exec.kind() {
        BackendKind::Cpu if std::env::var_os(LIMITED_CHILD_VAR).is_none() => {
            return run_in_limited_child(SYSTEM_OOM_ON_THE_CPU);
        }
        BackendKind::Cpu => limit_address_space(),
        BackendKind::Cuda => assert!(
            largest_cuda_heap() < u32::MAX as u64,
            "a storm's CUDA heap of {} bytes can hold a request of u32::MAX bytes: this test must ask for more",
            largest_cuda_heap()
        ),
    }
    let heap = MallocHeap::new(exec, MallocKind::System, 1 << 20, 0).unwrap();
    let huge = Shape { threads, per_thread: 1, min_size: u32::MAX, max_size: u32::MAX };
    let (checked, failed) = storm_round(exec, &heap, huge, 1, true);
    assert_eq!((checked, failed), (0, threads), "requests of u32::MAX bytes on {}", exec.description());
    match heap.take_errors(exec, &["storm"]).unwrap_err() {
        Error::Malloc { allocator, what, .. } => {
            assert_eq!(allocator, MallocKind::System.name());
            let expected = format!("out of memory: {threads} malloc(s) returned null");
            assert!(what.contains(&expected), "{what}");
        }
        e => panic!("System: expected an allocator error, got {e}"),
    }
    let small = Shape::for_kind(MallocKind::System, threads, 4, 256);
    let (_, failed) = storm_round(exec, &heap, small, 2, true);
    assert_eq!(failed, 0, "System: small requests fail after out of memory");
    heap.take_errors(exec, &["storm"]).unwrap();
    println!(
        "System on {}: {threads} requests of u32::MAX bytes failed and were reported; small ones are served",
        exec.description()
    );
}

/// The largest CUDA heap a test of this binary asks for: the pool of a storm on the GPU (every
/// allocator that uses CUDA's heap sizes it like its region).
fn largest_cuda_heap() -> u64 {
    let shape = Shape::for_kind(MallocKind::System, GPU_STORM_THREADS, STORM_PER_THREAD, 256);
    STORM_POOL * shape.entries() as u64 * (shape.min_size + shape.max_size) as u64 / 2
}

/// The test that [`system_out_of_memory`] runs again in a child process on the CPU.
const SYSTEM_OOM_ON_THE_CPU: &str = "system::out_of_memory_on_the_cpu";
/// Set in that child: it limits its address space and runs the test itself.
const LIMITED_CHILD_VAR: &str = "DYNASOAR_TEST_LIMITED_CHILD";

/// Run `test` of this binary alone in a child process (with [`LIMITED_CHILD_VAR`] set) and
/// require it to pass within two minutes.
fn run_in_limited_child(test: &str) {
    use std::io::Read;
    let exe = std::env::current_exe().unwrap();
    let mut child = std::process::Command::new(exe)
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .env(LIMITED_CHILD_VAR, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let mut text = String::new();
            pipe.read_to_string(&mut text).map(|_| text).unwrap_or_default()
        })
    }
    let readers = [read_all(child.stdout.take().unwrap()), read_all(child.stderr.take().unwrap())];
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let [stdout, stderr] = readers.map(|r| r.join().unwrap());
    let Some(status) = status else { panic!("{test} hung in its child process:\n{stdout}\n{stderr}") };
    assert!(
        status.success() && stdout.contains("1 passed"),
        "{test} in a child process with a limited address space ({status}):\n{stdout}\n{stderr}"
    );
    // (The test harness prints the line after `test NAME ... `.)
    let limit =
        stdout.find("address space limited").and_then(|at| stdout[at..].lines().next()).unwrap_or("?");
    println!("{test} passed in a child process: {limit}");
}

/// Limit this process's address space to 2 GiB above what it maps now, so that no request of
/// `u32::MAX` bytes (4 GiB) can be served and all else still can (the executor's threads exist
/// already).
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
fn limit_address_space() {
    #[repr(C)]
    struct RLimit {
        current: u64,
        max: u64,
    }
    unsafe extern "C" {
        fn getrlimit(resource: i32, limit: *mut RLimit) -> i32;
        fn setrlimit(resource: i32, limit: *const RLimit) -> i32;
    }
    const RLIMIT_AS: i32 = 9;
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mapped_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmSize in /proc/self/status");
    let mut limit = RLimit { current: 0, max: 0 };
    // SAFETY: plain system calls on a struct of the kernel's layout (`struct rlimit`).
    unsafe {
        assert_eq!(getrlimit(RLIMIT_AS, &mut limit), 0);
        limit.current = (mapped_kib * 1024 + (2 << 30)).min(limit.max);
        assert_eq!(setrlimit(RLIMIT_AS, &limit), 0, "setrlimit(RLIMIT_AS)");
    }
    println!("address space limited to {} MiB ({} MiB mapped)", limit.current >> 20, mapped_kib >> 10);
}

#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
fn limit_address_space() {
    panic!("limiting the address space is implemented for Linux on x86-64 and AArch64 only");
}

macro_rules! kind_tests {
    ($($name:ident: $kind:ident,)*) => {
        $(
            mod $name {
                use super::*;

                #[test]
                fn storm_on_the_cpu() {
                    storm(&cpu(), MallocKind::$kind, 512);
                }

                #[test]
                fn out_of_memory_on_the_cpu() {
                    out_of_memory(&cpu(), MallocKind::$kind, 512);
                }

                #[test]
                fn storm_on_the_gpu() {
                    if let Some(exec) = gpu_executor_on(
                        concat!(stringify!($name), "::storm_on_the_gpu"),
                        MODELS_AOS_PTX,
                        ModuleCompile::Relocatable,
                    ) {
                        storm(&exec, MallocKind::$kind, GPU_STORM_THREADS);
                        out_of_memory(&exec, MallocKind::$kind, 1 << 14);
                    }
                }
            }
        )*

        #[test]
        fn every_kind_is_tested() {
            let tested = [$(MallocKind::$kind),*];
            for kind in MallocKind::ALL {
                assert!(tested.contains(kind), "no storm test for {kind}");
            }
        }
    };
}

kind_tests! {
    system: System,
    atomic: Atomic,
    aw: AtomicWrap,
    bitmap: Bitmap,
    scatter: Scatter,
    halloc: Halloc,
    xmalloc: XMalloc,
    fdg: Fdg,
    circular: Circular,
    circular_fused: CircularFused,
    circular_multi: CircularMulti,
    circular_fused_multi: CircularFusedMulti,
    buddy: Buddy,
    ouro_s_p: OuroPageStatic,
    ouro_va_p: OuroPageArray,
    ouro_vl_p: OuroPageLinked,
    ouro_s_c: OuroChunkStatic,
    ouro_va_c: OuroChunkArray,
    ouro_vl_c: OuroChunkLinked,
    kma: Kma,
    bulk: Bulk,
}
