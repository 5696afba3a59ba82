//! `eligibility`: the engine's one binary — the command line, the stream workers, the API and
//! the jobs. The binary (`main.rs`) only calls [`cli::run`]; everything lives in this library,
//! so that tests can drive its parts without a process.
//!
//! - `evaluate`: one citizen against the schemes in effect (bundled corpus or `--rules DIR`; no
//!   services needed).
//! - `rules validate | conflicts | hash | cases | simulate | propose | approve | reject |
//!   proposal`: check a rule directory, find conflicts, hash a rule, run its test citizens, the
//!   population diff, and the four-eyes review of a rule change.
//! - `oracle`: run Oracle-A over a test set or one case.
//! - `languages list | sheet`: the languages of explanations, and a review sheet per language.
//! - `schema profile`: print the profile JSON Schema derived from the field catalogue.
//! - `evaluator`: the stream worker ([`evaluator`]); `explainer`: the explanation worker
//!   ([`explainer`]); `migrate`, `topics create`: the set-up jobs; `schema-registry`: the local
//!   registry (development default); `replay`: backfill ([`replay`]); `sweep`: the daily
//!   calendar sweep; `audit verify | export`: re-derive recorded evaluations, export old months; `api serve`: the HTTP API ([`api`]), `api token`: a
//!   development token.
//!
//! Exit codes: 0 success, 1 bad input or a failed check (with a message naming the problem),
//! 2 a usage error.

pub mod api;
pub mod cli;
pub mod commands;
pub mod evaluator;
pub mod explainer;
pub mod proposals;
pub mod replay;
pub mod rules_source;
pub mod simulate;
