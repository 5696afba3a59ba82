//! `eligibility rules propose | approve | reject | proposal`: the review of a rule version before
//! it goes live (docs/releases.md, "Review"); `rules seed`: the corpus stored in a database.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use engine::Catalogue;
use fleet::config::{DatabaseArgs, WorkerArgs};

use crate::cli::setup::{migrated_pool, parse_as_of, publisher, runtime};
use crate::rules::proposals;

#[derive(clap::Args)]
pub struct ProposeArgs {
    /// The rule document (YAML).
    pub file: PathBuf,
    /// Who proposes it (recorded; may not approve it).
    #[arg(long)]
    pub by: String,
    #[arg(long)]
    pub reason: Option<String>,
    /// The evaluation date of the population diff; default: today (UTC).
    #[arg(long)]
    pub as_of: Option<String>,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

#[derive(clap::Args)]
pub struct DecideArgs {
    /// The proposal id (`rules propose` prints it).
    pub id: i64,
    /// Who decides (recorded; never the author).
    #[arg(long)]
    pub by: String,
    /// Why (recorded).
    #[arg(long)]
    pub reason: String,
    #[command(flatten)]
    pub worker: WorkerArgs,
}

#[derive(clap::Args)]
pub struct ShowArgs {
    pub id: i64,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

#[derive(clap::Args)]
pub struct SeedArgs {
    /// The rule files (default: the bundled corpus).
    #[arg(long)]
    pub rules: Option<PathBuf>,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

/// Stores the corpus' versions the database lacks (`rules::store::seed`, as an evaluator at
/// start); prints how many.
pub fn seed(catalogue: &Catalogue, args: SeedArgs) -> Result<ExitCode> {
    let corpus = crate::rules::source::load(catalogue, args.rules.as_deref())?;
    let url = args.database.url()?;
    runtime()?.block_on(async {
        let pool =
            fleet::postgres::pool_with_ca(&url, args.database.database_ca_file.as_deref(), 1)?;
        let seeded = crate::rules::store::seed(&pool, &corpus).await?;
        println!("{seeded} rule version(s) stored, of {}", corpus.rules.len());
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Validates and stores a proposal, then attaches its diff against the stored population.
pub fn propose(catalogue: &Catalogue, args: ProposeArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let source = args.file.display().to_string();
    let rule = engine::load::parse_rule_yaml(catalogue, &text, &source).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        anyhow::anyhow!("{source} is not a valid rule:\n{}", lines.join("\n"))
    })?;
    let as_of = parse_as_of(args.as_of.as_deref())?;
    let config = args.worker.config()?;
    runtime()?.block_on(async {
        let pool = migrated_pool(&config, 2).await?;
        let current = crate::rules::store::load(&pool, catalogue).await?.rules;
        let submission = proposals::Submission {
            rule: &rule,
            yaml: &text,
            author: &args.by,
            reason: args.reason.as_deref(),
            as_of,
        };
        let (id, diff, event) = proposals::submit(
            &pool,
            catalogue,
            &current,
            &submission,
            &proposals::simulation_engine()?,
        )
        .await?;
        publish_simulation(&config, &event).await?;
        println!(
            "proposal {id}: {} version {} of {} by {}",
            rule.rule_id, rule.version, rule.scheme_id, args.by
        );
        println!("{}", serde_json::to_string_pretty(&diff)?);
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Approves (and publishes the version on `policy.rules.updated`, where the fleet takes it
/// live) or rejects a proposal.
pub fn decide(catalogue: &Catalogue, args: DecideArgs, approve: bool) -> Result<ExitCode> {
    let config = args.worker.config()?;
    runtime()?.block_on(async {
        let pool = migrated_pool(&config, 2).await?;
        let open = proposals::get(&pool, args.id).await?;
        if approve && open.simulation.is_none() && open.status == "proposed" {
            let rule = engine::load::parse_rule_yaml(catalogue, &open.rule_yaml, "proposal")
                .map_err(|p| anyhow::anyhow!("stored proposal {} does not load: {p:?}", args.id))?;
            let today = crate::clock::today();
            let current = crate::rules::store::load(&pool, catalogue).await?.rules;
            let engine = proposals::simulation_engine()?;
            let (_, event) = proposals::simulate(
                &pool, catalogue, &current, args.id, &rule, today, &engine, None,
            )
            .await?;
            publish_simulation(&config, &event).await?;
        }
        let decided = proposals::decide(&pool, args.id, &args.by, &args.reason, approve).await?;
        if approve {
            let (codec, producer) = publisher(&config, &[fleet::topics::POLICY_RULES_UPDATED])?;
            let record =
                proposals::approved_record(&codec, &decided, &args.by, &args.reason).await?;
            fleet::kafka::send_all(&producer, &[record]).await?;
        }
        println!("{}", serde_json::to_string_pretty(&decided)?);
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Publishes a proposal's `rule.simulation.completed` and waits for the acknowledgement.
async fn publish_simulation(
    config: &fleet::config::Config,
    event: &fleet::events::RuleSimulationCompleted,
) -> Result<()> {
    let (codec, producer) = publisher(config, &[fleet::topics::RULE_SIMULATION_COMPLETED])?;
    let record = proposals::encode_simulation(&codec, event).await?;
    fleet::kafka::send_all(&producer, &[record]).await?;
    Ok(())
}

pub fn show(args: ShowArgs) -> Result<ExitCode> {
    let url = args.database.url()?;
    runtime()?.block_on(async {
        let pool =
            fleet::postgres::pool_with_ca(&url, args.database.database_ca_file.as_deref(), 1)?;
        let proposal = proposals::get(&pool, args.id).await?;
        println!("{}", serde_json::to_string_pretty(&proposal)?);
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
