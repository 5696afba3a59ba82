//! The languages explanations are written in, each a data file of [`Words`].

use std::fmt;
use std::str::FromStr;
use std::sync::LazyLock;

use engine::catalogue::FieldSpec;
use serde::{Deserialize, Serialize};

use crate::words::Words;

/// A language of facts and explanations, by its ISO 639-1 code: English and the twelve most
/// spoken scheduled languages of India.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    En,
    Hi,
    Bn,
    Te,
    Mr,
    Ta,
    Ur,
    Gu,
    Kn,
    Or,
    Ml,
    Pa,
    As,
}

/// The bundled language files, in the order `Language` declares its variants (and `ALL` lists them).
const FILES: [(&str, &str); 13] = [
    ("en.yaml", include_str!("../languages/en.yaml")),
    ("hi.yaml", include_str!("../languages/hi.yaml")),
    ("bn.yaml", include_str!("../languages/bn.yaml")),
    ("te.yaml", include_str!("../languages/te.yaml")),
    ("mr.yaml", include_str!("../languages/mr.yaml")),
    ("ta.yaml", include_str!("../languages/ta.yaml")),
    ("ur.yaml", include_str!("../languages/ur.yaml")),
    ("gu.yaml", include_str!("../languages/gu.yaml")),
    ("kn.yaml", include_str!("../languages/kn.yaml")),
    ("or.yaml", include_str!("../languages/or.yaml")),
    ("ml.yaml", include_str!("../languages/ml.yaml")),
    ("pa.yaml", include_str!("../languages/pa.yaml")),
    ("as.yaml", include_str!("../languages/as.yaml")),
];

static WORDS: LazyLock<Vec<Words>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|(file, text)| Words::parse(file, text))
        .collect()
});

/// How numbers are written: ASCII digits everywhere by default, or the script's own digits
/// (०१२, ೦೧೨…) where a language has them and a reader prefers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Digits {
    #[default]
    Ascii,
    Native,
}

impl Language {
    pub const ALL: [Language; 13] = [
        Language::En,
        Language::Hi,
        Language::Bn,
        Language::Te,
        Language::Mr,
        Language::Ta,
        Language::Ur,
        Language::Gu,
        Language::Kn,
        Language::Or,
        Language::Ml,
        Language::Pa,
        Language::As,
    ];

    /// The ISO 639-1 code: the language of events, rows, cache keys and `--languages`.
    pub fn code(self) -> &'static str {
        &self.words().code
    }

    /// The name an LLM is told to write in ("Kannada (Kannada script)").
    pub fn name(self) -> &'static str {
        &self.words().name
    }

    /// Whether a native speaker has reviewed the words (`source`, `reviewed`), or they are
    /// machine-translated and await review (docs/languages.md).
    pub fn review(self) -> &'static str {
        &self.words().review
    }

    /// The first and last character of the script's Unicode block (`None`: Latin).
    pub fn script(self) -> Option<(char, char)> {
        self.words().script.map(|[first, last]| (first, last))
    }

    /// The words in Latin letters this language's sentences may hold (acronyms as it writes
    /// them); English: any.
    pub fn latin_words(self) -> &'static [String] {
        &self.words().latin_words
    }

    /// A yes/no value of `field` as this language's clause for it ("your household owns a
    /// refrigerator"); `None` for a field that is not yes/no.
    pub fn clause(self, field: &FieldSpec, value: bool) -> Option<String> {
        self.words().clause(field, value)
    }

    /// A coded value of `field` (`karnataka`, a document, a scheme id) in this language's words.
    pub fn value(self, field: &FieldSpec, code: &str) -> String {
        self.words().value(field, code)
    }

    /// A word of the web pages by its key (`page` in the language file, docs/web.md).
    pub fn page(self, key: &str) -> &str {
        self.words().page_word(key)
    }

    /// A field's label in this language ("age", "आयु").
    pub fn label(self, field: &FieldSpec) -> &str {
        self.words()
            .fields
            .get(&field.name)
            .map_or(field.human_name(), |entry| entry.label.as_str())
    }

    /// How a citizen is asked for `field` in this language (the catalogue's question in English).
    pub fn question(self, field: &FieldSpec) -> Option<String> {
        self.words().question(field)
    }

    /// Items all of which are meant, joined as the language lists them ("A, B and C").
    pub fn and_list(self, items: &[String]) -> String {
        let words = self.words();
        words.list(items, &words.and_separator)
    }

    /// The language's word for an empty list ("none").
    pub fn none(self) -> &'static str {
        &self.words().none
    }

    /// A yes/no answer in this language.
    pub fn boolean(self, value: bool) -> &'static str {
        self.words().boolean(value)
    }

    /// A date in this language's words ("15 January 2025", "15 जनवरी 2025").
    pub fn date(self, date: engine::Date) -> String {
        self.words().date(date)
    }

    /// `text` with its ASCII digits written in `digits` (unchanged for a language without
    /// digits of its own).
    pub fn write_digits(self, text: &str, digits: Digits) -> String {
        match (&self.words().digits, digits) {
            (Some(native), Digits::Native) => {
                let native: Vec<char> = native.chars().collect();
                text.chars()
                    .map(|c| match c.to_digit(10) {
                        Some(d) if c.is_ascii_digit() => native[d as usize],
                        _ => c,
                    })
                    .collect()
            }
            _ => text.to_string(),
        }
    }

    pub(crate) fn words(self) -> &'static Words {
        // FILES, and so WORDS, are in declaration order (the tests check each file's code).
        &WORDS[self as usize]
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for Language {
    type Err = String;

    fn from_str(code: &str) -> Result<Language, String> {
        let code = code.trim();
        Language::ALL
            .into_iter()
            .find(|l| l.code() == code)
            .ok_or_else(|| {
                let known: Vec<&str> = Language::ALL.iter().map(|l| l.code()).collect();
                format!(
                    "unknown language {code:?} (expected one of {})",
                    known.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use engine::{Catalogue, RuleSet, Verdict};

    use super::*;

    /// The `{placeholders}` of a template.
    fn placeholders(template: &str) -> BTreeSet<&str> {
        template
            .split('{')
            .skip(1)
            .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
            .collect()
    }

    /// Every template of a language with the English one it translates.
    fn templates(w: &'static Words) -> Vec<(&'static str, &'static str, &'static str)> {
        let en = Language::En.words();
        let mut pairs = vec![
            ("date", w.date.as_str(), en.date.as_str()),
            ("score", &w.score, &en.score),
            ("need_to_know", &w.need_to_know, &en.need_to_know),
            ("field.yours", &w.field.yours, &en.field.yours),
            ("field.known", &w.field.known, &en.field.known),
            (
                "condition.sentence",
                &w.condition.sentence,
                &en.condition.sentence,
            ),
            (
                "exclusion.sentence",
                &w.exclusion.sentence,
                &en.exclusion.sentence,
            ),
            ("exclusion.value", &w.exclusion.value, &en.exclusion.value),
            (
                "exclusion.includes",
                &w.exclusion.includes,
                &en.exclusion.includes,
            ),
            ("benefit.cover", &w.benefit.cover, &en.benefit.cover),
            ("benefit.loan", &w.benefit.loan, &en.benefit.loan),
            (
                "benefit.contribution",
                &w.benefit.contribution,
                &en.benefit.contribution,
            ),
            (
                "gap.estimated_date",
                &w.gap.estimated_date,
                &en.gap.estimated_date,
            ),
            (
                "benefit.kind_and_disbursement",
                &w.benefit.kind_and_disbursement,
                &en.benefit.kind_and_disbursement,
            ),
            ("benefit.kind", &w.benefit.kind, &en.benefit.kind),
            (
                "benefit.disbursement",
                &w.benefit.disbursement,
                &en.benefit.disbursement,
            ),
            ("benefit.amounts", &w.benefit.amounts, &en.benefit.amounts),
            ("benefit.monthly", &w.benefit.monthly, &en.benefit.monthly),
            ("benefit.annual", &w.benefit.annual, &en.benefit.annual),
            (
                "benefit.one_time",
                &w.benefit.one_time,
                &en.benefit.one_time,
            ),
        ];
        for verdict in [
            Verdict::Eligible,
            Verdict::PartialMatch,
            Verdict::NotEligible,
            Verdict::NotApplicable,
        ] {
            pairs.push((
                "verdict.sentence",
                &w.verdict_words(verdict).sentence,
                &en.verdict_words(verdict).sentence,
            ));
        }
        for (operator, template) in &en.requirement {
            let theirs = w.requirement.get(operator).map_or("", String::as_str);
            pairs.push(("requirement", theirs, template.as_str()));
        }
        pairs
    }

    #[test]
    fn every_language_file_is_complete_and_keeps_the_placeholders() {
        let catalogue = Catalogue::bundled();
        let rules = RuleSet::bundled(&catalogue).expect("the bundled corpus loads");
        let codes: BTreeSet<&str> = rules
            .rules
            .iter()
            .filter_map(|r| r.benefit.as_ref())
            .flat_map(|b| [&b.type_code, &b.disbursement])
            .flatten()
            .map(String::as_str)
            .collect();
        for (index, language) in Language::ALL.into_iter().enumerate() {
            assert_eq!(
                language as usize, index,
                "ALL lists the languages as declared"
            );
            let w = language.words();
            let serde_code = serde_json::to_value(language).unwrap();
            assert_eq!(
                serde_code,
                w.code.as_str(),
                "the file of {language:?} says code {}",
                w.code
            );
            assert!(
                ["source", "reviewed", "machine-translated"].contains(&w.review.as_str()),
                "{}: review {:?}",
                w.code,
                w.review
            );
            for (what, theirs, english) in templates(w) {
                assert_eq!(
                    placeholders(theirs),
                    placeholders(english),
                    "{}: {what} {theirs:?} must keep the placeholders of {english:?}",
                    w.code
                );
            }
            let phrases = [
                Verdict::Eligible,
                Verdict::PartialMatch,
                Verdict::NotEligible,
                Verdict::NotApplicable,
            ]
            .map(|v| w.verdict_phrase(v));
            for a in phrases {
                assert!(!a.is_empty(), "{}: an empty verdict phrase", w.code);
                for b in phrases {
                    assert!(
                        a == b || !b.contains(a),
                        "{}: the verdict phrase {a:?} is part of {b:?}",
                        w.code
                    );
                }
            }
            // The web pages' words: every English key, with its placeholders; a direction.
            let en = Language::En.words();
            assert_eq!(
                w.page.keys().collect::<Vec<_>>(),
                en.page.keys().collect::<Vec<_>>(),
                "{}: the page words have the English keys",
                w.code
            );
            for (key, english) in &en.page {
                assert_eq!(
                    placeholders(&w.page[key]),
                    placeholders(english),
                    "{}: page.{key} {:?} must keep the placeholders of {english:?}",
                    w.code,
                    w.page[key]
                );
            }
            assert!(
                ["ltr", "rtl"].contains(&w.page["direction"].as_str()),
                "{}: page.direction",
                w.code
            );
            if language != Language::En {
                for (key, text) in w.page.iter().filter(|(k, _)| *k != "direction") {
                    let mut bare = text.clone();
                    for name in placeholders(text) {
                        bare = bare.replace(&format!("{{{name}}}"), " ");
                    }
                    for word in bare
                        .split(|c: char| !(c.is_ascii_alphabetic() || c == '-'))
                        .filter(|word| word.chars().any(|c| c.is_ascii_alphabetic()))
                    {
                        assert!(
                            w.latin_words.iter().any(|l| l == word),
                            "{}: page.{key} {text:?} holds the Latin word {word:?}",
                            w.code
                        );
                    }
                }
            }
            assert!(!w.promises.is_empty(), "{}: no promises to forbid", w.code);
            // Every unit of the catalogue, in every language (English: as the engine says it).
            for unit in catalogue
                .fields()
                .iter()
                .filter(|f| !f.is_money())
                .filter_map(|f| f.unit.as_deref())
            {
                let words = w
                    .units
                    .get(unit)
                    .unwrap_or_else(|| panic!("{}: no words for the unit {unit}", w.code));
                assert!(words.other.contains("{number}"), "{}: {unit}", w.code);
                if language == Language::En {
                    for n in [1.0, 2.5] {
                        let number = engine::format::indian_number(n);
                        let number = number.trim_end_matches(".00");
                        assert_eq!(
                            w.quantity(number, unit),
                            engine::format::Quantity(n, unit).to_string(),
                            "en.yaml and the engine word {unit} alike"
                        );
                    }
                }
            }
            if let Some(digits) = &w.digits {
                assert_eq!(digits.chars().count(), 10, "{}: digits", w.code);
                assert!(digits.chars().all(char::is_numeric), "{}: digits", w.code);
            }
            if language == Language::En {
                continue;
            }
            assert!(w.script.is_some(), "{}: no script", w.code);
            assert!(w.summary.is_some(), "{}: summary", w.code);
            let steps = w.next_step.as_ref().expect("next steps");
            for limit in [&steps.below_minimum, &steps.above_maximum] {
                assert_eq!(
                    placeholders(limit),
                    BTreeSet::from(["distance", "field", "limit"]),
                    "{}: {limit:?}",
                    w.code
                );
            }
            for field in catalogue.fields() {
                let entry = w
                    .fields
                    .get(&field.name)
                    .unwrap_or_else(|| panic!("{}: field {} has no words", w.code, field.name));
                assert!(
                    entry.question.is_some(),
                    "{}: field {} has no question",
                    w.code,
                    field.name
                );
                // Yes/no facts as whole clauses, and list items as the field's clause, where
                // the catalogue has them (docs/languages.md, "Yes/no facts").
                let pairs = [
                    (&field.when_yes, &entry.when_yes, "when_yes"),
                    (&field.when_no, &entry.when_no, "when_no"),
                    (&field.when_includes, &entry.when_includes, "when_includes"),
                ];
                for (english, theirs, key) in pairs {
                    assert_eq!(
                        english.is_some(),
                        theirs.is_some(),
                        "{}: field {}: {key} as the catalogue has it",
                        w.code,
                        field.name
                    );
                    if let (Some(english), Some(theirs)) = (english, theirs) {
                        assert_eq!(
                            placeholders(theirs),
                            placeholders(english),
                            "{}: {}.{key}",
                            w.code,
                            field.name
                        );
                    }
                }
                for code in field.value_words.keys() {
                    assert!(
                        w.values
                            .get(&field.name)
                            .is_some_and(|v| v.contains_key(code)),
                        "{}: {}: {code} has no words",
                        w.code,
                        field.name
                    );
                }
                for value in field.values.iter().flatten() {
                    assert!(
                        w.values
                            .get(&field.name)
                            .is_some_and(|v| v.contains_key(value)),
                        "{}: {}: value {value} has no words",
                        w.code,
                        field.name
                    );
                }
            }
            for code in &codes {
                assert!(
                    w.codes.contains_key(*code),
                    "{}: benefit code {code} has no words",
                    w.code
                );
            }
        }
    }

    #[test]
    fn native_digits_replace_ascii_ones_only_where_asked() {
        assert_eq!(
            Language::Hi.write_digits("₹1,50,000; 68", Digits::Native),
            "₹१,५०,०००; ६८"
        );
        assert_eq!(Language::Kn.write_digits("60", Digits::Native), "೬೦");
        assert_eq!(Language::Hi.write_digits("68", Digits::Ascii), "68");
        assert_eq!(Language::En.write_digits("68", Digits::Native), "68");
    }
}
