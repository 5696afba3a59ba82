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

#[derive(Debug, Clone)]
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
    /// The gaps of an OR of conditions, any one of which would do, said together ("…; or
    /// instead: …"): as the reason the verdict stands (`why_not`) or as gaps to close. Said one
    /// by one, each would read as a requirement ("your social category must be SC" of a land
    /// limit that Scheduled Castes are exempt from).
    Either {
        why_not: bool,
        alternatives: Vec<GapText<'a>>,
    },
}

/// Joins the branches of an OR in [`NextStep::Either`], in English.
pub const OR_INSTEAD: &str = "; or instead: ";
/// Joins the gaps one branch needs all of, in English.
pub const AND_ALSO: &str = "; and: ";

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
            NextStep::Either {
                why_not,
                alternatives,
            } => {
                if *why_not {
                    f.write_str("This scheme is not for you: ")?;
                }
                let items: Vec<_> = alternatives.iter().map(|t| (*t, *t)).collect();
                f.write_str(&crate::gaps::alternatives(
                    &items,
                    &|t: &GapText| t.to_string(),
                    OR_INSTEAD,
                    AND_ALSO,
                ))
            }
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
        Verdict::PartialMatch if blocked(gaps) => {
            for gap in gaps.iter().filter(|g| blocks(g, gaps)) {
                if !said(&steps, gap) {
                    steps.push(why_not(gap, gaps));
                }
            }
        }
        Verdict::PartialMatch => {
            steps.reserve_exact(gaps.len() + 1);
            let asked = |g: &&Gap| could_become_eligible && is_question(g, needed);
            close(&mut steps, gaps.iter().filter(asked), Some(gaps));
            close(&mut steps, gaps.iter().filter(|g| !asked(g)), Some(gaps));
            steps.extend(portal.map(|portal| NextStep::ApplyOnceMet { portal }));
        }
        Verdict::NotEligible | Verdict::NotApplicable => {
            // Only the questions: each is asked alone, since no step of a verdict that stands
            // asks for more than answers.
            close(
                &mut steps,
                gaps.iter().filter(|g| is_question(g, needed)),
                None,
            );
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
                steps.extend(reason.map(|g| why_not(g, gaps)));
            }
        }
    }
    steps
}

/// The gaps under `gap`'s outermost OR of conditions (itself among them), in their order.
fn siblings<'a, 'g>(gap: &'g Gap<'a>, gaps: &'g [Gap<'a>]) -> impl Iterator<Item = &'g Gap<'a>> {
    gaps.iter()
        .filter(|g| g.gap_description.same_alternatives(&gap.gap_description))
}

/// Why the verdict stands, by `gap`: with the other alternatives of its OR, if it has any
/// (only the facts that shut each branch, when every branch is shut).
fn why_not<'a>(gap: &Gap<'a>, gaps: &[Gap<'a>]) -> NextStep<'a> {
    if !gap.gap_description.is_alternative() {
        return NextStep::WhyNot(gap.gap_description);
    }
    let shut = blocks(gap, gaps);
    NextStep::Either {
        why_not: true,
        alternatives: siblings(gap, gaps)
            .filter(|g| !shut || fixed(g))
            .map(|g| g.gap_description)
            .collect(),
    }
}

/// Whether a step already says `gap`: its "any one of" group of documents, its OR of
/// conditions, or (for an unknown value) its field's question.
fn said(steps: &[NextStep<'_>], gap: &Gap<'_>) -> bool {
    let text = gap.gap_description;
    steps.iter().any(|s| match s {
        NextStep::Close(t) => {
            t.same_group(&text) || (gap.actual.is_none() && t.asks_for(gap.field))
        }
        NextStep::Either { alternatives, .. } => alternatives
            .iter()
            .any(|t| t.same_alternatives(&text) || (gap.actual.is_none() && t.asks_for(gap.field))),
        _ => false,
    })
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

/// Whether a fact the citizen cannot change keeps the verdict from ELIGIBLE whatever else
/// they do ([`blocks`] for some gap): then the steps only say why.
pub fn blocked(gaps: &[Gap]) -> bool {
    gaps.iter().any(|g| blocks(g, gaps))
}

/// A known fact the citizen cannot change that keeps the verdict from ELIGIBLE: under ORs of
/// conditions, only when every branch is shut by such a fact (one the citizen can still
/// answer or meet leaves the way open).
fn blocks(gap: &Gap, gaps: &[Gap]) -> bool {
    if !gap.gap_description.is_alternative() {
        return fixed(gap);
    }
    let items: Vec<(GapText, &Gap)> = siblings(gap, gaps)
        .map(|g| (g.gap_description, g))
        .collect();
    crate::gaps::shut(&items, &|g: &&Gap| fixed(g))
}

/// A known fact the citizen cannot change.
fn fixed(gap: &Gap) -> bool {
    gap.actual.is_some() && !gap.closable_by.by_citizen()
}

/// A gap whose answer could change the verdict: its text is the field's question.
fn is_question(gap: &Gap, needed: &[&str]) -> bool {
    gap.actual.is_none() && needed.contains(&gap.field)
}

/// A step per gap, but one for the documents of one "any one of" group, one question per
/// field (several conditions on one unknown field ask the same question), and, given `all`
/// the gaps, one for the alternatives of one OR of conditions.
fn close<'a, 'g>(
    steps: &mut Vec<NextStep<'a>>,
    gaps: impl Iterator<Item = &'g Gap<'a>>,
    all: Option<&'g [Gap<'a>]>,
) where
    'a: 'g,
{
    for gap in gaps {
        if said(steps, gap) {
            continue;
        }
        steps.push(match all {
            Some(all) if gap.gap_description.is_alternative() => NextStep::Either {
                why_not: false,
                alternatives: siblings(gap, all).map(|g| g.gap_description).collect(),
            },
            _ => NextStep::Close(gap.gap_description),
        });
    }
}
