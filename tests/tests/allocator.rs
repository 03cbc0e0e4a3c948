//! The lock-free allocator under storms, on the CPU backend (always) and the GPU (when present):
//! random allocation and freeing of four classes (two with runs), checked after quiescence against every
//! invariant; then out of memory, which must be reported and leave the heap consistent.

use dynasoar::host::{Backend, BackendKind, Error, Executor, ExecutorOptions};
use dynasoar_examples::MODELS_PTX;
use dynasoar_examples::storm::Storm;
use dynasoar_models::storm::STORM_ROUND;
use dynasoar_tests::gpu_executor;

/// A CPU executor with more threads than cores, so emulated GPU threads really race.
fn cpu_storm_executor() -> Executor {
    Executor::new(
        MODELS_PTX,
        ExecutorOptions { backend: Backend::Cpu, cpu_threads: Some(8), quiet: true, ..Default::default() },
    )
    .unwrap()
}

fn storm(exec: &Executor, heap_bytes: u64, threads: u32, rounds: u32, check_every: u32) {
    let storm = Storm::new(exec, heap_bytes, threads, 0xC0FFEE).unwrap();
    let (mut peak, mut reserved) = (0, 0);
    for round in 0..rounds {
        // Alternate phases of growth and shrinkage, as in Wa-Tor's waves.
        let (alloc, free) = if (round / 4) % 2 == 0 { (200, 40) } else { (40, 160) };
        storm.round(exec, round, alloc, free).unwrap();
        if (round + 1) % check_every == 0 {
            storm.take_errors(exec).unwrap();
            let check = storm.check(exec).unwrap_or_else(|e| panic!("after round {round}: {e}"));
            peak = peak.max(check.live_objects);
            reserved = reserved.max(check.reserved_slots);
        }
    }
    assert!(reserved > 0, "the classes with runs should have slots in reserve between rounds");
    assert!(peak > threads as u64 / 8, "the storm should hold many objects at its peak, had {peak}");
    storm.free_all(exec).unwrap();
    storm.take_errors(exec).unwrap();
    let end = storm.check(exec).unwrap();
    assert_eq!(end.live_objects, 0);
    // Every block is free again, but those that a give-back stranded (empty, kept by their
    // class: the heap's check counts them against the allocator's own count).
    assert_eq!(end.allocated_blocks, end.empty_blocks, "a fully freed heap has every other block free again");
    assert_eq!(end.free_blocks + end.empty_blocks, storm.heap.config().num_blocks);
    assert_no_coalescing_misses(exec, &storm);
    println!("storm on {}: {threads} threads, {rounds} rounds, peak {peak} objects", exec.description());
}

fn out_of_memory(exec: &Executor, heap_bytes: u64, threads: u32) {
    let storm = Storm::new(exec, heap_bytes, threads, 7).unwrap();
    // Everyone allocates: far more objects than the heap holds.
    storm.round(exec, 0, 256, 0).unwrap();
    let err = storm.take_errors(exec).unwrap_err();
    let config = *storm.heap.config();
    // The runtime's own error: it names the kernel that ran out, how many allocations failed
    // and the heap's size (as laid out: at most the bytes asked for), and says what to do.
    let Error::OutOfMemory {
        ref kernels,
        failed,
        heap_bytes: reported_bytes,
        blocks,
        ref classes,
        suggested_bytes,
    } = err
    else {
        panic!("expected out of memory, got {err}")
    };
    assert!(failed > 0, "{err}");
    assert!(kernels.0.contains(&STORM_ROUND.name()), "{err}: the storm's kernel is not named");
    assert_eq!((reported_bytes, blocks), (config.total_bytes, config.num_blocks), "{err}");
    assert!(reported_bytes <= heap_bytes && reported_bytes > heap_bytes / 2, "{err}: asked for {heap_bytes}");
    // The classes that failed are named (storm classes only), and the size suggested holds more.
    assert!(!classes.is_empty() && classes != "(unknown)", "{err}");
    for name in classes.split(", ") {
        assert!(dynasoar_models::storm::CLASSES.iter().any(|&(c, _)| c == name), "{name} in {err}");
    }
    assert!(suggested_bytes >= 2 * reported_bytes, "{err}");
    let text = err.to_string();
    for part in [
        format!("`{}`", STORM_ROUND.name()),
        format!("{failed} allocation(s) of {classes} got no object"),
        format!("heap of {reported_bytes} bytes, {blocks} blocks"),
        "give the runtime a larger heap".to_string(),
    ] {
        assert!(text.contains(&part), "the message lacks {part:?}: {text}");
    }
    let full = storm.check(exec).unwrap();
    assert!(full.live_objects > 0 && full.live_objects < threads as u64);
    assert_eq!(full.live_objects + failed as u64, threads as u64, "every thread got an object or a failure");
    // Blocks run out before slots do only through fragmentation: nearly all blocks are in use.
    assert!(full.free_blocks <= 3, "{} blocks still free after out of memory", full.free_blocks);
    // The heap is consistent and usable: free some, allocate again, free everything.
    storm.round(exec, 1, 0, 128).unwrap();
    storm.round(exec, 2, 256, 0).unwrap();
    let _ = storm.take_errors(exec);
    storm.check(exec).unwrap();
    storm.free_all(exec).unwrap();
    storm.take_errors(exec).unwrap();
    let end = storm.check(exec).unwrap();
    assert_eq!((end.live_objects, end.allocated_blocks), (0, end.empty_blocks));
    assert_no_coalescing_misses(exec, &storm);
}

/// No lane missed a warp-coalesced hand-out and had to allocate alone (`HeapStats::coalescing_misses`,
/// a guard against the H200 miscompilation described in docs/performance-log.md, "activemask
/// carries the lane's own bit"): it should not happen any more, and a retry hides it from every
/// other check. On the CPU backend warps have one lane, so there is nothing to miss and the
/// counter must stay 0 as well.
fn assert_no_coalescing_misses(exec: &Executor, storm: &Storm) {
    let misses = storm.heap.stats(exec).unwrap().coalescing_misses;
    let on = match exec.kind() {
        BackendKind::Cuda => "a GPU",
        BackendKind::Cpu => "the CPU (one-lane warps)",
    };
    assert_eq!(misses, 0, "{misses} lanes on {on} missed the coalesced hand-out ({})", exec.description());
}

#[test]
fn cpu_storm_keeps_every_invariant() {
    storm(&cpu_storm_executor(), 4 << 20, 20_000, 24, 6);
}

#[test]
fn cpu_out_of_memory_is_reported_and_recoverable() {
    out_of_memory(&cpu_storm_executor(), 256 << 10, 20_000);
}

#[test]
fn heap_too_small_for_one_block_is_an_error() {
    let exec = cpu_storm_executor();
    let err = Storm::new(&exec, 1000, 10, 1).err().expect("a 1000-byte heap holds no block");
    assert!(matches!(err, Error::HeapConfig(_)), "{err}");
    assert!(err.to_string().contains("at least"), "{err}");
}

#[test]
fn gpu_storm_keeps_every_invariant() {
    let Some(gpu) = gpu_executor("gpu_storm_keeps_every_invariant") else {
        return;
    };
    storm(&gpu, 256 << 20, 1 << 21, 24, 8);
}

#[test]
fn gpu_out_of_memory_is_reported_and_recoverable() {
    let Some(gpu) = gpu_executor("gpu_out_of_memory_is_reported_and_recoverable") else {
        return;
    };
    out_of_memory(&gpu, 8 << 20, 1 << 20);
}

/// A reduced storm for compute-sanitizer (memcheck) in the GPU bundle.
#[test]
fn gpu_sanitizer_storm() {
    let Some(gpu) = gpu_executor("gpu_sanitizer_storm") else {
        return;
    };
    storm(&gpu, 8 << 20, 1 << 14, 8, 4);
}
