//! Populations larger than device memory: the citizens are cut into chunks of whole 32-citizen
//! blocks, each evaluated on its own columns, and each chunk's output lands in its contiguous
//! range of the whole output (the layouts of [`crate::output`] are block-major).

use std::ops::Range;

use crate::encode::{EncodedColumns, EncodedProgram, INT, NUM, STR};
use crate::output::{BLOCK, Codes, Output, Verdicts};

/// Chunks of at most `max_citizens` (rounded down to whole blocks, at least one block) covering
/// `citizens`, as citizen ranges.
pub fn plan(citizens: usize, max_citizens: usize) -> Vec<Range<usize>> {
    let step = (max_citizens / BLOCK).max(1) * BLOCK;
    (0..citizens)
        .step_by(step)
        .map(|first| first..(first + step).min(citizens))
        .collect()
}

/// Device bytes one chunk of `citizens` needs for `output`: its columns, the condition words,
/// the output and (for changes) the previous codes and room for `capacity` changes. The
/// launcher sizes chunks with it.
pub fn device_bytes(
    columns: &EncodedColumns,
    program: &EncodedProgram,
    output: &Output,
    citizens: usize,
    capacity: usize,
) -> usize {
    let total = columns.len.max(1) as usize;
    let per_citizen = |pool_bytes: usize| pool_bytes.div_ceil(total);
    let column_bytes =
        per_citizen(columns.ints.len() * 8 + columns.nums.len() * 8 + columns.u32s.len() * 4)
            * citizens;
    let words = citizens.div_ceil(BLOCK);
    let condition_bytes = program.n_conditions() * words * 4;
    let codes = Codes::len_for(citizens, program.n_rules());
    let output_bytes = match output {
        Output::Codes => codes,
        Output::Verdicts => Verdicts::len_for(citizens, program.n_rules()) * 4,
        Output::ChangesFrom(_) => codes + capacity * 9 + 8,
    };
    column_bytes + condition_bytes + output_bytes
}

impl EncodedColumns {
    /// The columns of citizens `range`, which starts on a block boundary.
    pub fn slice(&self, range: Range<usize>) -> EncodedColumns {
        assert_eq!(range.start % BLOCK, 0, "chunks start on a block boundary");
        let len = range.len();
        let words = len.div_ceil(BLOCK);
        let first_word = range.start / BLOCK;
        let mut e = EncodedColumns {
            len: len as u64,
            words: words as u64,
            col_kind: self.col_kind.clone(),
            col_width: self.col_width.clone(),
            ..EncodedColumns::default()
        };
        for f in 0..self.col_kind.len() {
            let known = self.col_known[f] as usize + first_word;
            e.col_known.push(e.u32s.len() as u64);
            e.u32s.extend_from_slice(&self.u32s[known..known + words]);
            let data = self.col_data[f] as usize;
            let at = match self.col_kind[f] {
                INT => {
                    let at = e.ints.len();
                    e.ints
                        .extend_from_slice(&self.ints[data + range.start..data + range.end]);
                    at
                }
                NUM => {
                    let at = e.nums.len();
                    e.nums
                        .extend_from_slice(&self.nums[data + range.start..data + range.end]);
                    at
                }
                STR => {
                    let at = e.u32s.len();
                    e.u32s
                        .extend_from_slice(&self.u32s[data + range.start..data + range.end]);
                    at
                }
                kind => {
                    // Booleans: one bit per citizen in 32-citizen words; lists: `width` words
                    // per citizen (a list column's data holds whole words for every citizen).
                    let at = e.u32s.len();
                    let (from, to) = if kind == crate::encode::BOOL {
                        (data + first_word, data + first_word + words)
                    } else {
                        let width = self.col_width[f] as usize;
                        (data + range.start * width, data + range.end * width)
                    };
                    e.u32s.extend_from_slice(&self.u32s[from..to]);
                    at
                }
            };
            e.col_data.push(at as u64);
        }
        e
    }
}
