//! Users as stored: their profile and verdicts, shared by the evaluator (which writes them),
//! the rule changes, the API and the jobs (which read them).
//!
//! - [`state`]: what the store knows of one user, and what a batch changed of it.
//! - [`verdicts`]: a user's stored verdicts, by scheme.
//! - [`store`]: reading users back from PostgreSQL; the verdicts' packed form.

pub mod state;
pub mod store;
pub mod verdicts;
