//! The corpus lint of every language (docs/languages.md, "Checks"): every sentence kind, for
//! every bundled rule and many citizens, in every language but English, holds no word in Latin
//! letters outside the language's own allow-list (`latin_words`), no placeholder left, and no
//! sentence twice among the next steps. "One letter of the script per sentence" let "aadhaar
//! card", "acres" and "sch ignoaps" through; this does not.
//!
//! Also the review sheets: `docs/languages/<code>.md` is what `eligibility languages sheet
//! <code>` prints today.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use engine::Profile;
use engine::catalogue::FieldType;
use engine::temporal::applicability;
use explain::{Language, facts, next_steps, review_sheet, summary};
use serde_json::{Map, Value as Json, json};
use support::{BUNDLED, catalogue, evaluation, on, profile, rule};

/// The words in Latin letters of `sentence` (runs of ASCII letters, with inner `-`), leaving
/// out web addresses (a portal: "sevasindhu.karnataka.gov.in").
fn latin_words(sentence: &str) -> Vec<&str> {
    sentence
        .split(|c: char| c.is_whitespace() || "()[],;:।॥؛،'\"".contains(c))
        .filter(|token| !token.contains('.') || !token.contains(|c: char| c.is_ascii_alphabetic()))
        .flat_map(|token| {
            token
                .split(|c: char| !(c.is_ascii_alphabetic() || c == '-'))
                .map(|w| w.trim_matches('-'))
        })
        .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
        .collect()
}

/// Citizens that reach many sentences: each yes/no fact both ways, values on both sides of the
/// corpus's limits, lists with items, and the same with families of facts removed. No free
/// text (a district is the citizen's own words, quoted as given).
fn citizens() -> Vec<Profile> {
    let catalogue = catalogue();
    let scheme_ids: Vec<Json> = BUNDLED.1.rules.iter().map(|r| json!(r.scheme_id)).collect();
    let mut profiles = Vec::new();
    for variant in 0..12usize {
        let mut root = Map::new();
        for (i, spec) in catalogue.fields().iter().enumerate() {
            let pick = variant + i;
            let value = match spec.field_type {
                FieldType::Boolean => json!(pick % 2 == 0),
                FieldType::Integer | FieldType::Number => {
                    let (lo, hi) = (spec.min.unwrap_or(0.0), spec.max.unwrap_or(100.0));
                    let steps = [0.0, 0.02, 0.05, 0.1, 0.3, 0.45, 0.6, 0.9];
                    let mut n = lo + (hi.min(lo + 200.0) - lo) * steps[pick % steps.len()];
                    if spec.is_money() {
                        n = [0.0, 4000.0, 8000.0, 30000.0, 120000.0, 300000.0][pick % 6];
                    }
                    if spec.field_type == FieldType::Integer {
                        json!(n.round() as i64)
                    } else {
                        json!((n * 2.0).round() / 2.0)
                    }
                }
                FieldType::Date => json!(format!(
                    "{}-0{}-1{}",
                    1940 + pick * 7 % 80,
                    1 + pick % 9,
                    pick % 9
                )),
                FieldType::String => match &spec.values {
                    Some(values) => json!(values[pick % values.len()]),
                    None => continue,
                },
                FieldType::List => {
                    let items: Vec<Json> = match &spec.values {
                        Some(values) => values.iter().map(|v| json!(v)).collect(),
                        None => scheme_ids.clone(),
                    };
                    json!([
                        items[pick % items.len()],
                        items[(pick * 7 + 3) % items.len()]
                    ])
                }
            };
            let (namespace, field) = spec.name.split_once('.').expect("namespace.field");
            let entry = root.entry(namespace).or_insert_with(|| json!({}));
            if (variant / 4 + i) % 5 != 0 || variant < 4 {
                entry[field] = value;
            }
        }
        profiles.push(profile(Json::Object(root)));
    }
    profiles
}

#[test]
fn no_sentence_of_any_language_holds_an_untranslated_word() {
    let catalogue = catalogue();
    let mut leaks: BTreeMap<(Language, String), String> = BTreeMap::new();
    let mut checked = 0usize;
    let citizens = citizens();
    for bundled in &BUNDLED.1.rules {
        let rule = rule(&bundled.rule_id);
        let days = ["2025-01-15", "2023-06-01", "2018-03-01"];
        let Some(day) = days
            .into_iter()
            .find(|d| applicability(rule, on(d)).is_applicable())
        else {
            continue;
        };
        for citizen in &citizens {
            let citizen = citizen.on(on(day));
            let evaluation = evaluation(rule, &citizen, day);
            for language in Language::ALL.into_iter().filter(|l| *l != Language::En) {
                let allowed: BTreeSet<&str> =
                    language.latin_words().iter().map(String::as_str).collect();
                let steps = next_steps(&evaluation, catalogue, language);
                let unique: BTreeSet<&String> = steps.iter().collect();
                assert_eq!(
                    unique.len(),
                    steps.len(),
                    "{language}: {}: a next step twice: {steps:#?}",
                    rule.rule_id
                );
                let said = facts(&evaluation, catalogue, language)
                    .texts()
                    .into_iter()
                    .chain([summary(&evaluation, language)])
                    .chain(steps);
                for sentence in said {
                    checked += 1;
                    assert!(!sentence.contains('{'), "{language}: {sentence}");
                    for word in latin_words(&sentence) {
                        if !allowed.contains(word) {
                            leaks
                                .entry((language, word.to_string()))
                                .or_insert_with(|| sentence.clone());
                        }
                    }
                }
            }
        }
    }
    // The language's column of its review sheet: every question (in the need-to-know wrapper),
    // yes/no fact, document and scheme name, whether or not the citizens above reach it.
    for language in Language::ALL.into_iter().filter(|l| *l != Language::En) {
        let allowed: BTreeSet<&str> = language.latin_words().iter().map(String::as_str).collect();
        let sheet = review_sheet(language);
        for line in sheet
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| #"))
        {
            let theirs = line.split(" | ").nth(2).unwrap_or_default();
            checked += 1;
            for word in latin_words(theirs) {
                if !allowed.contains(word) {
                    leaks
                        .entry((language, word.to_string()))
                        .or_insert_with(|| theirs.to_string());
                }
            }
        }
    }
    assert!(checked > 50_000, "only {checked} sentences checked");
    let report: Vec<String> = leaks
        .iter()
        .map(|((language, word), sentence)| format!("{language}: {word:?} in {sentence}"))
        .collect();
    assert!(
        report.is_empty(),
        "{} words in Latin letters outside the allow-lists:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn the_allow_lists_hold_only_words_in_latin_letters() {
    for language in Language::ALL.into_iter().filter(|l| *l != Language::En) {
        for word in language.latin_words() {
            assert!(
                !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "{language}: {word:?}"
            );
        }
    }
}

/// docs/languages.md, "Review sheets": the checked-in sheet of each language is the one the
/// command prints (regenerate: `cargo run -p eligibility -- languages sheet <code> >
/// docs/languages/<code>.md`).
#[test]
fn every_review_sheet_is_what_the_generator_prints() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/languages");
    for language in Language::ALL {
        let path = format!("{dir}/{}.md", language.code());
        let kept = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(
            kept == review_sheet(language),
            "{path} is stale: regenerate it with `cargo run -p eligibility -- languages sheet {}`",
            language.code()
        );
    }
}
