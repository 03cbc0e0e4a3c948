//! `dynasoar::math` on both backends: `sqrt`, `floor` and `Vec2::length` of special, boundary
//! and random inputs give the correctly rounded (f64-derived) results on the CPU backend, and
//! bit for bit the same results on the GPU (the `math_check` kernel of the smoke model). Without
//! a GPU, the kernel's PTX is checked for the IEEE-rounded instructions that make this so.
//!
//! `dynasoar::math::fast`, the opt-in exception: its approximate square root and division stay
//! within 2 ulp of the correctly rounded results on the GPU, and are the exact operations on the
//! CPU backend.

use dynasoar_examples::MODELS_PTX;
use dynasoar_examples::smoke::{
    MathResults, div_reference, floor_reference, length_reference, math_inputs, run_fast_math_check,
    run_math_check, sqrt_reference, ulps_apart,
};
use dynasoar_models::smoke::math_partner;
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
    let body = entry("math_check");
    let count = |needle: &str| body.matches(needle).count();
    assert_eq!(count("sqrt.rn.f32"), 2, "sqrt and the length's square root:\n{body}");
    assert_eq!(count("cvt.rmi.f32.f32"), 1, "floor:\n{body}");
    assert_eq!((count("mul.rn.f32"), count("add.rn.f32")), (2, 1), "the length's x * x + y * y:\n{body}");
    for bad in ["fma.", ".approx", ".ftz", "mul.f32", "add.f32"] {
        assert_eq!(count(bad), 0, "{bad} in math_check:\n{body}");
    }
}

/// The body of entry `name` in the models' PTX.
fn entry(name: &str) -> &'static str {
    let start = MODELS_PTX.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("{name} in the PTX"));
    let body = &MODELS_PTX[start..];
    &body[..body.find("\n}\n").unwrap_or_else(|| panic!("the end of {name}"))]
}

/// `fast::sqrt` and `fast::div` are the approximate instructions, and a formula written against
/// `Precision` gets them in its `Fast` kernel only (n-body's and collision's forces, both forms).
#[test]
fn fast_math_ptx_uses_the_approximate_instructions() {
    let check = entry("fast_math_check");
    assert_eq!(check.matches("sqrt.approx.f32").count(), 1, "{check}");
    assert_eq!(check.matches("div.full.f32").count(), 1, "{check}");
    for (exact, fast) in [
        ("dynasoar_do__NbodyHeap__Body__compute_force", "dynasoar_do__NbodyHeap__Body__compute_force_fast"),
        ("nbody_soa_force", "nbody_soa_force_fast"),
        ("nbody_aos_force", "nbody_aos_force_fast"),
        (
            "dynasoar_do__CollisionHeap__Particle__compute_force",
            "dynasoar_do__CollisionHeap__Particle__compute_force_fast",
        ),
        ("collision_soa_force", "collision_soa_force_fast"),
        ("collision_aos_force", "collision_aos_force_fast"),
    ] {
        let (e, f) = (entry(exact), entry(fast));
        // One square root and two divisions per interaction (the dense walk has one copy per
        // position, so count kinds, not calls).
        for (body, yes, no) in [
            (e, ["sqrt.rn.f32", "div.rn.f32"], [".approx", "div.full"]),
            (f, ["sqrt.approx.f32", "div.full.f32"], ["sqrt.rn", "div.rn"]),
        ] {
            for needle in yes {
                assert!(body.contains(needle), "{needle} missing in {}", &body[..body.find('(').unwrap()]);
            }
            for needle in no {
                assert!(!body.contains(needle), "{needle} in {}", &body[..body.find('(').unwrap()]);
            }
        }
    }
}

/// On the CPU backend `fast` is exact.
#[test]
fn fast_math_on_cpu_is_exact() {
    let inputs = math_inputs(100_000, 11);
    let n = inputs.len();
    let cpu = run_fast_math_check(&cpu_executor(), &inputs).unwrap();
    let same = |a: u32, b: f32| a == b.to_bits() || (f32::from_bits(a).is_nan() && b.is_nan());
    for i in 0..n {
        let (x, y) = (inputs[i], inputs[math_partner(i, n)]);
        assert!(same(cpu.sqrt[i], x.sqrt()), "sqrt({x:e})");
        assert!(same(cpu.div[i], x / y), "{x:e} / {y:e}");
    }
}

/// The ulp distance itself: neighbours are 1 apart, across zero and into subnormals.
#[test]
fn ulps_apart_counts_representable_steps() {
    assert_eq!(ulps_apart(1.0, 1.0f32.next_up()), Some(1));
    assert_eq!(ulps_apart(1.0, 1.0f32.next_up().next_up()), Some(2));
    assert_eq!(ulps_apart(f32::from_bits(1), -f32::from_bits(1)), Some(2));
    assert_eq!(ulps_apart(0.0, -0.0), Some(0));
    assert_eq!(ulps_apart(f32::MIN_POSITIVE, f32::MIN_POSITIVE.next_down()), Some(1));
    assert_eq!(ulps_apart(1.0, f32::INFINITY), None);
    assert_eq!(ulps_apart(f32::NAN, 1.0), None);
}

/// On the GPU, `fast::sqrt` of every finite non-negative input and `fast::div` of every pair of
/// normal inputs with a normal quotient are within 2 ulp of the correctly rounded results (the
/// worst case found is printed), and NaN inputs give NaN.
#[test]
fn fast_math_on_gpu_is_within_two_ulp() {
    let Some(gpu) = gpu_executor("fast_math_on_gpu_is_within_two_ulp") else {
        return;
    };
    let inputs = math_inputs(2_000_000, 7);
    let n = inputs.len();
    let fast = run_fast_math_check(&gpu, &inputs).unwrap();
    // (most ulps, input), inputs checked, results that differ from the exact ones.
    let mut worst = [(0u32, 0usize); 2];
    let mut checked = [0usize; 2];
    let mut inexact = [0usize; 2];
    for i in 0..n {
        let (x, y) = (inputs[i], inputs[math_partner(i, n)]);
        let (s, d) = (f32::from_bits(fast.sqrt[i]), f32::from_bits(fast.div[i]));
        if x.is_nan() {
            assert!(s.is_nan() && d.is_nan(), "fast::sqrt({x:e}) = {s:e}, fast::div({x:e}, {y:e}) = {d:e}");
        }
        let quotient = x as f64 / y as f64;
        let cases = [
            (x.is_finite() && x >= 0.0, s, sqrt_reference(x)),
            (
                x.is_normal()
                    && y.is_normal()
                    && (f32::MIN_POSITIVE as f64..=f32::MAX as f64).contains(&quotient.abs()),
                d,
                div_reference(x, y),
            ),
        ];
        for (k, (applies, got, want)) in cases.into_iter().enumerate() {
            if !applies {
                continue;
            }
            let ulps = ulps_apart(got, want)
                .unwrap_or_else(|| panic!("op {k} of input {i} ({x:e}, {y:e}): {got:e}, exact {want:e}"));
            checked[k] += 1;
            inexact[k] += (ulps != 0) as usize;
            if ulps > worst[k].0 {
                worst[k] = (ulps, i);
            }
        }
    }
    eprintln!(
        "fast::sqrt: {} inputs, {} inexact, at most {} ulp (input {}); fast::div: {} pairs, {} inexact, at most {} ulp (input {})",
        checked[0], inexact[0], worst[0].0, worst[0].1, checked[1], inexact[1], worst[1].0, worst[1].1
    );
    assert!(checked[0] > 1_000_000 && checked[1] > 1_000_000, "too few inputs in range: {checked:?}");
    for (k, name) in ["sqrt", "div"].into_iter().enumerate() {
        let (ulps, i) = worst[k];
        assert!(
            ulps <= 2,
            "fast::{name} of input {i} ({:e}, {:e}) is {ulps} ulp off",
            inputs[i],
            inputs[math_partner(i, n)]
        );
    }
}
