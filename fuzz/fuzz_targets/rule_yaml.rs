//! Any text as a rule document: the loader returns a rule or problems, never panics, and a rule
//! it accepts hashes and evaluates.
#![no_main]

use std::sync::LazyLock;

use engine::{Catalogue, Date, Profile};
use libfuzzer_sys::fuzz_target;

static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(Catalogue::bundled);

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(rule) = engine::load::parse_rule_yaml(&CATALOGUE, &text, "fuzz") {
        let empty = Profile::from_values(&CATALOGUE, None, vec![None; CATALOGUE.len()]);
        let as_of = Date::parse("2025-01-15").expect("a date");
        let _ = engine::evaluate(&CATALOGUE, &rule, &empty, as_of);
    }
});
