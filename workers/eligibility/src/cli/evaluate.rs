//! `eligibility evaluate`: one citizen, every scheme in effect for them.

use anyhow::{Result, anyhow};
use clap::ValueEnum;
use engine::{Catalogue, Evaluation, Profile};
use explain::{Digits, Language};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

use super::setup::parse_as_of;
use crate::citizen::{Output, evaluate_citizen};
use crate::rules::source::{load, read_json};

#[derive(clap::Args)]
pub struct Args {
    /// The citizen profile (JSON).
    #[arg(long)]
    profile: PathBuf,
    /// A directory of rule YAML files; default: the bundled corpus.
    #[arg(long)]
    rules: Option<PathBuf>,
    /// The evaluation date (YYYY-MM-DD); default: today (UTC).
    #[arg(long)]
    as_of: Option<String>,
    /// Evaluate only this scheme.
    #[arg(long)]
    scheme: Option<String>,
    /// Also evaluate other states' schemes (by default: central ones and the citizen's state's).
    #[arg(long)]
    all_states: bool,
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Also word each result in this language (en, hi, bn, te, mr, ta, ur, gu, kn, or, ml, pa,
    /// as): its summary, next steps and template explanation. The table's "what next" is then
    /// in it.
    #[arg(long)]
    language: Option<Language>,
    /// Write those words' numbers in the script's own digits.
    #[arg(long, requires = "language")]
    native_digits: bool,
}

/// The words of one result in the language asked for.
#[derive(Serialize)]
struct Worded {
    language: Language,
    summary: String,
    next_steps: Vec<String>,
    explanation: String,
}

impl Worded {
    fn of(
        evaluation: &Evaluation<'_>,
        catalogue: &Catalogue,
        language: Language,
        digits: Digits,
    ) -> Worded {
        let write = |text: String| language.write_digits(&text, digits);
        Worded {
            language,
            summary: write(explain::summary(evaluation, language)),
            next_steps: explain::next_steps(evaluation, catalogue, language)
                .into_iter()
                .map(write)
                .collect(),
            explanation: explain::template(&explain::facts_in(
                evaluation, catalogue, language, digits,
            )),
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Table,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let catalogue = Catalogue::bundled();
    let rules = load(&catalogue, args.rules.as_deref())?;
    let as_of = parse_as_of(args.as_of.as_deref())?;
    let json = read_json(&args.profile)?;
    let profile = Profile::from_json(&catalogue, &json, &args.profile.display().to_string())
        .map_err(|report| anyhow!("the profile is invalid; nothing was evaluated:\n{report}"))?
        .into_on(as_of);

    let output = evaluate_citizen(
        &catalogue,
        &rules,
        &profile,
        as_of,
        args.scheme.as_deref(),
        args.all_states,
    )?;
    let digits = if args.native_digits {
        Digits::Native
    } else {
        Digits::Ascii
    };
    let worded: Option<Vec<Worded>> = args.language.map(|language| {
        output
            .results
            .iter()
            .map(|e| Worded::of(e, &catalogue, language, digits))
            .collect()
    });
    match args.format {
        Format::Json => {
            let mut json = serde_json::to_value(&output)?;
            if let (Some(worded), Some(results)) = (worded, json["results"].as_array_mut()) {
                for (result, words) in results.iter_mut().zip(worded) {
                    result["words"] = serde_json::to_value(words)?;
                }
            }
            println!("{}", serde_json::to_string_pretty(&json)?);
        }
        Format::Table => print_table(&output, worded.as_deref()),
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(output: &Output<'_>, worded: Option<&[Worded]>) {
    println!(
        "as of {}: {} scheme(s) evaluated",
        output.as_of,
        output.results.len()
    );
    println!(
        "{:<44} {:<14} {:>5} {:>7}  WHAT NEXT",
        "SCHEME", "VERDICT", "SCORE", "MATCHED"
    );
    for (i, e) in output.results.iter().enumerate() {
        let (language, first) = match worded.map(|w| &w[i]) {
            Some(w) => (w.language, w.next_steps.first().cloned()),
            None => (Language::En, e.next_steps.first().map(ToString::to_string)),
        };
        // Answers could still make it ELIGIBLE: say so before the first question.
        let next = match (e.could_become_eligible, first) {
            (true, Some(step)) => explain::need_to_know(language, &step),
            (_, step) => step.unwrap_or_default(),
        };
        println!(
            "{:<44} {:<14} {:>5} {:>7}  {}",
            truncate(e.scheme_id, 44),
            e.verdict.name(),
            e.match_score,
            format!("{}/{}", e.matched_conditions, e.total_conditions),
            truncate(&next, 90)
        );
    }
    for n in &output.not_applicable {
        println!(
            "{:<44} {:<14}  {}",
            truncate(n.scheme_id, 44),
            "NOT_APPLICABLE",
            serde_json::to_string(&n.why).unwrap_or_default()
        );
    }
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        text.chars().take(width - 1).chain(['…']).collect()
    }
}
