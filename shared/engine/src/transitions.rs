//! Transition events (docs/semantics.md, "Transitions and idempotency"): what changed for one (user, scheme) between its last known
//! outcome and the new one.

use serde::Serialize;

use crate::outcome::Verdict;

/// An outcome as remembered between evaluations: verdict, score and the gaps (any comparable
/// summary of them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Known<G> {
    pub verdict: Verdict,
    pub score: u8,
    pub gaps: G,
}

/// Why a pass over a (user, scheme) happened: the reason a `lost` event carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    ProfileChanged,
    RuleChanged,
    /// The rule is no longer in effect (expired).
    RuleExpired,
    /// The application deadline passed.
    DeadlinePassed,
    /// The yearly application window closed.
    WindowClosed,
    /// The user moved to another state, where the scheme is not offered.
    StateChanged,
    /// The citizen's age on the date, read from the date of birth, crossed a limit (a
    /// birthday; docs/semantics.md, "Age on a date").
    AgeChanged,
}

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::ProfileChanged => "profile_changed",
            Cause::RuleChanged => "rule_changed",
            Cause::RuleExpired => "rule_expired",
            Cause::DeadlinePassed => "deadline_passed",
            Cause::WindowClosed => "window_closed",
            Cause::StateChanged => "state_changed",
            Cause::AgeChanged => "age_changed",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    NewMatch,
    Lost(Cause),
    PartialMatch,
}

/// What a new outcome means against the last known one. `current` is `None` when the scheme no
/// longer applies to the user (then `cause` says why). Returns whether the outcome changed
/// (an `eligibility.computed` event) and the transition events: ELIGIBLE → PARTIAL_MATCH is
/// both a `lost` and a `partial_match`.
pub fn compare<G: PartialEq>(
    previous: Option<&Known<G>>,
    current: Option<&Known<G>>,
    cause: Cause,
) -> (bool, Vec<Transition>) {
    let changed = previous != current;
    let was_eligible = previous.is_some_and(|p| p.verdict == Verdict::Eligible);
    let is_eligible = current.is_some_and(|c| c.verdict == Verdict::Eligible);
    let is_partial = current.is_some_and(|c| c.verdict == Verdict::PartialMatch);
    let mut transitions = Vec::new();
    if is_eligible && !was_eligible {
        transitions.push(Transition::NewMatch);
    }
    if was_eligible && !is_eligible {
        transitions.push(Transition::Lost(cause));
    }
    if is_partial && changed {
        transitions.push(Transition::PartialMatch);
    }
    (changed, transitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(verdict: Verdict, score: u8, gaps: &str) -> Known<String> {
        Known {
            verdict,
            score,
            gaps: gaps.to_string(),
        }
    }

    #[test]
    fn transitions_follow_spec_section_4() {
        use Verdict::*;
        let eligible = known(Eligible, 100, "");
        let partial = known(PartialMatch, 66, "age");
        let partial_closer = known(PartialMatch, 83, "age");
        let partial_other_gap = known(PartialMatch, 66, "income");
        let not = known(NotEligible, 20, "age,income");
        let cause = Cause::ProfileChanged;
        assert_eq!(
            compare(Some(&eligible), Some(&partial), cause),
            (
                true,
                vec![Transition::Lost(cause), Transition::PartialMatch]
            )
        );

        assert_eq!(
            compare(None, Some(&eligible), cause),
            (true, vec![Transition::NewMatch])
        );
        assert_eq!(
            compare(Some(&partial), Some(&eligible), cause),
            (true, vec![Transition::NewMatch])
        );
        assert_eq!(
            compare(Some(&eligible), Some(&eligible), cause),
            (false, vec![])
        );
        assert_eq!(
            compare(Some(&eligible), Some(&not), cause),
            (true, vec![Transition::Lost(cause)])
        );
        assert_eq!(
            compare(Some(&eligible), None, Cause::RuleExpired),
            (true, vec![Transition::Lost(Cause::RuleExpired)])
        );
        assert_eq!(
            compare(Some(&not), Some(&partial), cause),
            (true, vec![Transition::PartialMatch])
        );
        assert_eq!(
            compare(Some(&partial), Some(&partial_closer), cause),
            (true, vec![Transition::PartialMatch])
        );
        assert_eq!(
            compare(Some(&partial), Some(&partial_other_gap), cause),
            (true, vec![Transition::PartialMatch])
        );
        assert_eq!(
            compare(Some(&partial), Some(&partial), cause),
            (false, vec![])
        );
        assert_eq!(compare(Some(&partial), Some(&not), cause), (true, vec![]));
        assert_eq!(
            compare(Some(&not), None, Cause::RuleExpired),
            (true, vec![])
        );
        assert_eq!(compare::<String>(None, None, cause), (false, vec![]));
    }
}
