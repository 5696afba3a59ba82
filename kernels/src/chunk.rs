//! Populations larger than device memory: the citizens are cut into chunks of whole 32-citizen
//! blocks, each evaluated on its own columns (uploaded for it, or a [`View`] of kept columns),
//! and each chunk's output lands in its contiguous range of the whole output (the layouts of
//! [`crate::output`] are block-major). A chunk's launch [`Geometry`] and buffer [`Sizes`] are
//! computed here, once, for the launcher and the host model alike.

use std::ops::Range;

use crate::encode::{BOOL, EncodedColumns, EncodedProgram, INT, NUM, STR};
use crate::output::{BLOCK, Codes, Output, Verdicts};

/// Threads per block: whole warps, so every ballot sees 32 lanes.
pub const THREADS: u32 = 256;
/// Blocks along y (conditions or rules), each striding over the rest; x covers the citizens.
pub const GRID_Y: u32 = 64;
/// The most blocks along x a launch may have (CUDA's limit).
pub(crate) const MAX_GRID_X: usize = (1 << 31) - 1;

/// How the two kernels are launched over one chunk: `grid_x` blocks of [`THREADS`] cover the
/// citizens; el_conditions has `conditions_y` blocks along y, el_rules `rules_y`. Zero means the
/// kernel is not launched (no conditions, or no citizens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub grid_x: u32,
    pub conditions_y: u32,
    pub rules_y: u32,
}

impl Geometry {
    pub(crate) fn of(citizens: usize, conditions: usize, rules: usize) -> Geometry {
        let grid_x = citizens.div_ceil(THREADS as usize);
        let y = |items: usize| {
            if citizens == 0 {
                0
            } else {
                (items as u64).min(u64::from(GRID_Y)) as u32
            }
        };
        Geometry {
            grid_x: u32::try_from(grid_x).expect("plan() keeps a chunk within the grid"),
            conditions_y: y(conditions),
            rules_y: y(rules),
        }
    }
}

/// How many elements each buffer of one chunk's launch must hold. The launcher allocates (at
/// least) these; the host model refuses any access beyond them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sizes {
    /// Condition words (u32): conditions × ceil(citizens / 32).
    pub cond_words: usize,
    /// `Output::Codes`: outcome codes (bytes), whole blocks.
    pub codes: usize,
    /// `Output::Verdicts`: verdict plane words (u32).
    pub planes: usize,
    /// `Output::ChangesFrom`: the previous codes (bytes), as `codes`; el_rules overwrites the
    /// ones that changed.
    pub previous: usize,
    /// `Output::ChangesFrom`: each (block, rule)'s ballot of changed lanes (u32).
    pub masks: usize,
    /// `Output::ChangesFrom`: each citizen's count of changed rules, then its offset (u64).
    pub counts: usize,
    /// `Output::ChangesFrom`: room for this many changed pairs (a u64 pair and a code each).
    pub changes: usize,
}

impl Sizes {
    /// The buffers of a chunk of `citizens` for `mode` (`Output::mode`), with room for
    /// `capacity` changes (never more than the chunk has pairs).
    pub fn of(citizens: usize, program: &EncodedProgram, mode: u64, capacity: usize) -> Sizes {
        let rules = program.n_rules();
        let codes = Codes::len_for(citizens, rules);
        let mut sizes = Sizes {
            cond_words: program.n_conditions() * citizens.div_ceil(BLOCK),
            ..Sizes::default()
        };
        match mode {
            0 => sizes.codes = codes,
            1 => sizes.planes = Verdicts::len_for(citizens, rules),
            _ => {
                sizes.previous = codes;
                sizes.masks = citizens.div_ceil(BLOCK) * rules;
                sizes.counts = citizens;
                sizes.changes = capacity.min(citizens * rules);
            }
        }
        sizes
    }

    /// Device bytes of these buffers (and the change counter).
    pub fn bytes(&self) -> usize {
        self.cond_words * 4
            + self.codes
            + self.planes * 4
            + self.previous
            + self.masks * 4
            + self.counts * 8
            + self.changes * 9
            + 8
    }
}

/// Whether the columns are uploaded chunk by chunk or already kept on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Residence {
    Upload,
    Kept,
}

/// Chunks of at most `max_citizens` (rounded down to whole blocks, at least one block) covering
/// `citizens`, as citizen ranges.
pub fn plan(citizens: usize, max_citizens: usize) -> Vec<Range<usize>> {
    let step = (max_citizens / BLOCK).max(1) * BLOCK;
    (0..citizens)
        .step_by(step)
        .map(|first| first..(first + step).min(citizens))
        .collect()
}

/// Device bytes one chunk of `citizens` needs for `output`: its columns when they are uploaded
/// for it, the condition words, the output and (for changes) the previous codes and room for
/// `capacity` changes ([`Sizes`]). The launcher sizes chunks with it.
pub fn device_bytes(
    columns: &EncodedColumns,
    program: &EncodedProgram,
    output: &Output,
    citizens: usize,
    capacity: usize,
    residence: Residence,
) -> usize {
    let total = columns.len.max(1) as usize;
    let column_bytes = match residence {
        Residence::Upload => {
            (columns.ints.len() * 8 + columns.nums.len() * 8 + columns.u32s.len() * 4)
                .div_ceil(total)
                * citizens
        }
        Residence::Kept => 0,
    };
    column_bytes + Sizes::of(citizens, program, output.mode(), capacity).bytes()
}

/// Citizens `range` of kept columns, without copying them: the column offsets the kernels read
/// for the range, into the same pools, and the range's length in citizens and words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub len: u64,
    pub words: u64,
    pub col_known: Vec<u64>,
    pub col_data: Vec<u64>,
}

impl EncodedColumns {
    /// Where field `f`'s values for citizens `range` lie in their pool (`u32s`, `ints` or
    /// `nums` by kind), and its known mask's words in `u32s`. `range` starts on a block.
    fn field_range(&self, f: usize, range: &Range<usize>) -> (Range<usize>, Range<usize>) {
        assert_eq!(range.start % BLOCK, 0, "chunks start on a block boundary");
        let (first_word, words) = (range.start / BLOCK, range.len().div_ceil(BLOCK));
        let known = self.col_known[f] as usize + first_word;
        let data = self.col_data[f] as usize;
        let values = match self.col_kind[f] {
            INT | NUM | STR => data + range.start..data + range.end,
            // Booleans: one bit per citizen in 32-citizen words.
            BOOL => data + first_word..data + first_word + words,
            // Lists: `width` words per citizen.
            _ => {
                let width = self.col_width[f] as usize;
                data + range.start * width..data + range.end * width
            }
        };
        (known..known + words, values)
    }

    /// The kernels' view of citizens `range`, which starts on a block boundary.
    pub fn view(&self, range: Range<usize>) -> View {
        let (col_known, col_data) = (0..self.col_kind.len())
            .map(|f| {
                let (known, values) = self.field_range(f, &range);
                (known.start as u64, values.start as u64)
            })
            .unzip();
        View {
            len: range.len() as u64,
            words: range.len().div_ceil(BLOCK) as u64,
            col_known,
            col_data,
        }
    }

    /// The columns of citizens `range`, which starts on a block boundary, copied out.
    pub fn slice(&self, range: Range<usize>) -> EncodedColumns {
        let mut e = EncodedColumns::default();
        self.slice_into(range, &mut e);
        e
    }

    /// [`EncodedColumns::slice`] into `e`, reusing its memory (a launch slices every chunk into
    /// the same buffers, so a steady state touches no fresh pages).
    pub fn slice_into(&self, range: Range<usize>, e: &mut EncodedColumns) {
        e.len = range.len() as u64;
        e.words = range.len().div_ceil(BLOCK) as u64;
        e.col_kind.clone_from(&self.col_kind);
        e.col_width.clone_from(&self.col_width);
        for pool in [&mut e.col_known, &mut e.col_data] {
            pool.clear();
        }
        e.ints.clear();
        e.nums.clear();
        e.u32s.clear();
        for f in 0..self.col_kind.len() {
            let (known, values) = self.field_range(f, &range);
            e.col_known.push(e.u32s.len() as u64);
            e.u32s.extend_from_slice(&self.u32s[known]);
            let at = match self.col_kind[f] {
                INT => {
                    e.ints.extend_from_slice(&self.ints[values]);
                    e.ints.len() - range.len()
                }
                NUM => {
                    e.nums.extend_from_slice(&self.nums[values]);
                    e.nums.len() - range.len()
                }
                _ => {
                    let at = e.u32s.len();
                    e.u32s.extend_from_slice(&self.u32s[values]);
                    at
                }
            };
            e.col_data.push(at as u64);
        }
    }
}
