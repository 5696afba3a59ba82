//! Planted conflicts of every kind (docs/semantics.md, "Conflicts") are found, with the rules and the reason; the real
//! corpus's findings are reported, not hidden.

use engine::conflicts::{ConflictType, detect};
use engine::{Catalogue, RuleSet};

fn rule(id: &str, scheme: &str, extra: &str, eligibility: &str) -> (String, String) {
    let text = format!(
        "schema_version: \"1.0\"\nrule_id: {id}\nscheme_id: {scheme}\nscheme_name: {scheme}\nstate: central\n\
         effective_from: \"2024-01-01\"\nversion: 1\n{extra}\neligibility:\n{eligibility}\n"
    );
    (format!("{id}.yaml"), text)
}

fn findings(
    docs: &[(String, String)],
) -> Vec<(ConflictType, Vec<String>, String, Option<serde_json::Value>)> {
    let catalogue = Catalogue::bundled();
    let rules = RuleSet::from_documents(&catalogue, docs).unwrap_or_else(|e| panic!("{e}"));
    let report = detect(&catalogue, &rules);
    assert!(report.not_analysed.is_empty(), "{:?}", report.not_analysed);
    report
        .conflicts
        .into_iter()
        .map(|c| (c.conflict_type, c.rule_ids, c.description, c.witness))
        .collect()
}

const AGE_65_PLUS: &str =
    "  operator: AND\n  conditions:\n    - {field: identity.age, operator: gte, value: 65}\n";

#[test]
fn unsatisfiable_bounds_on_one_field() {
    let docs = [
        rule(
            "rule_age_clash",
            "sch_age_clash",
            "",
            "  operator: AND\n  conditions:\n    - {field: identity.age, operator: gte, value: 65}\n    - {field: identity.age, operator: lte, value: 60}\n",
        ),
        rule(
            "rule_eq_clash",
            "sch_eq_clash",
            "",
            "  operator: AND\n  conditions:\n    - {field: identity.social_category, operator: eq, value: sc}\n    - {field: identity.social_category, operator: eq, value: st}\n",
        ),
        rule(
            "rule_strict",
            "sch_strict",
            "",
            "  operator: AND\n  conditions:\n    - {field: economic.annual_income, operator: gt, value: 5}\n    - {field: economic.annual_income, operator: lt, value: 3}\n",
        ),
    ];
    let found = findings(&docs);
    for id in ["rule_age_clash", "rule_eq_clash", "rule_strict"] {
        let hit = found
            .iter()
            .find(|f| f.0 == ConflictType::Unsatisfiable && f.1 == [id]);
        assert!(hit.is_some(), "{id} not reported: {found:?}");
    }
    let age = found.iter().find(|f| f.1 == ["rule_age_clash"]).unwrap();
    assert!(
        age.2.contains("identity.age: gte 65 and lte 60"),
        "{}",
        age.2
    );
}

#[test]
fn exclusion_that_contradicts_the_tree_makes_the_rule_unsatisfiable() {
    let docs = [rule(
        "rule_barred",
        "sch_barred",
        "exclusions:\n  - {field: identity.age, operator: lt, value: 60}\n",
        AGE_65_PLUS,
    )];
    let found = findings(&docs);
    assert!(
        found.iter().any(|f| f.0 == ConflictType::Unsatisfiable),
        "{found:?}"
    );
}

#[test]
fn dead_and_redundant_branches() {
    let docs = [rule(
        "rule_dead",
        "sch_dead",
        "",
        "  operator: AND\n  conditions:\n    - {field: identity.age, operator: gte, value: 65}\n    - {field: identity.age, operator: gte, value: 60}\n    - operator: OR\n      conditions:\n        - {field: identity.age, operator: lt, value: 18}\n        - {field: economic.bpl_status, operator: eq, value: true}\n",
    )];
    let found = findings(&docs);
    let dead: Vec<_> = found
        .iter()
        .filter(|f| f.0 == ConflictType::DeadBranch)
        .map(|f| f.2.as_str())
        .collect();
    // `age < 18` can never pass next to `age >= 65`; `age >= 60` is implied by `age >= 65`.
    assert!(
        dead.iter()
            .any(|d| d.contains("/eligibility/conditions/2/conditions/0")
                && d.contains("never pass")),
        "{dead:?}"
    );
    assert!(
        dead.iter()
            .any(|d| d.contains("/eligibility/conditions/1") && d.contains("imply")),
        "{dead:?}"
    );
    assert!(!found.iter().any(|f| f.0 == ConflictType::Unsatisfiable));
}

#[test]
fn overlapping_versions_of_one_scheme() {
    let v1 = rule(
        "rule_ver_1",
        "sch_versions",
        "effective_until: \"2025-06-30\"",
        AGE_65_PLUS,
    );
    let mut v2 = rule("rule_ver_2", "sch_versions", "", AGE_65_PLUS);
    v2.1 =
        v2.1.replace("version: 1", "version: 2")
            .replace("2024-01-01", "2025-04-01");
    let found = findings(&[v1.clone(), v2]);
    let hit = found
        .iter()
        .find(|f| f.0 == ConflictType::OverlappingVersions)
        .expect("overlap reported");
    assert_eq!(hit.1, ["rule_ver_1", "rule_ver_2"]);
    assert!(hit.2.contains("2025-04-01 to 2025-06-30"), "{}", hit.2);
    // Back-to-back versions do not overlap.
    let mut v3 = rule("rule_ver_3", "sch_versions", "", AGE_65_PLUS);
    v3.1 =
        v3.1.replace("version: 1", "version: 3")
            .replace("2024-01-01", "2025-07-01");
    assert!(
        !findings(&[v1, v3])
            .iter()
            .any(|f| f.0 == ConflictType::OverlappingVersions)
    );
}

#[test]
fn schemes_meant_to_combine_that_no_one_can_hold_together() {
    let top_up = rule(
        "rule_topup",
        "sch_topup",
        "relations:\n  combinable_with: [sch_base]",
        "  operator: AND\n  conditions:\n    - {field: identity.age, operator: lt, value: 60}\n",
    );
    let base = rule("rule_base", "sch_base", "", AGE_65_PLUS);
    let found = findings(&[top_up, base]);
    let hit = found
        .iter()
        .find(|f| f.0 == ConflictType::MutuallyExclusive)
        .expect("reported");
    assert_eq!(hit.1, ["rule_topup", "rule_base"]);
    assert!(hit.2.contains("identity.age"), "{}", hit.2);
}

#[test]
fn exclusion_cycles() {
    let a = rule(
        "rule_cycle_a",
        "sch_cycle_a",
        "exclusions:\n  - {field: eligibility.active_schemes, operator: not_contains, value: sch_cycle_b}",
        AGE_65_PLUS,
    );
    let b = rule(
        "rule_cycle_b",
        "sch_cycle_b",
        "",
        "  operator: AND\n  conditions:\n    - {field: eligibility.active_schemes, operator: contains, value: sch_cycle_a}\n",
    );
    let found = findings(&[a, b]);
    assert!(
        found
            .iter()
            .any(|f| f.0 == ConflictType::MutuallyExclusive && f.2.contains("exclusion cycle")),
        "{found:?}"
    );
}

#[test]
fn duplicates_and_shadowed_schemes_with_witnesses() {
    let a = rule(
        "rule_dup_a",
        "sch_dup_a",
        "",
        "  operator: AND\n  conditions:\n    - {field: identity.age, operator: gte, value: 60}\n    - {field: economic.bpl_status, operator: eq, value: true}\n",
    );
    let b = rule(
        "rule_dup_b",
        "sch_dup_b",
        "",
        "  operator: AND\n  conditions:\n    - {field: economic.bpl_status, operator: neq, value: false}\n    - {field: identity.age, operator: gt, value: 59}\n",
    );
    let found = findings(&[a, b]);
    let dup = found
        .iter()
        .find(|f| f.0 == ConflictType::Duplicate)
        .expect("duplicate reported");
    let witness = dup.3.as_ref().expect("witness");
    assert_eq!(witness["economic"]["bpl_status"], true);
    assert!(witness["identity"]["age"].as_i64().unwrap() >= 60);

    let wide = rule(
        "rule_wide",
        "sch_wide",
        "relations:\n  must_differ_from: [sch_narrow]",
        "  operator: AND\n  conditions:\n    - {field: identity.age, operator: gte, value: 60}\n",
    );
    let narrow = rule(
        "rule_narrow",
        "sch_narrow",
        "",
        "  operator: AND\n  conditions:\n    - {field: identity.age, operator: gte, value: 70}\n    - {field: economic.bpl_status, operator: eq, value: true}\n",
    );
    let found = findings(&[wide.clone(), narrow.clone()]);
    let shadow = found
        .iter()
        .find(|f| f.0 == ConflictType::Shadowed)
        .expect("shadowed reported");
    assert!(
        shadow
            .2
            .contains("everyone eligible for sch_narrow is also eligible for sch_wide"),
        "{}",
        shadow.2
    );
    // Without the must-differ marker, containment alone is not a conflict.
    let plain = rule(
        "rule_wide",
        "sch_wide",
        "",
        "  operator: AND\n  conditions:\n    - {field: identity.age, operator: gte, value: 60}\n",
    );
    assert!(findings(&[plain, narrow]).is_empty());
}

#[test]
fn clean_rules_have_no_findings() {
    let docs = [
        rule("rule_clean_a", "sch_clean_a", "", AGE_65_PLUS),
        rule(
            "rule_clean_b",
            "sch_clean_b",
            "",
            "  operator: OR\n  conditions:\n    - {field: identity.age, operator: lt, value: 18}\n    - {field: identity.disability_percentage, operator: gte, value: 40}\n",
        ),
    ];
    assert!(findings(&docs).is_empty());
}
