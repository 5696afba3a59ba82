//! The kernels' C logic (cuda/eligibility.cu, run on the host by cuda/host_model.c) agrees with
//! the scalar evaluator and the CPU batch evaluator for every (citizen, rule).

#[path = "../../shared/engine/tests/common/strategies.rs"]
mod common;

use common::{CATALOGUE, as_of, profiles, rules};
use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::{Instr, Program};
use engine::{Date, Rule, outcome};
use kernels::encode::{EncodedColumns, EncodedProgram};
use kernels::host::evaluate_host;
use proptest::prelude::*;

/// Runs the host model and checks every code against the scalar and batch evaluators.
fn check(
    program: &Program,
    refs: &[&Rule],
    columns: &ProfileColumns,
    as_of: Date,
    profiles: &[engine::Profile],
    scalar: bool,
) -> Result<(), TestCaseError> {
    let encoded = EncodedProgram::new(program, refs, columns, as_of).expect("fits the kernels");
    let codes = evaluate_host(&EncodedColumns::new(columns), &encoded);
    let batch = evaluate_batch(program, refs, columns, as_of, 2);
    for (c, profile) in profiles.iter().enumerate() {
        for (r, rule) in refs.iter().enumerate() {
            prop_assert_eq!(
                codes.code(c, r),
                batch.code(c, r),
                "citizen {} rule {} (batch)",
                c,
                r
            );
            if scalar {
                prop_assert_eq!(
                    codes.code(c, r),
                    outcome(rule, profile, as_of).code(),
                    "citizen {} rule {} (scalar)",
                    c,
                    r
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn host_model_equals_scalar_and_batch(rules in rules(6), profiles in profiles(200), as_of in as_of()) {
        let refs: Vec<&Rule> = rules.iter().collect();
        let program = Program::compile(&refs);
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        check(&program, &refs, &columns, as_of, &profiles, true)?;
    }

    #[test]
    fn host_model_postfix_path_equals_scalar(rules in rules(4), profiles in profiles(100), as_of in as_of()) {
        // Without tables the kernels run each rule's postfix program per citizen.
        let refs: Vec<&Rule> = rules.iter().collect();
        let mut program = Program::compile(&refs);
        program.rules.iter_mut().for_each(|r| r.table = None);
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        check(&program, &refs, &columns, as_of, &profiles, true)?;
    }

    #[test]
    fn host_model_exact_scores_beyond_64_bits(rules in rules(3), profiles in profiles(80), as_of in as_of(), shift in 58u32..63) {
        // Denominators this large make 100 × numerator overflow u64: the C long division must
        // still give engine's u128 score. Scaling every instruction and the root keeps each rule's
        // fractions (the program is then checked against the CPU batch path, which runs it).
        let refs: Vec<&Rule> = rules.iter().collect();
        let mut program = Program::compile(&refs);
        for rule in &mut program.rules {
            let factor = (1u64 << shift) / rule.root_denominator;
            prop_assume!(factor > 0);
            rule.table = None;
            rule.root_denominator *= factor;
            if let Some(Instr::And { scale, .. } | Instr::Or { scale, .. } | Instr::Not { scale } | Instr::Leaf { scale, .. }) = rule.postfix.last_mut() {
                *scale *= factor;
            }
        }
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        check(&program, &refs, &columns, as_of, &profiles, true)?;
    }
}
