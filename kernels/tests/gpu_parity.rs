//! On a GPU machine (built with `--features gpu`): the kernels agree with the host C model, the CPU
//! batch evaluator and the scalar evaluator — on random rules, in every output form, in chunks,
//! on kept and patched columns, from kept outcomes, and on one million synthetic citizens. Without a device every
//! test here says so and passes.

#![cfg(feature = "gpu")]

use engine::test_util as common;

use common::{CATALOGUE, as_of, profiles, rules};
use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::Program;
use engine::{Date, Rule, outcome};
use kernels::encode::{EncodedColumns, EncodedProgram};
use kernels::gpu::{Columns, Gpu};
use kernels::host::evaluate_host;
use kernels::launch::Limits;
use kernels::output::{Codes, NO_PREVIOUS, Output, Outputs};
use proptest::prelude::*;
use std::sync::LazyLock;

static GPU: LazyLock<Option<Gpu>> = LazyLock::new(|| {
    Gpu::detect()
        .inspect_err(|e| eprintln!("skipping GPU parity: {e}"))
        .ok()
});

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn gpu_equals_host_model_and_scalar(rules in rules(6), profiles in profiles(300), as_of in as_of(), tables in any::<bool>()) {
        let Some(gpu) = GPU.as_ref() else { return Ok(()) };
        let refs: Vec<&Rule> = rules.iter().collect();
        let mut program = Program::compile(&refs);
        if !tables {
            program.rules.iter_mut().for_each(|r| r.table = None);
        }
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        let encoded_columns = EncodedColumns::new(&columns);
        let encoded = EncodedProgram::new(&program, &refs, &columns, as_of).expect("fits");
        // Small chunks and little room for changes, as the host model runs them.
        let limits = Limits { chunk_citizens: 64, change_capacity: 7 };
        let host = |output| evaluate_host(&encoded_columns, &encoded, output, limits).expect("in bounds");
        let (Outputs::Codes(codes), _) = gpu
            .evaluate_with(Columns::Host(&encoded_columns), &encoded, Output::Codes, limits)
            .expect("the kernels run") else { panic!("codes") };
        let Outputs::Codes(host_codes) = host(Output::Codes) else { panic!("codes") };
        prop_assert_eq!(&codes, &host_codes);
        for (c, profile) in profiles.iter().enumerate() {
            for (r, rule) in refs.iter().enumerate() {
                prop_assert_eq!(codes.code(c, r), outcome(rule, profile, as_of).code());
            }
        }
        let mut kept = gpu.keep(encoded_columns.clone()).expect("fits");
        let (Outputs::Verdicts(verdicts), _) = gpu
            .evaluate(Columns::Resident(&kept), &encoded, Output::Verdicts)
            .expect("the kernels run") else { panic!("verdicts") };
        let Outputs::Verdicts(host_verdicts) = host(Output::Verdicts) else { panic!("verdicts") };
        prop_assert_eq!(&verdicts, &host_verdicts);
        let previous = Codes::from_fn(profiles.len(), refs.len(), |c, r| {
            if c % 3 == 0 { NO_PREVIOUS } else { codes.code(c, r) }
        });
        for columns in [Columns::Host(&encoded_columns), Columns::Resident(&kept)] {
            let (Outputs::Changes(changes), _) = gpu
                .evaluate_with(columns, &encoded, Output::ChangesFrom(&previous), limits)
                .expect("the kernels run") else { panic!("changes") };
            let Outputs::Changes(host_changes) = host(Output::ChangesFrom(&previous)) else { panic!("changes") };
            prop_assert_eq!(&changes, &host_changes);
            prop_assert_eq!(&changes.applied_to(&previous), &codes);
        }
        // From outcomes kept on the device: the same changes, and the kept outcomes become the
        // codes (so from them again, nothing changes).
        // Kept as the codes, then brought back to the previous ones by the pairs that differ.
        gpu.keep_outcomes(&mut kept, &codes).expect("fits");
        let Outputs::Changes(back) = Outputs::from_codes(
            Output::ChangesFrom(&codes), profiles.len(), refs.len(), |c, r| previous.code(c, r),
        ) else { panic!("changes") };
        gpu.update_outcomes(&mut kept, &back).expect("the scatter runs");
        let (Outputs::Changes(changes), _) = gpu
            .evaluate_with(Columns::Resident(&kept), &encoded, Output::ChangesFromKept(&previous), limits)
            .expect("the kernels run") else { panic!("changes") };
        prop_assert_eq!(&changes.applied_to(&previous), &codes);
        let (Outputs::Changes(again), _) = gpu
            .evaluate(Columns::Resident(&kept), &encoded, Output::ChangesFromKept(&codes))
            .expect("the kernels run") else { panic!("changes") };
        prop_assert!(again.pairs.is_empty(), "{:?}", again);
    }

    #[test]
    fn patched_columns_on_the_gpu_equal_the_host(profiles in profiles(200), donors in profiles(20), rules in rules(4), as_of in as_of()) {
        let Some(gpu) = GPU.as_ref() else { return Ok(()) };
        let mut columns = ProfileColumns::new(&CATALOGUE, &profiles);
        let mut kept = gpu.keep(EncodedColumns::new(&columns)).expect("fits");
        let changed: Vec<usize> = (0..profiles.len()).step_by(7).collect();
        for (k, &i) in changed.iter().enumerate() {
            prop_assume!(columns.update(i, &donors[k % donors.len()]));
        }
        let patch = kept.columns().patch(&columns, &changed).expect("same layout");
        gpu.update(&mut kept, &patch).expect("the scatter runs");
        let refs: Vec<&Rule> = rules.iter().collect();
        let program = Program::compile(&refs);
        let encoded = EncodedProgram::new(&program, &refs, &columns, as_of).expect("fits");
        let (Outputs::Codes(codes), _) = gpu
            .evaluate(Columns::Resident(&kept), &encoded, Output::Codes)
            .expect("the kernels run") else { panic!("codes") };
        let batch = evaluate_batch(&program, &refs, &columns, as_of, 1);
        for c in 0..profiles.len() {
            for r in 0..refs.len() {
                prop_assert_eq!(codes.code(c, r), batch.code(c, r));
            }
        }
    }
}

#[test]
fn gpu_equals_cpu_on_a_million_citizens() {
    let Some(gpu) = GPU.as_ref() else { return };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rules = loadtest::citizens::rules(&CATALOGUE, 200, 7);
    let refs: Vec<&Rule> = rules.iter().collect();
    let profiles = loadtest::citizens::generate(
        &CATALOGUE,
        1_000_000,
        loadtest::citizens::CitizenSpec {
            seed: 11,
            missing_rate: 0.05,
            schemes: 200,
        },
        threads,
    );
    let program = Program::compile(&refs);
    let columns = ProfileColumns::new(&CATALOGUE, &profiles);
    let as_of = Date::from_ymd(2025, 6, 15).expect("a date");
    let encoded = EncodedProgram::new(&program, &refs, &columns, as_of).expect("fits");
    let encoded_columns = EncodedColumns::new(&columns);
    let (Outputs::Codes(codes), timings) = gpu
        .evaluate(Columns::Host(&encoded_columns), &encoded, Output::Codes)
        .expect("the kernels run")
    else {
        panic!("codes")
    };
    eprintln!("{}: {timings:?}", gpu.name());
    let batch = evaluate_batch(&program, &refs, &columns, as_of, threads);
    for c in 0..profiles.len() {
        for r in 0..refs.len() {
            assert_eq!(codes.code(c, r), batch.code(c, r), "citizen {c} rule {r}");
        }
    }
    // The scalar evaluator on a sample: it is the slowest path by far.
    for c in (0..profiles.len()).step_by(997) {
        for (r, rule) in refs.iter().enumerate() {
            assert_eq!(codes.code(c, r), outcome(rule, &profiles[c], as_of).code());
        }
    }
}
