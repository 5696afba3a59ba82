//! The host C model of the kernels (`cuda/host_model.c`): the same per-citizen C functions and
//! output layout the CUDA kernels use, run on the CPU, chunk by chunk through the same
//! [`crate::launch`] loop as the GPU. It is how the kernels' logic is tested without a GPU.

use std::convert::Infallible;
use std::ffi::c_int;

use crate::buffer::HostBuffer;
use crate::encode::{EncodedColumns, EncodedProgram};
use crate::launch::{self, Backend, Found, Limits, Target};
use crate::output::{Output, Outputs};
use crate::raw::{Place, Placeable, RawColumns, RawOutput, RawProgram};

unsafe extern "C" {
    fn el_evaluate_host(
        cols: *const RawColumns,
        prog: *const RawProgram,
        out: *const RawOutput,
    ) -> c_int;
}

/// Arrays stay where they are, in host memory.
struct InPlace;

impl Place for InPlace {
    type Error = Infallible;
    fn place<T: Placeable>(&mut self, values: &[T]) -> Result<u64, Infallible> {
        Ok(values.as_ptr() as u64)
    }
}

/// The host model as a [`Backend`]: each chunk runs to completion when started.
#[derive(Default)]
struct Host {
    program: Option<EncodedProgram>,
    found: Vec<Found>,
}

impl Backend for Host {
    type Error = Infallible;

    fn host_buffer<T: Placeable>(&mut self, len: usize) -> Result<HostBuffer<T>, Infallible> {
        Ok(HostBuffer::from(vec![T::default(); len]))
    }

    fn load_program(&mut self, program: &EncodedProgram) -> Result<(), Infallible> {
        self.program = Some(program.clone());
        Ok(())
    }

    unsafe fn start(&mut self, columns: &EncodedColumns, target: Target) -> Result<(), Infallible> {
        let program = self.program.as_ref().expect("a program is loaded first");
        let Ok(cols) = RawColumns::new(columns, &mut InPlace);
        let Ok(prog) = RawProgram::new(program, &mut InPlace);
        // Never more changes than pairs in the chunk.
        let capacity = (target.capacity as usize).min(columns.len as usize * program.n_rules());
        let mut n_changes = 0u64;
        let mut change_pair = vec![0u64; capacity];
        let mut change_code = vec![0u8; capacity];
        let out = RawOutput {
            mode: target.mode,
            first: target.first,
            codes: target.codes as u64,
            planes: target.planes as u64,
            previous: target.previous as u64,
            n_changes: &raw mut n_changes as u64,
            capacity: capacity as u64,
            change_pair: change_pair.as_mut_ptr() as u64,
            change_code: change_code.as_mut_ptr() as u64,
        };
        // SAFETY: every address points into `columns`, `program`, the locals above or the
        // caller's target (valid by this function's contract); the encoders keep every offset
        // within its pool.
        let status = unsafe { el_evaluate_host(&cols, &prog, &out) };
        assert_eq!(status, 0, "the host model could not allocate its scratch");
        let kept = (n_changes as usize).min(capacity);
        self.found.push(Found {
            total: n_changes,
            pairs: change_pair[..kept]
                .iter()
                .copied()
                .zip(change_code[..kept].iter().copied())
                .collect(),
        });
        Ok(())
    }

    fn finish(&mut self) -> Result<Vec<Found>, Infallible> {
        Ok(std::mem::take(&mut self.found))
    }
}

/// Evaluates every (citizen, rule) with the kernels' C logic on the CPU (single-threaded), in
/// chunks as the GPU would cut them.
pub fn evaluate_host(
    columns: &EncodedColumns,
    program: &EncodedProgram,
    output: Output,
    limits: Limits,
) -> Outputs {
    let Ok(outputs) = launch::evaluate(&mut Host::default(), columns, program, output, limits);
    outputs
}
