#!/usr/bin/env bash
# The project's test command (README, `.ci/run`): formatting, lints, the local stack
# (scripts/stack.sh: PostgreSQL, Redis, the Kafka-protocol broker, the schema registry, topics),
# every Rust test (the end-to-end ones talk to that stack), and the deployment checks (helm,
# kubernetes-validate, promtool, dashboards, metric names against a real worker's /metrics).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== local stack"
cargo build --locked -p eligibility
ELIGIBILITY_STACK_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/eligibility" scripts/stack.sh up
echo "== cargo test"
cargo test --workspace --locked
echo "== deployment checks"
# Dashboards and alerts are checked against docs/metrics.md; the end-to-end tests check that the
# workers' real /metrics has every name that page promises for them.
scripts/check-deploy.sh
