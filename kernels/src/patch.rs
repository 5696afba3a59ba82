//! Columns kept on the device stay there: when some citizens change, only their values cross
//! the bus. A [`Patch`] is the list of writes (pool offset, value) that brings encoded columns to
//! the values of updated `ProfileColumns` (`ProfileColumns::update`, which keeps every other
//! citizen's string ids) for the changed citizens; bit words are written whole, once each.

use engine::columns::{ColumnData, ProfileColumns};

use crate::encode::EncodedColumns;

/// Writes into the three pools of [`EncodedColumns`], ascending and distinct per pool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Patch {
    pub u32_at: Vec<u64>,
    pub u32_values: Vec<u32>,
    pub int_at: Vec<u64>,
    pub int_values: Vec<i64>,
    pub num_at: Vec<u64>,
    pub num_values: Vec<f64>,
}

impl Patch {
    pub fn len(&self) -> usize {
        self.u32_at.len() + self.int_at.len() + self.num_at.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes uploaded to apply it.
    pub fn bytes(&self) -> usize {
        self.u32_at.len() * 12 + self.int_at.len() * 16 + self.num_at.len() * 16
    }
}

/// The 32-bit word `w` of 64-bit words (low half first, as the encoding splits them).
fn half(bits: &[u64], w: usize) -> u32 {
    (bits[w / 2] >> (32 * (w % 2))) as u32
}

impl EncodedColumns {
    /// The writes that bring these columns to `columns` for `citizens` (in any order, repeats
    /// allowed), or None when the layout differs (another length, a list column grown wider):
    /// then encode the columns anew. Fields are laid out one after another in each pool, and a
    /// field's values by citizen, so walking fields in order and the citizens ascending gives
    /// every pool's writes ascending: no map, no sort of the writes.
    pub fn patch(&self, columns: &ProfileColumns, citizens: &[usize]) -> Option<Patch> {
        if self.len != columns.len as u64 || self.col_kind.len() != columns.columns.len() {
            return None;
        }
        let mut citizens = citizens.to_vec();
        citizens.sort_unstable();
        citizens.dedup();
        let mut p = Patch::default();
        // A bit word is written once however many of its citizens changed.
        let words = |p: &mut Patch, at: u64, bits: &[u64]| {
            let mut last = None;
            for &i in &citizens {
                let w = i / 32;
                if last != Some(w) {
                    p.u32_at.push(at + w as u64);
                    p.u32_values.push(half(bits, w));
                    last = Some(w);
                }
            }
        };
        for (f, column) in columns.columns.iter().enumerate() {
            let data = self.col_data[f];
            words(&mut p, self.col_known[f], &column.known);
            match &column.data {
                ColumnData::Int(values) => {
                    p.int_at.extend(citizens.iter().map(|&i| data + i as u64));
                    p.int_values.extend(citizens.iter().map(|&i| values[i]));
                }
                ColumnData::Num(values) => {
                    p.num_at.extend(citizens.iter().map(|&i| data + i as u64));
                    p.num_values.extend(citizens.iter().map(|&i| values[i]));
                }
                ColumnData::Bool(bits) => words(&mut p, data, bits),
                ColumnData::Str { ids, .. } => {
                    p.u32_at.extend(citizens.iter().map(|&i| data + i as u64));
                    p.u32_values.extend(citizens.iter().map(|&i| ids[i]));
                }
                ColumnData::List { bits, width, .. } => {
                    if self.col_width[f] as usize != 2 * width {
                        return None;
                    }
                    for &i in &citizens {
                        let mine = &bits[i * width..(i + 1) * width];
                        for k in 0..2 * width {
                            p.u32_at.push(data + (i * 2 * width + k) as u64);
                            p.u32_values.push(half(mine, k));
                        }
                    }
                }
            }
        }
        Some(p)
    }

    /// Applies `patch` here, as the device's scatter kernel does there.
    pub fn apply(&mut self, patch: &Patch) {
        for (&at, &v) in patch.u32_at.iter().zip(&patch.u32_values) {
            self.u32s[at as usize] = v;
        }
        for (&at, &v) in patch.int_at.iter().zip(&patch.int_values) {
            self.ints[at as usize] = v;
        }
        for (&at, &v) in patch.num_at.iter().zip(&patch.num_values) {
            self.nums[at as usize] = v;
        }
    }
}
