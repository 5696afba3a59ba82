//! The bundled corpus loads cleanly and has the breadth the project promises.

use engine::{Catalogue, RuleSet};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn corpus() -> RuleSet {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemes");
    match RuleSet::load_dir(&Catalogue::bundled(), &dir) {
        Ok(rules) => rules,
        Err(e) => panic!("the bundled corpus must load: {e}"),
    }
}

#[test]
fn corpus_has_real_central_and_state_schemes_with_sources() {
    let rules = corpus();
    let schemes: BTreeSet<&str> = rules.rules.iter().map(|r| r.scheme_id.as_str()).collect();
    assert!(schemes.len() >= 210, "{} schemes", schemes.len());
    let states: BTreeSet<&str> = rules
        .rules
        .iter()
        .filter(|r| !r.is_central())
        .map(|r| r.state.as_str())
        .collect();
    // Every state and union territory of the catalogue has at least one scheme.
    assert_eq!(states.len(), 36, "{} states: {states:?}", states.len());
    let central = rules.rules.iter().filter(|r| r.is_central()).count();
    assert!(central >= 45, "{central} central schemes");
    for rule in &rules.rules {
        let url = rule.source_url.as_deref().unwrap_or_default();
        assert!(
            url.starts_with("https://") || url.starts_with("http://"),
            "{} has no source url",
            rule.rule_id
        );
    }
    // The seed's worked example is part of the corpus.
    assert!(
        rules
            .rules
            .iter()
            .any(|r| r.scheme_id == "sch_ka_old_age_pension"),
        "Karnataka old-age pension missing"
    );
}

#[test]
fn rule_hashes_are_stable_across_loads() {
    let a = corpus();
    let b = corpus();
    for (x, y) in a.rules.iter().zip(&b.rules) {
        assert_eq!(x.rule_hash, y.rule_hash);
        assert_eq!(x.rule_hash.len(), 64);
    }
}

/// Every rule version has at least three hand-written citizens (clearly eligible, clearly not,
/// and the boundary the official wording decides), and every case holds (docs/corpus.md).
#[test]
fn every_rule_version_passes_its_hand_written_cases() {
    let catalogue = Catalogue::bundled();
    let rules = corpus();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus_cases");
    let files = engine::cases::load_dir(&dir).unwrap_or_else(|e| panic!("case files: {e}"));
    let mut failures = Vec::new();
    let mut cases_per_rule: BTreeMap<String, usize> = BTreeMap::new();
    for (name, file) in &files {
        for result in file.run(&catalogue, &rules) {
            if let Some(rule_id) = &result.rule_id {
                *cases_per_rule.entry(rule_id.clone()).or_default() += 1;
            }
            if let Some(failure) = result.failure {
                failures.push(format!("{name}: {:?}: {failure}", result.name));
            }
        }
    }
    for rule in &rules.rules {
        let count = cases_per_rule.get(&rule.rule_id).copied().unwrap_or(0);
        if count < 3 {
            failures.push(format!(
                "{} ({}): {count} case(s) in effect; at least 3 wanted",
                rule.rule_id, rule.source
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every rule says where each condition comes from: at least one reference with a title and an
/// address, and notes on what the catalogue cannot express.
#[test]
fn every_rule_cites_its_references_and_states_its_simplifications() {
    let mut missing = Vec::new();
    for rule in &corpus().rules {
        let source = &rule.document["source"];
        let references = source["references"].as_array().map_or(0, |r| {
            r.iter()
                .filter(|r| r["title"].is_string() && r["url"].is_string())
                .count()
        });
        if references == 0 {
            missing.push(format!("{}: no source.references", rule.rule_id));
        }
        if source["notes"].as_str().is_none_or(|n| n.trim().is_empty()) {
            missing.push(format!("{}: no source.notes", rule.rule_id));
        }
        // Every bundled benefit says what its amount is (docs/rule-format.md, "Benefit kinds").
        let benefit = &rule.document["benefit"];
        if !benefit.is_null() && !benefit["kind"].is_string() {
            missing.push(format!("{}: no benefit.kind", rule.rule_id));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The conflict detector finds nothing in the corpus: no unsatisfiable rule, dead branch,
/// overlapping versions, duplicate or shadowed scheme.
#[test]
fn the_corpus_has_no_conflicts() {
    let report = engine::conflicts::detect(&Catalogue::bundled(), &corpus());
    let found: Vec<String> = report
        .conflicts
        .iter()
        .map(|c| {
            format!(
                "{:?} [{}]: {}",
                c.conflict_type,
                c.rule_ids.join(", "),
                c.description
            )
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// No gap of the corpus reads like a template left unfinished: each bundled rule is evaluated
/// for an empty profile (every field missing) and for profiles that fail its conditions, and
/// no gap description says "it is yes", "it is no" or "must be including".
#[test]
fn no_gap_text_of_the_corpus_reads_like_a_template_leftover() {
    let catalogue = Catalogue::bundled();
    let rules = corpus();
    let leftovers = ["it is yes", "it is no", "must be including"];
    let profiles = [
        serde_json::json!({}),
        serde_json::json!({"identity": {"age": 30, "gender": "male", "verified_documents": ["pan"]},
                           "economic": {"bpl_status": false, "annual_income": 5000000.0}}),
    ];
    let mut found = Vec::new();
    for json in &profiles {
        let profile = engine::Profile::from_json(&catalogue, json, "lint").unwrap();
        for rule in &rules.rules {
            let day = engine::Date::parse("2026-01-10").unwrap();
            let as_of = if engine::temporal::applicability(rule, day).is_applicable() {
                day
            } else {
                rule.effective_from
            };
            let Ok(evaluation) = engine::evaluate(&catalogue, rule, &profile, as_of) else {
                continue;
            };
            for gap in &evaluation.gaps {
                let text = gap.gap_description.to_string();
                // A phrase counts as a whole: "it is no" is not "it is none of".
                let has = |phrase: &str| {
                    text.match_indices(phrase).any(|(at, _)| {
                        !text[at + phrase.len()..].starts_with(|c: char| c.is_alphanumeric())
                    })
                };
                if leftovers.iter().any(|l| has(l)) {
                    found.push(format!("{}: {text}", rule.rule_id));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Today, for the check-age rule (the engine has no clock; its tests may).
fn today() -> engine::Date {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_secs();
    engine::Date::from_day_number(i64::try_from(secs / 86_400).expect("a day number"))
        .expect("today is a date")
}

/// The corpus checks itself (docs/corpus.md, "The corpus checks itself"): no `rule_id` whose
/// number is not its version (bar the six published so), no reference without a date or the
/// day it was read, no scheme last checked more than twice the configured age ago
/// (`ELIGIBILITY_CORPUS_MAX_CHECK_AGE_DAYS`, 365 by default); schemes past the age itself are
/// listed as warnings.
#[test]
fn the_corpus_keeps_its_books() {
    let max_age = std::env::var("ELIGIBILITY_CORPUS_MAX_CHECK_AGE_DAYS")
        .ok()
        .map(|v| {
            v.parse()
                .expect("ELIGIBILITY_CORPUS_MAX_CHECK_AGE_DAYS is a number of days")
        })
        .unwrap_or(engine::corpus::DEFAULT_MAX_CHECK_AGE_DAYS);
    let findings = engine::corpus::audit(&corpus(), today(), max_age);
    let (errors, warnings): (Vec<_>, Vec<_>) = findings
        .iter()
        .partition(|f| f.severity == engine::corpus::Severity::Error);
    for warning in &warnings {
        eprintln!(
            "warning: {} ({}): {}",
            warning.source, warning.rule_id, warning.problem
        );
    }
    let report: Vec<String> = errors
        .iter()
        .map(|f| format!("{} ({}): {}", f.source, f.rule_id, f.problem))
        .collect();
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The audit finds each kind of problem it names, in a rule that otherwise loads.
#[test]
fn the_audit_names_each_problem() {
    let catalogue = Catalogue::bundled();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemes");
    let text = std::fs::read_to_string(dir.join("bihar/vridhjan_pension.yaml")).unwrap();
    let load = |text: &str| {
        let rule = engine::load::parse_rule_yaml(&catalogue, text, "test.yaml")
            .unwrap_or_else(|problems| panic!("{problems:?}"));
        RuleSet::from_rules(vec![rule])
    };
    let on = engine::Date::parse("2026-11-26").unwrap();
    let problems = |text: &str, today| -> Vec<(engine::corpus::Severity, String)> {
        engine::corpus::audit(&load(text), today, 365)
            .into_iter()
            .map(|f| (f.severity, f.problem))
            .collect()
    };
    assert_eq!(problems(&text, on), vec![], "the file as it is");

    let renumbered = text.replace("rule_br_mvpy_003", "rule_br_mvpy_002");
    let found = problems(&renumbered, on);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].1.contains("ends in _002 but version is 3"),
        "{found:?}"
    );

    let undated = text.replacen("date: \"2019-06-15\"", "date: null", 1);
    let found = problems(&undated, on);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.starts_with("source.references[0]"), "{found:?}");
    let read = undated.replacen(
        "date: null",
        "date: null\n      accessed: \"2026-11-22\"",
        1,
    );
    assert_eq!(problems(&read, on), vec![]);

    use engine::corpus::Severity::{Error, Warning};
    let later = |days| on.plus_days(days).unwrap();
    // Checked 2026-11-22, 4 days before `on`: 365 days old is within the age, 366 a warning,
    // 730 still a warning, 731 an error.
    assert_eq!(problems(&text, later(361)), vec![]);
    assert_eq!(problems(&text, later(362))[0].0, Warning);
    assert_eq!(problems(&text, later(726))[0].0, Warning);
    assert_eq!(problems(&text, later(727))[0].0, Error);
}

/// A version without `effective_from` does not load, and the problem names the field.
#[test]
fn a_version_without_effective_from_is_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemes");
    let text = std::fs::read_to_string(dir.join("bihar/vridhjan_pension.yaml")).unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("effective_from:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let problems = engine::load::parse_rule_yaml(&Catalogue::bundled(), &without, "x.yaml")
        .expect_err("a rule without effective_from must not load");
    let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(
        said.iter().any(|p| p.contains("effective_from")),
        "{said:?}"
    );
}

/// The coverage report counts what the corpus holds: every distinct scheme once, under its
/// state; every state and union territory of the catalogue has a row.
#[test]
fn coverage_counts_every_scheme_once_under_its_state() {
    let catalogue = Catalogue::bundled();
    let rules = corpus();
    let rows = engine::corpus::coverage(&catalogue, &rules);
    assert_eq!(
        rows.len(),
        37,
        "central and 36 states and union territories"
    );
    assert_eq!(rows[0].state, "central");
    let schemes: BTreeSet<&str> = rules.rules.iter().map(|r| r.scheme_id.as_str()).collect();
    assert_eq!(rows.iter().map(|r| r.schemes).sum::<usize>(), schemes.len());
    assert_eq!(
        rows.iter().map(|r| r.versions).sum::<usize>(),
        rules.rules.len()
    );
    let bihar = rows.iter().find(|r| r.state == "bihar").unwrap();
    assert!(bihar.categories.contains("older people"), "{bihar:?}");
    assert!(bihar.kinds.contains("pension"), "{bihar:?}");
    let central = &rows[0];
    for kind in ["insurance_cover", "loan_up_to", "scholarship", "pension"] {
        assert!(central.kinds.contains(kind), "{central:?}");
    }
}
