//! Compiles this package's library (the model) to PTX, for `dynasoar::include_ptx!()`.
fn main() {
    dynasoar_build::PtxBuilder::this_package().embed();
}
