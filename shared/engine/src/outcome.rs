//! Truth values, verdicts and scores: the parts of docs/semantics.md "Evaluation" every evaluation path shares.
//!
//! Truth is three-valued. A leaf on an absent field is `Unknown`: it does not pass, and neither
//! does its negation, so no verdict is ever ELIGIBLE on data the citizen has not given — not even
//! under `NOT` (where a two-valued reading would turn "unknown" into a pass).

use serde::Serialize;

/// Kleene truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Truth {
    True,
    False,
    Unknown,
}

impl Truth {
    pub fn from_bool(b: bool) -> Truth {
        if b { Truth::True } else { Truth::False }
    }

    pub fn passes(self) -> bool {
        self == Truth::True
    }

    /// Kleene AND: false wins, then unknown.
    pub fn and(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::False, _) | (_, Truth::False) => Truth::False,
            (Truth::True, Truth::True) => Truth::True,
            _ => Truth::Unknown,
        }
    }

    /// Kleene OR: true wins, then unknown.
    pub fn or(self, other: Truth) -> Truth {
        !(!self).and(!other)
    }
}

impl std::ops::Not for Truth {
    type Output = Truth;

    fn not(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Eligible,
    PartialMatch,
    NotEligible,
    /// The rule is not in effect (or not open) on the date: no verdict at all.
    NotApplicable,
}

impl Verdict {
    pub fn from_name(name: &str) -> Option<Verdict> {
        [
            Verdict::Eligible,
            Verdict::PartialMatch,
            Verdict::NotEligible,
            Verdict::NotApplicable,
        ]
        .into_iter()
        .find(|v| v.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Eligible => "ELIGIBLE",
            Verdict::PartialMatch => "PARTIAL_MATCH",
            Verdict::NotEligible => "NOT_ELIGIBLE",
            Verdict::NotApplicable => "NOT_APPLICABLE",
        }
    }
}

/// How the exclusions of a rule came out, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exclusions {
    /// One exclusion is known to fail: a hard bar.
    Excluded,
    /// None fails, but one is unknown: cannot be ELIGIBLE, is not barred either.
    Unresolved,
    AllHold,
}

impl Exclusions {
    pub fn from_truths(truths: impl IntoIterator<Item = Truth>) -> Exclusions {
        truths
            .into_iter()
            .fold(Exclusions::AllHold, |acc, t| match (acc, t) {
                (Exclusions::Excluded, _) | (_, Truth::False) => Exclusions::Excluded,
                (_, Truth::Unknown) => Exclusions::Unresolved,
                (acc, Truth::True) => acc,
            })
    }
}

/// `match_score` = floor(100 × numerator / denominator), exact.
pub fn match_score(numerator: u64, denominator: u64) -> u8 {
    debug_assert!(numerator <= denominator);
    (u128::from(numerator) * 100 / u128::from(denominator)) as u8
}

/// docs/semantics.md, Evaluation 4: ELIGIBLE iff the root passes and every exclusion holds; a failed exclusion is a hard
/// bar; else PARTIAL_MATCH from a score of 50.
pub fn verdict(root: Truth, score: u8, exclusions: Exclusions) -> Verdict {
    match exclusions {
        Exclusions::Excluded => Verdict::NotEligible,
        Exclusions::AllHold if root.passes() => Verdict::Eligible,
        _ if score >= 50 => Verdict::PartialMatch,
        _ => Verdict::NotEligible,
    }
}

/// A verdict and its score: what every evaluation path must agree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub verdict: Verdict,
    pub score: u8,
}

impl Outcome {
    pub const NOT_APPLICABLE: Outcome = Outcome {
        verdict: Verdict::NotApplicable,
        score: 0,
    };

    /// One byte per (citizen, rule) in batch results: NOT_ELIGIBLE 0..=100 (the score),
    /// PARTIAL_MATCH 101..=151 (score 50..=100), ELIGIBLE 152 (score is always 100), NOT_APPLICABLE 255.
    pub fn code(self) -> u8 {
        match self.verdict {
            Verdict::NotEligible => self.score,
            Verdict::PartialMatch => 101 + (self.score - 50),
            Verdict::Eligible => 152,
            Verdict::NotApplicable => 255,
        }
    }

    pub fn from_code(code: u8) -> Outcome {
        match code {
            0..=100 => Outcome {
                verdict: Verdict::NotEligible,
                score: code,
            },
            101..=151 => Outcome {
                verdict: Verdict::PartialMatch,
                score: code - 101 + 50,
            },
            152 => Outcome {
                verdict: Verdict::Eligible,
                score: 100,
            },
            _ => Outcome::NOT_APPLICABLE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kleene_tables() {
        use Truth::*;
        assert_eq!(True.and(Unknown), Unknown);
        assert_eq!(False.and(Unknown), False);
        assert_eq!(True.or(Unknown), True);
        assert_eq!(False.or(Unknown), Unknown);
        assert_eq!(!Unknown, Unknown);
    }

    #[test]
    fn codes_round_trip() {
        for score in 0..=100u8 {
            for verdict in [Verdict::NotEligible, Verdict::PartialMatch] {
                if verdict == Verdict::PartialMatch && score < 50 {
                    continue;
                }
                let o = Outcome { verdict, score };
                assert_eq!(Outcome::from_code(o.code()), o);
            }
        }
        let e = Outcome {
            verdict: Verdict::Eligible,
            score: 100,
        };
        assert_eq!(Outcome::from_code(e.code()), e);
        assert_eq!(
            Outcome::from_code(Outcome::NOT_APPLICABLE.code()),
            Outcome::NOT_APPLICABLE
        );
    }

    #[test]
    fn exact_scores_floor() {
        assert_eq!(match_score(2, 3), 66);
        assert_eq!(match_score(29, 100), 29);
        assert_eq!(match_score(1, 2), 50);
    }
}
