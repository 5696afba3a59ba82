//! Oracle-A: a deterministic checker for LLM explanations.
//!
//! Implements the contract of docs/oracle.md (RULE-PREC-001..005 for Q-INV-01,
//! RULE-CONT-001..003 for Q-INV-03); the sections below fix every matching
//! choice. Pure: no I/O, no clock, no randomness; the same case
//! always gives the same report, byte for byte once serialised.
//!
//! # Public API
//!
//! - [`Case`] ([`Case::from_json`]) with [`Expected`] and [`CaseConfig`]; the
//!   fallback configuration is [`OracleConfig`] (UNSUPPORTED_MAX 0, no ADDED_WORDS_MAX).
//! - [`check`]`(&Case) -> CaseReport` and [`check_with`]`(&Case, &OracleConfig)`.
//! - [`CaseReport`] `{id, verdict, rules, errors}` made of [`RuleReport`]
//!   `{rule_id, invariant, verdict, violations, evidence}`, [`Violation`],
//!   [`Evidence`] and [`ConfigError`]; all `Serialize` with stable field order.
//! - [`run_testset`]`(&str) -> TestsetOutcome` (and [`run_testset_with`]) for an
//!   NDJSON test set: one [`Entry`] per non-blank line ([`CaseOutcome`] or
//!   [`InputError`]) and a [`Summary`]. `Display` on [`Entry`] gives one line
//!   per case and on [`Summary`] the summary line; [`Summary::is_clean`] is what
//!   a command line should exit on.
//!
//! # Components
//!
//! Bottom-up: `rule_id` (the published ids and their invariants), `normalise`
//! (lower-case, collapse, trim; keeps a byte map to the original text),
//! `sentences` (splitting), `report`, `case`, `rules` (one module per rule
//! family) and `testset`.
//!
//! # Semantics
//!
//! - **Normalisation** (every rule, facts, output and patterns alike):
//!   `str::to_lowercase` (full Unicode mapping, final sigma included),
//!   whitespace runs collapsed to one space, trimmed. Devanagari has no case and
//!   is compared as is.
//! - **Sentences** (PREC-001/004): the normalised output split on `.`, `!`, `?`,
//!   except a `.` directly between two numeric characters (`char::is_numeric`,
//!   so `1.8` and `१.८` stay whole); fragments trimmed, empty ones dropped. A
//!   sentence is sourced by the first non-empty normalised fact (in order) that
//!   contains it or that it contains. Facts are not stripped of punctuation: a
//!   fact `"your age is 68."` sources the sentence `your age is 68` (it contains
//!   it) but not `so your age is 68` (neither contains the other).
//! - **RULE-PREC-001** FAILs iff the number of unsourced sentences exceeds
//!   UNSUPPORTED_MAX (the case's `config`, else [`OracleConfig`]); one violation
//!   with the count.
//! - **RULE-PREC-004** FAILs iff at least one sentence is unsourced, with one
//!   violation per unsourced sentence. The threshold belongs to PREC-001 only;
//!   PREC-004 (each factual claim must be derivable from a fact) has none
//!   (docs/oracle.md). So UNSUPPORTED_MAX > 0 relaxes PREC-001 alone and a
//!   case with any unsourced claim still FAILs overall, through PREC-004.
//! - **RULE-PREC-005** (only where ADDED_WORDS_MAX is set, by the case's `config` or the
//!   [`OracleConfig`]) FAILs iff a sentence adds more than ADDED_WORDS_MAX words to the facts:
//!   a sentence inside a fact adds none; otherwise every occurrence of every fact it contains
//!   is removed (longest first) and the remaining runs holding a letter or digit are counted.
//!   PREC-004 sources a sentence that contains a fact whatever else it says; PREC-005 bounds
//!   what else. Added in 2026-11 as a new id (published rules keep their meaning) after real
//!   answers showed the hole (docs/oracle.md, "RULE-PREC-005").
//! - **RULE-PREC-002/003**: each pattern is normalised and searched as a
//!   substring of the normalised output; evidence gives the first occurrence.
//!   A pattern that normalises to the empty string is a [`ConfigError`] (it
//!   would match every output) and is not checked.
//! - **RULE-CONT-001/002/003**: each id in `expected.contradiction_ids` names a
//!   predefined pair; each term is searched as a whole word (UAX #29 word
//!   boundaries over the normalised output: `invalid` is not `valid`, but note
//!   `true_false` and `true.false` are single words). A pair is a contradiction
//!   iff both terms occur. The three rules share one detection (docs/oracle.md),
//!   so all three FAIL on exactly the same pairs and differ only in id and wording (CONT-003 states
//!   which term comes first). An unknown id is a [`ConfigError`].
//! - **Case verdict**: FAIL iff any rule FAILs or there is a configuration
//!   error. Configuration errors do not make a rule FAIL; they are listed in
//!   `errors` and recorded as evidence of the rules concerned.
//! - **Offsets** in evidence and messages are byte offsets into
//!   `candidate_output` exactly as given.

mod case;
mod normalise;
mod report;
mod rule_id;
mod rules;
mod sentences;
mod testset;

pub use case::{Case, CaseConfig, Expected, OracleConfig};
pub use report::{
    CaseReport, ConfigError, Evidence, MatchDirection, RuleReport, Source, TermHit, Verdict,
    Violation,
};
pub use rule_id::{Q_INV_01, Q_INV_03, RuleId};
pub use testset::{
    Agreement, CaseOutcome, Entry, InputError, Summary, TestsetOutcome, run_testset,
    run_testset_with,
};

/// Checks one case with the default [`OracleConfig`].
pub fn check(case: &Case) -> CaseReport {
    check_with(case, &OracleConfig::default())
}

/// Checks one case; the case's `config` takes precedence over `oracle`.
pub fn check_with(case: &Case, oracle: &OracleConfig) -> CaseReport {
    let mut errors = Vec::new();
    let rules = rules::evaluate(
        case,
        case.unsupported_max(oracle),
        case.added_words_max(oracle),
        &mut errors,
    );
    let verdict = if errors.is_empty() && rules.iter().all(|r| r.verdict == Verdict::Pass) {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    CaseReport {
        id: case.id.clone(),
        verdict,
        rules,
        errors,
    }
}
