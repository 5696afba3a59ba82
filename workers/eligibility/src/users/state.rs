//! What the store knows of one user (docs/fleet.md "One micro-batch"): the stored profile, the
//! last known verdict of each scheme, and what a batch changed of them. Read by
//! [`super::store`], changed by the evaluator's passes, shown by the API.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use engine::transitions::Known;
use engine::{Date, Profile};
use fleet::events::GapSummary;

use super::verdicts::SchemeVerdicts;

/// Where a profile came from (replays of older records must not move a user back in time).
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

impl Position {
    pub fn of(record: &fleet::input::Record) -> Position {
        Position {
            topic: record.topic.clone(),
            partition: record.partition,
            offset: record.offset,
        }
    }
}

/// A profile as JSON text: the update's as read (serde_json's writing of the parsed value),
/// or a stored one as PostgreSQL returns it.
/// Kept as text, not as a parsed `serde_json::Value`: it is only ever written back (a new
/// snapshot), and a parsed value costs dozens of allocations to build and to free for every
/// user a batch loads (docs/fleet.md "Where the time goes"). PostgreSQL stores it as `jsonb`,
/// so spacing and key order do not matter; its meaning is that of the profile evaluated.
pub type ProfileText = Arc<str>;

#[derive(Debug, Clone)]
pub struct StoredProfile {
    pub profile: Arc<Profile>,
    pub json: ProfileText,
    pub state: Option<String>,
    pub as_of: Date,
    pub position: Position,
    /// The next birthday after `as_of` on which the age changes one of the user's outcomes
    /// (`engine::calendar::AgeLimits::next_change`): the daily sweep's day for this user.
    pub next_age_change: Option<Date>,
}

/// The last known outcome of one (user, scheme), as stored (`user_verdicts`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredVerdict {
    pub rule_key: i32,
    pub rule_id: &'static str,
    pub rule_version: u32,
    /// Verdict, score, and the fingerprint of the gaps (engine `gaps::fingerprint`): whether
    /// the gaps changed is known without storing their texts.
    pub known: Known<u64>,
    pub as_of: Date,
}

/// A verdict this batch wrote, with what the cache shows of it.
#[derive(Debug, Clone)]
pub struct NewVerdict {
    pub evaluation_id: String,
    pub gaps: Vec<GapSummary>,
}

/// What the store knows of a user, and which of its verdicts this batch touched.
///
/// The stored profile and verdicts are shared (`Arc`) between a batch still being committed and
/// the next batch that carries the user over: a pass replaces the profile and copies the
/// verdicts (`Arc::make_mut`) only when it changes one, instead of every carried user being
/// copied whole before its pass.
#[derive(Debug, Clone, Default)]
pub struct UserState {
    pub profile: Option<Arc<StoredProfile>>,
    pub verdicts: Arc<SchemeVerdicts>,
    /// Schemes whose verdict changed (present in `verdicts`) or left (absent): the user's row is
    /// written again when there is any, and the cache entries of these are refreshed.
    pub touched: BTreeSet<String>,
    /// The touched verdicts still held, as the cache shows them.
    pub written: BTreeMap<String, NewVerdict>,
    pub profile_touched: bool,
    /// The stored state — what a caseworker's access depends on — changed in this batch: the
    /// API's cached copies of the user must not be served again (docs/api.md, "Cache").
    pub access_changed: bool,
    /// Every profile this batch evaluated (input hash, JSON): audit rows point at them.
    pub snapshots: Vec<(String, ProfileText)>,
}

impl UserState {
    /// The state as the next batch starts from it once this one is committed: what is stored
    /// (profile, verdicts), nothing pending — what `store::load_users` reads back after a
    /// profile batch (each of its passes stores a new snapshot, so every change is written).
    pub fn carried_over(&self) -> UserState {
        UserState {
            profile: self.profile.clone(),
            verdicts: self.verdicts.clone(),
            ..UserState::default()
        }
    }
}
