//! One evaluation, chunk by chunk, on a [`Backend`]: the host model's loops or the GPU's
//! streams. The chunking, where each chunk's output lands, and what happens when a chunk finds
//! more changes than it had room for are decided here once, so the host model tests them for
//! the GPU.

use std::borrow::Cow;

use crate::buffer::HostBuffer;
use crate::chunk::plan;
use crate::encode::{EncodedColumns, EncodedProgram};
use crate::output::{BLOCK, Changes, Codes, Output, Outputs, Verdicts};
use crate::raw::Placeable;

/// Where one chunk's output goes: addresses in host buffers that stay alive, and are not read,
/// until [`Backend::finish`].
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub mode: u64,
    /// The chunk's first citizen in the population.
    pub first: u64,
    /// `Output::Codes`: the chunk's range of the codes.
    pub codes: *mut u8,
    /// `Output::Verdicts`: the chunk's range of the planes.
    pub planes: *mut u32,
    /// `Output::ChangesFrom`: the chunk's range of the previous codes.
    pub previous: *const u8,
    /// Room for this many changes.
    pub capacity: u64,
}

/// The changes one chunk found: `total` counts them all, `pairs` holds those that fit.
#[derive(Debug, Default)]
pub struct Found {
    pub total: u64,
    pub pairs: Vec<(u64, u8)>,
}

/// Somewhere the kernels' logic runs.
pub trait Backend {
    type Error;
    /// Host memory for an output of `len` values.
    fn host_buffer<T: Placeable>(&mut self, len: usize) -> Result<HostBuffer<T>, Self::Error>;
    /// The program the following chunks run.
    fn load_program(&mut self, program: &EncodedProgram) -> Result<(), Self::Error>;
    /// Starts one chunk (it may still run when this returns).
    ///
    /// # Safety
    /// The addresses in `target` point into buffers of [`Backend::host_buffer`] with room for
    /// the chunk's output, alive and unread until [`Backend::finish`] returns.
    unsafe fn start(&mut self, columns: &EncodedColumns, target: Target)
    -> Result<(), Self::Error>;
    /// Waits for every chunk started; the changes of each, in the order they were started.
    fn finish(&mut self) -> Result<Vec<Found>, Self::Error>;
}

/// How an evaluation is cut.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Citizens per chunk (rounded down to whole blocks of 32).
    pub chunk_citizens: usize,
    /// Room for changes per chunk before it is asked again with room for all it found.
    pub change_capacity: usize,
}

/// Evaluates `columns` against `program` in chunks on `backend`.
pub fn evaluate<B: Backend>(
    backend: &mut B,
    columns: &EncodedColumns,
    program: &EncodedProgram,
    output: Output,
    limits: Limits,
) -> Result<Outputs, B::Error> {
    let citizens = columns.len as usize;
    let rules = program.n_rules();
    let chunks = plan(citizens, limits.chunk_citizens);
    let mut codes = match output {
        Output::Codes => Some(backend.host_buffer::<u8>(Codes::len_for(citizens, rules))?),
        _ => None,
    };
    let mut planes = match output {
        Output::Verdicts => Some(backend.host_buffer::<u32>(Verdicts::len_for(citizens, rules))?),
        _ => None,
    };
    let previous = match output {
        Output::ChangesFrom(previous) => {
            assert_eq!(
                (previous.citizens, previous.rules),
                (citizens, rules),
                "previous codes are of the same citizens and rules"
            );
            Some(previous)
        }
        _ => None,
    };
    if rules > 0 && citizens > 0 {
        backend.load_program(program)?;
    }
    let target = |range: &std::ops::Range<usize>,
                  codes: &mut Option<HostBuffer<u8>>,
                  planes: &mut Option<HostBuffer<u32>>,
                  capacity: usize| {
        let block = range.start / BLOCK;
        Target {
            mode: output.mode(),
            first: range.start as u64,
            codes: codes.as_mut().map_or(std::ptr::null_mut(), |c| {
                c[block * rules * BLOCK..].as_mut_ptr()
            }),
            planes: planes.as_mut().map_or(std::ptr::null_mut(), |p| {
                p[block * rules * 2..].as_mut_ptr()
            }),
            previous: previous.map_or(std::ptr::null(), |p| {
                p.blocks(block, range.len().div_ceil(BLOCK)).as_ptr()
            }),
            capacity: capacity as u64,
        }
    };
    let whole = chunks.len() == 1 && chunks[0] == (0..citizens);
    // A chunk's columns: the caller's when there is one chunk, else a slice of them.
    let columns_of = |range: &std::ops::Range<usize>| {
        if whole {
            Cow::Borrowed(columns)
        } else {
            Cow::Owned(columns.slice(range.clone()))
        }
    };
    let mut found = Vec::with_capacity(chunks.len());
    if rules > 0 {
        for range in &chunks {
            let at = target(range, &mut codes, &mut planes, limits.change_capacity);
            // SAFETY: the buffers above hold the whole output, and outlive `finish` below.
            unsafe { backend.start(&columns_of(range), at)? };
        }
        found = backend.finish()?;
    }
    let outputs = match output {
        Output::Codes => Outputs::Codes(Codes {
            citizens,
            rules,
            codes: codes.expect("allocated for codes"),
        }),
        Output::Verdicts => Outputs::Verdicts(Verdicts {
            citizens,
            rules,
            planes: planes.expect("allocated for verdicts"),
        }),
        Output::ChangesFrom(_) => {
            let mut pairs = Vec::new();
            for (range, mut chunk) in chunks.iter().zip(found) {
                if chunk.total as usize > chunk.pairs.len() {
                    // More changes than room: this chunk again, with room for all of them.
                    let at = target(range, &mut codes, &mut planes, chunk.total as usize);
                    // SAFETY: as above.
                    unsafe { backend.start(&columns_of(range), at)? };
                    chunk = backend.finish()?.pop().unwrap_or_default();
                }
                // Warps append in the order the GPU runs them: sorted, the list is the same
                // for the same inputs.
                chunk.pairs.sort_unstable();
                pairs.extend(chunk.pairs);
            }
            Outputs::Changes(Changes {
                citizens,
                rules,
                pairs,
            })
        }
    };
    Ok(outputs)
}
