//! A YAML document read into JSON with its *expanded* size bounded (docs/semantics.md,
//! "Rules"). YAML aliases repeat what an anchor holds, so a 60 KB text can stand for hundreds of
//! millions of values; the parser bounds only how many alias jumps it makes, not what they
//! expand to. Here every value built is counted as it is built, and reading stops at
//! [`MAX_NODES`] values or [`MAX_TEXT_BYTES`] of keys and strings: the work a document costs is
//! bounded before any model is made of it.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The most values (scalars, lists and maps, each key counted) a document may expand to. A rule
/// of the corpus has a few hundred.
pub const MAX_NODES: usize = 20_000;
/// The most bytes of keys and strings a document may expand to (four times the largest text).
pub const MAX_TEXT_BYTES: usize = 256 * 1024;

/// `text` as JSON, or why not (a YAML error, or the bound it passed).
pub fn read_bounded(text: &str) -> Result<Value, String> {
    let budget = Budget {
        nodes: Cell::new(0),
        bytes: Cell::new(0),
    };
    Bounded(&budget)
        .deserialize(serde_yaml_ng::Deserializer::from_str(text))
        .map_err(|e| e.to_string())
}

struct Budget {
    nodes: Cell<usize>,
    bytes: Cell<usize>,
}

impl Budget {
    fn spend<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        self.nodes.set(self.nodes.get() + 1);
        self.bytes.set(self.bytes.get() + bytes);
        if self.nodes.get() > MAX_NODES {
            return Err(E::custom(format!(
                "the document expands to more than {MAX_NODES} values (YAML aliases?)"
            )));
        }
        if self.bytes.get() > MAX_TEXT_BYTES {
            return Err(E::custom(format!(
                "the document expands to more than {MAX_TEXT_BYTES} bytes of text (YAML aliases?)"
            )));
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
struct Bounded<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.spend(v.len())?;
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.0.spend(v.len())?;
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.0.spend(0)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.spend(0)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.spend(0)?;
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(self)? {
            let key = match key {
                Value::String(key) => key,
                other => other.to_string(),
            };
            let value = map.next_value_seed(self)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_as_serde_yaml_reads_it() {
        let text = "rule_id: r\nversion: 3\nratio: 0.5\nflag: true\nnothing: null\nlist: [a, 1]\nnested: {k: v}\n";
        let expected: Value = serde_yaml_ng::from_str(text).unwrap();
        assert_eq!(read_bounded(text).unwrap(), expected);
    }

    #[test]
    fn an_alias_bomb_stops_at_the_bound_before_it_expands() {
        // A list of 2,000 values repeated by 5,000 aliases: ten million values if expanded, in
        // under 40 KB, and few enough alias jumps for the parser's own limit to let it through.
        let items = vec!["x"; 2_000].join(", ");
        let aliases = vec!["*a"; 5_000].join(", ");
        let text = format!("a: &a [{items}]\nb: [{aliases}]\n");
        assert!(text.len() < 40_000, "{}", text.len());
        let started = std::time::Instant::now();
        let error = read_bounded(&text).unwrap_err();
        assert!(error.contains("more than 20000 values"), "{error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn long_strings_repeated_by_aliases_stop_at_the_text_bound() {
        let long = "y".repeat(1_000);
        let mut text = format!("s: &s {long}\nlist:\n");
        for _ in 0..300 {
            text.push_str("  - *s\n");
        }
        let error = read_bounded(&text).unwrap_err();
        assert!(error.contains("bytes of text"), "{error}");
    }
}
