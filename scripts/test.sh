#!/usr/bin/env bash
# The project's test command (README, `.ci/run`): formatting, lints, every Rust test, and the
# deployment checks (helm, kubernetes-validate, promtool, dashboards, metric names).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked
echo "== deployment checks"
scripts/check-deploy.sh
