//! Compiles the model crate to PTX with the pinned nightly (see `dynasoar_host::build`): the
//! build for DynaSOAr's heap, and the AOS build for general-purpose allocators.
fn main() {
    // `PtxBuilder::max_registers(80)` made Wa-Tor 5% faster on an H200 with the fixed full grid
    // (docs/benchmarks.md); with whole-wave grids it is not measured yet, so it stays off.
    dynasoar_host::build::PtxBuilder::new("../models").build_or_exit("models.ptx");
    dynasoar_host::build::PtxBuilder::new("../models").aos().build_or_exit("models-aos.ptx");
}
