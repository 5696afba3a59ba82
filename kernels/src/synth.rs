//! Synthetic rules and citizens for the benchmark and the large parity run: random rule trees over
//! a few catalogue fields of every column kind, and profiles with gaps, from a seed.

use engine::load::parse_rule_json;
use engine::{Catalogue, Profile, Rule};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value as Json, json};

const CATEGORIES: [&str; 5] = ["general", "obc", "sc", "st", "ews"];
const DOCUMENTS: [&str; 4] = ["aadhaar", "voter_id", "bpl_card", "ration_card"];
const COMPARISONS: [&str; 6] = ["eq", "neq", "gt", "gte", "lt", "lte"];

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items[rng.random_range(0..items.len())]
}

fn leaf(rng: &mut ChaCha8Rng) -> Json {
    match rng.random_range(0..7) {
        0 => {
            json!({"field": "identity.age", "operator": pick(rng, &COMPARISONS), "value": rng.random_range(15..80)})
        }
        1 => {
            let lo = rng.random_range(15..70);
            json!({"field": "identity.age", "operator": "between", "value": [lo, lo + rng.random_range(0..20)]})
        }
        2 => {
            let op = pick(rng, &["gt", "gte", "lt", "lte", "eq"]);
            json!({"field": "economic.annual_income", "operator": op, "value": f64::from(rng.random_range(0u32..6)) * 50000.0})
        }
        3 => {
            json!({"field": "economic.bpl_status", "operator": pick(rng, &["eq", "neq"]), "value": rng.random::<bool>()})
        }
        4 => {
            let chosen: Vec<&str> = CATEGORIES
                .iter()
                .copied()
                .filter(|_| rng.random_bool(0.4))
                .collect();
            let (op, value) = match chosen.as_slice() {
                [] => (pick(rng, &["eq", "neq"]), json!(pick(rng, &CATEGORIES))),
                _ => (pick(rng, &["in", "not_in"]), json!(chosen)),
            };
            json!({"field": "identity.social_category", "operator": op, "value": value})
        }
        5 => {
            json!({"field": "identity.verified_documents", "operator": pick(rng, &["contains", "not_contains"]), "value": pick(rng, &DOCUMENTS)})
        }
        _ => {
            let y = rng.random_range(1950..2010);
            json!({"field": "identity.date_of_birth", "operator": pick(rng, &["lt", "gte"]), "value": format!("{y}-04-01")})
        }
    }
}

fn node(rng: &mut ChaCha8Rng, depth: u32) -> Json {
    if depth == 0 || rng.random_bool(0.5) {
        return leaf(rng);
    }
    match rng.random_range(0..5) {
        0 => json!({"operator": "NOT", "conditions": [node(rng, depth - 1)]}),
        k => {
            let children: Vec<Json> = (0..rng.random_range(1..4))
                .map(|_| node(rng, depth - 1))
                .collect();
            json!({"operator": if k % 2 == 0 { "AND" } else { "OR" }, "conditions": children})
        }
    }
}

/// `n` valid rules, all in effect from 2024-01-01; some end, some have application windows.
pub fn rules(catalogue: &Catalogue, n: usize, seed: u64) -> Vec<Rule> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let children: Vec<Json> = (0..rng.random_range(1..6))
                .map(|_| node(&mut rng, 3))
                .collect();
            let exclusions: Vec<Json> = (0..rng.random_range(0..3))
                .map(|_| leaf(&mut rng))
                .collect();
            let mut doc = json!({
                "schema_version": "1.0",
                "rule_id": format!("rule_synth_{i:05}"),
                "scheme_id": format!("sch_synth_{i:05}"),
                "scheme_name": "Synthetic scheme",
                "state": "central",
                "effective_from": "2024-01-01",
                "effective_until": rng.random_bool(0.2).then(|| format!("{}-12-31", rng.random_range(2024..2028))),
                "version": 1,
                "eligibility": {"operator": "AND", "conditions": children},
                "exclusions": exclusions,
            });
            if rng.random_bool(0.2) {
                let (opens, closes) = (rng.random_range(1..13), rng.random_range(1..13));
                doc["application_window"] =
                    json!({"opens": format!("{opens:02}-01"), "closes": format!("{closes:02}-28")});
            }
            parse_rule_json(catalogue, doc, "synthetic")
                .unwrap_or_else(|p| panic!("a synthetic rule must load: {p:?}"))
        })
        .collect()
}

fn profile(catalogue: &Catalogue, rng: &mut ChaCha8Rng) -> Profile {
    let mut identity = serde_json::Map::new();
    let mut economic = serde_json::Map::new();
    if rng.random_bool(0.9) {
        identity.insert("age".into(), json!(rng.random_range(15..80)));
    }
    if rng.random_bool(0.9) {
        identity.insert("social_category".into(), json!(pick(rng, &CATEGORIES)));
    }
    if rng.random_bool(0.8) {
        let docs: Vec<&str> = DOCUMENTS
            .iter()
            .copied()
            .filter(|_| rng.random_bool(0.5))
            .collect();
        identity.insert("verified_documents".into(), json!(docs));
    }
    if rng.random_bool(0.7) {
        let (y, m) = (rng.random_range(1950..2010), rng.random_range(1..13));
        identity.insert("date_of_birth".into(), json!(format!("{y}-{m:02}-15")));
    }
    if rng.random_bool(0.9) {
        economic.insert(
            "annual_income".into(),
            json!(f64::from(rng.random_range(0u32..12)) * 25000.0),
        );
    }
    if rng.random_bool(0.9) {
        economic.insert("bpl_status".into(), json!(rng.random::<bool>()));
    }
    let doc = json!({"user_id": "u", "identity": identity, "economic": economic});
    Profile::from_json(catalogue, &doc, "synthetic").expect("a synthetic profile is valid")
}

/// `n` profiles, generated on `threads` threads (each block of citizens has its own seed, so the
/// result does not depend on the thread count).
pub fn profiles(catalogue: &Catalogue, n: usize, seed: u64, threads: usize) -> Vec<Profile> {
    const BLOCK: usize = 4096;
    let blocks = n.div_ceil(BLOCK);
    let per_thread = blocks.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..blocks)
            .step_by(per_thread)
            .map(|first| {
                scope.spawn(move || {
                    (first..(first + per_thread).min(blocks))
                        .flat_map(|b| {
                            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (b as u64) << 20);
                            let count = BLOCK.min(n - b * BLOCK);
                            (0..count)
                                .map(|_| profile(catalogue, &mut rng))
                                .collect::<Vec<_>>()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a generator thread"))
            .collect()
    })
}
