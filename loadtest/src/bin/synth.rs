//! `synth`: write a synthetic scheme corpus (YAML files) or synthetic citizens (NDJSON).

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use loadtest::citizens::{CitizenSpec, Citizens};
use loadtest::corpus::scheme_documents;
use std::io::Write;
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "Synthetic scheme corpora and citizens")]
struct Cli {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// Write COUNT scheme rules as YAML files under OUT/<state>/.
    Corpus {
        #[arg(long, default_value_t = 1000)]
        count: usize,
        #[arg(long, default_value_t = 7)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
    /// Write COUNT citizen profiles as NDJSON.
    Citizens {
        #[arg(long, default_value_t = 10_000)]
        count: usize,
        #[arg(long, default_value_t = 11)]
        seed: u64,
        /// Chance that any one field is absent.
        #[arg(long, default_value_t = 0.05)]
        missing_rate: f64,
        /// Size of the corpus whose scheme ids citizens may already receive.
        #[arg(long, default_value_t = 1000)]
        schemes: usize,
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() -> Result<()> {
    match Cli::parse().what {
        What::Corpus { count, seed, out } => {
            for doc in scheme_documents(count, seed) {
                let dir = out.join(doc["state"].as_str().unwrap_or("central"));
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                let file = dir.join(format!(
                    "{}.yaml",
                    doc["scheme_id"].as_str().unwrap_or("scheme")
                ));
                std::fs::write(&file, serde_yaml_ng::to_string(&doc)?)
                    .with_context(|| format!("cannot write {}", file.display()))?;
            }
            eprintln!("wrote {count} rules under {}", out.display());
        }
        What::Citizens {
            count,
            seed,
            missing_rate,
            schemes,
            out,
        } => {
            let file = std::fs::File::create(&out)
                .with_context(|| format!("cannot create {}", out.display()))?;
            let mut writer = std::io::BufWriter::new(file);
            let mut citizens = Citizens::new(CitizenSpec {
                seed,
                missing_rate,
                schemes,
            });
            for _ in 0..count {
                serde_json::to_writer(&mut writer, &citizens.next_profile())?;
                writer.write_all(b"\n")?;
            }
            writer.flush()?;
            eprintln!("wrote {count} citizens to {}", out.display());
        }
    }
    Ok(())
}
