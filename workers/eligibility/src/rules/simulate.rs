//! Who gains and who loses: a proposed rule set against a population, before it goes live
//! (docs/releases.md, "Population diff"). `eligibility rules simulate` runs it over the stored
//! population or synthetic citizens; the API's `POST /rules/simulate` over a stored sample.
//!
//! Only the schemes whose version in effect on `as_of` differs between the two sets are
//! evaluated, with the batch engine (the GPU kernels when `auto` finds a device and the batch is
//! big), old and new side by side. Per scheme and state it counts each verdict transition, the
//! change in monthly outlay (each eligible citizen's amount, tiers applied), the gaps that newly
//! block citizens, and keeps a sample of affected user ids.

use std::collections::{BTreeMap, BTreeSet};

use engine::columns::ProfileColumns;
use engine::program::Program;
use engine::{Catalogue, Date, Profile, Rule, RuleSet, Verdict};
use kernels::engine_select::{Engine, Job};
use kernels::output::{Output, Outputs, Verdicts};
use serde::Serialize;

/// A chunk of the population, column by column: the profiles go to the batch engine as they
/// are, without a copy.
#[derive(Default)]
pub struct Population {
    pub user_ids: Vec<String>,
    /// `demographics.state`; None covers every state's schemes.
    pub states: Vec<Option<String>>,
    pub profiles: Vec<Profile>,
}

impl Population {
    pub fn len(&self) -> usize {
        self.profiles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.profiles.is_empty()
    }

    pub fn push(&mut self, user_id: String, state: Option<String>, profile: Profile) {
        self.user_ids.push(user_id);
        self.states.push(state);
        self.profiles.push(profile);
    }
}

/// A scheme whose version in effect changes.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub scheme_id: String,
    /// The version in effect now; None for a new scheme.
    pub from_rule: Option<String>,
    /// The proposed version; None where the proposal ends the scheme.
    pub to_rule: Option<String>,
    /// `central` or the scheme's state.
    pub state: String,
}

/// The whole difference.
#[derive(Debug, Default, Serialize)]
pub struct Diff {
    pub as_of: String,
    pub citizens: usize,
    pub changes: Vec<Change>,
    /// scheme id → state → what changes there.
    pub schemes: BTreeMap<String, BTreeMap<String, StateDiff>>,
    /// Conflicts the proposal brings (the detector's findings on the proposed set that the
    /// current set does not have).
    pub conflicts_introduced: Vec<serde_json::Value>,
    /// Which engine evaluated the batches.
    pub engine: String,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct StateDiff {
    /// "FROM->TO" → citizens (unchanged verdicts included, e.g. "ELIGIBLE->ELIGIBLE").
    pub transitions: BTreeMap<String, usize>,
    /// Monthly outlay to the citizens eligible before and after, ₹: money paid out only
    /// (benefit kinds cash, pension, scholarship; annual amounts / 12; one-time and in-kind
    /// benefits are not in it). A cover, a loan limit or a contributory pension is not money
    /// the scheme pays now (docs/rule-format.md, "Benefit kinds").
    pub monthly_outlay_before_inr: f64,
    pub monthly_outlay_after_inr: f64,
    /// Insurance cover held by the citizens eligible before and after, ₹ (paid only on a
    /// claim: reported apart from the outlay).
    pub insurance_cover_before_inr: f64,
    pub insurance_cover_after_inr: f64,
    /// Loan limits open to the citizens eligible before and after, ₹ (lent, not paid:
    /// reported apart from the outlay).
    pub loan_limits_before_inr: f64,
    pub loan_limits_after_inr: f64,
    /// Field → citizens whose verdict got worse with a gap on it under the proposal.
    pub newly_blocking_gaps: BTreeMap<String, usize>,
    /// Up to [`SAMPLE`] user ids whose verdict changes.
    pub affected_sample: Vec<String>,
}

/// Affected user ids kept per scheme and state.
pub const SAMPLE: usize = 10;

/// The schemes a proposal changes, and their versions before and after.
pub struct Simulation<'a> {
    catalogue: &'a Catalogue,
    current: &'a RuleSet,
    proposed: &'a RuleSet,
    as_of: Date,
    changes: Vec<Change>,
    before: Vec<Option<&'a Rule>>,
    after: Vec<Option<&'a Rule>>,
}

impl<'a> Simulation<'a> {
    /// `current` is the rule set in effect; `proposed` the set with the proposal applied.
    pub fn new(
        catalogue: &'a Catalogue,
        current: &'a RuleSet,
        proposed: &'a RuleSet,
        as_of: Date,
    ) -> Simulation<'a> {
        let index = |set: &'a RuleSet| -> BTreeMap<&'a str, &'a Rule> {
            set.in_effect(as_of)
                .into_iter()
                .map(|r| (r.scheme_id.as_str(), r))
                .collect()
        };
        let (now, next) = (index(current), index(proposed));
        let schemes: BTreeSet<&str> = now.keys().chain(next.keys()).copied().collect();
        let mut simulation = Simulation {
            catalogue,
            current,
            proposed,
            as_of,
            changes: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
        };
        for scheme in schemes {
            let (before, after) = (now.get(scheme).copied(), next.get(scheme).copied());
            if before.map(|r| &r.rule_hash) == after.map(|r| &r.rule_hash) {
                continue;
            }
            let state = after
                .or(before)
                .map_or_else(|| "central".into(), |r| r.state.clone());
            simulation.changes.push(Change {
                scheme_id: scheme.to_string(),
                from_rule: before.map(|r| r.rule_id.clone()),
                to_rule: after.map(|r| r.rule_id.clone()),
                state,
            });
            simulation.before.push(before);
            simulation.after.push(after);
        }
        simulation
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Evaluates one chunk of citizens and adds what it finds to `diff`.
    pub fn run(
        &self,
        engine: &Engine,
        citizens: &Population,
        diff: &mut Diff,
    ) -> anyhow::Result<()> {
        if self.changes.is_empty() || citizens.is_empty() {
            diff.citizens += citizens.len();
            return Ok(());
        }
        // Each citizen as they read on the date (docs/semantics.md, "Age on a date").
        let aged: Vec<std::borrow::Cow<Profile>> =
            citizens.profiles.iter().map(|p| p.on(self.as_of)).collect();
        let columns = ProfileColumns::new(self.catalogue, &aged);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Each side's rules that exist, and each change's slot among them.
        let side = |rules: &[Option<&'a Rule>]| {
            let present: Vec<&Rule> = rules.iter().flatten().copied().collect();
            let mut next = 0;
            let slots: Vec<Option<usize>> = rules
                .iter()
                .map(|rule| {
                    rule.map(|_| {
                        next += 1;
                        next - 1
                    })
                })
                .collect();
            (present, slots)
        };
        let (present_before, slot_before) = side(&self.before);
        let (present_after, slot_after) = side(&self.after);
        let program_before = Program::compile(&present_before);
        let program_after = Program::compile(&present_after);
        // Old and new over the same columns (kept on the GPU for both); verdicts only, two
        // bits a pair, are what the diff counts.
        let jobs: Vec<Job> = [
            (&program_before, &present_before),
            (&program_after, &present_after),
        ]
        .into_iter()
        .filter(|(_, rules)| !rules.is_empty())
        .map(|(program, rules)| Job {
            program,
            rules,
            output: Output::Verdicts,
        })
        .collect();
        let mut done = engine
            .evaluate_each(&columns, &jobs, self.as_of, threads)?
            .into_iter();
        let mut verdicts_of = |rules: &[&Rule]| -> Option<(Verdicts, String)> {
            if rules.is_empty() {
                return None;
            }
            match done.next() {
                Some((Outputs::Verdicts(v), used)) => Some((v, format!("{used:?}"))),
                _ => unreachable!("one verdict output per job"),
            }
        };
        let before = verdicts_of(&present_before);
        let after = verdicts_of(&present_after);
        diff.engine = after
            .as_ref()
            .or(before.as_ref())
            .map(|(_, used)| used.clone())
            .unwrap_or_default();
        diff.citizens += citizens.len();
        for (s, change) in self.changes.iter().enumerate() {
            let code =
                |evaluated: &Option<(Verdicts, String)>, slot: Option<usize>, i: usize| match (
                    evaluated, slot,
                ) {
                    (Some((v, _)), Some(rule)) => v.verdict(i, rule),
                    _ => Verdict::NotApplicable,
                };
            let by_state = diff.schemes.entry(change.scheme_id.clone()).or_default();
            for (i, profile) in aged.iter().enumerate() {
                let state = citizens.states[i].as_deref();
                if change.state != "central" && state.is_some_and(|st| st != change.state) {
                    continue;
                }
                let was = code(&before, slot_before[s], i);
                let now = code(&after, slot_after[s], i);
                let entry = by_state
                    .entry(state.unwrap_or("unknown").to_string())
                    .or_default();
                *entry
                    .transitions
                    .entry(format!("{}->{}", was.name(), now.name()))
                    .or_default() += 1;
                if was == Verdict::Eligible {
                    let sums = Sums::of(self.before[s], profile);
                    entry.monthly_outlay_before_inr += sums.monthly_outlay;
                    entry.insurance_cover_before_inr += sums.cover;
                    entry.loan_limits_before_inr += sums.loan_limit;
                }
                if now == Verdict::Eligible {
                    let sums = Sums::of(self.after[s], profile);
                    entry.monthly_outlay_after_inr += sums.monthly_outlay;
                    entry.insurance_cover_after_inr += sums.cover;
                    entry.loan_limits_after_inr += sums.loan_limit;
                }
                if was == now {
                    continue;
                }
                if entry.affected_sample.len() < SAMPLE {
                    entry.affected_sample.push(citizens.user_ids[i].clone());
                }
                if rank(now) < rank(was)
                    && let Some(rule) = self.after[s]
                {
                    let (_, gaps) =
                        engine::eval::outcome_with_gaps(self.catalogue, rule, profile, self.as_of);
                    let fields: BTreeSet<&str> = gaps.iter().map(|g| g.field).collect();
                    for field in fields {
                        *entry
                            .newly_blocking_gaps
                            .entry(field.to_string())
                            .or_default() += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Evaluates the stored citizens the changed schemes cover (those of `state`, and those
    /// without a state, when given), at most `limit` (all when None), in pages by user id.
    pub async fn run_stored(
        &self,
        engine: &Engine,
        pool: &deadpool_postgres::Pool,
        state: Option<&str>,
        limit: Option<usize>,
        diff: &mut Diff,
    ) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        let mut after = String::new();
        loop {
            let left = limit.map_or(CHUNK, |l| l.saturating_sub(diff.citizens).min(CHUNK));
            let chunk = stored_population(pool, self.catalogue, state, &after, left).await?;
            let Some(last) = chunk.user_ids.last() else {
                return Ok(());
            };
            after = last.clone();
            self.run(engine, &chunk, diff)?;
            if limit.is_none() {
                // The whole population: a long run shows its progress.
                eprintln!(
                    "… {} citizens after {:.1}s",
                    diff.citizens,
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }

    /// The conflicts in the proposed set that the current one does not have (by type and
    /// rules).
    fn conflicts_introduced(&self) -> Vec<serde_json::Value> {
        let (current, proposed) = (self.current, self.proposed);
        let key = |c: &engine::conflicts::Conflict| {
            (format!("{:?}", c.conflict_type), c.rule_ids.clone())
        };
        let known: BTreeSet<_> = engine::conflicts::detect(self.catalogue, current)
            .conflicts
            .iter()
            .map(key)
            .collect();
        engine::conflicts::detect(self.catalogue, proposed)
            .conflicts
            .iter()
            .filter(|c| !known.contains(&key(c)))
            .map(|c| serde_json::to_value(c).expect("serialisable"))
            .collect()
    }

    /// An empty diff of this proposal: its changes and the conflicts it introduces; `run`
    /// adds the citizens.
    pub fn diff(&self) -> Diff {
        Diff {
            as_of: self.as_of.to_string(),
            changes: self.changes.clone(),
            conflicts_introduced: self.conflicts_introduced(),
            ..Diff::default()
        }
    }
}

/// A diff's headline over every scheme and state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Totals {
    /// Citizens whose verdict becomes ELIGIBLE.
    pub gained: usize,
    /// Citizens whose verdict stops being ELIGIBLE.
    pub lost: usize,
    pub monthly_outlay_change_inr: f64,
}

/// Counts below this are reported as `"<10"` to admins (docs/api.md, "What admins see").
pub const SMALL_CELL: usize = 10;

/// A count as admins see it: itself, or `"<10"` when it is small enough to single out people.
pub fn cell(count: u64) -> serde_json::Value {
    if count < SMALL_CELL as u64 {
        serde_json::Value::from(format!("<{SMALL_CELL}"))
    } else {
        serde_json::Value::from(count)
    }
}

/// A diff (as [`Diff`] serialises it) as the admin routes and `rule.simulation.completed` carry
/// it (docs/api.md, "What admins see"): no user id, and every count under [`SMALL_CELL`] said as
/// `"<10"`; where a scheme's state cell holds fewer than that many citizens, its money sums are
/// withheld too (`null`), since they would tell what those few receive. Given the whole diff
/// (as stored with a proposal), once.
pub fn for_admins(diff: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    let mut json = diff.clone();
    if let Some(n) = json["citizens"].as_u64() {
        json["citizens"] = cell(n);
    }
    let cells = json["schemes"]
        .as_object_mut()
        .into_iter()
        .flat_map(|schemes| schemes.values_mut())
        .filter_map(Value::as_object_mut)
        .flat_map(|states| states.values_mut())
        .filter_map(Value::as_object_mut);
    for out in cells {
        out.remove("affected_sample");
        let total: u64 = out
            .get("transitions")
            .and_then(Value::as_object)
            .map_or(0, |t| t.values().filter_map(Value::as_u64).sum());
        for name in ["transitions", "newly_blocking_gaps"] {
            if let Some(counts) = out.get_mut(name).and_then(Value::as_object_mut) {
                for count in counts.values_mut() {
                    if let Some(n) = count.as_u64() {
                        *count = cell(n);
                    }
                }
            }
        }
        if total < SMALL_CELL as u64 {
            for (name, value) in out.iter_mut() {
                if name.ends_with("_inr") {
                    *value = Value::Null;
                }
            }
        }
    }
    json
}

impl Diff {
    /// This diff as admins see it ([`for_admins`]).
    pub fn for_admins(&self) -> serde_json::Value {
        for_admins(&serde_json::to_value(self).expect("a diff serialises"))
    }

    pub fn totals(&self) -> Totals {
        let eligible = Verdict::Eligible.name();
        let mut totals = Totals {
            gained: 0,
            lost: 0,
            monthly_outlay_change_inr: 0.0,
        };
        for state in self.schemes.values().flat_map(BTreeMap::values) {
            for (transition, &citizens) in &state.transitions {
                let (from, to) = transition.split_once("->").unwrap_or((transition, ""));
                if to == eligible && from != eligible {
                    totals.gained += citizens;
                } else if from == eligible && to != eligible {
                    totals.lost += citizens;
                }
            }
            totals.monthly_outlay_change_inr +=
                state.monthly_outlay_after_inr - state.monthly_outlay_before_inr;
        }
        totals
    }
}

/// How good a verdict is for the citizen (a fall in rank is a loss).
fn rank(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Eligible => 3,
        Verdict::PartialMatch => 2,
        Verdict::NotEligible => 1,
        Verdict::NotApplicable => 0,
    }
}

/// What `rule` gives `profile`, tiers applied, by what the amount is: money paid a month
/// (annual / 12), an insurance cover, a loan limit; 0 where it has none.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Sums {
    monthly_outlay: f64,
    cover: f64,
    loan_limit: f64,
}

impl Sums {
    fn of(rule: Option<&Rule>, profile: &Profile) -> Sums {
        let Some(estimate) = rule.and_then(|r| r.benefit_for(profile)) else {
            return Sums::default();
        };
        let number = |v: &Option<serde_json::Value>| {
            v.as_ref()
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(0.0)
        };
        Sums {
            monthly_outlay: estimate.monthly_paid_out().unwrap_or(0.0),
            cover: number(&estimate.cover_inr),
            loan_limit: number(&estimate.loan_up_to_inr),
        }
    }
}

/// `current` with `proposals` added (a proposal replaces nothing: as a higher version it wins
/// where both are in effect, as in the fleet).
pub fn with_proposals(current: &RuleSet, proposals: Vec<Rule>) -> RuleSet {
    let mut rules = current.rules.clone();
    rules.retain(|r| !proposals.iter().any(|p| p.rule_id == r.rule_id));
    rules.extend(proposals);
    RuleSet::from_rules(rules)
}

/// The diff of `rule` added to `current` (it wins over the scheme's version in effect on
/// `as_of`), over the stored citizens the rule covers — its state's and those without one, or
/// all for a central rule — the first `limit` by user id when given. What the API's simulation
/// jobs and every proposal compute.
pub async fn stored_diff(
    catalogue: &Catalogue,
    current: &RuleSet,
    rule: Rule,
    as_of: Date,
    engine: &Engine,
    pool: &deadpool_postgres::Pool,
    limit: Option<usize>,
) -> anyhow::Result<Diff> {
    let state = (!rule.is_central()).then(|| rule.state.clone());
    let proposed = with_proposals(current, vec![rule]);
    let simulation = Simulation::new(catalogue, current, &proposed, as_of);
    let mut diff = simulation.diff();
    simulation
        .run_stored(engine, pool, state.as_deref(), limit, &mut diff)
        .await?;
    Ok(diff)
}

/// Citizens per batch: columns and outcome codes of a chunk stay small.
pub const CHUNK: usize = 100_000;

/// `demographics.state` of a profile.
pub fn state_of(catalogue: &Catalogue, profile: &Profile) -> Option<String> {
    let field = catalogue.id("demographics.state")?;
    Some(profile.get(field)?.scalar()?.as_str()?.to_string())
}

/// Up to `limit` stored citizens with user ids after `after`, in order; only `state`'s (and
/// those without a state) when given.
async fn stored_population(
    pool: &deadpool_postgres::Pool,
    catalogue: &Catalogue,
    state: Option<&str>,
    after: &str,
    limit: usize,
) -> anyhow::Result<Population> {
    let client = pool.get().await?;
    let rows = client
        .query(
            "SELECT c.user_id, s.profile::text, c.state
             FROM profile_current c JOIN profile_snapshots s ON s.input_hash = c.input_hash
             WHERE c.user_id > $1 AND ($2::text IS NULL OR c.state = $2 OR c.state IS NULL)
             ORDER BY c.user_id LIMIT $3",
            &[&after, &state, &(limit as i64)],
        )
        .await?;
    let mut population = Population::default();
    for row in &rows {
        let user_id: String = row.get(0);
        let json: serde_json::Value = serde_json::from_str(row.get::<_, &str>(1))?;
        let profile = Profile::from_json(catalogue, &json, &user_id)
            .map_err(|r| anyhow::anyhow!("stored profile of {user_id}: {r}"))?;
        population.push(user_id, row.get(2), profile);
    }
    Ok(population)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admins_see_no_user_id_and_no_small_cell() {
        let mut diff = Diff {
            citizens: 25,
            ..Diff::default()
        };
        let big = StateDiff {
            transitions: BTreeMap::from([
                ("ELIGIBLE->ELIGIBLE".to_string(), 20),
                ("ELIGIBLE->NOT_ELIGIBLE".to_string(), 3),
            ]),
            newly_blocking_gaps: BTreeMap::from([("economic.annual_income".to_string(), 3)]),
            monthly_outlay_before_inr: 23_000.0,
            affected_sample: vec!["usr_1".into()],
            ..StateDiff::default()
        };
        let small = StateDiff {
            transitions: BTreeMap::from([("PARTIAL_MATCH->ELIGIBLE".to_string(), 2)]),
            monthly_outlay_after_inr: 2_000.0,
            affected_sample: vec!["usr_2".into()],
            ..StateDiff::default()
        };
        diff.schemes.insert(
            "sch_x".into(),
            BTreeMap::from([("karnataka".to_string(), big), ("goa".to_string(), small)]),
        );
        let shown = diff.for_admins();
        let text = shown.to_string();
        assert!(!text.contains("usr_"), "{text}");
        assert_eq!(shown["citizens"], 25);
        let karnataka = &shown["schemes"]["sch_x"]["karnataka"];
        assert_eq!(karnataka["transitions"]["ELIGIBLE->ELIGIBLE"], 20);
        assert_eq!(karnataka["transitions"]["ELIGIBLE->NOT_ELIGIBLE"], "<10");
        assert_eq!(
            karnataka["newly_blocking_gaps"]["economic.annual_income"],
            "<10"
        );
        assert_eq!(karnataka["monthly_outlay_before_inr"], 23_000.0);
        let goa = &shown["schemes"]["sch_x"]["goa"];
        assert_eq!(goa["transitions"]["PARTIAL_MATCH->ELIGIBLE"], "<10");
        assert!(goa["monthly_outlay_after_inr"].is_null(), "{goa}");
        assert_eq!(
            Diff {
                citizens: 3,
                ..Diff::default()
            }
            .for_admins()["citizens"],
            "<10"
        );
    }
    use engine::temporal::applicability;

    /// The batch diff equals scalar evaluations of the two versions, citizen by citizen: the
    /// transition counts, the outlay (tiers applied) and the affected users.
    #[test]
    fn the_diff_is_what_scalar_evaluation_of_both_versions_gives() {
        let catalogue = Catalogue::bundled();
        let current = RuleSet::bundled(&catalogue).unwrap();
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../schemes/central/ignoaps.yaml"
        ))
        .unwrap()
        .replace("rule_central_ignoaps_002", "rule_central_ignoaps_009")
        .replace("\nversion: 2\n", "\nversion: 9\n")
        .replace(
            "operator: \"gte\", value: 60",
            "operator: \"gte\", value: 65",
        );
        let proposal = engine::load::parse_rule_yaml(&catalogue, &text, "proposal").unwrap();
        let proposed = with_proposals(&current, vec![proposal]);
        let as_of = Date::parse("2026-11-23").unwrap();
        let simulation = Simulation::new(&catalogue, &current, &proposed, as_of);
        assert_eq!(simulation.changes().len(), 1, "{:?}", simulation.changes());
        let spec = synth::citizens::CitizenSpec {
            seed: 5,
            missing_rate: 0.05,
            schemes: 0,
        };
        let generated = synth::citizens::generate(&catalogue, 3000, spec, 2);
        let mut halves = [Population::default(), Population::default()];
        for (i, profile) in generated.iter().enumerate() {
            let state = state_of(&catalogue, profile);
            halves[usize::from(i >= 1000)].push(format!("u{i}"), state, profile.clone());
        }
        let engine = Engine::new(kernels::engine_select::EngineChoice::Cpu, 0).unwrap();
        let mut diff = simulation.diff();
        simulation.run(&engine, &halves[0], &mut diff).unwrap();
        simulation.run(&engine, &halves[1], &mut diff).unwrap();
        assert_eq!(diff.citizens, 3000);

        let old = current
            .in_effect(as_of)
            .into_iter()
            .find(|r| r.scheme_id == "sch_ignoaps")
            .unwrap();
        let new = proposed
            .in_effect(as_of)
            .into_iter()
            .find(|r| r.scheme_id == "sch_ignoaps")
            .unwrap();
        assert_eq!(new.rule_id, "rule_central_ignoaps_009");
        let verdict = |rule: &Rule, p: &Profile| {
            if applicability(rule, as_of).is_applicable() {
                engine::outcome(rule, p, as_of).verdict
            } else {
                Verdict::NotApplicable
            }
        };
        let mut expected: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        let (mut before, mut after, mut moved) = (0.0, 0.0, 0);
        for profile in &generated {
            let (was, now) = (verdict(old, profile), verdict(new, profile));
            *expected
                .entry(state_of(&catalogue, profile).unwrap_or_else(|| "unknown".into()))
                .or_default()
                .entry(format!("{}->{}", was.name(), now.name()))
                .or_default() += 1;
            before += if was == Verdict::Eligible {
                Sums::of(Some(old), profile).monthly_outlay
            } else {
                0.0
            };
            after += if now == Verdict::Eligible {
                Sums::of(Some(new), profile).monthly_outlay
            } else {
                0.0
            };
            moved += usize::from(was != now);
        }
        let got = &diff.schemes["sch_ignoaps"];
        let transitions: BTreeMap<String, BTreeMap<String, usize>> = got
            .iter()
            .map(|(s, d)| (s.clone(), d.transitions.clone()))
            .collect();
        assert_eq!(transitions, expected);
        let sum = |f: fn(&StateDiff) -> f64| got.values().map(f).sum::<f64>();
        assert_eq!(sum(|d| d.monthly_outlay_before_inr), before);
        assert_eq!(sum(|d| d.monthly_outlay_after_inr), after);
        assert!(
            moved > 0 && after < before,
            "raising the age to 65 takes people out: {moved}, {before} -> {after}"
        );
        let sampled: usize = got.values().map(|d| d.affected_sample.len()).sum();
        assert!(sampled > 0 && sampled <= moved);
    }

    /// docs/rule-format.md, "Benefit kinds": an insurance cover is never counted as money paid
    /// out; it is reported apart.
    #[test]
    fn insurance_cover_and_loan_limits_are_reported_apart_from_the_outlay() {
        let catalogue = Catalogue::bundled();
        let current = RuleSet::bundled(&catalogue).unwrap();
        let cover = |rule_id: &str| {
            let rule = current.get(rule_id).unwrap();
            let profile = Profile::from_json(
                &catalogue,
                &serde_json::json!({"identity": {"age": 30, "social_category": "sc",
                    "gender": "female", "verified_documents": ["pan"]},
                    "economic": {"has_bank_account": true}}),
                "p",
            )
            .unwrap();
            Sums::of(Some(rule), &profile)
        };
        assert_eq!(
            cover("rule_central_pmjjby_003"),
            Sums {
                monthly_outlay: 0.0,
                cover: 200_000.0,
                loan_limit: 0.0
            }
        );
        assert_eq!(
            cover("rule_central_stand_up_india_001"),
            Sums {
                monthly_outlay: 0.0,
                cover: 0.0,
                loan_limit: 10_000_000.0
            }
        );
        // A pension is money paid out (its tier for the age applied).
        assert_eq!(
            cover("rule_ka_oap_001"),
            Sums {
                monthly_outlay: 600.0,
                cover: 0.0,
                loan_limit: 0.0
            }
        );
    }
}
