//! Incremental evaluation (docs/semantics.md, "Batch and incremental evaluation"): which rules a
//! profile change or a new date can affect, and when a rule that reads a changed field still
//! keeps its outcome.

use crate::catalogue::{Catalogue, FieldId};
use crate::date::Date;
use crate::gaps;
use crate::profile::Profile;
use crate::rule::Rule;
use crate::temporal::applicability;
use crate::tree::{Leaf, Op, Operand};
use crate::truth::{leaf_truth, test};

/// For each field, the rules (indices into the slice it was built from) that read it, and the
/// conditions on it.
#[derive(Debug, Clone)]
pub struct DependencyIndex {
    by_field: Vec<Vec<usize>>,
    /// For each rule, the fields it reads, sorted.
    fields_of: Vec<Vec<FieldId>>,
    /// For each field, every leaf on it (eligibility and exclusions): its rule's index, its
    /// operator and operand. Comparing a change through these reads a few contiguous entries
    /// where walking each rule's tree read every leaf of every rule reached.
    conditions: Vec<Vec<(usize, Op, Operand)>>,
}

impl DependencyIndex {
    pub fn new(rules: &[&Rule], field_count: usize) -> DependencyIndex {
        let mut by_field = vec![Vec::new(); field_count];
        let mut conditions = vec![Vec::new(); field_count];
        let mut fields_of = Vec::with_capacity(rules.len());
        for (i, rule) in rules.iter().enumerate() {
            let fields = rule.fields_read();
            for &field in &fields {
                by_field[field].push(i);
            }
            fields_of.push(fields);
            let mut add = |leaf: &Leaf| {
                conditions[leaf.field].push((i, leaf.op, leaf.operand.clone()));
            };
            rule.eligibility.for_each_leaf(&mut add);
            rule.exclusions.iter().for_each(&mut add);
        }
        DependencyIndex {
            by_field,
            fields_of,
            conditions,
        }
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
        let mut wanted = vec![false; self.fields_of.len()];
        for &rule in asked {
            wanted[rule] = true;
        }
        let mut moved = self.leaves_moved_where(change, before, after, |rule| wanted[rule]);
        for (moved, wanted) in moved.iter_mut().zip(&wanted) {
            *moved |= !wanted;
        }
        moved
    }

    fn leaves_moved_where(
        &self,
        change: &ProfileChange,
        before: &Profile,
        after: &Profile,
        asked: impl Fn(usize) -> bool,
    ) -> Vec<bool> {
        let mut moved = vec![false; self.fields_of.len()];
        for &field in &change.fields {
            let (was, now) = (before.get(field), after.get(field));
            for (rule, op, operand) in &self.conditions[field] {
                if !moved[*rule]
                    && asked(*rule)
                    && test(*op, operand, was) != test(*op, operand, now)
                {
                    moved[*rule] = true;
                }
            }
        }
        moved
    }

    /// Whether the rule `rule` (an index) reads any of `fields`: [`Self::rules_reading`] asked
    /// of one rule, so that a pass asks it of its candidates only, not of every rule that
    /// reads a changed field in the whole country.
    pub fn reads_any(&self, rule: usize, fields: &[FieldId]) -> bool {
        self.fields_of[rule].iter().any(|f| fields.contains(f))
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
