//! A set of loaded rules: reading a directory of YAML files, cross-rule checks, and choosing the
//! version of each scheme in effect on a date.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::catalogue::Catalogue;
use crate::date::Date;
use crate::error::{EngineError, Problem, ValidationReport};
use crate::load::parse_rule_yaml;
use crate::rule::Rule;
use crate::temporal::applicability;

/// Rules sorted by (scheme_id, version).
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
}

include!(concat!(env!("OUT_DIR"), "/bundled_rules.rs"));

impl RuleSet {
    /// The corpus compiled into the engine (`schemes/` at build time).
    pub fn bundled(catalogue: &Catalogue) -> Result<RuleSet, ValidationReport> {
        let documents: Vec<(String, String)> = BUNDLED_RULES
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        RuleSet::from_documents(catalogue, &documents)
    }

    /// Loads every `*.yaml`/`*.yml` file below `dir` (sorted by path). All problems in all files
    /// are reported together.
    pub fn load_dir(catalogue: &Catalogue, dir: &Path) -> Result<RuleSet, EngineError> {
        let mut files = Vec::new();
        collect_yaml(dir, &mut files)?;
        if files.is_empty() {
            return Err(EngineError::Io {
                path: dir.display().to_string(),
                reason: "no rule files (*.yaml) found".into(),
            });
        }
        let mut documents = Vec::with_capacity(files.len());
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|e| EngineError::Io {
                path: file.display().to_string(),
                reason: e.to_string(),
            })?;
            documents.push((file.display().to_string(), text));
        }
        RuleSet::from_documents(catalogue, &documents).map_err(EngineError::Invalid)
    }

    /// Builds a rule set from `(source, yaml)` pairs.
    pub fn from_documents(
        catalogue: &Catalogue,
        documents: &[(String, String)],
    ) -> Result<RuleSet, ValidationReport> {
        let mut problems = Vec::new();
        let mut rules = Vec::new();
        for (source, text) in documents {
            match parse_rule_yaml(catalogue, text, source) {
                Ok(rule) => rules.push(rule),
                Err(mut found) => problems.append(&mut found),
            }
        }
        problems.extend(cross_rule_problems(&rules));
        if !problems.is_empty() {
            return Err(ValidationReport { problems });
        }
        Ok(RuleSet::from_rules(rules))
    }

    pub fn from_rules(mut rules: Vec<Rule>) -> RuleSet {
        rules.sort_by(|a, b| (&a.scheme_id, a.version).cmp(&(&b.scheme_id, b.version)));
        RuleSet { rules }
    }

    /// The version of `scheme_id` in effect on `as_of`, else its newest: the one a page or a
    /// route shows of a scheme.
    pub fn in_effect_or_newest(&self, scheme_id: &str, as_of: Date) -> Option<&Rule> {
        self.in_effect(as_of)
            .into_iter()
            .find(|r| r.scheme_id == scheme_id)
            .or_else(|| self.rules.iter().rev().find(|r| r.scheme_id == scheme_id))
    }

    pub fn get(&self, rule_id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.rule_id == rule_id)
    }

    /// For each scheme, the version in effect on `as_of` (by effective dates; the application
    /// window does not matter here), sorted by scheme id. Where versions overlap — a conflict the
    /// detector reports — the highest version wins, so the choice is still deterministic.
    pub fn in_effect(&self, as_of: Date) -> Vec<&Rule> {
        let mut by_scheme: BTreeMap<&str, &Rule> = BTreeMap::new();
        for rule in &self.rules {
            if applicability(rule, as_of).in_effect() {
                by_scheme
                    .entry(&rule.scheme_id)
                    .and_modify(|current| {
                        if rule.version > current.version {
                            *current = rule;
                        }
                    })
                    .or_insert(rule);
            }
        }
        by_scheme.into_values().collect()
    }

    /// The schemes a citizen of `state` can hold: central ones and the state's own. An unknown
    /// state keeps every scheme.
    pub fn for_state<'a>(rules: Vec<&'a Rule>, state: Option<&str>) -> Vec<&'a Rule> {
        match state {
            Some(state) => rules
                .into_iter()
                .filter(|r| r.is_central() || r.state == state)
                .collect(),
            None => rules,
        }
    }
}

fn cross_rule_problems(rules: &[Rule]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut ids: HashMap<&str, &str> = HashMap::new();
    let mut versions: HashMap<(&str, u32), &str> = HashMap::new();
    for rule in rules {
        let problem = |reason: String| Problem {
            source: rule.source.clone(),
            id: Some(rule.rule_id.clone()),
            path: String::new(),
            reason,
        };
        if let Some(other) = ids.insert(&rule.rule_id, &rule.source) {
            problems.push(problem(format!(
                "rule_id `{}` is also used by {other}",
                rule.rule_id
            )));
        }
        if let Some(other) = versions.insert((&rule.scheme_id, rule.version), &rule.source) {
            problems.push(problem(format!(
                "version {} of `{}` is also defined by {other}",
                rule.version, rule.scheme_id
            )));
        }
    }
    problems
}

/// Every `*.yaml`/`*.yml` file at or below `path`, sorted by path.
pub(crate) fn collect_yaml(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), EngineError> {
    let io = |e: std::io::Error| EngineError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    if path.is_file() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect_yaml(&entry, files)?;
        } else if entry.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(entry);
        }
    }
    Ok(())
}
