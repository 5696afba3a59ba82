//! Facts: what one evaluation says, as sentences in one language.
//!
//! One fact per item of the evaluation, in this order: the verdict, the score, each evaluated
//! condition, each exclusion that bars the citizen, each gap, then the benefit (its kind, its
//! amounts, its description). Each is worded from the evaluation's own values and nothing else,
//! so an explanation built from facts, or checked against them, says only what was decided.

use engine::catalogue::{FieldSpec, FieldType};

/// The field whose values are scheme ids: its words are the schemes' names.
const ACTIVE_SCHEMES: &str = "eligibility.active_schemes";
use engine::benefit::BenefitEstimate;
use engine::eval::Evaluation;
use engine::format::rupees;
use engine::gaps::GapKind;
use engine::value::{FieldValue, Scalar};
use engine::{Catalogue, Verdict};
use serde::Serialize;
use serde_json::Value as Json;

use crate::language::{Digits, Language};
use crate::phrasing::{Amounts, Bar, Condition, Field, Gap, Shown};
use crate::sanitize::sanitize_profile_text;
use crate::values::Values;
use crate::words::Words;

/// Gap descriptions quote profile values; this bounds them like the values themselves.
const GAP_DESCRIPTION_MAX_CHARS: usize = 600;

/// What a fact is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FactKind {
    Verdict,
    Score,
    /// One evaluated condition; `met` is the condition's own truth (under a `NOT` the path
    /// needs it unmet).
    Condition {
        met: bool,
    },
    /// An exclusion that bars the citizen.
    Exclusion,
    Gap {
        gap_kind: GapKind,
    },
    Benefit,
}

/// One fact sentence (no final full stop).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fact {
    #[serde(flatten)]
    pub kind: FactKind,
    pub text: String,
}

/// The facts of one evaluation in one language. Only [`facts`] makes them, so every fact is
/// the evaluation's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Facts {
    language: Language,
    digits: Digits,
    verdict: Verdict,
    facts: Vec<Fact>,
}

impl Facts {
    pub fn language(&self) -> Language {
        self.language
    }

    /// How the facts write numbers.
    pub fn digits(&self) -> Digits {
        self.digits
    }

    /// The engine's verdict the facts state.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    pub fn facts(&self) -> &[Fact] {
        &self.facts
    }

    /// The fact sentences, in order: Oracle-A's `facts`.
    pub fn texts(&self) -> Vec<String> {
        self.facts.iter().map(|f| f.text.clone()).collect()
    }
}

/// The facts of `evaluation` in `language`, with ASCII digits; `catalogue` names the fields and
/// gives their units.
pub fn facts(evaluation: &Evaluation<'_>, catalogue: &Catalogue, language: Language) -> Facts {
    facts_in(evaluation, catalogue, language, Digits::Ascii)
}

/// The facts of `evaluation` in `language`, numbers written in `digits`.
pub fn facts_in(
    evaluation: &Evaluation<'_>,
    catalogue: &Catalogue,
    language: Language,
    digits: Digits,
) -> Facts {
    let words = language.words();
    let mut facts = Vec::new();
    let mut push = |kind: FactKind, text: String| {
        facts.push(Fact {
            kind,
            text: language.write_digits(&text, digits),
        })
    };

    push(
        FactKind::Verdict,
        words.verdict(
            &scheme_name(
                catalogue,
                words,
                evaluation.scheme_id,
                evaluation.scheme_name,
            ),
            evaluation.verdict,
            &words.date(evaluation.as_of),
        ),
    );
    push(
        FactKind::Score,
        words.score(
            evaluation.match_score,
            evaluation.matched_conditions,
            evaluation.total_conditions,
        ),
    );
    for trace in &evaluation.conditions_evaluated {
        let on = FieldOf::new(catalogue, words, trace.field, trace.actual);
        push(
            FactKind::Condition { met: trace.result },
            words.condition(&Condition {
                label: trace.label,
                actual: trace.actual.map(|a| on.values.actual(a)),
                required: on.required(trace.operator, trace.expected),
                met: trace.result,
                field: on.field,
            }),
        );
    }
    for excluded in &evaluation.excluded_by {
        // `excluded_by` lists exclusions known to fail: their traces have a value.
        let Some((trace, actual)) = evaluation
            .exclusions_checked
            .iter()
            .find(|t| t.path == excluded.path)
            .and_then(|t| t.actual.map(|a| (t, a)))
        else {
            continue;
        };
        let on = FieldOf::new(catalogue, words, trace.field, Some(actual));
        push(
            FactKind::Exclusion,
            words.exclusion(&on.bar(trace.operator, trace.expected, actual)),
        );
    }
    for (gap_kind, text) in gap_texts(evaluation, catalogue, words, &|_| true) {
        push(FactKind::Gap { gap_kind }, text);
    }
    if let Some(benefit) = evaluation.benefit_estimate {
        for text in benefit_lines(words, benefit) {
            push(FactKind::Benefit, text);
        }
    }
    Facts {
        language,
        digits,
        verdict: evaluation.verdict,
        facts,
    }
}

/// The sentences of the gaps `chosen` keeps, in the evaluation's order: conditions any one of
/// which would do are one sentence, joined as the steps join them (under the first one's
/// heading; said one by one, each would read as a requirement), kept when every one of them is
/// chosen.
fn gap_texts(
    evaluation: &Evaluation<'_>,
    catalogue: &Catalogue,
    words: &Words,
    chosen: &dyn Fn(&engine::gaps::Gap) -> bool,
) -> Vec<(GapKind, String)> {
    let mut out = Vec::new();
    for (k, gap) in evaluation.gaps.iter().enumerate() {
        let of = gap.gap_description;
        let text = if of.is_alternative() {
            let (before, after) = evaluation.gaps.split_at(k);
            if before
                .iter()
                .any(|g| g.gap_description.same_alternatives(&of))
            {
                continue;
            }
            let group: Vec<&engine::gaps::Gap> = after
                .iter()
                .filter(|g| g.gap_description.same_alternatives(&of))
                .collect();
            if !group.iter().all(|g| chosen(g)) {
                continue;
            }
            let items: Vec<_> = group
                .iter()
                .enumerate()
                .map(|(n, g)| (g.gap_description, (n == 0, *g)))
                .collect();
            engine::gaps::alternatives(
                &items,
                &|&(first, g): &(bool, &engine::gaps::Gap)| {
                    gap_sentence(catalogue, words, g, first)
                },
                &words.either_separator,
                &words.and_also(),
            )
        } else if chosen(gap) {
            gap_sentence(catalogue, words, gap, true)
        } else {
            continue;
        };
        out.push((gap.gap_kind, text));
    }
    out
}

/// Why a scheme is not for the citizen, in `language`: the exclusions that bar them, else the
/// gaps no answer, document or wait can close and that their known values decide (a condition
/// on a value not given is no reason; alternatives are one reason, as the gaps say them).
pub fn reasons(
    evaluation: &Evaluation<'_>,
    catalogue: &Catalogue,
    language: Language,
) -> Vec<String> {
    let bars: Vec<String> = facts(evaluation, catalogue, language)
        .facts
        .into_iter()
        .filter(|f| f.kind == FactKind::Exclusion)
        .map(|f| f.text)
        .collect();
    if !bars.is_empty() {
        return bars;
    }
    let words = language.words();
    gap_texts(evaluation, catalogue, words, &|g| {
        g.actual.is_some() && !g.closable_by.by_citizen()
    })
    .into_iter()
    .map(|(_, text)| text)
    .collect()
}

/// The benefit's amounts for this evaluation as one sentence, where the rule gives any.
pub fn amount(evaluation: &Evaluation<'_>, language: Language) -> Option<String> {
    benefit_amount(language.words(), evaluation.benefit_estimate?)
}

/// A scheme's name in `language` (its words in the language file), else `fallback`.
pub fn scheme_name_in(
    catalogue: &Catalogue,
    language: Language,
    scheme_id: &str,
    fallback: &str,
) -> String {
    scheme_name(catalogue, language.words(), scheme_id, fallback)
}

/// The scheme's name in the language: its words as a value of the schemes a citizen receives
/// (every corpus scheme has them in every file), else the rule's `scheme_name`, never the id.
pub(crate) fn scheme_name(
    catalogue: &Catalogue,
    words: &Words,
    scheme_id: &str,
    scheme_name: &str,
) -> String {
    catalogue
        .id(ACTIVE_SCHEMES)
        .map(|id| catalogue.field(id))
        .filter(|spec| {
            words
                .values
                .get(&spec.name)
                .is_some_and(|names| names.contains_key(scheme_id))
                || spec.value_words.contains_key(scheme_id)
        })
        .map_or_else(
            || scheme_name.to_string(),
            |spec| words.value(spec, scheme_id),
        )
}

/// A benefit as sentences: its kind and payment, its amounts, its description where the
/// language carries it.
pub(crate) fn benefit_lines(words: &Words, benefit: &BenefitEstimate) -> Vec<String> {
    [
        words.benefit_kind(
            benefit.type_code.as_deref(),
            benefit.disbursement.as_deref(),
        ),
        benefit_amount(words, benefit),
        benefit
            .description
            .as_deref()
            .and_then(|d| words.benefit_description(d)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A benefit's amounts as one sentence, where it has any.
pub(crate) fn benefit_amount(words: &Words, benefit: &BenefitEstimate) -> Option<String> {
    let amount = |json: &Option<Json>| json.as_ref().and_then(Json::as_f64).map(rupees);
    // What the amount is decides the words: a cover or a loan limit is never "a year" or
    // "once" of money paid (docs/rule-format.md, "Benefit kinds").
    match (
        amount(&benefit.cover_inr),
        amount(&benefit.loan_up_to_inr),
        amount(&benefit.monthly_from_inr),
    ) {
        (Some(cover), _, _) => Some(words.benefit_cover(&cover)),
        (_, Some(loan), _) => Some(words.benefit_loan(&loan)),
        (_, _, Some(low)) => {
            amount(&benefit.monthly_inr).map(|high| words.benefit_contribution(&low, &high))
        }
        _ => words.benefit_amounts(&amounts(benefit)),
    }
}

/// A benefit's amounts as a phrase ("₹600 a month, ₹7,200 a year"), where it has any: a tier's
/// amount beside its condition.
pub(crate) fn benefit_amount_parts(words: &Words, benefit: &BenefitEstimate) -> Option<String> {
    let parts = words.amount_parts(&amounts(benefit));
    if parts.is_empty() {
        benefit_amount(words, benefit)
    } else {
        Some(parts.join(&words.list_separator))
    }
}

fn amounts(benefit: &BenefitEstimate) -> Amounts {
    let amount = |json: &Option<Json>| json.as_ref().and_then(Json::as_f64).map(rupees);
    Amounts {
        monthly: amount(&benefit.monthly_inr),
        annual: amount(&benefit.annual_inr),
        one_time: amount(&benefit.one_time_inr),
    }
}

/// The sentence of one gap: a fact (`headed`: under its kind's heading), and a next step where
/// no shorter one says it.
pub(crate) fn gap_sentence(
    catalogue: &Catalogue,
    words: &Words,
    gap: &engine::gaps::Gap,
    headed: bool,
) -> String {
    let bar = match (gap.gap_kind, gap.actual) {
        (GapKind::Exclusion, Some(actual)) => {
            Some(FieldOf::new(catalogue, words, gap.field, gap.actual).bar(
                gap.operator,
                gap.required,
                actual,
            ))
        }
        _ => None,
    };
    let on = FieldOf::new(catalogue, words, gap.field, gap.actual);
    words.gap_sentence(
        &Gap {
            kind: gap.gap_kind,
            description: sanitize_profile_text(
                &gap.gap_description.to_string(),
                GAP_DESCRIPTION_MAX_CHARS,
            ),
            actual: gap.actual.map(|a| on.values.actual(a)),
            // One of an "any one of" group of documents names the others as alternatives,
            // its own first (as the English does): never as if each were needed.
            required: match gap.gap_description.group_documents() {
                Some(codes) => on.any_of(gap.required, &codes),
                None => on.required(gap.operator, gap.required),
            },
            negated: gap.negated,
            distance: gap.gap.map(|d| on.values.number(d.0)),
            estimated_eligibility_date: gap.estimated_eligibility_date.map(|d| words.date(d)),
            bar,
            field: on.field,
        },
        headed,
    )
}

/// One field of the evaluation with what renders its values.
pub(crate) struct FieldOf<'a> {
    pub field: Field<'a>,
    pub values: Values<'a>,
}

impl<'a> FieldOf<'a> {
    pub fn new(
        catalogue: &'a Catalogue,
        words: &'a Words,
        name: &'a str,
        actual: Option<&FieldValue>,
    ) -> Self {
        let spec: Option<&FieldSpec> = catalogue.id(name).map(|id| catalogue.field(id));
        let plural = spec.map_or_else(
            || matches!(actual, Some(FieldValue::List(_))),
            |s| s.field_type == FieldType::List,
        );
        let clause = match (spec, actual) {
            (Some(spec), Some(FieldValue::Scalar(Scalar::Bool(b)))) => words.clause(spec, *b),
            _ => None,
        };
        FieldOf {
            field: Field {
                name,
                label: spec.map_or(name, |s| s.human_name()),
                plural,
                clause,
            },
            values: Values { words, spec },
        }
    }

    /// The requirement in words; a yes/no requirement as the clause it asks for ("required:
    /// your household is on the BPL list"), not "required: yes".
    pub fn required(&self, operator: &str, expected: &Json) -> String {
        let words = self.values.words;
        if let (Some(spec), Json::Bool(b), "eq" | "neq") = (self.values.spec, expected, operator)
            && let Some(clause) = words.clause(spec, *b != (operator == "neq"))
        {
            return clause;
        }
        let shown = self.values.expected(operator, expected);
        words.requirement(operator, &shown)
    }

    /// "any one of: `this`, or the other `codes`", `this` first.
    pub fn any_of(&self, this: &Json, codes: &[&str]) -> String {
        let this = this.as_str().unwrap_or_default();
        let names = std::iter::once(this)
            .chain(codes.iter().copied().filter(|c| *c != this))
            .map(|code| self.values.json(&Json::String(code.to_string())))
            .collect();
        self.values.words.requirement("in", &Shown::Many(names))
    }

    /// The fact that makes an exclusion (`operator`, `expected`) fail for `actual`.
    pub fn bar(self, operator: &str, expected: &Json, actual: &FieldValue) -> Bar<'a> {
        let words = self.values.words;
        if let Some(clause) = self.field.clause {
            return Bar::Clause(clause);
        }
        if let (FieldValue::List(_), "not_contains", Shown::One(item)) =
            (actual, operator, self.values.expected(operator, expected))
        {
            return match self
                .values
                .spec
                .and_then(|spec| words.includes(spec, &item))
            {
                Some(clause) => Bar::Clause(clause),
                None => Bar::Includes {
                    field: self.field,
                    item,
                },
            };
        }
        let required = self.required(operator, expected);
        Bar::Value {
            actual: self.values.actual(actual),
            required,
            field: self.field,
        }
    }
}
