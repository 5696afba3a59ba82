//! `eligibility sweep --as-of D`: the daily calendar sweep (docs/releases.md, "The calendar
//! sweep"). The engine names the schemes whose outcomes change between D − 1 and D with no new
//! data (a version taking effect or expiring, a window opening or closing, a deadline passing:
//! `engine::calendar`); each gets one `scheme.deadline.approaching` record for D, which the
//! fleet fans out to the partitions of the scheme's users, where each owner re-evaluates its
//! users on D like any other pass: audited, verdicts written, `new_match` / `lost` (with the
//! reason, e.g. `window_closed`) / `partial_match` published. Birthdays are per citizen: the
//! users whose stored next age change (`profile_current.next_age_change`, the first birthday
//! on which the age changes one of their outcomes) is on or before D get one record of the day (`ages`), fanned
//! out to every partition, where each owner re-evaluates them on D — a `new_match` on a 60th
//! birthday for an age-60 pension, `lost` with `age_changed` past an age limit. The sweep
//! itself writes nothing to the stores, so it never races the workers that own the users.
//!
//! `--every-scheme` is the nightly full re-evaluation: every scheme in effect on D gets a record,
//! so every citizen is re-evaluated against every rule on the rule-change path — in pages on the
//! batch engine, the GPU where the evaluators have one (`ELIGIBILITY_ENGINE`). Outcomes that
//! come out the same write and publish nothing; the passes are audited.

use std::process::ExitCode;

use anyhow::Result;
use engine::calendar::{Due, due_on, next_change};
use engine::{Catalogue, Date};
use fleet::config::WorkerArgs;
use fleet::events::DeadlineApproaching;
use fleet::kafka::Outgoing;
use fleet::topics::SCHEME_DEADLINE_APPROACHING;

use crate::cli::setup::{migrated_pool, parse_as_of, publisher, runtime};
use crate::clock::today_at_offset;

#[derive(clap::Args)]
pub struct Args {
    /// The day swept: outcomes on it against the day before; default: today at `--utc-offset`.
    #[arg(long)]
    pub as_of: Option<String>,
    /// Where "today" is, as an offset from UTC (+05:30 for India): a sweep scheduled just
    /// after local midnight sweeps the local date.
    #[arg(long, default_value = "+00:00", allow_hyphen_values = true)]
    pub utc_offset: String,
    /// Print what is due without publishing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Every scheme in effect on the day, not only those that change: a full re-evaluation of
    /// every citizen (nightly, or after a catalogue or engine upgrade).
    #[arg(long)]
    pub every_scheme: bool,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let catalogue = Catalogue::bundled();
    let day = match &args.as_of {
        Some(_) => parse_as_of(args.as_of.as_deref())?,
        None => today_at(&args.utc_offset)?,
    };
    let config = args.worker.config()?;
    runtime()?.block_on(async {
        let pool = migrated_pool(&config, 2).await?;
        let rules = crate::rules::store::load(&pool, &catalogue).await?.rules;
        let due = if args.every_scheme {
            every_scheme(&rules, day)
        } else {
            due_on(&rules, day)
        };
        let client = pool.get().await?;
        if args.every_scheme {
            println!(
                "full re-evaluation for {day}: {} scheme(s) in effect",
                due.len()
            );
        } else {
            println!("calendar sweep for {day}: {} scheme(s) change", due.len());
        }
        println!(
            "{:<36} {:<16} {:<16} {:<34} {:>9} {:<10}",
            "scheme", "state", "change", "version (before -> on the day)", "citizens", "next"
        );
        for scheme in &due {
            let state = (scheme.state != "central").then_some(scheme.state);
            let citizens: i64 = client
                .query_one(
                    "SELECT count(*) FROM profile_current WHERE ($1::text IS NULL OR state = $1)",
                    &[&state],
                )
                .await?
                .get(0);
            let next = next_change(&rules, scheme.scheme_id, day)
                .map_or_else(|| "-".to_string(), |d| d.to_string());
            println!(
                "{:<36} {:<16} {:<16} {:<34} {:>9} {:<10}",
                scheme.scheme_id,
                scheme.state,
                if args.every_scheme {
                    "full"
                } else {
                    scheme.change.name()
                },
                versions(scheme),
                citizens,
                next
            );
        }
        let birthdays: i64 = client
            .query_one(
                "SELECT count(*) FROM profile_current WHERE next_age_change <= $1::text::date",
                &[&day.to_string()],
            )
            .await?
            .get(0);
        println!("birthdays: {birthdays} citizen(s) whose age changes an outcome");
        if args.dry_run || (due.is_empty() && birthdays == 0) {
            println!(
                "nothing published{}",
                if args.dry_run { " (--dry-run)" } else { "" }
            );
            return anyhow::Ok(());
        }
        let (codec, producer) = publisher(&config, &[SCHEME_DEADLINE_APPROACHING])?;
        let mut records = Vec::with_capacity(due.len());
        for scheme in &due {
            records.push(record(&codec, scheme, day, args.every_scheme).await?);
        }
        if birthdays > 0 {
            records.push(ages_record(&codec, day).await?);
        }
        fleet::kafka::send_all(&producer, &records).await?;
        println!(
            "published {} record(s) on {SCHEME_DEADLINE_APPROACHING}: the fleet re-evaluates \
             these schemes' citizens on {day}",
            records.len()
        );
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Today's date at `offset` ("+05:30", "-03:00").
fn today_at(offset: &str) -> Result<Date> {
    let bad = || anyhow::anyhow!("--utc-offset {offset:?} is not an offset like +05:30");
    let (sign, rest) = match offset.split_at_checked(1) {
        Some(("+", rest)) => (1, rest),
        Some(("-", rest)) => (-1, rest),
        _ => return Err(bad()),
    };
    let (hours, minutes) = rest.split_once(':').ok_or_else(bad)?;
    let (hours, minutes): (i64, i64) = (
        hours.parse().map_err(|_| bad())?,
        minutes.parse().map_err(|_| bad())?,
    );
    if hours > 14 || minutes > 59 {
        return Err(bad());
    }
    Ok(today_at_offset(sign * (hours * 3600 + minutes * 60)))
}

/// "v1 -> v2", "- -> v1", "v3 -> v3".
fn versions(scheme: &Due) -> String {
    let name = |rule: Option<&engine::Rule>| rule.map_or_else(|| "-".into(), |r| r.rule_id.clone());
    format!("{} -> {}", name(scheme.before), name(scheme.after))
}

/// Every scheme in effect on `day`, as if each were due, with its version (unchanged).
fn every_scheme(rules: &engine::RuleSet, day: Date) -> Vec<Due<'_>> {
    let mut schemes: Vec<Due> = rules
        .in_effect(day)
        .into_iter()
        .map(|rule| Due {
            scheme_id: &rule.scheme_id,
            state: &rule.state,
            change: engine::calendar::CalendarChange::NewVersion,
            before: Some(rule),
            after: Some(rule),
        })
        .collect();
    schemes.sort_by_key(|d| d.scheme_id);
    schemes.dedup_by_key(|d| d.scheme_id);
    schemes
}

/// The deadline record of a due scheme. Its id names the scheme and the day, so a sweep run
/// twice for one day is recognisable as one (and re-evaluating again writes nothing new).
async fn record(
    codec: &fleet::avro::Codec,
    scheme: &Due<'_>,
    day: Date,
    full: bool,
) -> Result<Outgoing> {
    let change = if full { "full" } else { scheme.change.name() };
    let event = DeadlineApproaching {
        event_id: format!("sweep:{}:{day}:{change}", scheme.scheme_id),
        scheme_id: scheme.scheme_id.to_string(),
        deadline: day.to_string(),
        as_of: Some(day.to_string()),
        ages: false,
    };
    Ok(Outgoing {
        topic: SCHEME_DEADLINE_APPROACHING.to_string(),
        key: scheme.scheme_id.as_bytes().to_vec(),
        partition: None,
        timestamp_ms: None,
        payload: codec.encode(SCHEME_DEADLINE_APPROACHING, &event).await?,
        headers: Vec::new(),
    })
}

/// The day's birthday record: one for the day, whatever the count.
async fn ages_record(codec: &fleet::avro::Codec, day: Date) -> Result<Outgoing> {
    let event = DeadlineApproaching {
        event_id: format!("sweep:ages:{day}"),
        scheme_id: String::new(),
        deadline: day.to_string(),
        as_of: Some(day.to_string()),
        ages: true,
    };
    Ok(Outgoing {
        topic: SCHEME_DEADLINE_APPROACHING.to_string(),
        key: b"ages".to_vec(),
        partition: None,
        timestamp_ms: None,
        payload: codec.encode(SCHEME_DEADLINE_APPROACHING, &event).await?,
        headers: Vec::new(),
    })
}
