//! Explanations of one eligibility evaluation, in English and twelve Indian languages, that
//! Oracle-A can check.
//!
//! Pure: no I/O, no clock, no randomness. The verdict is the engine's; this crate only words it.
//!
//! # Components
//!
//! - [`facts`](facts()): an [`engine::Evaluation`] becomes [`Facts`], an ordered list of fact
//!   sentences in one [`Language`]: the verdict, the score, each evaluated condition, each
//!   exclusion that bars the citizen, each gap and the benefit (amounts as `₹1,50,000`, through
//!   [`engine::format`]). Nothing is said that the evaluation does not say.
//! - [`Language`]: English and the twelve most spoken scheduled languages, each a data file of
//!   words (`languages/<code>.yaml`, read by `words`; docs/languages.md) that `phrasing` fills
//!   in; `values` renders field values (units, dates, yes/no, lists, coded values) for any;
//!   [`Digits`]: ASCII or the script's own digits.
//! - [`summary`] / [`next_steps`]: the evaluation's summary and next steps in any language.
//! - [`template`]: the deterministic explanation, a subset of the facts joined into sentences,
//!   which passes Oracle-A by construction.
//! - [`oracle_case`] / [`oracle_case_json`]: the Oracle-A [`oracle::Case`] that checks a
//!   candidate explanation (an LLM's answer, or the template) against the facts.
//! - [`unsourced_numbers`]: the numbers of a candidate that no fact contains, which Oracle-A's
//!   "the sentence contains a fact" sourcing lets through.
//! - [`sanitize_profile_text`]: profile strings made safe for an LLM prompt (docs/design.md, "Explanations").
//! - [`prompt`]: the chat messages asking an LLM to repeat the [`key_facts`], and nothing else.
//! - [`describe`] / [`changes`]: a rule's conditions, bars, benefit and documents as sentences,
//!   and what changed between two of its versions (the web pages' scheme explorer).
//! - [`review_sheet`]: one language's sentences rendered from corpus evaluations beside the
//!   English, for a native reviewer (`docs/languages/<code>.md`).

mod facts;
mod language;
mod numbers;
mod oracle_case;
mod phrasing;
mod prompt;
mod rule_text;
mod sanitize;
mod sheet;
mod steps;
mod template;
mod values;
mod words;

pub use facts::{Fact, FactKind, Facts, amount, facts, facts_in, reasons, scheme_name_in};
pub use language::{Digits, Language};
pub use numbers::{unsourced_numbers, unsourced_numbers_in};
pub use oracle_case::{
    ADDED_WORDS_MAX, CONTRADICTION_IDS, case_config, oracle_case, oracle_case_json,
};
pub use prompt::{ChatMessage, KEY_FACTS, Role, key_facts, max_tokens, prompt};
pub use rule_text::{Line, RuleText, changes, describe, documents};
pub use sanitize::sanitize_profile_text;
pub use sheet::review_sheet;
pub use steps::{need_to_know, next_steps, summary};
pub use template::template;
pub use words::fill;
