#!/usr/bin/env bash
# The chaos run (docs/reliability.md, "Chaos run"): the fleet on the local stack under injected
# faults, then a check of everything it stored and published.
#   scripts/chaos.sh small   2,000 citizens, 24,000 updates at 400/s, a kill every 3 s (CI)
#   scripts/chaos.sh full    100,000 citizens, 1,000,000 updates at 2,000/s, a kill every 10 s
# Two evaluators and an explainer run on a fresh database, the broker on durable storage
# (ELIGIBILITY_STACK_BROKER_STORAGE=sqlite: a SQLite file, kept across the broker's restart). `fleet_traffic chaos` creates the citizens,
# sends the updates and three new versions of a central rule, then waits until the fleet has
# consumed everything and runs the checker (loadtest/src/chaos.rs). While the updates are sent,
# on a fixed schedule: a worker is killed with SIGKILL (the evaluators and the explainer in
# turn) and restarted every CHAOS_KILL_EVERY seconds; PostgreSQL is stopped (fast shutdown, then
# later immediate) and started again; Redis is stopped for CHAOS_REDIS_DOWN seconds and comes
# back empty; the broker is stopped and started on its storage; the schema registry is away for
# 15 s. After each fault the time until both evaluators answer /readyz 200 again is printed.
# Overrides: CHAOS_USERS, CHAOS_UPDATES, CHAOS_RATE, CHAOS_KILL_EVERY, CHAOS_REDIS_DOWN,
# CHAOS_PROFILE (debug | release; default debug for small, release for full), CHAOS_BROKER_STORAGE
# (sqlite, the default, or postgres — both durable, emptied first; the PostgreSQL-backed broker
# created ~54 citizens/s here, too slow for the full size; memory: then the broker is not
# restarted).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-small}
case "$size" in
  small) users=2000 updates=24000 rate=400 kill_every=3 redis_down=10 profile=debug ;;
  full) users=100000 updates=1000000 rate=2000 kill_every=10 redis_down=60 profile=release ;;
  *) echo "usage: scripts/chaos.sh small|full" >&2; exit 2 ;;
esac
users=${CHAOS_USERS:-$users}
updates=${CHAOS_UPDATES:-$updates}
rate=${CHAOS_RATE:-$rate}
kill_every=${CHAOS_KILL_EVERY:-$kill_every}
redis_down=${CHAOS_REDIS_DOWN:-$redis_down}
profile=${CHAOS_PROFILE:-$profile}
broker_storage=${CHAOS_BROKER_STORAGE:-sqlite}

flag=""; [ "$profile" = release ] && flag="--release"
echo "== building ($profile)"
cargo build $flag --locked -p eligibility -p loadtest --bin eligibility --bin fleet_traffic
bin="${CARGO_TARGET_DIR:-$PWD/target}/$profile"
export ELIGIBILITY_STACK_BIN="$bin/eligibility"
export ELIGIBILITY_STACK_BROKER_STORAGE=$broker_storage
state="${ELIGIBILITY_STACK_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/eligibility-stack}"
stack_up() { scripts/stack.sh up >/dev/null 2>&1 || scripts/stack.sh up >&2; }
pid_of() { cat "$state/$1" 2>/dev/null || true; }
echo "== local stack, broker storage: $broker_storage"
stack_up
if [ "$broker_storage" != memory ]; then
  # An empty log: a durable broker slows down as its storage grows across runs.
  kill -TERM "$(pid_of broker/nisshi.pid)" 2>/dev/null || true
  sleep 2
  if [ "$broker_storage" = postgres ]; then
    PGPASSWORD=eligibility psql -X -q -h 127.0.0.1 -U eligibility -d eligibility \
      -c "DROP DATABASE IF EXISTS nisshi WITH (FORCE)"
  else
    rm -f "$state/broker/nisshi.db" "$state/broker/nisshi.db-wal" "$state/broker/nisshi.db-shm"
  fi
  stack_up
fi
eval "$(scripts/stack.sh env)"

db=eligibility_chaos
PGPASSWORD=eligibility psql -X -q -h 127.0.0.1 -U eligibility -d eligibility \
  -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
export ELIGIBILITY_DATABASE_URL="postgres://eligibility:eligibility@127.0.0.1:5432/$db?sslmode=disable"
group="chaos-$(date +%s)"
"$bin/fleet_traffic" prepare --group "$group" >/dev/null
logs=target/chaos && mkdir -p "$logs"
rm -f "$logs"/*.log "$logs"/over-*

# Workers: evaluator 0, evaluator 1, the explainer; each restarted where a platform would.
roles=(evaluator evaluator explainer)
ports=(9471 9472 9473)
pids=(0 0 0)
start_worker() {
  local i=$1
  ELIGIBILITY_CONSUMER_GROUP="$([ "${roles[$i]}" = evaluator ] && echo "$group" || echo "$group-explainer")" \
    ELIGIBILITY_HTTP_ADDR="127.0.0.1:${ports[$i]}" ELIGIBILITY_LOG=info \
    "$bin/eligibility" "${roles[$i]}" >>"$logs/worker-$i.log" 2>&1 &
  pids[$i]=$!
}
stop_workers() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  local t=$SECONDS
  for p in "${pids[@]}"; do
    while kill -0 "$p" 2>/dev/null && [ $((SECONDS - t)) -lt 60 ]; do sleep 0.5; done
    if kill -0 "$p" 2>/dev/null; then
      echo "chaos: pid $p still running 60 s after SIGTERM; killed" | tee -a "$logs/faults.log" >&2
      kill -9 "$p" 2>/dev/null || true
    fi
    wait "$p" 2>/dev/null || true
  done
}
trap 'stop_workers; [ -n "${traffic:-}" ] && kill "$traffic" 2>/dev/null || true' EXIT
for i in 0 1 2; do start_worker "$i"; done

# An evaluator answers /readyz 200 (with one killed every few seconds, both rarely are at once).
ready() { curl -fs -o /dev/null "http://127.0.0.1:${ports[0]}/readyz" || curl -fs -o /dev/null "http://127.0.0.1:${ports[1]}/readyz"; }
# recovered NAME: after a fault is over, the seconds until an evaluator is ready again.
recovered() {
  local name=$1 t0=$SECONDS
  until ready; do
    sleep 0.5
    if [ $((SECONDS - t0)) -gt 300 ]; then echo "chaos: $name: not ready after 300 s" >&2; return 1; fi
  done
  echo "chaos: $name: an evaluator ready again $((SECONDS - t0)) s after it ended" | tee -a "$logs/faults.log"
}
marker="$logs/sending"
rm -f "$marker"
rule=schemes/central/pm_kisan.yaml
[ -f "$rule" ] || rule=$(ls schemes/central/*.yaml | head -1)
echo "== traffic: $users citizens, $updates updates at $rate/s, 3 new versions of $(basename "$rule" .yaml)"
"$bin/fleet_traffic" chaos --users "$users" --updates "$updates" --rate "$rate" --rule "$rule" \
  --marker "$marker" --group "$group" 2>&1 | tee "$logs/traffic.log" &
traffic=$!
until [ -f "$marker" ] || ! kill -0 "$traffic" 2>/dev/null; do sleep 0.5; done
echo "== faults (while updates are sent)"
send_seconds=$(( updates / rate ))
t0=$SECONDS kills=0 next_kill=$kill_every victim=0
faults=("postgres_fast" "redis" "broker" "registry" "postgres_immediate")
# A broker in memory loses its topics when it stops: no broker restart then.
[ "$broker_storage" != memory ] || faults=("postgres_fast" "redis" "registry" "postgres_immediate")
nfaults=${#faults[@]}
at=()
for k in $(seq 1 "$nfaults"); do at+=($(( send_seconds * k / (nfaults + 2) ))); done
done_faults=0 fault_pid=""
# inject FAULT: the fault, until the service is back (started again as the platform would).
inject() {
  case "$1" in
    postgres_fast|postgres_immediate)
      pg_ctlcluster -m "${1#postgres_}" 15 main stop >/dev/null 2>&1 || true
      sleep 2
      stack_up ;;
    redis)
      redis-cli -p 6379 shutdown nosave >/dev/null 2>&1 || true
      sleep "$redis_down"
      stack_up
      redis-cli -p 6379 flushall >/dev/null ;;
    broker)
      kill -TERM "$(pid_of broker/nisshi.pid)" 2>/dev/null || true
      sleep 2
      stack_up ;;
    registry)
      kill -TERM "$(pid_of schema-registry/registry.pid)" 2>/dev/null || true
      sleep 15
      stack_up ;;
  esac
}
exits=0
while [ -f "$marker" ]; do
  now=$((SECONDS - t0))
  # A worker that stopped by itself is restarted, as the platform would, and counted: it
  # should wait a dependency out, not exit.
  for i in 0 1 2; do
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
      wait "${pids[$i]}" 2>/dev/null || true
      exits=$((exits + 1))
      echo "chaos: +${now}s ${roles[$i]} $i exited by itself; restarted. Its last words: $(tail -1 "$logs/worker-$i.log" | cut -c1-300)" | tee -a "$logs/faults.log"
      start_worker "$i"
    fi
  done
  if [ "$now" -ge "$next_kill" ]; then
    kill -9 "${pids[$victim]}" 2>/dev/null || true
    wait "${pids[$victim]}" 2>/dev/null || true
    kills=$((kills + 1))
    echo "chaos: +${now}s kill -9 ${roles[$victim]} $victim (kill $kills)" >>"$logs/faults.log"
    start_worker "$victim"
    victim=$(( (victim + 1) % 3 ))
    next_kill=$((next_kill + kill_every))
  fi
  # One fault at a time, in the background (the kills go on meanwhile); the next may start
  # once the previous one is over, while its recovery is still being timed.
  if [ "$done_faults" -lt "$nfaults" ] && [ "$now" -ge "${at[$done_faults]}" ] \
      && { [ -z "$fault_pid" ] || [ -f "$logs/over-$((done_faults - 1))" ]; }; then
    fault=${faults[$done_faults]}
    echo "chaos: +${now}s $fault" | tee -a "$logs/faults.log"
    ( inject "$fault"; touch "$logs/over-$done_faults"; recovered "$fault" || true ) &
    fault_pid=$!
    done_faults=$((done_faults + 1))
  fi
  sleep 0.5
done
[ -z "$fault_pid" ] || wait "$fault_pid" || true   # the last fault and its recovery
echo "chaos: $kills kills and $done_faults other faults while the updates were sent" | tee -a "$logs/faults.log"
rc=0
wait "$traffic" || rc=$?
traffic=""
echo "== faults"
cat "$logs/faults.log" | grep -v "kill -9" || true
echo "kills: $kills; workers that exited by themselves: $exits (workers' logs: $logs/worker-*.log)"
# A worker stops by itself only for what waiting cannot cure (a Kafka client in a fatal state
# needs a new one); more than a few such exits is a crash loop.
if [ "$exits" -gt 3 ]; then echo "chaos: FAILED -- workers exited $exits times: a crash loop" >&2; rc=1; fi
exit "$rc"
