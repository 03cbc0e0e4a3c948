//! Compiles the benchmark kernels (`bench/kernels`, with the allocators they measure) to PTX
//! with the pinned nightly (see `dynasoar_build`).
fn main() {
    dynasoar_build::PtxBuilder::new("kernels").build_or_exit("bench.ptx");
}
