//! Where rules come from: a directory given on the command line, or the bundled corpus.

use anyhow::{Context, Result, anyhow};
use engine::{Catalogue, EngineError, RuleSet};
use std::path::Path;

pub fn load(catalogue: &Catalogue, dir: Option<&Path>) -> Result<RuleSet> {
    match dir {
        Some(dir) => RuleSet::load_dir(catalogue, dir).map_err(|e| match e {
            EngineError::Invalid(report) => {
                anyhow!("rules in {} are invalid:\n{report}", dir.display())
            }
            other => anyhow!(other),
        }),
        None => RuleSet::bundled(catalogue)
            .map_err(|report| anyhow!("the bundled corpus is invalid:\n{report}")),
    }
}

pub fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))
}
