#!/usr/bin/env bash
# README command 1: the evaluator fleet on the local stack.
#   scripts/fleet.sh [demo]   sample traffic (the example citizens), printing the events published,
#                             then an explainer's English explanations of the matches, worded by
#                             the stack's local model where Oracle-A accepts them (FLEET_DEMO_
#                             EXPLANATIONS_S, default 300: how long to wait for them; 0: none)
#   scripts/fleet.sh bench    throughput: bundled corpus + 1,000 synthetic schemes, N citizens,
#                             then profile updates end to end at each offered rate
#                             (FLEET_BENCH_USERS, FLEET_BENCH_UPDATES for the saturation phase,
#                             FLEET_BENCH_RATES, default 100,1000,0; 0 = as fast as possible;
#                             FLEET_BENCH_WORKLOAD wide|drift: what an update does to income;
#                             FLEET_BENCH_WARMUP=N: N updates at full speed first, reported
#                             apart as "warm-up"; FLEET_BENCH_SECONDS: a paced phase's length
#                             (default 10, at most FLEET_BENCH_UPDATES updates);
#                             FLEET_BENCH_EVALUATORS, default "1 2 4": one run per evaluator count;
#                             after each, every evaluator's rules held, resident memory and
#                             CPU, and the local broker's and PostgreSQL's CPU over the run;
#                             FLEET_BENCH_BASELINE=<an earlier eligibility binary>: each count is
#                             run with it first, then with this build, for a side-by-side ratio;
#                             FLEET_BENCH_FRESH_BROKER=1: restart the in-memory broker before each
#                             run; FLEET_EVALUATOR_ARGS: extra flags for each evaluator;
#                             FLEET_BENCH_KEEP_RECORDS set (non-empty): keep every record on the
#                             broker (by default the bench deletes what the group committed
#                             and the events the evaluators published, once read, every
#                             second: the local broker slows as its partitions grow))
#   scripts/fleet.sh rule-change   bundled corpus, N citizens (FLEET_BENCH_USERS, default 100,000),
#                             then a new version of a central rule (FLEET_BENCH_RULE): time to
#                             re-evaluate every citizen end to end (FLEET_BENCH_EVALUATORS,
#                             default 1: one run per evaluator count; the rule's copies are
#                             re-evaluated by each partition's owner in parallel)
#   scripts/fleet.sh sweep    bundled corpus, N citizens (FLEET_BENCH_USERS, default 1,000,000),
#                             then `eligibility sweep --as-of DAY` (FLEET_BENCH_DAY, default
#                             2025-04-01, the day after a central scheme ends): time until the
#                             evaluators re-evaluated every citizen due (FLEET_BENCH_EVALUATORS,
#                             default 1); FLEET_BENCH_PARTS=K creates the citizens in K parts,
#                             each through a fresh broker (the local broker keeps every record
#                             in memory)
#   scripts/fleet.sh api-bench   bundled corpus, N citizens (FLEET_BENCH_USERS, default 100,000)
#                             stored through the fleet, then `eligibility api serve` and wrk
#                             (installed if missing) on GET /api/v1/eligibility/{user_id}: a
#                             first pass reading each user in turn (cache misses, PostgreSQL),
#                             then random users (the cache); requests/s and latency percentiles
#                             (API_BENCH_FIRST_SECONDS for the first pass, default 60, long
#                             enough to read every user once; API_BENCH_SECONDS for the second,
#                             default 30; API_BENCH_CONNECTIONS, 64)
# Each run uses a fresh database (eligibility_demo / eligibility_bench) and a new consumer group
# that starts at the topics' current ends; the worker is stopped (SIGTERM) at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-demo}
case "$mode" in demo|bench|rule-change|api-bench|sweep) ;; *) echo "usage: scripts/fleet.sh [demo|bench|rule-change|api-bench|sweep]" >&2; exit 2 ;; esac

scripts/stack.sh up >/dev/null
eval "$(scripts/stack.sh env)"
echo "== building (release)"
cargo build --release --locked -p eligibility -p loadtest --bin eligibility --bin fleet_traffic --bin synth
bin=target/release

rules_dir() {
  local rules=target/bench-rules
  rm -rf "$rules" && mkdir -p "$rules"
  cp -r schemes/*/ "$rules/"
  "$bin/synth" corpus --count 1000 --out "$rules/synthetic" >/dev/null
  export ELIGIBILITY_RULES_DIR="$rules"
  echo "== rules: $(find "$rules" -name '*.yaml' | wc -l) schemes (bundled + 1,000 synthetic)"
}
[ "$mode" = bench ] && rules_dir
export ELIGIBILITY_LOG="${ELIGIBILITY_LOG:-info}"
workers=()
stop() {
  for w in "${workers[@]}"; do kill -TERM "$w" 2>/dev/null || true; done
  for w in "${workers[@]}"; do wait "$w" 2>/dev/null || true; done
  workers=()
}
trap stop EXIT

# stack_cpu: CPU seconds the local broker and PostgreSQL have used so far, "BROKER PG"
# (PostgreSQL's ended backends included: the postmaster counts its reaped children's time).
stack_cpu() {
  local hz broker postmaster
  hz=$(getconf CLK_TCK)
  broker=$(cat "${ELIGIBILITY_STACK_DIR:-$HOME/.cache/eligibility-stack}/broker/nisshi.pid" 2>/dev/null || true)
  postmaster=$(pgrep -o -x postgres || true)
  awk -v hz="$hz" -v pm="/proc/${postmaster:-0}/stat" -v br="/proc/${broker:-0}/stat" '
    FILENAME == br { b = $14 + $15 }
    FILENAME != br { p += $14 + $15; if (FILENAME == pm) p += $16 + $17 }
    END { printf "%.1f %.1f", b / hz, p / hz }' \
    "/proc/${broker:-0}/stat" $(for pid in $(pgrep -x postgres); do echo "/proc/$pid/stat"; done) 2>/dev/null
}

# run_once N [BIN]: a fresh database and consumer group, N evaluators (BIN, default this build's)
# on it, then the mode's traffic.
run_once() {
  local count=$1 evaluator=${2:-$bin/eligibility} db="eligibility_${mode//-/_}" addrs=()
  if [ -n "${FLEET_BENCH_FRESH_BROKER:-}" ]; then
    # The in-memory broker slows as it fills: each run starts on an empty one, so that runs
    # compared side by side meet the same broker.
    local broker_pid
    broker_pid=$(cat "${ELIGIBILITY_STACK_DIR:-$HOME/.cache/eligibility-stack}/broker/nisshi.pid" 2>/dev/null || true)
    if [ -n "$broker_pid" ]; then kill "$broker_pid" 2>/dev/null || true; while kill -0 "$broker_pid" 2>/dev/null; do sleep 0.2; done; fi
    scripts/stack.sh up >/dev/null
  fi
  if [ -z "${FLEET_KEEP_DB:-}" ]; then
    # An autovacuum worker still busy with the last run's writes cannot be ended by this role
    # (the drop then fails); it is gone a moment later.
    local try
    for try in 1 2 3 4 5 6 7 8 9 10; do
      PGPASSWORD=eligibility psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U eligibility -d eligibility \
        -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" && break
      [ "$try" = 10 ] && { echo "fleet.sh: could not recreate database $db" >&2; exit 1; }
      sleep 1
    done
  fi
  export ELIGIBILITY_DATABASE_URL="postgres://eligibility:eligibility@127.0.0.1:5432/$db?sslmode=disable"
  export ELIGIBILITY_CONSUMER_GROUP="fleet-$mode-$(date +%s)"
  local explain_s=0
  if [ "$mode" = demo ] && [ -n "${ELIGIBILITY_STACK_LLM_BASE_URL:-}" ]; then explain_s=${FLEET_DEMO_EXPLANATIONS_S:-300}; fi
  if [ "$explain_s" != 0 ]; then
    "$bin/fleet_traffic" prepare --group "$ELIGIBILITY_CONSUMER_GROUP" --explainer-group "$ELIGIBILITY_CONSUMER_GROUP-explainer"
  else
    "$bin/fleet_traffic" prepare --group "$ELIGIBILITY_CONSUMER_GROUP"
  fi
  for i in $(seq 0 $((count - 1))); do
    local addr="127.0.0.1:$(( ${FLEET_HTTP_PORT:-9464} + i ))" log="target/fleet-$mode-evaluator-$i.log"
    ELIGIBILITY_HTTP_ADDR="$addr" "$evaluator" evaluator ${FLEET_EVALUATOR_ARGS:-} >"$log" 2>&1 &
    workers+=("$!")
    addrs+=("$addr")
    echo "== evaluator $i pid $! (log $log, metrics http://$addr/metrics)"
  done
  for i in "${!addrs[@]}"; do
    for _ in $(seq 1 120); do
      if curl -sf "http://${addrs[$i]}/readyz" >/dev/null; then break; fi
      kill -0 "${workers[$i]}" 2>/dev/null || { tail -20 "target/fleet-$mode-evaluator-$i.log" >&2; echo "evaluator $i exited" >&2; exit 1; }
      sleep 0.5
    done
    curl -sf "http://${addrs[$i]}/readyz" >/dev/null || { echo "evaluator $i is not ready" >&2; exit 1; }
  done
  export FLEET_METRICS_ADDRS
  FLEET_METRICS_ADDRS=$(IFS=,; echo "${addrs[*]}")
  # The processes whose CPU the bench charges to each update (docs/performance.md, "CPU per
  # update"): the evaluators, and the local broker by its pid file.
  export FLEET_BENCH_EVALUATOR_PIDS FLEET_BENCH_BROKER_PID_FILE
  FLEET_BENCH_EVALUATOR_PIDS=$(IFS=,; echo "${workers[*]}")
  FLEET_BENCH_BROKER_PID_FILE="${ELIGIBILITY_STACK_DIR:-$HOME/.cache/eligibility-stack}/broker/nisshi.pid"
  if [ "$explain_s" != 0 ]; then
    # One explainer, one request at a time against the CPU model (docs/explainer-model.md).
    local log="target/fleet-demo-explainer.log"
    ELIGIBILITY_HTTP_ADDR="127.0.0.1:$(( ${FLEET_HTTP_PORT:-9464} + count ))" \
      ELIGIBILITY_CONSUMER_GROUP="$ELIGIBILITY_CONSUMER_GROUP-explainer" \
      ELIGIBILITY_LLM_BASE_URL="$ELIGIBILITY_STACK_LLM_BASE_URL" ELIGIBILITY_LLM_MODEL="$ELIGIBILITY_STACK_LLM_MODEL" \
      "$bin/eligibility" explainer --languages en --llm-timeout-ms 30000 --llm-concurrency 1 >"$log" 2>&1 &
    workers+=("$!")
    echo "== explainer pid $! (log $log, model $ELIGIBILITY_STACK_LLM_MODEL at $ELIGIBILITY_STACK_LLM_BASE_URL)"
  fi
  if [ "$mode" = demo ]; then
    "$bin/eligibility" demo --explanations-wait-s "$explain_s"
  elif [ "$mode" = api-bench ]; then
    api_bench
  elif [ "$mode" = sweep ]; then
    # A population this large does not fit the local Redis's memory as cache entries (about
    # 30 KB per citizen): for the run, the cache is bounded and evicts the least recently used
    # entries, as a production cache would be sized; the bound is lifted afterwards.
    redis-cli -p "${ELIGIBILITY_STACK_REDIS_PORT:-6379}" config set maxmemory 2gb >/dev/null
    redis-cli -p "${ELIGIBILITY_STACK_REDIS_PORT:-6379}" config set maxmemory-policy allkeys-lru >/dev/null
    case "${SWEEP_PART:-}" in
      "") "$bin/fleet_traffic" sweep --group "$ELIGIBILITY_CONSUMER_GROUP" \
            --users "${FLEET_BENCH_USERS:-1000000}" --day "${FLEET_BENCH_DAY:-2025-04-01}" \
            --eligibility "$bin/eligibility" ;;
      final) "$bin/fleet_traffic" sweep --group "$ELIGIBILITY_CONSUMER_GROUP" --users 0 \
            --day "${FLEET_BENCH_DAY:-2025-04-01}" --eligibility "$bin/eligibility" ;;
      *) "$bin/fleet_traffic" populate --group "$ELIGIBILITY_CONSUMER_GROUP" \
            --first "${SWEEP_PART%%:*}" --users "${SWEEP_PART##*:}" ;;
    esac
    redis-cli -p "${ELIGIBILITY_STACK_REDIS_PORT:-6379}" config set maxmemory 0 >/dev/null
  elif [ "$mode" = rule-change ]; then
    "$bin/fleet_traffic" rule-change --group "$ELIGIBILITY_CONSUMER_GROUP" \
      --users "${FLEET_BENCH_USERS:-100000}" --rule "${FLEET_BENCH_RULE:-schemes/central/ignoaps.yaml}"
    echo "== where the time goes (evaluator histograms)"
    curl -sf "http://${addrs[0]}/metrics" | grep -E '^eligibility_(evaluation_duration_seconds|batch_engine_duration_seconds|store_duration_seconds)_(sum|count)' || true
  else
    echo "== $count evaluator(s) on the 16 partitions ($evaluator)"
    local stack_before
    stack_before=$(stack_cpu)
    "$bin/fleet_traffic" bench --group "$ELIGIBILITY_CONSUMER_GROUP" \
      --users "${FLEET_BENCH_USERS:-2000}" --updates "${FLEET_BENCH_UPDATES:-20000}" \
      --rates "${FLEET_BENCH_RATES:-100,1000,0}" --workload "${FLEET_BENCH_WORKLOAD:-wide}" \
      --warm-up "${FLEET_BENCH_WARMUP:-0}" --seconds "${FLEET_BENCH_SECONDS:-10}" \
      ${FLEET_BENCH_KEEP_RECORDS:+--keep-records}
    # CPU time over the whole run (citizens, warm-up, phases): the same updates for every
    # build, so it compares builds' cost per update where latency is too noisy to.
    echo "== per evaluator: rules held (its partitions' states + central), resident memory, CPU time"
    for i in "${!addrs[@]}"; do
      local held rss cpu
      held=$(curl -sf "http://${addrs[$i]}/metrics" | awk '/^eligibility_rules_held /{print $2}')
      rss=$(ps -o rss= -p "${workers[$i]}" | awk '{printf "%.0f", $1/1024}')
      cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/${workers[$i]}/stat" 2>/dev/null || true)
      echo "evaluator $i: ${held:-?} rules held, ${rss:-?} MiB resident, ${cpu:-?} s CPU"
    done
    # The rest of the box's work for the same run: on a shared machine it is the evaluators'
    # latency too.
    echo "$stack_before $(stack_cpu)" | awk '{printf "stack: broker %.1f s CPU, PostgreSQL %.1f s CPU\n", $3 - $1, $4 - $2}'
  fi
  stop
}

# api_bench: the population through the fleet, then the API under wrk.
api_bench() {
  local users=${FLEET_BENCH_USERS:-100000} first=${API_BENCH_FIRST_SECONDS:-60} seconds=${API_BENCH_SECONDS:-30}
  local connections=${API_BENCH_CONNECTIONS:-64} api=127.0.0.1:8080 metrics=127.0.0.1:9470
  command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
  "$bin/fleet_traffic" populate --group "$ELIGIBILITY_CONSUMER_GROUP" --users "$users"
  export ELIGIBILITY_API_JWT_SECRET="api-bench-secret-of-at-least-32-bytes"
  ELIGIBILITY_API_ADDR=$api ELIGIBILITY_HTTP_ADDR=$metrics \
    ELIGIBILITY_API_RATE_LIMITS="read=100000000/100000000,check=60/60,evaluate=5/3,admin=10/10,public=600/600" \
    "$bin/eligibility" api serve >target/fleet-api-bench-api.log 2>&1 &
  workers+=("$!")
  for _ in $(seq 1 120); do curl -sf "http://$metrics/readyz" >/dev/null && break; sleep 0.5; done
  curl -sf "http://$metrics/readyz" >/dev/null || { tail -20 target/fleet-api-bench-api.log >&2; exit 1; }
  export API_BENCH_TOKEN API_BENCH_USERS=$users API_BENCH_THREADS=2
  API_BENCH_TOKEN=$("$bin/eligibility" api token --role auditor --sub api-bench --ttl 3600)
  cache() { curl -sf "http://$metrics/metrics" | awk '/^eligibility_api_cache_total/{print $1, $2}' | tr '\n' ' '; }
  for pass in sequential random; do
    local duration=$seconds
    [ "$pass" = sequential ] && duration=$first
    echo "== pass: $pass ($users users, $connections connections, ${duration}s); cache before: $(cache)"
    API_BENCH_MODE=$pass wrk -t2 -c"$connections" -d"${duration}s" --latency \
      -s scripts/api_bench.lua "http://$api"
    echo "   cache after: $(cache)"
  done
}

if [ "$mode" = bench ]; then
  for count in ${FLEET_BENCH_EVALUATORS:-1 2 4}; do
    if [ -n "${FLEET_BENCH_BASELINE:-}" ]; then run_once "$count" "$FLEET_BENCH_BASELINE"; fi
    run_once "$count"
  done
elif [ "$mode" = sweep ] && [ "${FLEET_BENCH_PARTS:-1}" -gt 1 ]; then
  # The local broker keeps every record in memory, and creating a citizen publishes about 20
  # events: a large population is created in parts, each through a fresh broker and consumer
  # group into the same database, then swept through another fresh broker.
  per=$(( ${FLEET_BENCH_USERS:-1000000} / FLEET_BENCH_PARTS ))
  for part in $(seq 0 $((FLEET_BENCH_PARTS - 1))); do
    pkill -f "nisshi broker" || true
    scripts/stack.sh up >/dev/null
    SWEEP_PART="$((part * per)):$per" run_once 1
    export FLEET_KEEP_DB=1
  done
  pkill -f "nisshi broker" || true
  scripts/stack.sh up >/dev/null
  SWEEP_PART=final run_once "${FLEET_BENCH_EVALUATORS:-1}"
elif [ "$mode" = rule-change ] || [ "$mode" = sweep ]; then
  for count in ${FLEET_BENCH_EVALUATORS:-1}; do run_once "$count"; done
else
  run_once 1
fi
