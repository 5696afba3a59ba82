//! The rules a worker evaluates with: every active version from PostgreSQL (the source of
//! truth), with the field → rules dependency index and, per (state, date), the version of each
//! scheme a citizen of that state can hold.

use std::collections::HashMap;
use std::sync::Mutex;

use engine::deps::DependencyIndex;
use engine::{Catalogue, Date, FieldId, Rule, RuleSet};

pub struct RuleBook {
    pub catalogue: Catalogue,
    pub rules: RuleSet,
    /// `eligibility_rules`' revision this book was loaded at.
    pub revision: i64,
    index: DependencyIndex,
    position: HashMap<String, usize>,
    candidates: Mutex<CandidateCache>,
}

/// (state, date) → the rules a citizen of that state can hold on that date.
type CandidateCache = HashMap<(Option<String>, Date), Vec<usize>>;

impl RuleBook {
    pub fn new(catalogue: Catalogue, rules: RuleSet, revision: i64) -> RuleBook {
        let all: Vec<&Rule> = rules.rules.iter().collect();
        let index = DependencyIndex::new(&all, catalogue.len());
        let position = rules
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.rule_id.clone(), i))
            .collect();
        RuleBook {
            catalogue,
            rules,
            revision,
            index,
            position,
            candidates: Mutex::new(HashMap::new()),
        }
    }

    pub fn rule(&self, index: usize) -> &Rule {
        &self.rules.rules[index]
    }

    pub fn index_of(&self, rule_id: &str) -> Option<usize> {
        self.position.get(rule_id).copied()
    }

    /// The rule of each scheme a citizen of `state` can hold on `as_of` (indices, by scheme id).
    pub fn candidates(&self, state: Option<&str>, as_of: Date) -> Vec<usize> {
        let key = (state.map(str::to_string), as_of);
        let mut cache = self.candidates.lock().expect("not poisoned");
        if let Some(found) = cache.get(&key) {
            return found.clone();
        }
        let chosen: Vec<usize> = RuleSet::for_state(self.rules.in_effect(as_of), state)
            .into_iter()
            .map(|r| self.position[&r.rule_id])
            .collect();
        // Dates move slowly; a bounded cache keeps a long replay from growing it forever.
        if cache.len() > 4096 {
            cache.clear();
        }
        cache.insert(key, chosen.clone());
        chosen
    }

    /// The rules (indices) that read any of `fields`, sorted.
    pub fn reading(&self, fields: &[FieldId]) -> Vec<usize> {
        self.index.rules_reading(fields)
    }
}
