//! Content hashes: lower-case hex SHA-256 of the RFC 8785 (JCS) canonical JSON.

use sha2::{Digest, Sha256};

/// SHA-256 over the JCS form of `value`: the same document always gives the same hash,
/// whatever its key order or number spelling.
pub fn jcs_sha256(value: &serde_json::Value) -> String {
    let canonical =
        serde_json_canonicalizer::to_vec(value).expect("a serde_json value always canonicalises");
    hex(&Sha256::digest(&canonical))
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
    use serde_json::json;

    #[test]
    fn key_order_and_number_spelling_do_not_change_the_hash() {
        let a = json!({"b": 1, "a": [1.0, "x"], "c": {"z": 2e2, "y": null}});
        let b: serde_json::Value =
            serde_json::from_str(r#"{"c":{"y":null,"z":200},"a":[1,"x"],"b":1}"#).unwrap();
        assert_eq!(jcs_sha256(&a), jcs_sha256(&b));
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
