//! Shared by the integration tests: the bundled catalogue and corpus, and one evaluation.

use std::sync::LazyLock;

use engine::{Catalogue, Date, Evaluation, Profile, Rule, RuleSet, evaluate};
use serde_json::Value as Json;

pub static BUNDLED: LazyLock<(Catalogue, RuleSet)> = LazyLock::new(|| {
    let catalogue = Catalogue::bundled();
    let rules = RuleSet::bundled(&catalogue).expect("the bundled corpus loads");
    (catalogue, rules)
});

pub fn catalogue() -> &'static Catalogue {
    &BUNDLED.0
}

pub fn rule(rule_id: &str) -> &'static Rule {
    BUNDLED.1.get(rule_id).expect("a bundled rule")
}

pub fn profile(json: Json) -> Profile {
    Profile::from_json(catalogue(), &json, "test").expect("a valid profile")
}

pub fn on(date: &str) -> Date {
    Date::parse(date).expect("a date")
}

/// Evaluates a bundled rule; the rule must apply on `as_of`.
pub fn evaluation<'a>(rule: &'a Rule, profile: &'a Profile, as_of: &str) -> Evaluation<'a> {
    evaluate(catalogue(), rule, profile, on(as_of)).expect("the rule applies")
}
