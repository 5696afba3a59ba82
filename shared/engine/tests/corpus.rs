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
    assert!(rules.rules.len() >= 40, "{} rules", rules.rules.len());
    let states: BTreeSet<&str> = rules
        .rules
        .iter()
        .filter(|r| !r.is_central())
        .map(|r| r.state.as_str())
        .collect();
    assert!(states.len() >= 6, "states: {states:?}");
    let central = rules.rules.iter().filter(|r| r.is_central()).count();
    assert!(central >= 15, "{central} central schemes");
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
