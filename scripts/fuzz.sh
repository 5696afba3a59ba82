#!/usr/bin/env bash
# Fuzzing (docs/reliability.md, "Fuzzing"): the cargo-fuzz targets of fuzz/ on the nightly toolchain.
#   scripts/fuzz.sh smoke [SECONDS]   each target for SECONDS (default 30) from its seeds, in a
#                                     scratch corpus (what scripts/test.sh runs)
#   scripts/fuzz.sh run SECONDS       each target for SECONDS on fuzz/corpus/<target>, which grows
#                                     across runs and is not in the repository
# Prints each target's executions and the total. A crash fails the run and leaves its input in
# fuzz/artifacts/<target>/: turn it into a regression test. Without a nightly toolchain (cargo-fuzz
# needs one) the run is skipped and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-smoke}
seconds=${2:-30}
case "$mode" in smoke|run) ;; *) echo "usage: scripts/fuzz.sh smoke|run [SECONDS]" >&2; exit 2 ;; esac
targets=(rule_yaml profile_eval oracle_case avro_input)

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: SKIPPED -- no nightly toolchain (cargo-fuzz needs one: rustup toolchain install nightly)"
  exit 0
fi
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz --version 0.13.2
total=0
for target in "${targets[@]}"; do
  if [ "$mode" = smoke ]; then
    corpus=$(mktemp -d)
  else
    corpus="$PWD/fuzz/corpus/$target"
    mkdir -p "$corpus"
  fi
  [ -n "$(ls -A "$corpus")" ] || cp -r "fuzz/seeds/$target/." "$corpus/"
  log=$(mktemp)
  if ! (cd fuzz && cargo +nightly fuzz run -O "$target" "$corpus" -- \
      -max_total_time="$seconds" -max_len=65536 -print_final_stats=1) >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $target failed (a crash leaves its input in fuzz/artifacts/$target/)" >&2
    exit 1
  fi
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  echo "fuzz: $target: ${runs:-?} executions in ${seconds} s, no crash"
  total=$((total + ${runs:-0}))
  rm -f "$log"
  if [ "$mode" = smoke ]; then rm -rf "$corpus"; fi
done
echo "fuzz: ${total} executions in all"
