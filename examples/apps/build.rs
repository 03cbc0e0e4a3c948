//! Compiles the model crate to PTX with the pinned nightly (see `dynasoar_host::build`): the
//! build for DynaSOAr's heap, and the AOS build for general-purpose allocators.
fn main() {
    // Kernels that allocate need 110-136 registers; capped at 80 they spill a little and fit
    // 50% more threads per multiprocessor. On an H200, Wa-Tor's Shark::update went from 251 us
    // to 215 us per step (docs/benchmarks.md); kernels below 80 registers are unchanged.
    dynasoar_host::build::PtxBuilder::new("../models").max_registers(80).build_or_exit("models.ptx");
    dynasoar_host::build::PtxBuilder::new("../models").aos().build_or_exit("models-aos.ptx");
}
