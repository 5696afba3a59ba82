//! `eligibility topics create`: create the fleet's topics that are missing (the partition map).

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use fleet::config::KafkaArgs;

use super::setup::runtime;

#[derive(Subcommand)]
pub enum TopicsCommand {
    /// Create every topic of the partition map that is missing (idempotent).
    Create {
        #[arg(long, default_value_t = 3)]
        replication_factor: i32,
        #[command(flatten)]
        kafka: KafkaArgs,
    },
}

pub fn run(command: TopicsCommand) -> Result<ExitCode> {
    let TopicsCommand::Create {
        replication_factor,
        kafka,
    } = command;
    let kafka = kafka.config()?;
    runtime()?.block_on(async {
        let created = fleet::kafka::create_topics(&kafka, replication_factor).await?;
        let all = fleet::topics::partition_map().all_topics();
        println!(
            "{} topics present ({} created now{}{})",
            all.len(),
            created.len(),
            if created.is_empty() { "" } else { ": " },
            created.join(", ")
        );
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
