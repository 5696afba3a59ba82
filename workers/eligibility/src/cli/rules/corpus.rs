//! `eligibility rules coverage` and `eligibility rules audit`: what the corpus covers per state,
//! and its bookkeeping problems ([`engine::corpus`]; docs/corpus.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::ValueEnum;
use engine::Catalogue;
use engine::corpus::{self, Severity};

use super::load;
use crate::cli::setup::parse_as_of;

#[derive(Clone, Copy, ValueEnum)]
pub enum TableFormat {
    Table,
    Json,
}

#[derive(clap::Args)]
pub struct CoverageArgs {
    dir: PathBuf,
    #[arg(long, value_enum, default_value_t = TableFormat::Table)]
    format: TableFormat,
}

#[derive(clap::Args)]
pub struct AuditArgs {
    dir: PathBuf,
    /// A scheme last checked longer ago than this is a warning; twice this, an error.
    #[arg(long, env = "ELIGIBILITY_CORPUS_MAX_CHECK_AGE_DAYS", default_value_t = corpus::DEFAULT_MAX_CHECK_AGE_DAYS)]
    max_check_age_days: i64,
    /// The day to count ages from (YYYY-MM-DD); default: today (UTC).
    #[arg(long)]
    as_of: Option<String>,
}

pub fn coverage(catalogue: &Catalogue, args: CoverageArgs) -> Result<ExitCode> {
    let rules = load(catalogue, Some(&args.dir))?;
    let rows = corpus::coverage(catalogue, &rules);
    match args.format {
        TableFormat::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        TableFormat::Table => {
            println!(
                "| state | schemes | versions | kinds of benefit | people served | oldest check |"
            );
            println!("|---|---|---|---|---|---|");
            let list = |set: &std::collections::BTreeSet<&str>| {
                if set.is_empty() {
                    "—".to_string()
                } else {
                    set.iter().copied().collect::<Vec<_>>().join(", ")
                }
            };
            for row in &rows {
                println!(
                    "| {} | {} | {} | {} | {} | {} |",
                    row.state,
                    row.schemes,
                    row.versions,
                    list(&row.kinds),
                    list(&row.categories),
                    row.oldest_check.map_or("—".to_string(), |d| d.to_string())
                );
            }
            let with = rows
                .iter()
                .filter(|r| r.state != "central" && r.schemes > 0)
                .count();
            let of = rows.iter().filter(|r| r.state != "central").count();
            let schemes: usize = rows.iter().map(|r| r.schemes).sum();
            println!();
            println!(
                "{schemes} schemes in {} versions; {with} of {of} states and union territories have at least one",
                rules.rules.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn audit(catalogue: &Catalogue, args: AuditArgs) -> Result<ExitCode> {
    let rules = load(catalogue, Some(&args.dir))?;
    let today = parse_as_of(args.as_of.as_deref())?;
    let findings = corpus::audit(&rules, today, args.max_check_age_days);
    for f in &findings {
        let severity = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        println!("{severity}: {} ({}): {}", f.source, f.rule_id, f.problem);
    }
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    println!(
        "{} rule(s) audited on {today}: {errors} error(s), {} warning(s)",
        rules.rules.len(),
        findings.len() - errors
    );
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
