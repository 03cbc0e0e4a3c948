//! Every general-purpose allocator under storms, through the same kernels on the CPU backend
//! (always) and the GPU (when present): many threads allocate blocks of random sizes at once and
//! fill them; every block must keep its contents, be aligned, lie in the pool and overlap no
//! other; everything freed must be reusable; running out of memory must be reported, not hang.

use dynasoar::baselines::host::MallocHeap;
use dynasoar::baselines::malloc::kernels::{MALLOC_STORM, MallocStormParams, storm_step};
use dynasoar::baselines::malloc::{FreeSupport, MallocKind, check::check_allocations};
use dynasoar::host::{Backend, Error, Executor, ExecutorOptions, Grid, ModuleCompile};
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

/// Rounds of allocate-check-free with no failure allowed, then (for allocators that reuse
/// memory) more rounds than the pool could serve without reuse.
fn storm(exec: &Executor, kind: MallocKind, threads: u32) {
    let shape = Shape::for_kind(kind, threads, 16, 256);
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
        return; // CUDA's heap is sized once per process; the storm covers it.
    }
    let shape = Shape::for_kind(kind, threads, 32, 256);
    let demand = shape.entries() as u64 * (shape.min_size + shape.max_size) as u64 / 2;
    let bytes = (demand / 4).max(kind.caps().min_region_bytes);
    let heap = MallocHeap::new(exec, kind, bytes, 0).unwrap();
    let (checked, failed) = storm_round(exec, &heap, shape, 1, true);
    assert!(failed > 0, "{kind}: {checked} allocations from a pool of a quarter of the demand");
    match heap.take_errors(exec, &["storm"]).unwrap_err() {
        Error::Malloc { what, .. } => assert!(what.contains("out of memory"), "{kind}: {what}"),
        e => panic!("{kind}: expected an allocator error, got {e}"),
    }
    if kind.caps().free == FreeSupport::Reuses {
        let small = Shape { threads: threads / 8, per_thread: 4, ..shape };
        let (_, failed) = storm_round(exec, &heap, small, 2, true);
        assert_eq!(failed, 0, "{kind}: after out of memory and freeing everything, small requests fail");
        heap.take_errors(exec, &["storm"]).unwrap();
    }
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
                        storm(&exec, MallocKind::$kind, 1 << 16);
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
