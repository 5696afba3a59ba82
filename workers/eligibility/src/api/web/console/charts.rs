//! Horizontal bar charts drawn on the server as SVG (no script, nothing loaded), each with its
//! numbers in a table beside it: a person reads the chart at a glance, a screen reader and a
//! spreadsheet read the table (docs/web.md, "The rules console").

use maud::{Markup, html};

/// One bar.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    /// Its length; None where the number is withheld (a small cell): no bar is drawn.
    pub value: Option<f64>,
    /// The number as the table and the chart say it (`"<10"` for a small cell).
    pub shown: String,
    pub tone: Tone,
}

/// What a bar stands for, by colour (and by the words of its label: colour is never the only
/// sign).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// People gaining a benefit, or money after a change.
    Gain,
    /// People losing one.
    Loss,
    /// Anything else (a fall to a partial match, money before a change, a gap).
    Neutral,
}

impl Tone {
    /// The tone of a verdict transition (verdicts by their stored names; `from` None: a first
    /// evaluation): gaining ELIGIBLE, losing it, or anything else (no change included).
    pub fn of_transition(from: Option<&str>, to: &str) -> Tone {
        let eligible = engine::Verdict::Eligible.name();
        if from == Some(to) {
            Tone::Neutral
        } else if to == eligible {
            Tone::Gain
        } else if from == Some(eligible) {
            Tone::Loss
        } else {
            Tone::Neutral
        }
    }

    fn fill(self) -> &'static str {
        match self {
            Tone::Gain => "#1a7f37",
            Tone::Loss => "#b42318",
            Tone::Neutral => "#5a6b7b",
        }
    }
}

/// Chart geometry, in SVG user units.
const WIDTH: f64 = 640.0;
const LABEL: f64 = 300.0;
const NUMBER: f64 = 90.0;
const ROW: f64 = 26.0;

/// A chart of `bars` titled `title` (its id `id`; the page's heading above it says the title
/// to readers), and the table of its numbers with the column headings `columns` (what a label
/// is, what a number is).
pub fn bar_chart(id: &str, title: &str, columns: (&str, &str), bars: &[Bar]) -> Markup {
    let longest = bars.iter().filter_map(|b| b.value).fold(0.0_f64, f64::max);
    let room = WIDTH - LABEL - NUMBER;
    let height = ROW * bars.len() as f64 + 4.0;
    let title_id = format!("{id}-title");
    html! {
        figure.chart id=(id) {
            svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby=(title_id)
                viewBox=(format!("0 0 {WIDTH} {height}")) width="100%" preserveAspectRatio="xMinYMin meet" {
                title id=(title_id) { (title) }
                @for (i, bar) in bars.iter().enumerate() {
                    @let y = ROW * i as f64 + 2.0;
                    @let length = match bar.value { Some(v) if longest > 0.0 => (v / longest * room).max(1.0), _ => 0.0 };
                    text x=(LABEL - 8.0) y=(y + ROW * 0.65) text-anchor="end" font-size="13" fill="#1f2328" { (clip(&bar.label)) }
                    @if length > 0.0 {
                        rect x=(LABEL) y=(y + 4.0) width=(format!("{length:.1}")) height=(ROW - 8.0) fill=(bar.tone.fill()) {}
                    }
                    text x=(LABEL + length + 6.0) y=(y + ROW * 0.65) font-size="13" fill="#1f2328" { (bar.shown) }
                }
            }
            table {
                thead { tr { th scope="col" { (columns.0) } th scope="col" { (columns.1) } } }
                tbody {
                    @for bar in bars {
                        tr { th scope="row" { (bar.label) } td { (bar.shown) } }
                    }
                }
            }
        }
    }
}

/// A label short enough for the chart's label column (the table has it whole).
fn clip(label: &str) -> String {
    const MOST: usize = 42;
    if label.chars().count() <= MOST {
        label.to_string()
    } else {
        let kept: String = label.chars().take(MOST - 1).collect();
        format!("{kept}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transition_is_toned_by_what_it_does_to_eligible() {
        assert_eq!(
            Tone::of_transition(Some("NOT_ELIGIBLE"), "ELIGIBLE"),
            Tone::Gain
        );
        assert_eq!(Tone::of_transition(None, "ELIGIBLE"), Tone::Gain);
        assert_eq!(
            Tone::of_transition(Some("ELIGIBLE"), "PARTIAL_MATCH"),
            Tone::Loss
        );
        assert_eq!(
            Tone::of_transition(Some("ELIGIBLE"), "ELIGIBLE"),
            Tone::Neutral
        );
        assert_eq!(
            Tone::of_transition(Some("PARTIAL_MATCH"), "NOT_ELIGIBLE"),
            Tone::Neutral
        );
    }

    #[test]
    fn bars_are_as_long_as_their_numbers_and_a_withheld_one_has_none() {
        let bars = [
            Bar {
                label: "ELIGIBLE → NOT_ELIGIBLE".into(),
                value: Some(40.0),
                shown: "40".into(),
                tone: Tone::Loss,
            },
            Bar {
                label: "NOT_ELIGIBLE → ELIGIBLE".into(),
                value: Some(10.0),
                shown: "10".into(),
                tone: Tone::Gain,
            },
            Bar {
                label: "PARTIAL_MATCH → ELIGIBLE".into(),
                value: None,
                shown: "<10".into(),
                tone: Tone::Gain,
            },
        ];
        let svg = bar_chart("t", "Transitions", ("change", "citizens"), &bars).into_string();
        let room = WIDTH - LABEL - NUMBER;
        assert!(svg.contains(&format!("width=\"{room:.1}\"")), "{svg}");
        assert!(
            svg.contains(&format!("width=\"{:.1}\"", room / 4.0)),
            "{svg}"
        );
        assert_eq!(
            svg.matches("<rect").count(),
            2,
            "no bar for a withheld cell: {svg}"
        );
        assert!(svg.contains("<td>&lt;10</td>"), "the table says it: {svg}");
        assert!(
            svg.contains("role=\"img\" aria-labelledby=\"t-title\""),
            "{svg}"
        );
    }
}
