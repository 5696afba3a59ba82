//! Per-field value sets: what values (and whether "unknown") one field may take in a conjunction.
//! Closed under intersection; a leaf and its negation are both one such set.

use std::collections::BTreeSet;

use crate::catalogue::{FieldSpec, FieldType};
use crate::tree::{Leaf, Op, Operand};
use crate::value::Scalar;

/// Values of a field allowed by a conjunction, and whether the field may be unknown.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSet {
    pub unknown_ok: bool,
    pub known: ValueSet,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ValueSet {
    /// Sorted, disjoint closed intervals over order keys (see [`order_key`]).
    Ordered(Vec<(i64, i64)>),
    /// `finite`: exactly these strings; otherwise every string but these.
    Strings { finite: bool, set: BTreeSet<String> },
    /// Bit 0: `false` allowed, bit 1: `true` allowed.
    Bools(u8),
    /// Lists that include every `must` item and no `must_not` item.
    List {
        must: BTreeSet<String>,
        must_not: BTreeSet<String>,
    },
}

/// How a leaf must come out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polarity {
    True,
    False,
    NotTrue,
    NotFalse,
}

impl Polarity {
    pub fn negated(self) -> Polarity {
        match self {
            Polarity::True => Polarity::False,
            Polarity::False => Polarity::True,
            Polarity::NotTrue => Polarity::NotFalse,
            Polarity::NotFalse => Polarity::NotTrue,
        }
    }
}

/// An order-preserving integer key: integers and day numbers as they are; floats by their bits,
/// so that "greater than x" is "at least the next float after x" and every interval is closed.
pub fn order_key(value: &Scalar) -> i64 {
    match value {
        Scalar::Int(i) => *i,
        Scalar::Date(d) => d.day_number(),
        Scalar::Num(n) => {
            let n = if *n == 0.0 { 0.0 } else { *n };
            let bits = n.to_bits() as i64;
            if bits < 0 { bits ^ i64::MAX } else { bits }
        }
        _ => 0,
    }
}

pub fn from_order_key(field_type: FieldType, key: i64) -> Scalar {
    match field_type {
        FieldType::Integer => Scalar::Int(key),
        FieldType::Date => {
            crate::date::Date::from_day_number(key).map_or(Scalar::Int(key), Scalar::Date)
        }
        _ => {
            let bits = if key < 0 { key ^ i64::MAX } else { key };
            Scalar::Num(f64::from_bits(bits as u64))
        }
    }
}

impl FieldSet {
    /// The set of values for which `leaf` comes out with `polarity`.
    pub fn of_leaf(spec: &FieldSpec, leaf: &Leaf, polarity: Polarity) -> FieldSet {
        let passes = pass_set(spec, leaf);
        let (unknown_ok, positive) = match polarity {
            Polarity::True => (false, true),
            Polarity::False => (false, false),
            Polarity::NotTrue => (true, false),
            Polarity::NotFalse => (true, true),
        };
        let known = if positive {
            passes
        } else {
            complement(spec, &passes)
        };
        FieldSet { unknown_ok, known }
    }

    pub fn intersect(&self, other: &FieldSet) -> FieldSet {
        FieldSet {
            unknown_ok: self.unknown_ok && other.unknown_ok,
            known: intersect(&self.known, &other.known),
        }
    }

    pub fn is_empty(&self, spec: &FieldSpec) -> bool {
        !self.unknown_ok && known_is_empty(spec, &self.known)
    }

    pub fn known_is_empty(&self, spec: &FieldSpec) -> bool {
        known_is_empty(spec, &self.known)
    }
}

/// The order keys a field's values can take: the catalogue's bounds where it gives them.
fn domain(spec: &FieldSpec) -> (i64, i64) {
    let key = |x: f64| match spec.field_type {
        FieldType::Integer => x as i64,
        _ => order_key(&Scalar::Num(x)),
    };
    match spec.field_type {
        FieldType::Integer | FieldType::Number => (
            key(spec.min.unwrap_or(-1e18)),
            key(spec.max.unwrap_or(1e18)),
        ),
        _ => (-1_000_000_000, 1_000_000_000),
    }
}

fn pass_set(spec: &FieldSpec, leaf: &Leaf) -> ValueSet {
    let everything = || full(spec);
    match spec.field_type {
        FieldType::Integer | FieldType::Number | FieldType::Date => {
            let (lo, hi) = domain(spec);
            let intervals = match (&leaf.operand, leaf.op) {
                (Operand::One(v), op) => {
                    let k = order_key(v);
                    match op {
                        Op::Eq => vec![(k, k)],
                        Op::Neq => vec![(lo, k - 1), (k + 1, hi)],
                        Op::Gt => vec![(k + 1, hi)],
                        Op::Gte => vec![(k, hi)],
                        Op::Lt => vec![(lo, k - 1)],
                        Op::Lte => vec![(lo, k)],
                        _ => return everything(),
                    }
                }
                (Operand::Many(items), Op::In) => {
                    items.iter().map(|v| (order_key(v), order_key(v))).collect()
                }
                (Operand::Many(items), _) => {
                    let points: Vec<(i64, i64)> =
                        items.iter().map(|v| (order_key(v), order_key(v))).collect();
                    return complement(spec, &ValueSet::Ordered(normalise(points, lo, hi)));
                }
                (Operand::Range(a, b), _) => vec![(order_key(a), order_key(b))],
            };
            ValueSet::Ordered(normalise(intervals, lo, hi))
        }
        FieldType::Boolean => match &leaf.operand {
            Operand::One(Scalar::Bool(b)) => {
                let eq = if *b { 0b10 } else { 0b01 };
                ValueSet::Bools(if leaf.op == Op::Eq { eq } else { 0b11 & !eq })
            }
            _ => everything(),
        },
        FieldType::String => {
            let listed: BTreeSet<String> = match &leaf.operand {
                Operand::One(v) => v.as_str().map(str::to_string).into_iter().collect(),
                Operand::Many(items) => items
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect(),
                Operand::Range(..) => BTreeSet::new(),
            };
            let finite = matches!(leaf.op, Op::Eq | Op::In);
            normalise_strings(spec, finite, listed)
        }
        FieldType::List => {
            let item: BTreeSet<String> = match &leaf.operand {
                Operand::One(Scalar::Str(s)) => [s.clone()].into(),
                _ => BTreeSet::new(),
            };
            if leaf.op == Op::Contains {
                ValueSet::List {
                    must: item,
                    must_not: BTreeSet::new(),
                }
            } else {
                ValueSet::List {
                    must: BTreeSet::new(),
                    must_not: item,
                }
            }
        }
    }
}

fn full(spec: &FieldSpec) -> ValueSet {
    match spec.field_type {
        FieldType::Boolean => ValueSet::Bools(0b11),
        FieldType::String => normalise_strings(spec, false, BTreeSet::new()),
        FieldType::List => ValueSet::List {
            must: BTreeSet::new(),
            must_not: BTreeSet::new(),
        },
        _ => {
            let (lo, hi) = domain(spec);
            ValueSet::Ordered(vec![(lo, hi)])
        }
    }
}

/// Enumerated string fields are always kept as finite sets over their catalogue values.
fn normalise_strings(spec: &FieldSpec, finite: bool, set: BTreeSet<String>) -> ValueSet {
    match (&spec.values, finite) {
        (Some(values), false) => ValueSet::Strings {
            finite: true,
            set: values
                .iter()
                .filter(|v| !set.contains(*v))
                .cloned()
                .collect(),
        },
        _ => ValueSet::Strings { finite, set },
    }
}

fn normalise(mut intervals: Vec<(i64, i64)>, lo: i64, hi: i64) -> Vec<(i64, i64)> {
    intervals = intervals
        .into_iter()
        .map(|(a, b)| (a.max(lo), b.min(hi)))
        .filter(|(a, b)| a <= b)
        .collect();
    intervals.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::with_capacity(intervals.len());
    for (a, b) in intervals {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

fn complement(spec: &FieldSpec, set: &ValueSet) -> ValueSet {
    match set {
        ValueSet::Ordered(intervals) => {
            let (lo, hi) = domain(spec);
            let mut out = Vec::new();
            let mut next = lo;
            for &(a, b) in intervals {
                if a > next {
                    out.push((next, a - 1));
                }
                next = b.saturating_add(1);
            }
            if next <= hi {
                out.push((next, hi));
            }
            ValueSet::Ordered(out)
        }
        ValueSet::Bools(mask) => ValueSet::Bools(0b11 & !mask),
        ValueSet::Strings { finite, set } => normalise_strings(spec, !finite, set.clone()),
        // Only single-item list sets are ever complemented (a leaf's own set).
        ValueSet::List { must, must_not } => ValueSet::List {
            must: must_not.clone(),
            must_not: must.clone(),
        },
    }
}

fn intersect(a: &ValueSet, b: &ValueSet) -> ValueSet {
    match (a, b) {
        (ValueSet::Ordered(x), ValueSet::Ordered(y)) => {
            let mut out = Vec::new();
            for &(a1, b1) in x {
                for &(a2, b2) in y {
                    let (lo, hi) = (a1.max(a2), b1.min(b2));
                    if lo <= hi {
                        out.push((lo, hi));
                    }
                }
            }
            out.sort_unstable();
            ValueSet::Ordered(out)
        }
        (ValueSet::Bools(x), ValueSet::Bools(y)) => ValueSet::Bools(x & y),
        (
            ValueSet::Strings {
                finite: f1,
                set: s1,
            },
            ValueSet::Strings {
                finite: f2,
                set: s2,
            },
        ) => match (f1, f2) {
            (true, true) => ValueSet::Strings {
                finite: true,
                set: s1.intersection(s2).cloned().collect(),
            },
            (true, false) => ValueSet::Strings {
                finite: true,
                set: s1.difference(s2).cloned().collect(),
            },
            (false, true) => ValueSet::Strings {
                finite: true,
                set: s2.difference(s1).cloned().collect(),
            },
            (false, false) => ValueSet::Strings {
                finite: false,
                set: s1.union(s2).cloned().collect(),
            },
        },
        (
            ValueSet::List {
                must: m1,
                must_not: n1,
            },
            ValueSet::List {
                must: m2,
                must_not: n2,
            },
        ) => ValueSet::List {
            must: m1.union(m2).cloned().collect(),
            must_not: n1.union(n2).cloned().collect(),
        },
        _ => unreachable!("one field has one kind of value set"),
    }
}

fn known_is_empty(spec: &FieldSpec, set: &ValueSet) -> bool {
    match set {
        ValueSet::Ordered(intervals) => intervals.is_empty(),
        ValueSet::Bools(mask) => *mask == 0,
        ValueSet::Strings { finite, set } => *finite && set.is_empty(),
        ValueSet::List { must, must_not } => {
            !must.is_disjoint(must_not)
                || must.len() > 100
                || spec
                    .values
                    .as_ref()
                    .is_some_and(|vs| must.iter().any(|m| !vs.contains(m)))
        }
    }
}

/// One value from a non-empty known set, for witness profiles.
pub fn pick(spec: &FieldSpec, set: &ValueSet) -> serde_json::Value {
    use serde_json::json;
    match set {
        ValueSet::Ordered(intervals) => {
            let (a, b) = intervals[0];
            // Prefer a round value inside the interval for readability.
            let key = if a <= 0 && 0 <= b { 0 } else { a };
            from_order_key(spec.field_type, key).to_json()
        }
        ValueSet::Bools(mask) => json!(mask & 0b10 != 0),
        ValueSet::Strings { finite: true, set } => json!(set.iter().next()),
        ValueSet::Strings { finite: false, set } => {
            json!(
                (0..)
                    .map(|i| format!("value_{i}"))
                    .find(|s| !set.contains(s))
                    .expect("some name is free")
            )
        }
        ValueSet::List { must, .. } => json!(must.iter().collect::<Vec<_>>()),
    }
}
