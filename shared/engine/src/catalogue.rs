//! The field catalogue: which profile fields exist, their types, allowed values and units.
//!
//! The catalogue is data (`schemas/field_catalogue.json`); adding a field never needs code.

use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

use crate::error::EngineError;

/// The catalogue bundled with the engine, so that the embedded default needs no files.
pub const BUNDLED_CATALOGUE: &str = include_str!("../../../schemas/field_catalogue.json");

/// Index of a field in the catalogue: rules and profiles refer to fields by this id after loading.
pub type FieldId = usize;

/// The type of a profile field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    Integer,
    Number,
    Boolean,
    String,
    Date,
    /// A list of strings.
    List,
}

impl FieldType {
    pub fn name(self) -> &'static str {
        match self {
            FieldType::Integer => "integer",
            FieldType::Number => "number",
            FieldType::Boolean => "boolean",
            FieldType::String => "string",
            FieldType::Date => "date",
            FieldType::List => "list of strings",
        }
    }

    /// Whether values of this type are ordered (so `gt`, `between`… apply).
    pub fn is_ordered(self) -> bool {
        matches!(
            self,
            FieldType::Integer | FieldType::Number | FieldType::Date
        )
    }
}

/// The list field whose items are documents (verified by the identity service).
pub const DOCUMENTS: &str = "identity.verified_documents";

/// One field of the catalogue.
#[derive(Debug, Clone, Deserialize)]
pub struct FieldSpec {
    pub name: String,
    /// How the field is named to citizens ("annual household income").
    pub label: String,
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// Allowed values of a string field, or of a list field's items.
    #[serde(default)]
    pub values: Option<Vec<String>>,
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
    #[serde(default)]
    pub description: String,
    /// How a citizen is asked for the field when it is missing ("Tell us whether your household
    /// is on the BPL list"); every field has one.
    #[serde(default)]
    pub question: Option<String>,
    /// How values read to citizens where the code is not the words (`pan` → "PAN card");
    /// other codes read with spaces for underscores.
    #[serde(default)]
    pub value_words: BTreeMap<String, String>,
    /// A yes/no field's value as a whole clause about the citizen, for `true` and `false`
    /// ("your household owns a refrigerator" / "… does not own …"): texts say the fact, never
    /// "refrigerator: yes" (docs/languages.md, "Yes/no facts"). Every boolean field has both.
    #[serde(default)]
    pub when_yes: Option<String>,
    #[serde(default)]
    pub when_no: Option<String>,
    /// A list field holding one item, as a clause with `{item}` ("you already receive
    /// {item}").
    #[serde(default)]
    pub when_includes: Option<String>,
}

impl FieldSpec {
    pub fn allows_value(&self, value: &str) -> bool {
        self.values
            .as_ref()
            .is_none_or(|vs| vs.iter().any(|v| v == value))
    }

    /// The namespace (`identity` of `identity.age`).
    pub fn namespace(&self) -> &str {
        self.name.split_once('.').map_or("", |(ns, _)| ns)
    }

    /// A yes/no value as the field's clause (`when_yes` / `when_no`).
    pub fn when(&self, value: bool) -> Option<&str> {
        if value {
            self.when_yes.as_deref()
        } else {
            self.when_no.as_deref()
        }
    }

    /// The name used in gap descriptions and explanations.
    pub fn human_name(&self) -> &str {
        &self.label
    }

    pub fn is_money(&self) -> bool {
        self.unit.as_deref().is_some_and(|u| u.starts_with("INR"))
    }
}

#[derive(Deserialize)]
struct CatalogueFile {
    catalogue_version: u32,
    fields: Vec<FieldSpec>,
}

/// The loaded catalogue, with a name → id index.
#[derive(Debug, Clone)]
pub struct Catalogue {
    pub version: u32,
    fields: Vec<FieldSpec>,
    by_name: HashMap<String, FieldId>,
}

impl Catalogue {
    pub fn from_json(text: &str) -> Result<Self, EngineError> {
        let file: CatalogueFile = serde_json::from_str(text)
            .map_err(|e| EngineError::Catalogue(format!("not a valid catalogue: {e}")))?;
        let mut by_name = HashMap::new();
        for (id, field) in file.fields.iter().enumerate() {
            if field.name.split('.').count() != 2 {
                return Err(EngineError::Catalogue(format!(
                    "field {:?}: names are `namespace.field`",
                    field.name
                )));
            }
            if field.question.is_none() {
                return Err(EngineError::Catalogue(format!(
                    "field {:?}: every field needs a `question` (how a citizen is asked for it)",
                    field.name
                )));
            }
            if let Some(code) = field.value_words.keys().find(|c| !field.allows_value(c)) {
                return Err(EngineError::Catalogue(format!(
                    "field {:?}: `value_words` names {code:?}, which is not one of its values",
                    field.name
                )));
            }
            let boolean = field.field_type == FieldType::Boolean;
            if boolean != field.when_yes.is_some() || boolean != field.when_no.is_some() {
                return Err(EngineError::Catalogue(format!(
                    "field {:?}: a yes/no field, and only one, has `when_yes` and `when_no` (its value as a clause)",
                    field.name
                )));
            }
            if field
                .when_includes
                .as_ref()
                .is_some_and(|w| field.field_type != FieldType::List || !w.contains("{item}"))
            {
                return Err(EngineError::Catalogue(format!(
                    "field {:?}: `when_includes` is for list fields and names `{{item}}`",
                    field.name
                )));
            }
            if by_name.insert(field.name.clone(), id).is_some() {
                return Err(EngineError::Catalogue(format!(
                    "field {:?} is listed twice",
                    field.name
                )));
            }
        }
        Ok(Catalogue {
            version: file.catalogue_version,
            fields: file.fields,
            by_name,
        })
    }

    /// The catalogue compiled into the engine.
    pub fn bundled() -> Self {
        Self::from_json(BUNDLED_CATALOGUE).expect("the bundled catalogue is valid")
    }

    pub fn id(&self, name: &str) -> Option<FieldId> {
        self.by_name.get(name).copied()
    }

    pub fn field(&self, id: FieldId) -> &FieldSpec {
        &self.fields[id]
    }

    pub fn fields(&self) -> &[FieldSpec] {
        &self.fields
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// A JSON Schema (draft 2020-12) for profiles, derived from the catalogue.
    /// `schemas/profile.schema.json` is this output; a test keeps the two equal.
    pub fn profile_json_schema(&self) -> serde_json::Value {
        use serde_json::{Map, Value, json};
        let mut namespaces: Map<String, Value> = Map::new();
        for field in &self.fields {
            let (ns, name) = field.name.split_once('.').expect("checked on load");
            let mut schema = match field.field_type {
                FieldType::Integer => json!({"type": "integer"}),
                FieldType::Number => json!({"type": "number"}),
                FieldType::Boolean => json!({"type": "boolean"}),
                FieldType::String => json!({"type": "string", "maxLength": 256}),
                FieldType::Date => {
                    json!({"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"})
                }
                FieldType::List => {
                    json!({"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 256}})
                }
            };
            let obj = schema.as_object_mut().expect("literal object");
            if let Some(values) = &field.values {
                let target = if field.field_type == FieldType::List {
                    obj.get_mut("items")
                        .and_then(Value::as_object_mut)
                        .expect("literal object")
                } else {
                    &mut *obj
                };
                target.insert("enum".into(), json!(values));
            }
            if let Some(min) = field.min {
                obj.insert("minimum".into(), json!(min));
            }
            if let Some(max) = field.max {
                obj.insert("maximum".into(), json!(max));
            }
            obj.insert("description".into(), json!(field.description));
            // A null value means "not known", like an absent field.
            let nullable = json!({"anyOf": [schema, {"type": "null"}]});
            let entry = namespaces.entry(ns.to_string()).or_insert_with(
                || json!({"type": "object", "additionalProperties": false, "properties": {}}),
            );
            entry["properties"][name] = nullable;
        }
        let mut properties = Map::new();
        properties.insert(
            "user_id".into(),
            json!({"type": "string", "maxLength": 128}),
        );
        properties.extend(namespaces);
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://github.com/eligibility-engine/schemas/profile.schema.json",
            "title": "Citizen profile",
            "description": format!("Generated from field_catalogue.json (catalogue version {}) by `eligibility schema profile`.", self.version),
            "type": "object",
            "additionalProperties": false,
            "properties": properties
        })
    }
}
