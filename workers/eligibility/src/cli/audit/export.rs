//! Audit retention (docs/fleet.md, "Retention"): `eligibility audit export` writes the month
//! partitions of the audit log older than the retention to self-contained files — every
//! evaluation with the rule versions and profile snapshots it needs — and, with `--detach`,
//! detaches and drops those partitions once their file is written and read back.
//! `eligibility audit verify --export FILE` re-derives the evaluations of such a file.
//!
//! A file is JSON lines: `{"kind":"rule",...}` and `{"kind":"snapshot",...}` for every input
//! once, then `{"kind":"evaluation",...}` per evaluation (the columns of
//! `evaluation_audit_log`). Its SHA-256 is written beside it (`<file>.sha256`).

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::verify::{self, Recorded};

#[derive(clap::Args)]
pub struct ExportArgs {
    /// Export the months that end on or before this date (YYYY-MM-DD); see also --keep-months.
    #[arg(
        long,
        conflicts_with = "keep_months",
        required_unless_present = "keep_months"
    )]
    pub before: Option<String>,
    /// The retention: export the months older than this many whole months before today.
    #[arg(long)]
    pub keep_months: Option<u32>,
    /// Where the files go (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// After each file is written and read back, detach and drop its partition.
    #[arg(long)]
    pub detach: bool,
    #[command(flatten)]
    pub database: fleet::config::DatabaseArgs,
}

/// One line of an export file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    Rule { rule_id: String, rule_yaml: String },
    Snapshot { input_hash: String, profile: Json },
    Evaluation(Recorded),
}

pub fn run(args: ExportArgs) -> Result<std::process::ExitCode> {
    let url = args.database.url()?;
    let cutoff = match (&args.before, args.keep_months) {
        (Some(text), _) => engine::Date::parse(text)
            .with_context(|| format!("--before {text:?} is not a date YYYY-MM-DD"))?,
        (None, Some(months)) => months_before(crate::clock::today(), months),
        (None, None) => bail!("give --before or --keep-months"),
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    crate::cli::setup::runtime()?.block_on(async {
        let pool = fleet::postgres::pool_with_ca(&url, args.database.database_ca_file.as_deref(), 2)?;
        let client = pool.get().await?;
        // Month partitions whose last day is before the cutoff: named evaluation_passes_YYYY_MM.
        let partitions: Vec<String> = client
            .query(
                "SELECT c.relname FROM pg_inherits i
                 JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
                 WHERE p.relname = 'evaluation_passes' ORDER BY c.relname",
                &[],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .filter(|name: &String| month_end(name).is_some_and(|end| end < cutoff))
            .collect();
        if partitions.is_empty() {
            println!("no audit month ends before {cutoff}: nothing to export");
        }
        for partition in partitions {
            let path = args.out.join(format!("{partition}.jsonl"));
            let written = write_partition(&client, &partition, &path).await?;
            let read = verify_file(&path)?.len();
            anyhow::ensure!(read == written, "{}: wrote {written} evaluations, read back {read}", path.display());
            let digest = sha256_file(&path)?;
            std::fs::write(path.with_extension("jsonl.sha256"), format!("{digest}  {}\n", file_name(&path)))?;
            if args.detach {
                client
                    .batch_execute(&format!(
                        "ALTER TABLE evaluation_passes DETACH PARTITION {partition}; DROP TABLE {partition}"
                    ))
                    .await
                    .with_context(|| format!("detaching {partition}"))?;
            }
            println!(
                "{partition}: {written} evaluations -> {} (sha256 {digest}){}",
                path.display(),
                if args.detach { ", partition detached and dropped" } else { "" }
            );
        }
        anyhow::Ok(())
    })?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// The first day after the month of `evaluation_passes_YYYY_MM`'s, minus one day.
fn month_end(partition: &str) -> Option<engine::Date> {
    let suffix = partition.strip_prefix("evaluation_passes_")?;
    let (year, month) = suffix.split_once('_')?;
    let (year, month): (i32, u32) = (year.parse().ok()?, month.parse().ok()?);
    let (next_year, next_month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    let first_of_next = engine::Date::parse(&format!("{next_year:04}-{next_month:02}-01"))?;
    engine::Date::from_day_number(first_of_next.day_number() - 1)
}

/// The first day of the month `months` whole months before `today`'s.
fn months_before(today: engine::Date, months: u32) -> engine::Date {
    let text = today.to_string();
    let (year, month) = (
        text[0..4].parse::<i32>().unwrap_or(1970),
        text[5..7].parse::<i32>().unwrap_or(1),
    );
    let index = year * 12 + (month - 1) - months as i32;
    engine::Date::parse(&format!(
        "{:04}-{:02}-01",
        index.div_euclid(12),
        index.rem_euclid(12) + 1
    ))
    .expect("a valid month")
}

async fn write_partition(
    client: &deadpool_postgres::Client,
    partition: &str,
    path: &Path,
) -> Result<usize> {
    let rows = client
        .query(
            &format!(
                "SELECT v.evaluation_id::text, v.as_of::text, v.user_id, v.scheme_id, v.rule_id, v.rule_version,
                        v.rule_hash, v.input_hash, v.verdict, v.match_score
                 FROM evaluation_audit_log v
                 WHERE v.pass_id IN (SELECT pass_id FROM {partition})
                 ORDER BY v.as_of, v.user_id, v.scheme_id"
            ),
            &[],
        )
        .await?;
    let evaluations: Vec<Recorded> = rows.iter().map(Recorded::from_row).collect();
    let mut rules = BTreeMap::new();
    let mut snapshots = BTreeMap::new();
    for e in &evaluations {
        rules.entry(e.rule_id.clone()).or_insert(());
        snapshots.entry(e.input_hash.clone()).or_insert(());
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let mut line = |l: &Line| -> Result<()> {
        serde_json::to_writer(&mut out, l)?;
        out.write_all(b"\n")?;
        Ok(())
    };
    for rule_id in rules.keys() {
        let row = client
            .query_one(
                "SELECT rule_yaml FROM eligibility_rules WHERE rule_id = $1",
                &[rule_id],
            )
            .await
            .with_context(|| format!("rule {rule_id}"))?;
        line(&Line::Rule {
            rule_id: rule_id.clone(),
            rule_yaml: row.get(0),
        })?;
    }
    for input_hash in snapshots.keys() {
        let row = client
            .query_one(
                "SELECT profile::text FROM profile_snapshots WHERE input_hash = $1",
                &[input_hash],
            )
            .await
            .with_context(|| format!("snapshot {input_hash}"))?;
        let profile = serde_json::from_str(row.get::<_, &str>(0))?;
        line(&Line::Snapshot {
            input_hash: input_hash.clone(),
            profile,
        })?;
    }
    for e in &evaluations {
        line(&Line::Evaluation(e.clone()))?;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(evaluations.len())
}

/// Reads an export file and re-derives every evaluation in it.
pub fn verify_file(path: &Path) -> Result<Vec<verify::Verification>> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut rules = BTreeMap::new();
    let mut snapshots = BTreeMap::new();
    let mut evaluations = Vec::new();
    for (n, text) in std::io::BufReader::new(file).lines().enumerate() {
        let text = text?;
        let line: Line = serde_json::from_str(&text)
            .with_context(|| format!("{} line {}: not an export line", path.display(), n + 1))?;
        match line {
            Line::Rule { rule_id, rule_yaml } => {
                rules.insert(rule_id, rule_yaml);
            }
            Line::Snapshot {
                input_hash,
                profile,
            } => {
                snapshots.insert(input_hash, profile);
            }
            Line::Evaluation(recorded) => evaluations.push(recorded),
        }
    }
    let catalogue = engine::Catalogue::bundled();
    Ok(evaluations
        .into_iter()
        .map(|recorded| {
            let rule = rules.get(&recorded.rule_id).map(String::as_str);
            let snapshot = snapshots.get(&recorded.input_hash);
            verify::verify(&catalogue, recorded, rule, snapshot)
        })
        .collect())
}

fn sha256_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn month_partitions_end_on_their_last_day_and_retention_counts_whole_months() {
        let date = |s| engine::Date::parse(s).unwrap();
        assert_eq!(
            month_end("evaluation_passes_2025_01"),
            Some(date("2025-01-31"))
        );
        assert_eq!(
            month_end("evaluation_passes_2024_02"),
            Some(date("2024-02-29"))
        );
        assert_eq!(
            month_end("evaluation_passes_2025_12"),
            Some(date("2025-12-31"))
        );
        assert_eq!(month_end("evaluation_passes_default"), None);
        assert_eq!(months_before(date("2026-11-22"), 12), date("2025-11-01"));
        assert_eq!(months_before(date("2026-01-15"), 1), date("2025-12-01"));
    }
}
