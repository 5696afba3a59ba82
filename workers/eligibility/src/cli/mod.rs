//! The command line: one file per subcommand (a folder where it has its own), parsed with clap,
//! each failure printed as `error: …` with exit code 1. The library never imports this module:
//! each subcommand turns its flags into the plain configuration its library entry point takes
//! (`api::serve(ApiConfig)`, `replay::run(Range)`, `evaluator::run(Config)`).
//!
//! [`setup`]: what the subcommands share (a runtime, a one-shot pool and publisher, `--as-of`).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod answers;
mod api;
mod audit;
mod demo;
mod evaluate;
mod evaluator;
mod explainer;
mod languages;
mod migrate;
mod oracle;
mod replay;
mod rules;
mod schema;
mod schema_registry;
mod screener;
pub mod setup;
mod sweep;
mod topics;

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
    Evaluate(evaluate::Args),
    /// Validate rules, find conflicts, hash a rule.
    #[command(subcommand)]
    Rules(rules::RulesCommand),
    /// Check explanations with Oracle-A.
    Oracle(oracle::Args),
    /// Real model answers to the explainer's prompts, kept as an Oracle-A test set.
    #[command(subcommand)]
    Answers(answers::Command),
    /// The languages of explanations, and a review sheet per language.
    #[command(subcommand)]
    Languages(languages::LanguagesCommand),
    /// Print a JSON Schema derived from the field catalogue.
    #[command(subcommand)]
    Schema(schema::SchemaCommand),
    /// The web pages' adaptive screener, measured.
    #[command(subcommand)]
    Screener(screener::Command),
    /// Run an evaluator worker (Kafka in; PostgreSQL, Redis and events out).
    Evaluator(evaluator::EvaluatorArgs),
    /// Run an explainer worker (new and partial matches in; explanations out).
    Explainer(explainer::ExplainerArgs),
    /// Apply the SQL migrations to ELIGIBILITY_DATABASE_URL.
    Migrate(fleet::config::DatabaseArgs),
    /// Manage the fleet's topics.
    #[command(subcommand)]
    Topics(topics::TopicsCommand),
    /// Serve the local Confluent-compatible schema registry (development default only).
    SchemaRegistry(schema_registry::RegistryArgs),
    /// Re-read a range of an input topic through the evaluator's pipeline (backfill).
    Replay(replay::Args),
    /// The daily calendar sweep: re-evaluate, through the fleet, the schemes whose outcomes
    /// change on a day with no new data (windows, deadlines, effective dates).
    Sweep(sweep::Args),
    /// Check recorded evaluations against their inputs.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// The HTTP API, and development tokens for it (boxed: its flags are many, and parsed once).
    #[command(subcommand)]
    Api(Box<api::ApiCommand>),
    /// README command 1's demo: example citizens sent to a running evaluator, a birthday and a
    /// lost BPL card, with the events each step published.
    Demo(demo::Args),
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
        Command::Evaluate(args) => evaluate::run(args),
        Command::Rules(command) => rules::run(command),
        Command::Oracle(args) => oracle::run(args),
        Command::Answers(command) => answers::run(command),
        Command::Languages(command) => languages::run(command),
        Command::Schema(command) => schema::run(command),
        Command::Screener(command) => screener::run(command),
        Command::Evaluator(args) => evaluator::run(args),
        Command::Explainer(args) => explainer::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Topics(command) => topics::run(command),
        Command::SchemaRegistry(args) => schema_registry::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Audit(command) => audit::run(command),
        Command::Api(command) => api::run(*command),
        Command::Demo(args) => demo::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
