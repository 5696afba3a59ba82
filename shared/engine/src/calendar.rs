//! The calendar (docs/releases.md, "The calendar sweep"): which schemes' outcomes change from one
//! day to the next with no new data.
//!
//! A verdict changes with the date alone in two ways:
//!
//! - through the scheme's version in effect and that version's applicability (effective dates,
//!   application deadline, yearly window), the same for every citizen who can hold the scheme:
//!   [`due_on`], [`next_change`];
//! - through the citizen's age, read from the date of birth on the evaluation date
//!   ([`Profile::on`]): [`AgeLimits`].
//!
//! A gap date counted from the evaluation date is not part of an outcome.

use serde::Serialize;

use crate::catalogue::{Catalogue, FieldId};
use crate::date::{Date, MonthDay};
use crate::eval::outcome_with_gaps;
use crate::gaps::fingerprint;
use crate::profile::Profile;
use crate::rule::{Leaf, Operand, Rule};
use crate::ruleset::RuleSet;
use crate::temporal::{Applicability, applicability};
use crate::value::Scalar;

/// How a scheme's outcome changes between the day before and the day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CalendarChange {
    /// A version takes effect where none was in effect.
    TookEffect,
    /// Another version takes over.
    NewVersion,
    /// The version in effect expires and none follows.
    Expired,
    /// The application deadline passed.
    DeadlinePassed,
    /// The yearly application window opened.
    WindowOpened,
    /// The yearly application window closed.
    WindowClosed,
}

impl CalendarChange {
    pub fn name(self) -> &'static str {
        match self {
            CalendarChange::TookEffect => "took_effect",
            CalendarChange::NewVersion => "new_version",
            CalendarChange::Expired => "expired",
            CalendarChange::DeadlinePassed => "deadline_passed",
            CalendarChange::WindowOpened => "window_opened",
            CalendarChange::WindowClosed => "window_closed",
        }
    }
}

/// A scheme whose outcomes change on a day: the version in effect the day before and on the day.
#[derive(Debug, Clone)]
pub struct Due<'a> {
    pub scheme_id: &'a str,
    /// `central` or the state whose citizens can hold the scheme.
    pub state: &'a str,
    pub change: CalendarChange,
    pub before: Option<&'a Rule>,
    pub after: Option<&'a Rule>,
}

/// The schemes whose outcomes change between `day − 1` and `day`, by scheme id: every citizen
/// who can hold one of them gets a different outcome on `day` (a verdict appears or goes), or,
/// for a new version, is evaluated under another rule. No other scheme's outcome changes.
pub fn due_on(rules: &RuleSet, day: Date) -> Vec<Due<'_>> {
    let Some(eve) = day.plus_days(-1) else {
        return Vec::new();
    };
    let (before, after) = (rules.in_effect(eve), rules.in_effect(day));
    let mut schemes: Vec<&str> = before
        .iter()
        .chain(&after)
        .map(|r| r.scheme_id.as_str())
        .collect();
    schemes.sort_unstable();
    schemes.dedup();
    let mut due = Vec::new();
    for scheme in schemes {
        let (was, is) = (version_of(&before, scheme), version_of(&after, scheme));
        let Some(change) = change(was, is, eve, day) else {
            continue;
        };
        let Some(rule) = is.or(was) else { continue };
        due.push(Due {
            scheme_id: &rule.scheme_id,
            state: &rule.state,
            change,
            before: was,
            after: is,
        });
    }
    due
}

fn version_of<'a>(versions: &[&'a Rule], scheme: &str) -> Option<&'a Rule> {
    versions.iter().find(|r| r.scheme_id == scheme).copied()
}

/// What happens to a scheme's outcomes between `eve` and `day`, given its version on each.
fn change(was: Option<&Rule>, is: Option<&Rule>, eve: Date, day: Date) -> Option<CalendarChange> {
    let applicable =
        |rule: Option<&Rule>, on: Date| rule.is_some_and(|r| applicability(r, on).is_applicable());
    let (then, now) = (applicable(was, eve), applicable(is, day));
    match (was, is) {
        (Some(w), Some(i)) if w.rule_id != i.rule_id => {
            (then || now).then_some(CalendarChange::NewVersion)
        }
        _ if then == now => None,
        (None, _) => Some(CalendarChange::TookEffect),
        (Some(_), _) if now => Some(CalendarChange::WindowOpened),
        (_, None) => Some(CalendarChange::Expired),
        (_, Some(rule)) => Some(match applicability(rule, day) {
            Applicability::DeadlinePassed { .. } => CalendarChange::DeadlinePassed,
            Applicability::WindowClosed { .. } => CalendarChange::WindowClosed,
            _ => CalendarChange::Expired,
        }),
    }
}

/// The first day after `after` on which `scheme`'s outcomes change (`due_on` lists it), within
/// two years; None if nothing is scheduled in that time. Only the days where some version's
/// dates, deadline or window turn can be such a day, so only those are tried.
pub fn next_change(rules: &RuleSet, scheme: &str, after: Date) -> Option<Date> {
    let horizon = after.add_years(2)?;
    let mut turns: Vec<Date> = Vec::new();
    for rule in rules.rules.iter().filter(|r| r.scheme_id == scheme) {
        turns.push(rule.effective_from);
        turns.extend(rule.effective_until.and_then(|d| d.plus_days(1)));
        turns.extend(rule.application.deadline.and_then(|d| d.plus_days(1)));
        if let Some(window) = rule.window {
            for year in after.year()..=horizon.year() {
                turns.extend(on(window.opens, year));
                turns.extend(on(window.closes, year).and_then(|d| d.plus_days(1)));
            }
        }
    }
    turns.retain(|&d| d > after && d <= horizon);
    turns.sort_unstable();
    turns.dedup();
    turns
        .into_iter()
        .find(|&day| due_on(rules, day).iter().any(|d| d.scheme_id == scheme))
}

/// The rules a citizen can hold that test the age, each with the ages at which its conditions
/// on the age can change truth (`gte 60` turns on the 60th birthday, `lte 40` on the 41st,
/// `eq`, `in` and `between` on both), and the other versions of its scheme: what a citizen's
/// birthdays can change, found exactly by evaluating (docs/semantics.md, "Age on a date").
///
/// Rules are named by their index in one slice (a rule set's `rules`), given again to each call.
#[derive(Debug, Clone, Default)]
pub struct AgeLimits {
    limits: Vec<AgeLimit>,
}

#[derive(Debug, Clone)]
struct AgeLimit {
    rule: usize,
    /// Sorted, without repeats.
    turns: Vec<i64>,
    /// The other versions of the scheme among the citizen's rules: the one a pass evaluates on
    /// a day is the highest version in effect (`RuleSet::in_effect`).
    siblings: Vec<usize>,
}

impl AgeLimits {
    /// Over `holdable`, the indices in `rules` of every version a citizen can hold (their
    /// state's and the central schemes: `RuleSet::for_state`).
    pub fn new(catalogue: &Catalogue, rules: &[Rule], holdable: &[usize]) -> AgeLimits {
        let Some(age) = catalogue.id("identity.age") else {
            return AgeLimits::default();
        };
        let limits = holdable
            .iter()
            .filter_map(|&rule| {
                let turns = turns_of(&rules[rule], age);
                if turns.is_empty() {
                    return None;
                }
                let scheme = &rules[rule].scheme_id;
                let siblings = holdable
                    .iter()
                    .copied()
                    .filter(|&other| other != rule && rules[other].scheme_id == *scheme)
                    .collect();
                Some(AgeLimit {
                    rule,
                    turns,
                    siblings,
                })
            })
            .collect();
        AgeLimits { limits }
    }

    /// The rules whose outcome (verdict, score and gaps) for the citizen the age alone changes
    /// between `since` and `day`: each the version a pass evaluates on `day`, applicable then,
    /// with a turn at an age reached after `since`, and evaluated on `day` with the profile as
    /// it reads on `since` and as it reads on `day` (the outcomes differ). Sorted by index.
    pub fn changed(
        &self,
        catalogue: &Catalogue,
        rules: &[Rule],
        profile: &Profile,
        since: Date,
        day: Date,
    ) -> Vec<usize> {
        let Some(born) = profile.date_of_birth() else {
            return Vec::new();
        };
        // -1: not yet born on `since` (the age is unknown then).
        let was = born.whole_years_to(since).unwrap_or(-1);
        let Some(is) = born.whole_years_to(day).filter(|&is| is > was) else {
            return Vec::new();
        };
        let (then, now) = (profile.on(since), profile.on(day));
        let mut changed: Vec<usize> = self
            .limits
            .iter()
            .filter(|limit| limit.turns.iter().any(|&t| t > was && t <= is))
            .filter(|limit| limit.evaluated_on(rules, day))
            .filter(|limit| {
                let rule = &rules[limit.rule];
                let (a, a_gaps) = outcome_with_gaps(catalogue, rule, &then, day);
                let (b, b_gaps) = outcome_with_gaps(catalogue, rule, &now, day);
                a != b || fingerprint(&a_gaps) != fingerprint(&b_gaps)
            })
            .map(|limit| limit.rule)
            .collect();
        changed.sort_unstable();
        changed
    }

    /// The first birthday after `after` on which the age changes an outcome
    /// ([`AgeLimits::changed`] from the day before): the day the daily sweep re-evaluates the
    /// citizen. None without a date of birth, or when no birthday ahead changes anything.
    pub fn next_change(
        &self,
        catalogue: &Catalogue,
        rules: &[Rule],
        profile: &Profile,
        after: Date,
    ) -> Option<Date> {
        let born = profile.date_of_birth()?;
        let age = born.whole_years_to(after).unwrap_or(-1);
        let mut turns: Vec<i64> = self
            .limits
            .iter()
            .flat_map(|l| l.turns.iter().copied())
            .filter(|&t| t > age)
            .collect();
        turns.sort_unstable();
        turns.dedup();
        turns.into_iter().find_map(|turn| {
            let day = born.add_years(i32::try_from(turn).ok()?)?;
            let eve = day.plus_days(-1)?;
            (!self.changed(catalogue, rules, profile, eve, day).is_empty()).then_some(day)
        })
    }
}

impl AgeLimit {
    /// This version is the one a pass evaluates on `day`, and applications are open then (a
    /// rule that is not applicable has no verdict for the age to change).
    fn evaluated_on(&self, rules: &[Rule], day: Date) -> bool {
        let rule = &rules[self.rule];
        applicability(rule, day).is_applicable()
            && !self.siblings.iter().any(|&other| {
                rules[other].version > rule.version && applicability(&rules[other], day).in_effect()
            })
    }
}

/// The ages at which `rule`'s conditions on `age` can change truth, sorted, without repeats.
fn turns_of(rule: &Rule, age: FieldId) -> Vec<i64> {
    let mut turns = Vec::new();
    let mut add = |value: &Scalar| {
        if let Some(v) = value.as_f64() {
            for whole in [v.floor(), v.ceil()] {
                turns.extend([whole as i64, whole as i64 + 1]);
            }
        }
    };
    let mut visit = |leaf: &Leaf| {
        if leaf.field == age {
            match &leaf.operand {
                Operand::One(v) => add(v),
                Operand::Many(values) => values.iter().for_each(&mut add),
                Operand::Range(low, high) => {
                    add(low);
                    add(high);
                }
            }
        }
    };
    rule.eligibility.for_each_leaf(&mut visit);
    rule.exclusions.iter().for_each(&mut visit);
    turns.sort_unstable();
    turns.dedup();
    turns
}

/// `day` of `year`; 29 February in a year without it is 1 March, as windows read it.
fn on(day: MonthDay, year: i32) -> Option<Date> {
    Date::from_ymd(year, day.month, day.day).or_else(|| Date::from_ymd(year, 3, 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalogue;

    fn rules(documents: &[&str]) -> RuleSet {
        let documents: Vec<(String, String)> = documents
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("r{i}.yaml"), d.to_string()))
            .collect();
        RuleSet::from_documents(&Catalogue::bundled(), &documents).expect("valid rules")
    }

    fn rule(id: &str, version: u32, dates: &str) -> String {
        format!(
            "schema_version: '1.0'\nrule_id: {id}\nscheme_id: sch_cal\nscheme_name: Calendar\nstate: central\nversion: {version}\n{dates}\neligibility: {{operator: AND, conditions: [{{field: identity.age, operator: gte, value: 60}}]}}\nsource: {{url: 'https://example.org', document: x}}\n"
        )
    }

    fn d(s: &str) -> Date {
        Date::parse(s).unwrap()
    }

    #[test]
    fn each_turn_of_a_scheme_is_named_on_its_day_and_no_other() {
        let set = rules(&[
            &rule(
                "rule_cal_001",
                1,
                "effective_from: '2025-01-01'\neffective_until: '2025-12-31'\napplication_window: {opens: '06-01', closes: '08-31'}",
            ),
            &rule(
                "rule_cal_002",
                2,
                "effective_from: '2026-01-01'\napplication: {deadline: '2026-03-31'}",
            ),
        ]);
        let on_day = |day: &str| -> Vec<CalendarChange> {
            due_on(&set, d(day)).iter().map(|d| d.change).collect()
        };
        assert_eq!(on_day("2025-01-01"), []);
        assert_eq!(on_day("2025-06-01"), [CalendarChange::WindowOpened]);
        assert_eq!(on_day("2025-08-31"), []);
        assert_eq!(on_day("2025-09-01"), [CalendarChange::WindowClosed]);
        assert_eq!(on_day("2026-01-01"), [CalendarChange::NewVersion]);
        assert_eq!(on_day("2026-04-01"), [CalendarChange::DeadlinePassed]);
        assert_eq!(
            next_change(&set, "sch_cal", d("2025-01-01")),
            Some(d("2025-06-01"))
        );
        assert_eq!(
            next_change(&set, "sch_cal", d("2025-06-01")),
            Some(d("2025-09-01"))
        );
        assert_eq!(
            next_change(&set, "sch_cal", d("2025-09-01")),
            Some(d("2026-01-01"))
        );
        assert_eq!(next_change(&set, "sch_cal", d("2026-04-01")), None);
    }

    #[test]
    fn a_birthday_counts_only_under_the_version_in_effect_on_it() {
        // Version 1 (age 60 and over) is replaced on 2026-01-01 by version 2 (65 and over):
        // a citizen born on 1966-03-10 turns 60 under version 2, which that changes nothing
        // for, and 65 in 2031, which does.
        let limit = |id: &str, version: u32, dates: &str, age: u32| {
            rule(id, version, dates).replace("value: 60", &format!("value: {age}"))
        };
        let set = rules(&[
            &limit(
                "rule_cal_001",
                1,
                "effective_from: '2020-01-01'\neffective_until: '2025-12-31'",
                60,
            ),
            &limit("rule_cal_002", 2, "effective_from: '2026-01-01'", 65),
        ]);
        let catalogue = Catalogue::bundled();
        let limits = AgeLimits::new(&catalogue, &set.rules, &[0, 1]);
        let citizen = Profile::from_json(
            &catalogue,
            &serde_json::json!({"identity": {"date_of_birth": "1966-03-10"}}),
            "citizen",
        )
        .unwrap();
        let born_1960 = Profile::from_json(
            &catalogue,
            &serde_json::json!({"identity": {"date_of_birth": "1960-03-10"}}),
            "older",
        )
        .unwrap();
        let next =
            |p: &Profile, after: &str| limits.next_change(&catalogue, &set.rules, p, d(after));
        assert_eq!(next(&citizen, "2025-06-01"), Some(d("2031-03-10")));
        assert!(
            limits
                .changed(
                    &catalogue,
                    &set.rules,
                    &citizen,
                    d("2026-03-09"),
                    d("2026-03-10")
                )
                .is_empty()
        );
        assert_eq!(
            limits.changed(
                &catalogue,
                &set.rules,
                &citizen,
                d("2031-03-09"),
                d("2031-03-10")
            ),
            [1]
        );
        // Under version 1 the 60th birthday (2020) is the change. After it none: the 65th
        // falls under version 1 still, and version 2 finds the citizen 65 already (the day it
        // takes effect is the scheme's calendar change, `due_on`, not a birthday's).
        assert_eq!(next(&born_1960, "2019-06-01"), Some(d("2020-03-10")));
        assert_eq!(next(&born_1960, "2020-03-10"), None);
        // No date of birth, no birthday.
        let ageless = Profile::from_json(
            &catalogue,
            &serde_json::json!({"identity": {"age": 59}}),
            "given",
        )
        .unwrap();
        assert_eq!(next(&ageless, "2025-06-01"), None);
    }
}
