//! Any text as a rule document: the loader returns a rule or problems, never panics, and a rule
//! it accepts hashes and evaluates the same on every path (a differential target): for each of
//! the corpus' hand-written caseworker citizens (and the empty profile), the scalar evaluator,
//! the compiled program and the batch evaluator give the same verdict and score.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::Program;
use engine::{Catalogue, Date, Profile};
use libfuzzer_sys::fuzz_target;

static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(Catalogue::bundled);

/// Realistic citizens: every profile of `shared/engine/tests/corpus_cases`, and the empty one.
static CITIZENS: LazyLock<Vec<Profile>> = LazyLock::new(|| {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/engine/tests/corpus_cases");
    let files = engine::cases::load_dir(&dir).expect("the corpus cases load");
    let mut citizens: Vec<Profile> = files
        .iter()
        .flat_map(|(_, file)| &file.cases)
        .filter_map(|case| Profile::from_json(&CATALOGUE, &case.profile, "case").ok())
        .collect();
    citizens.push(Profile::from_values(&CATALOGUE, None, vec![None; CATALOGUE.len()]));
    citizens
});
static COLUMNS: LazyLock<ProfileColumns> =
    LazyLock::new(|| ProfileColumns::new(&CATALOGUE, &CITIZENS));

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(rule) = engine::load::parse_rule_yaml(&CATALOGUE, &text, "fuzz") else {
        return;
    };
    let as_of = Date::parse("2026-11-23").expect("a date");
    let rules = [&rule];
    let program = Program::compile(&rules);
    let batch = evaluate_batch(&program, &rules, &COLUMNS, as_of, 1);
    for (c, citizen) in CITIZENS.iter().enumerate() {
        let _ = engine::evaluate(&CATALOGUE, &rule, citizen, as_of);
        let scalar = engine::outcome(&rule, citizen, as_of);
        assert_eq!(
            scalar,
            program.evaluate_one(&rules, citizen, as_of)[0],
            "citizen {c}: the scalar and compiled paths disagree"
        );
        assert_eq!(scalar, batch.get(c, 0), "citizen {c}: the scalar and batch paths disagree");
    }
});
