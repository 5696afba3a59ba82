//! Synthetic citizens with realistic distributions, deterministic for a seed.

use engine::{Catalogue, Profile};
use rand::Rng;
use rand::SeedableRng;
use rand::distr::{Distribution, weighted::WeightedIndex};
use rand_chacha::ChaCha8Rng;
use rand_distr::LogNormal;
use serde_json::{Map, Value as Json, json};

use crate::{STATE_POPULATION_LAKHS, STATES};

/// How citizens are drawn.
#[derive(Debug, Clone, Copy)]
pub struct CitizenSpec {
    pub seed: u64,
    /// Chance that any one field is absent (unknown) from a profile.
    pub missing_rate: f64,
    /// Scheme ids `sch_syn_00000..` a citizen may already receive.
    pub schemes: usize,
}

/// Draws citizen profiles (namespaced JSON, valid against the catalogue).
pub struct Citizens {
    rng: ChaCha8Rng,
    spec: CitizenSpec,
    states: WeightedIndex<u32>,
    income: LogNormal<f64>,
    next: u64,
}

impl Citizens {
    pub fn new(spec: CitizenSpec) -> Citizens {
        Citizens {
            rng: ChaCha8Rng::seed_from_u64(spec.seed),
            spec,
            states: WeightedIndex::new(STATE_POPULATION_LAKHS).expect("positive weights"),
            // Median household income about ₹1.5 lakh a year, with a long upper tail.
            income: LogNormal::new(150_000f64.ln(), 0.9).expect("valid parameters"),
            next: 0,
        }
    }

    /// The same draws with user ids numbered from `first` (a population built in parts).
    pub fn numbered_from(mut self, first: u64) -> Citizens {
        self.next = first;
        self
    }

    fn pick<'a>(&mut self, options: &[(&'a str, f64)]) -> &'a str {
        let total: f64 = options.iter().map(|o| o.1).sum();
        let mut x = self.rng.random_range(0.0..total);
        for (value, weight) in options {
            if x < *weight {
                return value;
            }
            x -= weight;
        }
        options[options.len() - 1].0
    }

    pub fn next_profile(&mut self) -> Json {
        let id = self.next;
        self.next += 1;
        let rng = &mut self.rng;
        let state = STATES[self.states.sample(rng)];
        // Adults, thinning with age.
        let age: i64 = match rng.random_range(0..100) {
            0..=44 => rng.random_range(18..=35),
            45..=79 => rng.random_range(36..=59),
            80..=95 => rng.random_range(60..=79),
            _ => rng.random_range(80..=95),
        };
        let income = (self.income.sample(rng).min(5_000_000.0) / 1000.0).round() * 1000.0;
        let bpl = rng.random_bool(if income < 100_000.0 { 0.45 } else { 0.08 });
        let category = self.pick(&[
            ("general", 0.30),
            ("obc", 0.41),
            ("sc", 0.17),
            ("st", 0.09),
            ("ews", 0.03),
        ]);
        let gender = self.pick(&[("female", 0.49), ("male", 0.505), ("transgender", 0.005)]);
        let occupation = self.pick(&[
            ("farmer", 0.18),
            ("agricultural_labourer", 0.16),
            ("construction_worker", 0.07),
            ("street_vendor", 0.04),
            ("artisan", 0.03),
            ("fisher", 0.01),
            ("weaver", 0.01),
            ("salaried", 0.17),
            ("business", 0.08),
            ("homemaker", 0.12),
            ("unemployed", 0.06),
            ("retired", 0.04),
            ("student", 0.03),
        ]);
        let rng = &mut self.rng;
        let land = if rng.random_bool(0.55) {
            0.0
        } else {
            (rng.random_range(0.1f64..4.0) * 10.0).round() / 10.0
        };
        let mut documents = Vec::new();
        for (document, chance) in [
            ("aadhaar", 0.95),
            ("voter_id", 0.75),
            ("ration_card", 0.7),
            ("bank_passbook", 0.8),
            ("pan", 0.4),
            ("income_certificate", 0.3),
            ("age_proof", 0.3),
        ] {
            if rng.random_bool(chance) {
                documents.push(document);
            }
        }
        if bpl && rng.random_bool(0.8) {
            documents.push("bpl_card");
        }
        let active: Vec<String> = (0..rng.random_range(0..=2usize))
            .filter(|_| self.spec.schemes > 0)
            .map(|_| crate::corpus::scheme_id(rng.random_range(0..self.spec.schemes)))
            .collect();
        let taxpayer = rng.random_bool(if income > 700_000.0 { 0.8 } else { 0.02 });
        let fields: [(&str, &str, Json); 14] = [
            ("identity", "age", json!(age)),
            ("identity", "gender", json!(gender)),
            ("identity", "social_category", json!(category)),
            ("identity", "verified_documents", json!(documents)),
            ("demographics", "state", json!(state)),
            (
                "demographics",
                "urban_rural",
                json!(if rng.random_bool(0.35) {
                    "urban"
                } else {
                    "rural"
                }),
            ),
            ("economic", "annual_income", json!(income)),
            ("economic", "bpl_status", json!(bpl)),
            ("economic", "land_holding", json!(land)),
            ("economic", "occupation", json!(occupation)),
            ("economic", "is_income_tax_payer", json!(taxpayer)),
            (
                "economic",
                "is_government_employee",
                json!(rng.random_bool(0.04)),
            ),
            ("family", "family_size", json!(rng.random_range(1..=9))),
            ("eligibility", "active_schemes", json!(active)),
        ];
        let mut root = Map::new();
        root.insert("user_id".into(), json!(format!("usr_{:08}", id)));
        for (namespace, name, value) in fields {
            if self.spec.missing_rate > 0.0 && self.rng.random_bool(self.spec.missing_rate) {
                continue;
            }
            let entry = root.entry(namespace).or_insert_with(|| json!({}));
            entry[name] = value;
        }
        Json::Object(root)
    }
}

/// `count` validated profiles, drawn on `threads` threads (thread `t` uses seed `spec.seed + t`).
pub fn generate(
    catalogue: &Catalogue,
    count: usize,
    spec: CitizenSpec,
    threads: usize,
) -> Vec<Profile> {
    let threads = threads.max(1);
    let per = count.div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let n = per.min(count.saturating_sub(t * per));
                scope.spawn(move || {
                    let mut citizens = Citizens::new(CitizenSpec {
                        seed: spec.seed + t as u64,
                        ..spec
                    });
                    (0..n)
                        .map(|_| {
                            Profile::from_json(catalogue, &citizens.next_profile(), "synthetic")
                                .expect("generated profiles are valid")
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("generator thread"))
            .collect()
    })
}

/// The synthetic corpus loaded through the engine's real loader.
pub fn rules(catalogue: &Catalogue, count: usize, seed: u64) -> Vec<engine::Rule> {
    crate::corpus::scheme_documents(count, seed)
        .into_iter()
        .map(|d| {
            engine::load::parse_rule_json(catalogue, d, "synthetic")
                .expect("generated rules are valid")
        })
        .collect()
}
