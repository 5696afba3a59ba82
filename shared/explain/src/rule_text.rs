//! A rule as a person reads it, in one language: its conditions, the bars that must not apply,
//! its benefit and documents (the scheme explorer's page, docs/web.md), and what changed between
//! two versions of it ("age: at least 60 years → at least 65 years").
//!
//! Worded from the same data as the facts: field labels, requirements and values come from the
//! language file and the catalogue, the joining words from the file's `page` section.

use engine::catalogue::FieldType;
use engine::tree::{GroupOp, Leaf, Node};
use engine::{Catalogue, Rule};
use serde_json::Value as Json;

use crate::facts::{FieldOf, benefit_amount, benefit_amount_parts, benefit_lines, scheme_name};
use crate::language::Language;
use crate::phrasing::capitalised;
use crate::words::{Words, fill};

/// The catalogue field whose values are document codes.
const DOCUMENTS: &str = "identity.verified_documents";

/// A rule's eligibility tree as sentences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// One condition ("Age: at least 60 years").
    Text(String),
    /// Every one of these.
    AllOf(Vec<Line>),
    /// Any one of these.
    AnyOf(Vec<Line>),
    /// None of these.
    NoneOf(Vec<Line>),
}

/// One rule, worded.
#[derive(Debug, Clone)]
pub struct RuleText {
    /// The scheme's name in the language.
    pub name: String,
    /// Who can get it.
    pub conditions: Line,
    /// The exclusions, each as the condition that must hold ("no one in your household pays
    /// income tax").
    pub also: Vec<String>,
    /// The benefit: its kind and payment, amounts, description.
    pub benefit: Vec<String>,
    /// The base amounts as one sentence, where the rule gives any.
    pub amount: Option<String>,
    /// Amounts that depend on the profile: where each tier's condition holds, its amount.
    pub tiers: Vec<String>,
    /// The documents to keep ready, in the language's words.
    pub documents: Vec<String>,
}

/// `rule` in `language`.
pub fn describe(rule: &Rule, catalogue: &Catalogue, language: Language) -> RuleText {
    let words = language.words();
    RuleText {
        name: scheme_name(catalogue, words, &rule.scheme_id, &rule.scheme_name),
        conditions: node_line(catalogue, words, &rule.eligibility),
        also: rule
            .exclusions
            .iter()
            .map(|leaf| leaf_text(catalogue, words, leaf))
            .collect(),
        benefit: rule
            .benefit_estimate
            .as_ref()
            .map(|estimates| benefit_lines(words, &estimates.base))
            .unwrap_or_default(),
        amount: rule
            .benefit_estimate
            .as_ref()
            .and_then(|estimates| benefit_amount(words, &estimates.base)),
        tiers: tiers(rule, catalogue, words),
        documents: documents(catalogue, language, &rule.documents_required),
    }
}

/// Amounts that depend on the profile: where each tier's condition holds, its amount.
fn tiers(rule: &Rule, catalogue: &Catalogue, words: &Words) -> Vec<String> {
    let (Some(benefit), Some(estimates)) = (&rule.benefit, &rule.benefit_estimate) else {
        return Vec::new();
    };
    benefit
        .tiers
        .iter()
        .zip(&estimates.tiers)
        .filter_map(|(tier, (applied, _))| {
            let amount = benefit_amount_parts(words, applied)?;
            let when = leaves_text(catalogue, words, &tier.when);
            Some(fill(
                words.page_word("benefit_tier"),
                &[("when", &when), ("amount", &amount)],
            ))
        })
        .collect()
}

/// Document codes in `language`'s words.
pub fn documents(catalogue: &Catalogue, language: Language, codes: &[String]) -> Vec<String> {
    let spec = catalogue.id(DOCUMENTS).map(|id| catalogue.field(id));
    codes
        .iter()
        .map(|code| match spec {
            Some(spec) => language.value(spec, code),
            None => code.replace('_', " "),
        })
        .collect()
}

/// What changed from `old` to `new` (two versions of one scheme), one sentence each: a
/// requirement whose value moved, a condition added or dropped (one of several ways to qualify
/// said as such), how the conditions combine, the documents, the benefit. Conditions are
/// matched by field and operator, in order; one under `NOT` is said only through the change of
/// how conditions combine (it means its opposite).
pub fn changes(old: &Rule, new: &Rule, catalogue: &Catalogue, language: Language) -> Vec<String> {
    let words = language.words();
    let mut before = leaves(old);
    let mut out = Vec::new();
    // A condition that is one of several ways to qualify is said as such: "new condition"
    // would read as a requirement of its own.
    let said = |key_one: &'static str, key_alternative: &'static str, leaf: &Leaf, place: Place| {
        let key = if place == Place::Alternative {
            key_alternative
        } else {
            key_one
        };
        fill(
            words.page_word(key),
            &[("condition", &leaf_text(catalogue, words, leaf))],
        )
    };
    for (leaf, place) in leaves(new) {
        match before
            .iter()
            .position(|(o, p)| o.field_name == leaf.field_name && o.op == leaf.op && *p == place)
        {
            Some(at) => {
                let (was, _) = before.remove(at);
                if was.expected != leaf.expected && place != Place::Negated {
                    let (old_required, label) = requirement(catalogue, words, was);
                    let (new_required, _) = requirement(catalogue, words, leaf);
                    out.push(capitalised(&fill(
                        words.page_word("change_value"),
                        &[
                            ("label", &label),
                            ("old", &old_required),
                            ("new", &new_required),
                        ],
                    )));
                }
            }
            None if place == Place::Negated => {}
            None => out.push(said(
                "change_added",
                "change_added_alternative",
                leaf,
                place,
            )),
        }
    }
    for (leaf, place) in before {
        if place != Place::Negated {
            out.push(said(
                "change_removed",
                "change_removed_alternative",
                leaf,
                place,
            ));
        }
    }
    if shape(&old.eligibility) != shape(&new.eligibility) {
        out.push(words.page_word("change_structure").to_string());
    }
    let (was, now) = (
        documents(catalogue, language, &old.documents_required),
        documents(catalogue, language, &new.documents_required),
    );
    if was != now {
        let list = |items: &[String]| {
            if items.is_empty() {
                words.none.clone()
            } else {
                items.join(&words.list_separator)
            }
        };
        out.push(fill(
            words.page_word("change_documents"),
            &[("old", &list(&was)), ("new", &list(&now))],
        ));
    }
    // The benefit: its kind and payment, then the amounts, base and tiers.
    let benefit = |rule: &Rule| {
        let kind = rule.benefit_estimate.as_ref().and_then(|e| {
            words.benefit_kind(e.base.type_code.as_deref(), e.base.disbursement.as_deref())
        });
        let base = rule
            .benefit_estimate
            .as_ref()
            .and_then(|e| benefit_amount_parts(words, &e.base));
        kind.into_iter()
            .chain(base)
            .chain(tiers(rule, catalogue, words))
            .collect::<Vec<_>>()
    };
    let (was, now) = (benefit(old), benefit(new));
    for k in 0..was.len().max(now.len()) {
        let none = || words.none.clone();
        let (a, b) = (
            was.get(k).cloned().unwrap_or_else(none),
            now.get(k).cloned().unwrap_or_else(none),
        );
        if a != b {
            out.push(fill(
                words.page_word("change_benefit"),
                &[("old", &a), ("new", &b)],
            ));
        }
    }
    out
}

/// Where a condition sits in a rule: required, one of several alternatives (under an `OR`),
/// or meaning its opposite (under an odd number of `NOT`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Required,
    Alternative,
    Negated,
}

/// A tree's shape: its groups and the fields and operators of its leaves, without values.
fn shape(node: &Node) -> String {
    match node {
        Node::Leaf(leaf) => format!("{}:{}", leaf.field_name, leaf.op.name()),
        Node::Group(group) => {
            let children: Vec<String> = group.children.iter().map(shape).collect();
            format!("{:?}({})", group.op, children.join(","))
        }
    }
}

/// Every leaf of a rule, the eligibility tree in order, then the exclusions; each with where
/// it sits.
fn leaves(rule: &Rule) -> Vec<(&Leaf, Place)> {
    fn walk<'a>(
        node: &'a Node,
        alternative: bool,
        negated: bool,
        out: &mut Vec<(&'a Leaf, Place)>,
    ) {
        match node {
            Node::Leaf(leaf) => out.push((
                leaf,
                match (negated, alternative) {
                    (true, _) => Place::Negated,
                    (false, true) => Place::Alternative,
                    (false, false) => Place::Required,
                },
            )),
            Node::Group(group) => {
                let alternative = alternative || group.op == GroupOp::Or;
                let negated = negated ^ (group.op == GroupOp::Not);
                group
                    .children
                    .iter()
                    .for_each(|child| walk(child, alternative, negated, out));
            }
        }
    }
    let mut out = Vec::new();
    walk(&rule.eligibility, false, false, &mut out);
    out.extend(rule.exclusions.iter().map(|leaf| (leaf, Place::Required)));
    out
}

fn node_line(catalogue: &Catalogue, words: &Words, node: &Node) -> Line {
    match node {
        Node::Leaf(leaf) => Line::Text(leaf_text(catalogue, words, leaf)),
        Node::Group(group) => {
            let children = group
                .children
                .iter()
                .map(|c| node_line(catalogue, words, c))
                .collect();
            match group.op {
                GroupOp::And => Line::AllOf(children),
                GroupOp::Or => Line::AnyOf(children),
                GroupOp::Not => Line::NoneOf(children),
            }
        }
    }
}

/// A tier's condition in one line: its leaves joined with the language's "and".
fn leaves_text(catalogue: &Catalogue, words: &Words, node: &Node) -> String {
    let mut parts = Vec::new();
    node.for_each_leaf(&mut |leaf| parts.push(condition(catalogue, words, leaf)));
    words.list(&parts, &words.and_separator)
}

/// One condition as a line of its own, capitalised.
fn leaf_text(catalogue: &Catalogue, words: &Words, leaf: &Leaf) -> String {
    capitalised(&condition(catalogue, words, leaf))
}

/// One condition: a yes/no requirement as its own clause ("your household is on the BPL
/// list"), any other as "label: requirement".
fn condition(catalogue: &Catalogue, words: &Words, leaf: &Leaf) -> String {
    let (required, label) = requirement(catalogue, words, leaf);
    let boolean = catalogue
        .id(&leaf.field_name)
        .is_some_and(|id| catalogue.field(id).field_type == FieldType::Boolean)
        && matches!(leaf.expected, Json::Bool(_))
        && required != label;
    let clause = boolean
        && catalogue
            .id(&leaf.field_name)
            .and_then(|id| words.clause(catalogue.field(id), true))
            .is_some();
    if clause {
        required
    } else {
        fill(
            words.page_word("requirement_line"),
            &[("label", &label), ("required", &required)],
        )
    }
}

/// A leaf's requirement in words and its field's label, in the language.
fn requirement(catalogue: &Catalogue, words: &Words, leaf: &Leaf) -> (String, String) {
    let on = FieldOf::new(catalogue, words, &leaf.field_name, None);
    let label = words
        .fields
        .get(&leaf.field_name)
        .map_or(on.field.label, |entry| entry.label.as_str())
        .to_string();
    (on.required(leaf.op.name(), &leaf.expected), label)
}

#[cfg(test)]
mod tests {
    use engine::{Catalogue, RuleSet};

    use super::*;

    fn rule(scheme: &str, version: u32) -> (Catalogue, Rule) {
        let catalogue = Catalogue::bundled();
        let rules = RuleSet::bundled(&catalogue).expect("the corpus loads");
        let rule = rules
            .rules
            .iter()
            .find(|r| r.scheme_id == scheme && r.version == version)
            .expect("in the corpus")
            .clone();
        (catalogue, rule)
    }

    #[test]
    fn a_pension_reads_as_its_conditions_in_english_and_hindi() {
        let (catalogue, rule) = rule("sch_ka_old_age_pension", 1);
        let en = describe(&rule, &catalogue, Language::En);
        let Line::AllOf(lines) = &en.conditions else {
            panic!(
                "the pension's conditions are all required: {:?}",
                en.conditions
            )
        };
        let texts: Vec<&str> = lines
            .iter()
            .filter_map(|l| match l {
                Line::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert!(texts.contains(&"Age: at least 60 years"), "{texts:?}");
        assert!(
            texts.contains(&"State of residence: Karnataka"),
            "{texts:?}"
        );
        let hi = describe(&rule, &catalogue, Language::Hi);
        let Line::AllOf(lines) = &hi.conditions else {
            panic!("{:?}", hi.conditions)
        };
        assert!(
            lines.contains(&Line::Text("आयु: कम से कम 60 वर्ष".into())),
            "{lines:?}"
        );
        assert_eq!(
            en.tiers,
            ["Where age: less than 65 years: ₹600 a month, ₹7,200 a year"]
        );
    }

    #[test]
    fn a_version_change_is_said_as_old_and_new_requirement() {
        let said = |scheme: &str, old: u32, new: u32| {
            let (catalogue, was) = rule(scheme, old);
            let (_, now) = rule(scheme, new);
            changes(&was, &now, &catalogue, Language::En)
        };
        assert_eq!(
            said("sch_wb_lakshmir_bhandar", 2, 3),
            [
                "Benefit: ₹1,000 a month, ₹12,000 a year → ₹1,500 a month, ₹18,000 a year",
                "Benefit: Where social category: one of SC or ST: ₹1,200 a month, ₹14,400 a year → \
                 Where social category: one of SC or ST: ₹1,700 a month, ₹20,400 a year"
            ]
        );
        // Routes added under an OR are said as ways to qualify, never as requirements.
        let mamata = said("sch_od_mamata", 1, 2);
        assert!(
            mamata.contains(&"New way to qualify: Social category: one of SC or ST".to_string()),
            "{mamata:?}"
        );
        assert!(
            mamata.iter().all(|s| !s.starts_with("New condition: ")),
            "{mamata:?}"
        );
        let niradhar = said("sch_mh_sanjay_gandhi_niradhar", 4, 5);
        assert!(
            niradhar
                .iter()
                .any(|s| s.starts_with("Benefit: ") && s.contains("₹2,500 a month")),
            "{niradhar:?}"
        );
    }
}
