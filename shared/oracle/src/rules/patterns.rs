//! RULE-PREC-002 (must find) and RULE-PREC-003 (must not find): normalised,
//! case-insensitive substring search over the normalised output.

use crate::normalise::{Normalised, normalise};
use crate::report::{ConfigError, Evidence, RuleReport, Violation};
use crate::rule_id::{Q_INV_01, RuleId};

/// RULE-PREC-002: FAIL iff some pattern in `expected.must_find` is absent.
pub(super) fn must_find(
    output: &Normalised,
    patterns: &[String],
    errors: &mut Vec<ConfigError>,
) -> RuleReport {
    check(RuleId::Prec002, "must_find", output, patterns, errors)
}

/// RULE-PREC-003: FAIL iff some pattern in `expected.must_not_find` is present.
pub(super) fn must_not_find(
    output: &Normalised,
    patterns: &[String],
    errors: &mut Vec<ConfigError>,
) -> RuleReport {
    check(RuleId::Prec003, "must_not_find", output, patterns, errors)
}

fn check(
    rule: RuleId,
    list: &'static str,
    output: &Normalised,
    patterns: &[String],
    errors: &mut Vec<ConfigError>,
) -> RuleReport {
    let mut violations = Vec::new();
    let mut evidence = Vec::with_capacity(patterns.len());
    for (index, pattern) in patterns.iter().enumerate() {
        let normalised = normalise(pattern);
        if normalised.is_empty() {
            // "" is a substring of every output: must_find would pass and
            // must_not_find fail whatever the output says, so it is a config error.
            errors.push(ConfigError::EmptyPattern { list, index });
            evidence.push(Evidence::EmptyPattern {
                index,
                pattern: pattern.clone(),
            });
            continue;
        }
        let found_at = output
            .as_str()
            .find(&normalised)
            .map(|at| output.origin(at));
        match (rule, found_at) {
            (RuleId::Prec002, None) => violations.push(Violation {
                invariant: Q_INV_01,
                message: format!("must_find pattern {pattern:?} does not appear in the output"),
            }),
            (RuleId::Prec003, Some(at)) => violations.push(Violation {
                invariant: Q_INV_01,
                message: format!("must_not_find pattern {pattern:?} appears at byte {at}"),
            }),
            _ => {}
        }
        evidence.push(Evidence::Pattern {
            pattern: pattern.clone(),
            normalised,
            found_at,
        });
    }
    RuleReport::new(rule, violations, evidence)
}
