//! Random rules and profiles over small value domains, so that rules and profiles collide often
//! (feature `test-util`): the strategies of the engine's property tests, which the kernels' and
//! the explanations' property tests share.

use crate::load::parse_rule_json;
use crate::{Catalogue, Date, Profile, Rule};
use proptest::prelude::*;
use serde_json::{Value as Json, json};
use std::sync::LazyLock;

pub static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(Catalogue::bundled);

pub fn leaf() -> impl Strategy<Value = Json> {
    let age = (
        prop_oneof![
            Just("eq"),
            Just("neq"),
            Just("gt"),
            Just("gte"),
            Just("lt"),
            Just("lte")
        ],
        15i64..80,
    )
        .prop_map(|(op, v)| json!({"field": "identity.age", "operator": op, "value": v}));
    let age_set = (
        prop_oneof![Just("in"), Just("not_in")],
        prop::collection::vec(15i64..80, 1..4),
    )
        .prop_map(|(op, v)| json!({"field": "identity.age", "operator": op, "value": v}));
    let age_range = (15i64..70, 0i64..20).prop_map(
        |(lo, w)| json!({"field": "identity.age", "operator": "between", "value": [lo, lo + w]}),
    );
    let income = (
        prop_oneof![Just("gt"), Just("gte"), Just("lt"), Just("lte"), Just("eq"), Just("neq")],
        0u32..6,
    )
        .prop_map(|(op, v)| json!({"field": "economic.annual_income", "operator": op, "value": f64::from(v) * 50000.0}));
    let income_range = (0u32..6, 0u32..4).prop_map(|(lo, w)| json!({"field": "economic.annual_income", "operator": "between", "value": [f64::from(lo) * 50000.0, f64::from(lo + w) * 50000.0]}));
    let bpl = (prop_oneof![Just("eq"), Just("neq")], any::<bool>())
        .prop_map(|(op, v)| json!({"field": "economic.bpl_status", "operator": op, "value": v}));
    let categories = ["general", "obc", "sc", "st", "ews"];
    let category = (prop_oneof![Just("eq"), Just("neq")], 0usize..5)
        .prop_map(move |(op, i)| json!({"field": "identity.social_category", "operator": op, "value": categories[i]}));
    let category_set = (
        prop_oneof![Just("in"), Just("not_in")],
        proptest::sample::subsequence(categories.to_vec(), 1..4),
    )
        .prop_map(
            |(op, v)| json!({"field": "identity.social_category", "operator": op, "value": v}),
        );
    let docs = ["aadhaar", "voter_id", "bpl_card"];
    let document = (prop_oneof![Just("contains"), Just("not_contains")], 0usize..3)
        .prop_map(move |(op, i)| json!({"field": "identity.verified_documents", "operator": op, "value": docs[i]}));
    let born = (
        prop_oneof![Just("lt"), Just("gte"), Just("between")],
        1950i32..2010,
    )
        .prop_map(|(op, y)| {
            let value = if op == "between" {
                json!([format!("{y}-01-01"), format!("{}-06-30", y + 5)])
            } else {
                json!(format!("{y}-04-01"))
            };
            json!({"field": "identity.date_of_birth", "operator": op, "value": value})
        });
    prop_oneof![
        age,
        age_set,
        age_range,
        income,
        income_range,
        bpl,
        category,
        category_set,
        document,
        born
    ]
}

pub fn node() -> impl Strategy<Value = Json> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (
                prop_oneof![Just("AND"), Just("OR")],
                prop::collection::vec(inner.clone(), 1..4)
            )
                .prop_map(|(op, c)| json!({"operator": op, "conditions": c})),
            inner.prop_map(|c| json!({"operator": "NOT", "conditions": [c]})),
        ]
    })
}

pub fn rule_doc(n: usize) -> impl Strategy<Value = Json> {
    let root = prop::collection::vec(node(), 1..6)
        .prop_map(|c| json!({"operator": "AND", "conditions": c}));
    let exclusions = prop::collection::vec(leaf(), 0..3);
    let window = proptest::option::of((1u8..13, 1u8..13));
    let until = proptest::option::of(2024i32..2028);
    (root, exclusions, window, until).prop_map(move |(eligibility, exclusions, window, until)| {
        let mut doc = json!({
            "schema_version": "1.0",
            "rule_id": format!("rule_prop_{n:03}"),
            "scheme_id": format!("sch_prop_{n:03}"),
            "scheme_name": "Property scheme",
            "state": "central",
            "effective_from": "2024-01-01",
            "effective_until": until.map(|y| format!("{y}-12-31")),
            "version": 1,
            "eligibility": eligibility,
            "exclusions": exclusions,
        });
        if let Some((opens, closes)) = window {
            doc["application_window"] =
                json!({"opens": format!("{opens:02}-01"), "closes": format!("{closes:02}-28")});
        }
        doc
    })
}

pub fn rules(max: usize) -> impl Strategy<Value = Vec<Rule>> {
    (1..=max)
        .prop_flat_map(|n| (0..n).map(rule_doc).collect::<Vec<_>>())
        .prop_map(|docs| {
            docs.into_iter()
                .map(|d| {
                    parse_rule_json(&CATALOGUE, d, "generated")
                        .unwrap_or_else(|p| panic!("generated rule must load: {p:?}"))
                })
                .collect()
        })
}

pub fn profile_doc() -> impl Strategy<Value = Json> {
    let maybe = |p: f64| proptest::bool::weighted(p);
    (
        (maybe(0.85), 15i64..80),
        (maybe(0.85), 0u32..12),
        (maybe(0.85), any::<bool>()),
        (maybe(0.85), 0usize..5),
        (
            maybe(0.8),
            proptest::sample::subsequence(vec!["aadhaar", "voter_id", "bpl_card"], 0..3),
        ),
        (maybe(0.7), 1950i32..2010, 1u8..13),
    )
        .prop_map(|(age, income, bpl, cat, docs, born)| {
            let categories = ["general", "obc", "sc", "st", "ews"];
            let mut identity = serde_json::Map::new();
            let mut economic = serde_json::Map::new();
            if age.0 {
                identity.insert("age".into(), json!(age.1));
            }
            if cat.0 {
                identity.insert("social_category".into(), json!(categories[cat.1]));
            }
            if docs.0 {
                identity.insert("verified_documents".into(), json!(docs.1));
            }
            if born.0 {
                identity.insert(
                    "date_of_birth".into(),
                    json!(format!("{}-{:02}-15", born.1, born.2)),
                );
            }
            if income.0 {
                economic.insert("annual_income".into(), json!(f64::from(income.1) * 25000.0));
            }
            if bpl.0 {
                economic.insert("bpl_status".into(), json!(bpl.1));
            }
            json!({"user_id": "u", "identity": identity, "economic": economic})
        })
}

/// Up to `max` profiles: sizes cross the 32- and 64-citizen word boundaries.
pub fn profiles(max: usize) -> impl Strategy<Value = Vec<Profile>> {
    prop::collection::vec(profile_doc(), 1..max).prop_map(|docs| {
        docs.iter()
            .map(|d| Profile::from_json(&CATALOGUE, d, "generated").expect("valid"))
            .collect()
    })
}

pub fn as_of() -> impl Strategy<Value = Date> {
    (2023i32..2029, 1u8..13, 1u8..29)
        .prop_map(|(y, m, d)| Date::from_ymd(y, m, d).expect("valid day"))
}
