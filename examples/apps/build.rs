//! Compiles the model crate to PTX with the pinned nightly (see `dynasoar_build`): the
//! build for DynaSOAr's heap, the AOS build for general-purpose allocators, and the
//! BitmapAlloc build (BitmapAlloc with one allocation bitmap per class), for
//! `dynasoar::include_ptx!` (which reports a model's compile error once).
fn main() {
    // A cap of 80 registers on the do-all kernels of Wa-Tor and the Game of Life: measured on
    // an H200 (docs/benchmarks.md, "Register caps"), Wa-Tor 410 -> 396 ms and the Game of Life
    // 247 -> 203 ms; the same cap made generation 16% slower and left the other apps within
    // 2%, so they have none. Traffic's `create_car` (136 registers without a cap, for the
    // allocation path that 2% of its threads take) ran 32.3 -> 27.4 us per step with 64 (96:
    // 27.7 us). The AOS build (general-purpose allocators) has no cap: it was not measured
    // there.
    dynasoar_build::PtxBuilder::new("../models")
        .max_registers_for("__OceanHeap__", 80)
        .max_registers_for("__GolHeap__", 80)
        .max_registers_for("__TrafficHeap__ProducerCell__create_car", 64)
        .embed_as("models");
    dynasoar_build::PtxBuilder::new("../models").aos().embed_as("models-aos");
    dynasoar_build::PtxBuilder::new("../models").bitmap_alloc().embed_as("models-bitmap");
}
