//! `eligibility`: the engine's command line, on its embedded default (no services needed). The
//! binary (`main.rs`) only calls [`cli::run`]; everything lives in this library, so that tests
//! can drive its parts without a process.
//!
//! - `evaluate`: one citizen against the schemes in effect (bundled corpus or `--rules DIR`).
//! - `rules validate | conflicts | hash`: check a rule directory, find conflicts, hash a rule.
//! - `oracle`: run Oracle-A over a test set or one case.
//! - `schema profile`: print the profile JSON Schema derived from the field catalogue.
//! - `evaluator`: the stream worker ([`evaluator`]); `explainer`: the explanation worker
//!   ([`explainer`]); `migrate`, `topics create`: the set-up jobs; `schema-registry`: the local
//!   registry (development default); `replay`: backfill ([`replay`]); `sweep`: the daily
//!   calendar sweep; `audit verify`: re-derive recorded evaluations; `api serve`: the HTTP API ([`api`]), `api token`: a
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
