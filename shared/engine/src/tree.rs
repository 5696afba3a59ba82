//! The condition tree of a rule (docs/semantics.md, "Rules"): leaves that compare one
//! catalogue field with a value, and `AND` / `OR` / `NOT` groups of them. Eligibility, the
//! exclusions and the benefit tiers are all such trees.

use serde::Serialize;
use serde_json::Value as Json;

use crate::catalogue::FieldId;
use crate::value::Scalar;

/// Leaf operators (docs/semantics.md, "Rules").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    NotIn,
    Contains,
    NotContains,
    Between,
}

impl Op {
    pub const ALL: [Op; 11] = [
        Op::Eq,
        Op::Neq,
        Op::Gt,
        Op::Gte,
        Op::Lt,
        Op::Lte,
        Op::In,
        Op::NotIn,
        Op::Contains,
        Op::NotContains,
        Op::Between,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Neq => "neq",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::In => "in",
            Op::NotIn => "not_in",
            Op::Contains => "contains",
            Op::NotContains => "not_contains",
            Op::Between => "between",
        }
    }

    pub fn parse(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Threshold operators: numeric distance to the threshold is meaningful.
    pub fn is_threshold(self) -> bool {
        matches!(self, Op::Gt | Op::Gte | Op::Lt | Op::Lte | Op::Between)
    }
}

/// The value a leaf compares with, typed by the leaf's field.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    One(Scalar),
    Many(Vec<Scalar>),
    /// `between`: inclusive at both ends.
    Range(Scalar, Scalar),
}

/// A leaf condition.
#[derive(Debug, Clone)]
pub struct Leaf {
    pub field: FieldId,
    pub field_name: String,
    pub op: Op,
    pub operand: Operand,
    /// The value exactly as authored, for traces.
    pub expected: Json,
    pub label: Option<String>,
    /// JSON pointer of the leaf inside the rule document.
    pub path: String,
    /// The requirement in words for gap texts ("at least 65", "one of sc, st"), rendered once
    /// at load: gap descriptions are written on every evaluation.
    pub requirement: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum GroupOp {
    #[serde(rename = "AND")]
    And,
    #[serde(rename = "OR")]
    Or,
    #[serde(rename = "NOT")]
    Not,
}

/// A node of the eligibility tree.
#[derive(Debug, Clone)]
pub enum Node {
    Leaf(Leaf),
    Group(Group),
}

#[derive(Debug, Clone)]
pub struct Group {
    pub op: GroupOp,
    pub children: Vec<Node>,
    pub label: Option<String>,
    pub path: String,
    /// The fixed denominator of this node's score (see `score`): scores are exact fractions.
    pub denominator: u64,
    /// For AND/OR: each child's numerator times its scale is in the group's common unit (the lcm
    /// of the children's denominators); for NOT: 1.
    pub scales: Vec<u64>,
}

impl Node {
    pub fn denominator(&self) -> u64 {
        match self {
            Node::Leaf(_) => 1,
            Node::Group(g) => g.denominator,
        }
    }

    /// Visits every leaf, depth first, in document order.
    pub fn for_each_leaf<'a>(&'a self, visit: &mut impl FnMut(&'a Leaf)) {
        match self {
            Node::Leaf(leaf) => visit(leaf),
            Node::Group(g) => g.children.iter().for_each(|c| c.for_each_leaf(visit)),
        }
    }
}
