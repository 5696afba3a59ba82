//! When a rule applies: effective dates, the application deadline and the yearly window.
//! The evaluation date `as_of` is always an input; the engine never reads a clock.

use serde::Serialize;

use crate::date::{Date, MonthDay};
use crate::rule::{ApplicationWindow, Rule};

/// Whether a rule yields a verdict on a date, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Applicability {
    Applicable,
    NotYetInEffect {
        effective_from: Date,
    },
    /// Past `effective_until`: a verdict that goes away for this reason is announced as
    /// `lost` only with `reason: "rule_expired"`.
    Expired {
        effective_until: Date,
    },
    DeadlinePassed {
        deadline: Date,
    },
    WindowClosed {
        opens: Date,
    },
}

impl Applicability {
    pub fn is_applicable(self) -> bool {
        self == Applicability::Applicable
    }

    /// The rule version is in force (its effective dates cover the day), whether or not
    /// applications are open.
    pub fn in_effect(self) -> bool {
        !matches!(
            self,
            Applicability::NotYetInEffect { .. } | Applicability::Expired { .. }
        )
    }
}

pub fn applicability(rule: &Rule, as_of: Date) -> Applicability {
    if as_of < rule.effective_from {
        return Applicability::NotYetInEffect {
            effective_from: rule.effective_from,
        };
    }
    if let Some(until) = rule.effective_until.filter(|&until| as_of > until) {
        return Applicability::Expired {
            effective_until: until,
        };
    }
    if let Some(deadline) = rule.application.deadline.filter(|&d| as_of > d) {
        return Applicability::DeadlinePassed { deadline };
    }
    match rule.window {
        Some(window) if !window_open(window, as_of) => Applicability::WindowClosed {
            opens: next_opening(window, as_of),
        },
        _ => Applicability::Applicable,
    }
}

/// Inclusive at both ends; a window whose `opens` is after `closes` wraps the year end.
pub fn window_open(window: ApplicationWindow, as_of: Date) -> bool {
    let day = MonthDay::of(as_of);
    if window.opens <= window.closes {
        window.opens <= day && day <= window.closes
    } else {
        day >= window.opens || day <= window.closes
    }
}

fn next_opening(window: ApplicationWindow, as_of: Date) -> Date {
    let on = |year: i32| {
        Date::from_ymd(year, window.opens.month, window.opens.day)
            .unwrap_or_else(|| Date::from_ymd(year, 3, 1).expect("1 March exists"))
    };
    let this_year = on(as_of.year());
    if this_year > as_of {
        this_year
    } else {
        on(as_of.year() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(opens: &str, closes: &str) -> ApplicationWindow {
        ApplicationWindow {
            opens: MonthDay::parse(opens).unwrap(),
            closes: MonthDay::parse(closes).unwrap(),
        }
    }

    #[test]
    fn windows_are_inclusive_and_may_wrap() {
        let d = |s| Date::parse(s).unwrap();
        let kharif = window("06-01", "08-31");
        assert!(window_open(kharif, d("2025-06-01")));
        assert!(window_open(kharif, d("2025-08-31")));
        assert!(!window_open(kharif, d("2025-09-01")));
        let rabi = window("11-01", "02-15");
        assert!(window_open(rabi, d("2025-12-31")));
        assert!(window_open(rabi, d("2026-02-15")));
        assert!(!window_open(rabi, d("2026-02-16")));
        assert_eq!(next_opening(rabi, d("2026-02-16")), d("2026-11-01"));
        assert_eq!(next_opening(kharif, d("2025-09-01")), d("2026-06-01"));
    }
}
