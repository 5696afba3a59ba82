//! `eligibility`: the engine's one binary — the command line, the stream workers, the API and
//! the jobs. The binary (`main.rs`) only calls [`cli::run`]; everything lives in this library,
//! so that tests can drive its parts without a process.
//!
//! Read it bottom-up (imports point down, never back up; `scripts/check-imports.py`):
//!
//! - [`clock`]: today's date; [`spread`]: a batch's work on every core.
//! - [`rules`]: rules as the fleet holds them — from a directory or the bundled corpus, the
//!   rule store in PostgreSQL, the compiled book in effect, a rule change's population diff and
//!   its four-eyes review.
//! - [`users`]: users as stored — their profile and verdicts, read back from PostgreSQL.
//! - [`citizen`]: one citizen against every scheme in effect (the CLI's `evaluate`, the API's
//!   anonymous check).
//! - [`evaluator`]: the stream worker, which alone writes users; [`replay`]: its pipeline over a
//!   range of an input topic (backfill).
//! - [`explainer`]: the explanation worker.
//! - [`screening`]: the adaptive screener's logic (answers to a profile, the next question).
//! - [`api`]: the HTTP API, and the web pages it serves under `/` (explorer, screener).
//! - [`cli`]: one file per subcommand — `evaluate`, `rules validate | conflicts | hash | cases |
//!   simulate | propose | approve | reject | proposal`, `oracle`, `languages list | sheet`,
//!   `schema profile`, `evaluator`, `explainer`, `migrate`, `topics create`,
//!   `schema-registry`, `replay`, `sweep`, `audit verify | export`, `api serve | token`,
//!   `demo`. Nothing else imports it.
//!
//! Exit codes: 0 success, 1 bad input or a failed check (with a message naming the problem),
//! 2 a usage error.

pub mod api;
pub mod citizen;
pub mod cli;
pub mod clock;
pub mod evaluator;
pub mod explainer;
pub mod replay;
pub mod rules;
pub mod screening;
pub mod spread;
pub mod users;
