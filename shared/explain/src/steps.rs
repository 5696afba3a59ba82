//! The summary and next steps of an evaluation in any language.
//!
//! English is the engine's own wording (`Evaluation::summary`, `Evaluation::next_steps`). Other
//! languages word the same steps, in the same order, from their [`Words`]: a missing value is
//! the field's question, a document to get verified names it, an "any one of" group of
//! documents is one sentence, a value under a minimum or over a maximum says by how much, and
//! any other gap is said as its gap fact.

use engine::catalogue::DOCUMENTS;
use engine::gaps::{Gap, GapKind, GapText};
use engine::next_steps::{NextStep, Summary};
use engine::{Catalogue, Evaluation};

use crate::facts::{FieldOf, gap_sentence};
use crate::language::Language;
use crate::phrasing::Shown;
use crate::words::{NextStepWords, Words, fill};

/// The verdict in one sentence, in `language`.
pub fn summary(evaluation: &Evaluation<'_>, language: Language) -> String {
    let Some(words) = &language.words().summary else {
        return evaluation.summary.to_string();
    };
    match evaluation.summary {
        Summary::Eligible => words.eligible.clone(),
        Summary::NeedToKnow { questions: 1 } => words.need_to_know_one.clone(),
        Summary::NeedToKnow { questions } => fill(
            &words.need_to_know_many,
            &[("count", &questions.to_string())],
        ),
        Summary::PartialMatch => words.partial_match.clone(),
        Summary::NotEligible => words.not_eligible.clone(),
    }
}

/// A step asking what could still make the citizen eligible, said as such ("We need to know
/// more: Tell us your age").
pub fn need_to_know(language: Language, step: &str) -> String {
    fill(&language.words().need_to_know, &[("step", step)])
}

/// What the citizen can do about the verdict, step by step, in `language`.
pub fn next_steps(
    evaluation: &Evaluation<'_>,
    catalogue: &Catalogue,
    language: Language,
) -> Vec<String> {
    let words = language.words();
    let Some(steps) = &words.next_step else {
        return evaluation
            .next_steps
            .iter()
            .map(ToString::to_string)
            .collect();
    };
    let said = Said {
        evaluation,
        catalogue,
        words,
        steps,
    };
    evaluation
        .next_steps
        .iter()
        .map(|step| match step {
            NextStep::Apply { portal } => fill(&steps.apply, &[("portal", portal)]),
            // Every document is needed: joined with "and".
            NextStep::KeepReady { documents, .. } => {
                let codes: Vec<&str> = documents.iter().map(String::as_str).collect();
                let named = said.documents(&codes, &words.and_separator);
                fill(&steps.keep_ready, &[("documents", &named)])
            }
            NextStep::Close(text) => said.gap(*text),
            NextStep::ApplyOnceMet { portal } => fill(&steps.apply_once_met, &[("portal", portal)]),
            // An exclusion's sentence already says the scheme is not for the citizen.
            NextStep::WhyNot(text) if text.kind() == GapKind::Exclusion => said.gap(*text),
            NextStep::WhyNot(text) => fill(&steps.why_not, &[("gap", &said.gap(*text))]),
            // Any one of these would do: said together, never each as a requirement.
            NextStep::Either {
                why_not,
                alternatives,
            } => {
                let items: Vec<_> = alternatives.iter().map(|t| (*t, *t)).collect();
                let joined = engine::gaps::alternatives(
                    &items,
                    &|t: &GapText| said.gap(*t),
                    &words.either_separator,
                    &words.and_also(),
                );
                if *why_not {
                    fill(&steps.why_not, &[("gap", &joined)])
                } else {
                    joined
                }
            }
        })
        .collect()
}

/// What words one evaluation's steps.
struct Said<'e, 'a> {
    evaluation: &'e Evaluation<'a>,
    catalogue: &'e Catalogue,
    words: &'e Words,
    steps: &'e NextStepWords,
}

impl Said<'_, '_> {
    fn gap(&self, text: GapText<'_>) -> String {
        let Some(gap) = self.evaluation.gaps.iter().find(|g| g.path == text.path()) else {
            // Every step's text is one of the evaluation's gaps; should one not be, the
            // engine's English still says it.
            return text.to_string();
        };
        if let Some(codes) = text.group_documents() {
            let template = if gap.actual.is_none() {
                &self.steps.tell_any_verified
            } else {
                &self.steps.get_any_verified
            };
            let named = self.documents(&codes, &self.words.or_separator);
            return fill(template, &[("documents", &named)]);
        }
        if gap.actual.is_none() {
            return self.question(gap.field);
        }
        if let Some(document) = self.document_to_verify(gap) {
            return fill(&self.steps.get_verified, &[("document", &document)]);
        }
        if let Some(short) = self.beyond_limit(gap) {
            return short;
        }
        // A step says the gap without its heading ("condition not met: …").
        gap_sentence(self.catalogue, self.words, gap, false)
    }

    /// "Your age is 58 years; that is 2 years below the minimum of 60 years": a known value
    /// under an `at least` (`gte`) or over an `at most` (`lte`) limit, with the distance.
    fn beyond_limit(&self, gap: &Gap<'_>) -> Option<String> {
        let template = match gap.operator {
            "gte" => &self.steps.below_minimum,
            "lte" => &self.steps.above_maximum,
            _ => return None,
        };
        if gap.gap_kind != GapKind::Threshold || gap.negated {
            return None;
        }
        let (actual, distance) = (gap.actual?, gap.gap?);
        let on = FieldOf::new(self.catalogue, self.words, gap.field, gap.actual);
        let Shown::One(limit) = on.values.expected(gap.operator, gap.required) else {
            return None;
        };
        let field = self
            .words
            .stated(&on.field, Some(&on.values.actual(actual)));
        Some(fill(
            template,
            &[
                ("field", &field),
                ("distance", &on.values.number(distance.0)),
                ("limit", &limit),
            ],
        ))
    }

    /// The document a gap asks the citizen to get verified ("contains land_record").
    fn document_to_verify(&self, gap: &Gap<'_>) -> Option<String> {
        if gap.gap_kind != GapKind::Document || gap.negated || gap.operator != "contains" {
            return None;
        }
        let on = FieldOf::new(self.catalogue, self.words, gap.field, gap.actual);
        match on.values.expected(gap.operator, gap.required) {
            Shown::One(document) => Some(document),
            Shown::Many(_) | Shown::Range(..) => None,
        }
    }

    /// How a citizen is asked for `field`: the language's question, else the catalogue's.
    fn question(&self, field: &str) -> String {
        self.catalogue
            .id(field)
            .and_then(|id| self.words.question(self.catalogue.field(id)))
            .unwrap_or_else(|| field.to_string())
    }

    /// Documents by code, in the language's words, the last two joined by `last`: "a, b and
    /// c" (all needed) or "a, b or c" (any one).
    fn documents(&self, codes: &[&str], last: &str) -> String {
        let spec = self
            .catalogue
            .id(DOCUMENTS)
            .map(|id| self.catalogue.field(id));
        let named: Vec<String> = codes
            .iter()
            .map(|code| match spec {
                Some(spec) => self.words.value(spec, code),
                None => code.replace('_', " "),
            })
            .collect();
        self.words.list(&named, last)
    }
}
