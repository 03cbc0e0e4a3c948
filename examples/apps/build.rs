//! Compiles the model crate to PTX with the pinned nightly (see `dynasoar_build`): the
//! build for DynaSOAr's heap, the AOS build for general-purpose allocators, and the
//! BitmapAlloc build (BitmapAlloc with one allocation bitmap per class), for
//! `dynasoar::include_ptx!` (which reports a model's compile error once).
fn main() {
    // A cap of 80 registers on the do-all kernels of Wa-Tor and the Game of Life: measured on
    // an H200 (docs/benchmarks.md, "Register caps"), Wa-Tor 410 -> 396 ms and the Game of Life
    // 247 -> 203 ms; the same cap made generation 16% slower and left the other apps within
    // 2%, so they have none. Measured again on 2026-11-28 (H200, docs/results/2026-11-28-s2/
    // caps-ab.txt): 80 still the fastest of 64, 72, 80, 96 and none for both (Wa-Tor 0.321 s
    // against 0.326-0.338, the Game of Life 0.123 s, 72 the same, against 0.126-0.180). Since
    // the allocator's give-back no longer inlines a block's free into every allocation
    // (2026-11-29, eighth session; docs/results/2026-11-29-s8/rollback-ab.txt), the Game of
    // Life's heap runs faster at 64 (0.097 and 0.098 s against 0.105 and 0.105 s at 80), Wa-Tor's
    // slower (0.303 against 0.294 s), so the Game of Life's cap is 64. Since do-alls run in
    // blocks of 128 threads where that lets more threads reside (2026-11-30), Wa-Tor's heap
    // runs faster at 72 (28 warps a multiprocessor instead of 24; 0.264 and 0.265 s against
    // 0.268 and 0.268 s at 80, docs/results/2026-11-30/xbt-ab.txt); the Game of Life's at 56
    // ran as at 64 (0.0954 against 0.0956-0.0960 s) and `create_car` at 72 slower (1.319-1.340
    // against 1.287-1.291 s), so those stay.
    // Generation's updates (128 registers uncapped) were no faster at 112 and slower at 104 and
    // 96 (2026-11-28, docs/results/2026-11-28-s3/generation-caps-ab.txt), all in blocks of 256
    // threads. With blocks of 128 (2026-11-30), `Alive::update` at 96 (110 uncapped; 20 warps a
    // multiprocessor instead of 16, as `Candidate::update`'s 96 have) ran 2.226 and 2.263 s
    // against 2.340 and 2.315 s, and traffic's `Car::advance` at 56 (64 uncapped; 36 warps
    // instead of 32) 1.274 and 1.286 s against 1.326 and 1.298 s; structure's
    // `Spring::compute_force` at 72 ran slower (4.401 and 4.382 against 4.336 s) and
    // Sugarscape's `Male::mate` at 72 as at 80 (docs/results/2026-11-30/caps2-ab.txt).
    // `Candidate::update` is capped at the 96 it held before the do-all loop loaded its header
    // and first entry together (2026-11-30), after which it asked for 108 (16 warps a
    // multiprocessor instead of 20; docs/results/2026-11-30/early-ab.txt ran it at 96).
    // Traffic's `create_car` (136 registers without a cap, for the allocation path that 2% of
    // its threads take) ran 32.3 -> 27.4 us per step with 64 (96: 27.7 us); since the give-back
    // (126 registers without a cap) 80 runs the app as before it (1.453 and 1.468 s against
    // 1.454 and 1.437 s) and 64 slower (1.558 and 1.485 s; 96: 1.495 and 1.491 s;
    // docs/results/2026-11-29-s8/give-back-ab.txt), so its cap is 80. n-body's force
    // kernel (`device_reduce` over all bodies, 78 registers and 37.5% occupancy without a cap,
    // waiting on L1 loads: docs/results/2026-11-27/ncu-nbody.txt) ran
    // its default 3000 steps in 4.89 s with 48 against 8.37 s without on an H200; 64 (8.84 s),
    // 40 (11.2 s) and 32 (11.1 s) were slower (nbody-cap.txt, nbody-cap2.txt there).
    // Sugarscape's `Male::mate` (140 registers without a cap, for its allocation of the
    // offspring) ran the default run in 5.32, 5.31 and 5.32 s with 80 against 5.48, 5.46 and
    // 5.50 s without, three rounds interleaved in one call on an H200 (64: 5.32-5.39 s;
    // docs/results/2026-11-27-s6/caps-ab.txt; a cap of 48 on traffic's heap was within the
    // noise there). Barnes-Hut's `BodyNode::insert` (154 registers without a cap, one thread
    // block per multiprocessor, for the allocation that a split takes; most bodies stay in
    // their slot and return at once) took 1,100.7 ms of a 4,000-step run with 80 against
    // 1,748.4 ms without, and the run 15.82 and 15.78 s against 16.32 and 16.73 s, on an H200
    // (docs/results/2026-11-28/bh-caps.txt; 64 and 96 ran 15.90-16.75 s; a cap of 40 on
    // `TreeNode::summarize` made it slower, 689 -> 875 ms). Its `BodyNode::compute_force` has
    // two walks, over a stack of packed handles and, where the heap cannot pack them, of
    // handles: 52 registers for both against 48 for the packed one alone, which a cap of 48
    // keeps without spills (the packed walk was measured at 48: 14.7 -> 7.9 s per run,
    // docs/results/2026-11-28/bh-packed-stack.txt). The AOS build (general-purpose
    // allocators) has no cap: it was not measured there.
    // Per kernel, on the bundle of c897ebf (2026-12-03, H200, docs/results/2026-12-03-s30/, the
    // bundle's PTX assembled with other caps on the updates only): the Game of Life's
    // `Alive::update` and `Candidate::update` at 72 ran the default run in 63.40-63.64 ms against
    // 66.06-66.29 ms at 64 (68: 63.8-64.8, 76: 70.2-72.2, 80: 69.3-69.9, 96 and none 70.2-70.6;
    // either one alone at 72: 63.9-65.4), so the Game of Life's heap is capped at 72 (its other
    // do-alls use 40 registers); generation's updates at 80 ran 1.779 and 1.787 s against 1.814
    // and 1.817 s at 96 (72: 1.848, none: 1.815-1.818 s). Kept: Wa-Tor's updates at 72
    // (226.5-226.9 ms; 80: 227.2-227.5, 96: 226.0-226.3, none: 244.7-245.1) and structure's
    // `Spring::compute_force` without a cap (3.887 and 3.898 s; 72: 3.929, 64: 4.014, 56: 4.664).
    // Wa-Tor's read-only do-alls (38-43 registers) at 32, so that 16 blocks of 128 threads fit a
    // multiprocessor instead of 10-12 (2026-12-03, H200, docs/results/2026-12-03-s32/r32-ab.txt):
    // 219.4-220.0 ms against 226.2-226.9 ms, `OceanCell::decide` 66.0 -> 60.0 us and
    // `Shark::prepare` 63.3 -> 61.1 us a launch (`Fish::prepare` 54.5 either way). The same cap
    // made the Game of Life's and generation's prepares slower (57.5-57.8 -> 63.2-63.4 ms,
    // 1.763-1.772 -> 1.863-1.868 s), so it is Wa-Tor's only. (Before the heap's 72: the first
    // matching pattern wins.)
    dynasoar_build::PtxBuilder::new("../models")
        .max_registers_for("dynasoar_do__OceanHeap__OceanCell__decide", 32)
        .max_registers_for("dynasoar_do__OceanHeap__Fish__prepare", 32)
        .max_registers_for("dynasoar_do__OceanHeap__Shark__prepare", 32)
        .max_registers_for("__OceanHeap__", 72)
        .max_registers_for("__GolHeap__", 72)
        .max_registers_for("__TrafficHeap__ProducerCell__create_car", 80)
        .max_registers_for("__TrafficHeap__Car__advance", 56)
        .max_registers_for("__GenerationHeap__Alive__update", 80)
        .max_registers_for("__GenerationHeap__Candidate__update", 80)
        .max_registers_for("__SugarscapeHeap__Male__mate", 80)
        .max_registers_for("__NbodyHeap__Body__compute_force", 48)
        .max_registers_for("__CollisionHeap__Particle__compute_force", 48)
        .max_registers_for("__CollisionHeap__Particle__prepare_merge", 48)
        .max_registers_for("__BarnesHutHeap__BodyNode__insert", 80)
        .max_registers_for("__BarnesHutHeap__BodyNode__compute_force", 48)
        .embed_as("models");
    dynasoar_build::PtxBuilder::new("../models").aos().embed_as("models-aos");
    dynasoar_build::PtxBuilder::new("../models").bitmap_alloc().embed_as("models-bitmap");
}
