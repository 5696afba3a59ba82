#!/usr/bin/env bash
# The project's test command (README, `.ci/run`): formatting, lints, import circles, the local stack
# (scripts/stack.sh: PostgreSQL, Redis, the Kafka-protocol broker, the schema registry, topics,
# the local chat model),
# the CUDA kernels parsed as device code by clang (scripts/check-kernels.sh), every Rust test (the
# end-to-end ones talk to that stack), the deployment checks (helm,
# kubernetes-validate, promtool, dashboards, metric names against a real worker's /metrics), a
# small chaos run (scripts/chaos.sh small: the fleet under injected faults, then checked), the
# supply-chain policy (scripts/deny.sh: cargo deny) and a fuzzing smoke (scripts/fuzz.sh: each
# cargo-fuzz target for 30 s).
set -euo pipefail
cd "$(dirname "$0")/.."
# A test run builds once from scratch: incremental-compilation state would only take disk.
export CARGO_INCREMENTAL=0
# Each step says when it starts, in seconds since the run began: CI allows 90 minutes on 2 cores,
# and docs/testing.md keeps where they go.
stage() { echo "== [${SECONDS} s] $*"; }

stage "cargo fmt --check"
cargo fmt --all --check
stage "import circles between a crate's modules (scripts/check-imports.py; docs/design.md, \"Reading order\")"
python3 scripts/check-imports.py
stage "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
stage "cargo clippy with the GPU launcher (feature gpu: builds without CUDA, never run here)"
cargo clippy --workspace --all-targets --locked --features eligibility/gpu,loadtest/gpu -- -D warnings
stage "CUDA kernels type-checked as device code (scripts/check-kernels.sh: clang, no CUDA needed)"
scripts/check-kernels.sh
stage "local stack"
cargo build --locked -p eligibility
ELIGIBILITY_STACK_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/eligibility" scripts/stack.sh up
eval "$(scripts/stack.sh env)"
stage "cargo test"
cargo test --workspace --locked
stage "deployment checks"
# Dashboards and alerts are checked against the /metrics scrapes the end-to-end tests saved from
# a real evaluator and a real explainer (the tests also check each has every name docs/metrics.md
# promises for it).
scripts/check-deploy.sh --metrics target/e2e-evaluator-metrics.txt --metrics target/e2e-explainer-metrics.txt \
  --metrics target/e2e-api-metrics.txt
stage "chaos run, small (scripts/chaos.sh: kills, PostgreSQL, Redis, broker and registry outages)"
scripts/chaos.sh small
stage "supply chain (cargo deny, deny.toml)"
scripts/deny.sh
stage "fuzzing smoke"
scripts/fuzz.sh smoke 30
stage "all passed"
