//! `eligibility migrate`: apply the SQL migrations to `ELIGIBILITY_DATABASE_URL`.

use std::process::ExitCode;

use anyhow::Result;
use fleet::config::DatabaseArgs;

use super::setup::runtime;

pub fn run(args: DatabaseArgs) -> Result<ExitCode> {
    let url = args.url()?;
    fleet::init_tracing("info");
    runtime()?.block_on(async {
        let pool = fleet::postgres::pool_with_ca(&url, args.database_ca_file.as_deref(), 1)?;
        let applied = fleet::postgres::migrate(&pool).await?;
        println!(
            "schema current ({} migrations; applied now: {})",
            fleet::postgres::MIGRATIONS.len(),
            if applied.is_empty() {
                "none".to_string()
            } else {
                applied.join(", ")
            }
        );
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
