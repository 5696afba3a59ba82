#!/usr/bin/env bash
# The supply-chain check (docs/reliability.md, "Supply chain"): `cargo deny check` against the
# policy in deny.toml — licenses, duplicate versions, sources, and RustSec advisories.
# Installs cargo-deny (pinned) once. Advisories are read from RustSec's database, cloned into
# $CARGO_HOME/advisory-dbs by `cargo deny fetch`; where its host cannot be reached and no clone
# is there, the clone is made from the snapshot kept in the repository
# (supply-chain/advisory-db.bundle, its date printed, and its age: a snapshot misses advisories
# published after it). `scripts/deny.sh refresh DIR` replaces that snapshot with the database
# checked out in DIR (a clone of RustSec's advisory-db).
set -euo pipefail
cd "$(dirname "$0")/.."
DENY_VERSION="0.20.2"

if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $DENY_VERSION" ]; then
  echo "deny: installing cargo-deny $DENY_VERSION"
  cargo install --locked cargo-deny --version "$DENY_VERSION" >/dev/null 2>&1 || {
    echo "deny: cargo install cargo-deny $DENY_VERSION failed" >&2; exit 1; }
fi
db_dir="${CARGO_HOME:-$HOME/.cargo}/advisory-dbs"
# The directory cargo-deny reads for RustSec's default URL.
db_clone="$db_dir/advisory-db-3157b0e258782691"
snapshot=supply-chain/advisory-db.bundle

if [ "${1:-}" = refresh ]; then
  source_dir="${2:?usage: scripts/deny.sh refresh DIR (a clone of RustSec advisory-db)}"
  commit=$(git -C "$source_dir" log -1 --format=%H)
  date=$(git -C "$source_dir" log -1 --format=%cI)
  tmp=$(mktemp -d)
  git -C "$source_dir" archive HEAD | tar -x -C "$tmp"
  (cd "$tmp" && git init -q -b main && git add -A &&
    GIT_AUTHOR_NAME=rustsec-snapshot GIT_AUTHOR_EMAIL=snapshot@localhost \
    GIT_COMMITTER_NAME=rustsec-snapshot GIT_COMMITTER_EMAIL=snapshot@localhost \
    GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date" \
    git commit -qm "RustSec advisory-db at $commit ($date), tree only")
  git -C "$tmp" bundle create "$PWD/$snapshot" HEAD main 2>/dev/null
  rm -rf "$tmp"
  echo "deny: $snapshot now holds RustSec advisory-db at $commit ($date)"
  exit 0
fi

cargo deny check bans licenses sources

if timeout 120 cargo deny fetch db >/dev/null 2>&1; then
  echo "deny: advisory database fetched"
elif compgen -G "$db_dir/advisory-db-*/crates" >/dev/null; then
  echo "deny: advisory database not reachable; using the clone in $db_dir"
elif [ -f "$snapshot" ]; then
  mkdir -p "$db_dir"
  rm -rf "$db_clone"
  git -c init.defaultBranch=main clone -q -b main "$snapshot" "$db_clone"
  echo "deny: advisory database not reachable; cloned the repository's snapshot ($snapshot)"
else
  echo "deny: advisories NOT RUN -- RustSec's database could not be fetched from this machine,"
  echo "      no clone is in $db_dir and $snapshot is missing (see docs/reliability.md, \"Supply chain\")"
  exit 1
fi
db=$(compgen -G "$db_dir/advisory-db-*" | head -1)
head=$(git -C "$db" log -1 --format='%h of %cs' 2>/dev/null || echo unknown)
age_days=$(( ($(date +%s) - $(git -C "$db" log -1 --format=%ct 2>/dev/null || date +%s)) / 86400 ))
echo "deny: advisory database at commit $head ($age_days days old; advisories published since are not checked)"
cargo deny --offline check advisories
