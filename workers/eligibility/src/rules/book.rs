//! The rules a worker evaluates with: every active version from PostgreSQL (the source of
//! truth), with the field → rules dependency index and, per (state, date), the version of each
//! scheme a citizen of that state can hold, and per state the compiled program that gives the
//! verdict and score of every rule a citizen of that state can hold at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use engine::calendar::AgeLimits;
use engine::columns::ProfileColumns;
use engine::deps::DependencyIndex;
use engine::program::Program;
use engine::{Catalogue, Date, FieldId, Outcome, Profile, Rule, RuleSet};
use kernels::engine_select::{Engine, EngineUsed, SelectError};
use kernels::output::{Output, Outputs};

use super::store::{Loaded, RuleRef};

pub struct RuleBook {
    pub catalogue: Catalogue,
    pub rules: RuleSet,
    /// `eligibility_rules`' revision this book was loaded at.
    pub revision: i64,
    /// `rule_key` of each rule, by index: how packed records name rules.
    keys: Vec<i32>,
    /// The stored version of each rule, by index.
    references: Vec<RuleRef>,
    /// Every stored rule version, inactive ones included, sorted by `rule_key`: searched for
    /// each of the thousand-odd verdicts of every user a batch loads, where hashing each key
    /// cost more than a binary search (docs/fleet.md "Where the time goes").
    versions: Vec<(i32, RuleRef)>,
    index: DependencyIndex,
    position: HashMap<String, usize>,
    candidates: Mutex<CandidateCache>,
    /// Compiled on first use, per state.
    programs: Mutex<HashMap<Option<String>, Arc<StateProgram>>>,
    /// The rules of several states, compiled on first use per set of states: a profile
    /// micro-batch on the batch engine.
    unions: Mutex<HashMap<Vec<Option<String>>, Arc<BatchProgram>>>,
}

/// The rules of a set of states (book indices, ascending), compiled together.
struct BatchProgram {
    indices: Vec<usize>,
    program: Program,
}

/// The rules a citizen of one state can hold (central and the state's, every version held:
/// `RuleSet::for_state`), compiled together. A pass tests each distinct condition of these
/// once, not of the whole book: with 1,000 schemes over 36 states, about a quarter of it.
struct StateProgram {
    /// Book indices, ascending.
    indices: Vec<usize>,
    program: Program,
    /// Which of these rules a birthday can change (`engine::calendar::AgeLimits`).
    ages: AgeLimits,
}

/// One profile's outcomes from the batch engine: (book index, outcome).
pub type RuleOutcomes = Vec<(usize, Outcome)>;

/// (state, date) → the rules a citizen of that state can hold on that date.
type CandidateCache = HashMap<(Option<String>, Date), Arc<Candidates>>;

/// The rules a citizen of one state can hold on one date: one per scheme.
pub struct Candidates {
    /// Book indices, in the book's order.
    pub indices: Vec<usize>,
    /// Positions in `indices`, ordered by scheme id: walked beside a user's verdicts (kept
    /// by scheme id) to pair each candidate with its stored verdict in one pass.
    pub by_scheme: Vec<usize>,
}

impl RuleBook {
    pub fn new(catalogue: Catalogue, loaded: Loaded) -> anyhow::Result<RuleBook> {
        let Loaded {
            revision,
            rules,
            versions,
        } = loaded;
        let key_of: HashMap<&str, i32> =
            versions.iter().map(|(&key, r)| (r.rule_id, key)).collect();
        let keys = rules
            .rules
            .iter()
            .map(|r| {
                key_of
                    .get(r.rule_id.as_str())
                    .copied()
                    .ok_or_else(|| anyhow::anyhow!("rule {} has no rule_key", r.rule_id))
            })
            .collect::<anyhow::Result<Vec<i32>>>()?;
        let references = keys.iter().map(|key| versions[key]).collect();
        let mut versions: Vec<(i32, RuleRef)> = versions.into_iter().collect();
        versions.sort_unstable_by_key(|&(key, _)| key);
        let all: Vec<&Rule> = rules.rules.iter().collect();
        let index = DependencyIndex::new(&all, catalogue.len());
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
            references,
            versions,
            index,
            position,
            candidates: Mutex::new(HashMap::new()),
            programs: Mutex::new(HashMap::new()),
            unions: Mutex::new(HashMap::new()),
        })
    }

    /// The `rule_key` of the rule at `index`.
    pub fn key(&self, index: usize) -> i32 {
        self.keys[index]
    }

    /// The stored rule version of the rule at `index`.
    pub fn reference(&self, index: usize) -> &RuleRef {
        &self.references[index]
    }

    /// The stored rule version named `rule_key` (active or not).
    pub fn version(&self, rule_key: i32) -> Option<&RuleRef> {
        self.versions
            .binary_search_by_key(&rule_key, |&(key, _)| key)
            .ok()
            .map(|at| &self.versions[at].1)
    }

    /// The verdict and score of each rule of `indices` (rules a citizen of `state` can hold) for
    /// `profile`, in order: the caller's batch-engine outcome where it has one; otherwise the
    /// state's compiled program's when the pass asks for many of the state's rules (it tests
    /// each distinct condition once, so it wins from about a quarter of them), else the scalar
    /// evaluator's per rule. The engine's property tests hold the three equal.
    pub fn outcomes_of(
        &self,
        profile: &Profile,
        state: Option<&str>,
        as_of: Date,
        indices: impl Iterator<Item = usize>,
        batch: &[(usize, Outcome)],
    ) -> Vec<Outcome> {
        let indices: Vec<usize> = indices.collect();
        let from_batch = |index: usize| batch.iter().find(|(i, _)| *i == index).map(|&(_, o)| o);
        let missing = indices.iter().filter(|&&i| from_batch(i).is_none()).count();
        let compiled = (missing > 0)
            .then(|| self.program_of(state))
            .filter(|p| missing * 4 >= p.indices.len())
            .map(|p| {
                let rules: Vec<&Rule> = p.indices.iter().map(|&i| self.rule(i)).collect();
                (p.program.evaluate_one(&rules, profile, as_of), p)
            });
        indices
            .iter()
            .map(|&index| {
                from_batch(index).unwrap_or_else(|| {
                    let slot = compiled
                        .as_ref()
                        .and_then(|(all, p)| Some(all[p.indices.binary_search(&index).ok()?]));
                    slot.unwrap_or_else(|| engine::outcome(self.rule(index), profile, as_of))
                })
            })
            .collect()
    }

    /// Every rule of each profile's state on the batch engine (a profile micro-batch on the
    /// GPU): per profile, (book index, outcome) for the rules of its state, to hand its pass as
    /// `Trigger::Profile::batch`. Profiles are taken as they read on their date (aged), as the
    /// pass reads them. The profiles of one date go in one batch against the rules of every
    /// state among them (one launch, not one per state: a profile's outcomes under another
    /// state's rules are computed and not used).
    pub fn batch_outcomes(
        &self,
        engine: &Engine,
        profiles: &[(&Profile, Option<&str>, Date)],
        threads: usize,
    ) -> Result<(Vec<RuleOutcomes>, EngineUsed), SelectError> {
        let mut by_day: HashMap<Date, Vec<usize>> = HashMap::new();
        for (k, &(_, _, as_of)) in profiles.iter().enumerate() {
            by_day.entry(as_of).or_default().push(k);
        }
        let mut outcomes = vec![Vec::new(); profiles.len()];
        let mut used = EngineUsed::Cpu;
        for (as_of, members) in by_day {
            let mut states: Vec<Option<&str>> = members.iter().map(|&k| profiles[k].1).collect();
            states.sort_unstable();
            states.dedup();
            let union = self.program_of_states(&states);
            let rules: Vec<&Rule> = union.indices.iter().map(|&i| self.rule(i)).collect();
            let aged: Vec<&Profile> = members.iter().map(|&k| profiles[k].0).collect();
            let columns = ProfileColumns::new(&self.catalogue, &aged);
            let (codes, engine_used) = engine.evaluate(
                &union.program,
                &rules,
                &columns,
                as_of,
                threads,
                Output::Codes,
            )?;
            let Outputs::Codes(codes) = codes else {
                unreachable!("codes were asked for")
            };
            for (c, &k) in members.iter().enumerate() {
                // Only the rules of the profile's own state: those its pass can ask for.
                let own = self.program_of(profiles[k].1);
                outcomes[k] = own
                    .indices
                    .iter()
                    .map(|&index| {
                        let r = union
                            .indices
                            .binary_search(&index)
                            .expect("a state's rules are in the union of its batch");
                        (index, codes.get(c, r))
                    })
                    .collect();
            }
            used = engine_used;
        }
        Ok((outcomes, used))
    }

    /// The rules of every state of `states` (each sorted, distinct), compiled once per set.
    fn program_of_states(&self, states: &[Option<&str>]) -> Arc<BatchProgram> {
        let key: Vec<Option<String>> = states.iter().map(|s| s.map(str::to_string)).collect();
        let mut unions = self.unions.lock().expect("not poisoned");
        unions
            .entry(key)
            .or_insert_with(|| {
                let mut indices: Vec<usize> = states
                    .iter()
                    .flat_map(|&state| self.program_of(state).indices.clone())
                    .collect();
                indices.sort_unstable();
                indices.dedup();
                let rules: Vec<&Rule> = indices.iter().map(|&i| self.rule(i)).collect();
                let program = Program::compile(&rules);
                Arc::new(BatchProgram { indices, program })
            })
            .clone()
    }

    fn program_of(&self, state: Option<&str>) -> Arc<StateProgram> {
        let mut programs = self.programs.lock().expect("not poisoned");
        programs
            .entry(state.map(str::to_string))
            .or_insert_with(|| {
                let rules = RuleSet::for_state(self.rules.rules.iter().collect(), state);
                let indices: Vec<usize> = rules.iter().map(|r| self.position[&r.rule_id]).collect();
                let program = Program::compile(&rules);
                let ages = AgeLimits::new(&self.catalogue, &self.rules.rules, &indices);
                Arc::new(StateProgram {
                    indices,
                    program,
                    ages,
                })
            })
            .clone()
    }

    /// The first birthday after `after` on which the age changes the outcome of a rule a
    /// citizen of `state` can hold: the day the daily sweep re-evaluates them.
    pub fn next_age_change(
        &self,
        state: Option<&str>,
        profile: &Profile,
        after: Date,
    ) -> Option<Date> {
        profile.date_of_birth()?;
        let rules = &self.rules.rules;
        self.program_of(state)
            .ages
            .next_change(&self.catalogue, rules, profile, after)
    }

    /// The rules (book indices, ascending) whose outcome for a citizen of `state` the age
    /// alone changes between `since` and `day`, found by evaluating both.
    pub fn age_changed(
        &self,
        state: Option<&str>,
        profile: &Profile,
        since: Date,
        day: Date,
    ) -> Vec<usize> {
        if profile.date_of_birth().is_none() {
            return Vec::new();
        }
        let rules = &self.rules.rules;
        self.program_of(state)
            .ages
            .changed(&self.catalogue, rules, profile, since, day)
    }

    pub fn rule(&self, index: usize) -> &Rule {
        &self.rules.rules[index]
    }

    pub fn index_of(&self, rule_id: &str) -> Option<usize> {
        self.position.get(rule_id).copied()
    }

    /// The rule of each scheme a citizen of `state` can hold on `as_of`.
    pub fn candidates(&self, state: Option<&str>, as_of: Date) -> Arc<Candidates> {
        let key = (state.map(str::to_string), as_of);
        let mut cache = self.candidates.lock().expect("not poisoned");
        if let Some(found) = cache.get(&key) {
            return found.clone();
        }
        let indices: Vec<usize> = RuleSet::for_state(self.rules.in_effect(as_of), state)
            .into_iter()
            .map(|r| self.position[&r.rule_id])
            .collect();
        let mut by_scheme: Vec<usize> = (0..indices.len()).collect();
        by_scheme.sort_by(|&a, &b| {
            let scheme = |at: usize| self.rule(indices[at]).scheme_id.as_str();
            scheme(a).cmp(scheme(b))
        });
        let chosen = Arc::new(Candidates { indices, by_scheme });
        // Dates move slowly; a bounded cache keeps a long replay from growing it forever.
        if cache.len() > 4096 {
            cache.clear();
        }
        cache.insert(key, chosen.clone());
        chosen
    }

    /// By book index: whether a leaf on one of `change`'s fields has another truth for `after`
    /// than for `before`, for the rules `asked`; every other rule is said moved
    /// (`engine::deps::DependencyIndex::leaves_moved_among`).
    pub fn leaves_moved(
        &self,
        change: &engine::deps::ProfileChange,
        before: &Profile,
        after: &Profile,
        asked: &[usize],
    ) -> Vec<bool> {
        self.index.leaves_moved_among(change, before, after, asked)
    }

    /// `fields` as bits, to ask [`Self::reads_any`] of many rules.
    pub fn field_set(&self, fields: &[FieldId]) -> engine::deps::FieldSet {
        self.index.field_set(fields)
    }

    /// Whether the rule `index` reads any of `fields`.
    pub fn reads_any(&self, index: usize, fields: &engine::deps::FieldSet) -> bool {
        self.index.reads_any(index, fields)
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
                    rule_id: super::names::intern(&r.rule_id),
                    scheme_id: super::names::intern(&r.scheme_id),
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
