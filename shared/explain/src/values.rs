//! Field values as facts show them: rupees in Indian grouping, numbers with their unit, dates,
//! yes/no, lists, coded values in the language's words. Language words come from the
//! [`Words`]; digits never change here ([`crate::Language::write_digits`] may, afterwards).

use engine::Date;
use engine::catalogue::{FieldSpec, FieldType};
use engine::format::{indian_number, rupees};
use engine::value::{FieldValue, Scalar};
use serde_json::Value as Json;

use crate::phrasing::Shown;
use crate::sanitize::sanitize_profile_text;
use crate::words::Words;

/// The most characters of one profile string a fact quotes: facts reach LLM prompts.
pub(crate) const PROFILE_VALUE_MAX_CHARS: usize = 80;

/// Renders the values of one field (`spec` is `None` for a field the catalogue lacks).
pub(crate) struct Values<'a> {
    pub words: &'a Words,
    pub spec: Option<&'a FieldSpec>,
}

impl Values<'_> {
    /// A value as the profile holds it. Strings come from the citizen, so they are sanitised.
    pub fn actual(&self, value: &FieldValue) -> String {
        match value {
            FieldValue::Scalar(scalar) => self.scalar(scalar),
            FieldValue::List(items) if items.is_empty() => self.words.none.clone(),
            FieldValue::List(items) => items
                .iter()
                .map(|item| self.coded(item).unwrap_or_else(|| profile_text(item)))
                .collect::<Vec<_>>()
                .join(&self.words.list_separator),
        }
    }

    fn scalar(&self, scalar: &Scalar) -> String {
        match scalar {
            Scalar::Int(i) => self.number(*i as f64),
            Scalar::Num(n) => self.number(*n),
            Scalar::Bool(b) => self.words.boolean(*b).to_string(),
            Scalar::Str(s) => self.coded(s).unwrap_or_else(|| profile_text(s)),
            Scalar::Date(d) => self.words.date(*d),
        }
    }

    /// A rule's authored value for `operator`: a range for `between`, a set for a list.
    pub fn expected(&self, operator: &str, json: &Json) -> Shown {
        match json {
            Json::Array(items) if operator == "between" && items.len() == 2 => {
                Shown::Range(self.json(&items[0]), self.json(&items[1]))
            }
            Json::Array(items) => Shown::Many(items.iter().map(|v| self.json(v)).collect()),
            one => Shown::One(self.json(one)),
        }
    }

    /// One authored value (rule data, trusted: not sanitised).
    pub(crate) fn json(&self, json: &Json) -> String {
        let is_date = self
            .spec
            .is_some_and(|spec| spec.field_type == FieldType::Date);
        match json {
            Json::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |n| self.number(n)),
            Json::Bool(b) => self.words.boolean(*b).to_string(),
            Json::String(s) => match Date::parse(s).filter(|_| is_date) {
                Some(date) => self.words.date(date),
                None => self.coded(s).unwrap_or_else(|| s.replace('_', " ")),
            },
            other => other.to_string(),
        }
    }

    /// One of the field's coded values (`karnataka`), in the language's words; `None` for
    /// free text (a district) and for a field the catalogue lacks. A field without a list of
    /// values (the schemes a citizen receives) still words the codes it has words for.
    fn coded(&self, text: &str) -> Option<String> {
        let spec = self.spec?;
        let listed = spec.values.is_some() && spec.allows_value(text);
        let named = spec.value_words.contains_key(text)
            || self
                .words
                .values
                .get(&spec.name)
                .is_some_and(|words| words.contains_key(text));
        (listed || named).then(|| self.words.value(spec, text))
    }

    /// A number of this field: rupees for money, else Indian grouping and the field's unit.
    pub fn number(&self, value: f64) -> String {
        let spec = self.spec;
        if spec.is_some_and(FieldSpec::is_money) {
            return rupees(value);
        }
        // As the engine's gap descriptions show numbers, so the two agree digit for digit.
        let number = indian_number(value).trim_end_matches(".00").to_string();
        match spec.and_then(|s| s.unit.as_deref()) {
            Some(unit) => self.words.quantity(&number, unit),
            None => number,
        }
    }
}

/// A string the citizen gave, as a fact quotes it.
fn profile_text(text: &str) -> String {
    sanitize_profile_text(text, PROFILE_VALUE_MAX_CHARS).replace('_', " ")
}
