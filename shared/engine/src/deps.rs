//! Incremental evaluation (docs/semantics.md, "Batch and incremental evaluation"): which rules a
//! profile change or a new date can affect, and when a rule that reads a changed field still
//! keeps its outcome.

use std::cmp::Ordering;

use crate::catalogue::{Catalogue, FieldId};
use crate::date::Date;
use crate::gaps;
use crate::profile::Profile;
use crate::rule::Rule;
use crate::temporal::applicability;
use crate::tree::{Leaf, Op, Operand};
use crate::truth::{leaf_truth, test};
use crate::value::{FieldValue, Scalar};

/// For each field, the rules (indices into the slice it was built from) that read it, and the
/// conditions on it.
#[derive(Debug, Clone)]
pub struct DependencyIndex {
    by_field: Vec<Vec<usize>>,
    /// For each rule, the fields it reads as bits: `words` words a rule, rule after rule.
    reads: Vec<u64>,
    words: usize,
    /// For each field, every leaf on it (eligibility and exclusions). Comparing a change
    /// through these reads a few contiguous entries where walking each rule's tree read every
    /// leaf of every rule reached.
    conditions: Vec<FieldConditions>,
}

/// The leaves on one field: those that compare it with a number or a date, sorted by that
/// operand, so that a change is compared only with the operands between its old and its new
/// value; and the others.
#[derive(Debug, Clone, Default)]
struct FieldConditions {
    /// Sorted by `key`; a `between` is listed once at each end.
    ordered: Vec<Threshold>,
    /// (rule, operator, operand).
    other: Vec<(usize, Op, Operand)>,
}

/// A leaf comparing its field with a number or a date.
#[derive(Debug, Clone)]
struct Threshold {
    key: Key,
    rule: usize,
    op: Op,
    operand: Operand,
}

/// A number or a date, in a total order that agrees with [`Scalar::compare`] within a kind
/// (a float's zeros are one key; NaN has none) and sorts the kinds apart.
#[derive(Debug, Clone, Copy)]
enum Key {
    Int(i64),
    Num(f64),
    Date(Date),
}

impl Key {
    fn of(scalar: &Scalar) -> Option<Key> {
        match scalar {
            Scalar::Int(v) => Some(Key::Int(*v)),
            Scalar::Num(v) if v.is_nan() => None,
            // -0.0 compares equal to 0.0, so it is the same key.
            Scalar::Num(v) => Some(Key::Num(if *v == 0.0 { 0.0 } else { *v })),
            Scalar::Date(d) => Some(Key::Date(*d)),
            Scalar::Bool(_) | Scalar::Str(_) => None,
        }
    }

    fn kind(self) -> u8 {
        match self {
            Key::Int(_) => 0,
            Key::Num(_) => 1,
            Key::Date(_) => 2,
        }
    }

    fn cmp(self, other: Key) -> Ordering {
        match (self, other) {
            (Key::Int(a), Key::Int(b)) => a.cmp(&b),
            (Key::Num(a), Key::Num(b)) => a.total_cmp(&b),
            (Key::Date(a), Key::Date(b)) => a.cmp(&b),
            _ => self.kind().cmp(&other.kind()),
        }
    }
}

impl FieldConditions {
    fn add(&mut self, rule: usize, op: Op, operand: &Operand) {
        let keys = match (op, operand) {
            (Op::Eq | Op::Neq | Op::Gt | Op::Gte | Op::Lt | Op::Lte, Operand::One(value)) => {
                Key::of(value).map(|k| vec![k])
            }
            (Op::Between, Operand::Range(lo, hi)) => match (Key::of(lo), Key::of(hi)) {
                (Some(lo), Some(hi)) if lo.kind() == hi.kind() => Some(vec![lo, hi]),
                _ => None,
            },
            _ => None,
        };
        match keys {
            Some(keys) => self.ordered.extend(keys.into_iter().map(|key| Threshold {
                key,
                rule,
                op,
                operand: operand.clone(),
            })),
            None => self.other.push((rule, op, operand.clone())),
        }
    }

    fn sort(&mut self) {
        self.ordered.sort_by(|a, b| a.key.cmp(b.key));
    }

    /// The leaves whose truth can differ between `was` and `now`, a superset: for two values
    /// of one kind, the comparisons with an operand from the lower to the higher value, ends
    /// included (one with an operand outside compares alike with both), and the other leaves;
    /// otherwise (a value missing, a list) every leaf.
    fn reachable<'a>(
        &'a self,
        was: Option<&FieldValue>,
        now: Option<&FieldValue>,
    ) -> impl Iterator<Item = (usize, Op, &'a Operand)> {
        let ordered = match span(was, now) {
            Some((lo, hi)) => {
                let start = self
                    .ordered
                    .partition_point(|t| t.key.cmp(lo) == Ordering::Less);
                let len =
                    self.ordered[start..].partition_point(|t| t.key.cmp(hi) != Ordering::Greater);
                &self.ordered[start..start + len]
            }
            None => &self.ordered[..],
        };
        ordered.iter().map(|t| (t.rule, t.op, &t.operand)).chain(
            self.other
                .iter()
                .map(|(rule, op, operand)| (*rule, *op, operand)),
        )
    }
}

/// The lower and the higher of two values of one kind, as keys.
fn span(was: Option<&FieldValue>, now: Option<&FieldValue>) -> Option<(Key, Key)> {
    let (Some(FieldValue::Scalar(was)), Some(FieldValue::Scalar(now))) = (was, now) else {
        return None;
    };
    let (was, now) = (Key::of(was)?, Key::of(now)?);
    if was.kind() != now.kind() {
        return None;
    }
    match was.cmp(now) {
        Ordering::Greater => Some((now, was)),
        _ => Some((was, now)),
    }
}

/// Sets `field`'s bit in `words` (a [`FieldSet`]'s, or one rule's row of
/// the index's `reads`); a field beyond them sets no bit.
fn set_bit(words: &mut [u64], field: FieldId) {
    if let Some(word) = words.get_mut(field / 64) {
        *word |= 1 << (field % 64);
    }
}

/// Fields as bits, asked of many rules ([`DependencyIndex::reads_any`]).
#[derive(Debug, Clone)]
pub struct FieldSet(Vec<u64>);

impl DependencyIndex {
    pub fn new(rules: &[&Rule], field_count: usize) -> DependencyIndex {
        let words = field_count.div_ceil(64).max(1);
        let mut by_field = vec![Vec::new(); field_count];
        let mut conditions = vec![FieldConditions::default(); field_count];
        let mut reads = vec![0u64; rules.len() * words];
        for (i, rule) in rules.iter().enumerate() {
            for field in rule.fields_read() {
                by_field[field].push(i);
                set_bit(&mut reads[i * words..(i + 1) * words], field);
            }
            let mut add = |leaf: &Leaf| conditions[leaf.field].add(i, leaf.op, &leaf.operand);
            rule.eligibility.for_each_leaf(&mut add);
            rule.exclusions.iter().for_each(&mut add);
        }
        conditions.iter_mut().for_each(FieldConditions::sort);
        DependencyIndex {
            by_field,
            reads,
            words,
            conditions,
        }
    }

    fn rule_count(&self) -> usize {
        self.reads.len() / self.words
    }

    /// By rule index: whether a leaf of the rule on one of `change`'s fields has another truth
    /// for `after` than for `before` (each as the caller reads it on its date). Given this
    /// answer, [`outcome_unchanged_given`] answers what [`outcome_unchanged`] does.
    pub fn leaves_moved(
        &self,
        change: &ProfileChange,
        before: &Profile,
        after: &Profile,
    ) -> Vec<bool> {
        self.leaves_moved_where(change, before, after, |_| true)
    }

    /// [`Self::leaves_moved`] for the rules `asked` (indices) only, every other rule said moved
    /// (the answer that is always safe): a pass asks it of its candidates, the rules of the
    /// citizen's state and the central ones, and the leaves of other states' rules, most of an
    /// index over a whole country's rules, are not tested.
    pub fn leaves_moved_among(
        &self,
        change: &ProfileChange,
        before: &Profile,
        after: &Profile,
        asked: &[usize],
    ) -> Vec<bool> {
        let mut wanted = vec![false; self.rule_count()];
        for &rule in asked {
            wanted[rule] = true;
        }
        let mut moved = self.leaves_moved_where(change, before, after, |rule| wanted[rule]);
        for (moved, wanted) in moved.iter_mut().zip(&wanted) {
            *moved |= !wanted;
        }
        moved
    }

    /// Each leaf a change of its field can reach ([`FieldConditions::reachable`]: an income
    /// that moved a little meets the few thresholds between its old and new value, not the
    /// hundreds on the field) is tested for both values.
    fn leaves_moved_where(
        &self,
        change: &ProfileChange,
        before: &Profile,
        after: &Profile,
        asked: impl Fn(usize) -> bool,
    ) -> Vec<bool> {
        let mut moved = vec![false; self.rule_count()];
        for &field in &change.fields {
            let (was, now) = (before.get(field), after.get(field));
            for (rule, op, operand) in self.conditions[field].reachable(was, now) {
                if !moved[rule] && asked(rule) && test(op, operand, was) != test(op, operand, now) {
                    moved[rule] = true;
                }
            }
        }
        moved
    }

    /// `fields` as bits, to ask [`Self::reads_any`] of many rules.
    pub fn field_set(&self, fields: &[FieldId]) -> FieldSet {
        let mut words = vec![0u64; self.words];
        for &field in fields {
            set_bit(&mut words, field);
        }
        FieldSet(words)
    }

    /// Whether the rule `rule` (an index) reads any of `fields`: [`Self::rules_reading`] asked
    /// of one rule, so that a pass asks it of its candidates only, not of every rule that
    /// reads a changed field in the whole country.
    pub fn reads_any(&self, rule: usize, fields: &FieldSet) -> bool {
        self.reads[rule * self.words..(rule + 1) * self.words]
            .iter()
            .zip(&fields.0)
            .any(|(reads, asked)| reads & asked != 0)
    }

    /// The rules that read any of `fields`, sorted, without repeats.
    pub fn rules_reading(&self, fields: &[FieldId]) -> Vec<usize> {
        let mut rules: Vec<usize> = fields
            .iter()
            .flat_map(|&f| self.by_field[f].iter().copied())
            .collect();
        rules.sort_unstable();
        rules.dedup();
        rules
    }
}

/// The rules to re-evaluate after a profile changed `fields` and the date moved from `previous`
/// to `as_of`: those that read a changed field, and those whose applicability (effective dates,
/// deadline, application window) differs between the two dates.
pub fn affected_rules(
    index: &DependencyIndex,
    rules: &[&Rule],
    fields: &[FieldId],
    previous: Date,
    as_of: Date,
) -> Vec<usize> {
    let mut affected = index.rules_reading(fields);
    if previous != as_of {
        affected.extend(
            (0..rules.len())
                .filter(|&i| applicability(rules[i], previous) != applicability(rules[i], as_of)),
        );
        affected.sort_unstable();
        affected.dedup();
    }
    affected
}

/// What changed between two profiles of one citizen: the fields whose readers the change can
/// reach, and whether a gap date is computed from one of them (the age or the date of birth).
#[derive(Debug, Clone)]
pub struct ProfileChange {
    /// The changed fields, and the age whenever the date of birth changed: a new date of birth
    /// can keep the age yet move the date an age condition's gap closes on, so the rules that
    /// read the age are reached even though none reads the date of birth.
    pub fields: Vec<FieldId>,
    pub moves_gap_dates: bool,
}

impl ProfileChange {
    pub fn new(catalogue: &Catalogue, mut fields: Vec<FieldId>) -> ProfileChange {
        let [age, date_of_birth] = gaps::fields_gap_dates_read(catalogue);
        let moves_gap_dates = fields
            .iter()
            .any(|f| [age, date_of_birth].contains(&Some(*f)));
        if let (Some(age), Some(born)) = (age, date_of_birth)
            && fields.contains(&born)
            && !fields.contains(&age)
        {
            fields.push(age);
            fields.sort_unstable();
        }
        ProfileChange {
            fields,
            moves_gap_dates,
        }
    }
}

/// Whether a profile change leaves the outcome of `rule` on `as_of` as it was — verdict, score
/// and gaps — although the rule reads a changed field; `before` and `after` are both taken on
/// `as_of`. It does when every leaf (eligibility and exclusions) on a changed field keeps its
/// truth and, if a field gap dates are computed from changed, no gap of the rule carries a
/// date for either profile (`may_carry_gap_date`).
/// Verdict, score and the gap paths are functions of the leaf truths alone; the gap kind
/// depends on whether the value is present, which is the difference between unknown and known.
/// A property test holds the outcome and the gaps fingerprint equal whenever this says so.
/// False is always safe: the rule is then evaluated again.
pub fn outcome_unchanged(
    catalogue: &Catalogue,
    rule: &Rule,
    before: &Profile,
    after: &Profile,
    change: &ProfileChange,
    as_of: Date,
) -> bool {
    let moved = rule_leaves_moved(rule, before, after, change);
    outcome_unchanged_given(catalogue, rule, before, after, change, as_of, moved)
}

/// [`outcome_unchanged`] for a rule whose leaves on the changed fields were already compared
/// (`leaves_moved`: whether one has another truth, as [`DependencyIndex::leaves_moved`] says).
pub fn outcome_unchanged_given(
    catalogue: &Catalogue,
    rule: &Rule,
    before: &Profile,
    after: &Profile,
    change: &ProfileChange,
    as_of: Date,
    leaves_moved: bool,
) -> bool {
    !leaves_moved
        && !(change.moves_gap_dates
            && (may_carry_gap_date(catalogue, rule, before, as_of)
                || may_carry_gap_date(catalogue, rule, after, as_of)))
}

/// Whether a leaf of `rule` (eligibility or exclusion) on a changed field has another truth
/// for `after` than for `before`.
fn rule_leaves_moved(
    rule: &Rule,
    before: &Profile,
    after: &Profile,
    change: &ProfileChange,
) -> bool {
    let mut moved = false;
    let mut check = |leaf: &Leaf| {
        if !moved && change.fields.contains(&leaf.field) {
            moved =
                leaf_truth(leaf, before.get(leaf.field)) != leaf_truth(leaf, after.get(leaf.field));
        }
    };
    rule.eligibility.for_each_leaf(&mut check);
    rule.exclusions.iter().for_each(&mut check);
    moved
}

/// Whether a gap of `rule` for `profile` can carry an estimated date: an age threshold the
/// citizen has yet to reach. That date moves with the age and the date of birth.
fn may_carry_gap_date(catalogue: &Catalogue, rule: &Rule, profile: &Profile, as_of: Date) -> bool {
    let mut dated = false;
    let mut check = |leaf: &Leaf| {
        dated = dated || gaps::estimated_date(leaf, profile, as_of, catalogue).is_some();
    };
    rule.eligibility.for_each_leaf(&mut check);
    rule.exclusions.iter().for_each(&mut check);
    dated
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Operands and values close together, of every kind: equal ends, both zeros, NaN, a
    /// number of the other numeric kind, dates, text.
    fn scalar() -> impl Strategy<Value = Scalar> {
        prop_oneof![
            (-3i64..4).prop_map(Scalar::Int),
            prop::sample::select(vec![-1.5, -0.0, 0.0, 0.5, 1.0, 2.0, f64::NAN])
                .prop_map(Scalar::Num),
            (1u8..4).prop_map(|d| Scalar::Date(Date::from_ymd(2025, 1, d).unwrap())),
            prop::sample::select(vec!["a", "b"]).prop_map(|s| Scalar::Str(s.into())),
            any::<bool>().prop_map(Scalar::Bool),
        ]
    }

    fn leaf() -> impl Strategy<Value = (Op, Operand)> {
        (
            prop::sample::select(Op::ALL.to_vec()),
            scalar(),
            scalar(),
            prop::collection::vec(scalar(), 0..3),
        )
            .prop_map(|(op, a, b, many)| {
                let operand = match op {
                    Op::Between => Operand::Range(a, b),
                    Op::In | Op::NotIn => Operand::Many(many),
                    _ => Operand::One(a),
                };
                (op, operand)
            })
    }

    fn value() -> impl Strategy<Value = Option<FieldValue>> {
        prop_oneof![
            4 => scalar().prop_map(|s| Some(FieldValue::Scalar(s))),
            1 => Just(None),
            1 => Just(Some(FieldValue::List(vec!["a".into()]))),
        ]
    }

    proptest! {
        // Cheap cases, and the edges (two zeros, equal ends) are a few of many combinations.
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Every leaf whose truth differs between two values is among those the field's
        /// conditions offer for them: what `leaves_moved` skips cannot have moved.
        #[test]
        fn a_leaf_that_moves_is_always_reached(leaves in prop::collection::vec(leaf(), 0..24), was in value(), now in value()) {
            let mut on = FieldConditions::default();
            for (rule, (op, operand)) in leaves.iter().enumerate() {
                on.add(rule, *op, operand);
            }
            on.sort();
            let reached: Vec<usize> = on.reachable(was.as_ref(), now.as_ref()).map(|(rule, _, _)| rule).collect();
            for (rule, (op, operand)) in leaves.iter().enumerate() {
                if test(*op, operand, was.as_ref()) != test(*op, operand, now.as_ref()) {
                    prop_assert!(reached.contains(&rule), "{op:?} {operand:?}: {was:?} -> {now:?}");
                }
            }
        }
    }
}
