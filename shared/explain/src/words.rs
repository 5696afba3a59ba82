//! The words of one language, as its data file (`languages/<code>.yaml`) gives them.
//!
//! Every language is data: a reviewer edits the YAML, not Rust (docs/languages.md). The files
//! are compiled in and read once; `tests/languages.rs` holds each to the English source (every
//! template keeps its placeholders, every catalogue field and benefit code is worded).

use std::collections::BTreeMap;

use serde::Deserialize;

/// One language file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Words {
    pub code: String,
    /// What an LLM is told to write in ("Kannada (Kannada script)").
    pub name: String,
    /// `source`, `reviewed` (by a native speaker) or `machine-translated`.
    pub review: String,
    /// The first and last character of the script's Unicode block; every fact holds a letter
    /// of it. `None` for English.
    pub script: Option<[char; 2]>,
    /// The native digits 0–9, where the language has its own.
    pub digits: Option<String>,
    pub full_stop: String,
    pub months: [String; 12],
    /// `{day} {month} {year}`.
    pub date: String,
    pub yes: String,
    pub no: String,
    /// An empty list.
    pub none: String,
    pub list_separator: String,
    /// Joins the last two items of a list that is all required ("A, B and C").
    pub and_separator: String,
    /// Joins the last two items of a list of which any one will do ("A, B or C").
    pub or_separator: String,
    /// Joins the sentences of conditions any one of which would do ("…; or instead: …"), so
    /// none reads as a requirement of its own.
    pub either_separator: String,
    /// Words in Latin letters a sentence of this language may hold (acronyms as the language
    /// writes them: BPL, DBT…); the corpus lint refuses any other (docs/languages.md).
    pub latin_words: Vec<String>,
    /// Catalogue units (`years`, `percent`, `hectares`, `acres`, `kWh/year`): `{number}` with
    /// its unit.
    pub units: BTreeMap<String, Unit>,
    pub verdict: Verdicts,
    /// Promises no evaluation makes ("guaranteed"): never part of an explanation.
    pub promises: Vec<String>,
    /// `{score}`, `{matched}`, `{total}`.
    pub score: String,
    pub field: FieldWords,
    pub condition: ConditionWords,
    pub exclusion: ExclusionWords,
    pub gap: GapWords,
    pub benefit: BenefitWords,
    /// Per operator: `{value}`; `in`/`not_in`: `{values}`; `between`: `{low}`, `{high}`.
    pub requirement: BTreeMap<String, String>,
    /// `None` (English): the engine's own summary sentences.
    #[serde(default)]
    pub summary: Option<SummaryWords>,
    /// A question whose answer could still make the citizen eligible, said as such: `{step}`.
    pub need_to_know: String,
    /// `None` (English): the engine's own next-step sentences.
    #[serde(default)]
    pub next_step: Option<NextStepWords>,
    /// Per catalogue field; English takes its labels and questions from the catalogue.
    #[serde(default)]
    pub fields: BTreeMap<String, FieldEntry>,
    /// Per field, the words of each coded value (`karnataka`, `widowed`).
    #[serde(default)]
    pub values: BTreeMap<String, BTreeMap<String, String>>,
    /// Benefit kinds and payment modes of the rules (`monthly_pension`).
    #[serde(default)]
    pub codes: BTreeMap<String, String>,
    /// The web pages' own words (headings, buttons, filters), by key; English is the source
    /// and every language has every key (docs/web.md).
    pub page: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Unit {
    /// Where the singular differs: `{number} year`.
    pub one: Option<String>,
    pub other: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Verdicts {
    pub eligible: VerdictWords,
    pub partial_match: VerdictWords,
    pub not_eligible: VerdictWords,
    pub not_applicable: VerdictWords,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerdictWords {
    /// The words stating the verdict; no verdict's phrase is part of another's.
    pub phrase: String,
    /// `{phrase}`, `{scheme}`, `{as_of}`.
    pub sentence: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FieldWords {
    /// `{label}` with a possessive, for a field the file does not word itself.
    pub yours: String,
    pub is: Copula,
    /// A known value: `{yours}`, `{is}`, `{actual}`.
    pub known: String,
    /// A value the profile lacks: `{label}` or `{yours}`, and `{is}`.
    pub unknown: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Copula {
    pub one: String,
    pub many: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConditionWords {
    /// `{field}` (stated as `field` says), `{required}`, `{met}`.
    pub sentence: String,
    pub met: String,
    pub not_met: String,
    /// With the rule author's label (English): `{label}`, `{sentence}`. Absent: not shown.
    pub labelled: Option<String>,
}

/// An exclusion that bars the citizen is said as the fact that bars: never the rule's label,
/// which states what must hold.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExclusionWords {
    /// `{fact}`: the fact, a clause; and that the scheme is therefore not for the citizen.
    pub sentence: String,
    /// The fact for a value other than yes/no: `{field}` (stated), `{required}`.
    pub value: String,
    /// The fact for a list holding a barred item: `{yours}`, `{item}` (a field's
    /// `when_includes` words it where given).
    pub includes: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GapWords {
    /// `{description}` (the engine's English sentence) or `{field}`, `{required}`.
    pub sentence: String,
    /// The sentence under its kind's heading, as a fact shows it: `{kind}`, `{sentence}`
    /// (a next step says the sentence alone).
    pub heading: Option<String>,
    pub kinds: Option<GapKinds>,
    /// A requirement under `NOT`: `{required}`.
    pub negated: Option<String>,
    /// Appended: `{distance}`.
    pub distance: Option<String>,
    /// Appended: `{date}`.
    pub estimated_date: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GapKinds {
    pub exclusion: String,
    pub document: String,
    pub missing_data: String,
    pub threshold: String,
    pub category: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BenefitWords {
    pub kind_and_disbursement: String,
    pub kind: String,
    pub disbursement: String,
    pub amounts: String,
    pub monthly: String,
    pub annual: String,
    pub one_time: String,
    /// An insurance benefit's cover (`insurance_cover`): `{amount}`.
    pub cover: String,
    /// A loan benefit's limit (`loan_up_to`): `{amount}`.
    pub loan: String,
    /// A contributory pension whose slab the citizen's contribution chooses: `{low}`, `{high}`
    /// a month.
    pub contribution: String,
    /// The rule's free-text (English) description: only where the language can carry it.
    pub description: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SummaryWords {
    pub eligible: String,
    pub need_to_know_one: String,
    /// `{count}`.
    pub need_to_know_many: String,
    pub partial_match: String,
    pub not_eligible: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NextStepWords {
    pub apply: String,
    pub keep_ready: String,
    pub apply_once_met: String,
    pub why_not: String,
    pub get_verified: String,
    pub get_any_verified: String,
    pub tell_any_verified: String,
    /// A known value under an `at least` limit: `{field}` (stated), `{distance}`, `{limit}`.
    pub below_minimum: String,
    /// A known value over an `at most` limit: `{field}`, `{distance}`, `{limit}`.
    pub above_maximum: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FieldEntry {
    pub label: String,
    /// The label with its possessive, agreeing with it.
    pub yours: String,
    /// Takes the plural copula.
    #[serde(default)]
    pub plural: bool,
    /// How a citizen is asked for the field.
    pub question: Option<String>,
    /// A yes/no field's value as a whole clause (English: the catalogue's), for yes and no.
    pub when_yes: Option<String>,
    pub when_no: Option<String>,
    /// A list field holding `{item}`, as a clause.
    pub when_includes: Option<String>,
}

impl Words {
    /// A word of the web pages (`page` section); a key this file lacks is said in English
    /// (the language tests hold every file to every English key).
    pub fn page_word<'a>(&'a self, key: &'a str) -> &'a str {
        self.page
            .get(key)
            .or_else(|| crate::Language::En.words().page.get(key))
            .map_or(key, String::as_str)
    }

    /// Joins the gaps of one branch of an OR, all of which it needs: the language's
    /// semicolon (that of `either_separator`) and its "and" ("; and: ").
    pub fn and_also(&self) -> String {
        let semicolon = self.either_separator.chars().next().unwrap_or(';');
        format!("{semicolon} {}: ", self.and_separator.trim())
    }

    /// Parses a bundled file; `file` names it in the panic a malformed one causes (the tests
    /// load every file, so that never reaches a user).
    pub fn parse(file: &str, text: &str) -> Words {
        serde_yaml_ng::from_str(text)
            .unwrap_or_else(|e| panic!("languages/{file} is not a valid language file: {e}"))
    }
}

/// `template` with each `{name}` of `values` replaced, in one pass: a value that itself holds
/// braces (a scheme name, a profile string) is never read as a placeholder.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v, close))
        });
        match value {
            Some((value, close)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn placeholders_are_filled_once() {
        assert_eq!(
            fill("{a} and {b} {c}", &[("a", "{b}"), ("b", "two")]),
            "{b} and two {c}"
        );
        assert_eq!(fill("no braces", &[]), "no braces");
        assert_eq!(fill("open { only", &[("x", "1")]), "open { only");
    }
}
