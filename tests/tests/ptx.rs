//! Checks of the generated PTX that need no GPU: scopes of atomics, the entry points' waits for
//! the grids before them (builds for sm_90 on), and assembly by NVIDIA's `ptxas` for sm_75 and
//! sm_90 (when available; `.ci/run` installs it from PyPI).

use std::path::PathBuf;
use std::process::Command;

use dynasoar_examples::{MODELS_AOS_PTX, MODELS_BITMAP_PTX, MODELS_PTX};

/// The three builds of the models: for DynaSOAr's heap, for AOS stores, and for BitmapAlloc's
/// store with one allocation bitmap per class (an AOS build too: relocatable, `-aos`).
const BUILDS: [(&str, &str); 3] =
    [("models", MODELS_PTX), ("models-aos", MODELS_AOS_PTX), ("models-bitmap-aos", MODELS_BITMAP_PTX)];

#[test]
fn ptx_has_the_expected_entry_points() {
    for (name, ptx) in BUILDS {
        let entries = [
            "histogram",
            "trap_at",
            "dynasoar_heap_init",
            "dynasoar_heap_enumerate",
            // The hierarchical enumeration (paper Alg. 5): containers, then their blocks.
            "dynasoar_heap_enumerate_containers",
            "dynasoar_heap_enumerate_blocks",
        ];
        for entry in entries {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{name}: missing entry {entry}");
        }
    }
    // The comparison suite's kernels are in the AOS build only: a model built the default way
    // gets none of them.
    for entry in ["dynasoar_aos_mark", "dynasoar_malloc_storm", "dynasoar_malloc_init"] {
        assert!(MODELS_AOS_PTX.contains(&format!(".entry {entry}(")), "models-aos: missing entry {entry}");
    }
    // Each of the suite's two object stores is in its own build only: the AOS build (which
    // every other general allocator runs) has no BitmapAlloc store, the BitmapAlloc build no
    // compaction of pointer tables.
    for entry in ["dynasoar_bitmap_list", "dynasoar_malloc_init"] {
        assert!(
            MODELS_BITMAP_PTX.contains(&format!(".entry {entry}(")),
            "models-bitmap-aos: missing {entry}"
        );
    }
    assert!(!MODELS_AOS_PTX.contains("dynasoar_bitmap_list"), "models-aos: holds BitmapAlloc's store");
    assert!(!MODELS_BITMAP_PTX.contains("dynasoar_aos_"), "models-bitmap-aos: holds the AOS compaction");
    assert!(!MODELS_PTX.contains("dynasoar_bitmap_list"), "models: holds BitmapAlloc's store");
    let suite: Vec<&str> = MODELS_PTX
        .lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .filter(|e| {
            e.starts_with("dynasoar_aos")
                || e.starts_with("dynasoar_malloc")
                || e.starts_with("dynasoar_probe")
        })
        .collect();
    assert!(
        suite.is_empty(),
        "models: the comparison suite's kernels leaked into the default build: {suite:?}"
    );
}

#[test]
fn each_build_makes_objects_in_its_own_store_only() {
    // `make_new` is resolved at compile time: the AOS build calls the general allocators'
    // dispatcher and never DynaSOAr's allocator, the SOA build the other way round.
    let constructor = |ptx: &str| {
        let start =
            ptx.find(".entry dynasoar_new__DemoAlloc__Foo__create(").expect("the API example's constructor");
        let end = ptx[start..].find("\n}\n").map_or(ptx.len(), |e| start + e);
        ptx[start..end].to_string()
    };
    let (soa, aos) = (constructor(MODELS_PTX), constructor(MODELS_AOS_PTX));
    assert!(!soa.contains("AnyMalloc6malloc") && aos.contains("AnyMalloc6malloc"));
    // The BitmapAlloc build's constructor takes a slot of BitmapAlloc itself (no dispatcher).
    let bitmap = constructor(MODELS_BITMAP_PTX);
    assert!(!bitmap.contains("AnyMalloc6malloc") && !bitmap.contains("4Heap8allocate"));
    // DynaSOAr's `Heap::allocate` is kept out of line (its search inlined into it keeps the
    // kernels' register counts down), so the SOA constructor calls it; the AOS one never does.
    assert!(soa.contains("4Heap8allocate") && !aos.contains("4Heap8allocate"));
    // The reservation itself (a 64-bit `or` on a block's allocation bitmap, an acquire, so
    // that the block's type is read after it) lives in that function, which the SOA build has
    // and the AOS build's constructor never reaches.
    assert!(MODELS_PTX.contains("atom.acquire.gpu.global.or.b64"));
}

#[test]
fn every_atomic_and_fence_is_gpu_scoped() {
    // `.sys` scope (what Rust's own atomics give on nvptx) is never wanted: system-wide
    // coherence costs on every access and no allocator state is shared with the CPU.
    // Atomics also name the `.global` state space (ARCHITECTURE.md): our asm puts each in a
    // `{ ... }` block after a `cvta.to.global`, so statements are checked wherever they lie on a
    // line.
    let mut atomics = 0;
    for (name, ptx) in BUILDS {
        for (n, line) in ptx.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for statement in code.split([';', '{', '}']).map(str::trim) {
                let is_memory_op = ["atom.", "red.", "fence.", "membar", "ld.", "st."]
                    .iter()
                    .any(|p| statement.starts_with(p));
                if is_memory_op {
                    assert!(
                        !statement.contains(".sys"),
                        "{name} line {}: system-scoped operation `{statement}`",
                        n + 1
                    );
                }
                if statement.starts_with("atom.")
                    || statement.starts_with("red.")
                    || statement.starts_with("fence.")
                {
                    assert!(
                        statement.contains(".gpu"),
                        "{name} line {}: atomic or fence without .gpu scope: `{statement}`",
                        n + 1
                    );
                }
                if statement.starts_with("atom.") || statement.starts_with("red.") {
                    atomics += 1;
                    assert!(
                        statement.contains(".global"),
                        "{name} line {}: atomic on a generic address: `{statement}`",
                        n + 1
                    );
                }
            }
        }
    }
    assert!(atomics > 1000, "only {atomics} atomics found: the check no longer sees them");
}

/// The number of the PTX's `.target sm_XY` (its first line of that form).
fn target_sm(ptx: &str) -> u32 {
    let line = ptx.lines().find_map(|l| l.trim().strip_prefix(".target sm_")).expect("a .target sm_ line");
    line.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().expect("an sm number")
}

/// Each entry point's name and body (up to the first line that is only `}`).
fn entry_bodies(ptx: &str) -> Vec<(&str, &str)> {
    bodies(ptx, ".entry ")
}

/// The body of entry point `name` among `bodies` (from [`entry_bodies`]).
fn entry_body<'a>(bodies: &[(&str, &'a str)], name: &str) -> &'a str {
    bodies.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no entry {name}")).1
}

/// How many fences `body` has.
fn fences(body: &str) -> usize {
    body.matches("fence.").count()
}

/// Each function's name (its mangled symbol) and body, as [`entry_bodies`] for entry points.
fn function_bodies(ptx: &str) -> Vec<(&str, &str)> {
    bodies(ptx, ".func ")
}

/// The name and body of each `directive` (`.entry ` or `.func `): `directive NAME(`, or
/// `directive (.param ..) NAME(` for a function that returns a value.
fn bodies<'a>(ptx: &'a str, directive: &str) -> Vec<(&'a str, &'a str)> {
    ptx.split(directive)
        .skip(1)
        .map(|rest| {
            let rest = rest.trim_start();
            let named = if rest.starts_with('(') {
                rest[rest.find(')').map_or(0, |i| i + 1)..].trim_start()
            } else {
                rest
            };
            let name = &named[..named.find('(').unwrap_or(named.len())];
            (name, &named[..named.find("\n}").unwrap_or(named.len())])
        })
        .collect()
}

/// From sm_90 on, every entry point first waits for the grids before it
/// (`griddepcontrol.wait`): the CUDA backend launches such kernels as programmatic dependent
/// launches, and one that did not wait could read what the kernel before it has not written
/// yet. A build for an older GPU has no such instruction (its PTX would not assemble). CI
/// builds for sm_70; the GPU bundle's test binaries embed builds for sm_90.
#[test]
fn entry_points_wait_for_prior_grids_exactly_in_builds_for_sm_90_on() {
    for (name, ptx) in BUILDS {
        let sm = target_sm(ptx);
        let entries = entry_bodies(ptx);
        assert!(entries.len() > 10, "{name}: only {} entry points found", entries.len());
        let waiting: Vec<&str> = entries
            .iter()
            .filter(|(_, body)| body.contains("griddepcontrol.wait"))
            .map(|(n, _)| *n)
            .collect();
        if sm >= 90 {
            let not: Vec<&str> = entries.iter().map(|(n, _)| *n).filter(|n| !waiting.contains(n)).collect();
            assert!(not.is_empty(), "{name} (sm_{sm}): entry points that do not wait first: {not:?}");
        } else {
            assert!(!ptx.contains("griddepcontrol"), "{name} (sm_{sm}): waits in {waiting:?}");
        }
        println!(
            "{name}: sm_{sm}, {} entry points, {} wait for the grids before them",
            entries.len(),
            waiting.len()
        );
    }
}

/// A free in a launch that creates nothing leaves out the fence that orders the thread's
/// accesses to the object before a reuse of its slot in the same launch
/// (`ObjectStore::free_in_launch_creating_nothing`): the do-all kernel of
/// `Cat::leave_if_odd_declared` (`#[parallel(frees(Cat))]`) has one fence fewer than that of
/// `Cat::leave_if_odd`, the same body with undeclared effects, which may create and so keeps it.
#[test]
fn frees_in_launches_that_create_nothing_have_no_fence() {
    let bodies = entry_bodies(MODELS_PTX);
    let fences = |name: &str| fences(entry_body(&bodies, name));
    let undeclared = fences("dynasoar_do__Zoo__Cat__leave_if_odd");
    let declared = fences("dynasoar_do__Zoo__Cat__leave_if_odd_declared");
    println!("fences: leave_if_odd {undeclared}, leave_if_odd_declared {declared}");
    assert!(undeclared > 0, "leave_if_odd's kernel has no fence: the free is no longer inlined into it");
    assert_eq!(
        declared + 1,
        undeclared,
        "a free in a launch that creates nothing should have exactly one fence fewer"
    );
}

/// A free in a launch that creates objects of other classes only leaves out the fence too, and
/// keeps a block it empties with its class instead of freeing it (no invalidation, no fences
/// before the free bitmap's write; `ObjectStore::free_in_launch_not_creating_its_class`): the
/// do-all kernel of `Cat::make_way_for_a_dog` (`#[parallel(creates(Dog), frees(Cat))]`), whose
/// dog's allocation is out of line (`Heap::allocate_sole`), has no fence in its body, where
/// `Cat::leave_if_odd`'s free, with undeclared effects, has the fence and the emptied block's
/// two.
#[test]
fn frees_in_launches_that_create_other_classes_only_have_no_fence() {
    let bodies = entry_bodies(MODELS_PTX);
    let plain = entry_body(&bodies, "dynasoar_do__Zoo__Cat__leave_if_odd");
    let keeping = entry_body(&bodies, "dynasoar_do__Zoo__Cat__make_way_for_a_dog");
    println!("fences: leave_if_odd {}, make_way_for_a_dog {}", fences(plain), fences(keeping));
    assert!(fences(plain) >= 3, "leave_if_odd's free is no longer inlined with its fences");
    assert!(keeping.contains("Heap13allocate_sole"), "the dog's allocation is no longer out of line");
    assert_eq!(fences(keeping), 0, "the cat's free in make_way_for_a_dog has a fence");
}

/// In a launch that creates objects of one class only and frees none of them, a free of
/// another class does not wait for its block's bitmap (`Heap::free_in_sole_launch`): the do-all
/// kernel of `Cat::make_way_for_a_dog` clears the cat's slot with a `red.and` (as it clears the
/// slot's bit in a kept list's snapshot, `Heap::unlist`) and holds no atomic AND whose old value
/// it would wait for, where `Cat::leave_if_odd_declared`'s free (in a launch that creates
/// nothing) takes the old value for the block's transitions.
#[test]
fn frees_in_launches_that_create_one_other_class_only_do_not_wait_for_the_bitmap() {
    let bodies = entry_bodies(MODELS_PTX);
    let unwaited = entry_body(&bodies, "dynasoar_do__Zoo__Cat__make_way_for_a_dog");
    let waited = entry_body(&bodies, "dynasoar_do__Zoo__Cat__leave_if_odd_declared");
    let reductions = |body: &str| body.matches("red.relaxed.gpu.global.and.b64").count();
    let waits = |body: &str| body.matches("atom.relaxed.gpu.global.and.b64").count();
    println!(
        "AND reductions / atomics: make_way_for_a_dog {} / {}, leave_if_odd_declared {} / {}",
        reductions(unwaited),
        waits(unwaited),
        reductions(waited),
        waits(waited)
    );
    assert!(reductions(unwaited) > reductions(waited), "make_way_for_a_dog's free is no reduction");
    assert_eq!(waits(unwaited), 0, "make_way_for_a_dog's free waits for an old value");
    assert!(waits(waited) > 0, "leave_if_odd_declared's free no longer takes the old value");
}

/// A launch that creates one class only and frees none of it (`#[parallel(creates(Cat))]`)
/// allocates through `Heap::allocate_sole`, whose reservations are relaxed: the allocation of
/// `Cat::have_kitten` (undeclared: it may free, so blocks may change class during its launch)
/// reserves with acquires, that of `Cat::have_declared_kitten` with none.
#[test]
fn allocations_in_launches_that_create_one_class_only_reserve_without_acquire() {
    let functions = function_bodies(MODELS_PTX);
    let allocator = |which: &str| {
        functions
            .iter()
            .find(|(n, _)| n.contains(which) && n.contains("semantics3Cat"))
            .unwrap_or_else(|| panic!("no out-of-line {which} of Cat"))
    };
    let (plain, plain_body) = allocator("Heap8allocate");
    let (sole, sole_body) = allocator("Heap13allocate_sole");
    let acquires = |body: &str| body.matches("atom.acquire.gpu").count();
    println!("acquires: allocate {}, allocate_sole {}", acquires(plain_body), acquires(sole_body));
    assert!(acquires(plain_body) > 0, "Heap::allocate's reservations are acquires");
    assert_eq!(acquires(sole_body), 0, "Heap::allocate_sole reserves with relaxed ORs");
    let bodies = entry_bodies(MODELS_PTX);
    let calls = |entry: &str, f: &str| entry_body(&bodies, entry).contains(f);
    assert!(calls("dynasoar_do__Zoo__Cat__have_kitten", plain), "have_kitten allocates with Heap::allocate");
    assert!(
        calls("dynasoar_do__Zoo__Cat__have_declared_kitten", sole),
        "have_declared_kitten (creates(Cat) only) allocates with Heap::allocate_sole"
    );
}

fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DYNASOAR_PTXAS").map(PathBuf::from)
        && p.is_file()
    {
        return Some(p);
    }
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.tools/ptxas/nvidia/cu13/bin/ptxas");
    if local.is_file() {
        return Some(local);
    }
    Command::new("ptxas")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "ptxas".into())
}

#[test]
fn ptxas_assembles_the_models_for_sm75_and_sm90() {
    let Some(ptxas) = find_ptxas() else {
        println!("skipping: ptxas not found (run scripts/install-ptxas.sh or set DYNASOAR_PTXAS)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("dynasoar-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, source) in BUILDS {
        let ptx = dir.join(format!("{name}.ptx"));
        std::fs::write(&ptx, source).unwrap();
        // A build for sm_90 (the GPU bundle's) assembles for sm_90 only.
        let archs: &[&str] = if target_sm(source) >= 90 { &["sm_90"] } else { &["sm_75", "sm_90"] };
        for &arch in archs {
            // As the runtime compiles it: the AOS build as relocatable code (`-c`), the other
            // as one program (host backend/cuda_link.rs says why).
            let out = Command::new(&ptxas)
                .args(if name.ends_with("-aos") { &["-c"][..] } else { &[][..] })
                .arg(format!("-arch={arch}"))
                .arg("-v")
                .arg(&ptx)
                .arg("-o")
                .arg(dir.join(format!("{name}-{arch}.cubin")))
                .output()
                .expect("ptxas runs");
            let log = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{name}: ptxas -arch={arch} failed:\n{log}");
            let kernels = log.matches("Compiling entry function").count();
            assert!(kernels >= 2, "{name}: ptxas -arch={arch} compiled {kernels} entry points:\n{log}");
            println!("{name}: ptxas -arch={arch}: {kernels} entry points assembled");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
