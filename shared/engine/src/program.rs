//! The compiled rule program: the one flat form that the CPU batch evaluator and the GPU kernel
//! both run.
//!
//! - Conditions (leaves) are deduplicated across rules: each is evaluated once per citizen.
//! - Each rule is a postfix program over condition results, with the exact score arithmetic of
//!   docs/semantics.md "Evaluation" 3 (every node has a fixed denominator; a child's numerator is scaled into its parent's).
//! - Where a rule reads few inputs, the program is also tabulated: every combination of its input
//!   bits maps to an outcome code, so the batch path costs one table look-up per citizen and rule.
//!   The table is filled by running the same postfix program, so the two cannot disagree.

use std::collections::HashMap;

use crate::catalogue::FieldId;
use crate::date::Date;
use crate::outcome::{Exclusions, Outcome, Truth, match_score, verdict};
use crate::profile::Profile;
use crate::rule::Rule;
use crate::temporal::applicability;
use crate::tree::{GroupOp, Leaf, Node, Op, Operand};
use crate::truth::test;

/// A deduplicated leaf condition. Its result for a citizen is one bit: the condition passes
/// (which implies the field is known).
#[derive(Debug, Clone)]
pub struct Condition {
    pub field: FieldId,
    pub op: Op,
    pub operand: Operand,
}

/// One postfix instruction. `scale` multiplies the node's numerator into its parent's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instr {
    /// Push a leaf: true if the condition bit is set, else false if the field is known, else unknown.
    Leaf {
        cond: u32,
        field: u32,
        scale: u64,
    },
    And {
        arity: u32,
        scale: u64,
    },
    Or {
        arity: u32,
        scale: u64,
    },
    Not {
        scale: u64,
    },
}

/// One input bit of a rule's truth table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Input {
    Condition(u32),
    /// The field is known (needed only under NOT and in exclusions, where false ≠ unknown).
    Known(u32),
}

/// Inputs beyond this are not tabulated (2^14 codes = 16 KiB per rule); such rules run the
/// postfix program per citizen.
pub const MAX_TABLE_INPUTS: usize = 14;

#[derive(Debug, Clone)]
pub struct CompiledRule {
    pub postfix: Vec<Instr>,
    /// Exclusion leaves as (condition, field).
    pub exclusions: Vec<(u32, u32)>,
    pub root_denominator: u64,
    pub inputs: Vec<Input>,
    /// `table[index]` is the outcome code, where bit j of index is input j.
    pub table: Option<Vec<u8>>,
}

/// The compiled form of a list of rules (same order as given).
#[derive(Debug, Clone, Default)]
pub struct Program {
    pub conditions: Vec<Condition>,
    pub rules: Vec<CompiledRule>,
}

impl Program {
    pub fn compile(rules: &[&Rule]) -> Program {
        let mut program = Program::default();
        let mut index: HashMap<String, u32> = HashMap::new();
        for rule in rules {
            let mut cond_of = |leaf: &Leaf| -> u32 {
                // The authored value's JSON text identifies the operand exactly.
                let key = format!(
                    "{}\u{0}{}\u{0}{}",
                    leaf.field,
                    leaf.op.name(),
                    leaf.expected
                );
                *index.entry(key).or_insert_with(|| {
                    program.conditions.push(Condition {
                        field: leaf.field,
                        op: leaf.op,
                        operand: leaf.operand.clone(),
                    });
                    (program.conditions.len() - 1) as u32
                })
            };
            let mut postfix = Vec::new();
            let mut negated_fields = Vec::new();
            emit(
                &rule.eligibility,
                1,
                false,
                &mut cond_of,
                &mut postfix,
                &mut negated_fields,
            );
            let exclusions: Vec<(u32, u32)> = rule
                .exclusions
                .iter()
                .map(|l| (cond_of(l), l.field as u32))
                .collect();
            let mut inputs: Vec<Input> = Vec::new();
            let mut add = |input: Input| {
                if !inputs.contains(&input) {
                    inputs.push(input);
                }
            };
            for instr in &postfix {
                if let Instr::Leaf { cond, .. } = instr {
                    add(Input::Condition(*cond));
                }
            }
            for &(cond, field) in &exclusions {
                add(Input::Condition(cond));
                add(Input::Known(field));
            }
            for field in negated_fields {
                add(Input::Known(field));
            }
            let mut compiled = CompiledRule {
                postfix,
                exclusions,
                root_denominator: rule.eligibility.denominator(),
                inputs,
                table: None,
            };
            compiled.table = tabulate(&compiled);
            program.rules.push(compiled);
        }
        program
    }

    /// One citizen against every compiled rule (in `rules` order, as compiled): each distinct
    /// condition is tested once, then each rule looks its outcome up. The per-citizen hot path of
    /// the workers; property tests hold it equal to the scalar evaluator.
    pub fn evaluate_one(&self, rules: &[&Rule], profile: &Profile, as_of: Date) -> Vec<Outcome> {
        assert_eq!(
            self.rules.len(),
            rules.len(),
            "the program was compiled from these rules"
        );
        let mut bits = vec![0u64; self.conditions.len().div_ceil(64)];
        for (c, cond) in self.conditions.iter().enumerate() {
            if test(cond.op, &cond.operand, profile.get(cond.field)).passes() {
                bits[c / 64] |= 1 << (c % 64);
            }
        }
        let cond = |c: u32| bits[c as usize / 64] >> (c % 64) & 1 == 1;
        let known = |f: u32| profile.get(f as usize).is_some();
        rules
            .iter()
            .zip(&self.rules)
            .map(|(rule, compiled)| {
                if !applicability(rule, as_of).is_applicable() {
                    return Outcome::NOT_APPLICABLE;
                }
                match &compiled.table {
                    Some(table) => {
                        let index =
                            compiled
                                .inputs
                                .iter()
                                .enumerate()
                                .fold(0usize, |index, (j, input)| {
                                    let bit = match *input {
                                        Input::Condition(c) => cond(c),
                                        Input::Known(f) => known(f),
                                    };
                                    index | usize::from(bit) << j
                                });
                        Outcome::from_code(table[index])
                    }
                    None => compiled.run(cond, known),
                }
            })
            .collect()
    }
}

fn emit(
    node: &Node,
    scale: u64,
    under_not: bool,
    cond_of: &mut impl FnMut(&Leaf) -> u32,
    out: &mut Vec<Instr>,
    negated_fields: &mut Vec<u32>,
) {
    match node {
        Node::Leaf(leaf) => {
            if under_not {
                negated_fields.push(leaf.field as u32);
            }
            out.push(Instr::Leaf {
                cond: cond_of(leaf),
                field: leaf.field as u32,
                scale,
            });
        }
        Node::Group(group) => {
            let not = group.op == GroupOp::Not;
            for (child, &child_scale) in group.children.iter().zip(&group.scales) {
                emit(
                    child,
                    child_scale,
                    under_not || not,
                    cond_of,
                    out,
                    negated_fields,
                );
            }
            let arity = group.children.len() as u32;
            out.push(match group.op {
                GroupOp::And => Instr::And { arity, scale },
                GroupOp::Or => Instr::Or { arity, scale },
                GroupOp::Not => Instr::Not { scale },
            });
        }
    }
}

impl CompiledRule {
    /// Runs the postfix program for one citizen, given its condition bits and known-field bits.
    pub fn run(&self, cond: impl Fn(u32) -> bool, known: impl Fn(u32) -> bool) -> Outcome {
        // A passing condition implies a known field; a failing one is false only when known.
        let leaf = |c: u32, field: u32| {
            if cond(c) {
                Truth::True
            } else if known(field) {
                Truth::False
            } else {
                Truth::Unknown
            }
        };
        let mut stack: Vec<(Truth, u64)> = Vec::with_capacity(self.postfix.len());
        for instr in &self.postfix {
            match *instr {
                Instr::Leaf {
                    cond: c,
                    field,
                    scale,
                } => {
                    let truth = leaf(c, field);
                    stack.push((truth, u64::from(truth.passes()) * scale));
                }
                Instr::And { arity, scale } | Instr::Or { arity, scale } => {
                    let is_and = matches!(instr, Instr::And { .. });
                    let children = stack.split_off(stack.len() - arity as usize);
                    let (truth, num) = children.into_iter().fold(
                        if is_and {
                            (Truth::True, 0)
                        } else {
                            (Truth::False, 0)
                        },
                        |(t, n), (ct, cn)| {
                            if is_and {
                                (t.and(ct), n + cn)
                            } else {
                                (t.or(ct), n.max(cn))
                            }
                        },
                    );
                    stack.push((truth, num * scale));
                }
                Instr::Not { scale } => {
                    let (child, _) = stack.pop().expect("NOT has a child");
                    let truth = !child;
                    stack.push((truth, u64::from(truth.passes()) * scale));
                }
            }
        }
        let (root, numerator) = stack.pop().expect("a program leaves its root");
        let exclusions = Exclusions::from_truths(self.exclusions.iter().map(|&(c, f)| leaf(c, f)));
        let score = match_score(numerator, self.root_denominator);
        Outcome {
            verdict: verdict(root, score, exclusions),
            score,
        }
    }
}

fn tabulate(rule: &CompiledRule) -> Option<Vec<u8>> {
    let k = rule.inputs.len();
    if k > MAX_TABLE_INPUTS {
        return None;
    }
    let position = |input: Input| rule.inputs.iter().position(|&i| i == input);
    let table = (0..1usize << k)
        .map(|index| {
            let bit = |input: Input| position(input).is_some_and(|j| index >> j & 1 == 1);
            // A field whose known bit is not an input only matters through its conditions: a
            // failing condition there is false, never unknown.
            let known = |f: u32| position(Input::Known(f)).is_none_or(|j| index >> j & 1 == 1);
            rule.run(|c| bit(Input::Condition(c)), known).code()
        })
        .collect();
    Some(table)
}
