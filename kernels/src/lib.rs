//! The GPU micro-batch path of the eligibility engine, and the choice between it and the CPU.
//!
//! Major components:
//! - `cuda/eligibility.cu`: the CUDA kernels (conditions by warp ballot, then rules by truth table
//!   or postfix program) over the compiled rule program, written so that their per-citizen logic
//!   is also plain C.
//! - [`encode`]: the flat, C-compatible encoding of `engine::program::Program` and
//!   `engine::columns::ProfileColumns` that the kernels read; [`raw`]: the structs that point at it;
//!   [`patch`]: the writes that bring resident columns up to date for changed citizens.
//! - [`output`]: what an evaluation hands back (every code, two-bit verdicts, or only the
//!   changed pairs) and [`buffer`]: the host memory it lives in.
//! - [`chunk`] and [`launch`]: populations cut into chunks, run on a backend.
//! - [`host`]: the kernels' C logic compiled for the host (`cuda/host_model.c`), run through the
//!   same chunk loop, so it is tested against the scalar and CPU batch evaluators on machines
//!   without a GPU.
//! - [`gpu`]: the launcher (cudarc, NVRTC at run time) behind the cargo feature `gpu`.
//! - [`engine_select`]: `auto | cpu | gpu`.

pub mod buffer;
pub mod chunk;
pub mod encode;
pub mod engine_select;
pub mod gpu;
pub mod host;
pub mod launch;
pub mod output;
pub mod patch;
pub mod raw;
