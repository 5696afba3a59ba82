//! `eligibility languages`: the languages of explanations, and a review sheet per language for
//! a native speaker (docs/languages.md, "Review sheets").

use anyhow::Result;
use clap::Subcommand;
use explain::{Language, review_sheet};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum LanguagesCommand {
    /// List the languages: code, name and review status.
    List,
    /// Print a language's review sheet (Markdown): its sentences rendered from corpus
    /// evaluations beside the English (what `docs/languages/<code>.md` holds).
    Sheet {
        /// The language's code (hi, kn, ur…).
        code: Language,
    },
}

pub fn run(command: LanguagesCommand) -> Result<ExitCode> {
    match command {
        LanguagesCommand::List => {
            for language in Language::ALL {
                println!(
                    "{}\t{}\t{}",
                    language.code(),
                    language.name(),
                    language.review()
                );
            }
        }
        LanguagesCommand::Sheet { code } => print!("{}", review_sheet(code)),
    }
    Ok(ExitCode::SUCCESS)
}
