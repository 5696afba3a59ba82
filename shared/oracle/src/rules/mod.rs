//! The eight published rules, evaluated in rule-index order.

mod contradiction;
mod patterns;
mod sourcing;

use crate::case::Case;
use crate::normalise::Normalised;
use crate::report::{ConfigError, RuleReport};
use crate::rule_id::RuleId;

/// Runs every rule on `case`; configuration errors are appended to `errors`.
pub(crate) fn evaluate(
    case: &Case,
    unsupported_max: usize,
    added_words_max: Option<usize>,
    errors: &mut Vec<ConfigError>,
) -> Vec<RuleReport> {
    // Normalised once per case and shared by every rule.
    let output = Normalised::new(&case.candidate_output);
    let facts = sourcing::normalised_facts(&case.facts);
    let sentences = sourcing::source_sentences(&output, &facts);
    let must_find = patterns::must_find(&output, &case.expected.must_find, errors);
    let must_not_find = patterns::must_not_find(&output, &case.expected.must_not_find, errors);
    let pairs = contradiction::scan(&output, &case.expected.contradiction_ids, errors);
    vec![
        sourcing::unsupported_count(&sentences, unsupported_max),
        must_find,
        must_not_find,
        sourcing::fact_sourcing(&sentences),
        sourcing::added_words(&sentences, &facts, added_words_max),
        contradiction::report(RuleId::Cont001, &pairs),
        contradiction::report(RuleId::Cont002, &pairs),
        contradiction::report(RuleId::Cont003, &pairs),
    ]
}
