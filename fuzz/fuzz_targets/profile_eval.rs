//! Any bytes as a profile: the parser accepts or names the problem, never panics; an accepted
//! profile gets the same verdict and score from the scalar evaluator and from the compiled
//! program, for every rule of the bundled corpus (a differential target).
#![no_main]

use std::sync::LazyLock;

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
    for (rule, compiled) in all.iter().zip(compiled) {
        assert_eq!(
            engine::outcome(rule, &profile, as_of),
            compiled,
            "{}: the scalar and compiled paths disagree",
            rule.rule_id
        );
    }
});
