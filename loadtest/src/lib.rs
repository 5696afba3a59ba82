//! Load generation and benchmarks for the eligibility engine.
//!
//! - [`corpus`], [`citizens`]: synthetic scheme corpora and citizens, from the `synth` crate
//!   (which the `eligibility` binary also uses, for a synthetic population).
//! - [`chaos`]: the checker of a chaos run (stores, cache and events against what was sent).
//! - [`cpu`]: the CPU each part of the box has used (a fleet bench's CPU per update).
//! - [`retention`]: deletes the records an evaluator group has committed from the local broker
//!   during a benchmark, so that its fetches stay as cheap as a production broker's.
//! - `zen` (feature `zen`): the same rules as a zen-engine decision graph, for the side-by-side
//!   benchmark.
//!
//! Binaries: `synth` writes corpora and citizens to disk; `bench` runs the engine benchmarks.

pub mod chaos;
pub mod cpu;
pub mod retention;
#[cfg(feature = "zen")]
pub mod zen;

pub use synth::{STATE_POPULATION_LAKHS, STATES, citizens, corpus};
