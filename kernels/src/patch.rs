//! Columns kept on the device stay there: when some citizens change, only their values cross
//! the bus. A [`Patch`] is the list of writes (pool offset, value) that brings encoded columns to
//! the values of updated `ProfileColumns` (`ProfileColumns::update`, which keeps every other
//! citizen's string ids) for the changed citizens; bit words are written whole, once each.

use std::collections::BTreeMap;

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
    /// The writes that bring these columns to `columns` for `citizens`, or None when the layout
    /// differs (another length, a list column grown wider): then encode the columns anew.
    pub fn patch(&self, columns: &ProfileColumns, citizens: &[usize]) -> Option<Patch> {
        if self.len != columns.len as u64 || self.col_kind.len() != columns.columns.len() {
            return None;
        }
        let mut u32s = BTreeMap::new();
        let mut ints = BTreeMap::new();
        let mut nums = BTreeMap::new();
        for (f, column) in columns.columns.iter().enumerate() {
            let known = self.col_known[f];
            let data = self.col_data[f];
            for &i in citizens {
                let w = i / 32;
                u32s.insert(known + w as u64, half(&column.known, w));
                match &column.data {
                    ColumnData::Int(values) => {
                        ints.insert(data + i as u64, values[i]);
                    }
                    ColumnData::Num(values) => {
                        nums.insert(data + i as u64, values[i]);
                    }
                    ColumnData::Bool(bits) => {
                        u32s.insert(data + w as u64, half(bits, w));
                    }
                    ColumnData::Str { ids, .. } => {
                        u32s.insert(data + i as u64, ids[i]);
                    }
                    ColumnData::List { bits, width, .. } => {
                        if self.col_width[f] as usize != 2 * width {
                            return None;
                        }
                        let mine = &bits[i * width..(i + 1) * width];
                        for k in 0..2 * width {
                            u32s.insert(data + (i * 2 * width + k) as u64, half(mine, k));
                        }
                    }
                }
            }
        }
        let (u32_at, u32_values) = u32s.into_iter().unzip();
        let (int_at, int_values) = ints.into_iter().unzip();
        let (num_at, num_values) = nums.into_iter().unzip();
        Some(Patch {
            u32_at,
            u32_values,
            int_at,
            int_values,
            num_at,
            num_values,
        })
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
