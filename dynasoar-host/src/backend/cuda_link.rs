//! Building the executable cubin of a model through the driver's linker.
//!
//! Why not `cuModuleLoadData(ptx)`: that compiles the PTX as one whole program, and ptxas
//! then compiles every device function again for each kernel that calls it (its SASS names
//! the copies `kernel$function`). The object store's AOS kernels all call
//! `AnyMalloc::malloc`, which dispatches to all twenty-one allocators: measured with ptxas 13
//! for sm_90, one such kernel took 14 s and the AOS models' 3 MB of PTX 404 s (the SOA
//! models' 5 MB: 44 s). Compiled as relocatable code (`ptxas -c`, which is what the linker
//! does with PTX input) each function is compiled once: 10.6 s and 21 s.
//! Whole-program mode still makes the faster code where calls remain (measured on an H200:
//! n-body's DSL version 17.6 s whole-program, 32.0 s relocatable), so only the AOS build is
//! compiled this way ([`super::ModuleCompile`]).

use std::ffi::{CStr, c_char, c_uint, c_void};

use cudarc::driver::sys::{self, CUjit_option, CUjitInputType, CUresult};

/// What the linker is given: PTX text, or a relocatable cubin (`ptxas -c`).
pub enum LinkInput<'a> {
    Ptx(&'a str),
    RelocatableCubin(&'a [u8]),
}

const LOG_BYTES: usize = 16 * 1024;

/// Whether `cubin` is relocatable code (an ELF file of type `ET_REL`), which needs linking,
/// rather than an executable image the driver loads as it is.
pub fn is_relocatable(cubin: &[u8]) -> bool {
    const ET_REL: u16 = 1;
    cubin.starts_with(b"\x7fELF") && cubin.len() > 17 && u16::from_le_bytes([cubin[16], cubin[17]]) == ET_REL
}

/// Link `input` into an executable cubin for the device of the current context.
///
/// The caller has made the context current on this thread.
pub fn link(input: LinkInput<'_>) -> Result<Vec<u8>, String> {
    let mut error_log = vec![0u8; LOG_BYTES];
    let mut options =
        [CUjit_option::CU_JIT_ERROR_LOG_BUFFER, CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values = [error_log.as_mut_ptr() as *mut c_void, LOG_BYTES as *mut c_void];
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: the option arrays outlive the link state (destroyed below, before they drop);
    // the log buffer is LOG_BYTES long as the option says.
    let created = unsafe {
        sys::cuLinkCreate_v2(options.len() as c_uint, options.as_mut_ptr(), values.as_mut_ptr(), &mut state)
    };
    check(created, "cuLinkCreate", &error_log)?;
    let result = add_and_complete(state, input, &error_log);
    // SAFETY: `state` was created above and is destroyed once; the cubin was copied out.
    unsafe { sys::cuLinkDestroy(state) };
    result
}

fn add_and_complete(
    state: sys::CUlinkState,
    input: LinkInput<'_>,
    error_log: &[u8],
) -> Result<Vec<u8>, String> {
    // The driver wants PTX NUL-terminated and does not write to the input.
    let (kind, mut bytes) = match input {
        LinkInput::Ptx(ptx) => {
            let mut text = Vec::with_capacity(ptx.len() + 1);
            text.extend_from_slice(ptx.as_bytes());
            text.push(0);
            (CUjitInputType::CU_JIT_INPUT_PTX, text)
        }
        LinkInput::RelocatableCubin(cubin) => (CUjitInputType::CU_JIT_INPUT_CUBIN, cubin.to_vec()),
    };
    let name = c"dynasoar_models";
    // SAFETY: `bytes` lives across the call and has the length passed; no per-input options.
    let added = unsafe {
        sys::cuLinkAddData_v2(
            state,
            kind,
            bytes.as_mut_ptr() as *mut c_void,
            bytes.len(),
            name.as_ptr() as *const c_char,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    check(added, "cuLinkAddData", error_log)?;
    let mut cubin: *mut c_void = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: out-pointers to locals; the image stays valid until the state is destroyed,
    // and is copied before that.
    let completed = unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) };
    check(completed, "cuLinkComplete", error_log)?;
    // SAFETY: the driver returned an image of `size` bytes at `cubin`.
    Ok(unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec())
}

fn check(result: CUresult, call: &str, error_log: &[u8]) -> Result<(), String> {
    if result == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let log =
        CStr::from_bytes_until_nul(error_log).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Err(format!("{call} failed with {result:?}: {}", log.trim()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn elf_type_tells_relocatable_from_executable() {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[16] = 1;
        assert!(super::is_relocatable(&elf));
        elf[16] = 2;
        assert!(!super::is_relocatable(&elf));
        assert!(!super::is_relocatable(b"\x7fELF"));
        assert!(!super::is_relocatable(b"// PTX text"));
    }
}
