//! The deterministic explanation: some of the facts, in order, each one a sentence.
//!
//! Every sentence is a fact, so Oracle-A sources it (RULE-PREC-001/004); the verdict fact is
//! always first, so the verdict phrase is found (PREC-002); and a fact holds no verdict phrase
//! or promise that [`crate::oracle_case`] forbids, nor a contradiction pair it checks, because
//! those are checked only where the facts themselves do not contain them (PREC-003,
//! CONT-001..003). So the template passes the oracle by construction; the property tests check it.

use engine::Verdict;
use engine::gaps::GapKind;

use crate::facts::{FactKind, Facts};

/// The template explanation of `facts`, in their language.
///
/// What it says depends on the verdict: for ELIGIBLE the conditions met and the benefit; for
/// PARTIAL_MATCH the gaps and the benefit; for NOT_ELIGIBLE the exclusions and the gaps; always
/// the verdict and, where there is one, the score.
pub fn template(facts: &Facts) -> String {
    let stop = &facts.language().words().full_stop;
    let sentences: Vec<&str> = facts
        .facts()
        .iter()
        .filter(|fact| says(facts.verdict(), fact.kind))
        .map(|fact| fact.text.as_str())
        .collect();
    format!("{}{stop}", sentences.join(&format!("{stop} ")))
}

/// Whether the template for `verdict` states facts of `kind`.
fn says(verdict: Verdict, kind: FactKind) -> bool {
    use Verdict::{Eligible, NotApplicable, NotEligible, PartialMatch};
    match kind {
        FactKind::Verdict => true,
        FactKind::Score => verdict != NotApplicable,
        FactKind::Condition { met } => verdict == Eligible && met,
        FactKind::Exclusion => verdict == NotEligible,
        // An exclusion gap repeats an exclusion fact.
        FactKind::Gap { gap_kind } => {
            matches!(verdict, PartialMatch | NotEligible) && gap_kind != GapKind::Exclusion
        }
        FactKind::Benefit => matches!(verdict, Eligible | PartialMatch),
    }
}
