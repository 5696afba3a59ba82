//! Engine selection on any machine: `cpu` and `auto` always evaluate; `gpu` without a device is an
//! error, never a panic.

use engine::test_util as common;

use common::{CATALOGUE, as_of, profiles, rules};
use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::Program;
use engine::{Rule, outcome};
use kernels::engine_select::{Engine, EngineChoice, EngineUsed, Job, SelectError};
use kernels::gpu::Gpu;
use kernels::output::{Codes, NO_PREVIOUS, Output, Outputs};
use proptest::prelude::*;

#[test]
fn choices_parse() {
    assert_eq!("auto".parse::<EngineChoice>().unwrap(), EngineChoice::Auto);
    assert_eq!("cpu".parse::<EngineChoice>().unwrap(), EngineChoice::Cpu);
    assert_eq!("gpu".parse::<EngineChoice>().unwrap(), EngineChoice::Gpu);
    let refused = "cuda".parse::<EngineChoice>().unwrap_err();
    assert!(
        refused.contains("\"cuda\"") && refused.contains("auto, cpu or gpu"),
        "{refused}"
    );
}

#[test]
fn gpu_without_a_device_is_an_error() {
    // On a GPU machine built with `--features gpu` the device is found instead.
    if Gpu::detect().is_err() {
        let error = Engine::new(EngineChoice::Gpu, 0)
            .err()
            .expect("engine gpu without a device must fail");
        assert!(matches!(error, SelectError::Gpu(_)), "{error}");
        assert!(error.to_string().contains("gpu"), "{error}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn every_available_engine_agrees(rules in rules(5), profiles in profiles(150), as_of in as_of()) {
        let refs: Vec<&Rule> = rules.iter().collect();
        let program = Program::compile(&refs);
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        let batch = evaluate_batch(&program, &refs, &columns, as_of, 1);
        // Every other pair's previous code is its current one: the rest must come back.
        let previous = Codes::from_fn(profiles.len(), refs.len(), |c, r| {
            if (c + r) % 2 == 0 { batch.code(c, r) } else { NO_PREVIOUS }
        });
        // Threshold 0: `auto` takes the GPU whenever there is one.
        for choice in [EngineChoice::Cpu, EngineChoice::Auto] {
            let engine = Engine::new(choice, 0).expect("cpu and auto always start");
            let run = |output| engine.evaluate(&program, &refs, &columns, as_of, 2, output).expect("evaluates");
            let (Outputs::Codes(codes), used) = run(Output::Codes) else { panic!("codes") };
            prop_assert_eq!(matches!(used, EngineUsed::Gpu(_)), engine.gpu().is_ok());
            let (Outputs::Verdicts(verdicts), _) = run(Output::Verdicts) else { panic!("verdicts") };
            let (Outputs::Changes(changes), _) = run(Output::ChangesFrom(&previous)) else { panic!("changes") };
            prop_assert_eq!(&changes.applied_to(&previous), &codes);
            prop_assert!(changes.iter().all(|(c, r, _)| (c + r) % 2 == 1));
            for (c, profile) in profiles.iter().enumerate() {
                for (r, rule) in refs.iter().enumerate() {
                    prop_assert_eq!(codes.code(c, r), batch.code(c, r));
                    prop_assert_eq!(codes.code(c, r), outcome(rule, profile, as_of).code());
                    prop_assert_eq!(verdicts.verdict(c, r), outcome(rule, profile, as_of).verdict);
                }
            }
        }
    }

    #[test]
    fn several_programs_over_the_same_columns(rules in rules(6), profiles in profiles(120), as_of in as_of(), split in 1usize..6) {
        // A population diff: old and new rule sets over one batch (kept on the GPU for both).
        let refs: Vec<&Rule> = rules.iter().collect();
        let (old, new) = refs.split_at(split.min(refs.len()));
        prop_assume!(!new.is_empty());
        let (program_old, program_new) = (Program::compile(old), Program::compile(new));
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        for choice in [EngineChoice::Cpu, EngineChoice::Auto] {
            let engine = Engine::new(choice, 0).expect("cpu and auto always start");
            let jobs = [
                Job { program: &program_old, rules: old, output: Output::Verdicts },
                Job { program: &program_new, rules: new, output: Output::Codes },
            ];
            let done = engine.evaluate_each(&columns, &jobs, as_of, 2).expect("evaluates");
            let [(Outputs::Verdicts(v), _), (Outputs::Codes(codes), _)] = &done[..] else {
                panic!("one output per job, as asked")
            };
            for (c, profile) in profiles.iter().enumerate() {
                for (r, rule) in old.iter().enumerate() {
                    prop_assert_eq!(v.verdict(c, r), outcome(rule, profile, as_of).verdict);
                }
                for (r, rule) in new.iter().enumerate() {
                    prop_assert_eq!(codes.code(c, r), outcome(rule, profile, as_of).code());
                }
            }
        }
    }

    #[test]
    fn auto_below_the_threshold_uses_the_cpu(rules in rules(3), profiles in profiles(50), as_of in as_of()) {
        let refs: Vec<&Rule> = rules.iter().collect();
        let program = Program::compile(&refs);
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        let engine = Engine::new(EngineChoice::Auto, usize::MAX).expect("auto always starts");
        let (_, used) = engine.evaluate(&program, &refs, &columns, as_of, 1, Output::Verdicts).expect("evaluates");
        prop_assert!(matches!(used, EngineUsed::Cpu));
    }
}
