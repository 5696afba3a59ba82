//! The Oracle-A case built by `oracle_case` is wired to the facts: templates pass, and
//! explanations that invent an amount, claim another verdict, contradict themselves or leave
//! out the verdict fail, through the rule that should catch them.

mod support;

use engine::Verdict;
use explain::{
    CONTRADICTION_IDS, Facts, Language, facts, oracle_case, oracle_case_json, template,
    unsourced_numbers,
};
use oracle::{CaseReport, Evidence, RuleId, check};
use serde_json::json;
use support::{catalogue, evaluation, profile, rule};

const AS_OF: &str = "2026-01-10";

fn karnataka(age: i64, government_employee: bool, language: Language) -> Facts {
    let profile = profile(json!({
        "demographics": {"state": "karnataka"},
        "identity": {"age": age, "verified_documents": ["aadhaar"]},
        "economic": {"bpl_status": true, "is_government_employee": government_employee},
        "eligibility": {"active_schemes": []}
    }));
    facts(
        &evaluation(rule("rule_ka_oap_001"), &profile, AS_OF),
        catalogue(),
        language,
    )
}

fn run(facts: &Facts, candidate: &str) -> CaseReport {
    check(&oracle_case("test", facts, candidate))
}

fn failed(report: &CaseReport) -> Vec<RuleId> {
    report.failed_rules().collect()
}

#[test]
fn templates_pass_for_every_verdict_in_both_languages() {
    for language in Language::ALL {
        for (age, excluded, verdict) in [
            (68, false, Verdict::Eligible),
            (58, false, Verdict::PartialMatch),
            (68, true, Verdict::NotEligible),
        ] {
            let facts = karnataka(age, excluded, language);
            assert_eq!(facts.verdict(), verdict);
            let text = template(&facts);
            let report = run(&facts, &text);
            assert_eq!(report.verdict, oracle::Verdict::Pass, "{text}\n{report:#?}");
            assert!(unsourced_numbers(&facts, &text).is_empty());
        }
    }
}

#[test]
fn the_case_has_the_test_set_shape() {
    let facts = karnataka(68, true, Language::En);
    let case = oracle_case_json("Q-explain-1", &facts, "You are not eligible for it.");
    assert_eq!(case["id"], "Q-explain-1");
    assert_eq!(case["facts"], json!(facts.texts()));
    assert_eq!(
        case["config"],
        json!({"UNSUPPORTED_MAX": 0, "ADDED_WORDS_MAX": explain::ADDED_WORDS_MAX})
    );
    assert_eq!(
        case["expected"]["must_find"],
        json!(["You are not eligible for"])
    );
    assert_eq!(
        case["expected"]["must_not_find"],
        json!([
            "You are eligible for",
            "You are not yet eligible for",
            "is not open on",
            "guarantee",
            "definitely",
            "certainly"
        ])
    );
    assert_eq!(
        case["expected"]["contradiction_ids"],
        json!(CONTRADICTION_IDS)
    );
    // The same case the oracle crate parses from a test-set line.
    let parsed = oracle::Case::from_json(&case.to_string()).unwrap();
    assert_eq!(
        parsed,
        oracle_case("Q-explain-1", &facts, "You are not eligible for it.")
    );
}

#[test]
fn claiming_eligibility_when_not_eligible_fails() {
    let facts = karnataka(68, true, Language::En);
    let report = run(&facts, "You are eligible for Karnataka Old Age Pension.");
    assert_eq!(report.verdict, oracle::Verdict::Fail);
    assert_eq!(
        failed(&report),
        [
            RuleId::Prec001,
            RuleId::Prec002,
            RuleId::Prec003,
            RuleId::Prec004,
            RuleId::Prec005
        ]
    );

    let hindi = karnataka(68, true, Language::Hi);
    let report = run(&hindi, "आप कर्नाटक वृद्धावस्था पेंशन के लिए पात्र हैं।");
    assert_eq!(
        failed(&report),
        [
            RuleId::Prec001,
            RuleId::Prec002,
            RuleId::Prec003,
            RuleId::Prec004,
            RuleId::Prec005
        ]
    );
}

#[test]
fn a_hallucinated_amount_fails() {
    let facts = karnataka(68, false, Language::En);
    let candidate = format!("{} You will receive ₹5,000 a month.", template(&facts));
    let report = run(&facts, &candidate);
    assert_eq!(
        failed(&report),
        [RuleId::Prec001, RuleId::Prec004, RuleId::Prec005]
    );
    assert_eq!(unsourced_numbers(&facts, &candidate), ["5,000"]);
}

#[test]
fn a_hindi_sentence_ending_in_a_danda_is_checked_on_its_own() {
    let facts = karnataka(68, false, Language::Hi);
    let candidate = "आप कर्नाटक वृद्धावस्था पेंशन के लिए पात्र हैं। आपको हर महीने ₹5,000 मिलेंगे।";
    let report = run(&facts, candidate);
    assert_eq!(
        failed(&report),
        [RuleId::Prec001, RuleId::Prec004, RuleId::Prec005]
    );
    // The danda became ". " of the same byte length: offsets point into the text as given.
    let unsourced = report.rules[3]
        .evidence
        .iter()
        .find_map(|e| match e {
            Evidence::Sentence {
                offset,
                source: None,
                ..
            } => Some(*offset),
            _ => None,
        })
        .unwrap();
    assert!(candidate[unsourced..].starts_with("आपको"));
}

#[test]
fn oracle_sourcing_lets_an_amount_inside_a_sourced_sentence_through() {
    // A sentence that contains a whole fact is sourced (RULE-PREC-004); RULE-PREC-005 bounds
    // what it adds to three words, and an amount fits in three: the worker's number check
    // catches what the oracle cannot.
    let facts = karnataka(68, false, Language::En);
    let candidate = "You are eligible for Karnataka Old Age Pension and ₹5,000 monthly.";
    assert_eq!(run(&facts, candidate).verdict, oracle::Verdict::Pass);
    assert_eq!(unsourced_numbers(&facts, candidate), ["5,000"]);
    // A clause of its own is more than three words.
    let candidate = "You are eligible for Karnataka Old Age Pension and will get ₹5,000 a month.";
    assert_eq!(failed(&run(&facts, candidate)), [RuleId::Prec005]);
}

#[test]
fn a_contradiction_fails_even_in_a_sourced_sentence() {
    let facts = karnataka(68, false, Language::En);
    let candidate = "You are eligible for Karnataka Old Age Pension, always and never.";
    assert_eq!(
        failed(&run(&facts, candidate)),
        [RuleId::Cont001, RuleId::Cont002, RuleId::Cont003]
    );
}

#[test]
fn a_promise_fails_even_in_a_sourced_sentence() {
    let facts = karnataka(68, false, Language::En);
    let candidate = "You are eligible for Karnataka Old Age Pension, guaranteed.";
    assert_eq!(failed(&run(&facts, candidate)), [RuleId::Prec003]);
}

#[test]
fn an_explanation_that_leaves_out_the_verdict_fails() {
    let facts = karnataka(68, false, Language::En);
    let condition = &facts.facts()[3].text;
    assert_eq!(failed(&run(&facts, condition)), [RuleId::Prec002]);
}

#[test]
fn what_the_facts_say_themselves_is_not_checked_against_them() {
    // Odisha's Subhadra (version 2) has "Family income not above ₹2.5 lakh a year"; a woman of
    // 19 has the gap "You are 2 years below the minimum age of 21": facts holding both terms of
    // a pair cannot be restated without them.
    let profile = profile(json!({
        "demographics": {"state": "odisha"},
        "identity": {"gender": "female", "age": 19, "verified_documents": ["aadhaar"]},
        "economic": {"ration_card_type": "apl", "annual_income": 200000,
                     "is_income_tax_payer": false, "is_government_employee": false,
                     "irrigated_land_acres": 0, "unirrigated_land_acres": 0},
        "household": {"owns_three_or_four_wheeler": false}
    }));
    let evaluation = evaluation(rule("rule_od_subhadra_002"), &profile, AS_OF);
    let facts = facts(&evaluation, catalogue(), Language::En);
    let all = facts.texts().join(". ");
    assert!(
        all.contains(" below ") && all.contains("not above"),
        "{all}"
    );
    let case = oracle_case("subhadra", &facts, &all);
    assert!(
        !case
            .expected
            .contradiction_ids
            .contains(&"above_below".to_string())
    );
    assert_eq!(
        case.expected.contradiction_ids.len(),
        CONTRADICTION_IDS.len() - 1
    );
    assert_eq!(check(&case).verdict, oracle::Verdict::Pass);
    assert_eq!(
        run(&facts, &template(&facts)).verdict,
        oracle::Verdict::Pass
    );
    // Every other pair is still checked.
    let report = run(&facts, &format!("{}, true or false.", facts.texts()[0]));
    assert_eq!(
        failed(&report),
        [RuleId::Cont001, RuleId::Cont002, RuleId::Cont003]
    );
}
