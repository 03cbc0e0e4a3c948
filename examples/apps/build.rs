//! Compiles the model crate to PTX with the pinned nightly (see `dynasoar_host::build`).
fn main() {
    dynasoar_host::build::PtxBuilder::new("../models").build_or_exit("models.ptx");
}
