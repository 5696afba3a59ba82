//! The words of gaps and next steps (docs/semantics.md, "Evaluation": gaps in plain language).
//!
//! A golden table: for each field type and operator, with the citizen's value known and
//! unknown, the sentence a caseworker would write, written here by hand. Then a lint over the
//! bundled corpus and many profiles: no sentence keeps a code, a machine phrase ("it is yes",
//! "must be including") or an empty "what next".

use engine::gaps::GapKind;
use engine::load::parse_rule_yaml;
use engine::value::{FieldValue, Scalar};
use engine::{Catalogue, Date, Profile, Verdict, evaluate};
use serde_json::{Value, json};

const AS_OF: &str = "2025-01-15";

fn rule_text(condition: &str, exclusion: Option<&str>) -> String {
    let exclusions = exclusion.map_or(String::new(), |e| format!("exclusions:\n  - {e}\n"));
    format!(
        r#"schema_version: "1.0"
rule_id: "rule_words_test"
scheme_id: "sch_words_test"
scheme_name: "Words test scheme"
state: "central"
effective_from: "2024-01-01"
version: 1
eligibility:
  operator: AND
  conditions:
    - {{field: demographics.district, operator: eq, value: mysuru}}
    - {condition}
{exclusions}"#
    )
}

/// The gap sentence of the leaf at `/eligibility/conditions/1` (or of the exclusion) for a
/// citizen of Mysuru with `identity` and `economic` as given.
fn sentence_of(condition: &str, exclusion: Option<&str>, fields: Value) -> String {
    let catalogue = Catalogue::bundled();
    let text = rule_text(condition, exclusion);
    let rule = parse_rule_yaml(&catalogue, &text, "words.yaml")
        .unwrap_or_else(|p| panic!("{p:#?}\n{text}"));
    let mut doc = json!({"demographics": {"district": "mysuru"}});
    for (namespace, values) in fields.as_object().unwrap() {
        doc[namespace] = values.clone();
    }
    let profile = Profile::from_json(&catalogue, &doc, "p").unwrap();
    let as_of = Date::parse(AS_OF).unwrap();
    let evaluation = evaluate(&catalogue, &rule, &profile, as_of).unwrap();
    let wanted = if exclusion.is_some() {
        "/exclusions/0"
    } else {
        "/eligibility/conditions/1"
    };
    let gap = evaluation
        .gaps
        .iter()
        .find(|g| g.path.starts_with(wanted))
        .unwrap_or_else(|| panic!("no gap at {wanted}: {:#?}", evaluation.gaps));
    gap.gap_description.to_string()
}

fn condition(condition: &str, fields: Value) -> String {
    sentence_of(condition, None, fields)
}

fn exclusion(exclusion: &str, mut fields: Value) -> String {
    // The eligibility condition holds, so the exclusion is what bars.
    fields["identity"] = json!({"gender": "female"});
    sentence_of(
        "{field: identity.gender, operator: eq, value: female}",
        Some(exclusion),
        fields,
    )
}

#[test]
fn integer_fields() {
    let age = |op_value: &str| format!("{{field: identity.age, {op_value}}}");
    let known = |a: i64| json!({"identity": {"age": a}});
    let cases = [
        (
            age("operator: gte, value: 60"),
            known(58),
            "You are 2 years below the minimum age of 60",
        ),
        (
            age("operator: gte, value: 60"),
            json!({}),
            "Tell us your age",
        ),
        (
            age("operator: lte, value: 40"),
            known(45),
            "You are 5 years above the maximum age of 40",
        ),
        (
            age("operator: gt, value: 17"),
            known(17),
            "You must be older than 17; you are 17",
        ),
        (
            age("operator: lt, value: 18"),
            known(20),
            "You must be younger than 18; you are 20",
        ),
        (
            age("operator: between, value: [18, 40]"),
            known(58),
            "You must be between 18 and 40 years old; you are 58",
        ),
        (
            age("operator: eq, value: 60"),
            known(61),
            "Your age must be 60; it is 61",
        ),
        (
            age("operator: neq, value: 60"),
            known(60),
            "Your age must not be 60; it is 60",
        ),
        (
            age("operator: in, value: [60, 65, 70]"),
            known(61),
            "Your age must be 60, 65 or 70; it is 61",
        ),
        (
            age("operator: not_in, value: [60, 65]"),
            known(65),
            "Your age must not be 60 or 65; it is 65",
        ),
        (
            "{field: family.children_count, operator: lte, value: 2}".into(),
            json!({"family": {"children_count": 3}}),
            "Your number of living children (3) is 1 above the limit of 2",
        ),
        (
            "{field: family.children_count, operator: lt, value: 3}".into(),
            json!({"family": {"children_count": 3}}),
            "Your number of living children (3) must be less than 3",
        ),
        (
            "{field: family.children_count, operator: gt, value: 0}".into(),
            json!({"family": {"children_count": 0}}),
            "Your number of living children (0) must be more than 0",
        ),
        (
            "{field: family.children_count, operator: lte, value: 2}".into(),
            json!({}),
            "Tell us how many living children you have",
        ),
    ];
    for (leaf, fields, expected) in cases {
        assert_eq!(condition(&leaf, fields), expected, "{leaf}");
    }
}

#[test]
fn number_fields() {
    let income = |op_value: &str| format!("{{field: economic.annual_income, {op_value}}}");
    let known = |i: i64| json!({"economic": {"annual_income": i}});
    let cases = [
        (
            income("operator: lte, value: 100000"),
            known(120_000),
            "Your annual household income (₹1,20,000) is ₹20,000 above the limit of ₹1,00,000",
        ),
        (
            income("operator: gte, value: 50000"),
            known(40_000),
            "Your annual household income (₹40,000) is ₹10,000 below the minimum of ₹50,000",
        ),
        (
            income("operator: between, value: [10000, 50000]"),
            known(60_000),
            "Your annual household income (₹60,000) must be between ₹10,000 and ₹50,000",
        ),
        (
            income("operator: lte, value: 100000"),
            json!({}),
            "Tell us your household's total income for the year",
        ),
        (
            "{field: economic.land_holding, operator: lte, value: 2}".into(),
            json!({"economic": {"land_holding": 2.5}}),
            "Your land holding (2.50 hectares) is 0.50 hectares above the limit of 2 hectares",
        ),
    ];
    for (leaf, fields, expected) in cases {
        assert_eq!(condition(&leaf, fields), expected, "{leaf}");
    }
}

#[test]
fn boolean_fields() {
    let bpl = |b: bool| json!({"economic": {"bpl_status": b}});
    let cases = [
        (
            "{field: economic.bpl_status, operator: eq, value: true}",
            bpl(false),
            "Your household is not on the Below Poverty Line (BPL) list; this scheme requires that your household is on the Below Poverty Line (BPL) list",
        ),
        (
            "{field: economic.bpl_status, operator: eq, value: true, label: \"Must be Below Poverty Line\"}",
            bpl(false),
            // The label states what must hold; the sentence is the field's own, label or not.
            "Your household is not on the Below Poverty Line (BPL) list; this scheme requires that your household is on the Below Poverty Line (BPL) list",
        ),
        (
            "{field: economic.bpl_status, operator: neq, value: true}",
            bpl(true),
            "Your household is on the Below Poverty Line (BPL) list; this scheme requires that your household is not on the Below Poverty Line (BPL) list",
        ),
        (
            "{field: economic.bpl_status, operator: eq, value: true}",
            json!({}),
            "Tell us whether your household is on the Below Poverty Line (BPL) list",
        ),
    ];
    for (leaf, fields, expected) in cases {
        assert_eq!(condition(leaf, fields), expected, "{leaf}");
    }
}

#[test]
fn string_fields() {
    let occupation = |o: &str| json!({"economic": {"occupation": o}});
    let category = |c: &str| json!({"identity": {"social_category": c}});
    let cases = [
        (
            "{field: economic.occupation, operator: in, value: [artisan, weaver, fisher]}",
            occupation("agricultural_labourer"),
            "Your occupation must be artisan, weaver or fisher; it is agricultural labourer",
        ),
        (
            "{field: economic.occupation, operator: eq, value: farmer}",
            occupation("student"),
            "Your occupation must be farmer; it is student",
        ),
        (
            "{field: economic.occupation, operator: neq, value: salaried}",
            occupation("salaried"),
            "Your occupation must not be salaried; it is salaried",
        ),
        (
            "{field: identity.social_category, operator: not_in, value: [sc, st]}",
            category("sc"),
            "Your social category must not be SC or ST; it is SC",
        ),
        (
            "{field: identity.social_category, operator: eq, value: obc}",
            category("general"),
            "Your social category must be OBC; it is General",
        ),
        (
            "{field: economic.occupation, operator: eq, value: farmer}",
            json!({}),
            "Tell us what work you do",
        ),
        (
            "{field: identity.social_category, operator: in, value: [sc, st]}",
            json!({}),
            "Tell us your social category (General, OBC, SC, ST or EWS)",
        ),
    ];
    for (leaf, fields, expected) in cases {
        assert_eq!(condition(leaf, fields), expected, "{leaf}");
    }
}

#[test]
fn date_fields() {
    let born = |d: &str| json!({"identity": {"date_of_birth": d}});
    let cases = [
        (
            "{field: identity.date_of_birth, operator: lt, value: \"1960-01-01\"}",
            born("1965-05-01"),
            "Your date of birth (1 May 1965) must be before 1 January 1960",
        ),
        (
            "{field: identity.date_of_birth, operator: gte, value: \"1990-01-01\"}",
            born("1985-05-01"),
            "Your date of birth (1 May 1985) must be on or after 1 January 1990",
        ),
        (
            "{field: identity.date_of_birth, operator: between, value: [\"1950-01-01\", \"1960-12-31\"]}",
            born("1965-05-01"),
            "Your date of birth (1 May 1965) must be between 1 January 1950 and 31 December 1960",
        ),
        (
            "{field: identity.date_of_birth, operator: lt, value: \"1960-01-01\"}",
            json!({}),
            "Tell us your date of birth",
        ),
    ];
    for (leaf, fields, expected) in cases {
        assert_eq!(condition(leaf, fields), expected, "{leaf}");
    }
}

#[test]
fn list_fields() {
    let documents = |d: Value| json!({"identity": {"verified_documents": d}});
    let cases = [
        (
            "{field: identity.verified_documents, operator: contains, value: pan}",
            documents(json!(["aadhaar"])),
            "Get your PAN card verified",
        ),
        (
            "{field: identity.verified_documents, operator: contains, value: pan}",
            json!({}),
            "Tell us which of your documents are verified",
        ),
        (
            "{field: identity.verified_documents, operator: not_contains, value: pan}",
            documents(json!(["pan", "aadhaar"])),
            "The scheme is not for people with a verified PAN card",
        ),
        (
            "{operator: OR, conditions: [{field: identity.verified_documents, operator: contains, value: age_proof}, {field: identity.verified_documents, operator: contains, value: birth_certificate}, {field: identity.verified_documents, operator: contains, value: voter_id}]}",
            documents(json!(["aadhaar"])),
            "Get your proof of age verified, or instead your birth certificate or voter ID",
        ),
        (
            "{operator: OR, conditions: [{field: identity.verified_documents, operator: contains, value: age_proof}, {field: identity.verified_documents, operator: contains, value: voter_id}]}",
            json!({}),
            "Tell us whether your proof of age is verified, or else your voter ID",
        ),
        (
            "{field: eligibility.active_schemes, operator: contains, value: sch_pmay_g}",
            json!({"eligibility": {"active_schemes": []}}),
            "This scheme requires that you already receive Pradhan Mantri Awaas Yojana - Gramin (PMAY-G); your schemes already received: none",
        ),
        (
            "{field: eligibility.active_schemes, operator: not_contains, value: sch_pmay_g}",
            json!({"eligibility": {"active_schemes": ["sch_pmay_g"]}}),
            "You already receive Pradhan Mantri Awaas Yojana - Gramin (PMAY-G), so this scheme is not for you",
        ),
    ];
    for (leaf, fields, expected) in cases {
        assert_eq!(condition(leaf, fields), expected, "{leaf}");
    }
}

/// docs/semantics.md, "Gaps": an exclusion is said as the fact that bars the citizen, from the
/// exclusion's field, operator and the citizen's value, whatever its label says (corpus labels
/// state what must hold: "Excluded: {label}" said the opposite).
#[test]
fn exclusions() {
    let cases = [
        // not_contains on the schemes a citizen receives: the scheme by name.
        (
            "{field: eligibility.active_schemes, operator: not_contains, value: sch_ka_sandhya_suraksha}",
            json!({"eligibility": {"active_schemes": ["sch_ka_sandhya_suraksha"]}}),
            "You already receive Sandhya Suraksha Yojana, so this scheme is not for you",
        ),
        (
            "{field: eligibility.active_schemes, operator: not_contains, value: sch_ignoaps, label: \"Must not already receive IGNOAPS\"}",
            json!({"eligibility": {"active_schemes": ["sch_pm_kisan", "sch_ignoaps"]}}),
            "You already receive Indira Gandhi National Old Age Pension Scheme (IGNOAPS), so this scheme is not for you",
        ),
        // not_contains on a list without a clause of its own.
        (
            "{field: household.secc_deprivations, operator: not_contains, value: d5_sc_st}",
            json!({"household": {"secc_deprivations": ["d5_sc_st"]}}),
            "Your household deprivations recorded in the 2011 census survey (SECC) include an SC or ST household (D5), so this scheme is not for you",
        ),
        // eq false on a yes/no field: the field's clause for the citizen's yes.
        (
            "{field: economic.is_government_employee, operator: eq, value: false}",
            json!({"economic": {"is_government_employee": true}}),
            "Someone in your household has a government job or has retired from one, so this scheme is not for you",
        ),
        (
            "{field: spouse.pays_income_tax, operator: eq, value: false, label: \"Your husband or wife did not pay income tax in the last assessment year\"}",
            json!({"spouse": {"pays_income_tax": true}}),
            "Your husband or wife paid income tax last year, so this scheme is not for you",
        ),
        // eq true: the clause for the citizen's no.
        (
            "{field: economic.has_bank_account, operator: eq, value: true}",
            json!({"economic": {"has_bank_account": false}}),
            "You do not have a savings bank account, so this scheme is not for you",
        ),
        // Limits: the value beside what the scheme needs, with units.
        (
            "{field: economic.irrigated_land_acres, operator: lt, value: 2.5}",
            json!({"economic": {"irrigated_land_acres": 3}}),
            "Your irrigated (wet) land is 3 acres, but the scheme needs less than 2.50 acres, so this scheme is not for you",
        ),
        (
            "{field: household.highest_member_monthly_income, operator: lte, value: 15000}",
            json!({"household": {"highest_member_monthly_income": 20000}}),
            "Your highest monthly income of any household member is ₹20,000, but the scheme needs at most ₹15,000, so this scheme is not for you",
        ),
        (
            "{field: household.annual_electricity_units, operator: lt, value: 3600}",
            json!({"household": {"annual_electricity_units": 4000}}),
            "Your household electricity use in a year is 4,000 units of electricity a year, but the scheme needs less than 3,600 units of electricity a year, so this scheme is not for you",
        ),
        // A category.
        (
            "{field: economic.occupation, operator: not_in, value: [salaried, business]}",
            json!({"economic": {"occupation": "salaried"}}),
            "Your occupation is salaried, but the scheme needs none of salaried, business, so this scheme is not for you",
        ),
        (
            "{field: economic.is_government_employee, operator: eq, value: false}",
            json!({}),
            "Tell us whether anyone in your household has a government job or has retired from one",
        ),
    ];
    for (leaf, fields, expected) in cases {
        assert_eq!(exclusion(leaf, fields), expected, "{leaf}");
    }
}

/// Machine phrases that must never reach a citizen.
const LEFTOVERS: &[&str] = &[
    "it is yes",
    "it is no",
    "must be including",
    "must be without",
    "needed to check",
    "must be not",
    "must be one of",
    "  ",
    "_",
    "{",
    "[",
    "Some(",
    "None",
];

/// Whether `phrase` occurs in `sentence` not as the start of a longer word ("it is no" is not
/// in "it is none").
fn contains_phrase(sentence: &str, phrase: &str) -> bool {
    sentence.match_indices(phrase).any(|(at, _)| {
        !phrase.ends_with(|c: char| c.is_alphanumeric())
            || !sentence[at + phrase.len()..].starts_with(|c: char| c.is_alphanumeric())
    })
}

fn bundled_rules(catalogue: &Catalogue) -> Vec<engine::Rule> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemes");
    let mut rules = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(root)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                let text = std::fs::read_to_string(&path).unwrap();
                rules.push(parse_rule_yaml(catalogue, &text, &path.display().to_string()).unwrap());
            }
        }
    }
    rules
}

/// Profiles that reach many gaps: the examples, and each with one field family removed or
/// turned the other way.
fn lint_profiles(catalogue: &Catalogue) -> Vec<Profile> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/profiles");
    let mut docs = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let mut emptied = doc.clone();
        for namespace in ["economic", "family", "household"] {
            emptied[namespace] = json!({});
        }
        let mut flipped = doc.clone();
        if let Some(economic) = flipped["economic"].as_object_mut() {
            for value in economic.values_mut() {
                if let Some(b) = value.as_bool() {
                    *value = (!b).into();
                }
            }
        }
        flipped["eligibility"]["active_schemes"] =
            json!(["sch_ka_sandhya_suraksha", "sch_pm_kisan"]);
        docs.extend([doc, emptied, flipped]);
    }
    docs.iter()
        .map(|d| Profile::from_json(catalogue, d, "lint").unwrap())
        .collect()
}

#[test]
fn no_sentence_of_the_corpus_keeps_a_code_or_a_machine_phrase_and_every_verdict_says_what_next() {
    let catalogue = Catalogue::bundled();
    let rules = bundled_rules(&catalogue);
    let profiles = lint_profiles(&catalogue);
    let (mut checked, mut exclusions) = (0, 0);
    for as_of in ["2025-01-15", "2026-06-01"] {
        let as_of = Date::parse(as_of).unwrap();
        for profile in &profiles {
            let profile = profile.on(as_of);
            for rule in &rules {
                let Ok(evaluation) = evaluate(&catalogue, rule, &profile, as_of) else {
                    continue;
                };
                let sentences: Vec<String> = evaluation
                    .gaps
                    .iter()
                    .map(|g| g.gap_description.to_string())
                    .chain(evaluation.next_steps.iter().map(|s| s.to_string()))
                    .collect();
                // No sentence twice in one result: not among the next steps, and not among the
                // gaps, except the one question of an unknown field that several conditions
                // read (each is a gap of its own; the steps ask it once).
                let known = evaluation
                    .gaps
                    .iter()
                    .map(|g| g.gap_kind != GapKind::MissingData);
                let gap_texts = sentences
                    .iter()
                    .zip(known)
                    .filter(|(_, k)| *k)
                    .map(|(s, _)| s);
                for list in [
                    gap_texts.collect::<Vec<_>>(),
                    sentences[evaluation.gaps.len()..].iter().collect(),
                ] {
                    let mut seen = std::collections::HashSet::new();
                    for sentence in list {
                        assert!(
                            seen.insert(sentence),
                            "{}: {sentence:?} said twice in one result",
                            rule.rule_id
                        );
                    }
                }
                for gap in &evaluation.gaps {
                    if gap.gap_kind == GapKind::Exclusion {
                        exclusions += 1;
                        assert_names_the_bar(&catalogue, gap);
                    }
                }
                // A fact the citizen cannot change that shuts the scheme (alone, or in every
                // branch of an OR of alternatives).
                if engine::next_steps::blocked(&evaluation.gaps) {
                    for step in &evaluation.next_steps {
                        let step = step.to_string();
                        assert!(
                            !step.starts_with("Get your") && !step.contains("apply at"),
                            "{}: a step that presumes a blocking gap closes: {step:?}",
                            rule.rule_id
                        );
                    }
                }
                for sentence in &sentences {
                    let portal = sentence.to_lowercase().contains("apply at ");
                    for leftover in LEFTOVERS.iter().filter(|l| !(portal && **l == "_")) {
                        assert!(
                            !contains_phrase(sentence, leftover),
                            "{}: {leftover:?} in {sentence:?}",
                            rule.rule_id
                        );
                    }
                    checked += 1;
                }
                assert!(
                    !evaluation.next_steps.is_empty(),
                    "{}: a {} verdict with nothing next",
                    rule.rule_id,
                    evaluation.verdict.name()
                );
                if evaluation.verdict == Verdict::Eligible {
                    assert!(evaluation.gaps.is_empty());
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} sentences checked");
    assert!(
        exclusions > 100,
        "only {exclusions} exclusion sentences checked"
    );
}

/// An exclusion's sentence names the fact that barred the citizen: the yes/no field's clause
/// for the citizen's value, the barred item of a list by its words, or the citizen's value.
fn assert_names_the_bar(catalogue: &Catalogue, gap: &engine::gaps::Gap) {
    let sentence = gap.gap_description.to_string();
    assert!(
        sentence.ends_with(", so this scheme is not for you"),
        "{sentence:?}"
    );
    let spec = catalogue.field(catalogue.id(gap.field).unwrap());
    let lower = sentence.to_lowercase();
    let named = match gap.actual.unwrap() {
        FieldValue::Scalar(Scalar::Bool(b)) => spec.when(*b).unwrap().to_lowercase(),
        FieldValue::List(_) => {
            let item = gap.required.as_str().unwrap();
            spec.value_words
                .get(item)
                .cloned()
                .unwrap_or_else(|| item.replace('_', " "))
                .to_lowercase()
        }
        FieldValue::Scalar(Scalar::Int(n)) => engine::format::IndianNumber(*n as f64).to_string(),
        FieldValue::Scalar(Scalar::Num(n)) => engine::format::IndianNumber(*n).to_string(),
        // A coded value, in the catalogue's words for it.
        FieldValue::Scalar(Scalar::Str(code)) => spec
            .value_words
            .get(code.as_str())
            .cloned()
            .unwrap_or_else(|| code.replace('_', " "))
            .to_lowercase(),
        FieldValue::Scalar(other) => format!("{other:?}"),
    };
    assert!(
        lower.contains(&named),
        "{}: {sentence:?} does not name the value that barred ({named:?})",
        gap.field
    );
}

/// docs/semantics.md, "Evaluation" 8: every kind of next step, as a caseworker would write it.
#[test]
fn next_step_kinds() {
    let catalogue = Catalogue::bundled();
    let text = r#"schema_version: "1.0"
rule_id: "rule_steps_test"
scheme_id: "sch_steps_test"
scheme_name: "Steps test scheme"
state: "central"
effective_from: "2024-01-01"
version: 1
eligibility:
  operator: AND
  conditions:
    - {field: identity.age, operator: gte, value: 60}
    - {field: economic.bpl_status, operator: eq, value: true}
    - {field: identity.marital_status, operator: eq, value: widowed}
    - {field: identity.verified_documents, operator: contains, value: death_certificate_of_spouse}
exclusions:
  - {field: economic.receives_government_pension, operator: eq, value: false, label: "Must not draw a government pension"}
documents_required: ["aadhaar", "age_proof", "bank_passbook"]
application: {portal_url: "https://nsap.nic.in/"}
"#;
    let rule = parse_rule_yaml(&catalogue, text, "steps.yaml").unwrap();
    let steps = |doc: Value| steps_of(&catalogue, &rule, doc);
    let widow = |age: i64, documents: Value, pension: bool| {
        json!({"identity": {"age": age, "marital_status": "widowed", "verified_documents": documents},
               "economic": {"bpl_status": true, "receives_government_pension": pension}})
    };
    // Apply, and keep ready: every document, joined with "and".
    assert_eq!(
        steps(widow(65, json!(["death_certificate_of_spouse"]), false)),
        (
            "ELIGIBLE",
            vec![
                "Apply at nsap.nic.in".to_string(),
                "Keep ready: Aadhaar card, proof of age and bank passbook".to_string()
            ]
        )
    );
    // Gaps the citizen can close (an age to wait for, a document), then where to apply.
    assert_eq!(
        steps(widow(58, json!(["death_certificate_of_spouse"]), false)),
        (
            "PARTIAL_MATCH",
            vec![
                "You are 2 years below the minimum age of 60".to_string(),
                "When you meet these conditions, apply at nsap.nic.in".to_string()
            ]
        )
    );
    assert_eq!(
        steps(widow(65, json!([]), false)),
        (
            "PARTIAL_MATCH",
            vec![
                "Get your death certificate of your husband or wife verified".to_string(),
                "When you meet these conditions, apply at nsap.nic.in".to_string()
            ]
        )
    );
    // A married woman: her category blocks the scheme, so no document step presumes otherwise.
    let mut married = widow(65, json!([]), false);
    married["identity"]["marital_status"] = json!("married");
    assert_eq!(
        steps(married),
        (
            "PARTIAL_MATCH",
            vec![
                "This scheme is not for you: Your marital status must be widowed; it is married"
                    .to_string()
            ]
        )
    );
    // An exclusion: its own sentence says the scheme is not for the citizen.
    assert_eq!(
        steps(widow(65, json!(["death_certificate_of_spouse"]), true)),
        (
            "NOT_ELIGIBLE",
            vec![
                "You draw a pension from government service, so this scheme is not for you"
                    .to_string()
            ]
        )
    );
    // A question whose answer could change the verdict.
    assert_eq!(
        steps(json!({"identity": {"age": 65, "verified_documents": ["death_certificate_of_spouse"]}, "economic": {"bpl_status": true, "receives_government_pension": false}})),
        (
            "PARTIAL_MATCH",
            vec![
                "Tell us whether you are married, never married, widowed, divorced, separated or deserted".to_string(),
                "When you meet these conditions, apply at nsap.nic.in".to_string()
            ]
        )
    );
}

/// The verdict and next steps of `rule` for the profile `doc`, on [`AS_OF`].
fn steps_of(catalogue: &Catalogue, rule: &engine::Rule, doc: Value) -> (&'static str, Vec<String>) {
    let profile = Profile::from_json(catalogue, &doc, "p").unwrap();
    let e = evaluate(catalogue, rule, &profile, Date::parse(AS_OF).unwrap()).unwrap();
    let steps: Vec<String> = e.next_steps.iter().map(|s| s.to_string()).collect();
    (e.verdict.name(), steps)
}

#[test]
fn alternatives_are_said_together_never_each_as_a_requirement() {
    // An OR of conditions: a land limit that Scheduled Castes are exempt from, and, nested,
    // a widow's route (BPL list or low income) beside a disabled person's.
    let catalogue = Catalogue::bundled();
    let text = r#"schema_version: "1.0"
rule_id: "rule_alternatives_test"
scheme_id: "sch_alternatives_test"
scheme_name: "Alternatives test scheme"
state: "central"
effective_from: "2024-01-01"
version: 1
eligibility:
  operator: AND
  conditions:
    - {field: identity.age, operator: gte, value: 18}
    - operator: OR
      conditions:
        - {field: economic.land_holding, operator: lt, value: 0.81}
        - {field: identity.social_category, operator: eq, value: sc}
    - operator: OR
      conditions:
        - operator: AND
          conditions:
            - {field: identity.marital_status, operator: eq, value: widowed}
            - operator: OR
              conditions:
                - {field: economic.bpl_status, operator: eq, value: true}
                - {field: economic.annual_income, operator: lte, value: 21000}
        - {field: identity.disability_percentage, operator: gte, value: 40}
application: {portal_url: "https://example.gov.in/"}
"#;
    let rule = parse_rule_yaml(&catalogue, text, "alternatives.yaml").unwrap();
    let steps = |doc: Value| steps_of(&catalogue, &rule, doc);
    let citizen = |land: f64, category: &str, bpl: bool, income: i64, disability: i64| {
        json!({"identity": {"age": 40, "social_category": category, "marital_status": "widowed",
                            "disability_percentage": disability},
               "economic": {"land_holding": land, "bpl_status": bpl, "annual_income": income}})
    };
    // Too much land, not SC: one step names both ways in, as alternatives.
    assert_eq!(
        steps(citizen(1.5, "general", true, 30000, 0)),
        (
            "PARTIAL_MATCH",
            vec![
                "This scheme is not for you: Your land holding (1.50 hectares) must be less than \
                 0.81 hectares; or instead: Your social category must be SC; it is General"
                    .to_string()
            ]
        )
    );
    // Neither on the BPL list nor under the income limit, and not disabled: three ways in,
    // any one of which would do (the widow's two, nested, and the disabled person's).
    assert_eq!(
        steps(citizen(0.5, "general", false, 30000, 0)),
        (
            "PARTIAL_MATCH",
            vec![
                "This scheme is not for you: Your household is not on the Below Poverty Line \
                 (BPL) list; this scheme requires that your household is on the Below Poverty \
                 Line (BPL) list; or instead: Your annual household income (₹30,000) is ₹9,000 \
                 above the limit of ₹21,000; or instead: Your certified disability (0 percent) \
                 is 40 percent below the minimum of 40 percent"
                    .to_string()
            ]
        )
    );
    // An alternative the citizen can still answer leaves the way open: no "not for you".
    assert_eq!(
        steps(
            json!({"identity": {"age": 40, "marital_status": "widowed", "disability_percentage": 0},
                     "economic": {"land_holding": 1.5, "bpl_status": true}})
        ),
        (
            "PARTIAL_MATCH",
            vec![
                "Your land holding (1.50 hectares) must be less than 0.81 hectares; or instead: \
                 Tell us your social category (General, OBC, SC, ST or EWS)"
                    .to_string(),
                "When you meet these conditions, apply at example.gov.in".to_string()
            ]
        )
    );
}
