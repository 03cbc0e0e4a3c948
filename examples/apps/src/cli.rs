//! What the app binaries share as command-line programs: output that ends quietly when its
//! reader goes away, error messages that name the apps' flags, host buffers that fail with a
//! message instead of aborting, and the note about the GPU-sized defaults on the CPU.

use std::io::Write;
use std::process::ExitCode;

use dynasoar::host::BackendKind;

/// `println!` for the apps' results: writes one line to stdout and, when stdout is a pipe whose
/// reader has gone (`app | head -1`), ends the process quietly with success instead of
/// panicking; any other write error ends it with a one-line error.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::cli::write_stdout_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cli::write_stdout_line(format_args!($($arg)*))
    };
}

/// Write `line` and a newline to stdout (see [`outln!`]).
pub fn write_stdout_line(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let written = out.write_fmt(line).and_then(|()| out.write_all(b"\n")).and_then(|()| out.flush());
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // Whoever reads our output has all they wanted.
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

/// End the app: success, or the error on one line (`error: ...`, flags named as the apps name
/// them, see [`cli_message`]) and failure. For apps with a `--heap-mib` option.
pub fn exit_on_error(result: anyhow::Result<()>) -> ExitCode {
    finish(result, true)
}

/// [`exit_on_error`] for apps without a `--heap-mib` option (their heaps are sized for the
/// problem).
pub fn exit_on_error_without_heap_flag(result: anyhow::Result<()>) -> ExitCode {
    finish(result, false)
}

fn finish(result: anyhow::Result<()>, heap_flag: bool) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_line(&e, heap_flag));
            ExitCode::FAILURE
        }
    }
}

/// `e` and its causes on one line (as `{e:#}` writes them), each through [`cli_message`].
pub fn error_line(e: &anyhow::Error, heap_flag: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let said = parts.iter().any(|p| p.contains("--heap-mib"));
        parts.push(cli_message(&cause.to_string(), heap_flag && !said));
    }
    parts.join(": ")
}

/// The host library's advice, which names its Rust API, and what to do instead at the apps'
/// command line. Each pair: the library's words, then ours (`None`: the advice to grow the
/// heap, which depends on the app).
const LIBRARY_ADVICE: &[(&str, Option<&str>)] = &[
    ("; give the runtime a larger `aos_capacity`", None),
    ("; give the runtime a larger heap", None),
    ("; give it a larger heap", None),
    ("Backend::Cpu (--backend cpu)", Some("--backend cpu")),
    ("let Backend::Auto pick", Some("use --backend auto")),
    ("create a new Executor/Runtime in a new process", Some("run the app again")),
];

/// A message of the host library (dynasoar-host), as app users should read it: its advice in
/// terms of the Rust API (`RuntimeBuilder::heap_bytes`, `aos_capacity`, `Backend::Cpu`) becomes
/// the apps' flags (`--heap-mib`, `--backend cpu`). The library's text is not changed; the apps
/// map it here. With `heap_flag`, advice to grow the heap names `--heap-mib` (which sizes the
/// object tables of general-purpose allocators too); without, it is dropped.
pub fn cli_message(message: &str, heap_flag: bool) -> String {
    let mut out = message.to_string();
    for &(library, ours) in LIBRARY_ADVICE {
        let Some(at) = out.find(library) else { continue };
        match ours {
            Some(ours) => out.replace_range(at..at + library.len(), ours),
            None => {
                // The advice runs to the end of the library's message.
                out.truncate(at);
                if heap_flag {
                    out.push_str("; rerun with a larger --heap-mib");
                }
            }
        }
    }
    out
}

/// `n` values `f(0), f(1), ...` in a vector whose memory is reserved first: when the host does
/// not have it, an error naming `what` and the flag to make smaller, instead of an abort.
pub fn try_collect<T>(n: u64, what: &str, flag: &str, f: impl FnMut(u64) -> T) -> anyhow::Result<Vec<T>> {
    let mut v = try_with_capacity(n, what, flag)?;
    v.extend((0..n).map(f));
    Ok(v)
}

/// An empty vector with room for `n` values, or an error naming `what` and `flag` when the
/// host cannot give the memory: more than it has available (`MemAvailable` on Linux; memory
/// promised beyond that would be killed or swapped to death when touched), or more than the
/// allocator gives.
pub fn try_with_capacity<T>(n: u64, what: &str, flag: &str) -> anyhow::Result<Vec<T>> {
    let bytes = n.saturating_mul(size_of::<T>() as u64);
    ensure_host_memory(bytes, n, what, flag)?;
    let fail = || anyhow::anyhow!("out of host memory: {n} {what} need {bytes} bytes; use a smaller {flag}");
    let n = usize::try_from(n).map_err(|_| fail())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| fail())?;
    Ok(v)
}

/// Fail, naming `flag`, if `bytes` (what `n` `what` need, all told) are more than the host has
/// available: memory promised beyond that gets the process killed (or swapped to death) when
/// touched, instead of an error.
pub fn ensure_host_memory(bytes: u64, n: u64, what: &str, flag: &str) -> anyhow::Result<()> {
    if let Some(available) = available_memory()
        && bytes > available
    {
        anyhow::bail!(
            "out of host memory: {n} {what} need about {bytes} bytes, the host has {available} available; \
             use a smaller {flag}"
        );
    }
    Ok(())
}

/// Bytes of memory the host has available (Linux: `MemAvailable` of `/proc/meminfo`), if known;
/// less if this process may map less (its address-space limit, `ulimit -v`), since it could not
/// allocate more.
fn available_memory() -> Option<u64> {
    let available = mem_available();
    match address_space_limit() {
        Some(limit) => Some(available.map_or(limit, |a| a.min(limit))),
        None => available,
    }
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn mem_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// This process's address-space limit in bytes (`Max address space` of `/proc/self/limits`),
/// if it has one.
fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..].split_whitespace().next()?.parse().ok()
}

/// `mib` MiB in bytes, for the apps' `--heap-mib` (at least 1).
pub fn heap_mib_bytes(mib: Option<u64>) -> anyhow::Result<Option<u64>> {
    match mib {
        None => Ok(None),
        Some(0) => anyhow::bail!("--heap-mib must be at least 1"),
        Some(mib) => match mib.checked_mul(1 << 20) {
            Some(bytes) => Ok(Some(bytes)),
            None => anyhow::bail!("--heap-mib {mib} is too large"),
        },
    }
}

/// The apps' policy for their default sizes, which are the GPU benchmark's: on the CPU they
/// run as asked, after a note (on stderr) that they can take minutes to hours and a smaller size
/// to try.
/// `at_default`: whether the run has the default size; `smaller`: the flags of a run that
/// takes seconds to minutes on a laptop.
pub fn note_cpu_default_size(kind: BackendKind, at_default: bool, app: &str, smaller: &str) {
    if kind == BackendKind::Cpu && at_default {
        eprintln!(
            "note: {app} runs at the GPU benchmark's default size, which can take minutes to hours on the CPU; \
             for a quick run, try {smaller}"
        );
    }
}

/// `n` and the noun `one` or `many`: "1 frame", "3 frames".
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_advice_becomes_flags() {
        let oom = "the device heap ran out of memory in kernel `k`: 3 allocation(s) got no object \
                   (heap of 100 bytes, 1 blocks); give the runtime a larger heap, e.g. \
                   RuntimeBuilder::heap_bytes(200) (or size it with RuntimeBuilder::heap_for)";
        let got = cli_message(oom, true);
        assert!(got.ends_with("(heap of 100 bytes, 1 blocks); rerun with a larger --heap-mib"), "{got}");
        assert!(!got.contains("RuntimeBuilder"), "{got}");
        assert!(!cli_message(oom, false).contains("heap-mib"));
        let table = "allocator `atomic` in kernel `k`: a class's object table is full (2 object(s) not \
                     created or not freed); give the runtime a larger `aos_capacity`";
        let got = cli_message(table, true);
        assert!(got.ends_with("not freed); rerun with a larger --heap-mib"), "{got}");
        let cuda = "no CUDA driver found (libcuda.so could not be loaded); install the NVIDIA driver, \
                    or run on the CPU with Backend::Cpu (--backend cpu) or let Backend::Auto pick";
        let got = cli_message(cuda, true);
        assert!(got.ends_with("run on the CPU with --backend cpu or use --backend auto"), "{got}");
    }

    #[test]
    fn heap_advice_once_per_chain() {
        let e = anyhow::anyhow!("the device heap ran out; give the runtime a larger heap")
            .context("structure ran out of its 8 MiB heap (try a larger --heap-mib)");
        let line = error_line(&e, true);
        assert_eq!(line.matches("--heap-mib").count(), 1, "{line}");
    }

    #[test]
    fn try_collect_fails_cleanly() {
        let err = try_collect(u64::MAX / 2, "bodies", "--bodies", |i| i).unwrap_err();
        assert!(err.to_string().contains("use a smaller --bodies"), "{err}");
        assert_eq!(try_collect(3, "values", "--len", |i| i * 2).unwrap(), vec![0, 2, 4]);
        assert_eq!(plural(1, "frame", "frames"), "1 frame");
        assert_eq!(plural(2, "frame", "frames"), "2 frames");
    }
}
