//! `eligibility schema profile`: the profile JSON Schema, derived from the field catalogue.

use anyhow::Result;
use clap::Subcommand;
use engine::Catalogue;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum SchemaCommand {
    /// The JSON Schema for citizen profiles (what `schemas/profile.schema.json` holds).
    Profile,
}

pub fn run(command: SchemaCommand) -> Result<ExitCode> {
    match command {
        SchemaCommand::Profile => {
            println!(
                "{}",
                serde_json::to_string_pretty(&Catalogue::bundled().profile_json_schema())?
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
