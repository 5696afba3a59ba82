//! How a language words facts: the templates of its [`Words`] filled with values already
//! rendered.
//!
//! The fact builder decides *what* is said (from the evaluation); the words decide only *how*,
//! so every language states exactly the same facts.

use engine::catalogue::FieldSpec;
use engine::gaps::GapKind;
use engine::{Date, Verdict};

use crate::words::{Words, fill};

/// A profile field as a fact names it.
pub(crate) struct Field<'a> {
    /// Catalogue name (`identity.age`): the key of translated labels.
    pub name: &'a str,
    /// Catalogue label (`age`), in English.
    pub label: &'a str,
    /// A list field: its value is several items.
    pub plural: bool,
    /// A yes/no value as the field's own clause ("your household owns a refrigerator"): said
    /// instead of "label is yes" wherever the value is stated.
    pub clause: Option<String>,
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

/// The fact that makes an exclusion bar the citizen (docs/languages.md, "Exclusions").
pub(crate) enum Bar<'a> {
    /// A yes/no field's clause for the citizen's value, or a list field's clause for the
    /// barred item: already a whole clause.
    Clause(String),
    /// A list holding the barred item, where the field has no clause of its own.
    Includes { field: Field<'a>, item: String },
    /// Any other value, beside what the scheme needs.
    Value {
        field: Field<'a>,
        actual: String,
        required: String,
    },
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
    /// An exclusion's gap is said as the exclusion itself.
    pub bar: Option<Bar<'a>>,
}

/// Benefit amounts, already in rupees.
pub(crate) struct Amounts {
    pub monthly: Option<String>,
    pub annual: Option<String>,
    pub one_time: Option<String>,
}

impl Words {
    /// The verdict sentence; it always contains [`Words::verdict_phrase`] of `verdict`.
    pub fn verdict(&self, scheme: &str, verdict: Verdict, as_of: &str) -> String {
        let words = self.verdict_words(verdict);
        fill(
            &words.sentence,
            &[
                ("phrase", &words.phrase),
                ("scheme", scheme),
                ("as_of", as_of),
            ],
        )
    }

    /// The words stating `verdict`. No verdict's phrase is a substring of another's, so an
    /// explanation can be required to contain its own and forbidden the others.
    pub fn verdict_phrase(&self, verdict: Verdict) -> &str {
        &self.verdict_words(verdict).phrase
    }

    pub(crate) fn verdict_words(&self, verdict: Verdict) -> &crate::words::VerdictWords {
        match verdict {
            Verdict::Eligible => &self.verdict.eligible,
            Verdict::PartialMatch => &self.verdict.partial_match,
            Verdict::NotEligible => &self.verdict.not_eligible,
            Verdict::NotApplicable => &self.verdict.not_applicable,
        }
    }

    pub fn score(&self, score: u8, matched: usize, total: usize) -> String {
        fill(
            &self.score,
            &[
                ("score", &score.to_string()),
                ("matched", &matched.to_string()),
                ("total", &total.to_string()),
            ],
        )
    }

    pub fn condition(&self, c: &Condition<'_>) -> String {
        let met = if c.met {
            &self.condition.met
        } else {
            &self.condition.not_met
        };
        let sentence = fill(
            &self.condition.sentence,
            &[
                ("field", &self.stated(&c.field, c.actual.as_deref())),
                ("required", &c.required),
                ("met", met),
            ],
        );
        match (c.label, &self.condition.labelled) {
            (Some(label), Some(labelled)) => {
                fill(labelled, &[("label", label), ("sentence", &sentence)])
            }
            _ => capitalised(&sentence),
        }
    }

    /// The exclusion sentence: the fact that bars the citizen, and that the scheme is
    /// therefore not for them.
    pub fn exclusion(&self, bar: &Bar<'_>) -> String {
        let fact = match bar {
            Bar::Clause(clause) => clause.clone(),
            Bar::Includes { field, item } => fill(
                &self.exclusion.includes,
                &[("yours", &self.yours(field)), ("item", item)],
            ),
            Bar::Value {
                field,
                actual,
                required,
            } => fill(
                &self.exclusion.value,
                &[
                    ("field", &self.stated(field, Some(actual))),
                    ("required", required),
                ],
            ),
        };
        capitalised(&fill(&self.exclusion.sentence, &[("fact", &fact)]))
    }

    /// A gap, under its kind's heading (`headed`) or alone (inside a next step that says why).
    pub fn gap_sentence(&self, g: &Gap<'_>, headed: bool) -> String {
        if let (Some(bar), Some(_)) = (&g.bar, &self.gap.kinds) {
            // A language of its own words (not the engine's English description).
            return self.exclusion(bar);
        }
        let kind = self.gap.kinds.as_ref().map_or("", |kinds| match g.kind {
            GapKind::Exclusion => &kinds.exclusion,
            GapKind::Document => &kinds.document,
            GapKind::MissingData => &kinds.missing_data,
            GapKind::Threshold => &kinds.threshold,
            GapKind::Category => &kinds.category,
        });
        let required = match &self.gap.negated {
            Some(negated) if g.negated => fill(negated, &[("required", &g.required)]),
            _ => g.required.clone(),
        };
        let sentence = fill(
            &self.gap.sentence,
            &[
                ("description", &g.description),
                ("field", &self.stated(&g.field, g.actual.as_deref())),
                ("required", &required),
            ],
        );
        let mut sentence = match &self.gap.heading {
            Some(heading) if headed => fill(heading, &[("kind", kind), ("sentence", &sentence)]),
            _ => sentence,
        };
        if let (Some(distance), Some(template)) = (&g.distance, &self.gap.distance) {
            sentence.push_str(&fill(template, &[("distance", distance)]));
        }
        if let Some(date) = &g.estimated_eligibility_date {
            sentence.push_str(&fill(&self.gap.estimated_date, &[("date", date)]));
        }
        sentence
    }

    pub fn benefit_kind(&self, kind: Option<&str>, disbursement: Option<&str>) -> Option<String> {
        let b = &self.benefit;
        // A mode that is the kind itself (a bank loan "paid by" a bank loan) is said once.
        let disbursement = disbursement.filter(|d| Some(*d) != kind);
        let (kind, disbursement) = (
            kind.map(|k| self.code(k)),
            disbursement.map(|d| self.code(d)),
        );
        let template = match (&kind, &disbursement) {
            (Some(_), Some(_)) => &b.kind_and_disbursement,
            (Some(_), None) => &b.kind,
            (None, Some(_)) => &b.disbursement,
            (None, None) => return None,
        };
        Some(fill(
            template,
            &[
                ("kind", kind.as_deref().unwrap_or_default()),
                ("disbursement", disbursement.as_deref().unwrap_or_default()),
            ],
        ))
    }

    /// An amount that is not money paid: an insurance cover, a loan limit, or a contributory
    /// pension's slabs (docs/rule-format.md, "Benefit kinds").
    pub fn benefit_cover(&self, amount: &str) -> String {
        capitalised(&fill(&self.benefit.cover, &[("amount", amount)]))
    }

    pub fn benefit_loan(&self, amount: &str) -> String {
        capitalised(&fill(&self.benefit.loan, &[("amount", amount)]))
    }

    pub fn benefit_contribution(&self, low: &str, high: &str) -> String {
        capitalised(&fill(
            &self.benefit.contribution,
            &[("low", low), ("high", high)],
        ))
    }

    pub fn benefit_amounts(&self, a: &Amounts) -> Option<String> {
        let parts = self.amount_parts(a);
        (!parts.is_empty()).then(|| {
            fill(
                &self.benefit.amounts,
                &[("amounts", &parts.join(&self.list_separator))],
            )
        })
    }

    /// Each amount with its period ("₹600 a month").
    pub fn amount_parts(&self, a: &Amounts) -> Vec<String> {
        let b = &self.benefit;
        [
            (&a.monthly, &b.monthly),
            (&a.annual, &b.annual),
            (&a.one_time, &b.one_time),
        ]
        .into_iter()
        .filter_map(|(amount, template)| {
            amount
                .as_ref()
                .map(|amount| fill(template, &[("amount", amount)]))
        })
        .collect()
    }

    /// The rule's free-text benefit description, where the language can carry it as written
    /// (it is English prose: translating it would say what the rule does not).
    pub fn benefit_description(&self, description: &str) -> Option<String> {
        let template = self.benefit.description.as_ref()?;
        Some(fill(template, &[("description", description)]))
    }

    /// An operator (`gte`, `in`…) and its rendered value as a requirement ("at least 60").
    pub fn requirement(&self, operator: &str, required: &Shown) -> String {
        let template = |name: &str| self.requirement.get(name).map_or("{value}", String::as_str);
        match required {
            Shown::One(value) => {
                let name = match operator {
                    "neq" | "gt" | "gte" | "lt" | "lte" | "contains" | "not_contains" => operator,
                    _ => "eq",
                };
                fill(template(name), &[("value", value)])
            }
            // One allowed value is that value ("farmer", not "one of farmer").
            Shown::Many(items) if items.len() == 1 => {
                let name = if operator == "not_in" { "neq" } else { "eq" };
                fill(template(name), &[("value", &items[0])])
            }
            // Any one of them will do: the last two joined with "or".
            Shown::Many(items) if operator != "not_in" => {
                fill(template("in"), &[("values", &self.or_list(items))])
            }
            Shown::Many(items) => fill(
                template("not_in"),
                &[("values", &items.join(&self.list_separator))],
            ),
            Shown::Range(low, high) => fill(template("between"), &[("low", low), ("high", high)]),
        }
    }

    /// "a, b or c" in the language's separators.
    fn or_list(&self, items: &[String]) -> String {
        self.list(items, &self.or_separator)
    }

    /// Items joined with the list separator, the last two with `last` (the language's "and"
    /// or "or").
    pub(crate) fn list(&self, items: &[String], last: &str) -> String {
        match items.split_last() {
            Some((last_one, rest)) if !rest.is_empty() => {
                format!("{}{last}{last_one}", rest.join(&self.list_separator))
            }
            _ => items.join(""),
        }
    }

    /// How a citizen is asked for `field`: the file's question, else the catalogue's.
    pub(crate) fn question(&self, field: &FieldSpec) -> Option<String> {
        self.fields
            .get(&field.name)
            .and_then(|entry| entry.question.clone())
            .or_else(|| field.question.clone())
    }

    pub fn boolean(&self, value: bool) -> &str {
        if value { &self.yes } else { &self.no }
    }

    /// A number with a catalogue unit (`years`, `percent`, `hectares`).
    pub fn quantity(&self, number: &str, unit: &str) -> String {
        match self.units.get(unit) {
            Some(words) => {
                let template = match &words.one {
                    Some(one) if number == "1" => one,
                    _ => &words.other,
                };
                fill(template, &[("number", number)])
            }
            None => format!("{number} {unit}"),
        }
    }

    pub fn date(&self, date: Date) -> String {
        fill(
            &self.date,
            &[
                ("day", &date.day().to_string()),
                ("month", &self.months[usize::from(date.month()) - 1]),
                ("year", &date.year().to_string()),
            ],
        )
    }

    /// A benefit kind or payment mode (`monthly_pension`), as the file words it.
    pub fn code(&self, code: &str) -> String {
        self.codes
            .get(code)
            .cloned()
            .unwrap_or_else(|| code.replace('_', " "))
    }

    /// A coded value of `field` (`karnataka`), as the file words it; a file without words for
    /// the field (English) takes the catalogue's `value_words`.
    pub fn value(&self, field: &FieldSpec, code: &str) -> String {
        self.values
            .get(&field.name)
            .and_then(|words| words.get(code))
            .or_else(|| field.value_words.get(code))
            .cloned()
            .unwrap_or_else(|| code.replace('_', " "))
    }

    /// A yes/no value of `field` as its clause: the file's `when_yes` / `when_no`, or, for a
    /// field the file does not word (English), the catalogue's.
    pub fn clause(&self, field: &FieldSpec, value: bool) -> Option<String> {
        match self.fields.get(&field.name) {
            Some(entry) if value => entry.when_yes.clone(),
            Some(entry) => entry.when_no.clone(),
            None => field.when(value).map(str::to_string),
        }
    }

    /// A list `field` holding `item` (already worded) as its clause, where it has one.
    pub fn includes(&self, field: &FieldSpec, item: &str) -> Option<String> {
        let template = match self.fields.get(&field.name) {
            Some(entry) => entry.when_includes.as_deref(),
            None => field.when_includes.as_deref(),
        }?;
        Some(fill(template, &[("item", item)]))
    }

    /// "your age" / "आपकी आयु": the field's label with its possessive.
    fn yours(&self, field: &Field<'_>) -> String {
        match self.fields.get(field.name) {
            Some(entry) => entry.yours.clone(),
            None => fill(&self.field.yours, &[("label", field.label)]),
        }
    }

    /// "your age is 68 years" / "आपकी आयु 68 वर्ष है"; `None`: the value is not provided.
    pub(crate) fn stated(&self, field: &Field<'_>, actual: Option<&str>) -> String {
        if let (Some(clause), Some(_)) = (&field.clause, actual) {
            return clause.clone();
        }
        let entry = self.fields.get(field.name);
        let label = entry.map_or(field.label, |e| e.label.as_str());
        let yours = self.yours(field);
        let is = if entry.map_or(field.plural, |e| e.plural) {
            &self.field.is.many
        } else {
            &self.field.is.one
        };
        let template = match actual {
            Some(_) => &self.field.known,
            None => &self.field.unknown,
        };
        let stated = fill(
            template,
            &[
                ("yours", &yours),
                ("label", label),
                ("is", is),
                ("actual", actual.unwrap_or_default()),
            ],
        );
        if is.is_empty() {
            // A copula the language leaves out must not leave a double space behind.
            stated.split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            stated
        }
    }
}

pub(crate) fn capitalised(sentence: &str) -> String {
    let mut chars = sentence.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}
