//! Test citizens written by hand for the corpus: per scheme, profiles with the verdict (and
//! amount) the official rule gives them on a date, and the official sentence that decides it
//! (docs/corpus.md, "Test citizens"). `eligibility rules cases` and the corpus tests run them.

use serde::Deserialize;
use serde_json::Value as Json;

use std::path::Path;

use crate::catalogue::Catalogue;
use crate::date::Date;
use crate::error::EngineError;
use crate::eval::evaluate;
use crate::outcome::Verdict;
use crate::profile::Profile;
use crate::rule::Rule;
use crate::ruleset::{RuleSet, collect_yaml};

/// One file of cases: all about one scheme.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    pub scheme_id: String,
    pub cases: Vec<Case>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub as_of: String,
    /// The profile, namespaced as in `schemas/profile.schema.json`.
    pub profile: Json,
    /// A verdict name, or `NOT_APPLICABLE` where no version of the scheme applies on `as_of`.
    pub verdict: String,
    /// The amount per the rule's frequency that the profile is paid (checks benefit tiers).
    #[serde(default)]
    pub benefit_inr: Option<f64>,
    /// The official sentence the verdict follows from, and where it is written.
    pub follows_from: String,
}

/// What running one case found.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    pub name: String,
    /// The rule version that decided, when one applied.
    pub rule_id: Option<String>,
    /// None when the case holds; otherwise what differs.
    pub failure: Option<String>,
}

/// Reads every case file at or below `dir`, sorted by path; a file that does not parse is an
/// error naming it.
pub fn load_dir(dir: &Path) -> Result<Vec<(String, CaseFile)>, EngineError> {
    let mut paths = Vec::new();
    collect_yaml(dir, &mut paths)?;
    paths
        .into_iter()
        .map(|path| {
            let name = path.display().to_string();
            let fail = |reason: String| EngineError::Io {
                path: name.clone(),
                reason,
            };
            let text = std::fs::read_to_string(&path).map_err(|e| fail(e.to_string()))?;
            let file = CaseFile::parse(&text).map_err(fail)?;
            Ok((name, file))
        })
        .collect()
}

impl CaseFile {
    pub fn parse(text: &str) -> Result<CaseFile, String> {
        let file: CaseFile = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
        if file.cases.is_empty() {
            return Err("no cases".into());
        }
        Ok(file)
    }

    /// Runs every case against the version of the scheme in effect on its date.
    pub fn run(&self, catalogue: &Catalogue, rules: &RuleSet) -> Vec<CaseResult> {
        self.cases
            .iter()
            .map(|case| {
                let (rule_id, failure) = match self.run_one(catalogue, rules, case) {
                    Ok((rule_id, failure)) => (rule_id, failure),
                    Err(reason) => (None, Some(reason)),
                };
                CaseResult {
                    name: case.name.clone(),
                    rule_id,
                    failure,
                }
            })
            .collect()
    }

    /// What `case` is evaluated on: its profile as of `as_of`, and the version of the file's
    /// scheme in effect that day (`None` when no version applies). Err: a profile that does not
    /// validate, or a scheme id no rule has.
    pub fn setting<'r>(
        &self,
        catalogue: &Catalogue,
        rules: &'r RuleSet,
        case: &Case,
        as_of: Date,
    ) -> Result<(Profile, Option<&'r Rule>), String> {
        let profile = Profile::from_json(catalogue, &case.profile, &case.name)
            .map_err(|report| format!("invalid profile: {report}"))?
            .into_on(as_of);
        if !rules.rules.iter().any(|r| r.scheme_id == self.scheme_id) {
            return Err(format!("no rule has scheme id {:?}", self.scheme_id));
        }
        let rule = rules
            .in_effect(as_of)
            .into_iter()
            .find(|r| r.scheme_id == self.scheme_id);
        Ok((profile, rule))
    }

    fn run_one(
        &self,
        catalogue: &Catalogue,
        rules: &RuleSet,
        case: &Case,
    ) -> Result<(Option<String>, Option<String>), String> {
        let as_of = Date::parse(&case.as_of)
            .ok_or_else(|| format!("as_of {:?} is not a date YYYY-MM-DD", case.as_of))?;
        let expected = Verdict::from_name(&case.verdict)
            .ok_or_else(|| format!("{:?} is not a verdict", case.verdict))?;
        if case.follows_from.trim().is_empty() {
            return Err("follows_from is empty: name the official sentence".into());
        }
        let (profile, rule) = self.setting(catalogue, rules, case, as_of)?;
        let evaluation = rule.and_then(|rule| evaluate(catalogue, rule, &profile, as_of).ok());
        let mut differences = Vec::new();
        let verdict = evaluation
            .as_ref()
            .map_or(Verdict::NotApplicable, |e| e.verdict);
        if verdict != expected {
            let detail = match &evaluation {
                Some(e) => format!(
                    " (score {}; gaps on: {}; needed: {})",
                    e.match_score,
                    e.gaps
                        .iter()
                        .map(|g| g.field)
                        .collect::<Vec<_>>()
                        .join(", "),
                    e.needed_fields.join(", ")
                ),
                None => String::new(),
            };
            differences.push(format!(
                "expected {}, got {}{detail}",
                expected.name(),
                verdict.name()
            ));
        }
        if let Some(amount) = case.benefit_inr {
            let paid = evaluation
                .as_ref()
                .and_then(|e| e.benefit_estimate)
                .and_then(|b| b.amount_inr);
            if paid != Some(amount) {
                differences.push(format!("expected a benefit of ₹{amount}, got {paid:?}"));
            }
        }
        let failure = (!differences.is_empty()).then(|| differences.join("; "));
        Ok((rule.map(|r| r.rule_id.clone()), failure))
    }
}
