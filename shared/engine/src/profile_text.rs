//! A profile's JSON text read in one pass: the validated profile (with the SHA-256 of its
//! canonical form) and the compact text to store, the same as parsing the text into a
//! `serde_json::Value`, [`Profile::from_json`] and `serde_json::to_string` give, byte for byte
//! (a property test below holds them equal). The evaluator reads every profile update, and
//! every stored profile it loads, this way (docs/fleet.md "Where the time goes"): keys are
//! borrowed from the text, a namespace is a short list instead of a hash map, and no tree is
//! built only to be walked three times.
//!
//! Only the usual shape takes the short way: an object of `user_id` (a string of at most
//! [`USER_ID_MAX_BYTES`], or null) and namespaces that are objects of known, valid fields, no
//! key twice in one object. Anything else is read the general way, so that a bad profile is
//! refused with the same words as ever, and a repeated key keeps `serde_json`'s meaning (the
//! last value wins).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value as Json;

use crate::catalogue::Catalogue;
use crate::error::ValidationReport;
use crate::hash::{sha256_hex, utf16_order, write_jcs, write_members, write_string};
use crate::profile::{Profile, USER_ID_MAX_BYTES, field_name, parse_field};

/// Why a profile's text was refused.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The text is not JSON.
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    /// JSON, but not a valid profile.
    #[error("{0}")]
    Invalid(ValidationReport),
}

/// A profile and its compact text (numbers and escapes as `serde_json` writes them, keys in
/// the order given).
pub struct ReadProfile {
    pub profile: Profile,
    pub text: String,
}

impl ReadProfile {
    /// Reads `text`; `source` names it in problems (a topic offset, a file path).
    pub fn read(catalogue: &Catalogue, text: &str, source: &str) -> Result<ReadProfile, ReadError> {
        let (profile, compact) = read(catalogue, text, source, Keep::Text)?;
        Ok(ReadProfile {
            profile,
            text: compact.expect("asked for"),
        })
    }

    /// The profile alone, for a text that is kept as it is (a stored profile).
    pub fn profile(catalogue: &Catalogue, text: &str, source: &str) -> Result<Profile, ReadError> {
        read(catalogue, text, source, Keep::Profile).map(|(profile, _)| profile)
    }
}

/// Whether the compact text is written.
#[derive(Clone, Copy, PartialEq)]
enum Keep {
    Text,
    Profile,
}

fn read(
    catalogue: &Catalogue,
    text: &str,
    source: &str,
    keep: Keep,
) -> Result<(Profile, Option<String>), ReadError> {
    if let Some(read) = read_usual(catalogue, text, keep) {
        return Ok(read);
    }
    let json: Json = serde_json::from_str(text).map_err(ReadError::NotJson)?;
    let profile = Profile::from_json(catalogue, &json, source).map_err(ReadError::Invalid)?;
    let compact =
        (keep == Keep::Text).then(|| serde_json::to_string(&json).expect("JSON serialises"));
    Ok((profile, compact))
}

/// The short way; `None` for anything outside the usual shape.
fn read_usual(catalogue: &Catalogue, text: &str, keep: Keep) -> Option<(Profile, Option<String>)> {
    let Document(mut entries) = serde_json::from_str(text).ok()?;
    let mut user_id = None;
    let mut values = vec![None; catalogue.len()];
    let mut full = String::new();
    for (key, entry) in &entries {
        match (key.as_ref(), entry) {
            ("user_id", Entry::Text(id)) => {
                user_id = match id {
                    Some(id) if id.len() <= USER_ID_MAX_BYTES => Some(id.to_string()),
                    Some(_) => return None,
                    None => None,
                }
            }
            ("user_id", Entry::Fields(_)) | (_, Entry::Text(_)) => return None,
            (namespace, Entry::Fields(fields)) => {
                for (name, value) in fields {
                    field_name(&mut full, namespace, name);
                    let id = catalogue.id(&full)?;
                    if !value.is_null() {
                        values[id] = Some(parse_field(catalogue, id, value).ok()?);
                    }
                }
            }
        }
    }
    let compact = (keep == Keep::Text).then(|| {
        let mut out = Vec::with_capacity(text.len());
        write_object(&entries, &mut out, |value, out| {
            serde_json::to_writer(out, value).expect("writing to a Vec cannot fail")
        });
        String::from_utf8(out).expect("serde_json writes UTF-8")
    });
    // The canonical form sorts every object's keys; a key met twice is seen here.
    if !sorted_once(&mut entries) {
        return None;
    }
    for (_, entry) in &mut entries {
        if let Entry::Fields(fields) = entry
            && !sorted_once(fields)
        {
            return None;
        }
    }
    let mut canonical = Vec::with_capacity(text.len());
    write_object(&entries, &mut canonical, write_jcs);
    let profile = Profile::new(catalogue, user_id, values, sha256_hex(&canonical));
    Some((profile, compact))
}

/// Sorts `members` by their keys as RFC 8785 orders them; false if a key is there twice.
fn sorted_once<V>(members: &mut [(Key<'_>, V)]) -> bool {
    members.sort_unstable_by(|(a, _), (b, _)| utf16_order(a, b));
    !members.windows(2).any(|w| w[0].0 == w[1].0)
}

/// `entries` as one JSON object, without whitespace and in their order: keys and texts as
/// `serde_json` (and RFC 8785) escape them, each field's value by `value`.
fn write_object(
    entries: &[(Key<'_>, Entry<'_>)],
    out: &mut Vec<u8>,
    value: fn(&Json, &mut Vec<u8>),
) {
    let members = entries.iter().map(|(key, entry)| (key.as_ref(), entry));
    write_members(members, out, |entry, out| match entry {
        Entry::Text(Some(id)) => write_string(id, out),
        Entry::Text(None) => out.extend_from_slice(b"null"),
        Entry::Fields(fields) => {
            let fields = fields.iter().map(|(name, field)| (name.as_ref(), field));
            write_members(fields, out, value)
        }
    });
}

/// An object key or a text, borrowed from the JSON unless it holds an escape.
type Key<'a> = Cow<'a, str>;

/// A top-level value of the usual shape: text or null (`user_id`), or a namespace's fields.
enum Entry<'a> {
    Text(Option<Key<'a>>),
    Fields(Vec<(Key<'a>, Json)>),
}

/// The top-level object, its entries in the order given.
struct Document<'a>(Vec<(Key<'a>, Entry<'a>)>);

impl<'de> Deserialize<'de> for Document<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Document<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                members(map, EntrySeed).map(Document)
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// An object's members in the order given, each value read by `seed`.
fn members<'de, A: MapAccess<'de>, S: DeserializeSeed<'de> + Copy>(
    mut map: A,
    seed: S,
) -> Result<Vec<(Key<'de>, S::Value)>, A::Error> {
    let mut members = Vec::new();
    while let Some(KeySeed(key)) = map.next_key()? {
        members.push((key, map.next_value_seed(seed)?));
    }
    Ok(members)
}

/// Reads a key, borrowing it when the text allows.
struct KeySeed<'a>(Key<'a>);

impl<'de> Deserialize<'de> for KeySeed<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(Text).map(KeySeed)
    }
}

/// A string, borrowed when the text allows. Anything else is an error here (and the text is
/// read the general way).
struct Text;

impl<'de> Visitor<'de> for Text {
    type Value = Key<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(text))
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text.to_string()))
    }
}

/// A top-level value: an object of fields, a string or null.
#[derive(Clone, Copy)]
struct EntrySeed;

impl<'de> DeserializeSeed<'de> for EntrySeed {
    type Value = Entry<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EntrySeed {
    type Value = Entry<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object, a string or null")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        members(map, PhantomData::<Json>).map(Entry::Fields)
    }
    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Text.visit_borrowed_str(text).map(|t| Entry::Text(Some(t)))
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Text.visit_str(text).map(|t| Entry::Text(Some(t)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Entry::Text(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::LazyLock;

    static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(Catalogue::bundled);

    /// The general way, as the evaluator read every update before this module.
    fn general(text: &str) -> Result<(Profile, String), String> {
        let json: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let profile = Profile::from_json(&CATALOGUE, &json, "t").map_err(|r| r.to_string())?;
        Ok((profile, json.to_string()))
    }

    fn ours(text: &str) -> Result<(Profile, String), String> {
        let alone = ReadProfile::profile(&CATALOGUE, text, "t").map_err(|e| e.to_string());
        let read = ReadProfile::read(&CATALOGUE, text, "t").map_err(|e| e.to_string());
        // The profile alone is the profile read with its text.
        assert!(same(
            &alone.map(|p| (p, String::new())),
            &read
                .as_ref()
                .map(|r| (r.profile.clone(), String::new()))
                .map_err(String::clone)
        ));
        read.map(|r| (r.profile, r.text))
    }

    /// Equal results: values compared as written out, so that `-0.0` and `0.0` differ.
    fn same(a: &Result<(Profile, String), String>, b: &Result<(Profile, String), String>) -> bool {
        match (a, b) {
            (Ok((a, a_text)), Ok((b, b_text))) => {
                a_text == b_text
                    && a.user_id == b.user_id
                    && format!("{:?}", a.values()) == format!("{:?}", b.values())
                    && a.input_snapshot_hash == b.input_snapshot_hash
            }
            (Err(a), Err(b)) => a == b,
            _ => false,
        }
    }

    #[test]
    fn a_synthetic_citizen_reads_the_short_way_as_the_general_way_reads_it() {
        let text = r#"{"user_id":"usr_00000000","identity":{"age":51,"gender":"female","social_category":"obc"},"demographics":{"state":"uttar_pradesh","urban_rural":"rural"},"economic":{"annual_income":176000.0,"bpl_status":false,"land_holding":1.6,"occupation":"street_vendor","is_income_tax_payer":false,"is_government_employee":false},"family":{"family_size":3},"eligibility":{"active_schemes":[]}}"#;
        let (short, compact) = read_usual(&CATALOGUE, text, Keep::Text).expect("the usual shape");
        let (profile, stored) = general(text).unwrap();
        assert_eq!(compact.as_deref(), Some(stored.as_str()));
        assert_eq!(stored, text);
        assert_eq!(short.values(), profile.values());
        assert_eq!(short.input_snapshot_hash, profile.input_snapshot_hash);
        assert_eq!(short.user_id.as_deref(), Some("usr_00000000"));
    }

    #[test]
    fn a_repeated_key_means_what_it_means_to_serde_json() {
        for text in [
            r#"{"identity":{"age":30,"age":40}}"#,
            r#"{"identity":{"age":30},"identity":{"gender":"male"}}"#,
            r#"{"user_id":"a","user_id":"b"}"#,
            r#"{"identity":{"age":30,"\u0061ge":40}}"#,
        ] {
            assert!(read_usual(&CATALOGUE, text, Keep::Text).is_none(), "{text}");
            assert!(same(&ours(text), &general(text)), "{text}");
        }
        // The last value, in the first one's place.
        let (profile, stored) =
            ours(r#"{"identity":{"age":30,"gender":"male","age":40}}"#).unwrap();
        assert_eq!(stored, r#"{"identity":{"age":40,"gender":"male"}}"#);
        let age = CATALOGUE.id("identity.age").unwrap();
        assert_eq!(
            profile.get(age),
            Some(&crate::value::FieldValue::Scalar(
                crate::value::Scalar::Int(40)
            ))
        );
    }

    /// An object key as written: plain, or with its first letter escaped.
    fn key(name: &'static str) -> impl Strategy<Value = String> {
        any::<bool>().prop_map(move |escaped| {
            if escaped {
                format!("\"\\u{:04x}{}\"", u32::from(name.as_bytes()[0]), &name[1..])
            } else {
                format!("\"{name}\"")
            }
        })
    }

    /// Ten times a literal.
    macro_rules! ten {
        ($s:expr) => {
            concat!($s, $s, $s, $s, $s, $s, $s, $s, $s, $s)
        };
    }

    /// A text of 257 characters and a list of 101 items: each one over its limit.
    const LONG_TEXT: &str = concat!(
        "\"",
        ten!(ten!("a")),
        ten!(ten!("a")),
        ten!("aaaaa"),
        "aaaaaaa",
        "\""
    );
    const LONG_LIST: &str = concat!("[", ten!(ten!("\"pan\",")), "\"pan\"]");

    /// Whitespace between tokens.
    fn gap() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["", "", " ", "\n  ", "\t"])
    }

    /// A field's name and values written valid, invalid, and either (the catalogue decides).
    type Spellings = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    );

    /// A field of one namespace: its name, its text (name and value, the name maybe escaped),
    /// and whether the value is valid (`None`: unknown to the test, the catalogue decides).
    fn field(namespace: usize) -> impl Strategy<Value = (&'static str, String, Option<bool>)> {
        #[rustfmt::skip]
        let table: [&[Spellings]; 3] = [
            &[
                ("age", &["51", "0", "150", "null"], &["151", "-1", "\"51\"", "true", "1e400", "[]", "18446744073709551616"], &["51.0", "5.1e1", "-0", "5.1E+1"]),
                ("social_category", &["\"obc\"", "\"o\\u0062c\"", "\"general\""], &["\"OBC\"", "1", "\"\"", LONG_TEXT], &[]),
                ("verified_documents", &["[]", "[\"aadhaar\"]", "[ \"aadhaar\" ,\"pan\" ]"], &["[\"passport_x\"]", "\"aadhaar\"", "[1]", "{}", LONG_LIST], &[]),
                ("date_of_birth", &["\"1975-02-15\""], &["\"1975-02-30\"", "\"15/02/1975\""], &[]),
                ("shoe_size", &[], &["42"], &[]),
            ],
            &[
                ("annual_income", &["176000.0", "176000", "1.76e5", "0", "250000.5", "1E2", "-0.0", "1e-20000", "2.5e-3", "17600000e-2"], &["-5", "1e10", "\"1000\"", "18446744073709551616"], &["176000.00000000001", "-1e-300"]),
                ("bpl_status", &["true", "false", "null"], &["1", "\"yes\""], &[]),
            ],
            &[
                ("state", &["\"kerala\"", "\"uttar_pradesh\"", "\"ut\\u0074ar_pradesh\""], &["\"atlantis\"", "\"k\\u0000\""], &[]),
            ],
        ];
        let fields = table[namespace];
        prop::sample::select((0..fields.len()).collect::<Vec<_>>()).prop_flat_map(move |at| {
            let (name, valid, invalid, unsure) = fields[at];
            let mut values: Vec<(&str, Option<bool>)> = Vec::new();
            values.extend(valid.iter().map(|v| (*v, Some(true))));
            values.extend(invalid.iter().map(|v| (*v, Some(false))));
            values.extend(unsure.iter().map(|v| (*v, None)));
            (key(name), gap(), prop::sample::select(values)).prop_map(
                move |(written, gap, (value, valid))| {
                    (name, format!("{written}{gap}:{gap}{value}"), valid)
                },
            )
        })
    }

    const NAMESPACES: [&str; 3] = ["identity", "economic", "demographics"];

    /// A namespace: its index, its text (an object of fields, a name maybe repeated, or
    /// something else), and whether it is of the usual shape (`None`: the catalogue decides).
    fn namespace() -> impl Strategy<Value = (usize, String, Option<bool>)> {
        (0..NAMESPACES.len()).prop_flat_map(|at| {
            let fields = prop::collection::vec(field(at), 0..5);
            let value = prop_oneof![
                8 => (fields, gap()).prop_map(|(fields, gap)| {
                    let mut valid = fields.iter().try_fold(true, |all, (_, _, v)| v.map(|v| all && v));
                    let mut names: Vec<&str> = fields.iter().map(|(name, _, _)| *name).collect();
                    names.sort_unstable();
                    if names.windows(2).any(|w| w[0] == w[1]) {
                        valid = Some(false);
                    }
                    let text = fields.iter().map(|(_, f, _)| f.as_str()).collect::<Vec<_>>();
                    (format!("{{{gap}{}{gap}}}", text.join(&format!("{gap},"))), valid)
                }),
                1 => prop::sample::select(vec!["5", "\"identity\"", "[]", "null"])
                    .prop_map(|v| (v.to_string(), Some(false))),
            ];
            (key(NAMESPACES[at]), gap(), value).prop_map(move |(name, gap, (value, valid))| {
                (at, format!("{name}{gap}:{value}"), valid)
            })
        })
    }

    /// A profile's text: `user_id` (maybe, anywhere, maybe twice, its key maybe escaped),
    /// namespaces (maybe repeated), empty objects under names outside the catalogue (whose
    /// order differs between UTF-8 and UTF-16), and now and then a text that is not one object.
    fn document() -> impl Strategy<Value = (String, Option<bool>)> {
        let id = prop::sample::select(vec![
            ("\"usr_1\"".to_string(), Some(true)),
            ("null".to_string(), Some(true)),
            ("\"\\u00e9t\\u00e9\"".to_string(), Some(true)),
            ("\"a\\\"b\\n\\u0001\"".to_string(), Some(true)),
            (format!("\"{}\"", "a".repeat(128)), Some(true)),
            (format!("\"{}\"", "é".repeat(64)), Some(true)),
            (format!("\"{}\"", "a".repeat(129)), Some(false)),
            (format!("\"{}\"", "é".repeat(65)), Some(false)),
            ("5".to_string(), Some(false)),
            ("{}".to_string(), Some(false)),
        ]);
        let user_id = (key("user_id"), gap(), id)
            .prop_map(|(key, gap, (id, ok))| (format!("{key}{gap}:{gap}{id}"), ok));
        let elsewhere = prop::sample::select(vec![
            "\"x\":{}",
            "\"\\u00e9\":{}",
            "\"\\ue000\":{}",
            "\"\\ud83d\\ude00\":{}",
            "\"\":{}",
        ]);
        let object = (
            prop::collection::vec(user_id, 0..3),
            prop::collection::vec(namespace(), 0..4),
            prop::collection::vec(elsewhere, 0..3),
            any::<prop::sample::Index>(),
            gap(),
        )
            .prop_map(|(ids, namespaces, elsewhere, at, gap)| {
                let mut valid = Some(ids.len() < 2 && elsewhere.len() < 2);
                let mut entries = Vec::new();
                let mut seen = Vec::new();
                for (at, text, ok) in namespaces {
                    if seen.contains(&at) {
                        valid = Some(false);
                    }
                    seen.push(at);
                    entries.push(text);
                    valid = valid.and_then(|v| ok.map(|ok| v && ok));
                }
                entries.extend(elsewhere.iter().map(|e| e.to_string()));
                for (id, ok) in ids {
                    entries.insert(at.index(entries.len() + 1), id);
                    valid = valid.and_then(|v| ok.map(|ok| v && ok));
                }
                (format!("{gap}{{{}}}{gap}", entries.join(",")), valid)
            });
        prop_oneof![
            12 => object,
            1 => prop::sample::select(vec!["[1]", "\"x\"", "", "{", "{\"identity\":{}} x", "{\"identity\":{\"age\":1,}}"])
                .prop_map(|t| (t.to_string(), Some(false))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The short way reads what the general way reads: the same profile, hash and text, or
        /// the same refusal; and a text of the usual shape does take the short way.
        #[test]
        fn the_short_way_reads_what_the_general_way_reads((text, usual) in document()) {
            prop_assert!(same(&ours(&text), &general(&text)), "{text}\n{:?}\n{:?}", ours(&text).map(|r| r.1), general(&text).map(|r| r.1));
            if usual == Some(true) {
                prop_assert!(read_usual(&CATALOGUE, &text, Keep::Text).is_some(), "{text}");
            }
        }
    }
}
