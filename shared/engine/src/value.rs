//! Typed values: what a profile field holds and what a rule compares it with.

use serde_json::Value as Json;
use std::cmp::Ordering;

use crate::catalogue::FieldType;
use crate::date::Date;

/// One scalar value, typed by the catalogue field it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Int(i64),
    Num(f64),
    Bool(bool),
    Str(String),
    Date(Date),
}

impl Scalar {
    /// Reads a JSON value as a scalar of `field_type`; `None` when the JSON has the wrong type.
    pub fn from_json(field_type: FieldType, json: &Json) -> Option<Scalar> {
        match field_type {
            FieldType::Integer => json.as_i64().map(Scalar::Int),
            FieldType::Number => json.as_f64().map(Scalar::Num),
            FieldType::Boolean => json.as_bool().map(Scalar::Bool),
            FieldType::String | FieldType::List => {
                json.as_str().map(|s| Scalar::Str(s.to_string()))
            }
            FieldType::Date => json.as_str().and_then(Date::parse).map(Scalar::Date),
        }
    }

    pub fn to_json(&self) -> Json {
        match self {
            Scalar::Int(i) => Json::from(*i),
            Scalar::Num(n) => number_json(*n),
            Scalar::Bool(b) => Json::Bool(*b),
            Scalar::Str(s) => Json::String(s.clone()),
            Scalar::Date(d) => Json::String(d.to_string()),
        }
    }

    /// The value on a number line (integers, numbers, dates as day numbers); `None` otherwise.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Num(n) => Some(*n),
            Scalar::Date(d) => Some(d.day_number() as f64),
            _ => None,
        }
    }

    /// Order of two values of the same ordered type.
    pub fn compare(&self, other: &Scalar) -> Option<Ordering> {
        match (self, other) {
            (Scalar::Int(a), Scalar::Int(b)) => Some(a.cmp(b)),
            (Scalar::Num(a), Scalar::Num(b)) => a.partial_cmp(b),
            (Scalar::Date(a), Scalar::Date(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// JSON for a float: integral values print without a fraction (150000, not 150000.0).
pub fn number_json(n: f64) -> Json {
    serde_json::to_value(Number(n)).expect("a number always converts to JSON")
}

/// A computed amount (a headroom, a distance to a threshold), serialized as a JSON number the
/// way [`number_json`] builds one, without building a JSON value on every evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number(pub f64);

impl serde::Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let n = self.0;
        if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
            serializer.serialize_i64(n as i64)
        } else if n.is_finite() {
            serializer.serialize_f64(n)
        } else {
            serializer.serialize_unit()
        }
    }
}

/// What a profile field holds.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    Scalar(Scalar),
    List(Vec<String>),
}

impl FieldValue {
    pub fn to_json(&self) -> Json {
        match self {
            FieldValue::Scalar(s) => s.to_json(),
            FieldValue::List(items) => Json::from(items.clone()),
        }
    }

    pub fn scalar(&self) -> Option<&Scalar> {
        match self {
            FieldValue::Scalar(s) => Some(s),
            FieldValue::List(_) => None,
        }
    }

    pub fn list(&self) -> Option<&[String]> {
        match self {
            FieldValue::List(items) => Some(items),
            FieldValue::Scalar(_) => None,
        }
    }
}

/// JSON as [`FieldValue::to_json`] writes it, without building a JSON tree (traces borrow values).
impl serde::Serialize for FieldValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            FieldValue::Scalar(Scalar::Int(i)) => serializer.serialize_i64(*i),
            FieldValue::Scalar(Scalar::Num(n))
                if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 =>
            {
                serializer.serialize_i64(*n as i64)
            }
            FieldValue::Scalar(Scalar::Num(n)) => serializer.serialize_f64(*n),
            FieldValue::Scalar(Scalar::Bool(b)) => serializer.serialize_bool(*b),
            FieldValue::Scalar(Scalar::Str(s)) => serializer.serialize_str(s),
            FieldValue::Scalar(Scalar::Date(d)) => serializer.collect_str(d),
            FieldValue::List(items) => serializer.collect_seq(items),
        }
    }
}
