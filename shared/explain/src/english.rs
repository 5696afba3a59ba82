//! English wording of facts.

use engine::{Date, Verdict};

use crate::phrasing::{Amounts, Condition, Exclusion, Gap, Phrasing, Shown};

pub(crate) struct English;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

impl Phrasing for English {
    fn full_stop(&self) -> &'static str {
        "."
    }

    fn verdict(&self, scheme: &str, verdict: Verdict, as_of: &str) -> String {
        let phrase = self.verdict_phrase(verdict);
        match verdict {
            Verdict::Eligible | Verdict::NotEligible => format!("{phrase} {scheme}"),
            Verdict::PartialMatch => {
                format!("{phrase} {scheme}, but you meet some of its conditions")
            }
            Verdict::NotApplicable => format!("{scheme} {phrase} {as_of}"),
        }
    }

    fn verdict_phrase(&self, verdict: Verdict) -> &'static str {
        match verdict {
            Verdict::Eligible => "You are eligible for",
            Verdict::PartialMatch => "You are not yet eligible for",
            Verdict::NotEligible => "You are not eligible for",
            Verdict::NotApplicable => "does not apply on",
        }
    }

    fn promises(&self) -> &'static [&'static str] {
        &["guarantee", "definitely", "certainly"]
    }

    fn score(&self, score: u8, matched: usize, total: usize) -> String {
        format!(
            "Your match score is {score} out of 100; you meet {matched} of {total} main conditions"
        )
    }

    fn condition(&self, c: &Condition<'_>) -> String {
        let yours = match &c.actual {
            Some(actual) => format!("your {} {} {actual}", c.field.label, is(c.field.plural)),
            None => format!("your {} {} not provided", c.field.label, is(c.field.plural)),
        };
        let met = if c.met { "met" } else { "not met" };
        let sentence = format!("{yours}; required: {}; this condition is {met}", c.required);
        match c.label {
            Some(label) => format!("{label}: {sentence}"),
            None => capitalised(&sentence),
        }
    }

    fn exclusion(&self, e: &Exclusion<'_>) -> String {
        let sentence = format!(
            "You are excluded from this scheme because your {} {} {}; required: {}",
            e.field.label,
            is(e.field.plural),
            e.actual,
            e.required
        );
        match e.label {
            Some(label) => format!("{sentence} ({label})"),
            None => sentence,
        }
    }

    fn gap(&self, g: &Gap<'_>) -> String {
        match &g.estimated_eligibility_date {
            Some(date) => format!("{}; estimated eligibility date: {date}", g.description),
            None => g.description.clone(),
        }
    }

    fn benefit_kind(&self, kind: Option<&str>, disbursement: Option<&str>) -> Option<String> {
        let words = |code: &str| code.replace('_', " ");
        match (kind, disbursement) {
            (Some(k), Some(d)) => {
                Some(format!("The benefit is {}, paid by {}", words(k), words(d)))
            }
            (Some(k), None) => Some(format!("The benefit is {}", words(k))),
            (None, Some(d)) => Some(format!("The benefit is paid by {}", words(d))),
            (None, None) => None,
        }
    }

    fn benefit_amounts(&self, a: &Amounts) -> Option<String> {
        let parts: Vec<String> = [
            a.monthly.as_ref().map(|m| format!("{m} a month")),
            a.annual.as_ref().map(|y| format!("{y} a year")),
            a.one_time.as_ref().map(|o| format!("{o} once")),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| format!("The benefit amount is {}", parts.join(", ")))
    }

    fn benefit_description(&self, description: &str) -> Option<String> {
        Some(format!("About the benefit: {description}"))
    }

    fn requirement(&self, operator: &str, required: &Shown) -> String {
        match required {
            Shown::One(v) => match operator {
                "neq" => format!("other than {v}"),
                "gt" => format!("more than {v}"),
                "gte" => format!("at least {v}"),
                "lt" => format!("less than {v}"),
                "lte" => format!("at most {v}"),
                "contains" => format!("including {v}"),
                "not_contains" => format!("without {v}"),
                _ => v.clone(),
            },
            Shown::Many(items) if operator == "not_in" => format!("none of {}", items.join(", ")),
            Shown::Many(items) => format!("one of {}", items.join(", ")),
            Shown::Range(lo, hi) => format!("between {lo} and {hi}"),
        }
    }

    fn boolean(&self, value: bool) -> &'static str {
        if value { "yes" } else { "no" }
    }

    fn nothing(&self) -> &'static str {
        "none"
    }

    fn quantity(&self, number: &str, unit: &str) -> String {
        match (number, unit.strip_suffix('s')) {
            ("1", Some(singular)) => format!("1 {singular}"),
            _ => format!("{number} {unit}"),
        }
    }

    fn date(&self, date: Date) -> String {
        format!(
            "{} {} {}",
            date.day(),
            MONTHS[usize::from(date.month()) - 1],
            date.year()
        )
    }
}

fn is(plural: bool) -> &'static str {
    if plural { "are" } else { "is" }
}

fn capitalised(sentence: &str) -> String {
    let mut chars = sentence.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_and_dates() {
        assert_eq!(English.quantity("1", "years"), "1 year");
        assert_eq!(English.quantity("2", "years"), "2 years");
        assert_eq!(English.quantity("1", "percent"), "1 percent");
        assert_eq!(English.quantity("1,200", "hectares"), "1,200 hectares");
        assert_eq!(
            English.date(Date::from_ymd(2027, 8, 15).unwrap()),
            "15 August 2027"
        );
    }
}
