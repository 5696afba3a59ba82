//! The same rules as a zen-engine decision graph (JDM), for the side-by-side benchmark.
//!
//! Each rule becomes ZEN expressions with the spec's semantics for complete profiles: node 1
//! computes, per rule, whether the tree passes (`t`), its exact score floor(100 × score) (`s`)
//! and whether every exclusion holds (`x`); node 2 turns those into the engine's outcome code
//! (see `engine::Outcome::code`), so the two engines' answers compare byte for byte.
//! Unknown fields are the engine's three-valued business; the benchmark's citizens are complete.

use anyhow::{Context, Result, anyhow};
use engine::Rule;
use engine::rule::{GroupOp, Leaf, Node, Op, Operand};
use engine::value::Scalar;
use serde_json::{Value as Json, json};
use std::sync::Arc;
use zen_engine::model::DecisionContent;
use zen_engine::{Decision, DecisionEngine};

fn literal(value: &Scalar) -> String {
    match value {
        Scalar::Str(s) => format!("'{s}'"),
        other => other.to_json().to_string(),
    }
}

fn leaf(l: &Leaf) -> String {
    let f = &l.field_name;
    match (&l.operand, l.op) {
        (Operand::One(v), op) => {
            let v = literal(v);
            match op {
                Op::Eq => format!("{f} == {v}"),
                Op::Neq => format!("{f} != {v}"),
                Op::Gt => format!("{f} > {v}"),
                Op::Gte => format!("{f} >= {v}"),
                Op::Lt => format!("{f} < {v}"),
                Op::Lte => format!("{f} <= {v}"),
                Op::Contains => format!("({v} in {f})"),
                Op::NotContains => format!("not ({v} in {f})"),
                _ => unreachable!("validated operator and operand"),
            }
        }
        (Operand::Many(items), op) => {
            let list = items.iter().map(literal).collect::<Vec<_>>().join(", ");
            if op == Op::In {
                format!("({f} in [{list}])")
            } else {
                format!("not ({f} in [{list}])")
            }
        }
        (Operand::Range(lo, hi), _) => format!("({f} in [{}..{}])", literal(lo), literal(hi)),
    }
}

fn truth(node: &Node) -> String {
    match node {
        Node::Leaf(l) => format!("({})", leaf(l)),
        Node::Group(g) => match g.op {
            GroupOp::And => format!(
                "({})",
                g.children
                    .iter()
                    .map(truth)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            GroupOp::Or => format!(
                "({})",
                g.children
                    .iter()
                    .map(truth)
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            GroupOp::Not => format!("(not {})", truth(&g.children[0])),
        },
    }
}

/// The node's score in [0, 1]: AND the mean, OR the max, leaves and NOT 1 or 0.
fn score(node: &Node) -> String {
    match node {
        Node::Leaf(_) => format!("({} ? 1 : 0)", truth(node)),
        Node::Group(g) => match g.op {
            GroupOp::And => {
                format!(
                    "(({}) / {})",
                    g.children.iter().map(score).collect::<Vec<_>>().join(" + "),
                    g.children.len()
                )
            }
            GroupOp::Or => format!(
                "max([{}])",
                g.children.iter().map(score).collect::<Vec<_>>().join(", ")
            ),
            GroupOp::Not => format!("({} ? 1 : 0)", truth(node)),
        },
    }
}

/// The JDM graph for `rules` (request → facts per rule → outcome codes → response).
pub fn decision_graph(rules: &[&Rule]) -> Json {
    let mut facts = Vec::new();
    let mut codes = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let exclusions = if rule.exclusions.is_empty() {
            "true".to_string()
        } else {
            rule.exclusions
                .iter()
                .map(|l| format!("({})", leaf(l)))
                .collect::<Vec<_>>()
                .join(" and ")
        };
        facts.push(json!({"id": format!("t{i}"), "key": format!("t{i}"), "value": truth(&rule.eligibility)}));
        facts.push(json!({"id": format!("s{i}"), "key": format!("s{i}"), "value": format!("floor(100 * {})", score(&rule.eligibility))}));
        facts.push(json!({"id": format!("x{i}"), "key": format!("x{i}"), "value": exclusions}));
        codes.push(json!({
            "id": format!("c{i}"),
            "key": format!("c{i}"),
            "value": format!("not x{i} ? s{i} : (t{i} ? 152 : (s{i} >= 50 ? 51 + s{i} : s{i}))"),
        }));
    }
    let node = |id: &str, kind: &str, content: Option<Json>| {
        let mut n = json!({"id": id, "name": id, "type": kind, "position": {"x": 0, "y": 0}});
        if let Some(c) = content {
            n["content"] = c;
        }
        n
    };
    let edge = |id: &str, from: &str, to: &str| json!({"id": id, "sourceId": from, "targetId": to, "type": "edge"});
    json!({
        "nodes": [
            node("request", "inputNode", None),
            node("facts", "expressionNode", Some(json!({"expressions": facts}))),
            node("codes", "expressionNode", Some(json!({"expressions": codes}))),
            node("response", "outputNode", None),
        ],
        "edges": [edge("e1", "request", "facts"), edge("e2", "facts", "codes"), edge("e3", "codes", "response")],
    })
}

/// A compiled zen decision for a rule list.
pub struct ZenRules {
    decision: Decision,
    rules: usize,
}

impl ZenRules {
    pub fn new(rules: &[&Rule]) -> Result<ZenRules> {
        let content: DecisionContent =
            serde_json::from_value(decision_graph(rules)).context("JDM graph")?;
        let decision = DecisionEngine::default()
            .create_decision(Arc::new(content))
            .map_err(|e| anyhow!("zen refused the graph: {e:?}"))?;
        Ok(ZenRules {
            decision,
            rules: rules.len(),
        })
    }

    /// Outcome codes for one citizen, in rule order.
    pub fn evaluate(&self, profile: &Json) -> Result<Vec<u8>> {
        let response = pollster::block_on(self.decision.evaluate(profile.clone().into()))
            .map_err(|e| anyhow!("zen evaluation failed: {e:?}"))?;
        let result = response.result.to_value();
        (0..self.rules)
            .map(|i| {
                result[format!("c{i}")]
                    .as_f64()
                    .map(|c| c as u8)
                    .ok_or_else(|| {
                        anyhow!("zen gave no code for rule {i}: {}", result[format!("c{i}")])
                    })
            })
            .collect()
    }
}
