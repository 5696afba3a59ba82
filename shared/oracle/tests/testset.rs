//! Runs the Phase Q test set and the test-set runner's own edges.

use oracle::{Agreement, Entry, Verdict, run_testset};

const TESTSET: &str = include_str!("../testdata/PHASE_Q_TESTSET.ndjson");

#[test]
fn every_case_in_the_phase_q_testset_agrees() {
    let outcome = run_testset(TESTSET);
    let disagreements: Vec<String> = outcome
        .entries
        .iter()
        .filter(|e| !matches!(e, Entry::Case(c) if c.agreement() == Agreement::Agreed))
        .map(|e| e.to_string())
        .collect();
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(outcome.summary.total >= 80, "{}", outcome.summary);
    assert_eq!(outcome.summary.agreed, outcome.summary.total);
    assert!(outcome.summary.is_clean());
}

#[test]
fn input_errors_name_their_line_and_the_rest_still_runs() {
    let text = concat!(
        r#"{"id": "a", "facts": ["x"], "candidate_output": "x", "expected_verdict": "PASS"}"#,
        "\n\n",
        "{not json\n",
        r#"{"id": "no-facts", "candidate_output": "x"}"#,
        "\n",
        r#"{"id": "no-output", "facts": []}"#,
        "\n",
        r#"{"id": "b", "facts": [], "candidate_output": "y", "expected_verdict": "FAIL"}"#,
        "\n",
    );
    let outcome = run_testset(text);
    let lines: Vec<String> = outcome.entries.iter().map(|e| e.to_string()).collect();
    assert_eq!(lines.len(), 5, "the blank line is skipped: {lines:#?}");
    assert_eq!(lines[0], "a (line 1): PASS [], expected PASS: agreed");
    assert!(
        lines[1].starts_with("line 3: input error: "),
        "{}",
        lines[1]
    );
    assert!(lines[2].starts_with("line 4: input error: ") && lines[2].contains("facts"));
    assert!(lines[3].starts_with("line 5: input error: ") && lines[3].contains("candidate_output"));
    assert_eq!(
        lines[4],
        "b (line 6): FAIL [RULE-PREC-001, RULE-PREC-004], expected FAIL: agreed"
    );
    let s = outcome.summary;
    assert_eq!(
        (s.total, s.agreed, s.disagreed, s.unchecked, s.input_errors),
        (5, 2, 0, 0, 3)
    );
    assert!(!s.is_clean());
    assert_eq!(
        s.to_string(),
        "total 5: agreed 2, disagreed 0, unchecked 0, input errors 3"
    );
}

#[test]
fn disagreements_on_verdict_or_violations_are_reported() {
    let text = concat!(
        r#"{"id": "v", "facts": [], "candidate_output": "y", "expected_verdict": "PASS"}"#,
        "\n",
        r#"{"id": "r", "facts": [], "candidate_output": "y", "expected_verdict": "FAIL", "expected_violations": ["RULE-PREC-001"]}"#,
        "\n",
        r#"{"id": "o", "facts": [], "candidate_output": "y", "expected_violations": ["RULE-PREC-004", "RULE-PREC-001"]}"#,
        "\n",
        r#"{"id": "u", "facts": [], "candidate_output": "y"}"#,
        "\n",
    );
    let outcome = run_testset(text);
    let cases: Vec<_> = outcome
        .entries
        .iter()
        .map(|e| match e {
            Entry::Case(c) => c,
            Entry::InputError(e) => panic!("{e}"),
        })
        .collect();
    assert_eq!(cases[0].verdict_agrees, Some(false));
    assert_eq!(cases[0].actual_verdict, Verdict::Fail);
    assert_eq!(cases[0].agreement(), Agreement::Disagreed);
    assert_eq!(
        cases[0].to_string(),
        "v (line 1): FAIL [RULE-PREC-001, RULE-PREC-004], expected PASS: DISAGREED"
    );
    // Right verdict, wrong rules.
    assert_eq!(cases[1].verdict_agrees, Some(true));
    assert_eq!(cases[1].violations_match, Some(false));
    assert_eq!(cases[1].agreement(), Agreement::Disagreed);
    // Violations alone, in any order, are an expectation.
    assert_eq!(cases[2].expected_verdict, None);
    assert_eq!(cases[2].violations_match, Some(true));
    assert_eq!(cases[2].agreement(), Agreement::Agreed);
    assert_eq!(cases[3].agreement(), Agreement::Unchecked);
    assert!(cases[3].to_string().ends_with("expected -: unchecked"));
    let s = outcome.summary;
    assert_eq!(
        (s.total, s.agreed, s.disagreed, s.unchecked, s.input_errors),
        (4, 1, 2, 1, 0)
    );
    assert!(!s.is_clean());
}

#[test]
fn configuration_errors_show_on_the_outcome_line() {
    let text = r#"{"id": "c", "facts": ["x"], "candidate_output": "x", "expected": {"contradiction_ids": ["yes_no"]}, "expected_verdict": "FAIL", "expected_violations": []}"#;
    let outcome = run_testset(text);
    assert_eq!(
        outcome.entries[0].to_string(),
        "c (line 1): FAIL [] errors: unknown contradiction id \"yes_no\" at expected.contradiction_ids[0], expected FAIL []: agreed"
    );
    assert!(outcome.summary.is_clean());
}
