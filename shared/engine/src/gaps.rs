//! Gaps (spec §3): what stands between a citizen and a scheme, in plain language.
//!
//! A gap is a leaf that does not come out the way its path needs it to. Walking down from the
//! root, a group that already comes out as needed contributes nothing (a failing leaf under an
//! `OR` that passed is no gap); under `NOT` the need flips, and such a gap is marked `negated`.

use serde::Serialize;
use serde_json::Value as Json;

use crate::catalogue::{Catalogue, FieldSpec};
use crate::date::Date;
use crate::eval::{leaf_truth, node_outcome};
use crate::format::{indian_number, rupees};
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
pub fn collect_gaps<'a>(
    catalogue: &Catalogue,
    rule: &'a Rule,
    profile: &'a Profile,
    as_of: Date,
) -> Vec<Gap<'a>> {
    let mut gaps = Vec::new();
    let mut push = |leaf: &'a Leaf, negated: bool, exclusion: bool| {
        gaps.push(describe(
            catalogue, leaf, profile, as_of, negated, exclusion,
        ));
    };
    walk(&rule.eligibility, profile, true, &mut push);
    for leaf in &rule.exclusions {
        if !leaf_truth(leaf, profile.get(leaf.field)).passes() {
            push(leaf, false, true);
        }
    }
    gaps
}

/// `want`: whether the path needs this node to pass (`true`) or to fail (`false`, under NOT).
fn walk<'a>(
    node: &'a Node,
    profile: &Profile,
    want: bool,
    push: &mut impl FnMut(&'a Leaf, bool, bool),
) {
    let truth = node_outcome(node, profile).0;
    let needed = if want { Truth::True } else { Truth::False };
    if truth == needed {
        return;
    }
    match node {
        Node::Leaf(leaf) => push(leaf, !want, false),
        Node::Group(group) if group.op == GroupOp::Not => {
            walk(&group.children[0], profile, !want, push)
        }
        // Every child not yet as needed is a gap: AND needs each child, OR needs any one (so
        // each would do); to fail, the roles swap. Children already as needed return at once.
        Node::Group(group) => group
            .children
            .iter()
            .for_each(|c| walk(c, profile, want, push)),
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
    let requirement = requirement(spec, leaf, negated);
    let (gap_kind, gap_description) = match value {
        None => (
            GapKind::MissingData,
            format!(
                "We do not have your {}; it is needed to check that it is {requirement}",
                spec.human_name()
            ),
        ),
        Some(actual) if exclusion => (
            GapKind::Exclusion,
            format!(
                "Excluded: {} (your {} is {})",
                leaf.label
                    .clone()
                    .unwrap_or_else(|| format!("{} must be {requirement}", spec.human_name())),
                spec.human_name(),
                show_value(spec, actual)
            ),
        ),
        Some(_) if leaf.field_name == "identity.verified_documents" => (
            GapKind::Document,
            format!(
                "You need a verified document: {} must be {requirement}",
                spec.human_name()
            ),
        ),
        Some(actual) if leaf.op.is_threshold() && !negated => (
            GapKind::Threshold,
            threshold_description(spec, leaf, actual),
        ),
        Some(actual) => (
            GapKind::Category,
            format!(
                "Your {} must be {requirement}; it is {}",
                spec.human_name(),
                show_value(spec, actual)
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
    let shown = show_value(spec, actual);
    let gap = actual.scalar().and_then(|a| distance(leaf, a));
    let amount = |d: f64| match (spec.is_money(), spec.unit.as_deref()) {
        (true, _) => rupees(d),
        (false, Some("years")) => format!(
            "{} year{}",
            indian_number(d),
            if d == 1.0 { "" } else { "s" }
        ),
        (false, Some(unit)) => format!("{} {unit}", indian_number(d)),
        (false, None) => indian_number(d),
    };
    let bound = |s: &Scalar| show_scalar(spec, s);
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
                "Your {} ({shown}) is {} below the minimum of {}",
                spec.human_name(),
                amount(d),
                bound(e)
            )
        }
        (Operand::One(e), Op::Lte | Op::Lt, Some(d)) => {
            format!(
                "Your {} ({shown}) is {} above the limit of {}",
                spec.human_name(),
                amount(d),
                bound(e)
            )
        }
        (Operand::Range(lo, hi), _, _) => {
            format!(
                "Your {} ({shown}) must be between {} and {}",
                spec.human_name(),
                bound(lo),
                bound(hi)
            )
        }
        _ => format!(
            "Your {} ({shown}) must be {}",
            spec.human_name(),
            requirement(spec, leaf, false)
        ),
    }
}

/// The requirement as words: "at least 65", "one of sc, st", "not at most ₹2,00,000".
pub fn requirement(spec: &FieldSpec, leaf: &Leaf, negated: bool) -> String {
    let list = |items: &[Scalar]| {
        items
            .iter()
            .map(|s| show_scalar(spec, s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = match &leaf.operand {
        Operand::One(v) => {
            let v = show_scalar(spec, v);
            match leaf.op {
                Op::Eq => v,
                Op::Neq => format!("other than {v}"),
                Op::Gt => format!("more than {v}"),
                Op::Gte => format!("at least {v}"),
                Op::Lt => format!("less than {v}"),
                Op::Lte => format!("at most {v}"),
                Op::Contains => format!("including {v}"),
                Op::NotContains => format!("without {v}"),
                _ => v,
            }
        }
        Operand::Many(items) if leaf.op == Op::In => format!("one of {}", list(items)),
        Operand::Many(items) => format!("none of {}", list(items)),
        Operand::Range(lo, hi) => format!(
            "between {} and {}",
            show_scalar(spec, lo),
            show_scalar(spec, hi)
        ),
    };
    if negated { format!("not {text}") } else { text }
}

fn show_scalar(spec: &FieldSpec, value: &Scalar) -> String {
    match value {
        Scalar::Int(i) if spec.is_money() => rupees(*i as f64),
        Scalar::Num(n) if spec.is_money() => rupees(*n),
        Scalar::Num(n) => indian_number(*n).trim_end_matches(".00").to_string(),
        Scalar::Bool(true) => "yes".into(),
        Scalar::Bool(false) => "no".into(),
        Scalar::Str(s) => s.replace('_', " "),
        other => other.to_json().to_string().trim_matches('"').to_string(),
    }
}

fn show_value(spec: &FieldSpec, value: &FieldValue) -> String {
    match value {
        FieldValue::Scalar(s) => show_scalar(spec, s),
        FieldValue::List(items) if items.is_empty() => "none".into(),
        FieldValue::List(items) => items.join(", ").replace('_', " "),
    }
}
