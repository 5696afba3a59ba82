//! The host C model of the kernels (`cuda/host_model.c`): the same per-citizen C functions,
//! output layout and launch geometry the CUDA kernels use, run on the CPU, chunk by chunk
//! through the same [`crate::launch`] loop as the GPU, with the columns each chunk reads chosen
//! as the launcher chooses them (uploaded or kept). Its scratch buffers are kept between
//! evaluations and only grow, as the launcher's are, and every store is checked against the
//! size the launch asked for: an access the GPU would make out of bounds is a [`Fault`] here.

use std::ffi::c_int;

use crate::buffer::HostBuffer;
use crate::chunk::{Residence, Sizes, THREADS};
use crate::encode::{EncodedColumns, EncodedProgram};
use crate::launch::{self, Backend, Chunk, ChunkColumns, Found, Limits};
use crate::output::{Changes, Codes, Output, Outputs};
use crate::raw::{Place, Placeable, RawColumns, RawOutput, RawProgram};

/// `ElGrid` of `cuda/host_model.c`.
#[repr(C)]
struct RawGrid {
    grid_x: u64,
    conditions_y: u64,
    rules_y: u64,
    threads: u64,
}

/// `ElBounds`.
#[repr(C)]
struct RawBounds {
    cond_words: u64,
    codes: u64,
    planes: u64,
    previous: u64,
    changes: u64,
    masks: u64,
    counts: u64,
}

impl From<Sizes> for RawBounds {
    fn from(s: Sizes) -> RawBounds {
        RawBounds {
            cond_words: s.cond_words as u64,
            codes: s.codes as u64,
            planes: s.planes as u64,
            previous: s.previous as u64,
            changes: s.changes as u64,
            masks: s.masks as u64,
            counts: s.counts as u64,
        }
    }
}

/// `ElFault`.
#[repr(C)]
#[derive(Default)]
struct RawFault {
    buffer: u64,
    index: u64,
    bound: u64,
}

unsafe extern "C" {
    fn el_launch_host(
        cols: *const RawColumns,
        prog: *const RawProgram,
        out: *const RawOutput,
        cond_words: *mut u32,
        grid: *const RawGrid,
        bounds: *const RawBounds,
        fault: *mut RawFault,
    ) -> c_int;
    fn el_compact_host(
        out: *const RawOutput,
        len: u64,
        n_rules: u64,
        bounds: *const RawBounds,
        fault: *mut RawFault,
    ) -> c_int;
}

/// An access the kernels would make outside a buffer the launcher sized for them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chunk at citizen {first}: {buffer}[{index}] is out of bounds ({bound} elements)")]
pub struct Fault {
    pub first: usize,
    pub buffer: &'static str,
    pub index: u64,
    pub bound: u64,
}

/// Arrays stay where they are, in host memory.
struct InPlace;

impl Place for InPlace {
    type Error = std::convert::Infallible;
    fn place<T: Placeable>(&mut self, values: &[T]) -> Result<u64, Self::Error> {
        Ok(values.as_ptr() as u64)
    }
}

/// `values` grown to at least `len` (never shrunk: a later, smaller launch reuses it).
fn grow<T: Placeable>(values: &mut Vec<T>, len: usize) -> &mut Vec<T> {
    if values.len() < len {
        values.resize(len, T::default());
    }
    values
}

/// The kernels on the CPU, as a [`Backend`]: each chunk runs to completion when started. Keep
/// one for many evaluations to run them as the launcher does, on reused buffers.
#[derive(Default)]
pub struct HostModel {
    program: Option<EncodedProgram>,
    cond_words: Vec<u32>,
    codes: Vec<u8>,
    planes: Vec<u32>,
    previous: Vec<u8>,
    /// The previous codes kept "on the device" (`Output::ChangesFromKept`).
    kept: Vec<u8>,
    masks: Vec<u32>,
    counts: Vec<u64>,
    change_pair: Vec<u64>,
    change_code: Vec<u8>,
    found: Vec<Found>,
}

impl Backend for HostModel {
    type Error = Fault;

    fn host_buffer<T: Placeable>(&mut self, len: usize) -> Result<HostBuffer<T>, Fault> {
        Ok(HostBuffer::from(vec![T::default(); len]))
    }

    fn load_program(&mut self, program: &EncodedProgram) -> Result<(), Fault> {
        self.program = Some(program.clone());
        Ok(())
    }

    unsafe fn start(&mut self, chunk: Chunk) -> Result<(), Fault> {
        let program = self.program.as_ref().expect("a program is loaded first");
        let Ok(prog) = RawProgram::new(program, &mut InPlace);
        let cols = match &chunk.columns {
            ChunkColumns::Upload(columns) => {
                let Ok(raw) = RawColumns::new(columns, &mut InPlace);
                raw
            }
            // The kept columns' arrays, read through the chunk's view, as on the device.
            ChunkColumns::Kept { whole, view } => {
                let Ok(raw) = RawColumns::new(whole, &mut InPlace);
                RawColumns {
                    len: view.len,
                    words: view.words,
                    col_known: view.col_known.as_ptr() as u64,
                    col_data: view.col_data.as_ptr() as u64,
                    ..raw
                }
            }
        };
        let (mut sizes, target) = (chunk.sizes, chunk.target);
        let first = chunk.citizens.start;
        grow(&mut self.cond_words, sizes.cond_words);
        grow(&mut self.codes, sizes.codes);
        grow(&mut self.planes, sizes.planes);
        grow(&mut self.masks, sizes.masks);
        grow(&mut self.change_pair, sizes.changes);
        grow(&mut self.change_code, sizes.changes);
        // The counts start at zero (the launcher clears them on the device).
        grow(&mut self.counts, sizes.counts)[..sizes.counts].fill(0);
        // The previous codes: kept here, or uploaded into the scratch buffer, no more than the
        // caller's buffer holds.
        assert!(sizes.previous <= target.room, "previous codes");
        let previous = match target.kept_previous {
            Some(at) => {
                assert!(
                    at + sizes.previous <= self.kept.len(),
                    "changes from kept codes need keep_outcomes first"
                );
                self.kept[at..].as_mut_ptr()
            }
            None => {
                let previous = grow(&mut self.previous, sizes.previous);
                if sizes.previous > 0 {
                    // SAFETY: `target.previous` has `target.room` codes (this function's
                    // contract).
                    let from =
                        unsafe { std::slice::from_raw_parts(target.previous, sizes.previous) };
                    previous[..sizes.previous].copy_from_slice(from);
                }
                previous.as_mut_ptr()
            }
        };
        let mut n_changes = 0u64;
        let mut out = RawOutput {
            mode: target.mode,
            first: target.first,
            codes: self.codes.as_mut_ptr() as u64,
            planes: self.planes.as_mut_ptr() as u64,
            previous: previous as u64,
            masks: self.masks.as_mut_ptr() as u64,
            counts: self.counts.as_mut_ptr() as u64,
            n_changes: &raw mut n_changes as u64,
            capacity: sizes.changes as u64,
            change_pair: self.change_pair.as_mut_ptr() as u64,
            change_code: self.change_code.as_mut_ptr() as u64,
        };
        let g = chunk.geometry;
        let grid = RawGrid {
            grid_x: g.grid_x.into(),
            conditions_y: g.conditions_y.into(),
            rules_y: g.rules_y.into(),
            threads: THREADS.into(),
        };
        let mut fault = RawFault::default();
        let fail = |fault: RawFault| {
            let names = [
                "",
                "cond_words",
                "codes",
                "planes",
                "previous",
                "changes",
                "masks",
                "counts",
            ];
            Fault {
                first,
                buffer: names.get(fault.buffer as usize).copied().unwrap_or("?"),
                index: fault.index,
                bound: fault.bound,
            }
        };
        // SAFETY: every address points into the columns and program of the chunk, this model's
        // buffers (each at least as large as `sizes` says) or locals; the C code checks every
        // index into the buffers against `sizes` before it stores.
        let status = unsafe {
            el_launch_host(
                &cols,
                &prog,
                &out,
                self.cond_words.as_mut_ptr(),
                &grid,
                &RawBounds::from(sizes),
                &mut fault,
            )
        };
        if status != 0 {
            return Err(fail(fault));
        }
        if n_changes > out.capacity {
            // More changes than room: compaction again with room for all, as the launcher does.
            sizes.changes = n_changes as usize;
            out.capacity = n_changes;
            out.change_pair = grow(&mut self.change_pair, sizes.changes).as_mut_ptr() as u64;
            out.change_code = grow(&mut self.change_code, sizes.changes).as_mut_ptr() as u64;
            // SAFETY: as above; the masks, counts and codes are still this chunk's.
            let status = unsafe {
                el_compact_host(
                    &out,
                    cols.len,
                    prog.n_rules,
                    &RawBounds::from(sizes),
                    &mut fault,
                )
            };
            if status != 0 {
                return Err(fail(fault));
            }
        }
        // The download, into the caller's range: no more than it has room for.
        let copy = |len: usize, what: &str| {
            assert!(len <= target.room, "{what}: {len} > room {}", target.room);
            len
        };
        if sizes.codes > 0 {
            let len = copy(sizes.codes, "codes");
            // SAFETY: `target.codes` has `target.room` codes (this function's contract).
            unsafe { std::slice::from_raw_parts_mut(target.codes, len) }
                .copy_from_slice(&self.codes[..len]);
        }
        if sizes.planes > 0 {
            let len = copy(sizes.planes, "planes");
            // SAFETY: as above, for the planes.
            unsafe { std::slice::from_raw_parts_mut(target.planes, len) }
                .copy_from_slice(&self.planes[..len]);
        }
        let n = n_changes as usize;
        self.found.push(
            self.change_pair[..n]
                .iter()
                .copied()
                .zip(self.change_code[..n].iter().copied())
                .collect(),
        );
        Ok(())
    }

    fn finish(&mut self) -> Result<Vec<Found>, Fault> {
        Ok(std::mem::take(&mut self.found))
    }
}

impl HostModel {
    /// Keeps `codes` as the previous outcomes of `Output::ChangesFromKept`, as
    /// `Gpu::keep_outcomes` does on the device.
    pub fn keep_outcomes(&mut self, codes: &Codes) {
        self.kept = codes.codes.to_vec();
    }

    /// Brings the kept outcomes up to date where they changed outside an evaluation, with the
    /// writes `Gpu::update_outcomes` uploads.
    pub fn update_outcomes(&mut self, changes: &Changes) {
        let (at, codes) = changes.writes();
        for (at, code) in at.into_iter().zip(codes) {
            self.kept[at as usize] = code;
        }
    }

    /// The kept outcomes as they are now (each evaluation from them leaves its new codes).
    pub fn kept_outcomes(&self) -> &[u8] {
        &self.kept
    }

    /// Evaluates every (citizen, rule) with the kernels' C logic on the CPU (single-threaded),
    /// in chunks as the GPU would cut them, the columns uploaded or kept.
    pub fn evaluate(
        &mut self,
        columns: &EncodedColumns,
        residence: Residence,
        program: &EncodedProgram,
        output: Output,
        limits: Limits,
    ) -> Result<Outputs, Fault> {
        launch::evaluate(self, columns, residence, program, output, limits)
    }
}

/// [`HostModel::evaluate`] on a fresh model, with the columns uploaded chunk by chunk.
pub fn evaluate_host(
    columns: &EncodedColumns,
    program: &EncodedProgram,
    output: Output,
    limits: Limits,
) -> Result<Outputs, Fault> {
    HostModel::default().evaluate(columns, Residence::Upload, program, output, limits)
}
