//! Citizen profiles: parsed from JSON, validated against the catalogue, hashed.
//!
//! A profile whose value has the wrong type, or that carries a field the catalogue does not know,
//! is refused with every problem named; an absent (or null) field is *unknown*, which is not an error.

use std::borrow::Cow;

use serde_json::Value as Json;

use crate::catalogue::{Catalogue, FieldId, FieldType};
use crate::date::Date;
use crate::error::{Problem, ValidationReport};
use crate::hash::jcs_sha256;
use crate::value::{FieldValue, Scalar};

/// The longest `user_id` a profile may carry, in bytes.
pub const USER_ID_MAX_BYTES: usize = 128;

/// A validated profile: one optional value per catalogue field.
#[derive(Debug, Clone)]
pub struct Profile {
    pub user_id: Option<String>,
    values: Vec<Option<FieldValue>>,
    /// SHA-256 of the JCS canonical JSON of the profile as given.
    pub input_snapshot_hash: String,
    /// Where the age on a date is read from, when the catalogue has both fields.
    age_fields: Option<AgeFields>,
}

/// `identity.age` and `identity.date_of_birth` (docs/semantics.md, "Age on a date").
#[derive(Debug, Clone, Copy)]
struct AgeFields {
    age: FieldId,
    date_of_birth: FieldId,
}

impl AgeFields {
    fn of(catalogue: &Catalogue) -> Option<AgeFields> {
        Some(AgeFields {
            age: catalogue.id("identity.age")?,
            date_of_birth: catalogue.id("identity.date_of_birth")?,
        })
    }
}

impl Profile {
    /// Parses and validates a profile; `source` names it in problems (a file path, a topic offset).
    pub fn from_json(
        catalogue: &Catalogue,
        json: &Json,
        source: &str,
    ) -> Result<Profile, ValidationReport> {
        let mut problems = Vec::new();
        let mut problem = |path: String, reason: String, id: Option<String>| {
            problems.push(Problem {
                source: source.to_string(),
                id,
                path,
                reason,
            });
        };
        let Some(object) = json.as_object() else {
            problem(String::new(), "a profile is a JSON object".into(), None);
            return Err(ValidationReport { problems });
        };
        let user_id = match object.get("user_id") {
            None | Some(Json::Null) => None,
            Some(Json::String(s)) if s.len() <= USER_ID_MAX_BYTES => Some(s.clone()),
            Some(_) => {
                problem(
                    "/user_id".into(),
                    "user_id must be a string of at most 128 characters".into(),
                    None,
                );
                None
            }
        };
        let mut values = vec![None; catalogue.len()];
        // `namespace.name`, built in one buffer: a profile has dozens of fields, and this runs
        // on every update the evaluator reads.
        let mut full = String::new();
        for (namespace, fields) in object {
            if namespace == "user_id" {
                continue;
            }
            let Some(fields) = fields.as_object() else {
                problem(
                    format!("/{namespace}"),
                    format!("`{namespace}` must be an object of fields"),
                    user_id.clone(),
                );
                continue;
            };
            for (name, value) in fields {
                field_name(&mut full, namespace, name);
                let path = || format!("/{namespace}/{name}");
                let Some(id) = catalogue.id(&full) else {
                    problem(
                        path(),
                        format!("unknown field `{full}`: not in the field catalogue"),
                        user_id.clone(),
                    );
                    continue;
                };
                if value.is_null() {
                    continue;
                }
                match parse_field(catalogue, id, value) {
                    Ok(v) => values[id] = Some(v),
                    Err(reason) => problem(path(), format!("`{full}`: {reason}"), user_id.clone()),
                }
            }
        }
        if !problems.is_empty() {
            return Err(ValidationReport { problems });
        }
        Ok(Profile::new(catalogue, user_id, values, jcs_sha256(json)))
    }

    /// A profile of validated `values` whose input hashes to `input_snapshot_hash`.
    pub(crate) fn new(
        catalogue: &Catalogue,
        user_id: Option<String>,
        values: Vec<Option<FieldValue>>,
        input_snapshot_hash: String,
    ) -> Profile {
        Profile {
            user_id,
            values,
            input_snapshot_hash,
            age_fields: AgeFields::of(catalogue),
        }
    }

    /// Builds a profile from values directly (generators and tests); hashes the JSON it implies.
    pub fn from_values(
        catalogue: &Catalogue,
        user_id: Option<String>,
        values: Vec<Option<FieldValue>>,
    ) -> Profile {
        assert_eq!(
            values.len(),
            catalogue.len(),
            "one slot per catalogue field"
        );
        let mut profile = Profile {
            user_id,
            values,
            input_snapshot_hash: String::new(),
            age_fields: AgeFields::of(catalogue),
        };
        profile.input_snapshot_hash = jcs_sha256(&profile.to_json(catalogue));
        profile
    }

    pub fn get(&self, field: FieldId) -> Option<&FieldValue> {
        self.values.get(field).and_then(Option::as_ref)
    }

    /// The profile as it reads on `as_of` (docs/semantics.md, "Age on a date"): with a date of
    /// birth, `identity.age` is the age on that day in whole years, whatever age was given
    /// (unknown before the date of birth); without one, the age given stands. Every service
    /// evaluates `profile.on(as_of)`, so that a birthday changes verdicts with no new data.
    /// Borrowed when nothing differs; the input hash stays that of the profile as given.
    pub fn on(&self, as_of: Date) -> Cow<'_, Profile> {
        let Some(fields) = self.age_fields else {
            return Cow::Borrowed(self);
        };
        let Some(FieldValue::Scalar(Scalar::Date(born))) = self.get(fields.date_of_birth) else {
            return Cow::Borrowed(self);
        };
        let age = born
            .whole_years_to(as_of)
            .map(|years| FieldValue::Scalar(Scalar::Int(years)));
        if self.get(fields.age) == age.as_ref() {
            return Cow::Borrowed(self);
        }
        let mut aged = self.clone();
        aged.values[fields.age] = age;
        Cow::Owned(aged)
    }

    /// [`Profile::on`], keeping `self` where nothing differs.
    pub fn into_on(self, as_of: Date) -> Profile {
        let aged = match self.on(as_of) {
            Cow::Owned(aged) => Some(aged),
            Cow::Borrowed(_) => None,
        };
        aged.unwrap_or(self)
    }

    /// The date of birth, when given.
    pub fn date_of_birth(&self) -> Option<Date> {
        match self.get(self.age_fields?.date_of_birth)? {
            FieldValue::Scalar(Scalar::Date(born)) => Some(*born),
            _ => None,
        }
    }

    pub fn values(&self) -> &[Option<FieldValue>] {
        &self.values
    }

    /// The profile as namespaced JSON (known fields only).
    pub fn to_json(&self, catalogue: &Catalogue) -> Json {
        let mut root = serde_json::Map::new();
        if let Some(id) = &self.user_id {
            root.insert("user_id".into(), Json::String(id.clone()));
        }
        for (id, value) in self.values.iter().enumerate() {
            if let Some(value) = value {
                let (ns, name) = catalogue
                    .field(id)
                    .name
                    .split_once('.')
                    .expect("catalogue names are namespaced");
                let entry = root
                    .entry(ns.to_string())
                    .or_insert_with(|| Json::Object(Default::default()));
                entry
                    .as_object_mut()
                    .expect("namespaces are objects")
                    .insert(name.to_string(), value.to_json());
            }
        }
        Json::Object(root)
    }

    /// The fields whose values differ between two profiles (the diff that drives incremental work).
    pub fn changed_fields(&self, other: &Profile) -> Vec<FieldId> {
        (0..self.values.len().max(other.values.len()))
            .filter(|&id| self.get(id) != other.get(id))
            .collect()
    }
}

/// `namespace.name` in `full`: one buffer for every field of a profile (dozens, on every
/// update the evaluator reads).
pub(crate) fn field_name(full: &mut String, namespace: &str, name: &str) {
    full.clear();
    full.push_str(namespace);
    full.push('.');
    full.push_str(name);
}

pub(crate) fn parse_field(
    catalogue: &Catalogue,
    id: FieldId,
    value: &Json,
) -> Result<FieldValue, String> {
    let spec = catalogue.field(id);
    let wrong = || {
        format!(
            "expected {}, found {}",
            spec.field_type.name(),
            json_kind(value)
        )
    };
    if spec.field_type == FieldType::List {
        let items = value.as_array().ok_or_else(wrong)?;
        if items.len() > 100 {
            return Err(format!(
                "a list holds at most 100 items, found {}",
                items.len()
            ));
        }
        let mut list = Vec::with_capacity(items.len());
        for item in items {
            let item = item
                .as_str()
                .ok_or_else(|| format!("list items are strings, found {}", json_kind(item)))?;
            check_string(spec, item)?;
            list.push(item.to_string());
        }
        return Ok(FieldValue::List(list));
    }
    let scalar = Scalar::from_json(spec.field_type, value).ok_or_else(|| {
        match (spec.field_type, value) {
            (FieldType::Date, Json::String(s)) => {
                format!("expected a date YYYY-MM-DD, found {s:?}")
            }
            _ => wrong(),
        }
    })?;
    match &scalar {
        Scalar::Str(s) => check_string(spec, s)?,
        other => {
            if let Some(x) = other.as_f64().filter(|_| !matches!(other, Scalar::Date(_)))
                && (spec.min.is_some_and(|min| x < min) || spec.max.is_some_and(|max| x > max))
            {
                return Err(format!(
                    "{x} is outside the allowed range [{}, {}]",
                    spec.min.map_or("-inf".into(), |m| m.to_string()),
                    spec.max.map_or("inf".into(), |m| m.to_string())
                ));
            }
        }
    }
    Ok(FieldValue::Scalar(scalar))
}

fn check_string(spec: &crate::catalogue::FieldSpec, s: &str) -> Result<(), String> {
    if s.chars().count() > 256 {
        return Err("strings are at most 256 characters".into());
    }
    if !spec.allows_value(s) {
        let allowed = spec.values.as_deref().unwrap_or_default().join(", ");
        return Err(format!(
            "{s:?} is not an allowed value (allowed: {allowed})"
        ));
    }
    Ok(())
}

/// How a JSON value reads in an error message.
pub fn json_kind(value: &Json) -> String {
    match value {
        Json::Null => "null".into(),
        Json::Bool(b) => format!("boolean {b}"),
        Json::Number(n) => format!("number {n}"),
        Json::String(s) => format!("string {s:?}"),
        Json::Array(_) => "a list".into(),
        Json::Object(_) => "an object".into(),
    }
}
