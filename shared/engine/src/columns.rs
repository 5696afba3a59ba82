//! Profiles in columns: one column per catalogue field, with an explicit "known" bit mask, so a
//! condition can be evaluated for 64 citizens per machine word.

use std::borrow::Borrow;
use std::collections::HashMap;

use crate::catalogue::{Catalogue, FieldType};
use crate::profile::Profile;
use crate::program::Condition;
use crate::tree::{Op, Operand};
use crate::value::{FieldValue, Scalar};

/// Values of one field for every citizen. Integers and dates (as day numbers) share `Int`.
#[derive(Debug, Clone)]
pub enum ColumnData {
    Int(Vec<i64>),
    Num(Vec<f64>),
    /// One bit per citizen.
    Bool(Vec<u64>),
    /// Interned strings.
    Str {
        ids: Vec<u32>,
        interner: HashMap<String, u32>,
    },
    /// One bitset of `width` words per citizen over interned items.
    List {
        bits: Vec<u64>,
        width: usize,
        interner: HashMap<String, u32>,
    },
}

#[derive(Debug, Clone)]
pub struct Column {
    /// Bit set where the citizen has the field.
    pub known: Vec<u64>,
    pub data: ColumnData,
}

/// Many profiles, column-wise.
#[derive(Debug, Clone)]
pub struct ProfileColumns {
    pub len: usize,
    /// `ceil(len / 64)`.
    pub words: usize,
    pub columns: Vec<Column>,
}

impl ProfileColumns {
    /// Profiles or anything that lends one (`Cow<Profile>`: profiles aged on a date without a
    /// copy each).
    pub fn new<P: Borrow<Profile>>(catalogue: &Catalogue, profiles: &[P]) -> ProfileColumns {
        let profiles: Vec<&Profile> = profiles.iter().map(Borrow::borrow).collect();
        let len = profiles.len();
        let words = len.div_ceil(64);
        let columns = (0..catalogue.len())
            .map(|field| {
                let mut known = vec![0u64; words];
                for (i, p) in profiles.iter().enumerate() {
                    if p.get(field).is_some() {
                        known[i / 64] |= 1 << (i % 64);
                    }
                }
                let scalar = |i: usize| profiles[i].get(field).and_then(FieldValue::scalar);
                let data = match catalogue.field(field).field_type {
                    FieldType::Integer | FieldType::Date => ColumnData::Int(
                        (0..len)
                            .map(|i| match scalar(i) {
                                Some(Scalar::Int(v)) => *v,
                                Some(Scalar::Date(d)) => d.day_number(),
                                _ => 0,
                            })
                            .collect(),
                    ),
                    FieldType::Number => ColumnData::Num(
                        (0..len)
                            .map(|i| {
                                if let Some(Scalar::Num(v)) = scalar(i) {
                                    *v
                                } else {
                                    0.0
                                }
                            })
                            .collect(),
                    ),
                    FieldType::Boolean => {
                        let mut bits = vec![0u64; words];
                        for i in 0..len {
                            if let Some(Scalar::Bool(true)) = scalar(i) {
                                bits[i / 64] |= 1 << (i % 64);
                            }
                        }
                        ColumnData::Bool(bits)
                    }
                    FieldType::String => {
                        let mut interner = HashMap::new();
                        let ids = (0..len)
                            .map(|i| match scalar(i) {
                                Some(Scalar::Str(s)) => intern(&mut interner, s),
                                _ => u32::MAX,
                            })
                            .collect();
                        ColumnData::Str { ids, interner }
                    }
                    FieldType::List => {
                        let mut interner = HashMap::new();
                        let lists: Vec<Vec<u32>> = profiles
                            .iter()
                            .map(|p| {
                                p.get(field)
                                    .and_then(FieldValue::list)
                                    .map(|items| {
                                        items.iter().map(|s| intern(&mut interner, s)).collect()
                                    })
                                    .unwrap_or_default()
                            })
                            .collect();
                        let width = interner.len().div_ceil(64).max(1);
                        let mut bits = vec![0u64; len * width];
                        for (i, items) in lists.iter().enumerate() {
                            for &item in items {
                                bits[i * width + item as usize / 64] |= 1 << (item % 64);
                            }
                        }
                        ColumnData::List {
                            bits,
                            width,
                            interner,
                        }
                    }
                };
                Column { known, data }
            })
            .collect();
        ProfileColumns {
            len,
            words,
            columns,
        }
    }

    /// Replaces citizen `i`'s values with `profile`'s in place, as [`ProfileColumns::new`] would
    /// have written them, interning new strings after the existing ones (so every other
    /// citizen's ids stay). Returns false, changing nothing, when a list column would need more
    /// bits per citizen than it has: then the columns must be built anew.
    pub fn update(&mut self, i: usize, profile: &Profile) -> bool {
        assert!(i < self.len, "citizen {i} of {}", self.len);
        let fits = self.columns.iter().enumerate().all(|(field, column)| {
            let ColumnData::List {
                width, interner, ..
            } = &column.data
            else {
                return true;
            };
            let items = profile.get(field).and_then(FieldValue::list);
            let new = items.map_or(0, |items| {
                let mut fresh: Vec<&str> = items
                    .iter()
                    .map(String::as_str)
                    .filter(|s| !interner.contains_key(*s))
                    .collect();
                fresh.sort_unstable();
                fresh.dedup();
                fresh.len()
            });
            interner.len() + new <= width * 64
        });
        if !fits {
            return false;
        }
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        for (field, column) in self.columns.iter_mut().enumerate() {
            let value = profile.get(field);
            let set = |bits: &mut Vec<u64>, on: bool| {
                if on {
                    bits[word] |= bit;
                } else {
                    bits[word] &= !bit;
                }
            };
            set(&mut column.known, value.is_some());
            let scalar = value.and_then(FieldValue::scalar);
            match &mut column.data {
                ColumnData::Int(values) => {
                    values[i] = match scalar {
                        Some(Scalar::Int(v)) => *v,
                        Some(Scalar::Date(d)) => d.day_number(),
                        _ => 0,
                    }
                }
                ColumnData::Num(values) => {
                    values[i] = match scalar {
                        Some(Scalar::Num(v)) => *v,
                        _ => 0.0,
                    }
                }
                ColumnData::Bool(bits) => set(bits, matches!(scalar, Some(Scalar::Bool(true)))),
                ColumnData::Str { ids, interner } => {
                    ids[i] = match scalar {
                        Some(Scalar::Str(s)) => intern(interner, s),
                        _ => u32::MAX,
                    }
                }
                ColumnData::List {
                    bits,
                    width,
                    interner,
                } => {
                    let mine = &mut bits[i * *width..(i + 1) * *width];
                    mine.fill(0);
                    for item in value.and_then(FieldValue::list).into_iter().flatten() {
                        let id = intern(interner, item) as usize;
                        mine[id / 64] |= 1 << (id % 64);
                    }
                }
            }
        }
        true
    }

    /// Condition results for the citizens of words `first..first + out.len()`: bit set where the
    /// condition passes (never for an unknown field or past the last citizen).
    pub fn eval_condition(&self, cond: &Condition, first: usize, out: &mut [u64]) {
        let column = &self.columns[cond.field];
        let start = first * 64;
        let end = ((first + out.len()) * 64).min(self.len);
        match &column.data {
            ColumnData::Int(values) => {
                let as_int = |s: &Scalar| match s {
                    Scalar::Int(v) => *v,
                    Scalar::Date(d) => d.day_number(),
                    _ => unreachable!(
                        "validated: integer and date fields compare with their own type"
                    ),
                };
                compare_column(&values[start..end], cond, as_int, out);
            }
            ColumnData::Num(values) => {
                let as_num = |s: &Scalar| match s {
                    Scalar::Num(v) => *v,
                    _ => unreachable!("validated: number fields compare with numbers"),
                };
                compare_column(&values[start..end], cond, as_num, out);
            }
            ColumnData::Bool(bits) => {
                let Operand::One(Scalar::Bool(expected)) = cond.operand else {
                    unreachable!("validated: boolean fields take eq/neq with a boolean")
                };
                let want_true = expected == (cond.op == Op::Eq);
                for (w, o) in out.iter_mut().enumerate() {
                    let b = bits[first + w];
                    *o = if want_true { b } else { !b };
                }
            }
            ColumnData::Str { ids, interner } => {
                let accept = string_acceptance(cond, interner);
                fill_bits(
                    &ids[start..end],
                    |id| accept.get(*id as usize).copied().unwrap_or(false),
                    out,
                );
            }
            ColumnData::List {
                bits,
                width,
                interner,
            } => {
                let Operand::One(Scalar::Str(item)) = &cond.operand else {
                    unreachable!("validated: list fields take contains/not_contains with one item")
                };
                let want = cond.op == Op::Contains;
                let rows = &bits[start * width..end * width];
                match interner.get(item) {
                    Some(&id) => {
                        let (word, bit) = (id as usize / 64, id % 64);
                        let has: Vec<bool> = rows
                            .chunks(*width)
                            .map(|row| row[word] >> bit & 1 == 1)
                            .collect();
                        fill_bits(&has, |h| *h == want, out);
                    }
                    // Nobody holds the item: `contains` never passes, `not_contains` always does.
                    None => out
                        .iter_mut()
                        .for_each(|o| *o = if want { 0 } else { u64::MAX }),
                }
            }
        }
        for (w, o) in out.iter_mut().enumerate() {
            *o &= column.known[first + w];
        }
    }
}

fn intern(interner: &mut HashMap<String, u32>, s: &str) -> u32 {
    let next = interner.len() as u32;
    *interner.entry(s.to_string()).or_insert(next)
}

/// For each interned id, whether a string condition passes.
fn string_acceptance(cond: &Condition, interner: &HashMap<String, u32>) -> Vec<bool> {
    let mut accept = vec![false; interner.len()];
    let listed: Vec<&str> = match &cond.operand {
        Operand::One(s) => s.as_str().into_iter().collect(),
        Operand::Many(items) => items.iter().filter_map(Scalar::as_str).collect(),
        Operand::Range(..) => unreachable!("validated: strings are not ranged"),
    };
    let positive = matches!(cond.op, Op::Eq | Op::In);
    for (s, &id) in interner {
        accept[id as usize] = listed.contains(&s.as_str()) == positive;
    }
    accept
}

fn compare_column<T: Copy + PartialOrd>(
    values: &[T],
    cond: &Condition,
    convert: impl Fn(&Scalar) -> T,
    out: &mut [u64],
) {
    match &cond.operand {
        Operand::One(e) => {
            let e = convert(e);
            match cond.op {
                Op::Eq => fill_bits(values, |v| *v == e, out),
                Op::Neq => fill_bits(values, |v| *v != e, out),
                Op::Gt => fill_bits(values, |v| *v > e, out),
                Op::Gte => fill_bits(values, |v| *v >= e, out),
                Op::Lt => fill_bits(values, |v| *v < e, out),
                Op::Lte => fill_bits(values, |v| *v <= e, out),
                _ => unreachable!("validated: single-value operators"),
            }
        }
        Operand::Many(items) => {
            let items: Vec<T> = items.iter().map(&convert).collect();
            let positive = cond.op == Op::In;
            fill_bits(values, |v| items.contains(v) == positive, out);
        }
        Operand::Range(lo, hi) => {
            let (lo, hi) = (convert(lo), convert(hi));
            fill_bits(values, |v| *v >= lo && *v <= hi, out);
        }
    }
}

/// Packs a predicate over consecutive values into words, 64 citizens each; bits past the end are 0.
#[inline]
fn fill_bits<T>(values: &[T], predicate: impl Fn(&T) -> bool, out: &mut [u64]) {
    let mut chunks = values.chunks_exact(64);
    let mut w = 0;
    for chunk in &mut chunks {
        let mut word = 0u64;
        for (i, v) in chunk.iter().enumerate() {
            word |= u64::from(predicate(v)) << i;
        }
        out[w] = word;
        w += 1;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        out[w] = rest
            .iter()
            .enumerate()
            .fold(0, |word, (i, v)| word | u64::from(predicate(v)) << i);
        w += 1;
    }
    out[w..].iter_mut().for_each(|o| *o = 0);
}
