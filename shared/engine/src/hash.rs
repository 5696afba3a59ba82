//! Content hashes: lower-case hex SHA-256 of the RFC 8785 (JCS) canonical JSON.

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

/// SHA-256 over the JCS form of `value`: the same document always gives the same hash,
/// whatever its key order or number spelling.
pub fn jcs_sha256(value: &Json) -> String {
    let mut canonical = Vec::with_capacity(1024);
    write_jcs(value, &mut canonical);
    hex(&Sha256::digest(&canonical))
}

/// Appends the JCS form of `value` (RFC 8785) to `out`: no whitespace, object keys sorted by
/// their UTF-16 code units, every number as ECMAScript writes a double, strings escaped as
/// `JSON.stringify` escapes them. Written out here rather than through a generic serializer,
/// which buffers every key and value apart: the evaluator hashes each profile update it reads
/// (docs/fleet.md "Where the time goes"). A property test holds it byte-equal to the
/// `serde_json_canonicalizer` crate.
pub fn write_jcs(value: &Json, out: &mut Vec<u8>) {
    match value {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Number(number) => {
            // Every JSON number is a double to JCS; a parsed `serde_json` number always has one.
            let double = number.as_f64().expect("a parsed JSON number is finite");
            out.extend_from_slice(ryu_js::Buffer::new().format_finite(double).as_bytes());
        }
        Json::String(text) => write_string(text, out),
        Json::Array(items) => {
            out.push(b'[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    out.push(b',');
                }
                write_jcs(item, out);
            }
            out.push(b']');
        }
        Json::Object(fields) => {
            let mut sorted: Vec<(&String, &Json)> = fields.iter().collect();
            sorted.sort_unstable_by(|(a, _), (b, _)| utf16_order(a, b));
            write_members(
                sorted.into_iter().map(|(k, v)| (k.as_str(), v)),
                out,
                write_jcs,
            );
        }
    }
}

/// `members` as one JSON object, in their order, without whitespace: each key as
/// [`write_string`] writes it, each value by `value`.
pub(crate) fn write_members<'a, V>(
    members: impl IntoIterator<Item = (&'a str, V)>,
    out: &mut Vec<u8>,
    mut value: impl FnMut(V, &mut Vec<u8>),
) {
    out.push(b'{');
    for (at, (key, item)) in members.into_iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        write_string(key, out);
        out.push(b':');
        value(item, out);
    }
    out.push(b'}');
}

/// The order of JCS keys: by their UTF-16 code units.
pub(crate) fn utf16_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// A JSON string as JCS writes it: `serde_json` escapes exactly the characters
/// `JSON.stringify` does (`"`, `\\`, and the controls below U+0020, in lower-case hex).
pub(crate) fn write_string(text: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, text).expect("writing to a Vec cannot fail");
}

/// SHA-256 of raw bytes, as hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex (hashes are formatted on every evaluation: no `fmt` machinery here).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn key_order_and_number_spelling_do_not_change_the_hash() {
        let a = json!({"b": 1, "a": [1.0, "x"], "c": {"z": 2e2, "y": null}});
        let b: serde_json::Value =
            serde_json::from_str(r#"{"c":{"y":null,"z":200},"a":[1,"x"],"b":1}"#).unwrap();
        assert_eq!(jcs_sha256(&a), jcs_sha256(&b));
    }

    /// Any JSON value: nested objects and arrays, keys and strings with controls, quotes,
    /// characters beyond the BMP and from U+E000 up (where UTF-16 and code point order differ),
    /// integers of every size and doubles.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let text = r#"[a-z\\"\u{0}-\u{1f}\u{7f}\u{e9}\u{2028}\u{e000}-\u{e00f}\u{ffff}\u{1f600}-\u{1f60f}]{0,6}"#;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            (-1_000_000i64..1_000_000, 0u32..8).prop_map(|(n, places)| serde_json::Value::from(
                n as f64 / 10f64.powi(places as i32)
            )),
            text.prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 64, 8, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                prop::collection::btree_map(text, inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_canonical_form_is_the_reference_crates(value in any_json()) {
            let mut ours = Vec::new();
            write_jcs(&value, &mut ours);
            let reference = serde_json_canonicalizer::to_vec(&value).unwrap();
            prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(reference).unwrap());
        }
    }

    #[test]
    fn known_vector() {
        // SHA-256 of the JCS text `{"a":1}`.
        assert_eq!(jcs_sha256(&json!({"a": 1})), sha256_hex(br#"{"a":1}"#));
        assert_eq!(
            sha256_hex(br#"{"a":1}"#),
            "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
        );
    }
}
