//! A user's stored state read back (docs/fleet.md "One micro-batch"): the profile and the
//! verdicts of each user a batch, a rule change or the API is about, and the verdicts' packed
//! form. The evaluator's one transaction that writes them is `evaluator::commit`.

use std::collections::HashMap;
use std::sync::Arc;

use deadpool_postgres::Pool;
use engine::profile_text::ReadProfile;
use engine::transitions::Known;
use engine::{Date, Outcome};
use fleet::error::IoError;
use fleet::metrics::time_store;

use super::state::{Position, StoredProfile, StoredVerdict, UserState};
use super::verdicts::SchemeVerdicts;
use crate::rules::book::RuleBook;

fn date(text: &str) -> Result<Date, IoError> {
    Date::parse(text)
        .ok_or_else(|| IoError::internal(anyhow::anyhow!("stored date {text:?} is not YYYY-MM-DD")))
}

/// Loads the stored profile and verdicts of `users`.
pub async fn load_users(
    pool: &Pool,
    book: &RuleBook,
    users: &[String],
) -> Result<HashMap<String, UserState>, IoError> {
    let catalogue = &book.catalogue;
    let client = pool.get().await?;
    // Both queries in one round trip (prepared once per connection, then pipelined).
    let (profiles, verdicts) = tokio::try_join!(
        client.prepare_cached(
            "SELECT c.user_id, s.profile::text, c.state, c.as_of::text, c.source_topic,
                    c.source_partition, c.source_offset, c.next_age_change::text
             FROM profile_current c JOIN profile_snapshots s ON s.input_hash = c.input_hash
             WHERE c.user_id = ANY($1)"
        ),
        client
            .prepare_cached("SELECT user_id, verdicts FROM user_verdicts WHERE user_id = ANY($1)"),
    )?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&users];
    let (profiles, verdicts) = time_store("postgres", "read_users", async {
        tokio::try_join!(
            biased;
            client.query(&profiles, &params),
            client.query(&verdicts, &params),
        )
    })
    .await?;
    // Parsed on every core: a user's profile is parsed and hashed again, and its verdicts
    // unpacked, a thousand-odd entries ([`super::spread`]).
    let profiles = crate::spread::map(profiles, |row| stored_profile(catalogue, &row));
    let verdicts = crate::spread::map(verdicts, |row| {
        let user_id: String = row.get(0);
        let unpacked = unpack_verdicts(book, row.get(1))
            .map_err(|e| IoError::internal(anyhow::anyhow!("stored verdicts of {user_id}: {e}")))?;
        Ok::<_, IoError>((user_id, unpacked))
    });
    let mut states: HashMap<String, UserState> = HashMap::new();
    for profile in profiles {
        let (user_id, profile) = profile?;
        states.entry(user_id).or_default().profile = Some(Arc::new(profile));
    }
    for verdicts in verdicts {
        let (user_id, unpacked) = verdicts?;
        states.entry(user_id).or_default().verdicts = Arc::new(unpacked);
    }
    Ok(states)
}

/// A row of the profile query of [`load_users`]: the user and their stored profile.
fn stored_profile(
    catalogue: &engine::Catalogue,
    row: &tokio_postgres::Row,
) -> Result<(String, StoredProfile), IoError> {
    let user_id: String = row.get(0);
    let text: &str = row.get(1);
    // Read as an update is read; the text kept is PostgreSQL's, as stored.
    let profile = ReadProfile::profile(catalogue, text, &format!("snapshot of {user_id}"))
        .map_err(|e| IoError::internal(anyhow::anyhow!("stored profile of {user_id}: {e}")))?;
    let stored = StoredProfile {
        profile: Arc::new(profile),
        json: text.into(),
        state: row.get(2),
        as_of: date(row.get(3))?,
        position: Position {
            topic: row.get(4),
            partition: row.get(5),
            offset: row.get(6),
        },
        next_age_change: row.get::<_, Option<&str>>(7).map(date).transpose()?,
    };
    Ok((user_id, stored))
}

/// Bytes per scheme in `user_verdicts.verdicts`: rule_key (4), outcome code (1), gaps
/// fingerprint (8), as_of in days since 1970-01-01 (4), big-endian.
const VERDICT_LEN: usize = 17;

/// A user's verdicts in their stored form.
pub fn pack_verdicts(verdicts: &SchemeVerdicts) -> Vec<u8> {
    let mut out = Vec::with_capacity(verdicts.len() * VERDICT_LEN);
    for v in verdicts.values() {
        let outcome = Outcome {
            verdict: v.known.verdict,
            score: v.known.score,
        };
        out.extend_from_slice(&v.rule_key.to_be_bytes());
        out.push(outcome.code());
        out.extend_from_slice(&v.known.gaps.to_be_bytes());
        out.extend_from_slice(&(v.as_of.day_number() as i32).to_be_bytes());
    }
    out
}

/// The stored form back, by scheme; the rule versions are named by `book` (inactive ones too).
pub fn unpack_verdicts(book: &RuleBook, packed: &[u8]) -> Result<SchemeVerdicts, String> {
    if !packed.len().is_multiple_of(VERDICT_LEN) {
        return Err(format!(
            "{} bytes is not a whole number of {VERDICT_LEN}-byte entries",
            packed.len()
        ));
    }
    // A plain loop into a vector of the right size: every pass's user is unpacked, about a
    // thousand entries each, and collecting through `Result` grew the vector step by step.
    let mut entries = Vec::with_capacity(packed.len() / VERDICT_LEN);
    for c in packed.chunks_exact(VERDICT_LEN) {
        let rule_key = i32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        let outcome = Outcome::from_code(c[4]);
        let fingerprint = u64::from_be_bytes(c[5..13].try_into().expect("8 bytes"));
        let day = i32::from_be_bytes([c[13], c[14], c[15], c[16]]);
        let rule = book
            .version(rule_key)
            .ok_or_else(|| format!("rule_key {rule_key} is not in eligibility_rules"))?;
        let as_of = Date::from_day_number(i64::from(day))
            .ok_or_else(|| format!("day {day} is out of range"))?;
        let verdict = StoredVerdict {
            rule_key,
            rule_id: rule.rule_id,
            rule_version: rule.version,
            known: Known {
                verdict: outcome.verdict,
                score: outcome.score,
                gaps: fingerprint,
            },
            as_of,
        };
        entries.push((rule.scheme_id, verdict));
    }
    Ok(SchemeVerdicts::from_entries(entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_rows_round_trip_and_a_damaged_row_is_refused() {
        let book = RuleBook::bundled_for_tests();
        let mut verdicts = SchemeVerdicts::default();
        for (index, (verdict, score)) in [
            (engine::Verdict::Eligible, 100),
            (engine::Verdict::PartialMatch, 75),
            (engine::Verdict::NotEligible, 0),
        ]
        .into_iter()
        .enumerate()
        {
            let rule = book.reference(index);
            verdicts.insert(
                rule.scheme_id,
                StoredVerdict {
                    rule_key: book.key(index),
                    rule_id: rule.rule_id,
                    rule_version: rule.version,
                    known: Known {
                        verdict,
                        score,
                        gaps: u64::MAX - index as u64,
                    },
                    as_of: Date::parse("2025-01-15").unwrap(),
                },
            );
        }
        let packed = pack_verdicts(&verdicts);
        assert_eq!(packed.len(), 3 * VERDICT_LEN);
        assert_eq!(unpack_verdicts(&book, &packed).unwrap(), verdicts);
        assert!(unpack_verdicts(&book, &packed[..packed.len() - 1]).is_err());
        let mut unknown = packed.clone();
        unknown[..4].copy_from_slice(&i32::MAX.to_be_bytes());
        let error = unpack_verdicts(&book, &unknown).unwrap_err();
        assert!(error.contains("rule_key 2147483647"), "{error}");
    }
}
