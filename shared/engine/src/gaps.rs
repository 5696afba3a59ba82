//! Gaps (docs/semantics.md, "Evaluation" 6): what stands between a citizen and a scheme, in plain language.
//!
//! A gap is a leaf that does not come out the way its path needs it to. Walking down from the
//! root, a group that already comes out as needed contributes nothing (a failing leaf under an
//! `OR` that passed is no gap); under `NOT` the need flips, and such a gap is marked `negated`.

use serde::Serialize;
use serde_json::Value as Json;

use crate::catalogue::{Catalogue, DOCUMENTS, FieldId, FieldSpec, FieldType};
use crate::date::Date;
use crate::truth::{NodeTruths, leaf_truth};
use std::fmt;

use crate::format::{IndianNumber, LongDate, Quantity, Rupees};
use crate::outcome::Truth;
use crate::profile::Profile;
use crate::rule::Rule;
use crate::tree::{Group, GroupOp, Leaf, Node, Op, Operand};
use crate::value::{FieldValue, Number, Scalar};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapKind {
    Threshold,
    MissingData,
    Category,
    Document,
    Exclusion,
}

impl GapKind {
    /// The name as serialized (`gap_kind` in evaluations and events).
    pub fn name(self) -> &'static str {
        match self {
            GapKind::Threshold => "threshold",
            GapKind::MissingData => "missing_data",
            GapKind::Category => "category",
            GapKind::Document => "document",
            GapKind::Exclusion => "exclusion",
        }
    }
}

/// Whether, and how, the citizen can close a gap (docs/semantics.md, "Gaps").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClosableBy {
    /// Getting a document verified.
    Document,
    /// Telling us: the value is unknown.
    Information,
    /// Waiting: an age the citizen will reach (the gap's estimated date).
    Waiting,
    /// Nothing the citizen can do: the scheme is not for this case (a category, a limit, an
    /// exclusion).
    None,
}

impl ClosableBy {
    /// The name as serialized (`closable_by` in evaluations, events and the API).
    pub fn name(self) -> &'static str {
        match self {
            ClosableBy::Document => "document",
            ClosableBy::Information => "information",
            ClosableBy::Waiting => "waiting",
            ClosableBy::None => "none",
        }
    }

    pub fn by_citizen(self) -> bool {
        self != ClosableBy::None
    }
}

/// Whether the citizen can close every one of `gaps` (and there is at least one): a partial
/// match that only needs a document, an answer or time, which outranks one that needs the
/// citizen to be someone else.
pub fn all_closable(gaps: &[Gap]) -> bool {
    !gaps.is_empty() && gaps.iter().all(|g| g.closable_by.by_citizen())
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
    pub gap: Option<Number>,
    pub gap_kind: GapKind,
    pub gap_description: GapText<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_eligibility_date: Option<Date>,
    /// The estimated date counts from `as_of`, the date of birth being unknown: it moves with
    /// every evaluation date, so it is shown but is not part of the gaps [`fingerprint`].
    #[serde(skip)]
    pub estimate_counts_from_as_of: bool,
    pub closable_by: ClosableBy,
    /// The leaf sits under a `NOT`: the requirement is that it does *not* hold.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<&'a str>,
}

/// Every gap of the rule for the profile: eligibility leaves on failing paths, then exclusions
/// that do not hold.
pub(crate) fn collect_gaps<'a>(
    catalogue: &'a Catalogue,
    rule: &'a Rule,
    profile: &'a Profile,
    truths: &NodeTruths,
    as_of: Date,
) -> Vec<Gap<'a>> {
    let mut gaps = Vec::new();
    let mut push = |leaf: &'a Leaf, negated: bool, exclusion: bool, at: Place<'a>| {
        gaps.push(describe(
            catalogue, leaf, profile, as_of, negated, exclusion, at,
        ));
    };
    walk(
        &rule.eligibility,
        truths,
        0,
        true,
        Place::default(),
        &mut push,
    );
    for leaf in &rule.exclusions {
        if !leaf_truth(leaf, profile.get(leaf.field)).passes() {
            push(leaf, false, true, Place::default());
        }
    }
    gaps
}

/// How deep ORs of alternatives nest before deeper ones are said as requirements.
const ALTERNATIVE_DEPTH: usize = 3;

/// Where a gap's condition sits among ORs of conditions any one of which would do,
/// outermost first: each OR with the index of the child (the branch) the condition is under.
#[derive(Clone, Copy, Default)]
pub struct Alternatives<'a>([Option<(&'a Group, usize)>; ALTERNATIVE_DEPTH]);

impl<'a> Alternatives<'a> {
    /// The OR and branch at `depth`, if the condition is that deep among alternatives.
    fn at(&self, depth: usize) -> Option<(&'a Group, usize)> {
        self.0.get(depth).copied().flatten()
    }

    fn same_or(&self, other: &Alternatives<'_>, depth: usize) -> bool {
        matches!((self.at(depth), other.at(depth)), (Some((a, _)), Some((b, _))) if std::ptr::eq(a, b))
    }

    fn within(mut self, group: &'a Group, branch: usize) -> Alternatives<'a> {
        if let Some(free) = self.0.iter_mut().find(|slot| slot.is_none()) {
            *free = Some((group, branch));
        }
        self
    }
}

/// Where a gap is found: its "any one of" group of documents, and the ORs of conditions
/// around it.
#[derive(Clone, Copy, Default)]
struct Place<'a> {
    documents: Option<&'a Group>,
    alternatives: Alternatives<'a>,
}

/// `want`: whether the path needs this node to pass (`true`) or to fail (`false`, under NOT).
/// `at`: the node's index in `truths`.
fn walk<'a>(
    node: &'a Node,
    truths: &NodeTruths,
    at: usize,
    want: bool,
    place: Place<'a>,
    push: &mut impl FnMut(&'a Leaf, bool, bool, Place<'a>),
) {
    let needed = if want { Truth::True } else { Truth::False };
    if truths.truth(at) == needed {
        return;
    }
    match node {
        Node::Leaf(leaf) => push(leaf, !want, false, place),
        // "Any one of these documents": each leaf is still a gap of its own (its path, its
        // truth), but all say the one sentence of the group.
        Node::Group(group) if want && documents_any_of(group) => {
            for (child, child_at) in group.children.iter().zip(truths.children(at)) {
                if let Node::Leaf(leaf) = child
                    && truths.truth(child_at) != Truth::True
                {
                    let place = Place {
                        documents: Some(group),
                        ..place
                    };
                    push(leaf, false, false, place);
                }
            }
        }
        Node::Group(group) if group.op == GroupOp::Not => {
            walk(&group.children[0], truths, at + 1, !want, place, push)
        }
        // Any one child would do: each branch's gaps are alternatives to the others', and
        // the words say so (`NextStep::Either`).
        Node::Group(group) if want && group.op == GroupOp::Or && group.children.len() > 1 => {
            for (branch, (child, child_at)) in
                group.children.iter().zip(truths.children(at)).enumerate()
            {
                let place = Place {
                    alternatives: place.alternatives.within(group, branch),
                    ..place
                };
                walk(child, truths, child_at, want, place, push);
            }
        }
        // Every child not yet as needed is a gap: AND needs each child; to fail, an OR needs
        // each child to fail. Children already as needed return at once.
        Node::Group(group) => group
            .children
            .iter()
            .zip(truths.children(at))
            .for_each(|(child, child_at)| walk(child, truths, child_at, want, place, push)),
    }
}

/// Sentences of gaps under one OR of conditions (`items`: each gap's text with what to say
/// for it, in the order the gaps were found), said as what they are: the branches of each OR
/// joined by `either` ("…; or instead: …"), the gaps one branch needs all of by `and`.
pub fn alternatives<T>(
    items: &[(GapText<'_>, T)],
    say: &impl Fn(&T) -> String,
    either: &str,
    and: &str,
) -> String {
    let joining = Joining {
        say,
        fixed: &|_: &T| false,
        either,
        and,
    };
    joining.all_of(items, 0).0
}

/// Whether the gaps under one OR of conditions (as for [`alternatives`]) shut every branch,
/// each by a gap that alone keeps it shut (`fixed`).
pub(crate) fn shut<T>(items: &[(GapText<'_>, T)], fixed: &impl Fn(&T) -> bool) -> bool {
    let joining = Joining {
        say: &|_: &T| String::new(),
        fixed,
        either: "",
        and: "",
    };
    joining.all_of(items, 0).1
}

/// How [`alternatives`] says and [`shut`] weighs the items: one walk of the ORs serves both
/// (`depth` 0 is the outermost OR).
struct Joining<'j, S, F> {
    say: &'j S,
    fixed: &'j F,
    either: &'j str,
    and: &'j str,
}

impl<S, F> Joining<'_, S, F> {
    /// The gaps of one branch (all needed), at `depth` among the ORs: shut when any is.
    fn all_of<T>(&self, items: &[(GapText<'_>, T)], depth: usize) -> (String, bool)
    where
        S: Fn(&T) -> String,
        F: Fn(&T) -> bool,
    {
        let mut shut = false;
        let units: Vec<String> = runs(items, |(a, _), (b, _)| {
            a.alternatives.at(depth).is_some() && a.alternatives.same_or(&b.alternatives, depth)
        })
        .map(|run| {
            let (text, unit_shut) = match run[0].0.alternatives.at(depth) {
                None => ((self.say)(&run[0].1), (self.fixed)(&run[0].1)),
                Some(_) => self.any_of(run, depth),
            };
            shut |= unit_shut;
            text
        })
        .collect();
        (units.join(self.and), shut)
    }

    /// The branches of the OR at `depth` (any one would do): shut when every branch is.
    fn any_of<T>(&self, items: &[(GapText<'_>, T)], depth: usize) -> (String, bool)
    where
        S: Fn(&T) -> String,
        F: Fn(&T) -> bool,
    {
        let branch = |t: &GapText| t.alternatives.at(depth).map(|(_, b)| b);
        let mut shut = true;
        let branches: Vec<String> = runs(items, |(a, _), (b, _)| branch(a) == branch(b))
            .map(|run| {
                let (text, branch_shut) = self.all_of(run, depth + 1);
                shut &= branch_shut;
                text
            })
            .collect();
        (branches.join(self.either), shut)
    }
}

/// The consecutive runs of `items` whose members `same` holds for with the run's first.
fn runs<I>(items: &[I], same: impl Fn(&I, &I) -> bool) -> impl Iterator<Item = &[I]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        let first = rest.first()?;
        let n = 1 + rest[1..].iter().take_while(|i| same(first, i)).count();
        let (run, after) = rest.split_at(n);
        rest = after;
        Some(run)
    })
}

/// An OR of two or more "has this verified document" leaves.
fn documents_any_of(group: &Group) -> bool {
    group.op == GroupOp::Or
        && group.children.len() > 1
        && group.children.iter().all(|c| {
            matches!(c, Node::Leaf(l) if l.field_name == DOCUMENTS
                && l.op == Op::Contains && matches!(l.operand, Operand::One(_)))
        })
}

fn describe<'a>(
    catalogue: &'a Catalogue,
    leaf: &'a Leaf,
    profile: &'a Profile,
    as_of: Date,
    negated: bool,
    exclusion: bool,
    place: Place<'a>,
) -> Gap<'a> {
    let value = profile.get(leaf.field);
    let gap_kind = match value {
        None => GapKind::MissingData,
        Some(_) if exclusion => GapKind::Exclusion,
        Some(_) if leaf.field_name == DOCUMENTS => GapKind::Document,
        Some(_) if leaf.op.is_threshold() && !negated => GapKind::Threshold,
        Some(_) => GapKind::Category,
    };
    let estimate = if negated {
        None
    } else {
        estimated_date(leaf, profile, as_of, catalogue)
    };
    Gap {
        path: &leaf.path,
        field: &leaf.field_name,
        operator: leaf.op.name(),
        required: &leaf.expected,
        actual: value,
        gap: value
            .and_then(FieldValue::scalar)
            .filter(|_| !negated)
            .and_then(|a| distance(leaf, a))
            .map(Number),
        gap_kind,
        gap_description: GapText {
            spec: catalogue.field(leaf.field),
            leaf,
            actual: value,
            kind: gap_kind,
            negated,
            any_of: place.documents,
            alternatives: place.alternatives,
        },
        estimated_eligibility_date: estimate.map(|e| e.date),
        estimate_counts_from_as_of: estimate.is_some_and(|e| e.counts_from_as_of),
        closable_by: match (gap_kind, negated, estimate) {
            (GapKind::MissingData, _, _) => ClosableBy::Information,
            (GapKind::Document, false, _) => ClosableBy::Document,
            (_, _, Some(_)) => ClosableBy::Waiting,
            _ => ClosableBy::None,
        },
        negated,
        label: leaf.label.as_deref(),
    }
}

/// A gap in plain language. It is written where it is read — into a JSON output or a stored
/// summary — rather than on every evaluation: the text costs more than the rest of the gap.
#[derive(Clone, Copy)]
pub struct GapText<'a> {
    spec: &'a FieldSpec,
    leaf: &'a Leaf,
    actual: Option<&'a FieldValue>,
    kind: GapKind,
    negated: bool,
    /// The OR group of documents the leaf is one of: the text names them all.
    any_of: Option<&'a Group>,
    /// The ORs of conditions the leaf is under: the steps join their alternatives
    /// ([`crate::next_steps::NextStep::Either`]).
    alternatives: Alternatives<'a>,
}

impl<'a> GapText<'a> {
    /// The kind of the gap the text is about.
    pub fn kind(&self) -> GapKind {
        self.kind
    }

    /// The path of the condition the text is about: its gap's `path`.
    pub fn path(&self) -> &'a str {
        &self.leaf.path
    }

    /// The documents (codes) of the "any one of" group the text names, when it names one.
    pub fn group_documents(&self) -> Option<Vec<&'a str>> {
        let group = self.any_of?;
        Some(
            group
                .children
                .iter()
                .filter_map(|c| match c {
                    Node::Leaf(Leaf {
                        operand: Operand::One(Scalar::Str(code)),
                        ..
                    }) => Some(code.as_str()),
                    _ => None,
                })
                .collect(),
        )
    }

    /// Whether two gaps say the same sentence for the same group (one step, not one per
    /// document).
    pub fn same_group(&self, other: &GapText<'_>) -> bool {
        matches!((self.any_of, other.any_of), (Some(a), Some(b)) if std::ptr::eq(a, b))
    }

    /// Whether the condition is under an OR of conditions (any one of which would do).
    pub fn is_alternative(&self) -> bool {
        self.alternatives.at(0).is_some()
    }

    /// Whether two gaps are under the same outermost OR of conditions: one step says both.
    pub fn same_alternatives(&self, other: &GapText<'_>) -> bool {
        self.alternatives.same_or(&other.alternatives, 0)
    }

    /// Whether this is the question for `field` (an unknown value outside an "any one of"
    /// group).
    pub fn asks_for(&self, field: &str) -> bool {
        self.actual.is_none() && self.any_of.is_none() && self.spec.name == field
    }
}

impl fmt::Display for GapText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let GapText {
            spec,
            leaf,
            actual,
            kind,
            negated,
            any_of,
            alternatives: _,
        } = *self;
        if let Some(group) = any_of {
            // Each document of the group is a gap of its own; each names itself first and the
            // others after it, so no two of them read the same.
            let this = match &leaf.operand {
                Operand::One(v) => Some(v),
                _ => None,
            };
            let others: Vec<String> = group
                .children
                .iter()
                .filter_map(|c| match c {
                    Node::Leaf(Leaf {
                        operand: Operand::One(v),
                        ..
                    }) if Some(v) != this => Some(Shown(spec, v).to_string()),
                    _ => None,
                })
                .collect();
            let this = this.map_or(String::new(), |v| Shown(spec, v).to_string());
            return if actual.is_none() {
                write!(
                    f,
                    "Tell us whether your {this} is verified, or else your {}",
                    or_list(&others)
                )
            } else {
                write!(
                    f,
                    "Get your {this} verified, or instead your {}",
                    or_list(&others)
                )
            };
        }
        let name = spec.human_name();
        let Some(actual) = actual else {
            // Unknown: the catalogue's question for the field, whatever the condition — "it is
            // needed to check that it is yes" says nothing a citizen can act on.
            return match &spec.question {
                Some(question) => f.write_str(question),
                None => write!(f, "Tell us your {name}"),
            };
        };
        match kind {
            // The fact that bars the citizen, from the field, the operator and the value — never
            // the rule's label, which states what must hold (docs/semantics.md, "Gaps").
            GapKind::Exclusion => {
                write!(f, "{}", Capitalised(Bar { spec, leaf, actual }))?;
                f.write_str(", so this scheme is not for you")
            }
            // One document to get verified says so; a document the scheme is not for says that.
            GapKind::Document => match (&leaf.operand, leaf.op, negated) {
                (Operand::One(document), Op::Contains, false) => {
                    write!(f, "Get your {} verified", Shown(spec, document))
                }
                (Operand::One(document), Op::NotContains, false)
                | (Operand::One(document), Op::Contains, true) => write!(
                    f,
                    "The scheme is not for people with a verified {}",
                    Shown(spec, document)
                ),
                _ => write!(
                    f,
                    "Your verified documents must {}be {}; they are {}",
                    if negated { "not " } else { "" },
                    leaf.requirement,
                    ShownValue(spec, actual)
                ),
            },
            GapKind::Threshold => threshold_text(f, spec, leaf, actual),
            // A yes/no fact that is the wrong way round: what the record says and what the
            // scheme needs, each as the field's own clause.
            _ if spec.field_type == FieldType::Boolean => {
                let wanted = match &leaf.operand {
                    Operand::One(Scalar::Bool(b)) => Some(*b != (negated != (leaf.op == Op::Neq))),
                    _ => None,
                };
                match (actual, wanted) {
                    (FieldValue::Scalar(Scalar::Bool(have)), Some(wanted)) => write!(
                        f,
                        "{}; this scheme requires that {}",
                        Capitalised(Clause(spec, *have)),
                        Clause(spec, wanted)
                    ),
                    _ => write!(
                        f,
                        "Your {name} must be {}; it is {}",
                        leaf.requirement,
                        ShownValue(spec, actual)
                    ),
                }
            }
            // A list the scheme needs an item in, or must not find one in.
            _ if spec.field_type == FieldType::List => {
                let negative = negated != (leaf.op == Op::NotContains);
                match (&leaf.operand, negative) {
                    (Operand::One(item), false) => write!(
                        f,
                        "This scheme requires that {}; your {name}: {}",
                        Includes(spec, item),
                        ShownValue(spec, actual)
                    ),
                    (Operand::One(item), true) => write!(
                        f,
                        "{}, so this scheme is not for you",
                        Capitalised(Includes(spec, item))
                    ),
                    _ => write!(
                        f,
                        "Your {name} must {}be {} (you have {})",
                        if negative { "not " } else { "" },
                        leaf.requirement,
                        ShownValue(spec, actual)
                    ),
                }
            }
            _ => {
                // "must be artisan, weaver or fisher", "must not be SC or ST".
                let negative = negated != matches!(leaf.op, Op::Neq | Op::NotIn);
                let wanted = match leaf.op {
                    Op::Neq | Op::NotIn | Op::Eq | Op::In => Wanted::Values(leaf),
                    _ => Wanted::Requirement(&leaf.requirement),
                };
                write!(
                    f,
                    "Your {name} must {}be {}; it is {}",
                    if negative { "not " } else { "" },
                    wanted.shown(spec),
                    ShownValue(spec, actual)
                )
            }
        }
    }
}

/// The fact that makes an exclusion fail, as a clause: a yes/no field's own clause ("your
/// husband or wife paid income tax last year"), a list holding the barred item ("you already
/// receive Sandhya Suraksha Yojana"), or the value beside what the scheme needs ("your irrigated
/// land is 3 acres, but the scheme needs less than 2.50 acres").
struct Bar<'a> {
    spec: &'a FieldSpec,
    leaf: &'a Leaf,
    actual: &'a FieldValue,
}

impl fmt::Display for Bar<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Bar { spec, leaf, actual } = *self;
        match (actual, &leaf.operand, leaf.op) {
            (FieldValue::Scalar(Scalar::Bool(have)), _, _) if spec.when(*have).is_some() => {
                write!(f, "{}", Clause(spec, *have))
            }
            (FieldValue::List(_), Operand::One(item), Op::NotContains) => {
                write!(f, "{}", Includes(spec, item))
            }
            _ => write!(
                f,
                "your {} {} {}, but the scheme needs {}",
                spec.human_name(),
                if matches!(actual, FieldValue::List(_)) {
                    "are"
                } else {
                    "is"
                },
                ShownValue(spec, actual),
                leaf.requirement
            ),
        }
    }
}

/// A yes/no value as the field's clause (`when_yes` / `when_no`), else "your {label}: yes".
struct Clause<'a>(&'a FieldSpec, bool);

impl fmt::Display for Clause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Clause(spec, value) = *self;
        match spec.when(value) {
            Some(clause) => f.write_str(clause),
            None => write!(
                f,
                "your {}: {}",
                spec.human_name(),
                if value { "yes" } else { "no" }
            ),
        }
    }
}

/// A list field holding `item`, as the field's clause (`when_includes`), else "your {label}
/// include {item}".
struct Includes<'a>(&'a FieldSpec, &'a Scalar);

impl fmt::Display for Includes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Includes(spec, item) = *self;
        let item = Shown(spec, item).to_string();
        match &spec.when_includes {
            Some(clause) => f.write_str(&clause.replace("{item}", &item)),
            None => write!(f, "your {} include {item}", spec.human_name()),
        }
    }
}

/// A sentence begun with a capital letter.
struct Capitalised<T>(T);

impl<T: fmt::Display> fmt::Display for Capitalised<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        let mut chars = text.chars();
        match chars.next() {
            Some(first) => {
                write!(f, "{}", first.to_uppercase())?;
                f.write_str(chars.as_str())
            }
            None => Ok(()),
        }
    }
}

/// What a category condition asks for: its values ("artisan, weaver or fisher"), or for other
/// operators the requirement as rendered at load.
enum Wanted<'a> {
    Values(&'a Leaf),
    Requirement(&'a str),
}

impl Wanted<'_> {
    fn shown(&self, spec: &FieldSpec) -> String {
        match self {
            Wanted::Requirement(words) => words.to_string(),
            Wanted::Values(leaf) => match &leaf.operand {
                Operand::One(v) => Shown(spec, v).to_string(),
                Operand::Many(values) => {
                    let shown: Vec<String> =
                        values.iter().map(|v| Shown(spec, v).to_string()).collect();
                    or_list(&shown)
                }
                Operand::Range(..) => leaf.requirement.clone(),
            },
        }
    }
}

/// "a", "a or b", "a, b or c".
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

impl fmt::Debug for GapText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("GapText").field(&self.to_string()).finish()
    }
}

impl Serialize for GapText<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
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
const AGE: &str = "identity.age";
const DATE_OF_BIRTH: &str = "identity.date_of_birth";

/// The fields an estimated gap date is computed from (besides `as_of`).
pub(crate) fn fields_gap_dates_read(catalogue: &Catalogue) -> [Option<FieldId>; 2] {
    [catalogue.id(AGE), catalogue.id(DATE_OF_BIRTH)]
}

/// The day a citizen reaches the age `leaf` needs, when it is still ahead.
/// When a citizen reaches an age, as far as the profile tells.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EstimatedDate {
    pub date: Date,
    /// Counted from `as_of` (the age is known, the date of birth is not).
    pub counts_from_as_of: bool,
}

pub(crate) fn estimated_date(
    leaf: &Leaf,
    profile: &Profile,
    as_of: Date,
    catalogue: &Catalogue,
) -> Option<EstimatedDate> {
    // The operator first: most leaves are not a lower bound, and it is the cheaper test.
    if !matches!(leaf.op, Op::Gte | Op::Gt | Op::Between) || leaf.field_name != AGE {
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
    let born = catalogue.id(DATE_OF_BIRTH).and_then(|id| profile.get(id));
    let (date, counts_from_as_of) = match born {
        Some(FieldValue::Scalar(Scalar::Date(born))) => (born.add_years(years)?, false),
        _ => (as_of.add_years(i32::try_from(required - age).ok()?)?, true),
    };
    Some(EstimatedDate {
        date,
        counts_from_as_of,
    })
}

fn threshold_text(
    f: &mut fmt::Formatter<'_>,
    spec: &FieldSpec,
    leaf: &Leaf,
    actual: &FieldValue,
) -> fmt::Result {
    // Values carry their unit ("2.50 hectares", money its sign) through `Shown`.
    let shown = ShownValue(spec, actual).to_string();
    let gap = actual.scalar().and_then(|a| distance(leaf, a));
    let amount = |d: f64| Amount(spec, d);
    let bound = |s| Shown(spec, s).to_string();
    let name = spec.human_name();
    let age = leaf.field_name == AGE;
    let dated = spec.field_type == FieldType::Date;
    match (&leaf.operand, leaf.op, gap) {
        (Operand::One(e), Op::Gte, Some(d)) if age => write!(
            f,
            "You are {} below the minimum age of {}",
            amount(d),
            bound(e)
        ),
        (Operand::One(e), Op::Lte, Some(d)) if age => write!(
            f,
            "You are {} above the maximum age of {}",
            amount(d),
            bound(e)
        ),
        (Operand::One(e), Op::Gt, _) if age => {
            write!(f, "You must be older than {}; you are {shown}", bound(e))
        }
        (Operand::One(e), Op::Lt, _) if age => {
            write!(f, "You must be younger than {}; you are {shown}", bound(e))
        }
        (Operand::Range(lo, hi), _, _) if age => write!(
            f,
            "You must be between {} and {} years old; you are {shown}",
            bound(lo),
            bound(hi)
        ),
        // Dates are before and after, not more and less.
        (Operand::One(e), op, _) if dated => {
            let relation = match op {
                Op::Gt => "after",
                Op::Gte => "on or after",
                Op::Lt => "before",
                _ => "on or before",
            };
            write!(f, "Your {name} ({shown}) must be {relation} {}", bound(e))
        }
        (Operand::One(e), Op::Gte, Some(d)) => write!(
            f,
            "Your {name} ({shown}) is {} below the minimum of {}",
            amount(d),
            bound(e)
        ),
        (Operand::One(e), Op::Lte, Some(d)) => write!(
            f,
            "Your {name} ({shown}) is {} above the limit of {}",
            amount(d),
            bound(e)
        ),
        // A strict bound says so: "0 below the minimum" would be wrong.
        (Operand::One(e), Op::Gt, _) => {
            write!(f, "Your {name} ({shown}) must be more than {}", bound(e))
        }
        (Operand::One(e), Op::Lt, _) => {
            write!(f, "Your {name} ({shown}) must be less than {}", bound(e))
        }
        (Operand::Range(lo, hi), _, _) => write!(
            f,
            "Your {name} ({shown}) must be between {} and {}",
            bound(lo),
            bound(hi)
        ),
        _ => write!(f, "Your {name} ({shown}) must be {}", leaf.requirement),
    }
}

/// A distance to a threshold with the field's unit: "₹20,000", "3 years", "0.50 acres".
struct Amount<'a>(&'a FieldSpec, f64);

impl fmt::Display for Amount<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Amount(spec, d) = *self;
        match (spec.is_money(), spec.unit.as_deref()) {
            (true, _) => write!(f, "{}", Rupees(d)),
            (false, Some(unit)) => write!(f, "{}", Quantity(d, unit)),
            (false, None) => write!(f, "{}", IndianNumber(d)),
        }
    }
}

/// A leaf's requirement as words: "at least 65", "one of sc, st", "at most ₹2,00,000"
/// (rendered into [`Leaf::requirement`] when the rule is loaded).
pub(crate) struct Requirement<'a> {
    pub spec: &'a FieldSpec,
    pub leaf: &'a Leaf,
}

impl fmt::Display for Requirement<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Requirement { spec, leaf } = *self;
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
            // One allowed value is that value ("farmer", not "one of farmer").
            Operand::Many(items) if items.len() == 1 => {
                let words = if leaf.op == Op::In { "" } else { "other than " };
                write!(f, "{words}{}", Shown(spec, &items[0]))
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

/// A value as people read it: rupees for money, a number with its unit in words (an age
/// without: "the minimum age of 60"), yes/no, dates as "1 January 1960", codes in the
/// catalogue's words.
struct Shown<'a>(&'a FieldSpec, &'a Scalar);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Shown(spec, value) = *self;
        let number = match value {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Num(n) => Some(*n),
            _ => None,
        };
        match (number, spec.unit.as_deref()) {
            (Some(n), _) if spec.is_money() => return write!(f, "{}", Rupees(n)),
            (Some(n), Some(unit)) if unit != "years" => return write!(f, "{}", Quantity(n, unit)),
            _ => {}
        }
        match value {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Num(n) => write!(f, "{}", IndianNumber(*n)),
            Scalar::Bool(true) => f.write_str("yes"),
            Scalar::Bool(false) => f.write_str("no"),
            Scalar::Str(s) => words(f, Some(spec), s),
            Scalar::Date(d) => write!(f, "{}", LongDate(*d)),
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
            FieldValue::List(items) => word_list(f, Some(self.0), items),
        }
    }
}

/// Codes as words, joined with commas: `[bpl_card, voter_id]` → "BPL card, voter ID" (the
/// field's `value_words`, else spaces for underscores).
pub(crate) fn word_list(
    f: &mut fmt::Formatter<'_>,
    spec: Option<&FieldSpec>,
    codes: &[String],
) -> fmt::Result {
    for (i, code) in codes.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        words(f, spec, code)?;
    }
    Ok(())
}

/// A code as words: the catalogue's words for it (`pan` → "PAN card"), else `small_marginal`
/// → "small marginal".
fn words(f: &mut fmt::Formatter<'_>, spec: Option<&FieldSpec>, code: &str) -> fmt::Result {
    if let Some(words) = spec.and_then(|s| s.value_words.get(code)) {
        return f.write_str(words);
    }
    for (i, part) in code.split('_').enumerate() {
        if i > 0 {
            f.write_str(" ")?;
        }
        f.write_str(part)?;
    }
    Ok(())
}

/// A stable 64-bit digest of which gaps there are and when they close: each gap's condition
/// (its path in the rule), kind, negation and estimated eligibility date (FNV-1a). It leaves out
/// the citizen's value and the distance to the threshold: an income that moves but stays above
/// a limit is the same gap, not a new outcome (docs/fleet.md "What counts as a change"). It
/// also leaves out an estimated date counted from the evaluation date (no date of birth),
/// which would otherwise make every such outcome change every day with nothing new known.
/// Different digests mean different gaps; equal gap lists give equal digests, and different
/// ones collide with a 2^-64 chance. The hash is spelled out here, not taken from `std`, because
/// stored digests must not change with the compiler.
pub fn fingerprint(gaps: &[Gap]) -> u64 {
    let mut hash = Fnv1a::default();
    for gap in gaps {
        hash.write(gap.path.as_bytes());
        hash.write(&[0xff, gap.gap_kind as u8, u8::from(gap.negated)]);
        if let (Some(date), false) = (
            gap.estimated_eligibility_date,
            gap.estimate_counts_from_as_of,
        ) {
            hash.write(&date.day_number().to_le_bytes());
        }
        hash.write(&[0xfe]);
    }
    hash.0
}

struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::GapKind;

    #[test]
    fn gap_kind_names_are_their_serialized_form() {
        use GapKind::*;
        for kind in [Threshold, MissingData, Category, Document, Exclusion] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
        }
    }
}
