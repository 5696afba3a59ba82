//! `eligibility rules`: `validate | conflicts | hash | cases` here; `simulate` (a rule
//! change's population diff) in [`simulate`]; `propose | approve | reject | proposal` (the
//! four-eyes review) in [`releases`] (docs/releases.md).

use anyhow::{Context, Result, anyhow};
use clap::{Subcommand, ValueEnum};
use engine::Catalogue;
use engine::conflicts::detect;
use engine::load::parse_rule_yaml;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::rules::source::load;

mod corpus;
mod releases;
mod simulate;

#[derive(Subcommand)]
pub enum RulesCommand {
    /// Validate every rule file below DIR; all problems are listed.
    Validate { dir: PathBuf },
    /// Find conflicts (unsatisfiable rules, dead branches, overlapping versions, mutually
    /// exclusive combinations, duplicates and shadowed schemes).
    Conflicts {
        dir: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Exit with 1 when any conflict is found.
        #[arg(long)]
        deny: bool,
    },
    /// Print a rule's hash (SHA-256 of the RFC 8785 canonical JSON of the document).
    Hash { file: PathBuf },
    /// Who gains and who loses: the rules in RULES (a file or a directory) added to the current
    /// set, against a population; per scheme and state, verdict transitions, monthly outlay,
    /// newly blocking gaps, affected users, conflicts introduced (docs/releases.md).
    Simulate(simulate::Args),
    /// Store the corpus' rule versions a database lacks, as an evaluator does when it starts (a
    /// database the API or the rules console serves before any evaluator ran, a bench).
    Seed(releases::SeedArgs),
    /// Store a rule version as a proposal (it changes no verdict) with its population diff.
    Propose(releases::ProposeArgs),
    /// Approve a proposal (a second person) and publish it: the fleet takes it live.
    Approve(releases::DecideArgs),
    /// Reject a proposal (a second person); it stays on record.
    Reject(releases::DecideArgs),
    /// Print a proposal with its status and population diff.
    Proposal(releases::ShowArgs),
    /// Run the hand-written test citizens in CASES (a case file or a directory of them) against
    /// the rules in RULES; every failing case is listed, and the exit status is 1 if any fails.
    Cases { rules: PathBuf, cases: PathBuf },
    /// Per state and union territory, and for the central schemes: schemes, versions, kinds of
    /// benefit, the people served and the oldest check date (docs/corpus.md, "Coverage").
    Coverage(corpus::CoverageArgs),
    /// The corpus' bookkeeping: rule ids against versions, check dates against their age,
    /// references without a date; exit 1 on any error (docs/corpus.md).
    Audit(corpus::AuditArgs),
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(command: RulesCommand) -> Result<ExitCode> {
    let catalogue = Catalogue::bundled();
    match command {
        RulesCommand::Validate { dir } => {
            let rules = load(&catalogue, Some(&dir))?;
            let schemes: BTreeSet<&str> =
                rules.rules.iter().map(|r| r.scheme_id.as_str()).collect();
            let states: BTreeSet<&str> = rules.rules.iter().map(|r| r.state.as_str()).collect();
            println!(
                "{} rule(s) valid: {} scheme(s), {} state(s)/central",
                rules.rules.len(),
                schemes.len(),
                states.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::Conflicts { dir, format, deny } => {
            let rules = load(&catalogue, Some(&dir))?;
            let report = detect(&catalogue, &rules);
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
                Format::Text => {
                    for c in &report.conflicts {
                        println!(
                            "{:?} [{}]: {}",
                            c.conflict_type,
                            c.rule_ids.join(", "),
                            c.description
                        );
                        if let Some(w) = &c.witness {
                            println!("    witness: {w}");
                        }
                    }
                    for id in &report.not_analysed {
                        println!("not analysed (too large to analyse exactly): {id}");
                    }
                    println!(
                        "{} conflict(s) in {} rule(s)",
                        report.conflicts.len(),
                        rules.rules.len()
                    );
                }
            }
            Ok(if deny && !report.conflicts.is_empty() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        RulesCommand::Simulate(args) => simulate::run(&catalogue, args),
        RulesCommand::Coverage(args) => corpus::coverage(&catalogue, args),
        RulesCommand::Audit(args) => corpus::audit(&catalogue, args),
        RulesCommand::Seed(args) => releases::seed(&catalogue, args),
        RulesCommand::Propose(args) => releases::propose(&catalogue, args),
        RulesCommand::Approve(args) => releases::decide(&catalogue, args, true),
        RulesCommand::Reject(args) => releases::decide(&catalogue, args, false),
        RulesCommand::Proposal(args) => releases::show(args),
        RulesCommand::Cases { rules, cases } => {
            let rules = load(&catalogue, Some(&rules))?;
            let files = engine::cases::load_dir(&cases)?;
            let (mut total, mut failed) = (0, 0);
            for (name, file) in &files {
                for result in file.run(&catalogue, &rules) {
                    total += 1;
                    if let Some(failure) = result.failure {
                        failed += 1;
                        println!("{name}: {:?}: {failure}", result.name);
                    }
                }
            }
            println!(
                "{total} case(s) in {} file(s): {failed} failed",
                files.len()
            );
            Ok(if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        RulesCommand::Hash { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let source = file.display().to_string();
            let rule = parse_rule_yaml(&catalogue, &text, &source).map_err(|problems| {
                let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
                anyhow!("{source} is not a valid rule:\n{}", lines.join("\n"))
            })?;
            println!("{}  {source}", rule.rule_hash);
            Ok(ExitCode::SUCCESS)
        }
    }
}
