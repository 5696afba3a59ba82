//! On a GPU machine (built with `--features gpu`): the kernels agree with the host C model, the CPU
//! batch evaluator and the scalar evaluator — on random rules, and on one million synthetic
//! citizens. Without a device every test here says so and passes.

#![cfg(feature = "gpu")]

#[path = "../../shared/engine/tests/common/strategies.rs"]
mod common;

use common::{CATALOGUE, as_of, profiles, rules};
use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::Program;
use engine::{Date, Rule, outcome};
use kernels::encode::{EncodedColumns, EncodedProgram};
use kernels::gpu::Gpu;
use kernels::host::evaluate_host;
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
        let (codes, _) = gpu.evaluate(&encoded_columns, &encoded).expect("the kernels run");
        prop_assert_eq!(&codes, &evaluate_host(&encoded_columns, &encoded));
        for (c, profile) in profiles.iter().enumerate() {
            for (r, rule) in refs.iter().enumerate() {
                prop_assert_eq!(codes.code(c, r), outcome(rule, profile, as_of).code());
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
    let (codes, timings) = gpu
        .evaluate(&EncodedColumns::new(&columns), &encoded)
        .expect("the kernels run");
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
