//! `eligibility audit verify`: re-derives recorded evaluations and checks them (from the
//! database, or from a file `audit export` wrote).
//!
//! The audit log keeps each evaluation's inputs by hash (profile snapshot, rule version) and its
//! outcome, not its trace (docs/fleet.md "The audit log"). Verifying one re-reads the snapshot
//! and the rule version, checks that both still hash to what was recorded, evaluates again on the
//! recorded `as_of`, and checks that the verdict, the score and the evaluation id come out the
//! same. The full re-derived trace is printed; any mismatch exits 1.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use engine::{Catalogue, Date, Profile, RuleSet};
use serde::Serialize;
use serde_json::Value as Json;

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// Verify every evaluation of an export file (`audit export`) instead of the database.
    #[arg(long, value_name = "FILE")]
    export: Option<std::path::PathBuf>,
    /// The evaluation id (as in events and `evaluation_audit_log`).
    #[arg(long, required_unless_present_any = ["user", "export"], conflicts_with = "scheme")]
    evaluation_id: Option<String>,
    /// The citizen (with --scheme: their evaluations of that scheme; with --evaluation-id:
    /// narrows the search to their passes, which is faster).
    #[arg(long)]
    user: Option<String>,
    /// The scheme (with --user).
    #[arg(long, requires = "user")]
    scheme: Option<String>,
    /// Only evaluations on this date (YYYY-MM-DD; with --user and --scheme).
    #[arg(long, requires = "scheme")]
    as_of: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    #[command(flatten)]
    database: fleet::config::DatabaseArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Table,
}

/// One evaluation as the audit log records it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Recorded {
    pub evaluation_id: String,
    pub as_of: String,
    pub user_id: String,
    pub scheme_id: String,
    pub rule_id: String,
    pub rule_version: i32,
    pub rule_hash: String,
    pub input_hash: String,
    pub verdict: String,
    pub match_score: i16,
}

impl Recorded {
    /// The columns `evaluation_id::text, as_of::text, user_id, scheme_id, rule_id,
    /// rule_version, rule_hash, input_hash, verdict, match_score` of `evaluation_audit_log`.
    pub fn from_row(row: &tokio_postgres::Row) -> Recorded {
        Recorded {
            evaluation_id: row.get(0),
            as_of: row.get(1),
            user_id: row.get(2),
            scheme_id: row.get(3),
            rule_id: row.get(4),
            rule_version: row.get(5),
            rule_hash: row.get(6),
            input_hash: row.get(7),
            verdict: row.get(8),
            match_score: row.get(9),
        }
    }
}

/// One check and whether it held.
#[derive(Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub recorded: String,
    pub derived: String,
    pub ok: bool,
}

#[derive(Debug, Serialize)]
pub struct Verification {
    pub recorded: Recorded,
    pub checks: Vec<Check>,
    /// The re-derived evaluation (full trace), when the inputs could be read.
    pub evaluation: Option<Json>,
}

impl Verification {
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}

fn check(name: &'static str, recorded: &str, derived: &str) -> Check {
    Check {
        name,
        recorded: recorded.to_string(),
        derived: derived.to_string(),
        ok: recorded == derived,
    }
}

/// The hash check of one stored input (`what`): its hash recomputed, or why there is none.
fn hash_check<T, E: std::fmt::Display>(
    name: &'static str,
    recorded: &str,
    what: &str,
    input: Option<&Result<T, E>>,
    hash: impl Fn(&T) -> &str,
) -> Check {
    let derived = match input {
        None => format!("{what} missing"),
        Some(Err(e)) => format!("{what} invalid: {e}"),
        Some(Ok(input)) => hash(input).to_string(),
    };
    check(name, recorded, &derived)
}

/// Re-derives `recorded` from the stored rule document and profile snapshot (pure).
pub fn verify(
    catalogue: &Catalogue,
    recorded: Recorded,
    rule_yaml: Option<&str>,
    snapshot: Option<&Json>,
) -> Verification {
    let mut checks = Vec::new();
    let mut evaluation = None;
    let rule = rule_yaml.map(|text| {
        RuleSet::from_documents(
            catalogue,
            &[(
                format!("eligibility_rules/{}", recorded.rule_id),
                text.to_string(),
            )],
        )
    });
    let profile = snapshot.map(|json| {
        Profile::from_json(
            catalogue,
            json,
            &format!("snapshot {}", recorded.input_hash),
        )
    });
    checks.push(hash_check(
        "rule_hash",
        &recorded.rule_hash,
        "rule version",
        rule.as_ref(),
        |set| &set.rules[0].rule_hash,
    ));
    checks.push(hash_check(
        "input_hash",
        &recorded.input_hash,
        "snapshot",
        profile.as_ref(),
        |p| &p.input_snapshot_hash,
    ));
    if let (Some(Ok(set)), Some(Ok(profile))) = (&rule, &profile) {
        let rule = &set.rules[0];
        // The snapshot as it read on the date (docs/semantics.md, "Age on a date").
        let aged = Date::parse(&recorded.as_of).map(|as_of| (as_of, profile.on(as_of)));
        let derived = aged
            .as_ref()
            .ok_or_else(|| format!("as_of {:?} is not a date", recorded.as_of))
            .and_then(|(as_of, profile)| {
                engine::evaluate(catalogue, rule, profile, *as_of)
                    .map_err(|e| format!("not applicable on {as_of}: {e:?}"))
            });
        match derived {
            Ok(e) => {
                checks.push(check("verdict", &recorded.verdict, e.verdict.name()));
                checks.push(check(
                    "match_score",
                    &recorded.match_score.to_string(),
                    &e.match_score.to_string(),
                ));
                checks.push(check(
                    "evaluation_id",
                    &recorded.evaluation_id,
                    &e.evaluation_id,
                ));
                evaluation = serde_json::to_value(&e).ok();
            }
            Err(why) => checks.push(check("verdict", &recorded.verdict, &why)),
        }
    }
    Verification {
        recorded,
        checks,
        evaluation,
    }
}

pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    let verifications = match &args.export {
        Some(file) => super::export::verify_file(file)?,
        None => {
            let database_url = args.database.url()?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(load_and_verify(&database_url, &args))?
        }
    };
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&verifications)?),
        Format::Table => print_table(&verifications),
    }
    let failed = verifications.iter().filter(|v| !v.ok()).count();
    if failed > 0 {
        eprintln!(
            "error: {failed} of {} evaluation(s) do not re-derive as recorded",
            verifications.len()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

async fn load_and_verify(database_url: &str, args: &VerifyArgs) -> Result<Vec<Verification>> {
    let ca = args.database.database_ca_file.as_deref();
    let pool = fleet::postgres::pool_with_ca(database_url, ca, 1)?;
    let client = pool
        .get()
        .await
        .context("connecting to ELIGIBILITY_DATABASE_URL")?;
    const COLUMNS: &str = "SELECT evaluation_id::text, as_of::text, user_id, scheme_id, rule_id,
                                  rule_version, rule_hash, input_hash, verdict, match_score
                           FROM evaluation_audit_log";
    let rows = match (&args.evaluation_id, &args.user, &args.scheme) {
        (Some(id), user, _) => {
            client
                .query(
                    &format!(
                        "{COLUMNS} WHERE evaluation_id = $1::text::uuid
                         AND ($2::text IS NULL OR user_id = $2) ORDER BY as_of"
                    ),
                    &[id, user],
                )
                .await
        }
        (None, Some(user), Some(scheme)) => {
            client
                .query(
                    &format!(
                        "{COLUMNS} WHERE user_id = $1 AND scheme_id = $2
                         AND ($3::text IS NULL OR as_of = $3::text::date) ORDER BY as_of, created_at"
                    ),
                    &[user, scheme, &args.as_of],
                )
                .await
        }
        _ => bail!("give --evaluation-id, or --user with --scheme"),
    }
    .context("reading evaluation_audit_log")?;
    if rows.is_empty() {
        bail!("no recorded evaluation matches");
    }
    let catalogue = Catalogue::bundled();
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let recorded = Recorded::from_row(&row);
        let rule_yaml: Option<String> = client
            .query_opt(
                "SELECT rule_yaml FROM eligibility_rules WHERE rule_id = $1",
                &[&recorded.rule_id],
            )
            .await?
            .map(|r| r.get(0));
        let snapshot: Option<Json> = client
            .query_opt(
                "SELECT profile::text FROM profile_snapshots WHERE input_hash = $1",
                &[&recorded.input_hash],
            )
            .await?
            .map(|r| serde_json::from_str(r.get::<_, &str>(0)))
            .transpose()?;
        out.push(verify(
            &catalogue,
            recorded,
            rule_yaml.as_deref(),
            snapshot.as_ref(),
        ));
    }
    Ok(out)
}

fn print_table(verifications: &[Verification]) {
    for v in verifications {
        let r = &v.recorded;
        println!(
            "{} {} × {} ({} v{}) on {}: {}",
            r.evaluation_id,
            r.user_id,
            r.scheme_id,
            r.rule_id,
            r.rule_version,
            r.as_of,
            if v.ok() { "VERIFIED" } else { "MISMATCH" }
        );
        for c in &v.checks {
            println!(
                "  {:<14} {:<4} recorded {}  derived {}",
                c.name,
                if c.ok { "ok" } else { "FAIL" },
                c.recorded,
                c.derived
            );
        }
        if let Some(conditions) = v
            .evaluation
            .as_ref()
            .and_then(|e| e["conditions_evaluated"].as_array())
        {
            for c in conditions {
                println!(
                    "  {:<36} {:<12} expected {:<24} actual {:<16} {}",
                    c["field"].as_str().unwrap_or_default(),
                    c["operator"].as_str().unwrap_or_default(),
                    c["expected"].to_string(),
                    c["actual"].to_string(),
                    if c["result"] == true { "pass" } else { "fail" }
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Verdict;

    fn fixture() -> (Catalogue, String, Json) {
        let catalogue = Catalogue::bundled();
        let rule = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../schemes/karnataka/old_age_pension.yaml"
        ))
        .unwrap();
        let profile: Json = serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/profiles/ka_worker_58.json"
            ))
            .unwrap(),
        )
        .unwrap();
        (catalogue, rule, profile)
    }

    fn recorded_from(catalogue: &Catalogue, rule: &str, profile: &Json) -> Recorded {
        let set = RuleSet::from_documents(catalogue, &[("r".into(), rule.to_string())]).unwrap();
        let rule = &set.rules[0];
        let profile = Profile::from_json(catalogue, profile, "p").unwrap();
        let as_of = Date::parse("2025-01-15").unwrap();
        let e = engine::evaluate(catalogue, rule, &profile, as_of).unwrap();
        Recorded {
            evaluation_id: e.evaluation_id.clone(),
            as_of: as_of.to_string(),
            user_id: "u".into(),
            scheme_id: rule.scheme_id.clone(),
            rule_id: rule.rule_id.clone(),
            rule_version: rule.version as i32,
            rule_hash: rule.rule_hash.clone(),
            input_hash: profile.input_snapshot_hash.clone(),
            verdict: e.verdict.name().into(),
            match_score: i16::from(e.match_score),
        }
    }

    #[test]
    fn an_untouched_record_verifies_with_its_full_trace() {
        let (catalogue, rule, profile) = fixture();
        let recorded = recorded_from(&catalogue, &rule, &profile);
        assert_eq!(recorded.verdict, Verdict::PartialMatch.name());
        let v = verify(&catalogue, recorded, Some(&rule), Some(&profile));
        assert!(v.ok(), "{:?}", v.checks);
        assert_eq!(v.checks.len(), 5);
        assert!(
            v.evaluation.unwrap()["conditions_evaluated"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
        );
    }

    #[test]
    fn a_tampered_score_snapshot_or_rule_is_a_mismatch() {
        let (catalogue, rule, profile) = fixture();
        let recorded = recorded_from(&catalogue, &rule, &profile);

        let mut score = recorded.clone();
        score.match_score += 1;
        let v = verify(&catalogue, score, Some(&rule), Some(&profile));
        let failed: Vec<&str> = v.checks.iter().filter(|c| !c.ok).map(|c| c.name).collect();
        assert_eq!(failed, ["match_score"]);

        let mut older = profile.clone();
        older["identity"]["age"] = 57.into();
        let v = verify(&catalogue, recorded.clone(), Some(&rule), Some(&older));
        assert!(
            v.checks.iter().any(|c| c.name == "input_hash" && !c.ok),
            "{:?}",
            v.checks
        );

        let edited = rule.replace("1200", "1300");
        assert_ne!(edited, rule);
        let v = verify(&catalogue, recorded.clone(), Some(&edited), Some(&profile));
        assert!(v.checks.iter().any(|c| c.name == "rule_hash" && !c.ok));

        let v = verify(&catalogue, recorded, None, None);
        assert!(!v.ok());
        assert!(v.evaluation.is_none());
    }
}
