//! Compiles the model crate to PTX with the pinned nightly (see `dynasoar_host::build`): the
//! build for DynaSOAr's heap, and the AOS build for general-purpose allocators.
fn main() {
    dynasoar_host::build::PtxBuilder::new("../models").build_or_exit("models.ptx");
    dynasoar_host::build::PtxBuilder::new("../models").aos().build_or_exit("models-aos.ptx");
}
