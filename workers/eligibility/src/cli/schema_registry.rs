//! `eligibility schema-registry`: the project's own Confluent-compatible schema registry, the
//! local development default only (docs/local-stack.md).

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args as ClapArgs;
use fleet::config::DatabaseArgs;

use super::setup::runtime;

#[derive(ClapArgs)]
pub struct RegistryArgs {
    /// Listen address.
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub listen: SocketAddr,
    /// Where schemas are kept.
    #[command(flatten)]
    pub database: DatabaseArgs,
}

pub fn run(args: RegistryArgs) -> Result<ExitCode> {
    let url = args.database.url()?;
    fleet::init_tracing("info");
    runtime()?.block_on(async {
        let ca = args.database.database_ca_file.as_deref();
        let pool = fleet::postgres::pool_with_ca(&url, ca, 4)?;
        fleet::postgres::migrate(&pool).await?;
        fleet::registry::serve(args.listen, pool).await
    })?;
    Ok(ExitCode::SUCCESS)
}
