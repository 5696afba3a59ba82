//! The scalar evaluator (docs/semantics.md, "Evaluation"): one profile against one rule, with the full trace.
//!
//! [`outcome`] computes only the verdict and score (the hot path); [`evaluate`] adds the
//! per-condition trace, gaps, needed fields, benefit and next steps. Both walk the tree with
//! [`tree_outcome`]; the traced path records every node's truth once ([`NodeTruths`]) so that
//! the gap walk and the matched count do not walk it again.

use serde::Serialize;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::benefit::BenefitEstimate;
use crate::catalogue::Catalogue;
use crate::date::Date;
use crate::gaps::{Gap, collect_gaps};
use crate::next_steps::{NextStep, Summary, next_steps};
use crate::outcome::{Exclusions, Outcome, Truth, Verdict, match_score, verdict};
use crate::profile::Profile;
use crate::rule::Rule;
use crate::temporal::{Applicability, applicability};
use crate::tree::{Leaf, Node, Op, Operand};
use crate::truth::{NodeTruths, from_profile, tree_outcome};
pub use crate::truth::{leaf_truth, test};
use crate::value::{FieldValue, Number, Scalar};

/// Verdict and score of an applicable rule for the given leaf truths: the one place docs/semantics.md's "Evaluation"
/// decision is made for a rule tree (the scalar path, the traced path and `needed_fields`).
fn decide(rule: &Rule, truth: &mut impl FnMut(&Leaf) -> Truth) -> Outcome {
    let (root, numerator) = tree_outcome(&rule.eligibility, truth);
    let score = match_score(numerator, rule.eligibility.denominator());
    let exclusions = Exclusions::from_truths(rule.exclusions.iter().map(truth));
    Outcome {
        verdict: verdict(root, score, exclusions),
        score,
    }
}

/// Whether the rule gives ELIGIBLE when every leaf on an absent field comes out the way its path
/// needs (true, or false under an odd number of `NOT`s; an exclusion holds). Kleene logic is
/// monotone, so this is the best the answers can do; as for `needed_fields`, leaves of one field
/// are taken as independent, which errs towards "could".
fn eligible_at_best(rule: &Rule, profile: &Profile) -> bool {
    fn negated(node: &Node, odd: bool, out: &mut Vec<*const Leaf>) {
        match node {
            Node::Leaf(leaf) if odd => out.push(leaf),
            Node::Leaf(_) => {}
            Node::Group(group) => {
                let odd = odd ^ (group.op == crate::tree::GroupOp::Not);
                group.children.iter().for_each(|c| negated(c, odd, out));
            }
        }
    }
    let mut under_not = Vec::new();
    negated(&rule.eligibility, false, &mut under_not);
    let best = decide(rule, &mut |leaf: &Leaf| match profile.get(leaf.field) {
        Some(value) => leaf_truth(leaf, Some(value)),
        None => Truth::from_bool(!under_not.contains(&(leaf as *const Leaf))),
    });
    best.verdict == Verdict::Eligible
}

/// More leaves than this on one unknown field are not enumerated: the field is reported as needed.
const MAX_ENUMERATED_LEAVES: usize = 8;

/// The unknown fields whose values could still change the verdict (docs/semantics.md, "Evaluation" 7): a field is needed
/// when some pass/fail combination of its leaves gives another verdict, while the other unknown
/// fields stay unknown, all pass or all fail. Leaves of one field are treated as independent, so
/// the answer errs towards asking.
/// `truths`, `score` and `exclusions` are the evaluation's, for the profile as it is, which has
/// at least one field the rule reads absent.
fn needed_fields<'a>(
    rule: &'a Rule,
    profile: &Profile,
    truths: &NodeTruths,
    score: u8,
    exclusions: Exclusions,
) -> Vec<&'a str> {
    // Answers never turn a known truth around (Kleene logic is monotone) and can only raise the
    // score, up to the best reachable one: where that pins the verdict, no field is needed.
    let settled = || match exclusions {
        Exclusions::Excluded => true,
        Exclusions::Unresolved => false,
        Exclusions::AllHold => match truths.truth(0) {
            Truth::True => true,
            Truth::False => {
                let best = truths.best_numerator(&rule.eligibility, 0);
                score >= 50 || match_score(best, rule.eligibility.denominator()) < 50
            }
            Truth::Unknown => false,
        },
    };
    if settled() {
        return Vec::new();
    }
    // Every leaf in the order `decide` reads them (eligibility in pre-order, then exclusions),
    // with its truth for the profile; a leaf on an absent field is Unknown.
    let mut leaves: Vec<(&'a Leaf, Truth)> = Vec::with_capacity(8);
    let mut add = |leaf: &'a Leaf| leaves.push((leaf, leaf_truth(leaf, profile.get(leaf.field))));
    rule.eligibility.for_each_leaf(&mut add);
    rule.exclusions.iter().for_each(add);
    // Hypothetical truths are tried in one buffer, read back in that same order.
    let mut truths: Vec<Truth> = Vec::with_capacity(leaves.len());
    let verdict_of = |truths: &[Truth]| {
        let mut next = truths.iter();
        decide(rule, &mut |_| *next.next().expect("one truth per leaf")).verdict
    };
    let mut needed: Vec<&'a str> = Vec::new();
    for (first, &(leaf, truth)) in leaves.iter().enumerate() {
        let field = leaf.field;
        // Each unknown field once, at its first leaf (a leaf is Unknown exactly when its field
        // is absent).
        if truth != Truth::Unknown || leaves[..first].iter().any(|(l, _)| l.field == field) {
            continue;
        }
        let own = leaves.iter().filter(|(l, _)| l.field == field).count();
        // With no other unknown field, the three ways of filling the others are one.
        let others: &[Truth] = if leaves
            .iter()
            .any(|&(l, t)| t == Truth::Unknown && l.field != field)
        {
            &[Truth::Unknown, Truth::True, Truth::False]
        } else {
            &[Truth::Unknown]
        };
        let changes_the_verdict = own > MAX_ENUMERATED_LEAVES
            || others.iter().any(|&others| {
                let mut verdict_with = |mask: usize| {
                    let mut bit = 0;
                    truths.clear();
                    truths.extend(leaves.iter().map(|&(l, truth)| {
                        if l.field == field {
                            bit += 1;
                            Truth::from_bool(mask >> (bit - 1) & 1 == 1)
                        } else if truth == Truth::Unknown {
                            others
                        } else {
                            truth
                        }
                    }));
                    verdict_of(&truths)
                };
                let first = verdict_with(0);
                (1..1usize << own).any(|mask| verdict_with(mask) != first)
            });
        if changes_the_verdict {
            needed.push(&leaf.field_name);
        }
    }
    needed.sort_unstable();
    needed
}

/// Verdict and score only: no trace, no allocation.
pub fn outcome(rule: &Rule, profile: &Profile, as_of: Date) -> Outcome {
    if !applicability(rule, as_of).is_applicable() {
        return Outcome::NOT_APPLICABLE;
    }
    decide(rule, &mut from_profile(profile))
}

/// One leaf as evaluated.
#[derive(Debug, Clone, Serialize)]
pub struct ConditionTrace<'a> {
    pub path: &'a str,
    pub field: &'a str,
    pub operator: &'static str,
    pub expected: &'a Json,
    /// `null` when the profile does not have the field.
    pub actual: Option<&'a FieldValue>,
    pub result: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<&'a str>,
}

impl ConditionTrace<'_> {
    /// The leaf's truth: it passed, it failed, or its field is absent.
    pub fn truth(&self) -> Truth {
        match (self.result, self.actual) {
            (true, _) => Truth::True,
            (false, Some(_)) => Truth::False,
            (false, None) => Truth::Unknown,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ExclusionRef<'a> {
    pub path: &'a str,
    pub field: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<&'a str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Audit<'a> {
    pub input_snapshot_hash: &'a str,
    pub rule_hash: &'a str,
}

/// The full result of one evaluation (docs/semantics.md, "Evaluation" 8).
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation<'a> {
    /// Derived from the rule hash, the input hash and `as_of`: the same evaluation always has
    /// the same id, so a replayed audit row is the same row.
    pub evaluation_id: String,
    pub user_id: Option<&'a str>,
    pub scheme_id: &'a str,
    pub scheme_name: &'a str,
    pub rule_id: &'a str,
    pub rule_version: u32,
    pub as_of: Date,
    pub verdict: Verdict,
    pub match_score: u8,
    pub matched_conditions: usize,
    pub total_conditions: usize,
    pub conditions_evaluated: Vec<ConditionTrace<'a>>,
    pub exclusions_checked: Vec<ConditionTrace<'a>>,
    pub excluded_by: Vec<ExclusionRef<'a>>,
    pub gaps: Vec<Gap<'a>>,
    /// Every gap is one the citizen can close (a document, an answer, a date to wait for):
    /// such a partial match ranks above one that needs the citizen to be someone else.
    pub all_gaps_closable: bool,
    pub needed_fields: Vec<&'a str>,
    /// Not ELIGIBLE yet, but answers to `needed_fields` could make it so: "we need to know",
    /// not "not eligible".
    pub could_become_eligible: bool,
    /// The verdict in one sentence; "We need to know more" where answers could still make it
    /// ELIGIBLE, never "not eligible" then.
    pub summary: Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub benefit_estimate: Option<&'a BenefitEstimate>,
    pub next_steps: Vec<NextStep<'a>>,
    pub audit: Audit<'a>,
}

impl Evaluation<'_> {
    pub fn outcome(&self) -> Outcome {
        Outcome {
            verdict: self.verdict,
            score: self.match_score,
        }
    }
}

/// The outcome and the gaps, exactly as [`evaluate`] gives them, without the rest of the trace
/// (condition traces, needed fields, next steps, the evaluation id): what a worker keeps with a
/// stored verdict. The caller has checked that the rule applies on `as_of`.
pub fn outcome_with_gaps<'a>(
    catalogue: &'a Catalogue,
    rule: &'a Rule,
    profile: &'a Profile,
    as_of: Date,
) -> (Outcome, Vec<Gap<'a>>) {
    let (truths, numerator) = NodeTruths::record(&rule.eligibility, profile, &mut |_, _| {});
    let score = match_score(numerator, rule.eligibility.denominator());
    let exclusions = Exclusions::from_truths(
        rule.exclusions
            .iter()
            .map(|l| leaf_truth(l, profile.get(l.field))),
    );
    let outcome = Outcome {
        verdict: verdict(truths.truth(0), score, exclusions),
        score,
    };
    (
        outcome,
        collect_gaps(catalogue, rule, profile, &truths, as_of),
    )
}

/// Evaluates with the full trace. A rule that does not apply on `as_of` gives no evaluation: the
/// error says why.
pub fn evaluate<'a>(
    catalogue: &'a Catalogue,
    rule: &'a Rule,
    profile: &'a Profile,
    as_of: Date,
) -> Result<Evaluation<'a>, Applicability> {
    let applicable = applicability(rule, as_of);
    if !applicable.is_applicable() {
        return Err(applicable);
    }
    // Whether any field read is absent: only then can a field be needed.
    let mut any_unknown = false;
    let mut conditions_evaluated = Vec::with_capacity(8);
    let (truths, numerator) = NodeTruths::record(&rule.eligibility, profile, &mut |leaf, t| {
        any_unknown |= t == Truth::Unknown;
        conditions_evaluated.push(trace(leaf, profile, t))
    });
    let score = match_score(numerator, rule.eligibility.denominator());
    let exclusions_checked: Vec<ConditionTrace<'a>> = rule
        .exclusions
        .iter()
        .map(|l| trace(l, profile, leaf_truth(l, profile.get(l.field))))
        .collect();
    any_unknown |= exclusions_checked.iter().any(|t| t.actual.is_none());
    let exclusions = Exclusions::from_truths(exclusions_checked.iter().map(ConditionTrace::truth));
    let verdict = verdict(truths.truth(0), score, exclusions);

    let excluded_by = rule
        .exclusions
        .iter()
        .zip(&exclusions_checked)
        .filter(|(_, t)| !t.result && t.actual.is_some())
        .map(|(leaf, _)| ExclusionRef {
            path: &leaf.path,
            field: &leaf.field_name,
            label: leaf.label.as_deref(),
        })
        .collect();
    let root_children = rule.root_children();
    let matched_conditions = truths.matched(&rule.eligibility);

    let gaps = collect_gaps(catalogue, rule, profile, &truths, as_of);
    let needed_fields = if any_unknown {
        needed_fields(rule, profile, &truths, score, exclusions)
    } else {
        Vec::new()
    };

    let could_become_eligible = verdict != Verdict::Eligible
        && !needed_fields.is_empty()
        && eligible_at_best(rule, profile);
    let next_steps = next_steps(
        catalogue,
        rule,
        verdict,
        &gaps,
        &needed_fields,
        could_become_eligible,
    );
    let summary = Summary::of(verdict, could_become_eligible, needed_fields.len());
    Ok(Evaluation {
        evaluation_id: evaluation_id(rule, &profile.input_snapshot_hash, as_of),
        user_id: profile.user_id.as_deref(),
        scheme_id: &rule.scheme_id,
        scheme_name: &rule.scheme_name,
        rule_id: &rule.rule_id,
        rule_version: rule.version,
        as_of,
        verdict,
        match_score: score,
        matched_conditions,
        total_conditions: root_children.len(),
        conditions_evaluated,
        exclusions_checked,
        excluded_by,
        all_gaps_closable: crate::gaps::all_closable(&gaps),
        gaps,
        needed_fields,
        could_become_eligible,
        summary,
        benefit_estimate: rule.benefit_for(profile),
        next_steps,
        audit: Audit {
            input_snapshot_hash: &profile.input_snapshot_hash,
            rule_hash: &rule.rule_hash,
        },
    })
}

/// A UUID-shaped id from the hashes that determine the evaluation: the first 16 bytes of
/// SHA-256(`rule_hash:input_hash:as_of`).
pub fn evaluation_id(rule: &Rule, input_hash: &str, as_of: Date) -> String {
    let mut digest = rule.evaluation_id_seed.clone();
    digest.update(input_hash);
    digest.update(b":");
    match as_of.iso() {
        Some(day) => digest.update(day),
        None => digest.update(as_of.to_string()),
    }
    let digest = digest.finalize();
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(36);
    for (i, byte) in digest[..16].iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            id.push('-');
        }
        id.push(char::from(DIGITS[usize::from(byte >> 4)]));
        id.push(char::from(DIGITS[usize::from(byte & 15)]));
    }
    id
}

/// The part of every evaluation id that depends on the rule alone (kept in [`Rule`]).
pub(crate) fn evaluation_id_seed(rule_hash: &str) -> Sha256 {
    Sha256::new().chain_update(rule_hash).chain_update(b":")
}

fn trace<'a>(leaf: &'a Leaf, profile: &'a Profile, truth: Truth) -> ConditionTrace<'a> {
    let value = profile.get(leaf.field);
    ConditionTrace {
        path: &leaf.path,
        field: &leaf.field_name,
        operator: leaf.op.name(),
        expected: &leaf.expected,
        actual: value,
        result: truth.passes(),
        headroom: value
            .and_then(FieldValue::scalar)
            .and_then(|actual| headroom(leaf, actual)),
        label: leaf.label.as_deref(),
    }
}

/// Margin to the threshold for numeric comparisons (negative when the comparison fails).
fn headroom(leaf: &Leaf, actual: &Scalar) -> Option<Number> {
    let numeric = |s: &Scalar| match s {
        Scalar::Int(i) => Some(*i as f64),
        Scalar::Num(n) => Some(*n),
        _ => None,
    };
    let a = numeric(actual)?;
    let margin = match (&leaf.operand, leaf.op) {
        (Operand::One(e), Op::Gte | Op::Gt) => a - numeric(e)?,
        (Operand::One(e), Op::Lte | Op::Lt) => numeric(e)? - a,
        (Operand::Range(lo, hi), Op::Between) => (a - numeric(lo)?).min(numeric(hi)? - a),
        _ => return None,
    };
    Some(Number(margin))
}
