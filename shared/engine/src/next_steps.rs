//! Next steps (part of the evaluation output, docs/semantics.md "Evaluation" 8): what the citizen can do about a verdict, in plain language.
//!
//! Like gap texts, a step is written where it is read (see [`GapText`]): an evaluation keeps
//! what the words are made of, not the words.

use serde::Serialize;
use std::fmt;

use crate::catalogue::{Catalogue, DOCUMENTS, FieldSpec};
use crate::gaps::{Gap, GapKind, GapText, word_list};
use crate::outcome::Verdict;
use crate::rule::Rule;

#[derive(Debug, Clone, Copy)]
pub enum NextStep<'a> {
    /// "Apply at …": the rule's portal, without scheme or trailing slash.
    Apply { portal: &'a str },
    /// "Keep ready: …": the documents the rule requires (`documents`: how the catalogue words
    /// them).
    KeepReady {
        documents: &'a [String],
        words: Option<&'a FieldSpec>,
    },
    /// A gap to close, in the gap's own words.
    Close(GapText<'a>),
    /// "When you meet these conditions, apply at …".
    ApplyOnceMet { portal: &'a str },
    /// Why a verdict stands when nothing the citizen can do changes it: a gap the citizen
    /// cannot close. An exclusion's text already says the scheme is not for the citizen.
    WhyNot(GapText<'a>),
}

impl fmt::Display for NextStep<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NextStep::Apply { portal } => write!(f, "Apply at {portal}"),
            // Every one of them is needed: "A, B and C".
            NextStep::KeepReady { documents, words } => {
                f.write_str("Keep ready: ")?;
                for (i, code) in documents.iter().enumerate() {
                    if i > 0 {
                        f.write_str(if i + 1 == documents.len() {
                            " and "
                        } else {
                            ", "
                        })?;
                    }
                    word_list(f, *words, std::slice::from_ref(code))?;
                }
                Ok(())
            }
            NextStep::Close(gap) => write!(f, "{gap}"),
            NextStep::ApplyOnceMet { portal } => {
                write!(f, "When you meet these conditions, apply at {portal}")
            }
            NextStep::WhyNot(gap) if gap.kind() == GapKind::Exclusion => write!(f, "{gap}"),
            NextStep::WhyNot(gap) => write!(f, "This scheme is not for you: {gap}"),
        }
    }
}

impl Serialize for NextStep<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The steps for a verdict: how to apply when ELIGIBLE, the gaps to close and then where to
/// apply when PARTIAL_MATCH, and otherwise the questions whose answers could still change the
/// verdict (`needed`) — or, when there are none, why the verdict stands (never nothing).
/// When answers could still make the verdict ELIGIBLE (`could_become_eligible`), the questions
/// for the needed fields come first, one per field.
pub(crate) fn next_steps<'a>(
    catalogue: &'a Catalogue,
    rule: &'a Rule,
    verdict: Verdict,
    gaps: &[Gap<'a>],
    needed: &[&str],
    could_become_eligible: bool,
) -> Vec<NextStep<'a>> {
    let portal = rule.application.portal_url.as_deref().map(|url| {
        let url = url.strip_prefix("https://").unwrap_or(url);
        url.strip_prefix("http://")
            .unwrap_or(url)
            .trim_end_matches('/')
    });
    let mut steps = Vec::new();
    match verdict {
        Verdict::Eligible => {
            steps.extend(portal.map(|portal| NextStep::Apply { portal }));
            if !rule.documents_required.is_empty() {
                steps.push(NextStep::KeepReady {
                    documents: &rule.documents_required,
                    words: catalogue.id(DOCUMENTS).map(|field| catalogue.field(field)),
                });
            }
        }
        // A gap the citizen cannot close (a category, a limit, an exclusion) blocks the
        // scheme whatever else they do: the steps say that, and no document or question that
        // presumes otherwise ("get your husband's death certificate verified" to a married
        // woman).
        Verdict::PartialMatch if gaps.iter().any(|g| blocks(&g)) => {
            steps.extend(
                gaps.iter()
                    .filter(|g| blocks(g))
                    .map(|g| NextStep::WhyNot(g.gap_description)),
            );
        }
        Verdict::PartialMatch => {
            steps.reserve_exact(gaps.len() + 1);
            let asked = |g: &&Gap| could_become_eligible && is_question(g, needed);
            close(&mut steps, gaps.iter().filter(asked));
            close(&mut steps, gaps.iter().filter(|g| !asked(g)));
            steps.extend(portal.map(|portal| NextStep::ApplyOnceMet { portal }));
        }
        Verdict::NotEligible | Verdict::NotApplicable => {
            close(&mut steps, gaps.iter().filter(|g| is_question(g, needed)));
            if steps.is_empty() {
                // An exclusion first (a hard bar, whatever else holds), then a category the
                // scheme is not for, then any known fact that fails (an unknown one decides nothing here: it is not needed).
                let reason = gaps
                    .iter()
                    .find(|g| g.actual.is_some() && g.gap_kind == GapKind::Exclusion)
                    .or_else(|| {
                        gaps.iter()
                            .find(|g| g.actual.is_some() && !g.closable_by.by_citizen())
                    })
                    .or_else(|| gaps.iter().find(|g| g.actual.is_some()))
                    .or_else(|| gaps.first());
                steps.extend(reason.map(|g| NextStep::WhyNot(g.gap_description)));
            }
        }
    }
    steps
}

/// The verdict in one sentence (docs/semantics.md, "Evaluation" 8): where answers could still
/// make it ELIGIBLE it says "We need to know more", never "not eligible".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summary {
    Eligible,
    /// Answers to this many needed fields could make it ELIGIBLE.
    NeedToKnow {
        questions: usize,
    },
    PartialMatch,
    NotEligible,
}

impl Summary {
    pub(crate) fn of(verdict: Verdict, could_become_eligible: bool, needed: usize) -> Summary {
        match verdict {
            Verdict::Eligible => Summary::Eligible,
            _ if could_become_eligible => Summary::NeedToKnow { questions: needed },
            Verdict::PartialMatch => Summary::PartialMatch,
            Verdict::NotEligible | Verdict::NotApplicable => Summary::NotEligible,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Summary::Eligible => f.write_str("You are eligible"),
            Summary::NeedToKnow { questions: 1 } => {
                f.write_str("We need to know more: one answer could make you eligible")
            }
            Summary::NeedToKnow { questions } => write!(
                f,
                "We need to know more: {questions} answers could make you eligible"
            ),
            Summary::PartialMatch => f.write_str("You meet some of the conditions"),
            Summary::NotEligible => f.write_str("You are not eligible"),
        }
    }
}

impl Serialize for Summary {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A known fact the citizen cannot change that keeps the verdict from ELIGIBLE.
fn blocks(gap: &&Gap) -> bool {
    gap.actual.is_some() && !gap.closable_by.by_citizen()
}

/// A gap whose answer could change the verdict: its text is the field's question.
fn is_question(gap: &Gap, needed: &[&str]) -> bool {
    gap.actual.is_none() && needed.contains(&gap.field)
}

/// A step per gap, but one for the documents of one "any one of" group and one question per
/// field (several conditions on one unknown field ask the same question).
fn close<'a, 'g>(steps: &mut Vec<NextStep<'a>>, gaps: impl Iterator<Item = &'g Gap<'a>>)
where
    'a: 'g,
{
    for gap in gaps {
        let text = gap.gap_description;
        let said = steps.iter().any(|s| {
            matches!(s, NextStep::Close(t)
                if t.same_group(&text) || (gap.actual.is_none() && t.asks_for(gap.field)))
        });
        if !said {
            steps.push(NextStep::Close(text));
        }
    }
}
