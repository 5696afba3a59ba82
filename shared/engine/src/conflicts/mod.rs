//! Conflict detection over a rule set (docs/semantics.md, "Conflicts"), by exact interval and set reasoning per field —
//! never by sampling profiles.
//!
//! - [`sets`]: what one field may be in a conjunction (intervals, string sets, list must/must-not).
//! - [`dnf`]: formulas as disjunctions of such conjunctions, with exact three-valued leaves.
//! - this module: the checks — `unsatisfiable`, `dead_branch`, `overlapping_versions`,
//!   `mutually_exclusive`, `duplicate` and `shadowed` — each with the rules, the fields and bounds
//!   involved, and a witness profile where one exists.

pub mod dnf;
pub mod sets;

use serde::Serialize;
use serde_json::Value as Json;

use crate::catalogue::Catalogue;
use crate::rule::Rule;
use crate::ruleset::RuleSet;
use crate::tree::{Group, GroupOp, Leaf, Node, Op};
use dnf::{Dnf, Term, TooLarge};
use sets::Polarity;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictType {
    Unsatisfiable,
    DeadBranch,
    OverlappingVersions,
    MutuallyExclusive,
    Duplicate,
    Shadowed,
}

/// One finding, with what a policy author needs to see why.
#[derive(Debug, Clone, Serialize)]
pub struct Conflict {
    pub conflict_type: ConflictType,
    pub rule_ids: Vec<String>,
    pub scheme_ids: Vec<String>,
    pub description: String,
    /// The fields whose bounds are involved.
    pub fields: Vec<String>,
    /// Where in the (first) rule, for branch-level findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A profile that shows the finding (e.g. one eligible for both of two duplicate schemes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Json>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ConflictReport {
    pub conflicts: Vec<Conflict>,
    /// Rules too large to analyse exactly (their normal form passed the term limit).
    pub not_analysed: Vec<String>,
}

/// Runs every check over the rule set.
pub fn detect(catalogue: &Catalogue, rules: &RuleSet) -> ConflictReport {
    let mut report = ConflictReport::default();
    let mut eligible: Vec<Option<Vec<Term>>> = Vec::with_capacity(rules.rules.len());
    for rule in &rules.rules {
        let set = eligible_set(catalogue, rule);
        match &set {
            Err(TooLarge) => report.not_analysed.push(rule.rule_id.clone()),
            Ok(terms) if terms.is_empty() => report.conflicts.push(unsatisfiable(catalogue, rule)),
            Ok(_) => {
                if let Err(TooLarge) = dead_branches(catalogue, rule, &mut report.conflicts) {
                    report.not_analysed.push(rule.rule_id.clone());
                }
            }
        }
        eligible.push(set.ok());
    }
    overlapping_versions(rules, &mut report.conflicts);
    pairwise(catalogue, rules, &eligible, &mut report.conflicts);
    report.conflicts.sort_by(|a, b| {
        (a.conflict_type, &a.rule_ids, &a.path).cmp(&(b.conflict_type, &b.rule_ids, &b.path))
    });
    report.not_analysed.dedup();
    report
}

/// Profiles eligible for the rule: its tree passes and every exclusion holds.
pub fn eligible_set(catalogue: &Catalogue, rule: &Rule) -> Dnf {
    let tree = dnf::node(catalogue, &rule.eligibility, Polarity::True)?;
    rule.exclusions.iter().try_fold(tree, |acc, leaf| {
        dnf::and(
            catalogue,
            &acc,
            &dnf::leaf(catalogue, leaf, Polarity::True)?,
        )
    })
}

fn conflict(
    kind: ConflictType,
    rules: &[&Rule],
    description: String,
    fields: Vec<String>,
) -> Conflict {
    Conflict {
        conflict_type: kind,
        rule_ids: rules.iter().map(|r| r.rule_id.clone()).collect(),
        scheme_ids: rules.iter().map(|r| r.scheme_id.clone()).collect(),
        description,
        fields,
        path: None,
        witness: None,
    }
}

/// Explains an unsatisfiable rule: the fields whose own conditions (under the root AND and the
/// exclusions) already contradict, with their bounds.
fn unsatisfiable(catalogue: &Catalogue, rule: &Rule) -> Conflict {
    let mut required: Vec<&Leaf> = rule.exclusions.iter().collect();
    if let Node::Group(Group {
        op: GroupOp::And,
        children,
        ..
    }) = &rule.eligibility
    {
        required.extend(
            children
                .iter()
                .filter_map(|c| if let Node::Leaf(l) = c { Some(l) } else { None }),
        );
    }
    let mut fields: Vec<usize> = required.iter().map(|l| l.field).collect();
    fields.sort_unstable();
    fields.dedup();
    let clashes: Vec<(String, String)> = fields
        .into_iter()
        .filter_map(|field| {
            let leaves: Vec<_> = required.iter().filter(|l| l.field == field).collect();
            let spec = catalogue.field(field);
            let set = leaves
                .iter()
                .map(|l| sets::FieldSet::of_leaf(spec, l, Polarity::True))
                .reduce(|a, b| a.intersect(&b))?;
            set.is_empty(spec).then(|| {
                let bounds = leaves
                    .iter()
                    .map(|l| format!("{} {}", l.op.name(), l.expected))
                    .collect::<Vec<_>>()
                    .join(" and ");
                (
                    spec.name.clone(),
                    format!("{}: {bounds} cannot all hold", spec.name),
                )
            })
        })
        .collect();
    let description = if clashes.is_empty() {
        "no profile can pass: every branch of the rule contradicts itself or an exclusion"
            .to_string()
    } else {
        format!(
            "no profile can pass: {}",
            clashes
                .iter()
                .map(|c| c.1.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    let fields = if clashes.is_empty() {
        field_names(catalogue, rule)
    } else {
        clashes.into_iter().map(|c| c.0).collect()
    };
    conflict(ConflictType::Unsatisfiable, &[rule], description, fields)
}

fn field_names(catalogue: &Catalogue, rule: &Rule) -> Vec<String> {
    rule.fields_read()
        .into_iter()
        .map(|f| catalogue.field(f).name.clone())
        .collect()
}

fn node_fields(node: &Node) -> Vec<String> {
    let mut names = Vec::new();
    node.for_each_leaf(&mut |l| names.push(l.field_name.clone()));
    names.sort();
    names.dedup();
    names
}

/// A child that can never pass where it stands, or that never changes whether its group passes.
fn dead_branches(
    catalogue: &Catalogue,
    rule: &Rule,
    out: &mut Vec<Conflict>,
) -> Result<(), TooLarge> {
    let exclusions = rule
        .exclusions
        .iter()
        .try_fold(dnf::always()?, |acc, leaf| {
            dnf::and(
                catalogue,
                &acc,
                &dnf::leaf(catalogue, leaf, Polarity::True)?,
            )
        })?;
    walk_group(catalogue, rule, &rule.eligibility, &exclusions, out)
}

fn walk_group(
    catalogue: &Catalogue,
    rule: &Rule,
    node: &Node,
    context: &[Term],
    out: &mut Vec<Conflict>,
) -> Result<(), TooLarge> {
    let Node::Group(group) = node else {
        return Ok(());
    };
    let truths: Vec<Vec<Term>> = group
        .children
        .iter()
        .map(|c| dnf::node(catalogue, c, Polarity::True))
        .collect::<Result<_, _>>()?;
    for (i, child) in group.children.iter().enumerate() {
        // What must hold where this child is evaluated and could decide the group.
        let here = match group.op {
            GroupOp::And => truths
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .try_fold(context.to_vec(), |acc, (_, t)| dnf::and(catalogue, &acc, t))?,
            _ => context.to_vec(),
        };
        let path = child_path(group, i);
        let (needed, verb) = match group.op {
            GroupOp::Not => (dnf::node(catalogue, child, Polarity::False)?, "fail"),
            _ => (truths[i].clone(), "pass"),
        };
        if dnf::and(catalogue, &here, &needed)?.is_empty() {
            let mut c = conflict(
                ConflictType::DeadBranch,
                &[rule],
                format!(
                    "{path} can never {verb} given the conditions around it, so the group it belongs to is decided without it"
                ),
                node_fields(child),
            );
            c.path = Some(path);
            out.push(c);
            continue;
        }
        match group.op {
            // Redundant in an AND: the siblings already imply it.
            GroupOp::And
                if dnf::and(
                    catalogue,
                    &here,
                    &dnf::node(catalogue, child, Polarity::NotTrue)?,
                )?
                .is_empty() =>
            {
                let mut c = conflict(
                    ConflictType::DeadBranch,
                    &[rule],
                    format!(
                        "{path} never matters: the other conditions of its AND group already imply it"
                    ),
                    node_fields(child),
                );
                c.path = Some(path.clone());
                out.push(c);
            }
            // Never matters in an OR: whenever it passes, an earlier-listed sibling passes too.
            GroupOp::Or => {
                for (j, sibling) in group.children.iter().enumerate().filter(|(j, _)| *j != i) {
                    let escapes = dnf::and(
                        catalogue,
                        &dnf::and(catalogue, &here, &truths[i])?,
                        &dnf::node(catalogue, sibling, Polarity::NotTrue)?,
                    )?;
                    let mutual = j > i && {
                        let back = dnf::and(
                            catalogue,
                            &dnf::and(catalogue, &here, &truths[j])?,
                            &dnf::node(catalogue, child, Polarity::NotTrue)?,
                        )?;
                        back.is_empty()
                    };
                    // Two equivalent siblings: report only the later one.
                    if escapes.is_empty() && !mutual {
                        let mut c = conflict(
                            ConflictType::DeadBranch,
                            &[rule],
                            format!(
                                "{path} never matters: whenever it passes, its sibling {} passes too",
                                child_path(group, j)
                            ),
                            node_fields(child),
                        );
                        c.path = Some(path.clone());
                        out.push(c);
                        break;
                    }
                }
            }
            _ => {}
        }
        let inner = match group.op {
            GroupOp::And => here,
            _ => context.to_vec(),
        };
        walk_group(catalogue, rule, child, &inner, out)?;
    }
    Ok(())
}

fn child_path(group: &Group, i: usize) -> String {
    match &group.children[i] {
        Node::Leaf(l) => l.path.clone(),
        Node::Group(g) => g.path.clone(),
    }
}

fn overlapping_versions(rules: &RuleSet, out: &mut Vec<Conflict>) {
    for (i, a) in rules.rules.iter().enumerate() {
        for b in rules.rules[i + 1..]
            .iter()
            .take_while(|b| b.scheme_id == a.scheme_id)
        {
            let start = a.effective_from.max(b.effective_from);
            let end = match (a.effective_until, b.effective_until) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            if end.is_none_or(|end| start <= end) {
                let until = end.map_or("open-ended".to_string(), |e| e.to_string());
                out.push(conflict(
                    ConflictType::OverlappingVersions,
                    &[a, b],
                    format!(
                        "versions {} and {} of {} are both in effect from {start} to {until}",
                        a.version, b.version, a.scheme_id
                    ),
                    vec!["effective_from".into(), "effective_until".into()],
                ));
            }
        }
    }
}

/// Whether two rules are ever in effect on the same day.
fn overlap_in_time(a: &Rule, b: &Rule) -> bool {
    let start = a.effective_from.max(b.effective_from);
    [a.effective_until, b.effective_until]
        .into_iter()
        .flatten()
        .all(|end| start <= end)
}

/// Scheme ids the rule requires enrolment in (`eligibility.active_schemes contains X`, not negated).
fn required_enrolments(rule: &Rule) -> Vec<String> {
    let mut found = Vec::new();
    collect_enrolments(&rule.eligibility, false, Op::Contains, &mut found);
    found
}

/// Scheme ids whose recipients the rule's exclusions bar.
fn barred_recipients(rule: &Rule) -> Vec<String> {
    rule.exclusions
        .iter()
        .filter(|l| l.field_name == "eligibility.active_schemes" && l.op == Op::NotContains)
        .filter_map(|l| l.expected.as_str().map(str::to_string))
        .collect()
}

fn collect_enrolments(node: &Node, negated: bool, op: Op, out: &mut Vec<String>) {
    match node {
        Node::Leaf(l) if !negated && l.op == op && l.field_name == "eligibility.active_schemes" => {
            out.extend(l.expected.as_str().map(str::to_string))
        }
        Node::Leaf(_) => {}
        Node::Group(g) => g
            .children
            .iter()
            .for_each(|c| collect_enrolments(c, negated ^ (g.op == GroupOp::Not), op, out)),
    }
}

fn pairwise(
    catalogue: &Catalogue,
    rules: &RuleSet,
    eligible: &[Option<Vec<Term>>],
    out: &mut Vec<Conflict>,
) {
    let all = &rules.rules;
    for (i, a) in all.iter().enumerate() {
        let Some(ea) = &eligible[i] else { continue };
        if ea.is_empty() {
            continue;
        }
        for (j, b) in all.iter().enumerate() {
            if i == j || a.scheme_id == b.scheme_id || !overlap_in_time(a, b) {
                continue;
            }
            let Some(eb) = &eligible[j] else { continue };
            if eb.is_empty() {
                continue;
            }
            let meant_together = a.relations.combinable_with.contains(&b.scheme_id)
                || required_enrolments(a).contains(&b.scheme_id);
            if meant_together {
                let together = dnf::and(catalogue, ea, eb);
                if let Ok(terms) = together
                    && terms.is_empty()
                {
                    let mut fields = field_names(catalogue, a);
                    fields.retain(|f| field_names(catalogue, b).contains(f));
                    out.push(conflict(
                            ConflictType::MutuallyExclusive,
                            &[a, b],
                            format!(
                                "{} is meant to be received with {}, but no profile can be eligible for both (conflicting bounds on {})",
                                a.scheme_id,
                                b.scheme_id,
                                if fields.is_empty() { "the fields they read".to_string() } else { fields.join(", ") }
                            ),
                            fields,
                        ));
                }
            }
            if i < j
                && barred_recipients(a).contains(&b.scheme_id)
                && required_enrolments(b).contains(&a.scheme_id)
                || i < j
                    && barred_recipients(b).contains(&a.scheme_id)
                    && required_enrolments(a).contains(&b.scheme_id)
            {
                out.push(conflict(
                    ConflictType::MutuallyExclusive,
                    &[a, b],
                    format!("exclusion cycle: one of {} and {} bars the other's recipients while the other requires them", a.scheme_id, b.scheme_id),
                    vec!["eligibility.active_schemes".into()],
                ));
            }
            if i < j {
                containment(catalogue, a, ea, b, eb, out);
            }
        }
    }
}

/// `duplicate`: two schemes with the same eligible set. `shadowed`: one contained in the other
/// where a rule says they must differ (`relations.must_differ_from`).
fn containment(
    catalogue: &Catalogue,
    a: &Rule,
    ea: &[Term],
    b: &Rule,
    eb: &[Term],
    out: &mut Vec<Conflict>,
) {
    let must_differ = a.relations.must_differ_from.contains(&b.scheme_id)
        || b.relations.must_differ_from.contains(&a.scheme_id);
    // Equal eligible sets read the same fields; the cheap test keeps the pair count manageable.
    if !must_differ && a.fields_read() != b.fields_read() {
        return;
    }
    let outside = |x: &[Term], y: &Rule| -> Option<bool> {
        let not_y = not_eligible(catalogue, y).ok()?;
        Some(dnf::and(catalogue, x, &not_y).ok()?.is_empty())
    };
    let (Some(a_in_b), Some(b_in_a)) = (outside(ea, b), outside(eb, a)) else {
        return;
    };
    let both = dnf::and(catalogue, ea, eb)
        .ok()
        .and_then(|t| t.first().map(|t| dnf::witness(catalogue, t)));
    let mut fields = field_names(catalogue, a);
    fields.extend(field_names(catalogue, b));
    fields.sort();
    fields.dedup();
    let finding = match (a_in_b, b_in_a) {
        (true, true) => Some((
            ConflictType::Duplicate,
            format!(
                "{} and {} have exactly the same eligible citizens",
                a.scheme_id, b.scheme_id
            ),
        )),
        (true, false) if must_differ => Some((
            ConflictType::Shadowed,
            format!(
                "everyone eligible for {} is also eligible for {}",
                a.scheme_id, b.scheme_id
            ),
        )),
        (false, true) if must_differ => Some((
            ConflictType::Shadowed,
            format!(
                "everyone eligible for {} is also eligible for {}",
                b.scheme_id, a.scheme_id
            ),
        )),
        _ => None,
    };
    if let Some((kind, description)) = finding {
        let mut c = conflict(kind, &[a, b], description, fields);
        c.witness = both;
        out.push(c);
    }
}

/// Profiles not eligible for the rule: its tree does not pass, or an exclusion does not hold.
fn not_eligible(catalogue: &Catalogue, rule: &Rule) -> Dnf {
    let tree = dnf::node(catalogue, &rule.eligibility, Polarity::NotTrue)?;
    rule.exclusions.iter().try_fold(tree, |acc, leaf| {
        dnf::or(acc, dnf::leaf(catalogue, leaf, Polarity::NotTrue)?)
    })
}
