//! `eligibility audit`: [`verify`] re-derives recorded evaluations; [`export`] writes the audit
//! log's old months to files (docs/fleet.md, "The audit log" and "Retention").

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

mod export;
mod verify;

#[derive(Subcommand)]
pub enum AuditCommand {
    /// Re-derive recorded evaluations from their snapshot and rule version, check both hashes
    /// and the outcome; exit 1 on any mismatch.
    Verify(verify::VerifyArgs),
    /// Write the audit log's months older than the retention to files (evaluations with their
    /// rule versions and snapshots), optionally detaching and dropping their partitions.
    Export(export::ExportArgs),
}

pub fn run(command: AuditCommand) -> Result<ExitCode> {
    match command {
        AuditCommand::Verify(args) => verify::run(args),
        AuditCommand::Export(args) => export::run(args),
    }
}
