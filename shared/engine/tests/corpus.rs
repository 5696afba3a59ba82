//! The bundled corpus loads cleanly and has the breadth the project promises.

use engine::{Catalogue, RuleSet};
use std::collections::BTreeSet;
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
