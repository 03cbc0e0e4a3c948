//! `dynasoar::math` on both backends: `sqrt`, `floor` and `Vec2::length` of special, boundary
//! and random inputs give the correctly rounded (f64-derived) results on the CPU backend, and
//! bit for bit the same results on the GPU (the `math_check` kernel of the smoke model). Without
//! a GPU, the kernel's PTX is checked for the IEEE-rounded instructions that make this so.

use dynasoar_examples::MODELS_PTX;
use dynasoar_examples::smoke::{
    MathResults, floor_reference, length_reference, math_inputs, run_math_check, sqrt_reference,
};
use dynasoar_tests::{cpu_executor, gpu_executor};

/// The host references themselves, on values whose results are known exactly: the CPU and GPU
/// results are checked against these, so they must not be wrong themselves.
#[test]
fn references_give_known_values() {
    let bits = |x: f32| x.to_bits();
    assert_eq!(bits(sqrt_reference(16_769_025.0)), bits(4095.0));
    assert_eq!(bits(sqrt_reference(2.0)), 0x3fb5_04f3); // 1.41421353816986083984375
    assert_eq!(bits(sqrt_reference(f32::from_bits(1))), 0x1a35_04f3); // √2 · 2^-75
    assert_eq!(bits(sqrt_reference(-0.0)), bits(-0.0));
    assert!(sqrt_reference(-1.0).is_nan());
    assert_eq!(bits(floor_reference(-0.0)), bits(-0.0));
    assert_eq!(bits(floor_reference(0.3)), bits(0.0));
    assert_eq!(floor_reference(-0.3), -1.0);
    assert_eq!(floor_reference(-f32::from_bits(1)), -1.0);
    assert_eq!(floor_reference(-8_388_607.5), -8_388_608.0);
    assert_eq!(floor_reference(f32::NEG_INFINITY), f32::NEG_INFINITY);
    assert!(floor_reference(f32::NAN).is_nan());
    assert_eq!(length_reference(3.0, 4.0), 5.0);
    assert_eq!(length_reference(1e30, 1e30), f32::INFINITY, "x * x overflows in f32");
    // Each operation rounds: 4099² = 16801801 is no f32, so x * x + y * y rounds twice, to
    // 16803168, and its root to 4099.16650390625; a fused multiply-add (one rounding, to
    // 16803170) would give the next f32, 4099.1669921875.
    assert_eq!(bits(length_reference(4099.0, 37.0)), 0x4580_1955);
}

#[test]
fn math_on_cpu_matches_the_references() {
    let inputs = math_inputs(100_000, 3);
    let classes = |p: fn(&f32) -> bool| inputs.iter().filter(|x| p(x)).count();
    assert!(classes(|x| x.is_nan()) > 10 && classes(|x| x.is_subnormal()) > 10);
    assert!(classes(|x| x.is_infinite()) >= 2 && classes(|x| *x == 0.0) >= 2);
    let cpu = run_math_check(&cpu_executor(), &inputs).unwrap();
    let reference = MathResults::reference(&inputs);
    if let Some(d) = cpu.first_difference(&reference, &inputs) {
        panic!("the CPU backend differs from the reference: {d}");
    }
    // The comparison finds a one-bit difference and a NaN where a number belongs.
    for (k, bit) in [(0, 1), (inputs.len() / 2, 1 << 22), (inputs.len() - 1, 0x7f80_0001)] {
        let mut wrong = cpu.clone();
        wrong.length[k] ^= bit;
        assert!(wrong.first_difference(&reference, &inputs).is_some(), "length {k} ^ {bit:#x}");
    }
}

#[test]
fn math_on_gpu_is_bit_identical_to_cpu() {
    let Some(gpu) = gpu_executor("math_on_gpu_is_bit_identical_to_cpu") else {
        return;
    };
    let inputs = math_inputs(2_000_000, 5);
    let on_gpu = run_math_check(&gpu, &inputs).unwrap();
    let on_cpu = run_math_check(&cpu_executor(), &inputs).unwrap();
    if let Some(d) = on_gpu.first_difference(&on_cpu, &inputs) {
        panic!("the GPU differs from the CPU backend: {d}");
    }
    if let Some(d) = on_gpu.first_difference(&MathResults::reference(&inputs), &inputs) {
        panic!("the GPU differs from the reference: {d}");
    }
}

/// What makes the GPU's results the CPU's, checked in the PTX (so also where there is no GPU):
/// `sqrt.rn` and `cvt.rmi` for `sqrt` and `floor`, and a length of separately rounded `mul.rn`
/// and `add.rn`, which `ptxas` may not fuse; no approximate, flush-to-zero or fused instruction.
#[test]
fn math_check_ptx_uses_ieee_instructions() {
    let start = MODELS_PTX.find(".entry math_check(").expect("the math_check kernel in the PTX");
    let body = &MODELS_PTX[start..];
    let body = &body[..body.find("\n}\n").expect("the end of math_check")];
    let count = |needle: &str| body.matches(needle).count();
    assert_eq!(count("sqrt.rn.f32"), 2, "sqrt and the length's square root:\n{body}");
    assert_eq!(count("cvt.rmi.f32.f32"), 1, "floor:\n{body}");
    assert_eq!((count("mul.rn.f32"), count("add.rn.f32")), (2, 1), "the length's x * x + y * y:\n{body}");
    for bad in ["fma.", ".approx", ".ftz", "mul.f32", "add.f32"] {
        assert_eq!(count(bad), 0, "{bad} in math_check:\n{body}");
    }
}
