//! Gaps (spec §3): what stands between a citizen and a scheme, in plain language.
//!
//! A gap is a leaf that does not come out the way its path needs it to. Walking down from the
//! root, a group that already comes out as needed contributes nothing (a failing leaf under an
//! `OR` that passed is no gap); under `NOT` the need flips, and such a gap is marked `negated`.

use serde::Serialize;
use serde_json::Value as Json;

use crate::catalogue::{Catalogue, FieldSpec};
use crate::date::Date;
use crate::eval::{NodeTruths, leaf_truth};
use std::fmt;

use crate::format::{IndianNumber, Rupees};
use crate::outcome::Truth;
use crate::profile::Profile;
use crate::rule::{GroupOp, Leaf, Node, Op, Operand, Rule};
use crate::value::{FieldValue, Scalar, number_json};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapKind {
    Threshold,
    MissingData,
    Category,
    Document,
    Exclusion,
}

#[derive(Debug, Clone, Serialize)]
pub struct Gap<'a> {
    pub path: &'a str,
    pub field: &'a str,
    pub operator: &'static str,
    pub required: &'a Json,
    pub actual: Option<&'a FieldValue>,
    /// Numeric distance to the threshold, where the comparison is numeric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap: Option<Json>,
    pub gap_kind: GapKind,
    pub gap_description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_eligibility_date: Option<Date>,
    /// The leaf sits under a `NOT`: the requirement is that it does *not* hold.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<&'a str>,
}

/// Every gap of the rule for the profile: eligibility leaves on failing paths, then exclusions
/// that do not hold.
pub(crate) fn collect_gaps<'a>(
    catalogue: &Catalogue,
    rule: &'a Rule,
    profile: &'a Profile,
    truths: &NodeTruths,
    as_of: Date,
) -> Vec<Gap<'a>> {
    let mut gaps = Vec::new();
    let mut push = |leaf: &'a Leaf, negated: bool, exclusion: bool| {
        gaps.push(describe(
            catalogue, leaf, profile, as_of, negated, exclusion,
        ));
    };
    walk(&rule.eligibility, truths, 0, true, &mut push);
    for leaf in &rule.exclusions {
        if !leaf_truth(leaf, profile.get(leaf.field)).passes() {
            push(leaf, false, true);
        }
    }
    gaps
}

/// `want`: whether the path needs this node to pass (`true`) or to fail (`false`, under NOT).
/// `at`: the node's index in `truths`.
fn walk<'a>(
    node: &'a Node,
    truths: &NodeTruths,
    at: usize,
    want: bool,
    push: &mut impl FnMut(&'a Leaf, bool, bool),
) {
    let needed = if want { Truth::True } else { Truth::False };
    if truths.truth(at) == needed {
        return;
    }
    match node {
        Node::Leaf(leaf) => push(leaf, !want, false),
        Node::Group(group) if group.op == GroupOp::Not => {
            walk(&group.children[0], truths, at + 1, !want, push)
        }
        // Every child not yet as needed is a gap: AND needs each child, OR needs any one (so
        // each would do); to fail, the roles swap. Children already as needed return at once.
        Node::Group(group) => group
            .children
            .iter()
            .zip(truths.children(at))
            .for_each(|(child, child_at)| walk(child, truths, child_at, want, push)),
    }
}

fn describe<'a>(
    catalogue: &Catalogue,
    leaf: &'a Leaf,
    profile: &'a Profile,
    as_of: Date,
    negated: bool,
    exclusion: bool,
) -> Gap<'a> {
    let spec = catalogue.field(leaf.field);
    let value = profile.get(leaf.field);
    let actual_scalar = value.and_then(FieldValue::scalar);
    let requirement = Requirement {
        spec,
        leaf,
        negated,
    };
    let (gap_kind, gap_description) = match value {
        None => (
            GapKind::MissingData,
            format!(
                "We do not have your {}; it is needed to check that it is {}",
                spec.human_name(),
                requirement
            ),
        ),
        Some(actual) if exclusion => (
            GapKind::Exclusion,
            match &leaf.label {
                Some(label) => format!(
                    "Excluded: {label} (your {} is {})",
                    spec.human_name(),
                    ShownValue(spec, actual)
                ),
                None => format!(
                    "Excluded: {} must be {} (your {} is {})",
                    spec.human_name(),
                    requirement,
                    spec.human_name(),
                    ShownValue(spec, actual)
                ),
            },
        ),
        Some(_) if leaf.field_name == "identity.verified_documents" => (
            GapKind::Document,
            format!(
                "You need a verified document: {} must be {}",
                spec.human_name(),
                requirement
            ),
        ),
        Some(actual) if leaf.op.is_threshold() && !negated => (
            GapKind::Threshold,
            threshold_description(spec, leaf, actual),
        ),
        Some(actual) => (
            GapKind::Category,
            format!(
                "Your {} must be {}; it is {}",
                spec.human_name(),
                requirement,
                ShownValue(spec, actual)
            ),
        ),
    };
    Gap {
        path: &leaf.path,
        field: &leaf.field_name,
        operator: leaf.op.name(),
        required: &leaf.expected,
        actual: value,
        gap: actual_scalar
            .filter(|_| !negated)
            .and_then(|a| distance(leaf, a))
            .map(number_json),
        gap_kind,
        gap_description,
        estimated_eligibility_date: if negated {
            None
        } else {
            estimated_date(leaf, profile, as_of, catalogue)
        },
        negated,
        label: leaf.label.as_deref(),
    }
}

/// How far the value is from meeting the leaf (positive), for numeric comparisons.
fn distance(leaf: &Leaf, actual: &Scalar) -> Option<f64> {
    let a = number(actual)?;
    Some(match &leaf.operand {
        Operand::One(e) if matches!(leaf.op, Op::Gt | Op::Gte) => number(e)? - a,
        Operand::One(e) if matches!(leaf.op, Op::Lt | Op::Lte) => a - number(e)?,
        Operand::Range(lo, hi) => {
            let (lo, hi) = (number(lo)?, number(hi)?);
            if a < lo { lo - a } else { a - hi }
        }
        _ => return None,
    })
}

fn number(s: &Scalar) -> Option<f64> {
    match s {
        Scalar::Int(i) => Some(*i as f64),
        Scalar::Num(n) => Some(*n),
        _ => None,
    }
}

/// For an age threshold not yet reached: the day the citizen reaches the age — from the date of
/// birth when known, else `as_of` plus the missing whole years.
fn estimated_date(
    leaf: &Leaf,
    profile: &Profile,
    as_of: Date,
    catalogue: &Catalogue,
) -> Option<Date> {
    if leaf.field_name != "identity.age" {
        return None;
    }
    let Some(FieldValue::Scalar(Scalar::Int(age))) = profile.get(leaf.field) else {
        return None;
    };
    let required = match (&leaf.operand, leaf.op) {
        (Operand::One(Scalar::Int(v)), Op::Gte) => *v,
        (Operand::One(Scalar::Int(v)), Op::Gt) => v + 1,
        (Operand::Range(Scalar::Int(lo), _), Op::Between) => *lo,
        _ => return None,
    };
    if required <= *age {
        return None;
    }
    let years = i32::try_from(required).ok()?;
    let born = catalogue
        .id("identity.date_of_birth")
        .and_then(|id| profile.get(id));
    match born {
        Some(FieldValue::Scalar(Scalar::Date(born))) => born.add_years(years),
        _ => as_of.add_years(i32::try_from(required - age).ok()?),
    }
}

fn threshold_description(spec: &FieldSpec, leaf: &Leaf, actual: &FieldValue) -> String {
    let shown = ShownValue(spec, actual);
    let gap = actual.scalar().and_then(|a| distance(leaf, a));
    let amount = |d: f64| Amount(spec, d);
    let bound = |s| Shown(spec, s);
    let name = spec.human_name();
    match (&leaf.operand, leaf.op, gap) {
        (Operand::One(e), Op::Gte | Op::Gt, Some(d)) if leaf.field_name == "identity.age" => {
            format!(
                "You are {} below the minimum age of {}",
                amount(d),
                bound(e)
            )
        }
        (Operand::One(e), Op::Gte | Op::Gt, Some(d)) => {
            format!(
                "Your {name} ({shown}) is {} below the minimum of {}",
                amount(d),
                bound(e)
            )
        }
        (Operand::One(e), Op::Lte | Op::Lt, Some(d)) => {
            format!(
                "Your {name} ({shown}) is {} above the limit of {}",
                amount(d),
                bound(e)
            )
        }
        (Operand::Range(lo, hi), _, _) => {
            format!(
                "Your {name} ({shown}) must be between {} and {}",
                bound(lo),
                bound(hi)
            )
        }
        _ => format!(
            "Your {name} ({shown}) must be {}",
            Requirement {
                spec,
                leaf,
                negated: false
            }
        ),
    }
}

/// A distance to a threshold with the field's unit: "₹20,000", "3 years", "0.50 acres".
struct Amount<'a>(&'a FieldSpec, f64);

impl fmt::Display for Amount<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Amount(spec, d) = *self;
        match (spec.is_money(), spec.unit.as_deref()) {
            (true, _) => write!(f, "{}", Rupees(d)),
            (false, Some("years")) => {
                write!(
                    f,
                    "{} year{}",
                    IndianNumber(d),
                    if d == 1.0 { "" } else { "s" }
                )
            }
            (false, Some(unit)) => write!(f, "{} {unit}", IndianNumber(d)),
            (false, None) => write!(f, "{}", IndianNumber(d)),
        }
    }
}

/// The requirement as words: "at least 65", "one of sc, st", "not at most ₹2,00,000".
pub struct Requirement<'a> {
    pub spec: &'a FieldSpec,
    pub leaf: &'a Leaf,
    pub negated: bool,
}

impl fmt::Display for Requirement<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Requirement {
            spec,
            leaf,
            negated,
        } = *self;
        if negated {
            f.write_str("not ")?;
        }
        let list = |f: &mut fmt::Formatter<'_>, items: &[Scalar]| {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", Shown(spec, item))?;
            }
            Ok(())
        };
        match &leaf.operand {
            Operand::One(v) => {
                let words = match leaf.op {
                    Op::Neq => "other than ",
                    Op::Gt => "more than ",
                    Op::Gte => "at least ",
                    Op::Lt => "less than ",
                    Op::Lte => "at most ",
                    Op::Contains => "including ",
                    Op::NotContains => "without ",
                    _ => "",
                };
                write!(f, "{words}{}", Shown(spec, v))
            }
            Operand::Many(items) => {
                f.write_str(if leaf.op == Op::In {
                    "one of "
                } else {
                    "none of "
                })?;
                list(f, items)
            }
            Operand::Range(lo, hi) => {
                write!(f, "between {} and {}", Shown(spec, lo), Shown(spec, hi))
            }
        }
    }
}

/// A value as people read it: rupees for money, yes/no, codes with spaces for underscores.
struct Shown<'a>(&'a FieldSpec, &'a Scalar);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Shown(spec, value) = *self;
        match value {
            Scalar::Int(i) if spec.is_money() => write!(f, "{}", Rupees(*i as f64)),
            Scalar::Num(n) if spec.is_money() => write!(f, "{}", Rupees(*n)),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Num(n) => write!(f, "{}", IndianNumber(*n)),
            Scalar::Bool(true) => f.write_str("yes"),
            Scalar::Bool(false) => f.write_str("no"),
            Scalar::Str(s) => words(f, s),
            Scalar::Date(d) => write!(f, "{d}"),
        }
    }
}

/// A field's whole value: a scalar as [`Shown`], a list joined with commas ("none" when empty).
struct ShownValue<'a>(&'a FieldSpec, &'a FieldValue);

impl fmt::Display for ShownValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            FieldValue::Scalar(s) => write!(f, "{}", Shown(self.0, s)),
            FieldValue::List(items) if items.is_empty() => f.write_str("none"),
            FieldValue::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    words(f, item)?;
                }
                Ok(())
            }
        }
    }
}

/// A code as words: `small_marginal` → "small marginal".
fn words(f: &mut fmt::Formatter<'_>, code: &str) -> fmt::Result {
    for (i, part) in code.split('_').enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        f.write_str(part)?;
    }
    Ok(())
}
