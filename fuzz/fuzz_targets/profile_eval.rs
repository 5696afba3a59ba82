//! Any bytes as a profile: the parser accepts or names the problem, never panics; an accepted
//! profile gets the same verdict and score from the scalar evaluator, the compiled program and
//! the batch evaluator, for every rule of the bundled corpus (a differential target).
#![no_main]

use std::sync::LazyLock;

use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::Program;
use engine::{Catalogue, Date, Profile, Rule, RuleSet};
use libfuzzer_sys::fuzz_target;

static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(Catalogue::bundled);
static RULES: LazyLock<RuleSet> =
    LazyLock::new(|| RuleSet::bundled(&CATALOGUE).expect("the bundled corpus is valid"));
static PROGRAM: LazyLock<Program> = LazyLock::new(|| {
    let all: Vec<&Rule> = RULES.rules.iter().collect();
    Program::compile(&all)
});

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(profile) = Profile::from_json(&CATALOGUE, &json, "fuzz") else {
        return;
    };
    let as_of = Date::parse("2025-01-15").expect("a date");
    let all: Vec<&Rule> = RULES.rules.iter().collect();
    let compiled = PROGRAM.evaluate_one(&all, &profile, as_of);
    let batch = evaluate_batch(
        &PROGRAM,
        &all,
        &ProfileColumns::new(&CATALOGUE, &[&profile]),
        as_of,
        1,
    );
    for (r, (rule, compiled)) in all.iter().zip(compiled).enumerate() {
        let scalar = engine::outcome(rule, &profile, as_of);
        assert_eq!(scalar, compiled, "{}: the scalar and compiled paths disagree", rule.rule_id);
        assert_eq!(scalar, batch.get(0, r), "{}: the scalar and batch paths disagree", rule.rule_id);
    }
});
