//! The eligibility engine: pure, deterministic, no I/O and no clock (`as_of` is an input).
//!
//! Major components:
//! - [`catalogue`]: the profile fields (data, `schemas/field_catalogue.json`).
//! - [`profile`]: citizen profiles, validated against the catalogue and hashed;
//!   [`profile_text`]: a profile's JSON text read in one pass (the evaluator's way).
//! - [`tree`]: a rule's condition tree; [`truth`]: a tree's three-valued truth for a profile;
//!   [`benefit`]: what a scheme pays, by kind and tier.
//! - [`rule`], [`load`], [`ruleset`]: the rule model, YAML loading with full validation reports
//!   (each document read with its expanded size bounded: [`yaml`]), and choosing the version of
//!   each scheme in effect.
//! - [`temporal`]: effective dates, deadlines and application windows; [`calendar`]: which
//!   schemes' outcomes change from one day to the next with no new data.
//! - [`eval`], [`gaps`], [`next_steps`], [`outcome`]: the scalar evaluator with traces, gaps,
//!   next steps and verdicts (docs/semantics.md, "Evaluation").
//! - [`cases`]: hand-written test citizens for the corpus, with the verdicts the official rules give;
//!   [`corpus`]: the corpus' bookkeeping checks and its coverage per state.
//! - [`program`], [`columns`], [`batch`]: the compiled rule program and the CPU batch evaluator
//!   over profiles in columns (docs/semantics.md, "Batch and incremental evaluation").
//! - [`deps`]: the field → rules dependency index behind incremental re-evaluation.
//! - [`conflicts`]: conflict detection by interval and set reasoning (docs/semantics.md, "Conflicts").
//! - [`hash`]: SHA-256 over RFC 8785 canonical JSON.
//! - [`transitions`]: what changed for a (user, scheme): `new_match`, `lost`, `partial_match`.

pub mod batch;
pub mod benefit;
pub mod calendar;
pub mod cases;
pub mod catalogue;
pub mod columns;
pub mod conflicts;
pub mod corpus;
pub mod date;
pub mod deps;
pub mod error;
pub mod eval;
pub mod format;
pub mod gaps;
pub mod hash;
pub mod load;
pub mod next_steps;
pub mod outcome;
pub mod profile;
pub mod profile_text;
pub mod program;
pub mod rule;
pub mod ruleset;
pub mod temporal;
#[cfg(feature = "test-util")]
pub mod test_util;
pub mod transitions;
pub mod tree;
pub mod truth;
pub mod value;
pub mod yaml;

pub use catalogue::{Catalogue, FieldId, FieldType};
pub use date::Date;
pub use error::{EngineError, Problem, ValidationReport};
pub use eval::{Evaluation, evaluate, outcome};
pub use outcome::{Outcome, Truth, Verdict};
pub use profile::Profile;
pub use rule::Rule;
pub use ruleset::RuleSet;
