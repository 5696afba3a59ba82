//! Spec-driven tests: one test per statement of docs/semantics.md (Profiles, Rules, Evaluation), each on small
//! rules written as YAML and profiles written as JSON, with expected values computed by hand from
//! the spec (not by running the engine).

use engine::load::parse_rule_yaml;
use engine::temporal::Applicability;
use engine::{Catalogue, Date, Outcome, Problem, Profile, Rule, Verdict, evaluate, outcome};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const AS_OF: &str = "2025-01-15";

const HEADER: &str = r#"schema_version: "1.0"
rule_id: "rule_spec_test"
scheme_id: "sch_spec_test"
scheme_name: "Spec test scheme"
state: "central"
effective_from: "2024-01-01"
version: 1
"#;

fn doc(eligibility: &str, extra: &str) -> String {
    format!("{HEADER}eligibility: {eligibility}\n{extra}")
}

fn rule_from(text: &str) -> Rule {
    parse_rule_yaml(&Catalogue::bundled(), text, "spec.yaml")
        .unwrap_or_else(|p| panic!("rule refused: {p:#?}\n{text}"))
}

fn rule(eligibility: &str) -> Rule {
    rule_from(&doc(eligibility, ""))
}

fn rule_x(eligibility: &str, extra: &str) -> Rule {
    rule_from(&doc(eligibility, extra))
}

/// The problems of a rule that must be refused.
fn refused(text: &str) -> Vec<Problem> {
    match parse_rule_yaml(&Catalogue::bundled(), text, "spec.yaml") {
        Ok(_) => panic!("rule should be refused:\n{text}"),
        Err(problems) => problems,
    }
}

fn profile(v: Value) -> Profile {
    Profile::from_json(&Catalogue::bundled(), &v, "profile.json")
        .unwrap_or_else(|r| panic!("profile refused: {r}"))
}

fn date(s: &str) -> Date {
    Date::parse(s).expect("a test date")
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The full evaluation as JSON; also checks that the verdict-only path agrees.
fn eval_json(rule: &Rule, profile: &Profile, as_of: &str) -> Value {
    let catalogue = Catalogue::bundled();
    let evaluation = evaluate(&catalogue, rule, profile, date(as_of))
        .unwrap_or_else(|a| panic!("rule should apply on {as_of}: {a:?}"));
    assert_eq!(outcome(rule, profile, date(as_of)), evaluation.outcome());
    serde_json::to_value(&evaluation).expect("an evaluation serialises")
}

fn out(rule: &Rule, profile: &Profile) -> Outcome {
    outcome(rule, profile, date(AS_OF))
}

/// One leaf as the only child of an AND root: `true` iff ELIGIBLE with 100, `false` iff
/// NOT_ELIGIBLE with 0 (anything else is a failure).
fn leaf_passes(leaf: &str, profile_json: Value) -> bool {
    let r = rule(&format!("{{operator: AND, conditions: [{leaf}]}}"));
    let p = profile(profile_json);
    match out(&r, &p) {
        Outcome {
            verdict: Verdict::Eligible,
            score: 100,
        } => true,
        Outcome {
            verdict: Verdict::NotEligible,
            score: 0,
        } => false,
        other => panic!(
            "{leaf} on {:?}: unexpected {other:?}",
            p.to_json(&Catalogue::bundled())
        ),
    }
}

fn paths(problems: &[Problem]) -> Vec<&str> {
    let mut p: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    p.sort_unstable();
    p
}

// ---------------------------------------------------------------------------------------------
// Rules: operators on leaves
// ---------------------------------------------------------------------------------------------

#[test]
fn op_eq_and_neq() {
    let eq = "{field: identity.gender, operator: eq, value: female}";
    assert!(leaf_passes(eq, json!({"identity": {"gender": "female"}})));
    assert!(!leaf_passes(eq, json!({"identity": {"gender": "male"}})));
    let neq = "{field: identity.gender, operator: neq, value: male}";
    assert!(leaf_passes(neq, json!({"identity": {"gender": "female"}})));
    assert!(!leaf_passes(neq, json!({"identity": {"gender": "male"}})));
    let b = "{field: economic.bpl_status, operator: eq, value: true}";
    assert!(leaf_passes(b, json!({"economic": {"bpl_status": true}})));
    assert!(!leaf_passes(b, json!({"economic": {"bpl_status": false}})));
    let n = "{field: identity.age, operator: eq, value: 60}";
    assert!(leaf_passes(n, json!({"identity": {"age": 60}})));
    assert!(!leaf_passes(n, json!({"identity": {"age": 61}})));
}

#[test]
fn op_comparisons_are_exact_with_no_case_folding() {
    let eq = "{field: demographics.district, operator: eq, value: Mysuru}";
    assert!(leaf_passes(
        eq,
        json!({"demographics": {"district": "Mysuru"}})
    ));
    assert!(!leaf_passes(
        eq,
        json!({"demographics": {"district": "mysuru"}})
    ));
    assert!(!leaf_passes(
        eq,
        json!({"demographics": {"district": "MYSURU"}})
    ));
    assert!(!leaf_passes(
        eq,
        json!({"demographics": {"district": "Mysuru "}})
    ));
    let neq = "{field: demographics.district, operator: neq, value: Mysuru}";
    assert!(leaf_passes(
        neq,
        json!({"demographics": {"district": "mysuru"}})
    ));
    let inn = "{field: demographics.district, operator: in, value: [Mysuru, Mandya]}";
    assert!(!leaf_passes(
        inn,
        json!({"demographics": {"district": "mandya"}})
    ));
    assert!(leaf_passes(
        inn,
        json!({"demographics": {"district": "Mandya"}})
    ));
}

#[test]
fn op_gt_gte_lt_lte_boundaries() {
    let gt = "{field: identity.age, operator: gt, value: 65}";
    assert!(!leaf_passes(gt, json!({"identity": {"age": 65}})));
    assert!(leaf_passes(gt, json!({"identity": {"age": 66}})));
    let gte = "{field: identity.age, operator: gte, value: 65}";
    assert!(leaf_passes(gte, json!({"identity": {"age": 65}})));
    assert!(!leaf_passes(gte, json!({"identity": {"age": 64}})));
    let lt = "{field: identity.age, operator: lt, value: 18}";
    assert!(!leaf_passes(lt, json!({"identity": {"age": 18}})));
    assert!(leaf_passes(lt, json!({"identity": {"age": 17}})));
    let lte = "{field: economic.annual_income, operator: lte, value: 200000}";
    assert!(leaf_passes(
        lte,
        json!({"economic": {"annual_income": 200000}})
    ));
    assert!(!leaf_passes(
        lte,
        json!({"economic": {"annual_income": 200000.5}})
    ));
    assert!(leaf_passes(lte, json!({"economic": {"annual_income": 0}})));
    let frac = "{field: economic.land_holding, operator: lt, value: 2.5}";
    assert!(leaf_passes(
        frac,
        json!({"economic": {"land_holding": 2.49}})
    ));
    assert!(!leaf_passes(
        frac,
        json!({"economic": {"land_holding": 2.5}})
    ));
}

#[test]
fn op_in_and_not_in() {
    let inn = "{field: identity.social_category, operator: in, value: [sc, st]}";
    assert!(leaf_passes(
        inn,
        json!({"identity": {"social_category": "st"}})
    ));
    assert!(leaf_passes(
        inn,
        json!({"identity": {"social_category": "sc"}})
    ));
    assert!(!leaf_passes(
        inn,
        json!({"identity": {"social_category": "obc"}})
    ));
    let not_in = "{field: identity.social_category, operator: not_in, value: [sc, st]}";
    assert!(leaf_passes(
        not_in,
        json!({"identity": {"social_category": "obc"}})
    ));
    assert!(!leaf_passes(
        not_in,
        json!({"identity": {"social_category": "sc"}})
    ));
    let ages = "{field: identity.age, operator: in, value: [18, 21]}";
    assert!(leaf_passes(ages, json!({"identity": {"age": 21}})));
    assert!(!leaf_passes(ages, json!({"identity": {"age": 20}})));
}

#[test]
fn op_contains_and_not_contains_test_list_membership() {
    let c = "{field: identity.verified_documents, operator: contains, value: aadhaar}";
    assert!(leaf_passes(
        c,
        json!({"identity": {"verified_documents": ["pan", "aadhaar"]}})
    ));
    assert!(!leaf_passes(
        c,
        json!({"identity": {"verified_documents": ["pan"]}})
    ));
    assert!(!leaf_passes(
        c,
        json!({"identity": {"verified_documents": []}})
    ));
    let nc = "{field: eligibility.active_schemes, operator: not_contains, value: sch_ignoaps}";
    assert!(leaf_passes(
        nc,
        json!({"eligibility": {"active_schemes": []}})
    ));
    assert!(leaf_passes(
        nc,
        json!({"eligibility": {"active_schemes": ["sch_pm_kisan"]}})
    ));
    assert!(!leaf_passes(
        nc,
        json!({"eligibility": {"active_schemes": ["sch_pm_kisan", "sch_ignoaps"]}})
    ));
    // Exact membership: a differently-cased item is not the item.
    assert!(!leaf_passes(
        "{field: eligibility.active_schemes, operator: contains, value: sch_ignoaps}",
        json!({"eligibility": {"active_schemes": ["SCH_IGNOAPS"]}})
    ));
}

#[test]
fn op_between_is_inclusive_at_both_ends() {
    let b = "{field: identity.age, operator: between, value: [18, 40]}";
    assert!(!leaf_passes(b, json!({"identity": {"age": 17}})));
    assert!(leaf_passes(b, json!({"identity": {"age": 18}})));
    assert!(leaf_passes(b, json!({"identity": {"age": 30}})));
    assert!(leaf_passes(b, json!({"identity": {"age": 40}})));
    assert!(!leaf_passes(b, json!({"identity": {"age": 41}})));
    let n = "{field: economic.annual_income, operator: between, value: [1000.5, 2000.25]}";
    assert!(leaf_passes(
        n,
        json!({"economic": {"annual_income": 1000.5}})
    ));
    assert!(leaf_passes(
        n,
        json!({"economic": {"annual_income": 2000.25}})
    ));
    assert!(!leaf_passes(
        n,
        json!({"economic": {"annual_income": 1000.4}})
    ));
    assert!(!leaf_passes(
        n,
        json!({"economic": {"annual_income": 2000.26}})
    ));
}

#[test]
fn op_dates_compare_as_dates() {
    let lt = r#"{field: identity.date_of_birth, operator: lt, value: "1960-01-01"}"#;
    assert!(leaf_passes(
        lt,
        json!({"identity": {"date_of_birth": "1959-12-31"}})
    ));
    assert!(!leaf_passes(
        lt,
        json!({"identity": {"date_of_birth": "1960-01-01"}})
    ));
    let gt = r#"{field: identity.date_of_birth, operator: gt, value: "1960-01-31"}"#;
    assert!(leaf_passes(
        gt,
        json!({"identity": {"date_of_birth": "1960-02-01"}})
    ));
    assert!(!leaf_passes(
        gt,
        json!({"identity": {"date_of_birth": "1960-01-30"}})
    ));
    let b = r#"{field: identity.date_of_birth, operator: between, value: ["1950-03-01", "1960-02-29"]}"#;
    assert!(leaf_passes(
        b,
        json!({"identity": {"date_of_birth": "1950-03-01"}})
    ));
    assert!(leaf_passes(
        b,
        json!({"identity": {"date_of_birth": "1960-02-29"}})
    ));
    assert!(!leaf_passes(
        b,
        json!({"identity": {"date_of_birth": "1960-03-01"}})
    ));
    assert!(!leaf_passes(
        b,
        json!({"identity": {"date_of_birth": "1950-02-28"}})
    ));
    let eq = r#"{field: identity.date_of_birth, operator: eq, value: "1957-03-02"}"#;
    assert!(leaf_passes(
        eq,
        json!({"identity": {"date_of_birth": "1957-03-02"}})
    ));
    assert!(!leaf_passes(
        eq,
        json!({"identity": {"date_of_birth": "1957-03-03"}})
    ));
}

// ---------------------------------------------------------------------------------------------
// Evaluation: truth of groups, scores, matched/total, verdicts
// ---------------------------------------------------------------------------------------------

#[test]
fn groups_and_or_not_truth() {
    let p_f = json!({"identity": {"gender": "female", "age": 70}});
    // AND passes iff all pass.
    assert!(leaf_passes(
        "{operator: AND, conditions: [{field: identity.gender, operator: eq, value: female}, {field: identity.age, operator: gte, value: 60}]}",
        p_f.clone()
    ));
    // OR passes iff any passes.
    assert!(leaf_passes(
        "{operator: OR, conditions: [{field: identity.gender, operator: eq, value: male}, {field: identity.age, operator: gte, value: 60}]}",
        p_f.clone()
    ));
    assert!(!leaf_passes(
        "{operator: OR, conditions: [{field: identity.gender, operator: eq, value: male}, {field: identity.age, operator: gte, value: 80}]}",
        p_f.clone()
    ));
    // NOT passes iff its child fails.
    assert!(leaf_passes(
        "{operator: NOT, conditions: [{field: identity.gender, operator: eq, value: male}]}",
        p_f.clone()
    ));
    assert!(!leaf_passes(
        "{operator: NOT, conditions: [{field: identity.gender, operator: eq, value: female}]}",
        p_f.clone()
    ));
    // NOT of a nested group: NOT(AND(pass, OR(fail, fail))) passes.
    assert!(leaf_passes(
        "{operator: NOT, conditions: [{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}, {operator: OR, conditions: [{field: identity.age, operator: gt, value: 90}, {field: identity.gender, operator: eq, value: male}]}]}]}",
        p_f
    ));
}

/// The spec's example: AND of [pass, OR(fail, AND(pass, fail))] = (1 + 0.5) / 2 → 75, and the
/// nested OR counts as ONE root child (the seed's flattening would give 2/4 = 50).
#[test]
fn nested_groups_are_not_flattened_and_score_mean_max() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {operator: OR, conditions: [
                {field: identity.gender, operator: eq, value: male},
                {operator: AND, conditions: [
                    {field: economic.bpl_status, operator: eq, value: true},
                    {field: economic.annual_income, operator: lte, value: 100000}]}]}]}",
    );
    let p = profile(json!({
        "identity": {"age": 70, "gender": "female"},
        "economic": {"bpl_status": true, "annual_income": 150000}
    }));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "PARTIAL_MATCH");
    assert_eq!(e["match_score"], 75);
    assert_eq!(e["matched_conditions"], 1);
    assert_eq!(e["total_conditions"], 2);
    assert_eq!(
        e["conditions_evaluated"],
        json!([
            {"path": "/eligibility/conditions/0", "field": "identity.age", "operator": "gte",
             "expected": 60, "actual": 70, "result": true, "headroom": 10},
            {"path": "/eligibility/conditions/1/conditions/0", "field": "identity.gender",
             "operator": "eq", "expected": "male", "actual": "female", "result": false},
            {"path": "/eligibility/conditions/1/conditions/1/conditions/0",
             "field": "economic.bpl_status", "operator": "eq", "expected": true, "actual": true,
             "result": true},
            {"path": "/eligibility/conditions/1/conditions/1/conditions/1",
             "field": "economic.annual_income", "operator": "lte", "expected": 100000,
             "actual": 150000, "result": false, "headroom": -50000}
        ])
    );
    // Gaps: both failing leaves lie on failing paths (the OR failed).
    let gaps = e["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 2, "{gaps:#?}");
    assert_eq!(gaps[0]["path"], "/eligibility/conditions/1/conditions/0");
    assert_eq!(gaps[0]["field"], "identity.gender");
    assert_eq!(gaps[0]["gap_kind"], "category");
    assert_eq!(gaps[0]["required"], "male");
    assert_eq!(gaps[0]["actual"], "female");
    assert_eq!(gaps[0].get("gap"), None);
    assert_eq!(
        gaps[1]["path"],
        "/eligibility/conditions/1/conditions/1/conditions/1"
    );
    assert_eq!(gaps[1]["field"], "economic.annual_income");
    assert_eq!(gaps[1]["operator"], "lte");
    assert_eq!(gaps[1]["gap_kind"], "threshold");
    assert_eq!(gaps[1]["required"], 100000);
    assert_eq!(gaps[1]["actual"], 150000);
    assert_eq!(gaps[1]["gap"], 50000);
    assert_eq!(e["needed_fields"], json!([]));
    assert_eq!(e["excluded_by"], json!([]));
}

#[test]
fn or_root_scores_the_max_child_and_floors() {
    // OR [fail, AND(pass, pass, fail)] = max(0, 2/3) → floor(66.67) = 66; no root child passes.
    let r = rule(
        "{operator: OR, conditions: [
            {field: identity.age, operator: gte, value: 80},
            {operator: AND, conditions: [
                {field: identity.gender, operator: eq, value: female},
                {field: economic.bpl_status, operator: eq, value: true},
                {field: economic.annual_income, operator: lt, value: 50000}]}]}",
    );
    let p = profile(json!({
        "identity": {"age": 70, "gender": "female"},
        "economic": {"bpl_status": true, "annual_income": 50000}
    }));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "PARTIAL_MATCH");
    assert_eq!(e["match_score"], 66);
    assert_eq!(e["matched_conditions"], 0);
    assert_eq!(e["total_conditions"], 2);
}

#[test]
fn and_of_three_with_two_passing_floors_to_66() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: identity.gender, operator: eq, value: female},
            {field: economic.bpl_status, operator: eq, value: true}]}",
    );
    let p = profile(
        json!({"identity": {"age": 70, "gender": "female"}, "economic": {"bpl_status": false}}),
    );
    assert_eq!(
        out(&r, &p),
        Outcome {
            verdict: Verdict::PartialMatch,
            score: 66
        }
    );
}

#[test]
fn not_scores_one_or_zero_not_one_minus_child() {
    // AND [NOT(AND(pass, fail)), fail]: NOT passes → 1, so (1 + 0) / 2 = 50 (1 − 0.5 would give 25).
    let r = rule(
        "{operator: AND, conditions: [
            {operator: NOT, conditions: [{operator: AND, conditions: [
                {field: identity.age, operator: gte, value: 60},
                {field: identity.gender, operator: eq, value: male}]}]},
            {field: economic.bpl_status, operator: eq, value: true}]}",
    );
    let p = profile(
        json!({"identity": {"age": 70, "gender": "female"}, "economic": {"bpl_status": false}}),
    );
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "PARTIAL_MATCH");
    assert_eq!(e["match_score"], 50);
    assert_eq!(e["matched_conditions"], 1);
    assert_eq!(e["total_conditions"], 2);
    // AND [NOT(AND(pass, pass)), pass]: NOT fails → 0, so (0 + 1) / 2 = 50, not eligible.
    let p = profile(
        json!({"identity": {"age": 70, "gender": "male"}, "economic": {"bpl_status": true}}),
    );
    assert_eq!(
        out(&r, &p),
        Outcome {
            verdict: Verdict::PartialMatch,
            score: 50
        }
    );
}

#[test]
fn verdict_partial_match_at_exactly_50() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: identity.gender, operator: eq, value: male}]}",
    );
    let p = profile(json!({"identity": {"age": 70, "gender": "female"}}));
    assert_eq!(
        out(&r, &p),
        Outcome {
            verdict: Verdict::PartialMatch,
            score: 50
        }
    );
}

#[test]
fn verdict_not_eligible_at_49() {
    // Root AND of 7: 3 pass, 3 fail, and an AND of 9 leaves with 4 passing:
    // (3 + 4/9) / 7 = 31/63 = 0.492… → 49.
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: identity.gender, operator: eq, value: female},
            {field: economic.bpl_status, operator: eq, value: true},
            {field: identity.age, operator: lt, value: 18},
            {field: identity.gender, operator: eq, value: male},
            {field: economic.bpl_status, operator: eq, value: false},
            {operator: AND, conditions: [
                {field: identity.age, operator: gte, value: 1},
                {field: identity.age, operator: gte, value: 2},
                {field: identity.age, operator: gte, value: 3},
                {field: identity.age, operator: gte, value: 4},
                {field: identity.age, operator: gte, value: 100},
                {field: identity.age, operator: gte, value: 101},
                {field: identity.age, operator: gte, value: 102},
                {field: identity.age, operator: gte, value: 103},
                {field: identity.age, operator: gte, value: 104}]}]}",
    );
    let p = profile(
        json!({"identity": {"age": 70, "gender": "female"}, "economic": {"bpl_status": true}}),
    );
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "NOT_ELIGIBLE");
    assert_eq!(e["match_score"], 49);
    assert_eq!(e["matched_conditions"], 3);
    assert_eq!(e["total_conditions"], 7);
}

#[test]
fn verdict_eligible_iff_root_passes_and_no_exclusion_fails() {
    let r = rule_x(
        "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}",
        "exclusions:\n  - {field: economic.is_government_employee, operator: eq, value: false, label: \"Not a government employee\"}\n",
    );
    let p =
        profile(json!({"identity": {"age": 60}, "economic": {"is_government_employee": false}}));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "ELIGIBLE");
    assert_eq!(e["match_score"], 100);
    assert_eq!(e["matched_conditions"], 1);
    assert_eq!(e["total_conditions"], 1);
    assert_eq!(e["gaps"], json!([]));
    assert_eq!(e["excluded_by"], json!([]));
    assert_eq!(e["needed_fields"], json!([]));
    assert_eq!(
        e["exclusions_checked"],
        json!([{"path": "/exclusions/0", "field": "economic.is_government_employee",
                "operator": "eq", "expected": false, "actual": false, "result": true,
                "label": "Not a government employee"}])
    );
}

#[test]
fn exclusion_is_a_hard_bar_even_at_score_100() {
    let r = rule_x(
        "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}",
        "exclusions:\n  - {field: economic.is_government_employee, operator: eq, value: false, label: \"Not a government employee\"}\n",
    );
    let p = profile(json!({"identity": {"age": 70}, "economic": {"is_government_employee": true}}));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "NOT_ELIGIBLE");
    assert_eq!(e["match_score"], 100);
    assert_eq!(
        e["excluded_by"],
        json!([{"path": "/exclusions/0", "field": "economic.is_government_employee",
                "label": "Not a government employee"}])
    );
    assert_eq!(e["exclusions_checked"][0]["result"], false);
    assert_eq!(e["exclusions_checked"][0]["actual"], true);
    let gaps = e["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0]["field"], "economic.is_government_employee");
    assert_eq!(gaps[0]["path"], "/exclusions/0");
    assert_eq!(gaps[0]["gap_kind"], "exclusion");
    assert_eq!(gaps[0]["actual"], true);
    assert_eq!(gaps[0]["required"], false);
    assert_eq!(e["needed_fields"], json!([]));
}

#[test]
fn exclusion_is_never_a_partial_match() {
    // Score 50 would be PARTIAL_MATCH; a failing exclusion makes it NOT_ELIGIBLE.
    let r = rule_x(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: identity.gender, operator: eq, value: male}]}",
        "exclusions:\n  - {field: eligibility.active_schemes, operator: not_contains, value: sch_ignoaps}\n",
    );
    let p = profile(json!({
        "identity": {"age": 70, "gender": "female"},
        "eligibility": {"active_schemes": ["sch_ignoaps"]}
    }));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "NOT_ELIGIBLE");
    assert_eq!(e["match_score"], 50);
    assert_eq!(
        e["excluded_by"],
        json!([{"path": "/exclusions/0", "field": "eligibility.active_schemes"}])
    );
}

// ---------------------------------------------------------------------------------------------
// Profiles: unknown (absent) fields
// ---------------------------------------------------------------------------------------------

#[test]
fn absent_field_is_unknown_missing_data_and_needed() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 65},
            {field: identity.gender, operator: eq, value: female}]}",
    );
    let p = profile(json!({"identity": {"gender": "female"}}));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "PARTIAL_MATCH");
    assert_eq!(e["match_score"], 50);
    assert_eq!(e["matched_conditions"], 1);
    assert_eq!(
        e["conditions_evaluated"][0],
        json!({"path": "/eligibility/conditions/0", "field": "identity.age", "operator": "gte",
               "expected": 65, "actual": null, "result": false})
    );
    let gaps = e["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0]["field"], "identity.age");
    assert_eq!(gaps[0]["gap_kind"], "missing_data");
    assert_eq!(gaps[0]["actual"], Value::Null);
    assert_eq!(gaps[0].get("gap"), None);
    assert_eq!(gaps[0].get("estimated_eligibility_date"), None);
    assert!(!gaps[0]["gap_description"].as_str().unwrap().is_empty());
    assert_eq!(e["needed_fields"], json!(["identity.age"]));
}

#[test]
fn no_verdict_is_eligible_on_missing_data() {
    // Every other condition passes: still not ELIGIBLE while age is unknown.
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 65},
            {field: identity.gender, operator: eq, value: female},
            {field: economic.bpl_status, operator: eq, value: true}]}",
    );
    let p = profile(json!({"identity": {"gender": "female"}, "economic": {"bpl_status": true}}));
    assert_eq!(
        out(&r, &p),
        Outcome {
            verdict: Verdict::PartialMatch,
            score: 66
        }
    );
    // An empty profile: nothing passes.
    let e = eval_json(&r, &profile(json!({})), AS_OF);
    assert_eq!(e["verdict"], "NOT_ELIGIBLE");
    assert_eq!(e["match_score"], 0);
    assert_eq!(
        e["needed_fields"],
        json!(["economic.bpl_status", "identity.age", "identity.gender"])
    );
}

#[test]
fn not_of_unknown_is_unknown_never_eligible() {
    let r = rule(
        "{operator: AND, conditions: [
            {operator: NOT, conditions: [{field: economic.is_income_tax_payer, operator: eq, value: true}]},
            {field: identity.gender, operator: eq, value: female}]}",
    );
    let p = profile(json!({"identity": {"gender": "female"}}));
    let e = eval_json(&r, &p, AS_OF);
    // A two-valued reading would make NOT(unknown) pass and the verdict ELIGIBLE.
    assert_eq!(e["verdict"], "PARTIAL_MATCH");
    assert_eq!(e["match_score"], 50);
    assert_eq!(e["matched_conditions"], 1);
    let gaps = e["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0]["field"], "economic.is_income_tax_payer");
    assert_eq!(gaps[0]["path"], "/eligibility/conditions/0/conditions/0");
    assert_eq!(gaps[0]["gap_kind"], "missing_data");
    assert_eq!(gaps[0]["negated"], true);
    assert_eq!(e["needed_fields"], json!(["economic.is_income_tax_payer"]));
    // Known false: NOT passes and the citizen is eligible.
    let p = profile(
        json!({"identity": {"gender": "female"}, "economic": {"is_income_tax_payer": false}}),
    );
    assert_eq!(
        out(&r, &p),
        Outcome {
            verdict: Verdict::Eligible,
            score: 100
        }
    );
}

#[test]
fn unknown_under_an_or_that_passes_is_not_needed() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {operator: OR, conditions: [
                {field: identity.gender, operator: eq, value: female},
                {field: economic.bpl_status, operator: eq, value: true}]}]}",
    );
    let p = profile(json!({"identity": {"age": 70}, "economic": {"bpl_status": true}}));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "ELIGIBLE");
    assert_eq!(e["match_score"], 100);
    assert_eq!(e["gaps"], json!([]));
    assert_eq!(e["needed_fields"], json!([]));
    assert_eq!(e["conditions_evaluated"][1]["actual"], Value::Null);
    assert_eq!(e["conditions_evaluated"][1]["result"], false);
}

#[test]
fn unknown_exclusion_does_not_bar_but_prevents_eligible() {
    let r = rule_x(
        "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}",
        "exclusions:\n  - {field: economic.is_government_employee, operator: eq, value: false}\n",
    );
    let p = profile(json!({"identity": {"age": 70}}));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "PARTIAL_MATCH");
    assert_eq!(e["match_score"], 100);
    assert_eq!(e["excluded_by"], json!([]));
    assert_eq!(e["exclusions_checked"][0]["actual"], Value::Null);
    assert_eq!(
        e["needed_fields"],
        json!(["economic.is_government_employee"])
    );
    let gaps = e["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0]["gap_kind"], "missing_data");
    assert_eq!(gaps[0]["path"], "/exclusions/0");
}

#[test]
fn a_known_failing_exclusion_bars_even_with_another_unknown() {
    let r = rule_x(
        "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}",
        "exclusions:\n  - {field: economic.is_government_employee, operator: eq, value: false}\n  - {field: eligibility.active_schemes, operator: not_contains, value: sch_ignoaps}\n",
    );
    let p = profile(
        json!({"identity": {"age": 70}, "eligibility": {"active_schemes": ["sch_ignoaps"]}}),
    );
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "NOT_ELIGIBLE");
    assert_eq!(e["match_score"], 100);
    assert_eq!(
        e["excluded_by"],
        json!([{"path": "/exclusions/1", "field": "eligibility.active_schemes"}])
    );
    // A hard bar stands whatever the unknown turns out to be: nothing to ask.
    assert_eq!(e["needed_fields"], json!([]));
}

/// docs/semantics.md, Profiles: `needed_fields` are the unknown fields "whose values could still change the verdict".
/// Here three of four root children are known to fail: whatever the district is, the score is at
/// most 25 and the verdict NOT_ELIGIBLE, so the district cannot change the verdict.
#[test]
fn needed_fields_only_lists_fields_that_could_change_the_verdict() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: identity.gender, operator: eq, value: female},
            {field: economic.bpl_status, operator: eq, value: true},
            {field: demographics.district, operator: eq, value: Mysuru}]}",
    );
    let p = profile(
        json!({"identity": {"age": 30, "gender": "male"}, "economic": {"bpl_status": false}}),
    );
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "NOT_ELIGIBLE");
    assert_eq!(e["match_score"], 0);
    assert_eq!(e["needed_fields"], json!([]));
}

// ---------------------------------------------------------------------------------------------
// Evaluation: headroom, gaps, estimated eligibility date
// ---------------------------------------------------------------------------------------------

#[test]
fn headroom_for_numeric_comparisons() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: identity.age, operator: gt, value: 50},
            {field: economic.annual_income, operator: lte, value: 200000},
            {field: economic.annual_income, operator: lt, value: 160000},
            {field: identity.age, operator: between, value: [18, 80]},
            {field: economic.annual_income, operator: between, value: [100000, 300000]},
            {field: identity.gender, operator: eq, value: female}]}",
    );
    let p = profile(
        json!({"identity": {"age": 68, "gender": "female"}, "economic": {"annual_income": 150000}}),
    );
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["verdict"], "ELIGIBLE");
    let headroom: Vec<Option<&Value>> = e["conditions_evaluated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.get("headroom"))
        .collect();
    assert_eq!(
        headroom,
        vec![
            Some(&json!(8)),     // gte: 68 − 60
            Some(&json!(18)),    // gt: 68 − 50
            Some(&json!(50000)), // lte: 200000 − 150000
            Some(&json!(10000)), // lt: 160000 − 150000
            Some(&json!(12)),    // between: min(68 − 18, 80 − 68)
            Some(&json!(50000)), // between: min(150000 − 100000, 300000 − 150000)
            None,                // eq: not a numeric comparison
        ]
    );
}

#[test]
fn gaps_only_on_failing_paths() {
    // The gender leaf fails but lies under an OR that passed: no gap, and the root passes.
    let passing = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {operator: OR, conditions: [
                {field: identity.gender, operator: eq, value: male},
                {field: economic.bpl_status, operator: eq, value: true}]}]}",
    );
    let p = profile(
        json!({"identity": {"age": 70, "gender": "female"}, "economic": {"bpl_status": true}}),
    );
    let e = eval_json(&passing, &p, AS_OF);
    assert_eq!(e["verdict"], "ELIGIBLE");
    assert_eq!(e["gaps"], json!([]));
    // Same tree with the age failing: only the age is a gap, still not the gender.
    let p = profile(
        json!({"identity": {"age": 50, "gender": "female"}, "economic": {"bpl_status": true}}),
    );
    let e = eval_json(&passing, &p, AS_OF);
    assert_eq!(e["verdict"], "PARTIAL_MATCH");
    assert_eq!(e["match_score"], 50);
    let gaps = e["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1, "{gaps:#?}");
    assert_eq!(gaps[0]["field"], "identity.age");
    assert_eq!(gaps[0]["path"], "/eligibility/conditions/0");
    assert_eq!(gaps[0]["gap"], 10);
}

/// The seed's section 4.3 example: age 62, needs 65, as_of 2025-01-15, no date of birth.
#[test]
fn seed_partial_match_example() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: demographics.state, operator: eq, value: karnataka, label: \"Must be Karnataka resident\"},
            {field: identity.age, operator: gte, value: 65, label: \"Must be 65 years or older\"},
            {field: economic.annual_income, operator: lte, value: 200000},
            {field: economic.bpl_status, operator: eq, value: true}]}",
    );
    let p = profile(json!({
        "user_id": "usr_123",
        "identity": {"age": 62},
        "demographics": {"state": "karnataka"},
        "economic": {"annual_income": 150000, "bpl_status": true}
    }));
    let e = eval_json(&r, &p, "2025-01-15");
    assert_eq!(e["verdict"], "PARTIAL_MATCH");
    assert_eq!(e["match_score"], 75);
    assert_eq!(e["matched_conditions"], 3);
    assert_eq!(e["total_conditions"], 4);
    assert_eq!(e["user_id"], "usr_123");
    assert_eq!(e["as_of"], "2025-01-15");
    assert_eq!(e["conditions_evaluated"][2]["headroom"], 50000);
    let gaps = e["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1, "{gaps:#?}");
    let g = &gaps[0];
    assert_eq!(g["field"], "identity.age");
    assert_eq!(g["operator"], "gte");
    assert_eq!(g["required"], 65);
    assert_eq!(g["actual"], 62);
    assert_eq!(g["gap"], 3);
    assert_eq!(g["gap_kind"], "threshold");
    assert_eq!(g["estimated_eligibility_date"], "2028-01-15");
    assert!(
        g["gap_description"].as_str().unwrap().contains("3 years"),
        "{}",
        g["gap_description"]
    );
}

#[test]
fn estimated_eligibility_date_from_date_of_birth() {
    let r = rule("{operator: AND, conditions: [{field: identity.age, operator: gte, value: 65}]}");
    let p = profile(json!({"identity": {"age": 62, "date_of_birth": "1962-08-20"}}));
    let e = eval_json(&r, &p, "2025-01-15");
    assert_eq!(e["gaps"][0]["gap"], 3);
    assert_eq!(e["gaps"][0]["estimated_eligibility_date"], "2027-08-20");
    // `gt 64` also needs the 65th birthday.
    let r = rule("{operator: AND, conditions: [{field: identity.age, operator: gt, value: 64}]}");
    let e = eval_json(&r, &p, "2025-01-15");
    assert_eq!(e["gaps"][0]["estimated_eligibility_date"], "2027-08-20");
    let no_dob = profile(json!({"identity": {"age": 62}}));
    let e = eval_json(&r, &no_dob, "2025-01-15");
    assert_eq!(e["gaps"][0]["estimated_eligibility_date"], "2028-01-15");
    // A lower bound of `between` is an age threshold too.
    let r = rule(
        "{operator: AND, conditions: [{field: identity.age, operator: between, value: [18, 40]}]}",
    );
    let young = profile(json!({"identity": {"age": 15}}));
    let e = eval_json(&r, &young, "2025-01-15");
    assert_eq!(e["gaps"][0]["gap"], 3);
    assert_eq!(e["gaps"][0]["gap_kind"], "threshold");
    assert_eq!(e["gaps"][0]["estimated_eligibility_date"], "2028-01-15");
    // Too old: a gap, but no day on which the citizen becomes eligible.
    let old = profile(json!({"identity": {"age": 45}}));
    let e = eval_json(&r, &old, "2025-01-15");
    assert_eq!(e["gaps"][0]["gap"], 5);
    assert_eq!(e["gaps"][0].get("estimated_eligibility_date"), None);
    let r = rule("{operator: AND, conditions: [{field: identity.age, operator: lte, value: 60}]}");
    let e = eval_json(&r, &old, "2025-01-15");
    assert_eq!(e["verdict"], "ELIGIBLE");
    let e = eval_json(&r, &profile(json!({"identity": {"age": 70}})), "2025-01-15");
    assert_eq!(e["gaps"][0]["gap"], 10);
    assert_eq!(e["gaps"][0].get("estimated_eligibility_date"), None);
}

#[test]
fn gap_kinds() {
    let r = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 65},
            {field: identity.social_category, operator: in, value: [sc, st]},
            {field: identity.verified_documents, operator: contains, value: bpl_card},
            {field: economic.bpl_status, operator: eq, value: true}]}",
    );
    let r_ex = rule_x(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 65},
            {field: identity.social_category, operator: in, value: [sc, st]},
            {field: identity.verified_documents, operator: contains, value: bpl_card},
            {field: economic.bpl_status, operator: eq, value: true}]}",
        "exclusions:\n  - {field: economic.is_income_tax_payer, operator: eq, value: false}\n",
    );
    let p = profile(json!({
        "identity": {"age": 60, "social_category": "obc", "verified_documents": ["aadhaar"]},
        "economic": {"is_income_tax_payer": true}
    }));
    let kinds = |e: &Value| -> Vec<(String, String)> {
        e["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["field"].as_str().unwrap().to_string(),
                    g["gap_kind"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(
        kinds(&e),
        vec![
            ("identity.age".into(), "threshold".into()),
            ("identity.social_category".into(), "category".into()),
            ("identity.verified_documents".into(), "document".into()),
            ("economic.bpl_status".into(), "missing_data".into()),
        ]
    );
    assert_eq!(e["gaps"][0]["gap"], 5);
    let e = eval_json(&r_ex, &p, AS_OF);
    assert_eq!(e["verdict"], "NOT_ELIGIBLE");
    assert_eq!(
        kinds(&e).last().unwrap(),
        &(
            "economic.is_income_tax_payer".to_string(),
            "exclusion".to_string()
        )
    );
    for g in e["gaps"].as_array().unwrap() {
        assert!(!g["gap_description"].as_str().unwrap().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// Rules and Evaluation: time: effective dates, deadlines, application windows
// ---------------------------------------------------------------------------------------------

const AGE_60: &str =
    "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}";

fn applicability_on(rule: &Rule, on: &str) -> Result<Verdict, Applicability> {
    let catalogue = Catalogue::bundled();
    let p = profile(json!({"identity": {"age": 70}}));
    let result = evaluate(&catalogue, rule, &p, date(on)).map(|e| e.verdict);
    // The verdict-only path agrees: NOT_APPLICABLE exactly when there is no evaluation.
    let o = outcome(rule, &p, date(on));
    match &result {
        Ok(v) => assert_eq!(o.verdict, *v),
        Err(_) => assert_eq!(o, Outcome::NOT_APPLICABLE),
    }
    result
}

#[test]
fn effective_from_is_inclusive() {
    let r = rule(AGE_60); // effective_from 2024-01-01
    assert_eq!(
        applicability_on(&r, "2023-12-31"),
        Err(Applicability::NotYetInEffect {
            effective_from: date("2024-01-01")
        })
    );
    assert_eq!(applicability_on(&r, "2024-01-01"), Ok(Verdict::Eligible));
}

#[test]
fn effective_until_is_inclusive() {
    let r = rule_x(AGE_60, "effective_until: \"2025-03-31\"\n");
    assert_eq!(applicability_on(&r, "2025-03-31"), Ok(Verdict::Eligible));
    assert_eq!(
        applicability_on(&r, "2025-04-01"),
        Err(Applicability::Expired {
            effective_until: date("2025-03-31")
        })
    );
    // null = open-ended.
    let open = rule_x(AGE_60, "effective_until: null\n");
    assert_eq!(applicability_on(&open, "2099-12-31"), Ok(Verdict::Eligible));
}

#[test]
fn application_deadline_is_inclusive() {
    let r = rule_x(AGE_60, "application:\n  deadline: \"2025-06-30\"\n");
    assert_eq!(applicability_on(&r, "2025-06-30"), Ok(Verdict::Eligible));
    assert_eq!(
        applicability_on(&r, "2025-07-01"),
        Err(Applicability::DeadlinePassed {
            deadline: date("2025-06-30")
        })
    );
}

#[test]
fn application_window_is_inclusive() {
    let r = rule_x(
        AGE_60,
        "application_window: {opens: \"06-01\", closes: \"08-31\"}\n",
    );
    assert_eq!(
        applicability_on(&r, "2025-05-31"),
        Err(Applicability::WindowClosed {
            opens: date("2025-06-01")
        })
    );
    assert_eq!(applicability_on(&r, "2025-06-01"), Ok(Verdict::Eligible));
    assert_eq!(applicability_on(&r, "2025-07-15"), Ok(Verdict::Eligible));
    assert_eq!(applicability_on(&r, "2025-08-31"), Ok(Verdict::Eligible));
    assert_eq!(
        applicability_on(&r, "2025-09-01"),
        Err(Applicability::WindowClosed {
            opens: date("2026-06-01")
        })
    );
}

#[test]
fn application_window_may_wrap_the_year_end() {
    let r = rule_x(
        AGE_60,
        "application_window: {opens: \"11-01\", closes: \"02-15\"}\n",
    );
    assert!(applicability_on(&r, "2025-10-31").is_err());
    assert_eq!(applicability_on(&r, "2025-11-01"), Ok(Verdict::Eligible));
    assert_eq!(applicability_on(&r, "2025-12-31"), Ok(Verdict::Eligible));
    assert_eq!(applicability_on(&r, "2026-01-01"), Ok(Verdict::Eligible));
    assert_eq!(applicability_on(&r, "2026-02-15"), Ok(Verdict::Eligible));
    assert_eq!(
        applicability_on(&r, "2026-02-16"),
        Err(Applicability::WindowClosed {
            opens: date("2026-11-01")
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Rules and Evaluation: identity and output: hashes, determinism
// ---------------------------------------------------------------------------------------------

const HASH_RULE: &str = r#"version: 2
scheme_name: "Pension ₹ test"
schema_version: "1.0"
rule_id: "rule_hash_test"
scheme_id: "sch_hash_test"
state: "central"
effective_from: "2024-01-01"
effective_until: null
eligibility:
  operator: "AND"
  conditions:
    - {value: 150000.0, field: "economic.annual_income", operator: "lte", label: "Income ≤ ₹1.5 lakh"}
    - {field: "identity.age", operator: "between", value: [60, 79]}
    - {field: "economic.land_holding", operator: "gte", value: 0.50}
"#;

/// RFC 8785 by hand: keys sorted, no whitespace, ES6 numbers (150000.0 → 150000, 0.50 → 0.5),
/// non-ASCII as raw UTF-8.
const HASH_RULE_JCS: &str = r#"{"effective_from":"2024-01-01","effective_until":null,"eligibility":{"conditions":[{"field":"economic.annual_income","label":"Income ≤ ₹1.5 lakh","operator":"lte","value":150000},{"field":"identity.age","operator":"between","value":[60,79]},{"field":"economic.land_holding","operator":"gte","value":0.5}],"operator":"AND"},"rule_id":"rule_hash_test","schema_version":"1.0","scheme_id":"sch_hash_test","scheme_name":"Pension ₹ test","state":"central","version":2}"#;

#[test]
fn rule_hash_is_sha256_of_jcs() {
    let r = rule_from(HASH_RULE);
    let expected = sha256_hex(HASH_RULE_JCS.as_bytes());
    assert_eq!(r.rule_hash, expected);
    assert_eq!(r.rule_hash.len(), 64);
    // The output carries it too.
    let p = profile(json!({"identity": {"age": 62}}));
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["audit"]["rule_hash"], expected);
    // Key order and layout of the YAML do not change the hash; a changed value does.
    let reordered = r#"eligibility: {conditions: [{label: "Income ≤ ₹1.5 lakh", operator: lte, field: economic.annual_income, value: 150000}, {field: identity.age, operator: between, value: [60, 79]}, {field: economic.land_holding, operator: gte, value: 0.5}], operator: AND}
effective_until: null
effective_from: "2024-01-01"
state: central
scheme_id: sch_hash_test
scheme_name: "Pension ₹ test"
rule_id: rule_hash_test
schema_version: "1.0"
version: 2
"#;
    assert_eq!(rule_from(reordered).rule_hash, expected);
    let changed = HASH_RULE.replace("[60, 79]", "[60, 80]");
    assert_ne!(rule_from(&changed).rule_hash, expected);
}

#[test]
fn input_snapshot_hash_is_sha256_of_jcs_of_profile() {
    let text = r#"{"user_id": "usr_1", "identity": {"gender": "female", "age": 62, "verified_documents": ["voter_id", "aadhaar"]}, "economic": {"annual_income": 150000.0, "bpl_status": true}}"#;
    let canonical = r#"{"economic":{"annual_income":150000,"bpl_status":true},"identity":{"age":62,"gender":"female","verified_documents":["voter_id","aadhaar"]},"user_id":"usr_1"}"#;
    let json: Value = serde_json::from_str(text).unwrap();
    let p = profile(json);
    let expected = sha256_hex(canonical.as_bytes());
    assert_eq!(p.input_snapshot_hash, expected);
    let r = rule(AGE_60);
    let e = eval_json(&r, &p, AS_OF);
    assert_eq!(e["audit"]["input_snapshot_hash"], expected);
}

/// The evaluation id is derived, never random: a replayed evaluation is the same audit row.
#[test]
fn evaluation_id_is_the_first_half_of_sha256_of_both_hashes_and_the_date() {
    let r = rule(AGE_60);
    let p = profile(json!({"user_id": "usr_1", "identity": {"age": 62}}));
    let digest =
        sha256_hex(format!("{}:{}:{AS_OF}", r.rule_hash, p.input_snapshot_hash).as_bytes());
    let expected = format!(
        "{}-{}-{}-{}-{}",
        &digest[0..8],
        &digest[8..12],
        &digest[12..16],
        &digest[16..20],
        &digest[20..32]
    );
    assert_eq!(eval_json(&r, &p, AS_OF)["evaluation_id"], expected);
    assert_eq!(
        engine::eval::evaluation_id(&r, &p.input_snapshot_hash, date(AS_OF)),
        expected
    );
}

#[test]
fn same_inputs_give_byte_identical_output() {
    let text = doc(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 65},
            {operator: OR, conditions: [
                {field: identity.verified_documents, operator: contains, value: aadhaar},
                {field: identity.verified_documents, operator: contains, value: voter_id}]},
            {field: economic.annual_income, operator: lte, value: 200000}]}",
        "exclusions:\n  - {field: eligibility.active_schemes, operator: not_contains, value: sch_ignoaps}\nbenefit: {kind: pension, type: monthly_pension, amount_inr: 2000, frequency: monthly}\napplication: {portal_url: \"https://example.gov.in\"}\n",
    );
    let a: Value = serde_json::from_str(
        r#"{"user_id": "u", "identity": {"age": 62, "verified_documents": ["pan"]}, "economic": {"annual_income": 250000}}"#,
    )
    .unwrap();
    let b: Value = serde_json::from_str(
        r#"{"economic": {"annual_income": 250000.0},   "identity": {"verified_documents": ["pan"], "age": 62}, "user_id": "u"}"#,
    )
    .unwrap();
    let catalogue = Catalogue::bundled();
    let (r1, r2) = (rule_from(&text), rule_from(&text));
    let (p1, p2) = (profile(a), profile(b));
    let s1 = serde_json::to_string(&evaluate(&catalogue, &r1, &p1, date(AS_OF)).unwrap()).unwrap();
    let s2 = serde_json::to_string(&evaluate(&catalogue, &r2, &p2, date(AS_OF)).unwrap()).unwrap();
    assert_eq!(s1, s2);
    // And the output is not degenerate: it carries the verdict and the date.
    let v: Value = serde_json::from_str(&s1).unwrap();
    assert_eq!(v["verdict"], "NOT_ELIGIBLE");
    assert_eq!(v["match_score"], 0);
    assert_eq!(v["as_of"], AS_OF);
    // A different as_of is a different evaluation.
    let s3 = serde_json::to_string(&evaluate(&catalogue, &r1, &p1, date("2025-01-16")).unwrap())
        .unwrap();
    assert_ne!(s1, s3);
}

// ---------------------------------------------------------------------------------------------
// Rules: rule validation
// ---------------------------------------------------------------------------------------------

fn one_leaf(leaf: &str) -> String {
    doc(&format!("{{operator: AND, conditions: [{leaf}]}}"), "")
}

fn assert_single_problem(text: &str, path: &str, reason_has: &str) {
    let problems = refused(text);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    let p = &problems[0];
    assert_eq!(p.id.as_deref(), Some("rule_spec_test"));
    assert_eq!(p.source, "spec.yaml");
    assert_eq!(p.path, path, "{p:?}");
    assert!(
        p.reason.contains(reason_has),
        "reason {:?} should mention {reason_has:?}",
        p.reason
    );
}

#[test]
fn validation_unknown_field() {
    assert_single_problem(
        &one_leaf("{field: identity.shoe_size, operator: eq, value: 42}"),
        "/eligibility/conditions/0/field",
        "identity.shoe_size",
    );
}

#[test]
fn validation_unknown_operator() {
    assert_single_problem(
        &one_leaf("{field: identity.age, operator: roughly, value: 65}"),
        "/eligibility/conditions/0/operator",
        "roughly",
    );
}

#[test]
fn validation_wrong_value_type() {
    assert_single_problem(
        &one_leaf("{field: identity.age, operator: gte, value: sixty-five}"),
        "/eligibility/conditions/0/value",
        "identity.age",
    );
    // An integer field takes integers.
    assert_single_problem(
        &one_leaf("{field: identity.age, operator: gte, value: 65.5}"),
        "/eligibility/conditions/0/value",
        "identity.age",
    );
    // A boolean field takes booleans.
    assert_single_problem(
        &one_leaf("{field: economic.bpl_status, operator: eq, value: \"yes\"}"),
        "/eligibility/conditions/0/value",
        "economic.bpl_status",
    );
    // A date field takes a calendar date.
    assert_single_problem(
        &one_leaf("{field: identity.date_of_birth, operator: lt, value: \"1960-13-01\"}"),
        "/eligibility/conditions/0/value",
        "identity.date_of_birth",
    );
    // A catalogue enum: one of its values (exact, no case folding).
    assert_single_problem(
        &one_leaf("{field: identity.gender, operator: eq, value: Female}"),
        "/eligibility/conditions/0/value",
        "identity.gender",
    );
    // An item inside an `in` list.
    assert_single_problem(
        &one_leaf("{field: identity.social_category, operator: in, value: [sc, 7]}"),
        "/eligibility/conditions/0/value/1",
        "identity.social_category",
    );
}

#[test]
fn validation_more_than_50_leaves() {
    let leaves = |n: usize| {
        (0..n)
            .map(|i| format!("{{field: identity.age, operator: gte, value: {i}}}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let fifty = doc(
        &format!("{{operator: AND, conditions: [{}]}}", leaves(50)),
        "",
    );
    rule_from(&fifty);
    let fifty_one = doc(
        &format!("{{operator: AND, conditions: [{}]}}", leaves(51)),
        "",
    );
    assert_single_problem(&fifty_one, "/eligibility", "51");
}

#[test]
fn validation_nesting_deeper_than_5() {
    let leaf = "{field: identity.age, operator: gte, value: 60}";
    let nest = |groups: usize| {
        let mut node = leaf.to_string();
        for _ in 0..groups {
            node = format!("{{operator: AND, conditions: [{node}]}}");
        }
        doc(&node, "")
    };
    // Five nested groups are allowed (rule-format.md: depth <= 5) and still score normally.
    let five = rule_from(&nest(5));
    assert_eq!(
        out(&five, &profile(json!({"identity": {"age": 61}}))),
        Outcome {
            verdict: Verdict::Eligible,
            score: 100
        }
    );
    assert_single_problem(
        &nest(6),
        "/eligibility/conditions/0/conditions/0/conditions/0/conditions/0/conditions/0",
        "5",
    );
}

#[test]
fn validation_string_over_256_chars() {
    let ok = "a".repeat(256);
    rule_from(&one_leaf(&format!(
        "{{field: identity.age, operator: gte, value: 60, label: \"{ok}\"}}"
    )));
    let long = "é".repeat(257);
    assert_single_problem(
        &one_leaf(&format!(
            "{{field: identity.age, operator: gte, value: 60, label: \"{long}\"}}"
        )),
        "/eligibility/conditions/0/label",
        "257",
    );
    assert_single_problem(
        &one_leaf(&format!(
            "{{field: demographics.district, operator: eq, value: \"{}\"}}",
            "d".repeat(300)
        )),
        "/eligibility/conditions/0/value",
        "300",
    );
}

#[test]
fn validation_number_outside_1e9() {
    rule_from(&one_leaf(
        "{field: economic.annual_income, operator: lte, value: 1000000000}",
    ));
    assert_single_problem(
        &one_leaf("{field: economic.annual_income, operator: lte, value: 1000000001}"),
        "/eligibility/conditions/0/value",
        "1e9",
    );
    assert_single_problem(
        &one_leaf("{field: economic.annual_income, operator: between, value: [-1000000000.5, 0]}"),
        "/eligibility/conditions/0/value/0",
        "1e9",
    );
}

#[test]
fn validation_list_over_100_items() {
    let items = |n: usize| {
        (0..n)
            .map(|i| format!("d{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    rule_from(&one_leaf(&format!(
        "{{field: demographics.district, operator: in, value: [{}]}}",
        items(100)
    )));
    assert_single_problem(
        &one_leaf(&format!(
            "{{field: demographics.district, operator: in, value: [{}]}}",
            items(101)
        )),
        "/eligibility/conditions/0/value",
        "101",
    );
}

#[test]
fn validation_not_with_two_children() {
    let text = doc(
        "{operator: AND, conditions: [{operator: NOT, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: identity.gender, operator: eq, value: male}]}]}",
        "",
    );
    let problems = refused(&text);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0].id.as_deref(), Some("rule_spec_test"));
    assert_eq!(problems[0].path, "/eligibility/conditions/0/conditions");
    assert!(!problems[0].reason.is_empty());
}

#[test]
fn validation_reports_all_problems_at_once() {
    let text = doc(
        "{operator: AND, conditions: [
            {field: identity.shoe_size, operator: eq, value: 42},
            {field: identity.age, operator: roughly, value: 65},
            {field: identity.age, operator: gte, value: sixty-five}]}",
        "",
    );
    let problems = refused(&text);
    assert_eq!(
        paths(&problems),
        vec![
            "/eligibility/conditions/0/field",
            "/eligibility/conditions/1/operator",
            "/eligibility/conditions/2/value",
        ],
        "{problems:#?}"
    );
    for p in &problems {
        assert_eq!(p.id.as_deref(), Some("rule_spec_test"));
        assert!(!p.reason.is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// Profiles: profile validation
// ---------------------------------------------------------------------------------------------

fn profile_problems(v: Value) -> Vec<Problem> {
    match Profile::from_json(&Catalogue::bundled(), &v, "profile.json") {
        Ok(_) => panic!("profile should be refused: {v}"),
        Err(report) => report.problems,
    }
}

#[test]
fn profile_with_unknown_field_is_refused_naming_it() {
    let problems = profile_problems(json!({"identity": {"age": 62, "shoe_size": 42}}));
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0].path, "/identity/shoe_size");
    assert!(problems[0].reason.contains("identity.shoe_size"));
    let problems = profile_problems(json!({"hobbies": {"chess": true}}));
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].path.starts_with("/hobbies"));
}

#[test]
fn profile_with_wrong_type_is_refused_naming_the_field() {
    for (bad, path, name) in [
        (
            json!({"identity": {"age": "62"}}),
            "/identity/age",
            "identity.age",
        ),
        (
            json!({"identity": {"age": 62.5}}),
            "/identity/age",
            "identity.age",
        ),
        (
            json!({"economic": {"bpl_status": "true"}}),
            "/economic/bpl_status",
            "economic.bpl_status",
        ),
        (
            json!({"identity": {"date_of_birth": "1960-02-30"}}),
            "/identity/date_of_birth",
            "identity.date_of_birth",
        ),
        (
            json!({"identity": {"verified_documents": "aadhaar"}}),
            "/identity/verified_documents",
            "identity.verified_documents",
        ),
        (
            json!({"identity": {"gender": "Female"}}),
            "/identity/gender",
            "identity.gender",
        ),
    ] {
        let problems = profile_problems(bad.clone());
        assert_eq!(problems.len(), 1, "{bad}: {problems:#?}");
        assert_eq!(problems[0].path, path, "{bad}");
        assert!(
            problems[0].reason.contains(name),
            "{bad}: {:?}",
            problems[0].reason
        );
    }
}

/// Next steps (docs/semantics.md, Evaluation 8) by verdict — where to apply and what to keep ready when ELIGIBLE,
/// the gaps then where to apply when PARTIAL_MATCH, and otherwise only the questions whose answers
/// could still change the verdict.
#[test]
fn next_steps_follow_the_verdict() {
    let r = rule_x(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: economic.annual_income, operator: lte, value: 200000}]}",
        "documents_required: [aadhaar, bpl_card]\napplication: {portal_url: \"https://sevasindhu.karnataka.gov.in/\"}\n",
    );
    let steps = |p: Value| {
        let e = eval_json(&r, &profile(p), AS_OF);
        (e["verdict"].clone(), e["next_steps"].clone())
    };
    assert_eq!(
        steps(json!({"identity": {"age": 65}, "economic": {"annual_income": 100000}})),
        (
            json!("ELIGIBLE"),
            json!([
                "Apply at sevasindhu.karnataka.gov.in",
                "Keep ready: Aadhaar card and BPL card"
            ])
        )
    );
    assert_eq!(
        steps(json!({"identity": {"age": 58}, "economic": {"annual_income": 100000}})),
        (
            json!("PARTIAL_MATCH"),
            json!([
                "You are 2 years below the minimum age of 60",
                "When you meet these conditions, apply at sevasindhu.karnataka.gov.in"
            ])
        )
    );
    // Age fails and income is unknown: a passing income would make it PARTIAL_MATCH (1 of 2).
    assert_eq!(
        steps(json!({"identity": {"age": 50}})),
        (
            json!("NOT_ELIGIBLE"),
            json!(["Tell us your household's total income for the year"])
        )
    );
}

#[test]
fn validation_an_oversized_or_exploding_document_is_refused_before_it_is_built() {
    // Over the size limit: refused without parsing, naming the size.
    let padding = format!("# {}\n", "x".repeat(engine::load::MAX_RULE_BYTES));
    let big = doc(
        "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}",
        &padding,
    );
    let problems = refused(&big);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].reason.contains("bytes; at most 65536"),
        "{problems:?}"
    );
    // A small document whose aliases would expand a billion-fold ("billion laughs").
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let mut previous = 'a';
    for name in 'b'..='i' {
        bomb.push_str(&format!(
            "{name}: &{name} [*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous}]\n"
        ));
        previous = name;
    }
    assert!(bomb.len() < 1024);
    let started = std::time::Instant::now();
    let problems = refused(&bomb);
    assert!(
        problems[0].reason.contains("not valid YAML"),
        "{problems:?}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "refused quickly"
    );
}

/// docs/semantics.md, "Benefit tiers": IGNOAPS pays ₹200 a month at 60–79 and ₹500 at 80+. The
/// first tier whose condition holds sets the amount; an unknown tier condition before any that
/// holds leaves the amount open and names its fields; none holding, the base amount.
const TIERED: &str = "benefit:
  kind: pension
  type: monthly_pension
  amount_inr: 200
  frequency: monthly
  tiers:
    - when: {field: identity.age, operator: gte, value: 80}
      amount_inr: 500
      label: \"80 or older\"
    - when: {operator: AND, conditions: [{field: identity.social_category, operator: in, value: [sc, st]}, {field: identity.age, operator: gte, value: 70}]}
      amount_inr: 300
";

fn tiered_benefit(profile_json: Value) -> Value {
    let rule = rule_x(
        "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}",
        TIERED,
    );
    let catalogue = Catalogue::bundled();
    let p = profile(profile_json);
    let e = evaluate(&catalogue, &rule, &p, date(AS_OF)).unwrap();
    serde_json::to_value(&e).unwrap()["benefit_estimate"].clone()
}

#[test]
fn the_first_tier_that_holds_sets_the_amount() {
    let at_85 = tiered_benefit(json!({"identity": {"age": 85, "social_category": "sc"}}));
    assert_eq!(at_85["monthly_inr"], 500);
    assert_eq!(at_85["annual_inr"], 6000);
    assert_eq!(at_85["tier"], "80 or older");
    let at_72_sc = tiered_benefit(json!({"identity": {"age": 72, "social_category": "sc"}}));
    assert_eq!(at_72_sc["monthly_inr"], 300);
    assert!(
        at_72_sc.get("tier").is_none(),
        "an unlabelled tier shows no label"
    );
}

#[test]
fn no_tier_holding_pays_the_base_amount_as_a_rule_without_tiers_shows_it() {
    let at_65 = tiered_benefit(json!({"identity": {"age": 65, "social_category": "general"}}));
    assert_eq!(at_65["monthly_inr"], 200);
    assert_eq!(at_65["annual_inr"], 2400);
    assert!(at_65.get("tier").is_none() && at_65.get("amount_depends_on").is_none());
}

#[test]
fn an_unknown_tier_condition_leaves_the_amount_open_and_names_its_fields() {
    // Age 72 fails the first tier; the category is unknown, so the second tier is unknown.
    let open = tiered_benefit(json!({"identity": {"age": 72}}));
    assert!(open.get("monthly_inr").is_none(), "{open}");
    assert_eq!(
        open["amount_depends_on"],
        json!(["identity.age", "identity.social_category"])
    );
    // Once a tier holds, the unknown ones after it do not matter.
    let decided = tiered_benefit(json!({"identity": {"age": 81}}));
    assert_eq!(decided["monthly_inr"], 500);
}

#[test]
fn a_tier_condition_is_validated_like_eligibility_with_its_path() {
    let text = doc(
        "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}",
        "benefit:\n  kind: pension\n  amount_inr: 200\n  frequency: monthly\n  tiers:\n    - when: {field: identity.agee, operator: gte, value: 80}\n      amount_inr: 500\n",
    );
    let problems = refused(&text);
    assert!(
        problems
            .iter()
            .any(|p| p.path == "/benefit/tiers/0/when/field" && p.reason.contains("identity.agee")),
        "{problems:#?}"
    );
}

/// docs/semantics.md, "Evaluation" 6: a missing yes/no fact is asked for with the catalogue's
/// question, not as "it is needed to check that it is yes"; a catalogue with a field that has
/// no question is refused, naming the field.
#[test]
fn a_missing_yes_no_fact_is_asked_with_its_question() {
    let rule = rule(
        "{operator: AND, conditions: [{field: economic.bpl_status, operator: eq, value: true}]}",
    );
    let catalogue = Catalogue::bundled();
    let nothing = profile(json!({}));
    let e = evaluate(&catalogue, &rule, &nothing, date(AS_OF)).unwrap();
    let gaps = serde_json::to_value(&e.gaps).unwrap();
    assert_eq!(
        gaps[0]["gap_description"],
        "Tell us whether your household is on the Below Poverty Line (BPL) list"
    );
    let without_question = r#"{"catalogue_version": 9, "description": "", "fields": [
        {"name": "economic.flag", "type": "boolean", "label": "flag"}]}"#;
    let refused = match Catalogue::from_json(without_question) {
        Ok(_) => panic!("a boolean field without a question must be refused"),
        Err(e) => e.to_string(),
    };
    assert!(
        refused.contains("economic.flag") && refused.contains("question"),
        "{refused}"
    );
}

/// docs/semantics.md, "Evaluation" 6: an OR of verified documents is one next step, though each
/// document stays a gap of its own; each gap names its own document first and the others as
/// the alternatives, so no sentence of the result repeats.
#[test]
fn any_one_of_several_documents_is_one_sentence_and_one_step() {
    let rule = rule_x(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {operator: OR, conditions: [
                {field: identity.verified_documents, operator: contains, value: age_proof},
                {field: identity.verified_documents, operator: contains, value: birth_certificate},
                {field: identity.verified_documents, operator: contains, value: voter_id}]}]}",
        "application: {portal_url: \"https://example.gov.in\"}\n",
    );
    let catalogue = Catalogue::bundled();
    let p = profile(json!({"identity": {"age": 70, "verified_documents": ["pan"]}}));
    let e = evaluate(&catalogue, &rule, &p, date(AS_OF)).unwrap();
    assert_eq!(e.verdict, Verdict::PartialMatch);
    let json = serde_json::to_value(&e).unwrap();
    let texts: Vec<&str> = json["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["gap_description"].as_str().unwrap())
        .collect();
    let sentence = "Get your proof of age verified, or instead your birth certificate or voter ID";
    assert_eq!(
        texts,
        [
            sentence,
            "Get your birth certificate verified, or instead your proof of age or voter ID",
            "Get your voter ID verified, or instead your proof of age or birth certificate"
        ]
    );
    assert_eq!(
        json["next_steps"],
        json!([
            sentence,
            "When you meet these conditions, apply at example.gov.in"
        ])
    );
}

/// Gaps: each says whether the citizen can close it — a document to get verified, information
/// to give, an age to wait for — or not (a category the scheme is not for), and an evaluation
/// says whether all of its gaps can be closed.
#[test]
fn each_gap_says_whether_and_how_the_citizen_can_close_it() {
    let r = rule(
        r#"{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: economic.bpl_status, operator: eq, value: true},
            {field: identity.verified_documents, operator: contains, value: aadhaar},
            {field: identity.social_category, operator: in, value: [sc, st]}]}"#,
    );
    let citizen = |category: &str| {
        profile(
            json!({"user_id": "u", "identity": {"age": 58, "verified_documents": ["voter_id"],
            "social_category": category}}),
        )
    };
    let e = eval_json(&r, &citizen("general"), AS_OF);
    let closable: Vec<(&str, &str)> = e["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["field"].as_str().unwrap(),
                g["closable_by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        closable,
        [
            ("identity.age", "waiting"),
            ("economic.bpl_status", "information"),
            ("identity.verified_documents", "document"),
            ("identity.social_category", "none"),
        ]
    );
    assert_eq!(e["all_gaps_closable"], false);
    // Without the category gap, everything left is the citizen's to close.
    let e = eval_json(&r, &citizen("sc"), AS_OF);
    assert_eq!(e["gaps"].as_array().unwrap().len(), 3);
    assert_eq!(e["all_gaps_closable"], true);
    // An income above a limit is not closed by applying.
    let limit = rule(
        r#"{operator: AND, conditions: [{field: economic.annual_income, operator: lte, value: 100000}]}"#,
    );
    let e = eval_json(
        &limit,
        &profile(json!({"user_id": "u", "economic": {"annual_income": 250000}})),
        AS_OF,
    );
    assert_eq!(e["gaps"][0]["closable_by"], "none");
    assert_eq!(e["all_gaps_closable"], false);
}

/// Needed fields: a verdict that answers could still turn ELIGIBLE says so
/// (`could_become_eligible`), distinct from one no answer can change.
#[test]
fn a_verdict_says_whether_answers_could_still_make_it_eligible() {
    let r = rule(
        r#"{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: economic.bpl_status, operator: eq, value: true},
            {operator: NOT, conditions: [{field: economic.is_government_employee, operator: eq, value: true}]}]}"#,
    );
    // 62, the rest unknown: 1 of 3, NOT_ELIGIBLE, but BPL yes and not an employee would do.
    let e = eval_json(
        &r,
        &profile(json!({"user_id": "u", "identity": {"age": 62}})),
        AS_OF,
    );
    assert_eq!(e["verdict"], "NOT_ELIGIBLE");
    assert_eq!(e["could_become_eligible"], true);
    // 50: the age condition is known to fail, so no answer makes it ELIGIBLE.
    let e = eval_json(
        &r,
        &profile(json!({"user_id": "u", "identity": {"age": 50}})),
        AS_OF,
    );
    assert_eq!(e["could_become_eligible"], false);
    // Everything known: nothing to answer.
    let known = json!({"user_id": "u", "identity": {"age": 62},
        "economic": {"bpl_status": false, "is_government_employee": false}});
    let e = eval_json(&r, &profile(known), AS_OF);
    assert_eq!(
        (e["verdict"].as_str(), e["could_become_eligible"].as_bool()),
        (Some("PARTIAL_MATCH"), Some(false))
    );
}

/// Profiles, "Age on a date": with a date of birth the age is read on the evaluation date,
/// whatever age was given; without one the given age stands.
#[test]
fn the_age_is_read_from_the_date_of_birth_on_the_evaluation_date() {
    let catalogue = Catalogue::bundled();
    let sixty =
        rule("{operator: AND, conditions: [{field: identity.age, operator: gte, value: 60}]}");
    let given = |identity: Value| {
        Profile::from_json(&catalogue, &json!({"identity": identity}), "p").unwrap()
    };
    let verdict_on = |p: &Profile, day: &str| {
        let day = date(day);
        outcome(&sixty, &p.on(day), day).verdict
    };
    // Stated 59 on the 15th, born on 20 January 1965: 60 from the 20th.
    let born = given(json!({"age": 59, "date_of_birth": "1965-01-20"}));
    assert_eq!(verdict_on(&born, "2025-01-19"), Verdict::NotEligible);
    assert_eq!(verdict_on(&born, "2025-01-20"), Verdict::Eligible);
    // A stated age that disagrees with the date of birth does not count.
    let wrong = given(json!({"age": 75, "date_of_birth": "1965-01-20"}));
    assert_eq!(verdict_on(&wrong, "2025-01-15"), Verdict::NotEligible);
    // Without a date of birth the age given stands, on any day.
    let stated = given(json!({"age": 59}));
    assert_eq!(verdict_on(&stated, "2030-01-01"), Verdict::NotEligible);
    // Before the date of birth the age is unknown.
    let unborn = given(json!({"date_of_birth": "2026-01-01"}));
    let age = catalogue.id("identity.age").unwrap();
    assert_eq!(unborn.on(date("2025-12-31")).get(age), None);
    // The hash is that of the profile as given.
    assert_eq!(
        born.on(date("2025-01-20")).input_snapshot_hash,
        born.input_snapshot_hash
    );
}

/// docs/semantics.md, "Evaluation" 7–8: where answers could still make the verdict ELIGIBLE,
/// the summary says "We need to know more" and the next steps are the questions, one per field
/// (two conditions on one unknown list ask once); where a known fact already bars, it says
/// "not eligible".
#[test]
fn we_need_to_know_asks_each_question_once_and_says_so() {
    let rule = rule(
        "{operator: AND, conditions: [
            {field: identity.age, operator: gte, value: 60},
            {field: identity.verified_documents, operator: contains, value: aadhaar},
            {field: identity.verified_documents, operator: contains, value: pan},
            {field: economic.bpl_status, operator: eq, value: true}]}",
    );
    let catalogue = Catalogue::bundled();
    let unknown = profile(json!({"identity": {"age": 65}}));
    let e = evaluate(&catalogue, &rule, &unknown, date(AS_OF)).unwrap();
    assert!(e.could_become_eligible);
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(
        json["summary"],
        "We need to know more: 2 answers could make you eligible"
    );
    assert_eq!(
        json["next_steps"],
        json!([
            "Tell us which of your documents are verified",
            "Tell us whether your household is on the Below Poverty Line (BPL) list"
        ])
    );
    let too_young = profile(json!({"identity": {"age": 50}}));
    let e = evaluate(&catalogue, &rule, &too_young, date(AS_OF)).unwrap();
    assert!(!e.could_become_eligible);
    assert_eq!(
        serde_json::to_value(&e).unwrap()["summary"],
        "You are not eligible"
    );
    let eligible = profile(
        json!({"identity": {"age": 65, "verified_documents": ["aadhaar", "pan"]},
                                  "economic": {"bpl_status": true}}),
    );
    let e = evaluate(&catalogue, &rule, &eligible, date(AS_OF)).unwrap();
    assert_eq!(
        serde_json::to_value(&e).unwrap()["summary"],
        "You are eligible"
    );
}

/// docs/rule-format.md, "Benefit kinds": a cover and a loan limit are never money per period,
/// and a document stored before kinds existed is read with the kind its `type` implies.
#[test]
fn benefit_kinds_say_what_the_amount_is() {
    let age = "{operator: AND, conditions: [{field: identity.age, operator: gte, value: 18}]}";
    let adult = profile(json!({"identity": {"age": 30}}));
    let benefit =
        |extra: &str| eval_json(&rule_x(age, extra), &adult, AS_OF)["benefit_estimate"].clone();
    let cover = benefit(
        "benefit: {kind: insurance_cover, type: life_insurance, amount_inr: 200000, frequency: yearly}\n",
    );
    assert_eq!(cover["kind"], "insurance_cover");
    assert_eq!(cover["cover_inr"], 200000);
    assert!(cover.get("annual_inr").is_none(), "{cover}");
    // The same benefit written before kinds existed: its type implies the cover.
    let legacy =
        benefit("benefit: {type: life_insurance, amount_inr: 200000, frequency: yearly}\n");
    assert_eq!(legacy, cover);
    let loan = benefit("benefit: {type: bank_loan, amount_inr: 1000000, frequency: one_time}\n");
    assert_eq!(
        (loan["kind"].as_str(), &loan["loan_up_to_inr"]),
        (Some("loan_up_to"), &json!(1000000))
    );
    assert!(loan.get("one_time_inr").is_none(), "{loan}");
    let slabs = benefit(
        "benefit: {kind: contributory_pension, amount_inr: 5000, amount_min_inr: 1000, frequency: monthly}\n",
    );
    assert_eq!(
        (&slabs["monthly_from_inr"], &slabs["monthly_inr"]),
        (&json!(1000), &json!(5000))
    );
    assert!(slabs.get("annual_inr").is_none(), "{slabs}");
    let pension = benefit("benefit: {kind: pension, amount_inr: 1200, frequency: monthly}\n");
    assert_eq!(
        (&pension["monthly_inr"], &pension["annual_inr"]),
        (&json!(1200), &json!(14400))
    );
}
