//! The `ElColumns` / `ElProgram` structs of `cuda/eligibility.cu`, field for field: addresses of the
//! encoded arrays, in host memory for the C model or in device memory for the kernels.

use crate::encode::{EncodedColumns, EncodedProgram};

// The C side declares pointers; they are 64-bit addresses here.
const _: () = assert!(size_of::<usize>() == 8, "a 64-bit target");

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RawColumns {
    pub len: u64,
    pub words: u64,
    pub col_kind: u64,
    pub col_known: u64,
    pub col_data: u64,
    pub col_width: u64,
    pub ints: u64,
    pub nums: u64,
    pub u32s: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RawProgram {
    pub n_conditions: u64,
    pub n_rules: u64,
    pub cond_field: u64,
    pub cond_test: u64,
    pub cond_arg: u64,
    pub cond_count: u64,
    pub cond_ints: u64,
    pub cond_nums: u64,
    pub accept: u64,
    pub rule_applicable: u64,
    pub rule_denominator: u64,
    pub rule_inputs: u64,
    pub rule_n_inputs: u64,
    pub rule_table: u64,
    pub rule_postfix: u64,
    pub rule_postfix_len: u64,
    pub rule_excl: u64,
    pub rule_n_excl: u64,
    pub inputs: u64,
    pub tables: u64,
    pub instr_op: u64,
    pub instr_a: u64,
    pub instr_b: u64,
    pub instr_scale: u64,
    pub excl: u64,
}

/// `ElOutput`: where el_rules writes a chunk's output (addresses in the output's memory).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct RawOutput {
    pub mode: u64,
    pub first: u64,
    pub codes: u64,
    pub planes: u64,
    pub previous: u64,
    pub masks: u64,
    pub counts: u64,
    pub n_changes: u64,
    pub capacity: u64,
    pub change_pair: u64,
    pub change_code: u64,
}

/// Where each encoded array lives: host memory, or a device copy of it.
pub trait Place {
    type Error;
    fn place<T: Placeable>(&mut self, values: &[T]) -> Result<u64, Self::Error>;
}

/// Element types of the encoded arrays.
pub trait Placeable: Copy + Default {}
impl Placeable for u8 {}
impl Placeable for u32 {}
impl Placeable for u64 {}
impl Placeable for i64 {}
impl Placeable for f64 {}

impl RawColumns {
    pub fn new<P: Place>(c: &EncodedColumns, at: &mut P) -> Result<RawColumns, P::Error> {
        Ok(RawColumns {
            len: c.len,
            words: c.words,
            col_kind: at.place(&c.col_kind)?,
            col_known: at.place(&c.col_known)?,
            col_data: at.place(&c.col_data)?,
            col_width: at.place(&c.col_width)?,
            ints: at.place(&c.ints)?,
            nums: at.place(&c.nums)?,
            u32s: at.place(&c.u32s)?,
        })
    }
}

impl RawProgram {
    pub fn new<P: Place>(p: &EncodedProgram, at: &mut P) -> Result<RawProgram, P::Error> {
        Ok(RawProgram {
            n_conditions: p.n_conditions() as u64,
            n_rules: p.n_rules() as u64,
            cond_field: at.place(&p.cond_field)?,
            cond_test: at.place(&p.cond_test)?,
            cond_arg: at.place(&p.cond_arg)?,
            cond_count: at.place(&p.cond_count)?,
            cond_ints: at.place(&p.cond_ints)?,
            cond_nums: at.place(&p.cond_nums)?,
            accept: at.place(&p.accept)?,
            rule_applicable: at.place(&p.rule_applicable)?,
            rule_denominator: at.place(&p.rule_denominator)?,
            rule_inputs: at.place(&p.rule_inputs)?,
            rule_n_inputs: at.place(&p.rule_n_inputs)?,
            rule_table: at.place(&p.rule_table)?,
            rule_postfix: at.place(&p.rule_postfix)?,
            rule_postfix_len: at.place(&p.rule_postfix_len)?,
            rule_excl: at.place(&p.rule_excl)?,
            rule_n_excl: at.place(&p.rule_n_excl)?,
            inputs: at.place(&p.inputs)?,
            tables: at.place(&p.tables)?,
            instr_op: at.place(&p.instr_op)?,
            instr_a: at.place(&p.instr_a)?,
            instr_b: at.place(&p.instr_b)?,
            instr_scale: at.place(&p.instr_scale)?,
            excl: at.place(&p.excl)?,
        })
    }
}
