//! `eligibility rules simulate`: who gains and who loses if the proposed rules were added to the
//! current set, over the stored or a synthetic population ([`crate::rules::simulate`];
//! docs/releases.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use engine::{Catalogue, RuleSet};
use kernels::engine_select::Engine;

use super::Format;
use crate::cli::setup::{parse_as_of, runtime};
use crate::rules::simulate::{CHUNK, Diff, Population, Simulation, state_of, with_proposals};

#[derive(clap::Args)]
pub struct Args {
    /// The proposed rule file(s): a YAML file or a directory of them.
    #[arg(long)]
    pub rules: PathBuf,
    /// The current rule set (default: the bundled corpus).
    #[arg(long)]
    pub base: Option<PathBuf>,
    /// `postgres` (the stored population: ELIGIBILITY_DATABASE_URL) or `synthetic:N`.
    #[arg(long, default_value = "synthetic:100000")]
    pub population: String,
    /// The evaluation date (YYYY-MM-DD); default: today (UTC).
    #[arg(long)]
    pub as_of: Option<String>,
    /// Batch engine: auto (the GPU for big batches when the build has one) | cpu | gpu.
    #[arg(long, default_value = "auto")]
    pub engine: kernels::engine_select::EngineChoice,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub database: fleet::config::DatabaseArgs,
}

pub fn run(catalogue: &Catalogue, args: Args) -> Result<ExitCode> {
    let current = crate::rules::source::load(catalogue, args.base.as_deref())?;
    let proposals = RuleSet::load_dir(catalogue, &args.rules)
        .map_err(|e| anyhow!("the proposed rules in {}: {e}", args.rules.display()))?;
    let proposed = with_proposals(&current, proposals.rules);
    let as_of = parse_as_of(args.as_of.as_deref())?;
    let engine =
        Engine::new(args.engine, 0).map_err(|e| anyhow!("--engine {:?}: {e}", args.engine))?;
    let simulation = Simulation::new(catalogue, &current, &proposed, as_of);
    let mut diff = simulation.diff();
    let started = std::time::Instant::now();
    match args.population.as_str() {
        "postgres" => {
            let url = args.database.url()?;
            runtime()?.block_on(async {
                let pool = fleet::postgres::pool_with_ca(
                    &url,
                    args.database.database_ca_file.as_deref(),
                    2,
                )?;
                simulation
                    .run_stored(&engine, &pool, None, None, &mut diff)
                    .await
            })?;
        }
        synthetic => {
            let count: usize = synthetic
                .strip_prefix("synthetic:")
                .and_then(|n| n.parse().ok())
                .with_context(|| {
                    format!("--population {synthetic:?}: expected postgres or synthetic:N")
                })?;
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            let mut made = 0;
            while made < count {
                let n = CHUNK.min(count - made);
                let spec = synth::citizens::CitizenSpec {
                    seed: 17 + made as u64,
                    missing_rate: 0.05,
                    schemes: 0,
                };
                let mut citizens = Population::default();
                for (i, profile) in synth::citizens::generate(catalogue, n, spec, threads)
                    .into_iter()
                    .enumerate()
                {
                    let state = state_of(catalogue, &profile);
                    citizens.push(format!("syn_{:08}", made + i), state, profile);
                }
                simulation.run(&engine, &citizens, &mut diff)?;
                made += n;
                eprintln!(
                    "… {made} citizens after {:.1}s",
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    match args.format {
        Format::Json => {
            println!("{}", serde_json::to_string_pretty(&diff)?)
        }
        Format::Text => print_text(&diff, seconds),
    }
    Ok(ExitCode::SUCCESS)
}

fn print_text(diff: &Diff, seconds: f64) {
    println!(
        "{} citizens on {} in {seconds:.1}s ({}); {} scheme(s) change",
        diff.citizens,
        diff.as_of,
        diff.engine,
        diff.changes.len()
    );
    for change in &diff.changes {
        println!(
            "\n{} ({}): {} -> {}",
            change.scheme_id,
            change.state,
            change.from_rule.as_deref().unwrap_or("(new)"),
            change.to_rule.as_deref().unwrap_or("(ended)")
        );
        for (state, d) in diff.schemes.get(&change.scheme_id).into_iter().flatten() {
            let moved: Vec<String> = d
                .transitions
                .iter()
                .filter(|(k, _)| k.split_once("->").is_some_and(|(a, b)| a != b))
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            let total: usize = d.transitions.values().sum();
            let mut gaps: Vec<(&String, &usize)> = d.newly_blocking_gaps.iter().collect();
            gaps.sort_by(|a, b| b.1.cmp(a.1));
            // Cover and loan limits are not outlay: said apart, where the scheme has them.
            let mut apart = String::new();
            for (what, before, after) in [
                (
                    "insurance cover",
                    d.insurance_cover_before_inr,
                    d.insurance_cover_after_inr,
                ),
                (
                    "loan limits",
                    d.loan_limits_before_inr,
                    d.loan_limits_after_inr,
                ),
            ] {
                if before != 0.0 || after != 0.0 {
                    apart.push_str(&format!("; {what} ₹{before:.0} -> ₹{after:.0}"));
                }
            }
            println!(
                "  {state:<18} {total:>8} citizens; changed: {}; monthly outlay ₹{:.0} -> ₹{:.0} ({:+.0}){apart}; newly blocking: {}; e.g. {}",
                if moved.is_empty() {
                    "none".to_string()
                } else {
                    moved.join(", ")
                },
                d.monthly_outlay_before_inr,
                d.monthly_outlay_after_inr,
                d.monthly_outlay_after_inr - d.monthly_outlay_before_inr,
                gaps.iter()
                    .take(3)
                    .map(|(f, n)| format!("{f} {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                d.affected_sample
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    for conflict in &diff.conflicts_introduced {
        println!(
            "conflict introduced: {}",
            conflict["description"].as_str().unwrap_or_default()
        );
    }
}
