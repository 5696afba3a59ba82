//! RULE-PREC-001 (count threshold) and RULE-PREC-004 (fact sourcing), which
//! share one sourcing pass over the sentences.

use crate::normalise::{Normalised, normalise};
use crate::report::{Evidence, MatchDirection, RuleReport, Source, Violation};
use crate::rule_id::{Q_INV_01, RuleId};
use crate::sentences;

/// One sentence of the output and the fact that sourced it, if any.
pub(super) struct SourcedSentence {
    offset: usize,
    text: String,
    source: Option<Source>,
}

/// Splits the output into sentences and sources each against the facts: a
/// sentence is sourced by the first non-empty normalised fact (in fact order)
/// that contains it or that it contains.
pub(super) fn source_sentences(output: &Normalised, facts: &[String]) -> Vec<SourcedSentence> {
    let facts: Vec<String> = facts.iter().map(|f| normalise(f)).collect();
    sentences::split(output.as_str())
        .into_iter()
        .map(|span| {
            let text = &output.as_str()[span.clone()];
            let source = facts.iter().enumerate().find_map(|(fact_index, fact)| {
                direction(fact, text).map(|direction| Source {
                    fact_index,
                    fact: fact.clone(),
                    direction,
                })
            });
            SourcedSentence {
                offset: output.origin(span.start),
                text: text.to_owned(),
                source,
            }
        })
        .collect()
}

fn direction(fact: &str, sentence: &str) -> Option<MatchDirection> {
    if fact.is_empty() {
        // An empty string is inside everything; the contract excludes it.
        None
    } else if fact.contains(sentence) {
        Some(MatchDirection::FactContainsSentence)
    } else if sentence.contains(fact) {
        Some(MatchDirection::SentenceContainsFact)
    } else {
        None
    }
}

fn sentence_evidence(sentences: &[SourcedSentence]) -> Vec<Evidence> {
    sentences
        .iter()
        .enumerate()
        .map(|(index, s)| Evidence::Sentence {
            index,
            offset: s.offset,
            text: s.text.clone(),
            source: s.source.clone(),
        })
        .collect()
}

/// RULE-PREC-001: FAIL iff the number of unsourced sentences exceeds
/// UNSUPPORTED_MAX; one violation carrying the count.
pub(super) fn unsupported_count(sentences: &[SourcedSentence], max: usize) -> RuleReport {
    let unsupported = sentences.iter().filter(|s| s.source.is_none()).count();
    let mut evidence = sentence_evidence(sentences);
    evidence.push(Evidence::UnsupportedCount { unsupported, max });
    let mut violations = Vec::new();
    if unsupported > max {
        violations.push(Violation {
            invariant: Q_INV_01,
            message: format!("{unsupported} unsupported sentence(s) exceed UNSUPPORTED_MAX {max}"),
        });
    }
    RuleReport::new(RuleId::Prec001, violations, evidence)
}

/// RULE-PREC-004: every claim must be sourced; one violation per unsourced
/// sentence. It has no threshold of its own (UNSUPPORTED_MAX belongs to PREC-001).
pub(super) fn fact_sourcing(sentences: &[SourcedSentence]) -> RuleReport {
    let violations = sentences
        .iter()
        .enumerate()
        .filter(|(_, s)| s.source.is_none())
        .map(|(index, s)| Violation {
            invariant: Q_INV_01,
            message: format!(
                "sentence {index} at byte {} is not traceable to any fact: {:?}",
                s.offset, s.text
            ),
        })
        .collect();
    RuleReport::new(RuleId::Prec004, violations, sentence_evidence(sentences))
}
