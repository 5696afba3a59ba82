//! The rules a worker evaluates with: every active version from PostgreSQL (the source of
//! truth), with the field → rules dependency index and, per (state, date), the version of each
//! scheme a citizen of that state can hold, and the compiled program that gives every rule's
//! verdict and score for one citizen at once.

use std::collections::HashMap;
use std::sync::Mutex;

use engine::deps::DependencyIndex;
use engine::program::Program;
use engine::{Catalogue, Date, FieldId, Outcome, Profile, Rule, RuleSet};

use super::rules_store::{Loaded, RuleRef};

pub struct RuleBook {
    pub catalogue: Catalogue,
    pub rules: RuleSet,
    /// `eligibility_rules`' revision this book was loaded at.
    pub revision: i64,
    /// `rule_key` of each rule, by index: how packed records name rules.
    keys: Vec<i32>,
    /// Every stored rule version by `rule_key`, inactive ones included.
    versions: HashMap<i32, RuleRef>,
    program: Program,
    index: DependencyIndex,
    position: HashMap<String, usize>,
    candidates: Mutex<CandidateCache>,
}

/// (state, date) → the rules a citizen of that state can hold on that date.
type CandidateCache = HashMap<(Option<String>, Date), Vec<usize>>;

impl RuleBook {
    pub fn new(catalogue: Catalogue, loaded: Loaded) -> anyhow::Result<RuleBook> {
        let Loaded {
            revision,
            rules,
            versions,
        } = loaded;
        let key_of: HashMap<&str, i32> = versions
            .iter()
            .map(|(&key, r)| (r.rule_id.as_str(), key))
            .collect();
        let keys = rules
            .rules
            .iter()
            .map(|r| {
                key_of
                    .get(r.rule_id.as_str())
                    .copied()
                    .ok_or_else(|| anyhow::anyhow!("rule {} has no rule_key", r.rule_id))
            })
            .collect::<anyhow::Result<_>>()?;
        let all: Vec<&Rule> = rules.rules.iter().collect();
        let index = DependencyIndex::new(&all, catalogue.len());
        let program = Program::compile(&all);
        let position = rules
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.rule_id.clone(), i))
            .collect();
        Ok(RuleBook {
            catalogue,
            rules,
            revision,
            keys,
            versions,
            program,
            index,
            position,
            candidates: Mutex::new(HashMap::new()),
        })
    }

    /// The `rule_key` of the rule at `index`.
    pub fn key(&self, index: usize) -> i32 {
        self.keys[index]
    }

    /// The stored rule version named `rule_key` (active or not).
    pub fn version(&self, rule_key: i32) -> Option<&RuleRef> {
        self.versions.get(&rule_key)
    }

    /// The verdict and score of each rule of `indices` for `profile`, in order: the caller's
    /// batch-engine outcome where it has one; otherwise the compiled program's when the pass
    /// asks for many rules (it tests each distinct condition of the whole book once, so it wins
    /// from about a quarter of the book), else the scalar evaluator's per rule. The engine's
    /// property tests hold the three equal.
    pub fn outcomes_of(
        &self,
        profile: &Profile,
        as_of: Date,
        indices: impl Iterator<Item = usize>,
        batch: &[(usize, Outcome)],
    ) -> Vec<Outcome> {
        let indices: Vec<usize> = indices.collect();
        let from_batch = |index: usize| batch.iter().find(|(i, _)| *i == index).map(|&(_, o)| o);
        let missing = indices.iter().filter(|&&i| from_batch(i).is_none()).count();
        let compiled = (missing * 4 >= self.rules.rules.len()).then(|| {
            let all: Vec<&Rule> = self.rules.rules.iter().collect();
            self.program.evaluate_one(&all, profile, as_of)
        });
        indices
            .iter()
            .map(|&index| {
                from_batch(index).unwrap_or_else(|| match &compiled {
                    Some(all) => all[index],
                    None => engine::outcome(self.rule(index), profile, as_of),
                })
            })
            .collect()
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

#[cfg(test)]
impl RuleBook {
    /// The bundled corpus, with rule keys 1, 2, … in corpus order.
    pub fn bundled_for_tests() -> RuleBook {
        let catalogue = Catalogue::bundled();
        let rules = RuleSet::bundled(&catalogue).expect("the bundled corpus is valid");
        let versions = rules
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let reference = RuleRef {
                    rule_id: r.rule_id.clone(),
                    scheme_id: r.scheme_id.clone(),
                    version: r.version,
                };
                (i as i32 + 1, reference)
            })
            .collect();
        let loaded = Loaded {
            revision: 1,
            rules,
            versions,
        };
        RuleBook::new(catalogue, loaded).expect("every rule has a key")
    }
}
