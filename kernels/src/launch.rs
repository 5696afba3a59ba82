//! One evaluation, chunk by chunk, on a [`Backend`]: the host model's loops or the GPU's
//! streams. Everything a launch depends on is decided here once — how the population is cut,
//! which columns each chunk's kernels read, the launch geometry, how large each buffer must be,
//! and where each chunk's output lands — so the host model, which checks every store against
//! these sizes, tests them for the GPU (kernels/README.md, "How the launch is tested without a
//! GPU"). A backend hands back every change of a chunk, in citizen-then-rule order (the kernels
//! compact them so, running the compaction again with more room when the chunk found more than
//! it had room for): the chunks' lists, joined, are the whole list in order.

use std::ops::Range;

use crate::buffer::HostBuffer;
use crate::chunk::{Geometry, MAX_GRID_X, Residence, Sizes, THREADS, View, plan};
use crate::encode::{EncodedColumns, EncodedProgram};
use crate::output::{BLOCK, Changes, Codes, Output, Outputs, Verdicts};
use crate::raw::Placeable;

/// Where one chunk's output goes: addresses in host buffers that stay alive, and are not read,
/// until [`Backend::finish`], with the room left in each from that address.
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
    /// `Output::ChangesFromKept`: where the chunk's previous codes start in the codes kept on
    /// the device (`room` counts from there).
    pub kept_previous: Option<usize>,
    /// Elements from `codes`, `planes` or `previous` (whichever the mode uses) to the end of
    /// the caller's buffer: a backend copies no more than this.
    pub room: usize,
}

/// The columns one chunk's kernels read.
pub enum ChunkColumns<'a> {
    /// Uploaded for this chunk: the chunk's own columns (the caller's, when there is one chunk),
    /// to be copied away before `start` returns.
    Upload(&'a EncodedColumns),
    /// Kept on the device: the chunk's citizens of the kept columns `whole`, read through
    /// `view` (offsets into the same pools; only the view crosses the bus).
    Kept {
        whole: &'a EncodedColumns,
        view: View,
    },
}

/// One chunk, as both backends run it.
pub struct Chunk<'a> {
    pub citizens: Range<usize>,
    pub columns: ChunkColumns<'a>,
    pub geometry: Geometry,
    pub sizes: Sizes,
    pub target: Target,
}

/// The changes one chunk found, all of them, by citizen then rule: (citizen of the population ×
/// rules + rule, new code).
pub type Found = Vec<(u64, u8)>;

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
    /// The addresses in `chunk.target` point into buffers of [`Backend::host_buffer`] with
    /// `chunk.target.room` elements from there, alive and unread until [`Backend::finish`]
    /// returns.
    unsafe fn start(&mut self, chunk: Chunk) -> Result<(), Self::Error>;
    /// Waits for every chunk started; the changes of each, in the order they were started.
    fn finish(&mut self) -> Result<Vec<Found>, Self::Error>;
}

/// How an evaluation is cut.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Citizens per chunk (rounded down to whole blocks of 32).
    pub chunk_citizens: usize,
    /// Room for changes reserved per chunk (a chunk that finds more compacts them again with
    /// room for all).
    pub change_capacity: usize,
}

/// Evaluates `columns` against `program` in chunks on `backend`.
pub fn evaluate<B: Backend>(
    backend: &mut B,
    columns: &EncodedColumns,
    residence: Residence,
    program: &EncodedProgram,
    output: Output,
    limits: Limits,
) -> Result<Outputs, B::Error> {
    let citizens = columns.len as usize;
    let rules = program.n_rules();
    let chunks = plan(
        citizens,
        limits.chunk_citizens.min(MAX_GRID_X * THREADS as usize),
    );
    let mut codes = match output {
        Output::Codes => Some(backend.host_buffer::<u8>(Codes::len_for(citizens, rules))?),
        _ => None,
    };
    let mut planes = match output {
        Output::Verdicts => Some(backend.host_buffer::<u32>(Verdicts::len_for(citizens, rules))?),
        _ => None,
    };
    let previous = match output {
        Output::ChangesFrom(previous) | Output::ChangesFromKept(previous) => {
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
    let whole = chunks.len() == 1;
    // Where a chunk's output lands.
    let target = |range: &Range<usize>,
                  codes: &mut Option<HostBuffer<u8>>,
                  planes: &mut Option<HostBuffer<u32>>| {
        let block = range.start / BLOCK;
        let (codes_at, planes_at) = (block * rules * BLOCK, block * rules * 2);
        let mut target = Target {
            mode: output.mode(),
            first: range.start as u64,
            codes: std::ptr::null_mut(),
            planes: std::ptr::null_mut(),
            previous: std::ptr::null(),
            kept_previous: None,
            room: 0,
        };
        if let Some(c) = codes.as_mut() {
            target.codes = c[codes_at..].as_mut_ptr();
            target.room = c.len() - codes_at;
        }
        if let Some(p) = planes.as_mut() {
            target.planes = p[planes_at..].as_mut_ptr();
            target.room = p.len() - planes_at;
        }
        if let Some(p) = previous {
            let mine = p.blocks(block, range.len().div_ceil(BLOCK));
            target.previous = mine.as_ptr();
            target.room = mine.len();
            if let Output::ChangesFromKept(_) = output {
                target.kept_previous = Some(codes_at);
                target.room = p.codes.len() - codes_at;
            }
        }
        target
    };
    // One buffer for every chunk's slice of uploaded columns: a backend has copied a chunk's
    // columns away (to the device, or to its staging memory) when `start` returns.
    let mut slice = EncodedColumns::default();
    let mut found = Vec::new();
    if rules > 0 {
        for range in &chunks {
            let of_chunk = match residence {
                Residence::Upload if whole => ChunkColumns::Upload(columns),
                Residence::Upload => {
                    columns.slice_into(range.clone(), &mut slice);
                    ChunkColumns::Upload(&slice)
                }
                Residence::Kept => ChunkColumns::Kept {
                    whole: columns,
                    view: columns.view(range.clone()),
                },
            };
            let c = Chunk {
                citizens: range.clone(),
                columns: of_chunk,
                geometry: Geometry::of(range.len(), program.n_conditions(), rules),
                sizes: Sizes::of(range.len(), program, output.mode(), limits.change_capacity),
                target: target(range, &mut codes, &mut planes),
            };
            // SAFETY: the buffers above hold the whole output, and outlive `finish` below.
            unsafe { backend.start(c)? };
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
        Output::ChangesFrom(_) | Output::ChangesFromKept(_) => Outputs::Changes(Changes {
            citizens,
            rules,
            pairs: found.concat(),
        }),
    };
    Ok(outputs)
}
