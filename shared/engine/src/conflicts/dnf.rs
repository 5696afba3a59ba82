//! Formulas as a disjunction of conjunctions ("terms"), each term a value set per field.
//!
//! Three-valued truth is kept exact: a leaf can be asked to come out true, false, not-true
//! (false or unknown) or not-false, and each of those is one per-field set (`FieldSet`).

use std::collections::BTreeMap;

use crate::catalogue::{Catalogue, FieldId};
use crate::conflicts::sets::{FieldSet, Polarity};
use crate::tree::{GroupOp, Leaf, Node};

/// A conjunction: for each constrained field, the values it may take.
pub type Term = BTreeMap<FieldId, FieldSet>;

/// Beyond this many terms a formula is too large to analyse exactly; the detector says so.
pub const MAX_TERMS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

/// `Ok(vec![])` is the unsatisfiable formula; `Ok(vec![Term::new()])` is "always".
pub type Dnf = Result<Vec<Term>, TooLarge>;

pub fn always() -> Dnf {
    Ok(vec![Term::new()])
}

pub fn leaf(catalogue: &Catalogue, leaf: &Leaf, polarity: Polarity) -> Dnf {
    let spec = catalogue.field(leaf.field);
    let set = FieldSet::of_leaf(spec, leaf, polarity);
    if set.is_empty(spec) {
        return Ok(vec![]);
    }
    Ok(vec![Term::from([(leaf.field, set)])])
}

pub fn node(catalogue: &Catalogue, node: &Node, polarity: Polarity) -> Dnf {
    match node {
        Node::Leaf(l) => leaf(catalogue, l, polarity),
        Node::Group(group) => {
            if group.op == GroupOp::Not {
                return self::node(catalogue, &group.children[0], polarity.negated());
            }
            // AND is a conjunction when it must pass or must not fail; OR the other way round.
            let conjunctive = matches!(
                (group.op, polarity),
                (GroupOp::And, Polarity::True | Polarity::NotFalse)
                    | (GroupOp::Or, Polarity::False | Polarity::NotTrue)
            );
            let mut children = group
                .children
                .iter()
                .map(|c| self::node(catalogue, c, polarity));
            if conjunctive {
                children.try_fold(vec![Term::new()], |acc, c| and(catalogue, &acc, &c?))
            } else {
                children.try_fold(vec![], |acc, c| or(acc, c?))
            }
        }
    }
}

pub fn and(catalogue: &Catalogue, a: &[Term], b: &[Term]) -> Dnf {
    let mut out = Vec::new();
    for x in a {
        'pair: for y in b {
            let mut term = x.clone();
            for (&field, set) in y {
                let merged = match term.get(&field) {
                    Some(existing) => existing.intersect(set),
                    None => set.clone(),
                };
                if merged.is_empty(catalogue.field(field)) {
                    continue 'pair;
                }
                term.insert(field, merged);
            }
            out.push(term);
            if out.len() > MAX_TERMS {
                return Err(TooLarge);
            }
        }
    }
    Ok(out)
}

pub fn or(mut a: Vec<Term>, b: Vec<Term>) -> Dnf {
    a.extend(b);
    if a.len() > MAX_TERMS {
        Err(TooLarge)
    } else {
        Ok(a)
    }
}

/// A profile (namespaced JSON) satisfying a term: fields the term leaves free are omitted, and
/// so are fields it allows to be unknown when no known value fits.
pub fn witness(catalogue: &Catalogue, term: &Term) -> serde_json::Value {
    let mut root = serde_json::Map::new();
    for (&field, set) in term {
        let spec = catalogue.field(field);
        if set.known_is_empty(spec) {
            continue;
        }
        let (ns, name) = spec.name.split_once('.').expect("namespaced");
        let entry = root
            .entry(ns.to_string())
            .or_insert_with(|| serde_json::json!({}));
        entry[name] = crate::conflicts::sets::pick(spec, &set.known);
    }
    serde_json::Value::Object(root)
}
