//! Host-side checks of what an allocator handed out (used by the tests on both backends).

extern crate alloc;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// Check allocations given as `(address, size)` (address 0: a failed malloc, skipped): every
/// one aligned to `align`, inside `bounds` (`start..end`) if given, and no two overlapping.
/// Returns the number of allocations checked, or what is wrong.
pub fn check_allocations(
    entries: &[(u64, u64)],
    align: u64,
    bounds: Option<(u64, u64)>,
) -> Result<usize, String> {
    let mut live: Vec<(u64, u64)> = entries.iter().copied().filter(|&(a, _)| a != 0).collect();
    for &(addr, size) in &live {
        if addr % align != 0 {
            return Err(format!("{addr:#x} ({size} bytes) is not aligned to {align} bytes"));
        }
        if let Some((start, end)) = bounds
            && (addr < start || addr + size > end)
        {
            return Err(format!("{addr:#x} ({size} bytes) is outside the pool {start:#x}..{end:#x}"));
        }
    }
    live.sort_unstable();
    for pair in live.windows(2) {
        let ((a, sa), (b, sb)) = (pair[0], pair[1]);
        if a + sa > b {
            return Err(format!("{a:#x} ({sa} bytes) overlaps {b:#x} ({sb} bytes)"));
        }
    }
    Ok(live.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_overlap_misalignment_and_escapes() {
        assert_eq!(check_allocations(&[(64, 16), (0, 8), (80, 16)], 16, Some((64, 96))), Ok(2));
        assert!(check_allocations(&[(64, 17), (80, 16)], 16, None).unwrap_err().contains("overlaps"));
        assert!(check_allocations(&[(72, 8)], 16, None).unwrap_err().contains("aligned"));
        assert!(check_allocations(&[(64, 64)], 16, Some((64, 96))).unwrap_err().contains("outside"));
    }
}
