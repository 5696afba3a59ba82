//! Synthetic scheme corpora: realistic shapes (state residence, age and income thresholds,
//! categories, documents, NOT-taxpayer, exclusions), deterministic for a seed.

use rand::Rng;
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value as Json, json};

use crate::STATES;

/// The id of synthetic scheme `i`.
pub fn scheme_id(i: usize) -> String {
    format!("sch_syn_{i:05}")
}

/// `count` rule documents; one in five is central, the rest spread over all 36 states/UTs.
pub fn scheme_documents(count: usize, seed: u64) -> Vec<Json> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count).map(|i| scheme(i, count, &mut rng)).collect()
}

/// One to three distinct items.
fn some_of<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> Vec<&'a str> {
    let n = rng.random_range(1..=3).min(items.len());
    items.choose_multiple(rng, n).copied().collect()
}

fn leaf(field: &str, op: &str, value: Json) -> Json {
    json!({"field": field, "operator": op, "value": value})
}

fn scheme(i: usize, count: usize, rng: &mut ChaCha8Rng) -> Json {
    let state = if i.is_multiple_of(5) {
        "central"
    } else {
        STATES[(i / 5 + i) % STATES.len()]
    };
    let mut conditions = Vec::new();
    if state != "central" {
        conditions.push(leaf("demographics.state", "eq", json!(state)));
    }
    conditions.push(match rng.random_range(0..3) {
        0 => leaf("identity.age", "gte", json!(rng.random_range(18..=70))),
        1 => {
            let lo = rng.random_range(18..=50);
            leaf(
                "identity.age",
                "between",
                json!([lo, lo + rng.random_range(5..=40)]),
            )
        }
        _ => leaf("identity.age", "lte", json!(rng.random_range(25..=60))),
    });
    if rng.random_bool(0.8) {
        conditions.push(leaf(
            "economic.annual_income",
            "lte",
            json!(f64::from(rng.random_range(5..=80)) * 10_000.0),
        ));
    }
    if rng.random_bool(0.4) {
        conditions.push(leaf("economic.bpl_status", "eq", json!(true)));
    }
    if rng.random_bool(0.3) {
        let categories = ["general", "obc", "sc", "st", "ews"];
        let picked = some_of(rng, &categories);
        conditions.push(leaf("identity.social_category", "in", json!(picked)));
    }
    if rng.random_bool(0.3) {
        conditions.push(leaf("identity.gender", "eq", json!("female")));
    }
    if rng.random_bool(0.25) {
        let jobs = [
            "farmer",
            "agricultural_labourer",
            "street_vendor",
            "construction_worker",
            "artisan",
            "fisher",
            "weaver",
        ];
        let picked = some_of(rng, &jobs);
        conditions.push(leaf("economic.occupation", "in", json!(picked)));
    }
    if rng.random_bool(0.2) {
        conditions.push(leaf(
            "economic.land_holding",
            "lte",
            json!(f64::from(rng.random_range(1..=10)) * 0.5),
        ));
    }
    if rng.random_bool(0.5) {
        let documents = [
            "aadhaar",
            "voter_id",
            "ration_card",
            "bpl_card",
            "income_certificate",
        ];
        let picked: Vec<Json> = some_of(rng, &documents)
            .into_iter()
            .map(|d| leaf("identity.verified_documents", "contains", json!(d)))
            .collect();
        conditions.push(json!({"operator": "OR", "conditions": picked}));
    }
    if rng.random_bool(0.3) {
        conditions.push(json!({"operator": "NOT", "conditions": [leaf("economic.is_income_tax_payer", "eq", json!(true))]}));
    }
    let mut exclusions = Vec::new();
    if rng.random_bool(0.4) && count > 1 {
        let other = (i + rng.random_range(1..count)) % count;
        exclusions.push(leaf(
            "eligibility.active_schemes",
            "not_contains",
            json!(scheme_id(other)),
        ));
    }
    if rng.random_bool(0.2) {
        exclusions.push(leaf("economic.is_government_employee", "eq", json!(false)));
    }
    let (amount, frequency) = if rng.random_bool(0.6) {
        (rng.random_range(2..=30) * 100, "monthly")
    } else {
        (rng.random_range(1..=60) * 1000, "yearly")
    };
    json!({
        "schema_version": "1.0",
        "rule_id": format!("rule_syn_{i:05}"),
        "scheme_id": scheme_id(i),
        "scheme_name": format!("Synthetic scheme {i}"),
        "state": state,
        "department": "synthetic",
        "effective_from": "2024-04-01",
        "effective_until": null,
        "version": 1,
        "eligibility": {"operator": "AND", "conditions": conditions},
        "exclusions": exclusions,
        "benefit": {"kind": "cash", "type": "cash", "amount_inr": amount, "frequency": frequency, "disbursement": "direct_bank_transfer"},
        "documents_required": ["aadhaar", "bank_passbook"],
        "application": {"portal_url": "https://example.invalid/apply", "deadline": null},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every generated document goes through the engine's real loader: a catalogue change that
    /// a generated rule does not follow fails here, not in a benchmark run.
    #[test]
    fn every_generated_document_is_a_valid_rule() {
        let catalogue = engine::Catalogue::bundled();
        let documents = scheme_documents(500, 7);
        assert_eq!(documents.len(), 500);
        let refused: Vec<String> = documents
            .into_iter()
            .filter_map(|d| {
                engine::load::parse_rule_json(&catalogue, d, "synthetic")
                    .err()
                    .map(|problems| format!("{problems:?}"))
            })
            .collect();
        assert!(refused.is_empty(), "{}", refused.join("\n"));
    }
}
