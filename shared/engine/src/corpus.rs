//! The corpus' own checks and its coverage report (docs/corpus.md, "The corpus checks itself"
//! and "Coverage").
//!
//! - [`audit`]: bookkeeping a reviewer relies on and the loader does not refuse: a `rule_id`
//!   whose number is not its `version`, a check date (`source.retrieved`) older than the
//!   configured age (a warning) or twice that (an error), a reference with neither its own date
//!   nor the date it was read (`accessed`).
//! - [`coverage`]: per state or union territory (every one the catalogue knows, so a state with
//!   nothing shows as such) and for the central schemes: schemes, versions, kinds of benefit,
//!   the categories of people served and the oldest check date.
//!
//! Pure: the caller passes today's date.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value as Json;

use crate::catalogue::Catalogue;
use crate::date::Date;
use crate::rule::Rule;
use crate::ruleset::RuleSet;

/// How old a scheme's last check may be before the audit warns, by default (an error past
/// twice that).
pub const DEFAULT_MAX_CHECK_AGE_DAYS: i64 = 365;

/// Rule ids published with a number other than their version, kept because a stored database
/// keys versions by `rule_id` (docs/corpus.md, "Versions"). Closed: no id joins it.
pub const PUBLISHED_ID_MISMATCHES: [&str; 6] = [
    "rule_central_pm_svanidhi_001",
    "rule_central_pmsby_001",
    "rule_mp_ladli_behna_001",
    "rule_up_kanya_sumangala_001",
    "rule_wb_kanyashree_k1_001",
    "rule_wb_kanyashree_k2_001",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// One problem of one rule file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub rule_id: String,
    /// Where the rule was loaded from.
    pub source: String,
    pub problem: String,
}

/// The bookkeeping problems of `rules` on `today`, errors first, then by file.
pub fn audit(rules: &RuleSet, today: Date, max_check_age_days: i64) -> Vec<Finding> {
    let mut findings = Vec::new();
    for rule in &rules.rules {
        let mut find = |severity, problem: String| {
            findings.push(Finding {
                severity,
                rule_id: rule.rule_id.clone(),
                source: rule.source.clone(),
                problem,
            });
        };
        let number = rule
            .rule_id
            .rsplit('_')
            .next()
            .and_then(|n| n.parse::<u32>().ok());
        if number != Some(rule.version) && !PUBLISHED_ID_MISMATCHES.contains(&&*rule.rule_id) {
            find(
                Severity::Error,
                format!(
                    "rule_id ends in {} but version is {}: a new version takes _{:03}",
                    number.map_or("no number".into(), |n| format!("_{n:03}")),
                    rule.version,
                    rule.version
                ),
            );
        }
        let source = &rule.document["source"];
        match source["retrieved"].as_str().and_then(Date::parse) {
            None => find(
                Severity::Error,
                "source.retrieved (the date of the last check) is missing".into(),
            ),
            Some(checked) => {
                let age = today.day_number() - checked.day_number();
                if age > 2 * max_check_age_days {
                    find(
                        Severity::Error,
                        format!(
                            "last checked {checked}, {age} days ago (more than twice {max_check_age_days})"
                        ),
                    );
                } else if age > max_check_age_days {
                    find(
                        Severity::Warning,
                        format!(
                            "last checked {checked}, {age} days ago (more than {max_check_age_days})"
                        ),
                    );
                }
            }
        }
        let references = source["references"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        for (i, reference) in references.iter().enumerate() {
            let dated = |key: &str| reference[key].as_str().and_then(Date::parse).is_some();
            if !dated("date") && !dated("accessed") {
                find(
                    Severity::Error,
                    format!(
                        "source.references[{i}] ({}) has neither a date nor the date it was read (accessed)",
                        reference["title"].as_str().unwrap_or("untitled")
                    ),
                );
            }
        }
    }
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.source.cmp(&b.source))
    });
    findings
}

/// Who a scheme is for, read from the conditions its eligibility requires (any branch of an
/// OR; a NOT group is skipped). A scheme none of these name is for `everyone` in its state.
type Serves = fn(field: &str, operator: &str, value: &Json) -> bool;

const CATEGORIES: [(&str, Serves); 13] = [
    ("older people", |f, op, v| {
        f == "identity.age" && matches!(op, "gte" | "gt") && v.as_f64().is_some_and(|a| a >= 50.0)
    }),
    ("women", |f, _, v| {
        f == "identity.gender" && mentions(v, "female")
    }),
    ("widows and single women", |f, _, v| {
        f == "identity.marital_status"
            && ["widowed", "divorced", "deserted", "separated"]
                .iter()
                .any(|s| mentions(v, s))
    }),
    ("persons with disabilities", |f, _, v| {
        f == "identity.disability_percentage"
            || (f == "identity.verified_documents" && mentions(v, "disability_certificate"))
    }),
    ("farmers", |f, _, v| {
        (f == "economic.occupation"
            && (mentions(v, "farmer") || mentions(v, "agricultural_labourer")))
            || f.ends_with("land_acres")
            || f == "economic.land_holding"
    }),
    ("students", |f, _, _| f.starts_with("education.")),
    ("children and girls", |f, op, v| {
        (f == "identity.age" && matches!(op, "lte" | "lt" | "between") && upper(v) <= 21.0)
            || f == "family.youngest_daughter_age"
    }),
    ("mothers", |f, _, _| {
        f == "family.is_pregnant_or_lactating" || f.starts_with("maternity.")
    }),
    ("SC/ST", |f, _, v| {
        f == "identity.social_category" && (mentions(v, "sc") || mentions(v, "st"))
    }),
    ("minorities", |f, _, _| f == "identity.religion"),
    ("workers and vendors", |f, _, v| {
        (f == "economic.employer_type"
            && (mentions(v, "unorganised") || mentions(v, "self_employed")))
            || (f == "economic.occupation"
                && [
                    "street_vendor",
                    "construction_worker",
                    "artisan",
                    "fisher",
                    "weaver",
                    "domestic_worker",
                ]
                .iter()
                .any(|o| mentions(v, o)))
    }),
    ("poor households", |f, _, v| {
        (f == "economic.bpl_status" && v == &Json::Bool(true))
            || (f == "economic.ration_card_type" && (mentions(v, "aay") || mentions(v, "bpl")))
            || f.starts_with("household.secc")
    }),
    ("families of the deceased", |f, _, _| {
        f == "family.breadwinner_age_at_death"
    }),
];

fn mentions(value: &Json, item: &str) -> bool {
    match value {
        Json::String(s) => s == item,
        Json::Array(items) => items.iter().any(|v| v.as_str() == Some(item)),
        _ => false,
    }
}

/// The upper bound of a number or a `[lo, hi]` pair.
fn upper(value: &Json) -> f64 {
    match value {
        Json::Array(pair) => pair.last().and_then(Json::as_f64),
        other => other.as_f64(),
    }
    .unwrap_or(f64::INFINITY)
}

/// The categories a rule document's eligibility names.
fn categories(document: &Json) -> BTreeSet<&'static str> {
    let mut found = BTreeSet::new();
    let mut stack = vec![&document["eligibility"]];
    while let Some(node) = stack.pop() {
        if node["operator"] == "NOT" {
            continue;
        }
        if let Some(children) = node["conditions"].as_array() {
            stack.extend(children);
            continue;
        }
        let (Some(field), Some(operator)) = (node["field"].as_str(), node["operator"].as_str())
        else {
            continue;
        };
        for (name, serves) in CATEGORIES {
            if serves(field, operator, &node["value"]) {
                found.insert(name);
            }
        }
    }
    found
}

/// The names of the categories of people served, `everyone` last.
pub fn category_names() -> Vec<&'static str> {
    CATEGORIES
        .iter()
        .map(|(name, _)| *name)
        .chain(["everyone"])
        .collect()
}

/// Who a rule is for: the categories its eligibility names (the module's list), or
/// `everyone` where it names none.
pub fn served(rule: &Rule) -> BTreeSet<&'static str> {
    let mut found = categories(&rule.document);
    if found.is_empty() {
        found.insert("everyone");
    }
    found
}

/// One state's (or the central schemes') row of the coverage report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateCoverage {
    /// A `demographics.state` value, or `central`.
    pub state: String,
    pub schemes: usize,
    pub versions: usize,
    /// `benefit.kind` names.
    pub kinds: BTreeSet<&'static str>,
    /// Who the schemes are for (see the module's list; `everyone` where a scheme names none).
    pub categories: BTreeSet<&'static str>,
    /// The oldest `source.retrieved` among the versions.
    pub oldest_check: Option<Date>,
}

/// The coverage of `rules`: the central schemes, then every state and union territory of the
/// catalogue in alphabetical order, each with its counts (zero where it has none).
pub fn coverage(catalogue: &Catalogue, rules: &RuleSet) -> Vec<StateCoverage> {
    let states = catalogue
        .id("demographics.state")
        .and_then(|id| catalogue.field(id).values.clone())
        .unwrap_or_default();
    let mut rows: BTreeMap<String, (BTreeSet<&str>, StateCoverage)> =
        std::iter::once("central".to_string())
            .chain(states)
            .map(|state| {
                let row = StateCoverage {
                    state: state.clone(),
                    schemes: 0,
                    versions: 0,
                    kinds: BTreeSet::new(),
                    categories: BTreeSet::new(),
                    oldest_check: None,
                };
                (state, (BTreeSet::new(), row))
            })
            .collect();
    for rule in &rules.rules {
        let Some((schemes, row)) = rows.get_mut(&rule.state) else {
            continue;
        };
        schemes.insert(rule.scheme_id.as_str());
        row.versions += 1;
        if let Some(benefit) = &rule.benefit {
            row.kinds.insert(benefit.kind.name());
        }
        row.categories.extend(served(rule));
        let checked = rule.document["source"]["retrieved"]
            .as_str()
            .and_then(Date::parse);
        row.oldest_check = match (row.oldest_check, checked) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    let mut out: Vec<StateCoverage> = rows
        .into_values()
        .map(|(schemes, row)| StateCoverage {
            schemes: schemes.len(),
            ..row
        })
        .collect();
    out.sort_by_key(|row| (row.state != "central", row.state.clone()));
    out
}
