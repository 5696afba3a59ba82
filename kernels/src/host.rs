//! The host C model of the kernels (`cuda/host_model.c`): the same per-citizen C functions the CUDA
//! kernels call, run on the CPU. It is how the kernels' logic is tested without a GPU.

use std::convert::Infallible;
use std::ffi::c_int;

use crate::encode::{Codes, EncodedColumns, EncodedProgram};
use crate::raw::{Place, Placeable, RawColumns, RawProgram};

unsafe extern "C" {
    fn el_evaluate_host(cols: *const RawColumns, prog: *const RawProgram, codes: *mut u8) -> c_int;
}

/// Arrays stay where they are, in host memory.
struct InPlace;

impl Place for InPlace {
    type Error = Infallible;
    fn place<T: Placeable>(&mut self, values: &[T]) -> Result<u64, Infallible> {
        Ok(values.as_ptr() as u64)
    }
}

/// Evaluates every (citizen, rule) with the kernels' C logic on the CPU (single-threaded).
pub fn evaluate_host(columns: &EncodedColumns, program: &EncodedProgram) -> Codes {
    let Ok(cols) = RawColumns::new(columns, &mut InPlace);
    let Ok(prog) = RawProgram::new(program, &mut InPlace);
    let citizens = columns.len as usize;
    let mut codes = vec![0u8; citizens * program.n_rules()];
    // SAFETY: every address points into `columns` or `program`, which outlive the call, and the
    // encoders keep every offset within its pool; `codes` holds rules × citizens bytes.
    let status = unsafe { el_evaluate_host(&cols, &prog, codes.as_mut_ptr()) };
    assert_eq!(status, 0, "the host model could not allocate its scratch");
    Codes {
        citizens,
        rules: program.n_rules(),
        codes,
    }
}
