//! RULE-CONT-001/002/003: the predefined contradiction pairs, matched as whole
//! words (UAX #29 word boundaries) in the normalised output.
//!
//! The specification gives the three rules one detection: CONT-002 is "detected
//! via the same contradiction pair mechanism as RULE-CONT-001" and CONT-003
//! flags a pair "if a contradiction_id maps to a known pair and both terms
//! appear". So all three FAIL on exactly the same pairs; they differ only in the
//! rule id and in how the violation is worded (CONT-003 names which term came
//! first). Narrowing any of them (to some pairs, or to an order) would let
//! contradictions the specification flags pass, against Q-INV-03.

use unicode_segmentation::UnicodeSegmentation;

use crate::normalise::Normalised;
use crate::report::{ConfigError, Evidence, RuleReport, TermHit, Violation};
use crate::rule_id::{Q_INV_03, RuleId};

/// The predefined pairs, by contradiction id.
const PAIRS: [(&str, [&str; 2]); 10] = [
    ("always_never", ["always", "never"]),
    ("true_false", ["true", "false"]),
    ("increase_decrease", ["increase", "decrease"]),
    ("positive_negative", ["positive", "negative"]),
    ("valid_invalid", ["valid", "invalid"]),
    ("correct_incorrect", ["correct", "incorrect"]),
    ("success_failure", ["success", "failure"]),
    ("above_below", ["above", "below"]),
    ("present_absent", ["present", "absent"]),
    ("enabled_disabled", ["enabled", "disabled"]),
];

/// One listed contradiction id: its terms and where each was first found
/// (byte offset in the original output), or `None` if the id is unknown.
pub(super) struct PairScan<'c> {
    id: &'c str,
    terms: Option<[TermHit; 2]>,
}

/// Looks up each listed id (unknown ones become configuration errors) and finds
/// the first whole-word occurrence of each term, in one pass over the words.
pub(super) fn scan<'c>(
    output: &Normalised,
    ids: &'c [String],
    errors: &mut Vec<ConfigError>,
) -> Vec<PairScan<'c>> {
    let mut scans: Vec<PairScan<'c>> = ids
        .iter()
        .enumerate()
        .map(|(index, id)| {
            let terms = PAIRS
                .iter()
                .find(|(known, _)| known == id)
                .map(|(_, terms)| {
                    terms.map(|term| TermHit {
                        term,
                        found_at: None,
                    })
                });
            if terms.is_none() {
                errors.push(ConfigError::UnknownContradictionId {
                    index,
                    id: id.clone(),
                });
            }
            PairScan { id, terms }
        })
        .collect();
    if scans.iter().any(|s| s.terms.is_some()) {
        for (at, word) in output.as_str().split_word_bound_indices() {
            for hit in scans.iter_mut().filter_map(|s| s.terms.as_mut()).flatten() {
                if hit.found_at.is_none() && hit.term == word {
                    hit.found_at = Some(output.origin(at));
                }
            }
        }
    }
    scans
}

/// The report of one CONT rule over the shared scan.
pub(super) fn report(rule: RuleId, scans: &[PairScan<'_>]) -> RuleReport {
    let mut violations = Vec::new();
    let mut evidence = Vec::with_capacity(scans.len());
    for scan in scans {
        let Some(terms) = &scan.terms else {
            evidence.push(Evidence::UnknownContradictionId {
                contradiction_id: scan.id.to_owned(),
            });
            continue;
        };
        let [a, b] = terms;
        let contradiction = match (a.found_at, b.found_at) {
            (Some(at_a), Some(at_b)) => {
                violations.push(Violation {
                    invariant: Q_INV_03,
                    message: message(rule, scan.id, (a.term, at_a), (b.term, at_b)),
                });
                true
            }
            _ => false,
        };
        evidence.push(Evidence::Pair {
            contradiction_id: scan.id.to_owned(),
            terms: terms.clone(),
            contradiction,
        });
    }
    RuleReport::new(rule, violations, evidence)
}

fn message(rule: RuleId, id: &str, a: (&str, usize), b: (&str, usize)) -> String {
    match rule {
        RuleId::Cont002 => format!(
            "incompatible constraints ({id}): {:?} at byte {} and {:?} at byte {} cannot both hold",
            a.0, a.1, b.0, b.1
        ),
        RuleId::Cont003 => {
            let (first, then) = if a.1 <= b.1 { (a, b) } else { (b, a) };
            format!(
                "assertion then infirmation ({id}): {:?} at byte {} is followed by {:?} at byte {}",
                first.0, first.1, then.0, then.1
            )
        }
        _ => format!(
            "direct negation ({id}): both {:?} at byte {} and {:?} at byte {} appear",
            a.0, a.1, b.0, b.1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_hits(output: &str, id: &str) -> [Option<usize>; 2] {
        let ids = [id.to_owned()];
        let mut errors = Vec::new();
        let scans = scan(&Normalised::new(output), &ids, &mut errors);
        assert!(errors.is_empty());
        let terms = scans[0].terms.as_ref().unwrap();
        [terms[0].found_at, terms[1].found_at]
    }

    #[test]
    fn terms_are_whole_words() {
        assert_eq!(
            first_hits("The ID is invalid.", "valid_invalid"),
            [None, Some(10)]
        );
        assert_eq!(
            first_hits("Incorrectly filed", "correct_incorrect"),
            [None, None]
        );
        assert_eq!(
            first_hits("VALID, not invalid", "valid_invalid"),
            [Some(0), Some(11)]
        );
        // Word-internal '_' and '.' between letters do not break a word (UAX #29).
        assert_eq!(first_hits("true_false", "true_false"), [None, None]);
        assert_eq!(first_hits("true.false", "true_false"), [None, None]);
        assert_eq!(first_hits("true. false", "true_false"), [Some(0), Some(6)]);
        assert_eq!(first_hits("true/false", "true_false"), [Some(0), Some(5)]);
    }

    #[test]
    fn offsets_are_in_the_original_text() {
        assert_eq!(first_hits("Ä  ABOVE", "above_below"), [Some(4), None]);
    }

    #[test]
    fn every_id_in_the_contract_is_known() {
        let ids = [
            "always_never",
            "true_false",
            "increase_decrease",
            "positive_negative",
            "valid_invalid",
            "correct_incorrect",
            "success_failure",
            "above_below",
            "present_absent",
            "enabled_disabled",
        ];
        let known: Vec<&str> = PAIRS.iter().map(|(id, _)| *id).collect();
        assert_eq!(known, ids);
        for (id, [a, b]) in PAIRS {
            assert_eq!(id, format!("{a}_{b}"));
        }
    }
}
