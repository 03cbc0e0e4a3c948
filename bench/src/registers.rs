//! Register counts of every allocator's `malloc` and `free` (the survey's section 4.1):
//! `ptxas -v` over the benchmark PTX, which holds one probe kernel per allocator and operation
//! (`dynasoar_bench_kernels::probes::REGISTER_PROBES`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use dynasoar::baselines::malloc::MallocKind;
use dynasoar_bench_kernels::probes::REGISTER_PROBES;
use serde::Serialize;

/// What `ptxas -v` says about one kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelInfo {
    pub registers: u32,
    pub stack_bytes: u32,
    pub spill_bytes: u32,
}

/// One allocator's line of the report.
#[derive(Clone, Debug, Serialize)]
pub struct RegisterRecord {
    pub test: &'static str,
    pub allocator: &'static str,
    pub arch: String,
    pub malloc_registers: Option<u32>,
    pub free_registers: Option<u32>,
    pub malloc_stack_bytes: Option<u32>,
    pub free_stack_bytes: Option<u32>,
    pub malloc_spill_bytes: Option<u32>,
    pub free_spill_bytes: Option<u32>,
}

/// The `ptxas` to run: `DYNASOAR_PTXAS`, else `ptxas` on the `PATH`.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("DYNASOAR_PTXAS") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("ptxas")).find(|p| p.is_file())
}

/// Run `ptxas -v` for `arch` on the `entries` of `ptx` (written to a file in `scratch`) and
/// read their registers, stack and spills. Naming the entries (`-e`) keeps ptxas from
/// compiling the whole module's hundreds of kernels.
pub fn ptxas_report(
    ptxas: &Path,
    ptx: &str,
    entries: &[&str],
    arch: &str,
    scratch: &Path,
) -> anyhow::Result<HashMap<String, KernelInfo>> {
    let input = scratch.join("models.ptx");
    std::fs::write(&input, ptx).with_context(|| format!("cannot write {}", input.display()))?;
    let output = Command::new(ptxas)
        .arg("-v")
        .arg(format!("-arch={arch}"))
        .arg("-e")
        .arg(entries.join(","))
        .arg(&input)
        .arg("-o")
        .arg(scratch.join("models.cubin"))
        .output()
        .with_context(|| format!("cannot run {} (set DYNASOAR_PTXAS to a ptxas binary)", ptxas.display()))?;
    let _ = std::fs::remove_file(scratch.join("models.cubin"));
    let _ = std::fs::remove_file(&input);
    let text =
        String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!("{} failed ({}):\n{}", ptxas.display(), output.status, tail(&text, 20));
    }
    Ok(parse_ptxas(&text))
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Parse `ptxas -v` output: an entry's register line follows `Compiling entry function
/// 'NAME'`; its stack and spills follow `Function properties for NAME` (the properties of the
/// functions it calls, which follow too, are not the entry's).
pub fn parse_ptxas(text: &str) -> HashMap<String, KernelInfo> {
    let mut kernels: HashMap<String, KernelInfo> = HashMap::new();
    let (mut entry, mut properties_of): (Option<String>, Option<String>) = (None, None);
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            entry = rest.split('\'').next().map(str::to_string);
            continue;
        }
        if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of = Some(rest.trim().to_string());
            continue;
        }
        let Some(name) = &entry else { continue };
        if properties_of.as_ref() == Some(name) {
            if let Some(n) = number_before(line, " bytes stack frame") {
                kernels.entry(name.clone()).or_default().stack_bytes = n;
            }
            if let Some(n) = number_before(line, " bytes spill stores") {
                kernels.entry(name.clone()).or_default().spill_bytes = n;
            }
        }
        if let Some(rest) = line.split("Used ").nth(1)
            && let Some(n) = number_before(rest, " registers")
        {
            kernels.entry(name.clone()).or_default().registers = n;
        }
    }
    kernels
}

/// The number right before `suffix` in `line`.
fn number_before(line: &str, suffix: &str) -> Option<u32> {
    let head = &line[..line.find(suffix)?];
    let digits: String = head.chars().rev().take_while(char::is_ascii_digit).collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

/// The probe entries of `kinds` (malloc and free of each).
pub fn probe_entries(kinds: &[MallocKind]) -> Vec<&'static str> {
    REGISTER_PROBES.iter().filter(|p| kinds.contains(&p.0)).flat_map(|p| [p.1, p.2]).collect()
}

/// One record per allocator in `kinds`, from `kernels`.
pub fn records(
    kernels: &HashMap<String, KernelInfo>,
    kinds: &[MallocKind],
    arch: &str,
) -> Vec<RegisterRecord> {
    kinds
        .iter()
        .map(|&kind| {
            let probe = REGISTER_PROBES.iter().find(|p| p.0 == kind);
            let malloc = probe.and_then(|p| kernels.get(p.1));
            let free = probe.and_then(|p| kernels.get(p.2));
            RegisterRecord {
                test: "registers",
                allocator: kind.name(),
                arch: arch.to_string(),
                malloc_registers: malloc.map(|k| k.registers),
                free_registers: free.map(|k| k.registers),
                malloc_stack_bytes: malloc.map(|k| k.stack_bytes),
                free_stack_bytes: free.map(|k| k.stack_bytes),
                malloc_spill_bytes: malloc.map(|k| k.spill_bytes),
                free_spill_bytes: free.map(|k| k.spill_bytes),
            }
        })
        .collect()
}

/// CSV of `records`.
pub fn csv(records: &[RegisterRecord]) -> String {
    fn opt(v: Option<u32>) -> String {
        v.map(|v| v.to_string()).unwrap_or_default()
    }
    let mut out = String::from(
        "allocator,arch,malloc_registers,free_registers,malloc_stack_bytes,free_stack_bytes,malloc_spill_bytes,free_spill_bytes\n",
    );
    for r in records {
        out += &format!(
            "{},{},{},{},{},{},{},{}\n",
            r.allocator,
            r.arch,
            opt(r.malloc_registers),
            opt(r.free_registers),
            opt(r.malloc_stack_bytes),
            opt(r.free_stack_bytes),
            opt(r.malloc_spill_bytes),
            opt(r.free_spill_bytes)
        );
    }
    out
}

/// The human table of `records`.
pub fn table(records: &[RegisterRecord]) -> String {
    fn opt(v: Option<u32>) -> String {
        v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
    }
    let mut out = format!(
        "{:<22} {:>10} {:>10} {:>13} {:>13}\n",
        "allocator", "malloc reg", "free reg", "malloc stack", "free stack"
    );
    for r in records {
        out += &format!(
            "{:<22} {:>10} {:>10} {:>13} {:>13}\n",
            r.allocator,
            opt(r.malloc_registers),
            opt(r.free_registers),
            opt(r.malloc_stack_bytes),
            opt(r.free_stack_bytes)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_probe_pair() {
        for &kind in MallocKind::ALL {
            assert!(REGISTER_PROBES.iter().any(|p| p.0 == kind), "{kind} has no register probe");
        }
    }

    #[test]
    fn parses_ptxas_verbose_output() {
        let text = "ptxas info    : 0 bytes gmem\n\
            ptxas info    : Compiling entry function 'dynasoar_probe_malloc__atomic' for 'sm_90'\n\
            ptxas info    : Function properties for dynasoar_probe_malloc__atomic\n\
            \x20   16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
            ptxas info    : Used 23 registers, used 0 barriers, 392 bytes cmem[0]\n\
            ptxas info    : Function properties for callee\n\
            \x20   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Compiling entry function 'other' for 'sm_90'\n\
            ptxas info    : Used 8 registers, 360 bytes cmem[0]\n";
        let kernels = parse_ptxas(text);
        assert_eq!(
            kernels["dynasoar_probe_malloc__atomic"],
            KernelInfo { registers: 23, stack_bytes: 16, spill_bytes: 4 }
        );
        assert_eq!(kernels["other"].registers, 8);
        let records = records(&kernels, &[MallocKind::Atomic], "sm_90");
        assert_eq!(records[0].malloc_registers, Some(23));
        assert_eq!(records[0].free_registers, None);
    }
}
