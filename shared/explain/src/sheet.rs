//! A review sheet for one language: the sentences its file makes, rendered from real corpus
//! evaluations beside the English, so a native speaker can read and mark one page
//! (docs/languages.md, "Review sheets"; `eligibility languages sheet <code>`).
//!
//! The sheet is generated from the bundled corpus and a fixed set of citizens: the same words
//! give the same sheet, and `docs/languages/<code>.md` is held equal to it by a test.

use std::collections::BTreeSet;
use std::fmt::Write;

use engine::catalogue::{DOCUMENTS, FieldType};
use engine::{Catalogue, Date, Profile, RuleSet, evaluate};
use serde_json::{Value as Json, json};

use crate::language::Language;
use crate::steps::{next_steps, summary};
use crate::{facts, need_to_know};

/// The day every sample is evaluated on.
const AS_OF: &str = "2025-01-15";

/// One sample: a corpus rule and a citizen that makes it say something worth reviewing.
struct Sample {
    rule_id: &'static str,
    /// What the sample shows, in English, for the reviewer.
    shows: &'static str,
    profile: fn() -> Json,
}

fn karnataka(age: i64, documents: Json, active: Json) -> Json {
    json!({"identity": {"age": age, "verified_documents": documents},
           "demographics": {"state": "karnataka"},
           "economic": {"bpl_status": true, "is_government_employee": false},
           "eligibility": {"active_schemes": active}})
}

const SAMPLES: &[Sample] = &[
    Sample {
        rule_id: "rule_ka_oap_001",
        shows: "eligible: the verdict, conditions met, the benefit, where to apply, documents to keep ready (all needed)",
        profile: || karnataka(68, json!(["aadhaar"]), json!([])),
    },
    Sample {
        rule_id: "rule_ka_oap_001",
        shows: "not yet eligible: an age below the minimum, with the distance and the date it closes",
        profile: || karnataka(58, json!(["aadhaar"]), json!([])),
    },
    Sample {
        rule_id: "rule_ka_oap_001",
        shows: "documents of which any one will do",
        profile: || karnataka(68, json!(["pan"]), json!([])),
    },
    Sample {
        rule_id: "rule_ka_oap_001",
        shows: "barred because the citizen already receives another scheme (named)",
        profile: || karnataka(68, json!(["aadhaar"]), json!(["sch_ka_sandhya_suraksha"])),
    },
    Sample {
        rule_id: "rule_ka_oap_001",
        shows: "facts the profile lacks: questions, and the summary that answers could change the verdict",
        profile: || json!({"identity": {"age": 65}, "demographics": {"state": "karnataka"}}),
    },
    Sample {
        rule_id: "rule_central_pm_kisan_002",
        shows: "barred by a yes/no fact (the husband or wife paid income tax)",
        profile: || {
            json!({"identity": {"verified_documents": ["land_record", "aadhaar"]},
                   "economic": {"land_holding": 1.5, "has_bank_account": true, "pays_income_tax": false,
                                "in_government_service": false, "receives_government_pension": false},
                   "spouse": {"pays_income_tax": true, "in_government_service": false,
                              "receives_government_pension": false}})
        },
    },
    Sample {
        rule_id: "rule_pb_oap_002",
        shows: "values over a limit: income and land in acres",
        profile: || {
            json!({"identity": {"age": 62, "gender": "female"}, "demographics": {"state": "punjab"},
                   "economic": {"monthly_income": 8000, "irrigated_land_acres": 3,
                                "unirrigated_land_acres": 1, "receives_government_pension": false}})
        },
    },
    Sample {
        rule_id: "rule_central_ignwps_001",
        shows: "a married woman and a widow's pension: a gap she cannot close, and no document step",
        profile: || {
            json!({"identity": {"age": 65, "gender": "female", "marital_status": "married",
                                "verified_documents": []},
                   "economic": {"bpl_status": true}, "eligibility": {"active_schemes": []}})
        },
    },
    Sample {
        rule_id: "rule_central_pmjjby_003",
        shows: "insurance: a cover, not money paid",
        profile: || json!({"identity": {"age": 30}, "economic": {"has_bank_account": true}}),
    },
    Sample {
        rule_id: "rule_central_stand_up_india_001",
        shows: "a loan limit, not money paid",
        profile: || {
            json!({"identity": {"age": 30, "social_category": "sc", "gender": "female",
                                "verified_documents": ["pan"]}})
        },
    },
    Sample {
        rule_id: "rule_central_apy_003",
        shows: "a contributory pension: slabs the citizen's contribution chooses",
        profile: || {
            json!({"identity": {"age": 25},
                   "economic": {"has_bank_account": true, "has_ever_paid_income_tax": false}})
        },
    },
    Sample {
        rule_id: "rule_central_nfsa_pmgkay_001",
        shows: "a benefit in kind (food grain)",
        profile: || {
            json!({"identity": {"verified_documents": ["ration_card"]},
                   "economic": {"ration_card_type": "aay"}})
        },
    },
    Sample {
        rule_id: "rule_mh_sgnay_004",
        shows: "conditions any one of which would do, none met: said together, joined by \"or instead\", never each as a requirement",
        profile: || {
            json!({"identity": {"age": 30, "gender": "female", "marital_status": "widowed",
                                "disability_percentage": 0, "verified_documents": ["income_certificate"]},
                   "demographics": {"state": "maharashtra"},
                   "economic": {"annual_income": 30000, "bpl_status": false},
                   "eligibility": {"active_schemes": []}})
        },
    },
];

/// The review sheet of `language` (Markdown).
pub fn review_sheet(language: Language) -> String {
    let catalogue = Catalogue::bundled();
    let rules = RuleSet::bundled(&catalogue).expect("the bundled corpus loads");
    let as_of = Date::parse(AS_OF).expect("a date");
    let code = language.code();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Review sheet: {} (`{code}`)\n\n\
         Generated by `eligibility languages sheet {code}` from `shared/explain/languages/{code}.yaml`; \
         do not edit by hand (a test holds this file equal to the generator). Review status of the \
         file: **{}**. Mark a wrong sentence in the last column and send the correction as an edit \
         of the language file (docs/languages.md, \"Review sheets\").\n",
        language.name(),
        language.review()
    );
    let mut seen = BTreeSet::new();
    let mut number = 0;
    for (i, sample) in SAMPLES.iter().enumerate() {
        let rule = rules
            .rules
            .iter()
            .find(|r| r.rule_id == sample.rule_id)
            .unwrap_or_else(|| panic!("no corpus rule {}", sample.rule_id));
        let profile =
            Profile::from_json(&catalogue, &(sample.profile)(), "sheet").expect("a valid profile");
        let profile = profile.on(as_of);
        let evaluation = evaluate(&catalogue, rule, &profile, as_of).expect("in force");
        // Facts, the summary and the steps, each paired with the English one it translates
        // (English alone adds the rule's free-text benefit description, the last fact).
        let said = |language: Language| {
            [
                facts(&evaluation, &catalogue, language).texts(),
                vec![summary(&evaluation, language)],
                next_steps(&evaluation, &catalogue, language),
            ]
        };
        let _ = writeln!(
            out,
            "## {}. {} — {}\n\n| # | English | {} | ✓ / correction |\n|---|---|---|---|",
            i + 1,
            rule.scheme_name,
            sample.shows,
            language.name()
        );
        let pairs = said(Language::En)
            .into_iter()
            .zip(said(language))
            .flat_map(|(english, theirs)| english.into_iter().zip(theirs));
        // A pair already on the sheet is not repeated; the same English in other words is
        // (a next step and the gap it says read alike in English only).
        for (english, theirs) in pairs {
            if seen.insert((english.clone(), theirs.clone())) {
                number += 1;
                row(&mut out, number, &english, &theirs);
            }
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "## Questions\n\nHow a citizen is asked for each fact (and the need-to-know wrapper).\n\n\
         | # | English | {} | ✓ / correction |\n|---|---|---|---|",
        language.name()
    );
    let words = language.words();
    for field in catalogue.fields() {
        let theirs = words.question(field).unwrap_or_default();
        number += 1;
        row(
            &mut out,
            number,
            field.question.as_deref().unwrap_or_default(),
            &need_to_know(language, &theirs),
        );
    }
    let _ = writeln!(
        out,
        "\n## Yes/no facts\n\nEach yes/no fact as a whole sentence, for yes and for no.\n\n\
         | # | English | {} | ✓ / correction |\n|---|---|---|---|",
        language.name()
    );
    for field in catalogue
        .fields()
        .iter()
        .filter(|f| f.field_type == FieldType::Boolean)
    {
        for value in [true, false] {
            number += 1;
            row(
                &mut out,
                number,
                field.when(value).unwrap_or_default(),
                &words.clause(field, value).unwrap_or_default(),
            );
        }
    }
    let coded = [
        (DOCUMENTS, "Documents"),
        ("eligibility.active_schemes", "Scheme names"),
    ];
    for (name, heading) in coded {
        let _ = writeln!(
            out,
            "\n## {heading}\n\n| # | English | {} | ✓ / correction |\n|---|---|---|---|",
            language.name()
        );
        let field = catalogue.field(catalogue.id(name).expect("a catalogue field"));
        let codes: BTreeSet<&String> = field
            .values
            .iter()
            .flatten()
            .chain(field.value_words.keys())
            .collect();
        for code in codes {
            number += 1;
            row(
                &mut out,
                number,
                &Language::En.words().value(field, code),
                &words.value(field, code),
            );
        }
    }
    out
}

fn row(out: &mut String, number: usize, english: &str, theirs: &str) {
    let cell = |text: &str| text.replace('|', "\\|");
    let _ = writeln!(out, "| {number} | {} | {} | |", cell(english), cell(theirs));
}
