//! Truth (docs/semantics.md, "Evaluation" 1–3): a leaf of a rule's condition tree against a
//! profile's value, and a whole tree from its leaves' truths, in Kleene's three-valued logic,
//! with the matched count the score is made of. Below the evaluator, the gap walk and the
//! benefit tiers, which all read trees this way.

use smallvec::SmallVec;
use std::cmp::Ordering;

use crate::outcome::Truth;
use crate::profile::Profile;
use crate::tree::{GroupOp, Leaf, Node, Op, Operand};
use crate::value::{FieldValue, Scalar};

/// A leaf's truth for a field value; an absent value is `Unknown`.
#[inline]
pub fn leaf_truth(leaf: &Leaf, value: Option<&FieldValue>) -> Truth {
    test(leaf.op, &leaf.operand, value)
}

/// An operator applied to a field value (shared by leaves and compiled conditions). Inlined
/// where it is called: the compiled program tests about a thousand conditions per citizen with
/// it (docs/performance.md, "The engine").
#[inline]
pub fn test(op: Op, operand: &Operand, value: Option<&FieldValue>) -> Truth {
    let Some(value) = value else {
        return Truth::Unknown;
    };
    let passes = match (operand, value) {
        (Operand::One(expected), FieldValue::Scalar(actual)) => match op {
            Op::Eq => actual == expected,
            Op::Neq => actual != expected,
            op => actual.compare(expected).is_some_and(|ord| match op {
                Op::Gt => ord == Ordering::Greater,
                Op::Gte => ord != Ordering::Less,
                Op::Lt => ord == Ordering::Less,
                Op::Lte => ord != Ordering::Greater,
                _ => false,
            }),
        },
        (Operand::Many(options), FieldValue::Scalar(actual)) => {
            (op == Op::In) == options.contains(actual)
        }
        (Operand::Range(lo, hi), FieldValue::Scalar(actual)) => {
            actual.compare(lo).is_some_and(|o| o != Ordering::Less)
                && actual.compare(hi).is_some_and(|o| o != Ordering::Greater)
        }
        (Operand::One(Scalar::Str(item)), FieldValue::List(items)) => {
            (op == Op::Contains) == items.contains(item)
        }
        // Validation pairs operators with field types; any other pairing cannot be loaded.
        _ => false,
    };
    Truth::from_bool(passes)
}

/// The same, with leaf truths supplied by `truth` (so hypothetical answers can be tried).
pub(crate) fn tree_outcome(node: &Node, truth: &mut impl FnMut(&Leaf) -> Truth) -> (Truth, u64) {
    match node {
        Node::Leaf(leaf) => {
            let t = truth(leaf);
            (t, u64::from(t.passes()))
        }
        Node::Group(group) => {
            let scaled = |(child, scale): (&Node, &u64)| {
                let (t, num) = tree_outcome(child, truth);
                (t, num * scale)
            };
            match group.op {
                GroupOp::And => group
                    .children
                    .iter()
                    .zip(&group.scales)
                    .map(scaled)
                    .fold((Truth::True, 0), |(t, n), (ct, cn)| (t.and(ct), n + cn)),
                GroupOp::Or => group
                    .children
                    .iter()
                    .zip(&group.scales)
                    .map(scaled)
                    .fold((Truth::False, 0), |(t, n), (ct, cn)| (t.or(ct), n.max(cn))),
                GroupOp::Not => {
                    let t = !tree_outcome(&group.children[0], truth).0;
                    (t, u64::from(t.passes()))
                }
            }
        }
    }
}

/// Every node's truth in pre-order, each with the index just past its subtree, so that a walk
/// can skip a subtree that needs no look. Kept inline for trees of usual size: it lives for one
/// evaluation.
pub(crate) struct NodeTruths(SmallVec<[(Truth, u32); 24]>);

impl NodeTruths {
    /// Records the tree's truths for the profile, showing each leaf with its truth to `on_leaf`
    /// in pre-order; returns them with the root's numerator.
    pub(crate) fn record<'a>(
        node: &'a Node,
        profile: &Profile,
        on_leaf: &mut impl FnMut(&'a Leaf, Truth),
    ) -> (NodeTruths, u64) {
        let mut truths = NodeTruths(SmallVec::new());
        let (_, numerator) = truths.record_node(node, profile, on_leaf);
        (truths, numerator)
    }

    /// [`tree_outcome`] with the profile's leaf truths, recording each node on the way.
    fn record_node<'a>(
        &mut self,
        node: &'a Node,
        profile: &Profile,
        on_leaf: &mut impl FnMut(&'a Leaf, Truth),
    ) -> (Truth, u64) {
        let at = self.0.len();
        self.0.push((Truth::Unknown, 0));
        let (truth, numerator) = match node {
            Node::Leaf(leaf) => {
                let t = leaf_truth(leaf, profile.get(leaf.field));
                on_leaf(leaf, t);
                (t, u64::from(t.passes()))
            }
            Node::Group(group) => {
                let mut children =
                    group
                        .children
                        .iter()
                        .zip(&group.scales)
                        .map(|(child, scale)| {
                            let (t, num) = self.record_node(child, profile, on_leaf);
                            (t, num * scale)
                        });
                match group.op {
                    GroupOp::And => {
                        children.fold((Truth::True, 0), |(t, n), (ct, cn)| (t.and(ct), n + cn))
                    }
                    GroupOp::Or => {
                        children.fold((Truth::False, 0), |(t, n), (ct, cn)| (t.or(ct), n.max(cn)))
                    }
                    GroupOp::Not => {
                        let t = !children.next().expect("NOT has one child").0;
                        (t, u64::from(t.passes()))
                    }
                }
            }
        };
        let end = u32::try_from(self.0.len()).expect("a rule tree has fewer than 2^32 nodes");
        self.0[at] = (truth, end);
        (truth, numerator)
    }

    pub(crate) fn truth(&self, at: usize) -> Truth {
        self.0[at].0
    }

    /// The index just past the subtree at `at`: its next sibling's index.
    pub(crate) fn end(&self, at: usize) -> usize {
        self.0[at].1 as usize
    }

    /// How many of the root's children pass (`matched_conditions`), given the recorded root.
    pub(crate) fn matched(&self, root: &Node) -> usize {
        match root {
            Node::Group(_) => self.children(0).filter(|&c| self.truth(c).passes()).count(),
            Node::Leaf(_) => usize::from(self.truth(0).passes()),
        }
    }

    /// The largest root numerator that answers to the unknown fields could give: a leaf or a
    /// `NOT` not known to fail may pass (an upper bound: leaves are taken as independent).
    pub(crate) fn best_numerator(&self, node: &Node, at: usize) -> u64 {
        match node {
            Node::Group(group) if group.op != GroupOp::Not => {
                let children = self
                    .children(at)
                    .zip(&group.children)
                    .zip(&group.scales)
                    .map(|((child_at, child), scale)| self.best_numerator(child, child_at) * scale);
                if group.op == GroupOp::And {
                    children.sum()
                } else {
                    children.max().unwrap_or(0)
                }
            }
            _ => u64::from(self.truth(at) != Truth::False),
        }
    }

    /// The indices of a group's children, given the group's index.
    pub(crate) fn children(&self, at: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.end(at);
        let mut next = at + 1;
        std::iter::from_fn(move || {
            let child = next;
            (child < end).then(|| {
                next = self.end(child);
                child
            })
        })
    }
}

/// Leaf truths from the profile's values.
pub(crate) fn from_profile(profile: &Profile) -> impl Fn(&Leaf) -> Truth + '_ {
    |leaf: &Leaf| leaf_truth(leaf, profile.get(leaf.field))
}
