//! The kernels' C logic (cuda/eligibility.cu, run on the host by cuda/host_model.c) agrees with
//! the scalar evaluator and the CPU batch evaluator for every (citizen, rule), in every output
//! form and however the population is cut into chunks, with the columns uploaded or kept, and
//! never touches memory beyond what the launch sized; patched columns equal columns built anew.

use engine::test_util as common;

use common::{CATALOGUE, as_of, profiles, rules};
use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::{Instr, Program};
use engine::{Date, Rule, outcome};
use engine::{Outcome, Profile};
use kernels::chunk::Residence;
use kernels::encode::{EncodedColumns, EncodedProgram};
use kernels::host::{HostModel, evaluate_host};
use kernels::launch::Limits;
use kernels::output::{Codes, NO_PREVIOUS, Output, Outputs};
use proptest::prelude::*;

/// One chunk for the whole population, and room for every change.
const WHOLE: Limits = Limits {
    chunk_citizens: usize::MAX,
    change_capacity: usize::MAX >> 8,
};

/// One evaluation of a sequence on the same model.
#[derive(Debug, Clone)]
struct Call {
    citizens: prop::sample::Index,
    rules: prop::sample::Index,
    chunk_blocks: usize,
    capacity: usize,
    kept: bool,
    /// 0 codes, 1 verdicts, 2 changes, 3 changes from outcomes kept with the model.
    mode: u8,
    seed: u64,
}

fn call() -> impl Strategy<Value = Call> {
    (
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        1usize..12,
        0usize..64,
        any::<bool>(),
        0u8..4,
        any::<u64>(),
    )
        .prop_map(
            |(citizens, rules, chunk_blocks, capacity, kept, mode, seed)| Call {
                citizens,
                rules,
                chunk_blocks,
                capacity,
                kept,
                mode,
                seed,
            },
        )
}

/// Previous codes: `codes`, some moved, some unknown ([`NO_PREVIOUS`]).
fn perturbed(codes: &Codes, seed: u64) -> Codes {
    let mut previous = codes.clone();
    let mut state = seed;
    for c in 0..codes.citizens {
        for r in 0..codes.rules {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match state >> 61 {
                0 => previous.set(c, r, NO_PREVIOUS),
                1 | 2 => previous.set(c, r, ((state >> 8) % 153) as u8),
                _ => {}
            }
        }
    }
    previous
}

fn codes_of(outputs: Outputs) -> Codes {
    match outputs {
        Outputs::Codes(codes) => codes,
        other => panic!("asked for codes, got {other:?}"),
    }
}

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
    let codes = codes_of(
        evaluate_host(
            &EncodedColumns::new(columns),
            &encoded,
            Output::Codes,
            WHOLE,
        )
        .expect("in bounds"),
    );
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

    #[test]
    fn every_launch_stays_in_bounds_and_equals_the_cpu(
        rules in rules(40),
        profiles in profiles(301),
        as_of in as_of(),
        calls in prop::collection::vec(call(), 1..5),
    ) {
        // One model for a sequence of evaluations that grow and shrink (citizens 1–300, rules
        // 1–40), as a worker's launcher runs them on reused buffers: each in chunks of whole
        // blocks, with little or much room for changes, the columns uploaded or kept, in every
        // output form. The model refuses any store beyond the sizes the launch computed.
        let mut model = HostModel::default();
        for call in calls {
            let profiles = &profiles[..call.citizens.index(profiles.len()) + 1];
            let refs: Vec<&Rule> = rules[..call.rules.index(rules.len()) + 1].iter().collect();
            let program = Program::compile(&refs);
            let columns = ProfileColumns::new(&CATALOGUE, profiles);
            let encoded = EncodedProgram::new(&program, &refs, &columns, as_of).expect("fits");
            let encoded_columns = EncodedColumns::new(&columns);
            let batch = evaluate_batch(&program, &refs, &columns, as_of, 1);
            let cpu = |output| Outputs::from_codes(output, profiles.len(), refs.len(), |c, r| batch.code(c, r));
            let limits = Limits { chunk_citizens: call.chunk_blocks * 32, change_capacity: call.capacity };
            let residence = if call.kept { Residence::Kept } else { Residence::Upload };
            let codes = codes_of(cpu(Output::Codes));
            let previous = perturbed(&codes, call.seed);
            let output = match call.mode {
                0 => Output::Codes,
                1 => Output::Verdicts,
                2 => Output::ChangesFrom(&previous),
                _ => {
                    // Kept as the current codes, then brought back to the previous ones by
                    // writing only the pairs that differ, as a worker patches them.
                    model.keep_outcomes(&codes);
                    let Outputs::Changes(back) = Outputs::from_codes(
                        Output::ChangesFrom(&codes), profiles.len(), refs.len(), |c, r| previous.code(c, r),
                    ) else { panic!("asked for changes") };
                    model.update_outcomes(&back);
                    Output::ChangesFromKept(&previous)
                }
            };
            let got = model
                .evaluate(&encoded_columns, residence, &encoded, output, limits)
                .map_err(|fault| TestCaseError::fail(format!("{call:?}: {fault}")))?;
            match (got, cpu(output)) {
                (Outputs::Codes(got), Outputs::Codes(cpu)) => prop_assert_eq!(got, cpu),
                (Outputs::Verdicts(got), Outputs::Verdicts(cpu)) => {
                    prop_assert_eq!(&got, &cpu);
                    for c in 0..profiles.len() {
                        for r in 0..refs.len() {
                            prop_assert_eq!(got.verdict(c, r), batch.get(c, r).verdict);
                        }
                    }
                }
                (Outputs::Changes(got), Outputs::Changes(cpu)) => {
                    prop_assert_eq!(&got, &cpu);
                    prop_assert_eq!(&got.applied_to(&previous), &codes);
                    for (c, r, outcome) in got.iter() {
                        prop_assert_ne!(previous.code(c, r), outcome.code());
                        prop_assert_eq!(outcome, batch.get(c, r));
                    }
                    if call.mode == 3 {
                        // The kept outcomes are now the new codes: from them, nothing changes.
                        let kept = Codes { citizens: codes.citizens, rules: codes.rules, codes: model.kept_outcomes().to_vec().into() };
                        prop_assert_eq!(&kept, &codes);
                        let again = model
                            .evaluate(&encoded_columns, residence, &encoded, Output::ChangesFromKept(&codes), limits)
                            .map_err(|fault| TestCaseError::fail(format!("{call:?} again: {fault}")))?;
                        let Outputs::Changes(again) = again else { panic!("asked for changes") };
                        prop_assert!(again.pairs.is_empty(), "{:?}", again);
                    }
                }
                (got, _) => prop_assert!(false, "{:?}: got {:?}", call, got),
            }
        }
    }

    #[test]
    fn patched_columns_equal_columns_built_anew(
        profiles in profiles(150),
        replacements in profiles(40),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..40),
        rules in rules(4),
        as_of in as_of(),
    ) {
        let mut columns = ProfileColumns::new(&CATALOGUE, &profiles);
        let kept = EncodedColumns::new(&columns);
        let mut now: Vec<Profile> = profiles.clone();
        let mut changed = Vec::new();
        for (k, pick) in picks.iter().enumerate() {
            let i = pick.index(profiles.len());
            let profile = &replacements[k % replacements.len()];
            if columns.update(i, profile) {
                now[i] = profile.clone();
                changed.push(i);
            }
        }
        // The updated columns evaluate as columns built from the new profiles do.
        let refs: Vec<&Rule> = rules.iter().collect();
        let program = Program::compile(&refs);
        let built = ProfileColumns::new(&CATALOGUE, &now);
        let updated = evaluate_batch(&program, &refs, &columns, as_of, 1);
        let anew = evaluate_batch(&program, &refs, &built, as_of, 1);
        for (c, profile) in now.iter().enumerate() {
            for (r, rule) in refs.iter().enumerate() {
                prop_assert_eq!(updated.code(c, r), anew.code(c, r), "citizen {} rule {}", c, r);
                prop_assert_eq!(updated.code(c, r), outcome(rule, profile, as_of).code());
            }
        }
        // The kept encoding, patched for the changed citizens only, is the updated columns'
        // encoding, value for value. The changed citizens come in pick order, with repeats: the
        // patch puts them in order itself, and its writes are ascending and distinct.
        let patch = kept.patch(&columns, &changed).expect("same layout");
        for at in [&patch.u32_at, &patch.int_at, &patch.num_at] {
            prop_assert!(at.windows(2).all(|w| w[0] < w[1]), "writes ascending and distinct");
        }
        changed.sort_unstable();
        changed.dedup();
        let mut patched = kept.clone();
        patched.apply(&patch);
        let fresh = EncodedColumns::new(&columns);
        prop_assert_eq!(&patched.u32s, &fresh.u32s);
        prop_assert_eq!(&patched.ints, &fresh.ints);
        prop_assert_eq!(patched.nums.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), fresh.nums.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        prop_assert!(patch.len() <= changed.len() * fresh.col_kind.len() * 8 + 1);
        // And evaluating on it gives the new profiles' outcomes.
        let encoded = EncodedProgram::new(&program, &refs, &columns, as_of).expect("fits");
        let codes = codes_of(evaluate_host(&patched, &encoded, Output::Codes, WHOLE).expect("in bounds"));
        for c in 0..now.len() {
            for r in 0..refs.len() {
                prop_assert_eq!(codes.get(c, r), Outcome::from_code(anew.code(c, r)));
            }
        }
    }
}

#[test]
fn a_list_that_outgrows_its_width_asks_for_new_columns() {
    // `eligibility.active_schemes` takes any scheme id: 64 distinct ids fill one 64-bit word
    // per citizen, a 65th does not fit.
    let doc = |items: std::ops::Range<usize>| {
        let items: Vec<String> = items.map(|k| format!("scheme_{k}")).collect();
        serde_json::json!({"identity": {"age": 40}, "eligibility": {"active_schemes": items}})
    };
    let profile = |items| Profile::from_json(&CATALOGUE, &doc(items), "test").expect("valid");
    let mut columns = ProfileColumns::new(&CATALOGUE, &[profile(0..64), profile(0..1)]);
    let kept = EncodedColumns::new(&columns);
    assert!(columns.update(1, &profile(1..3)), "known items fit");
    assert!(kept.patch(&columns, &[1]).is_some());
    assert!(
        !columns.update(1, &profile(60..66)),
        "two new items do not fit one word"
    );
}
