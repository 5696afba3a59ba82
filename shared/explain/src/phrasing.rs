//! What a language must be able to say: the one interface behind the English and Hindi facts.
//!
//! The fact builder decides *what* is said (from the evaluation); a [`Phrasing`] decides only
//! *how*, from values already rendered, so both languages state exactly the same facts.

use engine::gaps::GapKind;
use engine::{Date, Verdict};

/// A profile field as a fact names it.
pub(crate) struct Field<'a> {
    /// Catalogue name (`identity.age`): the key of translated labels.
    pub name: &'a str,
    /// Catalogue label (`age`), in English.
    pub label: &'a str,
    /// A list field: its value is several items.
    pub plural: bool,
}

/// An authored rule value, rendered: one value, a set (`in`, `not_in`) or a range (`between`).
pub(crate) enum Shown {
    One(String),
    Many(Vec<String>),
    Range(String, String),
}

/// One evaluated condition.
pub(crate) struct Condition<'a> {
    pub field: Field<'a>,
    /// The rule author's label for the condition (English).
    pub label: Option<&'a str>,
    /// `None`: the profile does not give the field.
    pub actual: Option<String>,
    /// The requirement, already worded ([`Phrasing::requirement`]).
    pub required: String,
    pub met: bool,
}

/// One exclusion that bars the citizen.
pub(crate) struct Exclusion<'a> {
    pub field: Field<'a>,
    pub label: Option<&'a str>,
    pub actual: String,
    pub required: String,
}

/// One gap: the engine's description and the structured parts it was made from.
pub(crate) struct Gap<'a> {
    pub kind: GapKind,
    /// The engine's English description, sanitised (it quotes profile values).
    pub description: String,
    pub field: Field<'a>,
    pub actual: Option<String>,
    pub required: String,
    /// Under `NOT`: the requirement is that `required` does *not* hold.
    pub negated: bool,
    /// Distance to the threshold, rendered with its unit.
    pub distance: Option<String>,
    pub estimated_eligibility_date: Option<String>,
}

/// Benefit amounts, already in rupees.
pub(crate) struct Amounts {
    pub monthly: Option<String>,
    pub annual: Option<String>,
    pub one_time: Option<String>,
}

/// How one language words facts and values.
pub(crate) trait Phrasing: Sync {
    /// Ends a sentence of an explanation.
    fn full_stop(&self) -> &'static str;

    /// The verdict sentence; it always contains [`Phrasing::verdict_phrase`] of `verdict`.
    fn verdict(&self, scheme: &str, verdict: Verdict, as_of: &str) -> String;
    /// The words stating `verdict`. No verdict's phrase is a substring of another's, so an
    /// explanation can be required to contain its own and forbidden the others.
    fn verdict_phrase(&self, verdict: Verdict) -> &'static str;
    /// Promises no evaluation makes ("guaranteed"): never part of an explanation.
    fn promises(&self) -> &'static [&'static str];

    fn score(&self, score: u8, matched: usize, total: usize) -> String;
    fn condition(&self, condition: &Condition<'_>) -> String;
    fn exclusion(&self, exclusion: &Exclusion<'_>) -> String;
    fn gap(&self, gap: &Gap<'_>) -> String;
    fn benefit_kind(&self, kind: Option<&str>, disbursement: Option<&str>) -> Option<String>;
    fn benefit_amounts(&self, amounts: &Amounts) -> Option<String>;
    /// The rule's free-text benefit description, where the language can carry it as written.
    fn benefit_description(&self, description: &str) -> Option<String>;

    /// An operator (`gte`, `in`…) and its rendered value as a requirement ("at least 60").
    fn requirement(&self, operator: &str, required: &Shown) -> String;
    fn boolean(&self, value: bool) -> &'static str;
    /// An empty list.
    fn nothing(&self) -> &'static str;
    /// A number with a catalogue unit (`years`, `percent`, `hectares`).
    fn quantity(&self, number: &str, unit: &str) -> String;
    fn date(&self, date: Date) -> String;
}
