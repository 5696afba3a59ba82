//! The command line: one subcommand per job (see the crate documentation), parsed with clap,
//! each failure printed as `error: …` with exit code 1.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

use crate::{commands, replay};

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
    /// The languages of explanations, and a review sheet per language.
    #[command(subcommand)]
    Languages(commands::languages::LanguagesCommand),
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
    /// The daily calendar sweep: re-evaluate, through the fleet, the schemes whose outcomes
    /// change on a day with no new data (windows, deadlines, effective dates).
    Sweep(commands::sweep::Args),
    /// Check recorded evaluations against their inputs.
    #[command(subcommand)]
    Audit(commands::audit::AuditCommand),
    #[command(subcommand)]
    Api(crate::api::ApiCommand),
}

/// Parses the command line and runs the subcommand; the process's exit code.
pub fn run() -> ExitCode {
    // An empty `ELIGIBILITY_*` variable means "not set" (as a manifest often leaves one), where
    // clap would take it as an empty value. SAFETY: nothing else runs yet, so no other thread
    // reads the environment while it changes.
    for (name, value) in std::env::vars_os() {
        if value.is_empty() && name.to_string_lossy().starts_with("ELIGIBILITY_") {
            unsafe { std::env::remove_var(&name) };
        }
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Evaluate(args) => commands::evaluate::run(args),
        Command::Rules(command) => commands::rules::run(command),
        Command::Oracle(args) => commands::oracle::run(args),
        Command::Languages(command) => commands::languages::run(command),
        Command::Schema(command) => commands::schema::run(command),
        Command::Evaluator(args) => commands::services::evaluator(args),
        Command::Explainer(args) => commands::services::explainer(args),
        Command::Migrate(args) => commands::services::migrate(args),
        Command::Topics(command) => commands::services::topics(command),
        Command::SchemaRegistry(args) => commands::services::schema_registry(args),
        Command::Replay(args) => replay::run(args),
        Command::Sweep(args) => commands::sweep::run(args),
        Command::Audit(command) => commands::audit::run(command),
        Command::Api(command) => crate::api::run(command),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
