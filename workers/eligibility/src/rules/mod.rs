//! Rules as the fleet holds them, shared by the evaluator, the API and the jobs.
//!
//! - [`source`]: rules from a directory or the bundled corpus (the command line).
//! - [`store`]: the rule versions in PostgreSQL (`eligibility_rules`).
//! - [`book`]: the rules in effect, compiled, as a worker or the API holds them.
//! - [`names`]: rule and scheme ids held once.
//! - [`simulate`]: a rule change's population diff; [`proposals`]: the four-eyes review of a
//!   rule change (docs/releases.md); [`jobs`]: diffs queued off the API's request path.

pub mod book;
pub mod jobs;
pub mod names;
pub mod proposals;
pub mod simulate;
pub mod source;
pub mod store;
