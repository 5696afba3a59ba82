//! The flat, C-compatible encoding of the compiled rule program and of profiles in columns: plain
//! arrays of integers and floats that the host C model and the CUDA kernels read through the
//! `ElColumns` / `ElProgram` structs of `cuda/eligibility.cu`.
//!
//! Offsets index pools shared by all columns (or conditions, or rules), so the whole encoding is a
//! handful of uploads.

use engine::Date;
use engine::Rule;
use engine::columns::{ColumnData, ProfileColumns};
use engine::program::{Condition, Input, Instr, Program};
use engine::rule::{Op, Operand};
use engine::temporal::applicability;
use engine::value::Scalar;

/// Column kinds (`EL_INT` … `EL_LIST`).
pub(crate) const INT: u32 = 0;
pub(crate) const NUM: u32 = 1;
pub(crate) const BOOL: u32 = 2;
pub(crate) const STR: u32 = 3;
pub(crate) const LIST: u32 = 4;

/// Postfix opcodes (`EL_LEAF` … `EL_NOT`).
const LEAF: u32 = 0;
const AND: u32 = 1;
const OR: u32 = 2;
const NOT: u32 = 3;

/// `EL_INPUT_KNOWN`: marks a Known(field) input.
const INPUT_KNOWN: u32 = 1 << 31;
/// `EL_NO_TABLE`.
const NO_TABLE: u64 = u64::MAX;
/// `EL_MAX_STACK`: the kernels' postfix stack.
pub const MAX_STACK: usize = 64;
/// A list item that no citizen holds.
const ABSENT_ITEM: u64 = u32::MAX as u64;

#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    #[error("rule {rule} needs a postfix stack of {depth}, more than the kernels' {MAX_STACK}")]
    StackTooDeep { rule: usize, depth: usize },
    #[error("rule {rule} reads {inputs} inputs: too many for a 32-bit table index")]
    TooManyInputs { rule: usize, inputs: usize },
}

/// Profiles in columns, flat. Known masks, booleans, string ids and list bitsets live in `u32s`.
#[derive(Debug, Clone, Default)]
pub struct EncodedColumns {
    pub len: u64,
    /// `ceil(len / 32)`: the GPU packs 32 citizens a word.
    pub words: u64,
    pub col_kind: Vec<u32>,
    pub col_known: Vec<u64>,
    pub col_data: Vec<u64>,
    pub col_width: Vec<u32>,
    pub ints: Vec<i64>,
    pub nums: Vec<f64>,
    pub u32s: Vec<u32>,
}

/// Splits 64-citizen words into 32-citizen words (low half first, so bit order is kept), keeping
/// `words` of them.
fn halves(bits: &[u64], words: usize) -> impl Iterator<Item = u32> + '_ {
    bits.iter()
        .flat_map(|&w| [w as u32, (w >> 32) as u32])
        .take(words)
}

impl EncodedColumns {
    pub fn new(columns: &ProfileColumns) -> EncodedColumns {
        let words = columns.len.div_ceil(32);
        let mut e = EncodedColumns {
            len: columns.len as u64,
            words: words as u64,
            ..EncodedColumns::default()
        };
        for column in &columns.columns {
            e.col_known.push(e.u32s.len() as u64);
            e.u32s.extend(halves(&column.known, words));
            let (kind, data, width) = match &column.data {
                ColumnData::Int(values) => {
                    let at = e.ints.len();
                    e.ints.extend_from_slice(values);
                    (INT, at, 0)
                }
                ColumnData::Num(values) => {
                    let at = e.nums.len();
                    e.nums.extend_from_slice(values);
                    (NUM, at, 0)
                }
                ColumnData::Bool(bits) => {
                    let at = e.u32s.len();
                    e.u32s.extend(halves(bits, words));
                    (BOOL, at, 0)
                }
                ColumnData::Str { ids, .. } => {
                    let at = e.u32s.len();
                    e.u32s.extend_from_slice(ids);
                    (STR, at, 0)
                }
                ColumnData::List { bits, width, .. } => {
                    let at = e.u32s.len();
                    e.u32s.extend(halves(bits, bits.len() * 2));
                    (LIST, at, 2 * *width as u32)
                }
            };
            e.col_kind.push(kind);
            e.col_data.push(data as u64);
            e.col_width.push(width);
        }
        e
    }
}

/// The compiled program, flat, with each rule's applicability on the evaluation date.
#[derive(Debug, Clone, Default)]
pub struct EncodedProgram {
    pub cond_field: Vec<u32>,
    pub cond_test: Vec<u32>,
    pub cond_arg: Vec<u64>,
    pub cond_count: Vec<u32>,
    pub cond_ints: Vec<i64>,
    pub cond_nums: Vec<f64>,
    pub accept: Vec<u8>,
    pub rule_applicable: Vec<u8>,
    pub rule_denominator: Vec<u64>,
    pub rule_inputs: Vec<u64>,
    pub rule_n_inputs: Vec<u32>,
    pub rule_table: Vec<u64>,
    pub rule_postfix: Vec<u64>,
    pub rule_postfix_len: Vec<u32>,
    pub rule_excl: Vec<u64>,
    pub rule_n_excl: Vec<u32>,
    pub inputs: Vec<u32>,
    pub tables: Vec<u8>,
    pub instr_op: Vec<u32>,
    pub instr_a: Vec<u32>,
    pub instr_b: Vec<u32>,
    pub instr_scale: Vec<u64>,
    pub excl: Vec<u32>,
}

/// Int and number tests (`EL_EQ` … `EL_BETWEEN`).
fn test_code(op: Op) -> u32 {
    match op {
        Op::Eq => 0,
        Op::Neq => 1,
        Op::Gt => 2,
        Op::Gte => 3,
        Op::Lt => 4,
        Op::Lte => 5,
        Op::In => 6,
        Op::NotIn => 7,
        Op::Between => 8,
        Op::Contains | Op::NotContains => unreachable!("validated: list operators on list fields"),
    }
}

fn operands(operand: &Operand) -> Vec<&Scalar> {
    match operand {
        Operand::One(s) => vec![s],
        Operand::Many(items) => items.iter().collect(),
        Operand::Range(lo, hi) => vec![lo, hi],
    }
}

impl EncodedProgram {
    /// Encodes `program`, compiled from `rules` (same order), for evaluation on `as_of`. String and
    /// list operands are resolved against the interners of `columns`, as the CPU path does.
    pub fn new(
        program: &Program,
        rules: &[&Rule],
        columns: &ProfileColumns,
        as_of: Date,
    ) -> Result<EncodedProgram, EncodeError> {
        assert_eq!(
            program.rules.len(),
            rules.len(),
            "the program was compiled from these rules"
        );
        let mut e = EncodedProgram::default();
        for cond in &program.conditions {
            e.push_condition(cond, columns);
        }
        for (r, (rule, source)) in program.rules.iter().zip(rules).enumerate() {
            if rule.inputs.len() >= 32 && rule.table.is_some() {
                return Err(EncodeError::TooManyInputs {
                    rule: r,
                    inputs: rule.inputs.len(),
                });
            }
            let depth = stack_depth(&rule.postfix);
            if depth > MAX_STACK {
                return Err(EncodeError::StackTooDeep { rule: r, depth });
            }
            e.rule_applicable
                .push(u8::from(applicability(source, as_of).is_applicable()));
            e.rule_denominator.push(rule.root_denominator);
            e.rule_inputs.push(e.inputs.len() as u64);
            e.rule_n_inputs.push(rule.inputs.len() as u32);
            e.inputs
                .extend(rule.inputs.iter().map(|input| match *input {
                    Input::Condition(c) => c,
                    Input::Known(f) => f | INPUT_KNOWN,
                }));
            match &rule.table {
                Some(table) => {
                    e.rule_table.push(e.tables.len() as u64);
                    e.tables.extend_from_slice(table);
                }
                None => e.rule_table.push(NO_TABLE),
            }
            e.rule_postfix.push(e.instr_op.len() as u64);
            e.rule_postfix_len.push(rule.postfix.len() as u32);
            for instr in &rule.postfix {
                let (op, a, b, scale) = match *instr {
                    Instr::Leaf { cond, field, scale } => (LEAF, cond, field, scale),
                    Instr::And { arity, scale } => (AND, arity, 0, scale),
                    Instr::Or { arity, scale } => (OR, arity, 0, scale),
                    Instr::Not { scale } => (NOT, 0, 0, scale),
                };
                e.instr_op.push(op);
                e.instr_a.push(a);
                e.instr_b.push(b);
                e.instr_scale.push(scale);
            }
            e.rule_excl.push((e.excl.len() / 2) as u64);
            e.rule_n_excl.push(rule.exclusions.len() as u32);
            e.excl
                .extend(rule.exclusions.iter().flat_map(|&(c, f)| [c, f]));
        }
        Ok(e)
    }

    pub fn n_conditions(&self) -> usize {
        self.cond_field.len()
    }

    pub fn n_rules(&self) -> usize {
        self.rule_applicable.len()
    }

    fn push_condition(&mut self, cond: &Condition, columns: &ProfileColumns) {
        self.cond_field.push(cond.field as u32);
        let (test, arg, count) = match &columns.columns[cond.field].data {
            ColumnData::Int(_) => {
                let at = self.cond_ints.len() as u64;
                let values = operands(&cond.operand);
                self.cond_ints.extend(values.iter().map(|s| match s {
                    Scalar::Int(v) => *v,
                    Scalar::Date(d) => d.day_number(),
                    _ => unreachable!(
                        "validated: integer and date fields compare with their own type"
                    ),
                }));
                (test_code(cond.op), at, values.len() as u32)
            }
            ColumnData::Num(_) => {
                let at = self.cond_nums.len() as u64;
                let values = operands(&cond.operand);
                self.cond_nums.extend(values.iter().map(|s| match s {
                    Scalar::Num(v) => *v,
                    _ => unreachable!("validated: number fields compare with numbers"),
                }));
                (test_code(cond.op), at, values.len() as u32)
            }
            ColumnData::Bool(_) => {
                let Operand::One(Scalar::Bool(expected)) = cond.operand else {
                    unreachable!("validated: boolean fields take eq/neq with a boolean")
                };
                (0, u64::from(expected == (cond.op == Op::Eq)), 0)
            }
            ColumnData::Str { interner, .. } => {
                // Acceptance per interned id, as columns.rs decides it.
                let listed: Vec<&str> = operands(&cond.operand)
                    .into_iter()
                    .filter_map(Scalar::as_str)
                    .collect();
                let positive = matches!(cond.op, Op::Eq | Op::In);
                let at = self.accept.len();
                self.accept.resize(at + interner.len(), 0);
                for (s, &id) in interner {
                    self.accept[at + id as usize] =
                        u8::from(listed.contains(&s.as_str()) == positive);
                }
                (0, at as u64, interner.len() as u32)
            }
            ColumnData::List { interner, .. } => {
                let Operand::One(Scalar::Str(item)) = &cond.operand else {
                    unreachable!("validated: list fields take contains/not_contains with one item")
                };
                let id = interner.get(item).map_or(ABSENT_ITEM, |&id| u64::from(id));
                (0, id, u32::from(cond.op == Op::Contains))
            }
        };
        self.cond_test.push(test);
        self.cond_arg.push(arg);
        self.cond_count.push(count);
    }
}

/// The deepest the postfix stack gets while running `postfix`.
fn stack_depth(postfix: &[Instr]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for instr in postfix {
        match *instr {
            Instr::Leaf { .. } => depth += 1,
            Instr::And { arity, .. } | Instr::Or { arity, .. } => {
                depth = depth + 1 - arity as usize
            }
            Instr::Not { .. } => {}
        }
        deepest = deepest.max(depth);
    }
    deepest
}
