//! Property tests (docs/semantics.md, "Batch and incremental evaluation"): every path that computes a verdict agrees with the scalar evaluator,
//! incremental re-evaluation equals a full one, and hashes are stable.

use engine::batch::{evaluate_batch, evaluate_batch_into};
use engine::columns::ProfileColumns;
use engine::deps::{DependencyIndex, affected_rules};
use engine::load::parse_rule_json;
use engine::program::Program;
use engine::{Profile, Rule, RuleSet, evaluate, outcome};
use proptest::prelude::*;
use serde_json::Value as Json;

use engine::test_util::{CATALOGUE, as_of, profile_doc, profiles, rule_doc, rules};

/// The (section, field) pairs `profile_doc` may fill.
const PROFILE_FIELDS: [(&str, &str); 6] = [
    ("identity", "age"),
    ("identity", "social_category"),
    ("identity", "verified_documents"),
    ("identity", "date_of_birth"),
    ("economic", "annual_income"),
    ("economic", "bpl_status"),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn batch_equals_scalar(rules in rules(6), profiles in profiles(150), as_of in as_of(), threads in 1usize..4) {
        let refs: Vec<&Rule> = rules.iter().collect();
        let program = Program::compile(&refs);
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        let batch = evaluate_batch(&program, &refs, &columns, as_of, threads);
        for (c, profile) in profiles.iter().enumerate() {
            for (r, rule) in refs.iter().enumerate() {
                prop_assert_eq!(batch.get(c, r), outcome(rule, profile, as_of), "citizen {} rule {}", c, r);
            }
        }
    }

    #[test]
    fn a_reused_buffer_holds_only_the_latest_batch(rules in rules(6), profiles in profiles(150), earlier in as_of(), as_of in as_of()) {
        // The buffer is first filled on another date, so stale codes would show.
        let refs: Vec<&Rule> = rules.iter().collect();
        let program = Program::compile(&refs);
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        let mut buffer = evaluate_batch(&program, &refs, &columns, earlier, 2);
        evaluate_batch_into(&program, &refs, &columns, as_of, 2, &mut buffer);
        for (c, profile) in profiles.iter().enumerate() {
            for (r, rule) in refs.iter().enumerate() {
                prop_assert_eq!(buffer.get(c, r), outcome(rule, profile, as_of), "citizen {} rule {}", c, r);
            }
        }
    }

    #[test]
    fn one_citizen_compiled_path_equals_scalar(rules in rules(8), profiles in profiles(30), as_of in as_of()) {
        let refs: Vec<&Rule> = rules.iter().collect();
        let program = Program::compile(&refs);
        for profile in &profiles {
            let expected: Vec<_> = refs.iter().map(|r| outcome(r, profile, as_of)).collect();
            prop_assert_eq!(program.evaluate_one(&refs, profile, as_of), expected);
        }
    }

    #[test]
    fn postfix_program_equals_its_table(rules in rules(4), profiles in profiles(60), as_of in as_of()) {
        // The table is built from the postfix program; the per-citizen fallback runs the program
        // itself. Force the fallback and compare both with the scalar evaluator.
        let refs: Vec<&Rule> = rules.iter().collect();
        let mut program = Program::compile(&refs);
        program.rules.iter_mut().for_each(|r| r.table = None);
        let columns = ProfileColumns::new(&CATALOGUE, &profiles);
        let batch = evaluate_batch(&program, &refs, &columns, as_of, 1);
        for (c, profile) in profiles.iter().enumerate() {
            for (r, rule) in refs.iter().enumerate() {
                prop_assert_eq!(batch.get(c, r), outcome(rule, profile, as_of));
            }
        }
    }

    #[test]
    fn full_trace_agrees_with_the_fast_path(rules in rules(4), profiles in profiles(20), as_of in as_of()) {
        for rule in &rules {
            for profile in &profiles {
                let fast = outcome(rule, profile, as_of);
                match evaluate(&CATALOGUE, rule, profile, as_of) {
                    Ok(e) => {
                        prop_assert_eq!(e.outcome(), fast);
                        // No verdict is ever ELIGIBLE while a gap remains.
                        if e.verdict == engine::Verdict::Eligible {
                            prop_assert!(e.gaps.is_empty());
                            prop_assert_eq!(e.match_score, 100);
                        }
                        // Same input, same bytes.
                        let again = evaluate(&CATALOGUE, rule, profile, as_of).unwrap();
                        prop_assert_eq!(serde_json::to_string(&e).unwrap(), serde_json::to_string(&again).unwrap());
                    }
                    Err(_) => prop_assert_eq!(fast, engine::Outcome::NOT_APPLICABLE),
                }
            }
        }
    }

    #[test]
    fn a_field_left_out_of_needed_fields_cannot_change_the_verdict(rules in rules(3), doc in profile_doc(), donors in prop::collection::vec(profile_doc(), 1..6), as_of in as_of()) {
        // docs/semantics.md, Evaluation 7: needed_fields lists the unknown fields whose values could still change the
        // verdict. So giving any other unknown field a value, alone, leaves the verdict as it is.
        let profile = Profile::from_json(&CATALOGUE, &doc, "profile").unwrap();
        for rule in &rules {
            let Ok(before) = evaluate(&CATALOGUE, rule, &profile, as_of) else { continue };
            for field in rule.fields_read() {
                let name = CATALOGUE.field(field).name.as_str();
                if profile.get(field).is_some() || before.needed_fields.contains(&name) {
                    continue;
                }
                let (group, key) = name.split_once('.').expect("catalogue names are group.key");
                for donor in &donors {
                    let Some(value) = donor.get(group).and_then(|g| g.get(key)) else { continue };
                    let mut filled = doc.clone();
                    filled[group][key] = value.clone();
                    let filled = Profile::from_json(&CATALOGUE, &filled, "filled").unwrap();
                    let after = evaluate(&CATALOGUE, rule, &filled, as_of).unwrap();
                    prop_assert_eq!(after.verdict, before.verdict, "{} = {} changed the verdict but is not needed", name, value);
                }
            }
        }
    }

    #[test]
    fn the_outcome_with_gaps_is_that_of_the_full_trace(rules in rules(4), profiles in profiles(20), as_of in as_of()) {
        for rule in &rules {
            for profile in &profiles {
                let Ok(full) = evaluate(&CATALOGUE, rule, profile, as_of) else { continue };
                let (outcome, gaps) = engine::eval::outcome_with_gaps(&CATALOGUE, rule, profile, as_of);
                prop_assert_eq!(outcome, full.outcome());
                prop_assert_eq!(serde_json::to_value(&gaps).unwrap(), serde_json::to_value(&full.gaps).unwrap());
            }
        }
    }

    #[test]
    fn the_gaps_fingerprint_tells_which_gaps_there_are_and_when_they_close(rules in rules(4), profiles in profiles(12), as_of in as_of()) {
        use engine::gaps::fingerprint;
        for rule in &rules {
            let evaluated: Vec<_> = profiles.iter().filter_map(|p| evaluate(&CATALOGUE, rule, p, as_of).ok()).collect();
            let identity = |gaps: &[engine::gaps::Gap]| -> Vec<(String, String, bool, Option<String>)> {
                // A date counted from `as_of` (no date of birth) moves daily: not part of it.
                gaps.iter().map(|g| (g.path.to_string(), g.gap_kind.name().to_string(), g.negated, g.estimated_eligibility_date.filter(|_| !g.estimate_counts_from_as_of).map(|d| d.to_string()))).collect()
            };
            for a in &evaluated {
                for b in &evaluated {
                    if identity(&a.gaps) == identity(&b.gaps) {
                        prop_assert_eq!(fingerprint(&a.gaps), fingerprint(&b.gaps));
                    } else {
                        prop_assert_ne!(fingerprint(&a.gaps), fingerprint(&b.gaps));
                    }
                }
            }
        }
    }

    #[test]
    fn incremental_equals_full(rules in rules(8), before in profile_doc(), after in profile_doc(), d1 in as_of(), d2 in as_of()) {
        let refs: Vec<&Rule> = rules.iter().collect();
        let old = Profile::from_json(&CATALOGUE, &before, "before").unwrap();
        let new = Profile::from_json(&CATALOGUE, &after, "after").unwrap();
        let index = DependencyIndex::new(&refs, CATALOGUE.len());
        let mut kept: Vec<_> = refs.iter().map(|r| outcome(r, &old, d1)).collect();
        for i in affected_rules(&index, &refs, &old.changed_fields(&new), d1, d2) {
            kept[i] = outcome(refs[i], &new, d2);
        }
        let full: Vec<_> = refs.iter().map(|r| outcome(r, &new, d2)).collect();
        prop_assert_eq!(kept, full);
    }

    #[test]
    fn a_rule_a_profile_change_does_not_reach_or_leaves_unchanged_keeps_its_outcome_and_gaps(rules in rules(8), before in profile_doc(), donor in profile_doc(), taken in any::<u8>(), nudge in 0u32..3, as_of in as_of()) {
        // `after` is `before` with a few fields taken from `donor`, and the income sometimes
        // nudged within its band, so that most changes keep most leaf truths.
        let mut after = before.clone();
        for (bit, (section, field)) in PROFILE_FIELDS.iter().enumerate() {
            if taken & (1 << bit) != 0 {
                match donor[section].get(*field) {
                    Some(value) => { after[section][*field] = value.clone(); }
                    None => { after[section].as_object_mut().unwrap().remove(*field); }
                }
            }
        }
        if let Some(income) = after["economic"]["annual_income"].as_f64() {
            after["economic"]["annual_income"] = serde_json::json!(income + f64::from(nudge) * 4000.0);
        }
        // As the evaluator compares them: each profile as it reads on the day (the age from
        // the date of birth).
        let old = Profile::from_json(&CATALOGUE, &before, "before").unwrap().into_on(as_of);
        let new = Profile::from_json(&CATALOGUE, &after, "after").unwrap().into_on(as_of);
        let change = engine::deps::ProfileChange::new(&CATALOGUE, old.changed_fields(&new));
        let all: Vec<&Rule> = rules.iter().collect();
        let index = DependencyIndex::new(&all, CATALOGUE.len());
        let moved = index.leaves_moved(&change, &old, &new);
        // Asked of one rule, the index answers as its list of the rules reading the change.
        let reading = index.rules_reading(&change.fields);
        let changed = index.field_set(&change.fields);
        for i in 0..rules.len() {
            prop_assert_eq!(index.reads_any(i, &changed), reading.binary_search(&i).is_ok(), "rule {}", i);
        }
        // Asked of some rules only (every other one), the same answer for those, "moved" (the
        // safe answer) for the rest.
        let asked: Vec<usize> = (0..rules.len()).step_by(2).collect();
        let among = index.leaves_moved_among(&change, &old, &new, &asked);
        for (i, (&all_answer, &answer)) in moved.iter().zip(&among).enumerate() {
            prop_assert_eq!(answer, if i % 2 == 0 { all_answer } else { true }, "rule {}", i);
        }
        // The same change without its gap-date condition: there the answer is the leaves' alone,
        // so a wrong entry of the index cannot hide behind a moved gap date.
        let leaves_only = engine::deps::ProfileChange { moves_gap_dates: false, ..change.clone() };
        for (index, rule) in rules.iter().enumerate() {
            // The index's shortcut answers as the rule's own walk does.
            for change in [&change, &leaves_only] {
                prop_assert_eq!(
                    engine::deps::outcome_unchanged_given(&CATALOGUE, rule, &old, &new, change, as_of, moved[index]),
                    engine::deps::outcome_unchanged(&CATALOGUE, rule, &old, &new, change, as_of),
                    "rule {}", rule.rule_id
                );
            }
            // Kept: a rule that reads none of the fields the change reaches, or one said
            // unchanged although it does.
            let reached = rule.fields_read().iter().any(|f| change.fields.contains(f));
            if reached && !engine::deps::outcome_unchanged(&CATALOGUE, rule, &old, &new, &change, as_of) {
                continue;
            }
            let (was, was_gaps) = engine::eval::outcome_with_gaps(&CATALOGUE, rule, &old, as_of);
            let (now, now_gaps) = engine::eval::outcome_with_gaps(&CATALOGUE, rule, &new, as_of);
            prop_assert_eq!(was, now);
            prop_assert_eq!(engine::gaps::fingerprint(&was_gaps), engine::gaps::fingerprint(&now_gaps));
        }
    }

    #[test]
    fn the_calendar_names_exactly_the_schemes_whose_outcomes_change_on_a_day(rules in rules(8), profiles in profiles(12), start in as_of(), pick in any::<prop::sample::Index>(), turn in any::<bool>()) {
        use engine::calendar::{CalendarChange, due_on, next_change};
        let set = RuleSet { rules };
        // The days a rule's applicability can turn on (the rules start on 2024-01-01): a
        // random day rarely is one, so half the time one of these is taken.
        let year = start.year();
        let turns: Vec<engine::Date> = set
            .rules
            .iter()
            .flat_map(|r| {
                let window = |day: engine::date::MonthDay, after: i64| {
                    engine::Date::from_ymd(year, day.month, day.day).and_then(|d| d.plus_days(after))
                };
                [
                    r.effective_until.and_then(|d| d.plus_days(1)),
                    r.window.and_then(|w| window(w.opens, 0)),
                    r.window.and_then(|w| window(w.closes, 1)),
                ]
            })
            .flatten()
            .collect();
        let day = if turn && !turns.is_empty() { turns[pick.index(turns.len())] } else { start };
        // The next change of each scheme after `start` is named on its day, and on no turn before.
        for rule in &set.rules {
            let Some(next) = next_change(&set, &rule.scheme_id, start) else { continue };
            prop_assert!(due_on(&set, next).iter().any(|d| d.scheme_id == rule.scheme_id));
            for &earlier in turns.iter().filter(|&&t| t > start && t < next) {
                prop_assert!(!due_on(&set, earlier).iter().any(|d| d.scheme_id == rule.scheme_id));
            }
        }
        let eve = day.plus_days(-1).unwrap();
        let outcome_on = |scheme: &str, profile: &Profile, on| {
            set.in_effect(on)
                .into_iter()
                .find(|r| r.scheme_id == scheme)
                .filter(|r| engine::temporal::applicability(r, on).is_applicable())
                .map(|r| {
                    let (outcome, gaps) = engine::eval::outcome_with_gaps(&CATALOGUE, r, profile, on);
                    (outcome, engine::gaps::fingerprint(&gaps))
                })
        };
        let due = due_on(&set, day);
        for rule in &set.rules {
            let named = due.iter().find(|d| d.scheme_id == rule.scheme_id);
            for profile in &profiles {
                let changed = outcome_on(&rule.scheme_id, profile, eve) != outcome_on(&rule.scheme_id, profile, day);
                // Nothing missed: an outcome that changes with the day is a named scheme's.
                prop_assert!(!changed || named.is_some(), "{} changes on {} but is not named", rule.scheme_id, day);
                // Nothing needless: a named scheme (same version) changes for every citizen.
                if let Some(due) = named.filter(|d| d.change != CalendarChange::NewVersion) {
                    prop_assert!(changed, "{} named ({:?}) on {} without a change", rule.scheme_id, due.change, day);
                }
            }
        }
    }

    #[test]
    fn the_sweep_reevaluates_exactly_the_pairs_whose_outcome_changes_on_a_day(rules in rules(8), profiles in profiles(12), start in as_of(), days in 1i64..900) {
        // docs/releases.md, "The calendar sweep": on day D the sweep re-evaluates every
        // citizen's pair with each scheme `due_on(D)` names, and, for each citizen whose stored
        // next age change is D, the rules `AgeLimits::changed` names from D − 1 to D. Those
        // pairs must be exactly the (citizen, scheme) pairs whose outcome (version, verdict,
        // score, gaps) differs between D − 1 and D under full re-evaluation. Each citizen was
        // last evaluated on `start`; each sweep day re-evaluates and stores the next change
        // again, as the evaluator does.
        use engine::calendar::{AgeLimits, due_on};
        let set = RuleSet { rules };
        let holdable: Vec<usize> = (0..set.rules.len()).collect();
        let limits = AgeLimits::new(&CATALOGUE, &set.rules, &holdable);
        let outcome_on = |scheme: &str, profile: &Profile, on: engine::Date| {
            set.in_effect(on)
                .into_iter()
                .find(|r| r.scheme_id == scheme)
                .filter(|r| engine::temporal::applicability(r, on).is_applicable())
                .map(|r| {
                    let aged = profile.on(on);
                    let (outcome, gaps) = engine::eval::outcome_with_gaps(&CATALOGUE, r, &aged, on);
                    (r.rule_id.clone(), outcome, engine::gaps::fingerprint(&gaps))
                })
        };
        let end = start.plus_days(days).unwrap();
        for profile in &profiles {
            let next = limits.next_change(&CATALOGUE, &set.rules, profile, start);
            // Probes: a random day, the next change, and every birthday up to the random day
            // (a birthday the next change skips must change nothing).
            let mut probes = vec![end];
            probes.extend(next);
            if let Some(born) = profile.date_of_birth() {
                probes.extend(
                    (0..=130)
                        .filter_map(|years| born.add_years(years))
                        .filter(|&birthday| birthday > start && birthday <= end),
                );
            }
            for day in probes {
                let eve = day.plus_days(-1).unwrap();
                // The stored next change on `day`: each one reached was swept, then stored anew.
                let mut stored = next;
                while let Some(reached) = stored.filter(|&n| n < day) {
                    stored = limits.next_change(&CATALOGUE, &set.rules, profile, reached);
                    prop_assert!(stored.is_none_or(|n| n > reached), "the next change after {} is {:?}", reached, stored);
                }
                let by_age = if stored == Some(day) {
                    let changed = limits.changed(&CATALOGUE, &set.rules, profile, eve, day);
                    prop_assert!(!changed.is_empty(), "the stored next change {} changes nothing", day);
                    changed
                } else {
                    Vec::new()
                };
                let due = due_on(&set, day);
                for (index, rule) in set.rules.iter().enumerate() {
                    let changed = outcome_on(&rule.scheme_id, profile, eve) != outcome_on(&rule.scheme_id, profile, day);
                    let swept = due.iter().any(|d| d.scheme_id == rule.scheme_id) || by_age.contains(&index);
                    prop_assert_eq!(changed, swept, "{} for a citizen born {:?} from {} to {} (stored next change {:?})", rule.rule_id, profile.date_of_birth(), eve, day, stored);
                }
            }
        }
    }

    #[test]
    fn a_verdict_that_cannot_become_eligible_stays_so_whatever_the_answers(rules in rules(4), doc in profile_doc(), donors in prop::collection::vec(profile_doc(), 1..6), as_of in as_of()) {
        // docs/semantics.md, Evaluation 7: `could_become_eligible` false means no answer to the
        // unknown fields makes the rule ELIGIBLE. Every unknown field the rule reads is filled
        // from a donor (all at once), and the verdict must still not be ELIGIBLE.
        let profile = Profile::from_json(&CATALOGUE, &doc, "profile").unwrap();
        for rule in &rules {
            let Ok(before) = evaluate(&CATALOGUE, rule, &profile, as_of) else { continue };
            if before.verdict == engine::Verdict::Eligible || before.could_become_eligible {
                continue;
            }
            for donor in &donors {
                let mut filled = doc.clone();
                for field in rule.fields_read() {
                    let name = CATALOGUE.field(field).name.as_str();
                    let (group, key) = name.split_once('.').expect("catalogue names are group.key");
                    if profile.get(field).is_none() && let Some(value) = donor.get(group).and_then(|g| g.get(key)) {
                        filled[group][key] = value.clone();
                    }
                }
                let filled = Profile::from_json(&CATALOGUE, &filled, "filled").unwrap();
                let after = evaluate(&CATALOGUE, rule, &filled, as_of).unwrap();
                prop_assert_ne!(after.verdict, engine::Verdict::Eligible, "answers made {} ELIGIBLE though it could not become so", rule.rule_id);
            }
        }
    }

    #[test]
    fn hashes_ignore_key_order(doc in rule_doc(1), profile in profile_doc()) {
        let reversed = |v: &Json| -> Json {
            fn rev(v: &Json) -> Json {
                match v {
                    Json::Object(m) => Json::Object(m.iter().rev().map(|(k, v)| (k.clone(), rev(v))).collect()),
                    Json::Array(a) => Json::Array(a.iter().map(rev).collect()),
                    other => other.clone(),
                }
            }
            rev(v)
        };
        let a = parse_rule_json(&CATALOGUE, doc.clone(), "a").unwrap();
        let b = parse_rule_json(&CATALOGUE, reversed(&doc), "b").unwrap();
        prop_assert_eq!(&a.rule_hash, &b.rule_hash);
        let p = Profile::from_json(&CATALOGUE, &profile, "p").unwrap();
        let q = Profile::from_json(&CATALOGUE, &reversed(&profile), "q").unwrap();
        prop_assert_eq!(&p.input_snapshot_hash, &q.input_snapshot_hash);
    }
}
