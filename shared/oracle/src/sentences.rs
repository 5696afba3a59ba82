//! Sentence splitting for RULE-PREC-001/004.

use std::ops::Range;

/// Splits a normalised text on `.`, `!` and `?`, except a `.` standing directly
/// between two numeric characters (a decimal point, so `₹1.8 lakh` stays whole).
/// Each fragment is trimmed and empty fragments are dropped. Returns byte
/// ranges into `text`.
pub(crate) fn split(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    let mut previous: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let delimits = match c {
            '!' | '?' => true,
            '.' => !(previous.is_some_and(char::is_numeric) && next.is_some_and(char::is_numeric)),
            _ => false,
        };
        if delimits {
            push_trimmed(text, start..i, &mut spans);
            start = i + c.len_utf8();
        }
        previous = Some(c);
    }
    push_trimmed(text, start..text.len(), &mut spans);
    spans
}

fn push_trimmed(text: &str, span: Range<usize>, spans: &mut Vec<Range<usize>>) {
    let fragment = &text[span.clone()];
    let trimmed = fragment.trim();
    if !trimmed.is_empty() {
        let start = span.start + (fragment.len() - fragment.trim_start().len());
        spans.push(start..start + trimmed.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(text: &str) -> Vec<&str> {
        split(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn splits_on_all_three_delimiters() {
        assert_eq!(
            sentences("you are eligible. your age is 68! is it? yes"),
            ["you are eligible", "your age is 68", "is it", "yes"]
        );
    }

    #[test]
    fn decimal_point_does_not_split() {
        assert_eq!(
            sentences("income is ₹1.8 lakh. limit is 2.5."),
            ["income is ₹1.8 lakh", "limit is 2.5"]
        );
        assert_eq!(sentences("आय १.८ लाख है"), ["आय १.८ लाख है"]);
    }

    #[test]
    fn dot_next_to_only_one_digit_splits() {
        assert_eq!(sentences("age 68.next"), ["age 68", "next"]);
        assert_eq!(sentences("version .5"), ["version", "5"]);
        assert_eq!(sentences("68. 5"), ["68", "5"]);
    }

    #[test]
    fn empty_fragments_are_dropped() {
        assert!(sentences("").is_empty());
        assert!(sentences(" ... ?! ").is_empty());
        assert_eq!(sentences("wait... what?!"), ["wait", "what"]);
    }

    #[test]
    fn ranges_exclude_surrounding_spaces() {
        let text = "a b.  c d ";
        assert_eq!(split(text), [0..3, 6..9]);
    }
}
