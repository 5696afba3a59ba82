#!/usr/bin/env bash
# The GPU check in one go (kernels/README.md, "On a GPU machine"), in two halves:
#
#   kernels/bench/device-check.sh prepare   # here, with cargo: builds the binaries with
#                                           # --features gpu into target/device-check/ (stripped)
#   kernels/bench/device-check.sh run [OUT] # on the GPU machine, from the repository root, with
#                                           # target/device-check/ carried there
#
# `run` needs libcuda (the driver) and the CUDA toolkit's libnvrtc (found under / and put on the
# library path); compute-sanitizer and a python3 with CuPy are used when present. It runs, each
# under a time limit so the whole stays under 6 minutes on an H100:
#   1. gpu_parity: GPU == host model == scalar in every output form, in chunks, on kept and
#      patched columns; GPU == CPU batch on 1M × 200;
#   2. compute-sanitizer memcheck on the two property tests (few cases: it is ~50× slower);
#   3. gpu_bench 1M × 1,000 with chunks of 250,000, the CuPy baseline side by side, and the
#      small-batch ladder that sets ELIGIBILITY_GPU_MIN_PAIRS;
# then prints one summary (PASS/FAIL per step and the bench's summary lines). Logs go to OUT
# (default: target/device-check/out). Exit status: 0 when every step that ran passed.
set -uo pipefail

here=target/device-check

prepare() {
    set -e
    mkdir -p "$here"
    cargo build --release --locked -p loadtest --features gpu --bin gpu_bench
    local parity
    parity=$(cargo test --release --locked -p kernels --features gpu --test gpu_parity --no-run \
        --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "gpu_parity" and m.get("executable"):
        print(m["executable"])')
    cp target/release/gpu_bench "$here/gpu_bench"
    cp "$parity" "$here/gpu_parity"
    strip "$here/gpu_bench" "$here/gpu_parity"
    ls -l "$here"
    echo "carry $here to the GPU machine and run: kernels/bench/device-check.sh run"
}

run() {
    local out=${1:-$here/out}
    mkdir -p "$out"
    local nvrtc
    nvrtc=$(find / -name 'libnvrtc.so*' -not -path '/proc/*' 2>/dev/null | head -1)
    [ -n "$nvrtc" ] && export LD_LIBRARY_PATH="$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    local sanitizer
    sanitizer=$(command -v compute-sanitizer || find / -name compute-sanitizer -type f -not -path '/proc/*' 2>/dev/null | head -1)
    local summary=() failed=0
    step() { # name, seconds, command...
        local name=$1 limit=$2
        shift 2
        local started=$SECONDS
        if timeout "$limit" "$@" >"$out/$name.log" 2>&1; then
            summary+=("PASS $name ($((SECONDS - started)) s)")
        else
            summary+=("FAIL $name (exit $?, $((SECONDS - started)) s; log: $out/$name.log)")
            failed=1
        fi
    }
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1 ||
        echo "no nvidia-smi" >"$out/gpu.txt"

    step parity 100 "$here/gpu_parity" --test-threads 1 --nocapture
    if grep -q "skipping GPU parity" "$out/parity.log"; then
        summary+=("FAIL parity: no usable GPU, the tests skipped ($(grep -m1 'skipping GPU parity' "$out/parity.log"))")
        failed=1
    fi
    if [ -n "$sanitizer" ]; then
        step memcheck 110 env PROPTEST_CASES=4 "$sanitizer" --tool memcheck --error-exitcode 1 \
            "$here/gpu_parity" gpu_equals_host_model_and_scalar patched_columns_on_the_gpu_equal_the_host \
            --test-threads 1
    else
        summary+=("SKIP memcheck (no compute-sanitizer)")
    fi
    local cupy=()
    if python3 -c 'import cupy' 2>/dev/null; then
        cupy=(--export /tmp/el_export --cupy-python python3)
    else
        summary+=("SKIP the CuPy baseline (no python3 with CuPy)")
    fi
    step bench 150 "$here/gpu_bench" --engine gpu --citizens 1000000 --rules 1000 \
        --chunk-citizens 250000 "${cupy[@]}"

    echo "== device check on $(cat "$out/gpu.txt")"
    printf '%s\n' "${summary[@]}"
    grep -h "test result\|panicked\|minimal failing" "$out/parity.log" 2>/dev/null | head -5
    grep -h "ERROR SUMMARY" "$out/memcheck.log" 2>/dev/null
    grep -h "^summary\|^vs CuPy\|^small batch\|^auto threshold\|parity" "$out/bench.log" 2>/dev/null
    return $failed
}

case "${1:-}" in
prepare) prepare ;;
run) run "${2:-}" ;;
*)
    echo "usage: $0 prepare | run [OUT]" >&2
    exit 2
    ;;
esac
