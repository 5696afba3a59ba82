//! The adaptive screener's logic (docs/web.md, "The screener"), pure: answers as a citizen
//! typed them become a profile, and the next question is the field that the most schemes
//! need which answers could still make ELIGIBLE (the engine's `needed_fields` of an evaluation
//! that `could_become_eligible`); a skipped question is never asked again. When no answer can
//! make another scheme ELIGIBLE, the answer is stable: the schemes a citizen can get are those
//! of their whole profile (what is left open is only whether a scheme they cannot get is a
//! partial match or not). [`study`] measures it against asking every question, for synthetic citizens.
//! Every catalogue field may be asked; a list field offers the values the catalogue allows or,
//! for the schemes a citizen already receives, those the rules in play name ([`choices`]).
//!
//! The web pages ([`crate::api::web`]) and `eligibility screener study` use it.

use std::collections::{BTreeMap, BTreeSet};

use engine::catalogue::{FieldSpec, FieldType};
use engine::{Catalogue, Date, Evaluation, Profile, RuleSet, Verdict};
use serde_json::{Map, Value as Json};

use crate::citizen::{Output, evaluate_citizen};

/// The facts every screening starts with, asked together on the first page.
pub const FIRST_QUESTIONS: [&str; 3] = ["demographics.state", "identity.age", "identity.gender"];

/// The most values one answer may hold (a list field's items), and the longest one value: a
/// request does bounded work.
pub const MAX_VALUES: usize = 80;
pub const MAX_VALUE_CHARS: usize = 64;

/// A citizen's answers so far: each asked field's raw values as typed (several for a list
/// field), and the fields skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answers {
    pub given: BTreeMap<String, Vec<String>>,
    pub skipped: BTreeSet<String>,
}

/// Why an answer was refused: the field and what was wrong, for the page to ask again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadAnswer {
    pub field: String,
    pub reason: String,
}

impl Answers {
    /// The answers as a profile on `as_of` (answers are typed by the catalogue; an empty answer
    /// is no answer). The first bad answer is refused with its field named.
    pub fn profile(&self, catalogue: &Catalogue, as_of: Date) -> Result<Profile, BadAnswer> {
        let mut root = Map::new();
        for (name, raw) in &self.given {
            let bad = |reason: &str| BadAnswer {
                field: name.clone(),
                reason: reason.to_string(),
            };
            let spec = catalogue
                .id(name)
                .map(|id| catalogue.field(id))
                .ok_or_else(|| bad("not a question of the screener"))?;
            if raw.len() > MAX_VALUES || raw.iter().any(|v| v.chars().count() > MAX_VALUE_CHARS) {
                return Err(bad("too long"));
            }
            let Some(value) = typed(spec, raw).map_err(|reason| bad(&reason))? else {
                continue;
            };
            let (group, field) = name.split_once('.').ok_or_else(|| bad("not a field"))?;
            root.entry(group)
                .or_insert_with(|| Json::Object(Map::new()))
                .as_object_mut()
                .expect("groups are objects")
                .insert(field.to_string(), value);
        }
        Profile::from_json(catalogue, &Json::Object(root), "answers")
            .map(|p| p.into_on(as_of))
            .map_err(|report| {
                let problem = report.problems.first();
                BadAnswer {
                    field: problem
                        .map(|p| p.path.trim_start_matches('/').replace('/', "."))
                        .unwrap_or_default(),
                    reason: problem.map_or_else(String::new, |p| p.reason.clone()),
                }
            })
    }

    /// Whether `field` was answered (with something) or skipped.
    pub fn settled(&self, field: &str) -> bool {
        self.skipped.contains(field)
            || self
                .given
                .get(field)
                .is_some_and(|v| v.iter().any(|s| !s.trim().is_empty()))
    }
}

/// One field's raw answer as JSON: `None` for no answer.
fn typed(spec: &FieldSpec, raw: &[String]) -> Result<Option<Json>, String> {
    let values: Vec<&str> = raw
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if spec.field_type == FieldType::List {
        // An answered list may be empty: "none of these" is an answer (the page's choice
        // of that name sends NONE_OF_THESE); nothing sent is no answer.
        if raw.is_empty() {
            return Ok(None);
        }
        let items: Vec<Json> = values
            .iter()
            .filter(|v| **v != NONE_OF_THESE)
            .map(|v| Json::String((*v).to_string()))
            .collect();
        return Ok(Some(Json::Array(items)));
    }
    let Some(one) = values.first() else {
        return Ok(None);
    };
    if values.len() > 1 {
        return Err("one answer only".into());
    }
    let number = || -> Result<f64, String> {
        let cleaned: String = one.chars().filter(|c| *c != ',' && *c != '₹').collect();
        cleaned
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .ok_or_else(|| "not a number".to_string())
    };
    Ok(Some(match spec.field_type {
        FieldType::Integer => {
            let n = number()?;
            if n.fract() != 0.0 {
                return Err("a whole number".into());
            }
            Json::from(n as i64)
        }
        FieldType::Number => Json::from(number()?),
        FieldType::Boolean => match *one {
            "true" => Json::Bool(true),
            "false" => Json::Bool(false),
            _ => return Err("yes or no".into()),
        },
        _ => Json::String((*one).to_string()),
    }))
}

/// The value a page sends for a list question answered "none of these".
pub const NONE_OF_THESE: &str = "-";

/// The next question for a citizen whose answers gave `output`: the field that the most
/// schemes answers could still make ELIGIBLE need, ties in catalogue order; `None` when no
/// answer can make another scheme ELIGIBLE.
pub fn next_question(
    catalogue: &Catalogue,
    output: &Output<'_>,
    answers: &Answers,
) -> Option<String> {
    let mut weight: BTreeMap<usize, usize> = BTreeMap::new();
    for evaluation in output.results.iter().filter(|e| e.could_become_eligible) {
        for field in &evaluation.needed_fields {
            if let Some(id) = catalogue.id(field).filter(|_| !answers.settled(field)) {
                *weight.entry(id).or_default() += 1;
            }
        }
    }
    weight
        .into_iter()
        .max_by_key(|&(index, w)| (w, std::cmp::Reverse(index)))
        .map(|(index, _)| catalogue.fields()[index].name.clone())
}

/// The values a citizen may choose for `field`: for a list (documents, schemes received, SECC
/// deprivations), only the items the rules of `state` in effect on `as_of` read, in the
/// catalogue's order (no other item can change a verdict); for any other field the catalogue's
/// values.
pub fn choices(
    catalogue: &Catalogue,
    rules: &RuleSet,
    state: Option<&str>,
    as_of: Date,
    field: &str,
) -> Vec<String> {
    let Some(spec) = catalogue.id(field).map(|id| catalogue.field(id)) else {
        return Vec::new();
    };
    if spec.field_type != FieldType::List {
        return spec.values.clone().unwrap_or_default();
    }
    let mut named = BTreeSet::new();
    for rule in RuleSet::for_state(rules.in_effect(as_of), state) {
        let mut visit = |leaf: &engine::tree::Leaf| {
            if leaf.field_name == field {
                match &leaf.expected {
                    Json::String(s) => {
                        named.insert(s.clone());
                    }
                    Json::Array(items) => {
                        named.extend(items.iter().filter_map(|v| v.as_str().map(String::from)));
                    }
                    _ => {}
                }
            }
        };
        rule.eligibility.for_each_leaf(&mut visit);
        rule.exclusions.iter().for_each(&mut visit);
    }
    match &spec.values {
        Some(values) => values
            .iter()
            .filter(|v| named.contains(*v))
            .cloned()
            .collect(),
        None => named.into_iter().collect(),
    }
}

/// Evaluates the answers: the citizen's state's schemes and the central ones in effect on
/// `as_of`.
pub fn evaluate<'a>(
    catalogue: &'a Catalogue,
    rules: &'a RuleSet,
    profile: &'a Profile,
    as_of: Date,
) -> Output<'a> {
    evaluate_citizen(catalogue, rules, profile, as_of, None, false)
        .expect("without a scheme named, evaluating a citizen does not fail")
}

/// How a verdict is shown (docs/web.md, "The screener"): what the citizen can act on first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// ELIGIBLE.
    Eligible,
    /// Not yet, but answers alone could make it so.
    Could,
    /// Every gap is one the citizen can close: a document to get verified, an age to reach, a
    /// question to answer.
    Almost,
    /// A known fact rules it out (an exclusion, a category, a limit).
    Not,
}

impl Group {
    pub fn of(evaluation: &Evaluation<'_>) -> Group {
        match evaluation.verdict {
            Verdict::Eligible => Group::Eligible,
            _ if evaluation.could_become_eligible => Group::Could,
            _ if evaluation.all_gaps_closable => Group::Almost,
            _ => Group::Not,
        }
    }
}

/// What [`study`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    pub citizens: usize,
    /// Questions the adaptive screener asked, the first page's three included.
    pub asked: Vec<usize>,
    /// The questions a fixed form would ask: every catalogue field.
    pub every_question: usize,
    /// Citizens whose ELIGIBLE schemes on the screener's answers differ from those of their
    /// whole profile (must be none).
    pub unstable: usize,
    /// Citizens for whom some scheme they cannot get is a partial match on one and not on the
    /// other (the screener does not ask to tell these apart).
    pub partial_differs: usize,
}

impl Study {
    pub fn mean(&self) -> f64 {
        self.asked.iter().sum::<usize>() as f64 / self.asked.len().max(1) as f64
    }

    /// The `q`-quantile of questions asked (0.5: the median).
    pub fn quantile(&self, q: f64) -> usize {
        let mut sorted = self.asked.clone();
        sorted.sort_unstable();
        sorted
            .get(((sorted.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0)
    }
}

/// Screens each of `citizens` (whole profiles as JSON): the first page's facts, then each next
/// question answered from the profile (a field it lacks is skipped) until no answer can make
/// another scheme ELIGIBLE; then checks that the ELIGIBLE schemes are those of the whole
/// profile.
pub fn study(catalogue: &Catalogue, rules: &RuleSet, citizens: &[Json], as_of: Date) -> Study {
    let mut asked = Vec::with_capacity(citizens.len());
    let mut unstable = 0;
    let mut partial_differs = 0;
    for citizen in citizens {
        let whole = Profile::from_json(catalogue, citizen, "study")
            .expect("a study's citizens are valid")
            .into_on(as_of);
        let answer = |answers: &mut Answers, field: &str| {
            let (group, name) = field.split_once('.').expect("namespaced");
            match &citizen[group][name] {
                Json::Null => {
                    answers.skipped.insert(field.to_string());
                }
                Json::Array(items) if items.is_empty() => {
                    answers
                        .given
                        .insert(field.to_string(), vec![NONE_OF_THESE.to_string()]);
                }
                Json::Array(items) => {
                    answers.given.insert(
                        field.to_string(),
                        items.iter().map(plain).collect::<Vec<_>>(),
                    );
                }
                value => {
                    answers.given.insert(field.to_string(), vec![plain(value)]);
                }
            }
        };
        let mut answers = Answers::default();
        for field in FIRST_QUESTIONS {
            answer(&mut answers, field);
        }
        let mut count = FIRST_QUESTIONS.len();
        let final_verdicts = loop {
            let profile = answers
                .profile(catalogue, as_of)
                .expect("a valid profile's values are valid answers");
            let output = evaluate(catalogue, rules, &profile, as_of);
            match next_question(catalogue, &output, &answers) {
                Some(field) => {
                    answer(&mut answers, &field);
                    count += 1;
                }
                None => break verdicts(&output),
            }
        };
        let full = verdicts(&evaluate(catalogue, rules, &whole, as_of));
        let eligible = |all: &[(String, Verdict)]| -> Vec<String> {
            all.iter()
                .filter(|(_, v)| *v == Verdict::Eligible)
                .map(|(s, _)| s.clone())
                .collect()
        };
        if eligible(&full) != eligible(&final_verdicts) {
            unstable += 1;
        } else if full != final_verdicts {
            partial_differs += 1;
        }
        asked.push(count);
    }
    Study {
        citizens: citizens.len(),
        asked,
        every_question: catalogue.fields().len(),
        unstable,
        partial_differs,
    }
}

/// Each scheme's verdict.
fn verdicts(output: &Output<'_>) -> Vec<(String, Verdict)> {
    output
        .results
        .iter()
        .map(|e| (e.scheme_id.to_string(), e.verdict))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// A JSON value as a page would send it.
fn plain(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled() -> (Catalogue, RuleSet) {
        let catalogue = Catalogue::bundled();
        let rules = RuleSet::bundled(&catalogue).expect("the corpus loads");
        (catalogue, rules)
    }

    fn answers(pairs: &[(&str, &str)]) -> Answers {
        Answers {
            given: pairs
                .iter()
                .map(|(f, v)| (f.to_string(), vec![v.to_string()]))
                .collect(),
            skipped: BTreeSet::new(),
        }
    }

    #[test]
    fn answers_are_typed_by_the_catalogue_and_a_bad_one_is_named() {
        let (catalogue, _) = bundled();
        let today = Date::parse("2026-11-27").unwrap();
        let good = answers(&[
            ("identity.age", "67"),
            ("economic.annual_income", "₹1,20,000"),
            ("economic.bpl_status", "true"),
            ("demographics.state", "bihar"),
        ]);
        assert!(good.profile(&catalogue, today).is_ok());
        let bad = answers(&[("identity.age", "sixty")]);
        assert_eq!(
            bad.profile(&catalogue, today).unwrap_err(),
            BadAnswer {
                field: "identity.age".into(),
                reason: "not a number".into()
            }
        );
        let unknown_state = answers(&[("demographics.state", "atlantis")]);
        assert_eq!(
            unknown_state.profile(&catalogue, today).unwrap_err().field,
            "demographics.state"
        );
        let unknown_field = answers(&[("identity.shoe_size", "9")]);
        assert_eq!(
            unknown_field.profile(&catalogue, today).unwrap_err().field,
            "identity.shoe_size"
        );
    }

    #[test]
    fn a_skipped_question_is_not_asked_again() {
        let (catalogue, rules) = bundled();
        let today = Date::parse("2026-11-27").unwrap();
        let mut a = answers(&[
            ("demographics.state", "bihar"),
            ("identity.age", "67"),
            ("identity.gender", "female"),
        ]);
        let profile = a.profile(&catalogue, today).unwrap();
        let output = evaluate(&catalogue, &rules, &profile, today);
        let first = next_question(&catalogue, &output, &a).expect("a 67-year-old has questions");
        a.skipped.insert(first.clone());
        let second = next_question(&catalogue, &output, &a);
        assert_ne!(second.as_deref(), Some(first.as_str()));
    }

    #[test]
    fn the_screener_finds_what_the_whole_profile_can_get_with_fewer_questions() {
        let (catalogue, rules) = bundled();
        let today = Date::parse("2026-11-27").unwrap();
        let mut citizens = synth::citizens::Citizens::new(synth::citizens::CitizenSpec {
            seed: 11,
            missing_rate: 0.05,
            schemes: 0,
        });
        let people: Vec<Json> = (0..40).map(|_| citizens.next_profile()).collect();
        let study = study(&catalogue, &rules, &people, today);
        assert_eq!(
            study.unstable, 0,
            "every screening ends with the schemes the whole profile can get"
        );
        assert!(
            study.mean() < study.every_question as f64,
            "{} questions on average, {} in all",
            study.mean(),
            study.every_question
        );
    }
}
