//! Incremental evaluation (docs/semantics.md, "Batch and incremental evaluation"): which rules a profile change or a new date can affect.

use crate::catalogue::FieldId;
use crate::date::Date;
use crate::rule::Rule;
use crate::temporal::applicability;

/// For each field, the rules (indices into the slice it was built from) that read it.
#[derive(Debug, Clone)]
pub struct DependencyIndex {
    by_field: Vec<Vec<usize>>,
}

impl DependencyIndex {
    pub fn new(rules: &[&Rule], field_count: usize) -> DependencyIndex {
        let mut by_field = vec![Vec::new(); field_count];
        for (i, rule) in rules.iter().enumerate() {
            for field in rule.fields_read() {
                by_field[field].push(i);
            }
        }
        DependencyIndex { by_field }
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
