//! Focused tests per rule on the tricky edges, through the public API.

use oracle::{
    Case, CaseReport, ConfigError, Evidence, Expected, MatchDirection, OracleConfig, RuleId,
    RuleReport, Source, TermHit, Verdict, check, check_with,
};

fn case(facts: &[&str], output: &str) -> Case {
    Case {
        id: "t".to_owned(),
        facts: facts.iter().map(|f| f.to_string()).collect(),
        candidate_output: output.to_owned(),
        ..Case::default()
    }
}

fn with_expected(mut case: Case, expected: Expected) -> Case {
    case.expected = expected;
    case
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn rule(report: &CaseReport, id: RuleId) -> &RuleReport {
    report.rules.iter().find(|r| r.rule_id == id).unwrap()
}

fn failed(report: &CaseReport) -> Vec<RuleId> {
    report.failed_rules().collect()
}

#[test]
fn every_rule_is_reported_in_index_order_with_its_invariant() {
    let report = check(&case(&[], ""));
    let ids: Vec<RuleId> = report.rules.iter().map(|r| r.rule_id).collect();
    assert_eq!(ids, RuleId::ALL);
    let invariants: Vec<&str> = report.rules.iter().map(|r| r.invariant).collect();
    assert_eq!(
        invariants,
        [
            "Q-INV-01", "Q-INV-01", "Q-INV-01", "Q-INV-01", "Q-INV-01", "Q-INV-03", "Q-INV-03",
            "Q-INV-03"
        ]
    );
    assert_eq!(report.verdict, Verdict::Pass);
}

#[test]
fn sourcing_records_each_sentence_its_fact_and_direction() {
    let report = check(&case(
        &["", "The minimum age is 65.", "age is 68"],
        "  Your AGE is 68. The minimum age is 65! Payments are guaranteed?",
    ));
    let sentences: Vec<&Evidence> = rule(&report, RuleId::Prec004).evidence.iter().collect();
    assert_eq!(
        sentences,
        [
            &Evidence::Sentence {
                index: 0,
                offset: 2,
                text: "your age is 68".to_owned(),
                source: Some(Source {
                    fact_index: 2,
                    fact: "age is 68".to_owned(),
                    direction: MatchDirection::SentenceContainsFact,
                }),
            },
            &Evidence::Sentence {
                index: 1,
                offset: 18,
                text: "the minimum age is 65".to_owned(),
                source: Some(Source {
                    fact_index: 1,
                    fact: "the minimum age is 65.".to_owned(),
                    direction: MatchDirection::FactContainsSentence,
                }),
            },
            &Evidence::Sentence {
                index: 2,
                offset: 41,
                text: "payments are guaranteed".to_owned(),
                source: None,
            },
        ]
    );
    let prec_001 = rule(&report, RuleId::Prec001);
    assert_eq!(
        prec_001.evidence.last(),
        Some(&Evidence::UnsupportedCount {
            unsupported: 1,
            max: 0
        })
    );
    assert_eq!(prec_001.evidence.len(), 4);
    let prec_004 = rule(&report, RuleId::Prec004);
    assert_eq!(prec_004.violations.len(), 1);
    assert_eq!(prec_004.violations[0].invariant, "Q-INV-01");
    assert!(
        prec_004.violations[0]
            .message
            .contains("payments are guaranteed")
    );
}

#[test]
fn unsupported_max_relaxes_prec_001_only() {
    let output = "Your age is 68. Payments start soon. Visit the office.";
    let facts = ["your age is 68"];
    let strict = check(&case(&facts, output));
    assert_eq!(failed(&strict), [RuleId::Prec001, RuleId::Prec004]);

    let mut lenient = case(&facts, output);
    lenient.config.unsupported_max = Some(2);
    let report = check(&lenient);
    assert_eq!(failed(&report), [RuleId::Prec004]);
    assert_eq!(rule(&report, RuleId::Prec004).violations.len(), 2);
    assert_eq!(report.verdict, Verdict::Fail);

    lenient.config.unsupported_max = Some(1);
    assert_eq!(failed(&check(&lenient)), [RuleId::Prec001, RuleId::Prec004]);
}

#[test]
fn case_config_falls_back_to_the_oracle_config() {
    let mut c = case(&[], "One claim.");
    let oracle = OracleConfig {
        unsupported_max: 1,
        added_words_max: None,
    };
    assert_eq!(failed(&check_with(&c, &oracle)), [RuleId::Prec004]);
    c.config.unsupported_max = Some(0);
    assert_eq!(
        failed(&check_with(&c, &oracle)),
        [RuleId::Prec001, RuleId::Prec004]
    );
}

#[test]
fn decimal_points_keep_a_sentence_whole() {
    let report = check(&case(
        &["₹1.8 lakh"],
        "Your income of ₹1.8 lakh is within the limit.",
    ));
    assert_eq!(report.verdict, Verdict::Pass);
    // Without the decimal exception "your income of ₹1" would be unsourced.
    let report = check(&case(
        &["₹1.8 lakh"],
        "Your income of ₹1. 8 lakh is within the limit.",
    ));
    assert_eq!(failed(&report), [RuleId::Prec001, RuleId::Prec004]);
}

#[test]
fn patterns_report_first_offsets_in_the_original_output() {
    let c = with_expected(
        case(&["é 68"], "É  68 and 68"),
        Expected {
            must_find: strings(&["É 68", "missing"]),
            must_not_find: strings(&["AND", "never"]),
            ..Expected::default()
        },
    );
    let report = check(&c);
    assert_eq!(failed(&report), [RuleId::Prec002, RuleId::Prec003]);
    assert_eq!(
        rule(&report, RuleId::Prec002).evidence,
        [
            Evidence::Pattern {
                pattern: "É 68".to_owned(),
                normalised: "é 68".to_owned(),
                found_at: Some(0),
            },
            Evidence::Pattern {
                pattern: "missing".to_owned(),
                normalised: "missing".to_owned(),
                found_at: None,
            },
        ]
    );
    let prec_003 = rule(&report, RuleId::Prec003);
    assert_eq!(
        prec_003.evidence[0],
        Evidence::Pattern {
            pattern: "AND".to_owned(),
            normalised: "and".to_owned(),
            found_at: Some(7),
        }
    );
    assert_eq!(prec_003.violations.len(), 1);
    assert!(prec_003.violations[0].message.contains("at byte 7"));
}

#[test]
fn empty_patterns_are_configuration_errors_not_rule_results() {
    let c = with_expected(
        case(&["x"], "x"),
        Expected {
            must_find: strings(&["x", " "]),
            must_not_find: strings(&[""]),
            ..Expected::default()
        },
    );
    let report = check(&c);
    assert_eq!(report.verdict, Verdict::Fail);
    assert!(failed(&report).is_empty());
    assert_eq!(
        report.errors,
        [
            ConfigError::EmptyPattern {
                list: "must_find",
                index: 1
            },
            ConfigError::EmptyPattern {
                list: "must_not_find",
                index: 0
            },
        ]
    );
    assert_eq!(
        rule(&report, RuleId::Prec003).evidence,
        [Evidence::EmptyPattern {
            index: 0,
            pattern: String::new()
        }]
    );
}

#[test]
fn contradiction_terms_are_whole_words_and_all_three_rules_agree() {
    let contradiction = |output: &str, id: &str| {
        let c = with_expected(
            case(&[output], output),
            Expected {
                contradiction_ids: strings(&[id]),
                ..Expected::default()
            },
        );
        failed(&check(&c))
    };
    let all = [RuleId::Cont001, RuleId::Cont002, RuleId::Cont003];
    assert!(contradiction("the card is invalid", "valid_invalid").is_empty());
    assert_eq!(
        contradiction("valid card, invalid proof", "valid_invalid"),
        all
    );
    assert!(contradiction("incorrectly correct", "correct_incorrect").is_empty());
    assert_eq!(
        contradiction("INCORRECT or Correct", "correct_incorrect"),
        all
    );
    assert!(contradiction("nevertheless always", "always_never").is_empty());
    assert_eq!(contradiction("always (never)", "always_never"), all);
    assert!(contradiction("increased, then decreased", "increase_decrease").is_empty());
}

#[test]
fn contradiction_evidence_and_wording() {
    let c = with_expected(
        case(&["it is false", "it is true"], "It is FALSE. It is true."),
        Expected {
            contradiction_ids: strings(&["true_false", "above_below"]),
            ..Expected::default()
        },
    );
    let report = check(&c);
    let cont_003 = rule(&report, RuleId::Cont003);
    assert_eq!(
        cont_003.evidence,
        [
            Evidence::Pair {
                contradiction_id: "true_false".to_owned(),
                terms: [
                    TermHit {
                        term: "true",
                        found_at: Some(19)
                    },
                    TermHit {
                        term: "false",
                        found_at: Some(6)
                    },
                ],
                contradiction: true,
            },
            Evidence::Pair {
                contradiction_id: "above_below".to_owned(),
                terms: [
                    TermHit {
                        term: "above",
                        found_at: None
                    },
                    TermHit {
                        term: "below",
                        found_at: None
                    },
                ],
                contradiction: false,
            },
        ]
    );
    assert_eq!(cont_003.violations.len(), 1);
    assert_eq!(cont_003.violations[0].invariant, "Q-INV-03");
    assert_eq!(
        cont_003.violations[0].message,
        "assertion then infirmation (true_false): \"false\" at byte 6 is followed by \"true\" at byte 19"
    );
    for id in [RuleId::Cont001, RuleId::Cont002] {
        let r = rule(&report, id);
        assert_eq!(r.evidence, cont_003.evidence);
        assert_eq!(r.violations.len(), 1);
        assert_ne!(r.violations[0].message, cont_003.violations[0].message);
    }
}

#[test]
fn unknown_contradiction_id_fails_the_case_visibly() {
    let c = with_expected(
        case(&["x"], "x"),
        Expected {
            contradiction_ids: strings(&["yes_no", "true_false"]),
            ..Expected::default()
        },
    );
    let report = check(&c);
    assert_eq!(report.verdict, Verdict::Fail);
    assert!(failed(&report).is_empty());
    assert_eq!(
        report.errors,
        [ConfigError::UnknownContradictionId {
            index: 0,
            id: "yes_no".to_owned()
        }]
    );
    assert_eq!(
        rule(&report, RuleId::Cont001).evidence[0],
        Evidence::UnknownContradictionId {
            contradiction_id: "yes_no".to_owned()
        }
    );
    let json = serde_json::to_string(&report.errors).unwrap();
    assert_eq!(
        json,
        r#"[{"kind":"unknown_contradiction_id","index":0,"id":"yes_no"}]"#
    );
}

#[test]
fn report_json_has_a_stable_shape() {
    let c = with_expected(
        case(&["Your age is 68"], "Your age is 68."),
        Expected {
            must_find: strings(&["68"]),
            contradiction_ids: strings(&["true_false"]),
            ..Expected::default()
        },
    );
    let json = serde_json::to_string(&check(&c)).unwrap();
    let sentence = r#"{"step":"sentence","index":0,"offset":0,"text":"your age is 68","source":{"fact_index":0,"fact":"your age is 68","match":"fact_contains_sentence"}}"#;
    let pair = r#"{"step":"pair","contradiction_id":"true_false","terms":[{"term":"true","found_at":null},{"term":"false","found_at":null}],"contradiction":false}"#;
    let pass = |id: &str, invariant: &str, evidence: &str| {
        format!(
            r#"{{"rule_id":"{id}","invariant":"{invariant}","verdict":"PASS","violations":[],"evidence":[{evidence}]}}"#
        )
    };
    let expected = format!(
        r#"{{"id":"t","verdict":"PASS","rules":[{},{},{},{},{},{},{},{}],"errors":[]}}"#,
        pass(
            "RULE-PREC-001",
            "Q-INV-01",
            &format!(r#"{sentence},{{"step":"unsupported_count","unsupported":0,"max":0}}"#)
        ),
        pass(
            "RULE-PREC-002",
            "Q-INV-01",
            r#"{"step":"pattern","pattern":"68","normalised":"68","found_at":12}"#
        ),
        pass("RULE-PREC-003", "Q-INV-01", ""),
        pass("RULE-PREC-004", "Q-INV-01", sentence),
        pass(
            "RULE-PREC-005",
            "Q-INV-01",
            r#"{"step":"not_configured","key":"ADDED_WORDS_MAX"}"#
        ),
        pass("RULE-CONT-001", "Q-INV-03", pair),
        pass("RULE-CONT-002", "Q-INV-03", pair),
        pass("RULE-CONT-003", "Q-INV-03", pair),
    );
    assert_eq!(json, expected);
}

#[test]
fn added_words_bound_what_a_sentence_says_beside_its_facts() {
    let facts = [
        "you are eligible for the old age pension",
        "the benefit amount is ₹1,200 a month",
    ];
    // One sentence (no full stop between them) that contains a fact and then goes on: PREC-004
    // sources it; PREC-005 counts what it adds.
    let output = "You are eligible for the old age pension, whose work by doing work is savings";
    let mut c = case(&facts, output);
    assert_eq!(
        failed(&check(&c)),
        [],
        "not applied without ADDED_WORDS_MAX"
    );
    assert!(matches!(
        rule(&check(&c), RuleId::Prec005).evidence[..],
        [Evidence::NotConfigured {
            key: "ADDED_WORDS_MAX"
        }]
    ));
    c.config.added_words_max = Some(3);
    let report = check(&c);
    assert_eq!(failed(&report), [RuleId::Prec005]);
    let prec_005 = rule(&report, RuleId::Prec005);
    assert_eq!(prec_005.violations.len(), 1);
    assert!(
        prec_005.violations[0].message.contains("adds 7 word(s)"),
        "{:?}",
        prec_005.violations
    );

    // Facts said whole, joined by a few words, a fact's part, or on their own: within the limit.
    for fine in [
        "You are eligible for the old age pension, and the benefit amount is ₹1,200 a month.",
        "The benefit amount is ₹1,200 a month. You are eligible for the old age pension.",
        "Old age pension.",
        "You are eligible for the old age pension\nthe benefit amount is ₹1,200 a month",
    ] {
        let mut c = case(&facts, fine);
        c.config.added_words_max = Some(3);
        assert_eq!(failed(&check(&c)), [], "{fine}");
    }
    // Two facts joined by a line with a garbled word: the garbled line is added words.
    let mut c = case(
        &facts,
        "You are eligible for the old age pension tyatha three free refills\nthe benefit amount is ₹1,200 a month",
    );
    c.config.added_words_max = Some(3);
    assert_eq!(failed(&check(&c)), [RuleId::Prec005]);
    // The oracle's own config sets it where the case does not.
    let c = case(&facts, output);
    let oracle = OracleConfig {
        unsupported_max: 0,
        added_words_max: Some(3),
    };
    assert_eq!(failed(&check_with(&c, &oracle)), [RuleId::Prec005]);
}
