//! RULE-PREC-001 (count threshold), RULE-PREC-004 (fact sourcing) and RULE-PREC-005 (no words
//! beside the facts), which share one sourcing pass over the sentences.

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

/// The facts as the sourcing rules compare them: normalised, in fact order (empty ones kept,
/// so indexes stay those of the case).
pub(super) fn normalised_facts(facts: &[String]) -> Vec<String> {
    facts.iter().map(|f| normalise(f)).collect()
}

/// Splits the output into sentences and sources each against the [normalised
/// facts](normalised_facts): a sentence is sourced by the first non-empty fact (in fact
/// order) that contains it or that it contains.
pub(super) fn source_sentences(output: &Normalised, facts: &[String]) -> Vec<SourcedSentence> {
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

/// RULE-PREC-005: a sentence may add at most `max` words to the facts it is made of. A sentence
/// inside a fact adds none; otherwise every occurrence of every fact it contains is taken out
/// (longest first) and the words left (runs with a letter or digit) are what it adds: "you are
/// eligible for x, whose work…" contains the verdict fact and adds "whose work…". PREC-004
/// sources a sentence that contains a fact whatever surrounds it; this rule bounds the
/// surroundings. One violation per sentence over the limit; not applied when `max` is `None`.
pub(super) fn added_words(
    sentences: &[SourcedSentence],
    normalised_facts: &[String],
    max: Option<usize>,
) -> RuleReport {
    let Some(max) = max else {
        return RuleReport::new(
            RuleId::Prec005,
            Vec::new(),
            vec![Evidence::NotConfigured {
                key: "ADDED_WORDS_MAX",
            }],
        );
    };
    let mut facts: Vec<&str> = normalised_facts
        .iter()
        .map(String::as_str)
        .filter(|f| !f.is_empty())
        .collect();
    facts.sort_by_key(|f| std::cmp::Reverse(f.len()));
    let mut violations = Vec::new();
    let mut evidence = Vec::new();
    for (index, sentence) in sentences.iter().enumerate() {
        let inside = sentence
            .source
            .as_ref()
            .is_some_and(|s| s.direction == MatchDirection::FactContainsSentence);
        let added: Vec<String> = if inside {
            Vec::new()
        } else {
            let mut rest = sentence.text.clone();
            for fact in &facts {
                rest = rest.replace(fact, " ");
            }
            rest.split_whitespace()
                .filter(|w| w.chars().any(char::is_alphanumeric))
                .map(str::to_owned)
                .collect()
        };
        if added.len() > max {
            violations.push(Violation {
                invariant: Q_INV_01,
                message: format!(
                    "sentence {index} at byte {} adds {} word(s) to the facts (ADDED_WORDS_MAX {max}): {:?}",
                    sentence.offset,
                    added.len(),
                    added.join(" ")
                ),
            });
        }
        evidence.push(Evidence::AddedWords {
            index,
            offset: sentence.offset,
            added,
            max,
        });
    }
    RuleReport::new(RuleId::Prec005, violations, evidence)
}
