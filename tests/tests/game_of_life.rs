//! Game of Life: known patterns behave as they must (blinker, glider, block), the DSL version
//! and the baselines (SOA with lists and dense, AOS) agree with a plain host implementation of
//! the rules on random soups, the SOA baseline's lists hold exactly the cells they must,
//! the grid does not wrap, the DSL's grid and objects stay consistent, PGM images load (also
//! from archives) and bad input is a clear error; on a GPU, the same cells as on the CPU.
//!
//! `tm.pgm` from the benchmark archive (`game-of-life/turing_machines.tar.gz` in
//! `DYNASOAR_DATA` or the project's shared data folder) is also run against the host reference:
//! where the archive is missing these tests skip with a printed reason, but in CI and on the GPU
//! machine (`CI` or `DYNASOAR_REQUIRE_GPU=1` set) they fail.

use std::io::Write;
use std::path::{Path, PathBuf};

use dynasoar::host::{Backend, ExecutorOptions, Runtime};
use dynasoar::{AllocatorSpec, Handle, Packed, Packer};
use dynasoar_examples::Implementation;
use dynasoar_examples::game_of_life::{
    Config, DATA_VAR, Outcome, Pattern, Reference, SoaVariant, data_dirs, default_heap_bytes, draw,
    find_archive, queue_dsl_step, read_pgm, reference_run, run, soa_lists,
};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_models::game_of_life::{Agent, Alive, Candidate, GolHeap, World, config};
use dynasoar_tests::{REQUIRE_GPU_VAR, gpu_executor};

/// An implementation and, for the SOA baseline, which of the two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Variant(Implementation, Option<SoaVariant>);

const DSL: Variant = Variant(Implementation::Dynasoar, None);
const SOA_LISTS: Variant = Variant(Implementation::Soa, Some(SoaVariant::Lists));
const SOA_DENSE: Variant = Variant(Implementation::Soa, Some(SoaVariant::Dense));
const AOS: Variant = Variant(Implementation::Aos, None);
const ALL: [Variant; 4] = [DSL, SOA_LISTS, SOA_DENSE, AOS];

impl Variant {
    fn name(self) -> &'static str {
        match self.1 {
            Some(soa) => soa.name(),
            None => self.0.name(),
        }
    }

    fn config(self, steps: u32, pattern: &Pattern) -> Config {
        Config {
            steps,
            verify: true,
            soa: self.1.unwrap_or(SoaVariant::Lists),
            ..Config::new(pattern.clone())
        }
    }
}

fn options(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

fn simulate(implementation: Variant, backend: Backend, pattern: &Pattern, steps: u32) -> Outcome {
    let cfg = implementation.config(steps, pattern);
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    run(implementation.0, options(backend), &cfg, &mut recorder, false).unwrap_or_else(|e| {
        panic!("{} on {} after {steps} steps: {e:#}", implementation.name(), pattern.name)
    })
}

/// The benchmark's heap (`utm.pgm`: 12699 x 12652 cells, 252,192 alive) packs its handles, so
/// its grid holds 4-byte entries (`World`); a heap of more blocks would fall back to 8-byte
/// ones.
/// (That the packed grid's entries are its agents' handles, unpacked by the host's packer,
/// `run` checks with `verify` in every test here.)
#[test]
fn the_benchmark_grid_packs_its_handles() {
    let live = (0..252_192).map(|i| (i % 12699, i / 12699));
    let utm = Pattern::from_cells("utm-sized", 12699, 12652, live).unwrap();
    let blocks = default_heap_bytes(&utm) / GolHeap::BLOCK_BYTES;
    assert!(blocks <= Packer::<GolHeap>::MAX_BLOCKS, "{blocks} blocks");
}

/// A step lists each class once (after the first): the prepares name `dev` (for the grid's
/// packer) but declare that they create and free nothing, so the lists they use stay good for
/// the updates. (Left undeclared, they made each step list both classes twice and reactivate
/// their blocks.)
#[test]
fn a_step_lists_each_class_once() {
    let rt = Runtime::<GolHeap>::builder(dynasoar_examples::MODELS_PTX)
        .backend(Backend::Cpu)
        .cpu_threads(2)
        .heap_bytes(16 << 20)
        .quiet(true)
        .profile(true)
        .build()
        .unwrap();
    let exec = rt.executor();
    let pattern = Pattern::random(64, 64, 0.35, 1).unwrap();
    let packer = rt.packer().expect("a 16 MiB heap packs its handles");
    let cells = exec.alloc_zeroed::<Packed<Agent>>(pattern.cells()).unwrap();
    let world = World::new(cells.ptr().cast(), pattern.width, pattern.height, true);
    let ids = exec.upload(&pattern.live).unwrap();
    rt.parallel_new_with(Alive::from_pattern, pattern.live.len() as u64, ids.ptr()).unwrap();
    rt.parallel_do_with(Alive::register, world).unwrap();
    rt.parallel_do_with(Alive::update, world).unwrap();
    let listed = |rt: &Runtime<GolHeap>| -> Vec<(String, u64)> {
        let profile = rt.kernel_profile().unwrap();
        let mut v: Vec<_> = profile
            .iter()
            .filter(|k| k.name.starts_with("enumerate"))
            .map(|k| (k.name.clone(), k.launches))
            .collect();
        v.sort();
        v
    };
    let before = listed(&rt);
    const STEPS: u64 = 5;
    for _ in 0..STEPS {
        queue_dsl_step(&rt, world).unwrap();
    }
    let after = listed(&rt);
    // Launches that listed `class` (alone, or with others as `enumerate A+B`).
    let count = |v: &[(String, u64)], class: &str| {
        let lists =
            |name: &str| name.strip_prefix("enumerate ").is_some_and(|c| c.split('+').any(|c| c == class));
        v.iter().filter(|k| lists(&k.0)).map(|k| k.1).sum::<u64>()
    };
    // Once a step, and once more in the first (whose `Candidate::prepare` lists both classes:
    // the setup's `Alive::update` changed both).
    for class in ["Alive", "Candidate"] {
        let listed = count(&after, class) - count(&before, class);
        assert!(
            listed <= STEPS + 1,
            "{class} listed {listed} times in {STEPS} steps: {before:?} -> {after:?}"
        );
    }
    assert_eq!(count(&after, "reactivation"), 0, "{after:?}");
    // The grid after the steps: each agent's own handle in its cell.
    let grid: Vec<Handle<Agent>> =
        exec.read_all(&cells).unwrap().into_iter().map(|e| packer.unpack(e)).collect();
    let agents = rt.collect_with_handles::<Alive>().unwrap().into_iter().map(|(h, a)| (h.raw(), a.base.cell));
    let candidates =
        rt.collect_with_handles::<Candidate>().unwrap().into_iter().map(|(h, c)| (h.raw(), c.base.cell));
    let mut seen = 0;
    for (h, cell) in agents.chain(candidates) {
        assert_eq!(grid[cell as usize].raw(), h, "cell {cell}");
        seen += 1;
    }
    assert_eq!(grid.iter().filter(|h| !h.is_null()).count(), seen, "no entry without its agent");
    assert_eq!(
        rt.collect::<Alive>().unwrap().len(),
        reference_run(&pattern, STEPS as u32).len(),
        "alive cells after {STEPS} steps"
    );
}

/// Cells `(x, y)` as sorted indices of a grid `width` wide.
fn cells(width: u32, xy: &[(u32, u32)]) -> Vec<u32> {
    let mut v: Vec<u32> = xy.iter().map(|&(x, y)| y * width + x).collect();
    v.sort_unstable();
    v
}

/// The DSL's candidates: never on alive cells, and on every dead cell next to an alive one.
fn check_candidates(o: &Outcome, pattern: &Pattern, steps: u32) {
    let candidates = o.candidates.as_ref().expect("the DSL version reports candidates");
    let mut reference = Reference::new(pattern);
    for _ in 0..steps {
        reference.step();
    }
    assert_eq!(o.live, reference.live());
    assert!(candidates.iter().all(|c| o.live.binary_search(c).is_err()), "a candidate on an alive cell");
    for c in reference.required_candidates() {
        assert!(candidates.binary_search(&c).is_ok(), "no candidate at {c}, next to an alive cell");
    }
}

#[test]
fn blinker_has_period_two() {
    let p = Pattern::blinker(9, 7).unwrap();
    let horizontal = cells(9, &[(3, 3), (4, 3), (5, 3)]);
    let vertical = cells(9, &[(4, 2), (4, 3), (4, 4)]);
    assert_eq!(p.live, horizontal);
    for implementation in ALL {
        for (steps, expected) in [(1, &vertical), (2, &horizontal), (7, &vertical), (30, &horizontal)] {
            let o = simulate(implementation, Backend::Cpu, &p, steps);
            assert_eq!(&o.live, expected, "{} after {steps} steps", implementation.name());
        }
    }
    let o = simulate(DSL, Backend::Cpu, &p, 3);
    check_candidates(&o, &p, 3);
}

#[test]
fn glider_moves_one_cell_diagonally_every_four_steps() {
    let p = Pattern::glider(24, 20).unwrap();
    let shifted = |k: u32| -> Vec<u32> {
        let mut v: Vec<u32> = p.live.iter().map(|&c| c + k * 24 + k).collect();
        v.sort_unstable();
        v
    };
    for implementation in ALL {
        for k in [1, 3, 10] {
            let o = simulate(implementation, Backend::Cpu, &p, 4 * k);
            assert_eq!(o.live, shifted(k), "{} after {} steps", implementation.name(), 4 * k);
        }
    }
    let o = simulate(DSL, Backend::Cpu, &p, 21);
    check_candidates(&o, &p, 21);
}

#[test]
fn grid_does_not_wrap() {
    // A glider runs into the bottom-right corner and settles into a block there; on a torus it
    // would come back at the top-left.
    let p = Pattern::glider(12, 12).unwrap();
    let reference = reference_run(&p, 120);
    assert_eq!(reference, cells(12, &[(10, 10), (11, 10), (10, 11), (11, 11)]), "host reference");
    for implementation in ALL {
        let o = simulate(implementation, Backend::Cpu, &p, 120);
        assert_eq!(o.live, reference, "{}", implementation.name());
    }
    // Alive cells on every edge and corner.
    let edges = Pattern::from_cells(
        "edges",
        7,
        5,
        [(0, 0), (1, 0), (0, 1), (6, 0), (6, 1), (5, 0), (0, 4), (1, 4), (2, 4), (6, 3), (6, 4), (5, 4)],
    )
    .unwrap();
    for steps in [1, 2, 5] {
        let expected = reference_run(&edges, steps);
        for implementation in ALL {
            assert_eq!(simulate(implementation, Backend::Cpu, &edges, steps).live, expected);
        }
    }
}

#[test]
fn block_is_a_still_life() {
    let p = Pattern::block(10, 10).unwrap();
    for implementation in ALL {
        assert_eq!(simulate(implementation, Backend::Cpu, &p, 25).live, p.live, "{}", implementation.name());
    }
    // Its 12 dead neighbours are candidates, and nothing else.
    let o = simulate(DSL, Backend::Cpu, &p, 25);
    assert_eq!(o.candidates.as_ref().unwrap(), &Reference::new(&p).required_candidates());
    assert_eq!(o.candidates.unwrap().len(), 12);
}

#[test]
fn random_soups_match_the_host_reference() {
    for (w, h, density, seed, steps) in [(96, 80, 0.35, 1, 60), (33, 47, 0.5, 2, 25), (64, 64, 0.1, 3, 40)] {
        let p = Pattern::random(w, h, density, seed).unwrap();
        let expected = reference_run(&p, steps);
        assert!(!expected.is_empty() && expected != p.live, "a soup that does something");
        for implementation in ALL {
            let o = simulate(implementation, Backend::Cpu, &p, steps);
            assert_eq!(o.live, expected, "{} on {w}x{h} after {steps} steps", implementation.name());
            assert_eq!((o.width, o.height), (w, h));
        }
        check_candidates(&simulate(DSL, Backend::Cpu, &p, steps), &p, steps);
    }
}

#[test]
fn every_step_of_a_soup_matches_the_host_reference() {
    let p = Pattern::random(40, 30, 0.4, 9).unwrap();
    let mut reference = Reference::new(&p);
    for steps in 0..=12 {
        let o = simulate(DSL, Backend::Cpu, &p, steps);
        assert_eq!(o.live, reference.live(), "after {steps} steps");
        reference.step();
    }
}

/// Cell `c` and its in-grid neighbours (written out here, independently of the models').
fn around(width: u32, height: u32, c: u32) -> impl Iterator<Item = u32> {
    let (x, y) = ((c % width) as i64, (c / width) as i64);
    (-1..=1i64)
        .flat_map(move |dy| (-1..=1i64).map(move |dx| (x + dx, y + dy)))
        .filter(move |&(nx, ny)| nx >= 0 && ny >= 0 && nx < width as i64 && ny < height as i64)
        .map(move |(nx, ny)| (ny * width as i64 + nx) as u32)
}

/// Run the SOA baseline with lists for `steps` steps of `pattern` and check its last list:
/// distinct cells; every alive cell and every dead cell next to one; nothing else but dead
/// cells next to a cell that was alive one step earlier (which drop out in the next step).
/// Returns the list's length.
fn check_soa_list(pattern: &Pattern, steps: u32) -> usize {
    let cfg = Config { steps, soa: SoaVariant::Lists, ..Config::new(pattern.clone()) };
    let (o, listed) = soa_lists(options(Backend::Cpu), &cfg).unwrap();
    let mut reference = Reference::new(pattern);
    let mut before = reference.live().to_vec();
    for _ in 0..steps {
        before = reference.live().to_vec();
        reference.step();
    }
    let what = format!("{} ({}) after {steps} steps", pattern.name, pattern.size());
    assert_eq!(o.live, reference.live(), "{what}");
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), listed.len(), "{what}: the list holds a cell twice");
    for &c in reference.live().iter().chain(&reference.required_candidates()) {
        assert!(sorted.binary_search(&c).is_ok(), "{what}: cell {c} must be listed");
    }
    let (w, h) = (pattern.width, pattern.height);
    let may: std::collections::BTreeSet<u32> =
        reference.live().iter().chain(&before).flat_map(|&c| around(w, h, c)).collect();
    for c in &sorted {
        assert!(may.contains(c), "{what}: cell {c} is listed but no alive cell was near it");
    }
    sorted.len()
}

#[test]
fn soa_lists_hold_the_cells_that_can_change() {
    // A glider on a large grid: a few dozen cells listed, not the grid's 4096.
    let glider = Pattern::glider(64, 64).unwrap();
    for steps in 0..=24 {
        let n = check_soa_list(&glider, steps);
        assert!((5..=40).contains(&n), "{n} cells listed for a glider after {steps} steps");
    }
    // Isolated cells die at once (and their neighbours drop out a step later) while an L of
    // three cells becomes a block (a cell is born).
    let isolated =
        Pattern::from_cells("isolated", 13, 9, [(0, 0), (6, 4), (12, 8), (2, 6), (3, 6), (2, 7)]).unwrap();
    let counts: Vec<usize> = (0..=4).map(|steps| check_soa_list(&isolated, steps)).collect();
    // The block and its 12 neighbours, once the dead cells' neighbourhoods have dropped out.
    assert_eq!(&counts[2..], &[16, 16, 16], "cells listed after 0..=4 steps: {counts:?}");
    assert!(counts[0] > counts[1] && counts[1] > counts[2], "{counts:?}");
    // Soups (widths that are no multiple of 4: the cells' bytes of a word span two rows), the
    // edges of the grid and an empty one.
    let soup = Pattern::random(45, 31, 0.25, 7).unwrap();
    for steps in 0..=30 {
        check_soa_list(&soup, steps);
    }
    let dense = Pattern::random(23, 17, 0.6, 8).unwrap();
    for steps in [0, 1, 2, 5, 9] {
        check_soa_list(&dense, steps);
    }
    let edges =
        Pattern::from_cells("edges", 6, 5, [(0, 0), (1, 0), (5, 0), (5, 1), (0, 4), (1, 4), (5, 4)]).unwrap();
    for steps in 0..=5 {
        check_soa_list(&edges, steps);
    }
    assert_eq!(check_soa_list(&Pattern::from_cells("empty", 8, 8, []).unwrap(), 3), 0);
}

#[test]
fn soa_variants_are_named_and_parsed() {
    assert_eq!(SoaVariant::parse("lists").unwrap(), SoaVariant::Lists);
    assert_eq!(SoaVariant::parse("dense").unwrap(), SoaVariant::Dense);
    let err = SoaVariant::parse("sparse").unwrap_err().to_string();
    assert!(err.contains("--soa") && err.contains("`dense`"), "{err}");
    assert_eq!((SoaVariant::Lists.name(), SoaVariant::Dense.name()), ("soa", "soa-dense"));
    // The same cells from both, on a soup that grows and dies down for a while.
    let p = Pattern::random(120, 90, 0.3, 12).unwrap();
    let lists = simulate(SOA_LISTS, Backend::Cpu, &p, 150);
    let dense = simulate(SOA_DENSE, Backend::Cpu, &p, 150);
    assert_eq!(lists.live, dense.live);
    assert_eq!(lists.fingerprint(), dense.fingerprint());
    assert_eq!(lists.live, reference_run(&p, 150));
}

#[test]
fn degenerate_grids() {
    let cases = [
        Pattern::from_cells("empty", 16, 16, []).unwrap(),
        Pattern::from_cells("single", 1, 1, [(0, 0)]).unwrap(),
        Pattern::random(1, 50, 0.7, 4).unwrap(),
        Pattern::random(50, 1, 0.7, 5).unwrap(),
        Pattern::random(2, 40, 0.6, 6).unwrap(),
    ];
    for p in &cases {
        for steps in [0, 1, 4] {
            let expected = reference_run(p, steps);
            for implementation in ALL {
                let o = simulate(implementation, Backend::Cpu, p, steps);
                assert_eq!(
                    o.live,
                    expected,
                    "{} on {} ({}) after {steps}",
                    implementation.name(),
                    p.name,
                    p.size()
                );
            }
        }
    }
    // Nothing alive, nothing to do: no objects at all.
    let o = simulate(DSL, Backend::Cpu, &cases[0], 3);
    assert!(o.live.is_empty() && o.candidates.unwrap().is_empty());
}

#[test]
fn pattern_specs() {
    let g = Pattern::from_spec("glider", None, 0).unwrap();
    assert_eq!((g.width, g.height, g.live.len()), (64, 64, 5));
    let b = Pattern::from_spec("blinker", Some((5, 3)), 0).unwrap();
    assert_eq!(b.live, cells(5, &[(1, 1), (2, 1), (3, 1)]));
    let r = Pattern::from_spec("random:30x20:0.5", None, 7).unwrap();
    assert_eq!((r.width, r.height), (30, 20));
    assert_eq!(r, Pattern::from_spec("random:0.5", Some((30, 20)), 7).unwrap(), "same seed, same soup");
    assert_ne!(r.live, Pattern::from_spec("random:30x20:0.5", None, 8).unwrap().live);
    assert!((150..450).contains(&r.live.len()), "about half of 600 cells: {}", r.live.len());
    assert_eq!(Pattern::from_spec("random:10x10:0", None, 1).unwrap().live.len(), 0);
    assert_eq!(Pattern::from_spec("random:10x10:1", None, 1).unwrap().live.len(), 100);

    for (spec, size, needle) in [
        ("random:0x5", None, "at least one cell"),
        ("random:10x10:1.5", None, "not between 0 and 1"),
        ("random:10x10:lots", None, "neither a size"),
        ("random:100000x100000", None, "2^32"),
        ("glider", Some((3, 3)), "at least 4x4"),
        ("no/such/pattern.pgm", None, "no/such/pattern.pgm"),
        ("no/such/archive.tar.gz:tm.pgm", None, "no/such/archive.tar.gz"),
        ("file.pgm", Some((4, 4)), "built-in patterns only"),
    ] {
        let err = format!("{:#}", Pattern::from_spec(spec, size, 0).unwrap_err());
        assert!(err.contains(needle), "{spec}: {err}");
    }
}

fn pgm(bytes: &[u8]) -> Result<Pattern, String> {
    read_pgm(bytes, "test.pgm").map_err(|e| format!("{e:#}"))
}

#[test]
fn pgm_images_load() {
    // Plain (P2), with comments; 0 is alive.
    let p =
        pgm(b"P2\n# a comment\n4 3\n# another\n255\n255 0 255 255\n0 0 255 255\n255 255 255 0\n").unwrap();
    assert_eq!((p.width, p.height), (4, 3));
    assert_eq!(p.live, cells(4, &[(1, 0), (0, 1), (1, 1), (3, 2)]));
    // Numbers may be split across lines any way; trailing data is ignored.
    let q = pgm(b"P2 4 3 255 255 0\n255 255 0 0 255 255 255 255 255 0 7 x y z").unwrap();
    assert_eq!(q.live, p.live);
    // Binary (P5), 8 and 16 bits per pixel.
    let mut raw = b"P5\n4 3\n255\n".to_vec();
    raw.extend_from_slice(&[255, 0, 255, 255, 0, 0, 255, 255, 255, 255, 255, 0]);
    assert_eq!(pgm(&raw).unwrap().live, p.live);
    let mut wide = b"P5 2 2 65535\n".to_vec();
    wide.extend_from_slice(&[0, 0, 1, 0, 0, 1, 0, 0]);
    assert_eq!(pgm(&wide).unwrap().live, vec![0, 3]);
}

#[test]
fn bad_pgm_images_are_clear_errors() {
    for (bytes, needle) in [
        (&b""[..], "too short"),
        (b"P6\n1 1\n255\n", "not P2 or P5"),
        (b"P2\n", "width"),
        (b"P2\n4\n", "height"),
        (b"P2 4 x 255\n", "height"),
        (b"P2 0 3 255\n", "at least one cell"),
        (b"P2 70000 70000 255\n", "2^32"),
        (b"P2 2 2 0\n0 0 0 0", "maximum gray value"),
        (b"P2 2 2 255\n0 0 0", "truncated"),
        (b"P2 2 2 255\n0 0 0 x", "unexpected"),
        (b"P2 2 2 255\n0 0 0 300", "above the maximum"),
        (b"P5 2 2 255\n\x00\x00\x00", "truncated"),
        (b"P2 99999999999 2 255\n", "too large"),
    ] {
        let err = pgm(bytes).unwrap_err();
        assert!(err.contains(needle), "{:?}: {err}", String::from_utf8_lossy(bytes));
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynasoar-gol-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A ustar archive holding `files` (written by hand: the tests do not depend on `tar`).
fn tar(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in files {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..108].copy_from_slice(b"0000644\0");
        h[108..116].copy_from_slice(b"0000000\0");
        h[116..124].copy_from_slice(b"0000000\0");
        h[124..136].copy_from_slice(format!("{:011o}\0", data.len()).as_bytes());
        h[136..148].copy_from_slice(b"00000000000\0");
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| b as u32).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out.resize(out.len().next_multiple_of(512), 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// `data` gzipped with stored (uncompressed) deflate blocks (the tests do not depend on
/// `flate2`).
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    let chunks: Vec<&[u8]> = data.chunks(65535).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        out.push((i + 1 == chunks.len()) as u8);
        let len = chunk.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&(!crc).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

#[test]
fn patterns_load_from_files_and_archives() {
    let dir = temp_dir("archives");
    let image = b"P2\n# glider\n6 6\n1\n1 1 0 1 1 1\n1 1 1 0 1 1\n1 0 0 0 1 1\n1 1 1 1 1 1\n1 1 1 1 1 1\n1 1 1 1 1 1\n";
    let expected = cells(6, &[(2, 0), (3, 1), (1, 2), (2, 2), (3, 2)]);
    let file = dir.join("g.pgm");
    std::fs::write(&file, image).unwrap();
    let p = Pattern::load(file.to_str().unwrap()).unwrap();
    assert_eq!((p.name.as_str(), p.live.clone()), ("g.pgm", expected.clone()));

    let archive = tar(&[("README", b"hello"), ("dir/g.pgm", image), ("big.pgm", &vec![b'1'; 70_000])]);
    let tar_path = dir.join("patterns.tar");
    std::fs::write(&tar_path, &archive).unwrap();
    let gz_path = dir.join("patterns.tar.gz");
    std::fs::File::create(&gz_path).unwrap().write_all(&gzip_stored(&archive)).unwrap();
    for path in [&tar_path, &gz_path] {
        for member in ["g.pgm", "dir/g.pgm"] {
            let p = Pattern::load(&format!("{}:{member}", path.display())).unwrap();
            assert_eq!(p.live, expected, "{member} in {}", path.display());
        }
        let err = format!("{:#}", Pattern::load(&format!("{}:nope.pgm", path.display())).unwrap_err());
        assert!(err.contains("no member `nope.pgm`") && err.contains("dir/g.pgm"), "{err}");
        let err = format!("{:#}", Pattern::load(&format!("{}:README", path.display())).unwrap_err());
        assert!(err.contains("not a PGM image") && err.contains("README"), "{err}");
    }
    let garbage = dir.join("garbage.tar.gz");
    std::fs::write(&garbage, b"this is not gzip").unwrap();
    assert!(Pattern::load(&format!("{}:g.pgm", garbage.display())).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rendering_writes_frames() {
    let dir = temp_dir("render");
    let p = Pattern::glider(16, 16).unwrap();
    let args = RenderArgs { render: Some(dir.clone()), render_every: 4, gif: true, render_width: 64 };
    for implementation in ALL {
        let cfg = Config { verify: false, ..implementation.config(8, &p) };
        let mut recorder = Recorder::new(&args).unwrap();
        run(implementation.0, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap();
        assert_eq!(recorder.finish().unwrap(), 3, "frames 0, 4 and 8");
    }
    for f in ["frame_000000.png", "frame_000004.png", "frame_000008.png", "animation.gif"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    // Small grids are scaled up, large ones down (alive cells stay visible).
    let up = draw(16, 8, &[0, 17], 64);
    assert_eq!((up.width(), up.height()), (64, 32));
    assert_eq!(up.image.get_pixel(5, 5).0, [255, 255, 255]);
    assert_eq!(up.image.get_pixel(3, 0).0, [255, 255, 255]);
    assert_eq!(up.image.get_pixel(4, 0).0, [0, 0, 0]);
    let down = draw(1000, 500, &[0, 999 * 1000 / 2], 100);
    assert_eq!((down.width(), down.height()), (100, 50));
    assert!(down.image.get_pixel(0, 0).0[0] > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Whether a missing benchmark archive fails the tests that need it instead of skipping them:
/// in CI (`CI` set to anything but empty, `false` or `0`), which runs beside the project's
/// shared data folder, and on the GPU machine (`DYNASOAR_REQUIRE_GPU=1`), whose bundle carries
/// the data in `DYNASOAR_DATA`.
fn data_required() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    ci || std::env::var(REQUIRE_GPU_VAR).is_ok_and(|v| v == "1")
}

/// The benchmark archive; `None` (after printing why the test is skipped) where this machine
/// has none and [`data_required`] is false, a panic where it is true.
fn data_archive(test: &str) -> Option<PathBuf> {
    if let Some(found) = find_archive() {
        return Some(found);
    }
    let dirs: Vec<String> = data_dirs().iter().map(|d| d.display().to_string()).collect();
    let why = format!("no game-of-life/{} in any of {} (set {DATA_VAR})", config::ARCHIVE, dirs.join(", "));
    if data_required() {
        panic!("{test}: {why}; CI and the GPU bundle must have it");
    }
    println!("skipping {test}: {why}");
    None
}

fn tm_pattern(archive: &Path) -> Pattern {
    let p = Pattern::load(&format!("{}:tm.pgm", archive.display())).unwrap();
    assert_eq!((p.width, p.height, p.live.len()), (1714, 1647, 36_549));
    p
}

#[test]
fn turing_machine_matches_the_host_reference() {
    let Some(archive) = data_archive("turing_machine_matches_the_host_reference") else { return };
    let p = tm_pattern(&archive);
    let steps = 4;
    let expected = reference_run(&p, steps);
    for implementation in [DSL, SOA_LISTS, SOA_DENSE] {
        assert_eq!(
            simulate(implementation, Backend::Cpu, &p, steps).live,
            expected,
            "{}",
            implementation.name()
        );
    }
}

#[test]
fn gpu_gives_the_same_cells_as_cpu() {
    if gpu_executor("gpu_gives_the_same_cells_as_cpu").is_none() {
        return;
    }
    let p = Pattern::random(700, 500, 0.35, 11).unwrap();
    let steps = 150;
    let expected = reference_run(&p, steps);
    let cpu = simulate(DSL, Backend::Cpu, &p, steps);
    assert_eq!(cpu.live, expected);
    for implementation in ALL {
        let gpu = simulate(implementation, Backend::Cuda, &p, steps);
        assert_eq!(gpu.live, cpu.live, "{} on the GPU", implementation.name());
        if implementation == DSL {
            assert_eq!(gpu.candidates, cpu.candidates, "candidates on the GPU");
        }
    }
    // Small patterns too (few objects: mostly partly filled warps and blocks).
    for p in
        [Pattern::glider(40, 40).unwrap(), Pattern::blinker(5, 5).unwrap(), Pattern::block(4, 4).unwrap()]
    {
        let cpu = simulate(DSL, Backend::Cpu, &p, 60);
        let gpu = simulate(DSL, Backend::Cuda, &p, 60);
        assert_eq!((gpu.live, gpu.candidates), (cpu.live, cpu.candidates), "{}", p.name);
    }
}

#[test]
fn gpu_turing_machine_matches_the_host_reference() {
    if gpu_executor("gpu_turing_machine_matches_the_host_reference").is_none() {
        return;
    }
    let Some(archive) = data_archive("gpu_turing_machine_matches_the_host_reference") else { return };
    let p = tm_pattern(&archive);
    let steps = 300;
    let expected = reference_run(&p, steps);
    for implementation in ALL {
        let o = simulate(implementation, Backend::Cuda, &p, steps);
        assert_eq!(o.live, expected, "{} on the GPU", implementation.name());
    }
}
