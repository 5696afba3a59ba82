//! What the `eligibility` binary's integration tests drive directly, without a process:
//! the explainer worker ([`explainer`]), whose per-event logic ([`explainer::explain`]) is
//! tested against a scripted OpenAI-compatible server (tests/explainer.rs). The rest of the
//! command line lives in the binary (`main.rs`).

pub mod explainer;
