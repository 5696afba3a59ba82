//! Numbers an explanation states that no fact states.
//!
//! Oracle-A sources a sentence that *contains* a fact, so "You are eligible for X and will get
//! ₹5,000" passes when "You are eligible for X" is a fact. The explainer worker checks an LLM's
//! answer with this as well as with the oracle: any number (amount, age, date, score) not in the
//! facts is invented.

use std::collections::HashSet;

use crate::facts::Facts;

/// The numbers of `candidate` (digits, with `,` or `.` between digits: `1,50,000`, `2.5`) that
/// appear in none of the facts, each once, in order of appearance.
pub fn unsourced_numbers(facts: &Facts, candidate: &str) -> Vec<String> {
    unsourced_numbers_in(
        facts.facts().iter().map(|fact| fact.text.as_str()),
        candidate,
    )
}

/// [`unsourced_numbers`] against fact sentences as text (a stored Oracle-A case's `facts`).
pub fn unsourced_numbers_in<'a>(
    facts: impl IntoIterator<Item = &'a str>,
    candidate: &str,
) -> Vec<String> {
    let known: HashSet<&str> = facts.into_iter().flat_map(numbers).collect();
    let mut unsourced: Vec<String> = Vec::new();
    for number in numbers(candidate) {
        if !known.contains(number) && !unsourced.iter().any(|u| u == number) {
            unsourced.push(number.to_string());
        }
    }
    unsourced
}

/// The maximal numbers of `text`. `char::is_numeric`, so Devanagari digits are numbers too
/// (and differ from the ASCII digits the facts use).
fn numbers(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].1.is_numeric() {
            i += 1;
            continue;
        }
        let start = chars[i].0;
        let mut end = i + 1;
        loop {
            match chars.get(end) {
                Some((_, c)) if c.is_numeric() => end += 1,
                Some((_, ',' | '.')) if chars.get(end + 1).is_some_and(|(_, c)| c.is_numeric()) => {
                    end += 2
                }
                _ => break,
            }
        }
        let stop = chars.get(end).map_or(text.len(), |&(at, _)| at);
        found.push(&text[start..stop]);
        i = end;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::numbers;

    #[test]
    fn numbers_keep_grouping_and_decimals() {
        assert_eq!(
            numbers("₹1,50,000 a year, 2.5 lakh, ages 60-64, 68. Next"),
            ["1,50,000", "2.5", "60", "64", "68"]
        );
        assert_eq!(numbers("आयु ६८ वर्ष, 1,"), ["६८", "1"]);
        assert!(numbers("no digits here").is_empty());
    }
}
