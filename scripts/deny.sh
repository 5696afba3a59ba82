#!/usr/bin/env bash
# The supply-chain check (docs/reliability.md, "Supply chain"): `cargo deny check` against the
# policy in deny.toml — licenses, duplicate versions, sources, and RustSec advisories.
# Installs cargo-deny (pinned) once. Advisories are read from RustSec's database, cloned into
# $CARGO_HOME/advisory-dbs by `cargo deny fetch`; where its host cannot be reached and no clone
# is there, the advisory check is reported as NOT RUN (loudly) and the other checks still run.
set -euo pipefail
cd "$(dirname "$0")/.."
DENY_VERSION="0.20.2"

if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $DENY_VERSION" ]; then
  echo "deny: installing cargo-deny $DENY_VERSION"
  cargo install --locked cargo-deny --version "$DENY_VERSION" >/dev/null 2>&1 || {
    echo "deny: cargo install cargo-deny $DENY_VERSION failed" >&2; exit 1; }
fi
cargo deny check bans licenses sources

db_dir="${CARGO_HOME:-$HOME/.cargo}/advisory-dbs"
if timeout 120 cargo deny fetch db >/dev/null 2>&1; then
  echo "deny: advisory database fetched"
elif compgen -G "$db_dir/advisory-db-*/crates" >/dev/null; then
  echo "deny: advisory database not reachable; using the clone in $db_dir"
else
  echo "deny: advisories NOT RUN -- RustSec's database could not be fetched from this machine and"
  echo "      no clone is in $db_dir (see docs/reliability.md, \"Supply chain\")"
  exit 0
fi
head=$(git -C "$(compgen -G "$db_dir/advisory-db-*" | head -1)" log -1 --format='%h of %cs' 2>/dev/null || echo unknown)
echo "deny: advisory database at commit $head"
cargo deny --offline check advisories
