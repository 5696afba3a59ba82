//! `eligibility answers capture`: real model answers to the explainer's prompts, kept as an
//! Oracle-A test set (docs/explainer-model.md, "The labelled answers").
//!
//! The citizens are the corpus' hand-written test citizens (`shared/engine/tests/corpus_cases`):
//! each is evaluated against its scheme's version in effect on its date, and every ELIGIBLE or
//! PARTIAL_MATCH one (what the explainer words) is explained in one language, the languages taken
//! in turn. Schemes are taken in turn too (the first case of every file, then the second…), so a
//! short run still spans the corpus. Each explanation goes through the explainer's own
//! [`explain`](crate::explainer::explain::explain) against the configured endpoint: the same
//! prompt, client, settings and acceptance (Oracle-A and unsourced numbers) as the worker.
//!
//! Each line of the output is one explanation: `case`, the Oracle-A case the explainer checked
//! (`facts`, `candidate_output`, `expected`, `config`: `eligibility oracle --case` reads it),
//! the raw `answer`, what the explainer did (`served`: `llm` or the fallback reason; the failed
//! rules and unsourced numbers of a refused answer), the seconds it took, the scheme, verdict,
//! language and model; `label` is left for a person to fill in. A cut or timed-out answer has
//! no text (the client never returns one): its line has the `facts` and no `case`. A summary of
//! acceptance by language and verdict goes to standard error.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use engine::{Catalogue, Date, RuleSet, Verdict};
use explain::Language;
use fleet::config::LlmConfig;
use serde_json::json;

use super::setup::runtime;
use crate::explainer::breaker::BreakerSettings;
use crate::explainer::explain::{GeneratedBy, explain};
use crate::explainer::llm::{LlmClient, LlmOptions};

#[derive(clap::Subcommand)]
pub enum Command {
    /// Ask the model to explain corpus test citizens and write each answer as an Oracle-A case
    /// (NDJSON) with what the explainer did with it.
    Capture(CaptureArgs),
}

#[derive(clap::Args)]
pub struct CaptureArgs {
    /// The chat-completions endpoint's base URL (…/v1).
    #[arg(long, env = "ELIGIBILITY_LLM_BASE_URL")]
    llm_base_url: String,
    /// The model name sent with each request.
    #[arg(long, env = "ELIGIBILITY_LLM_MODEL")]
    llm_model: String,
    /// Timeout of one request, in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    llm_timeout_ms: u64,
    /// The rules (a directory of YAML files).
    #[arg(long, default_value = "schemes")]
    rules: PathBuf,
    /// The test citizens (a directory of case files).
    #[arg(long, default_value = "shared/engine/tests/corpus_cases")]
    cases: PathBuf,
    /// Languages, taken in turn (ISO 639-1 codes, comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "en,hi")]
    languages: Vec<Language>,
    /// How many explanations to ask for.
    #[arg(long, default_value_t = 200)]
    count: usize,
    /// Skip this many eligible or partial citizens first (to continue an earlier capture).
    #[arg(long, default_value_t = 0)]
    skip: usize,
    /// Where to write the NDJSON (appended to).
    #[arg(long)]
    out: PathBuf,
}

pub fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Capture(args) => runtime()?.block_on(capture(args)),
    }
}

/// One citizen to explain: the case's evaluation facts in one language.
struct Subject {
    case: String,
    scheme_id: String,
    verdict: Verdict,
    facts: explain::Facts,
}

async fn capture(args: CaptureArgs) -> Result<ExitCode> {
    anyhow::ensure!(!args.languages.is_empty(), "--languages names no language");
    let catalogue = &Catalogue::bundled();
    let rules = RuleSet::load_dir(catalogue, &args.rules)
        .with_context(|| format!("loading rules from {}", args.rules.display()))?;
    let subjects = subjects(catalogue, &rules, &args)?;
    let llm = LlmClient::new(
        &LlmConfig {
            base_url: args.llm_base_url.clone(),
            model: args.llm_model.clone(),
            api_key: None,
        },
        LlmOptions {
            timeout: Duration::from_millis(args.llm_timeout_ms),
            concurrency: 1,
            // A capture measures the model, so the circuit never opens on it.
            breaker: BreakerSettings {
                failures: u32::MAX,
                ..BreakerSettings::default()
            },
            ..LlmOptions::default()
        },
    )?;
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.out)
        .with_context(|| format!("opening {}", args.out.display()))?;
    let mut tally: BTreeMap<(String, &'static str), (usize, usize)> = BTreeMap::new();
    let total = subjects.len();
    for (i, subject) in subjects.into_iter().enumerate() {
        let language = subject.facts.language();
        let id = format!("{}:{}", subject.case, language.code());
        let started = Instant::now();
        let explanation = explain(&id, &subject.facts, Some(&llm)).await;
        let seconds = started.elapsed().as_secs_f64();
        let accepted = explanation.generated_by == GeneratedBy::Llm;
        let answer = match (&explanation.rejected, accepted) {
            (_, true) => Some(explanation.text.as_str()),
            (Some(rejected), false) => Some(rejected.answer.as_str()),
            (None, false) => None,
        };
        let mut line = json!({"id": id});
        match answer {
            Some(answer) => {
                line["case"] = explain::oracle_case_json(&id, &subject.facts, answer);
            }
            None => line["facts"] = json!(subject.facts.texts()),
        }
        line["answer"] = json!(answer);
        line["served"] = json!(
            explanation
                .fallback_reason
                .map_or("llm", |reason| reason.as_str())
        );
        line["failed_rules"] = json!(explanation.rejected.as_ref().map(|r| &r.failed_rules));
        line["unsourced_numbers"] =
            json!(explanation.rejected.as_ref().map(|r| &r.unsourced_numbers));
        line["seconds"] = json!((seconds * 100.0).round() / 100.0);
        line["scheme_id"] = json!(subject.scheme_id);
        line["verdict"] = json!(subject.verdict.name());
        line["language"] = json!(language.code());
        line["model"] = json!(args.llm_model);
        line["label"] = json!(null);
        writeln!(out, "{line}")?;
        out.flush()?;
        let entry = tally
            .entry((language.code().to_string(), subject.verdict.name()))
            .or_default();
        entry.0 += 1;
        entry.1 += usize::from(accepted);
        eprintln!(
            "{}/{total} {id}: {} in {seconds:.1} s",
            i + 1,
            if accepted {
                "accepted"
            } else {
                explanation.fallback_reason.map_or("?", |r| r.as_str())
            }
        );
    }
    eprintln!("accepted by language and verdict:");
    for ((language, verdict), (asked, accepted)) in &tally {
        eprintln!("  {language} {verdict}: {accepted} of {asked}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The eligible and partial test citizens, schemes in turn, each with its facts in the next
/// language; `skip` of them left out first, at most `count` kept.
fn subjects(catalogue: &Catalogue, rules: &RuleSet, args: &CaptureArgs) -> Result<Vec<Subject>> {
    let files = engine::cases::load_dir(&args.cases)
        .with_context(|| format!("loading test citizens from {}", args.cases.display()))?;
    let mut found = Vec::new();
    let longest = files.iter().map(|(_, f)| f.cases.len()).max().unwrap_or(0);
    for round in 0..longest {
        for (name, file) in &files {
            let Some(case) = file.cases.get(round) else {
                continue;
            };
            let Some(as_of) = Date::parse(&case.as_of) else {
                continue;
            };
            let Ok((profile, Some(rule))) = file.setting(catalogue, rules, case, as_of) else {
                continue;
            };
            let Ok(evaluation) = engine::evaluate(catalogue, rule, &profile, as_of) else {
                continue;
            };
            if !matches!(
                evaluation.verdict,
                Verdict::Eligible | Verdict::PartialMatch
            ) {
                continue;
            }
            let language = args.languages[found.len() % args.languages.len()];
            found.push(Subject {
                case: format!("{}#{}", case_file(name, &args.cases), round + 1),
                scheme_id: file.scheme_id.clone(),
                verdict: evaluation.verdict,
                facts: explain::facts(&evaluation, catalogue, language),
            });
        }
    }
    Ok(found.into_iter().skip(args.skip).take(args.count).collect())
}

/// A case file's name below the cases directory, without `.yaml` (`bihar/vridhjan_pension`).
fn case_file(name: &str, dir: &std::path::Path) -> String {
    let path = std::path::Path::new(name);
    let below = path.strip_prefix(dir).unwrap_or(path);
    below.with_extension("").to_string_lossy().into_owned()
}
