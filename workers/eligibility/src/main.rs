//! `eligibility`: the engine's command line, on its embedded default (no services needed).
//!
//! - `evaluate`: one citizen against the schemes in effect (bundled corpus or `--rules DIR`).
//! - `rules validate | conflicts | hash`: check a rule directory, find conflicts, hash a rule.
//! - `oracle`: run Oracle-A over a test set or one case.
//! - `schema profile`: print the profile JSON Schema derived from the field catalogue.
//! - `evaluator`: the stream worker (see [`evaluator`]); `explainer`: the explanation worker
//!   (in the library, [`eligibility::explainer`], so that tests can drive its parts); `migrate`,
//!   `topics create`: the set-up jobs; `schema-registry`: the local registry (development
//!   default); `replay`: backfill; `audit verify`: re-derive recorded evaluations.
//!
//! Exit codes: 0 success, 1 bad input or a failed check (with a message naming the problem),
//! 2 a usage error.

mod commands;
mod evaluator;
mod replay;
mod rules_source;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "eligibility",
    version,
    about = "Eligibility engine for government welfare schemes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate one citizen profile against the schemes in effect.
    Evaluate(commands::evaluate::Args),
    /// Validate rules, find conflicts, hash a rule.
    #[command(subcommand)]
    Rules(commands::rules::RulesCommand),
    /// Check explanations with Oracle-A.
    Oracle(commands::oracle::Args),
    /// Print a JSON Schema derived from the field catalogue.
    #[command(subcommand)]
    Schema(commands::schema::SchemaCommand),
    /// Run an evaluator worker (Kafka in; PostgreSQL, Redis and events out).
    Evaluator(commands::services::EvaluatorArgs),
    /// Run an explainer worker (new and partial matches in; explanations out).
    Explainer(commands::services::ExplainerArgs),
    /// Apply the SQL migrations to ELIGIBILITY_DATABASE_URL.
    Migrate(fleet::config::DatabaseArgs),
    /// Manage the fleet's topics.
    #[command(subcommand)]
    Topics(commands::services::TopicsCommand),
    /// Serve the local Confluent-compatible schema registry (development default only).
    SchemaRegistry(commands::services::RegistryArgs),
    /// Re-read a range of an input topic through the evaluator's pipeline (backfill).
    Replay(replay::Args),
    /// Check recorded evaluations against their inputs.
    #[command(subcommand)]
    Audit(commands::audit::AuditCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Evaluate(args) => commands::evaluate::run(args),
        Command::Rules(command) => commands::rules::run(command),
        Command::Oracle(args) => commands::oracle::run(args),
        Command::Schema(command) => commands::schema::run(command),
        Command::Evaluator(args) => commands::services::evaluator(args),
        Command::Explainer(args) => commands::services::explainer(args),
        Command::Migrate(args) => commands::services::migrate(args),
        Command::Topics(command) => commands::services::topics(command),
        Command::SchemaRegistry(args) => commands::services::schema_registry(args),
        Command::Replay(args) => replay::run(args),
        Command::Audit(command) => commands::audit::run(command),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
