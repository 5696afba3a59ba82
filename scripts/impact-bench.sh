#!/usr/bin/env bash
# The impact of a rule change over the stored population, as the rules console's impact job
# computes it (docs/performance.md, "The impact of a rule change"):
#
#   scripts/impact-bench.sh            # 1,000,000 stored citizens (IMPACT_BENCH_USERS)
#
# Makes a database of its own on the local stack (scripts/stack.sh up) holding the corpus
# (`rules seed`) and N synthetic citizens of every state, written straight into
# profile_snapshots / profile_current (the evaluator's tables) by SQL. Then, for a change to a
# central scheme (IGNOAPS with its age raised from 60 to 65, which reads every citizen):
#   1. end to end as the rules console does it: `api serve` on that database, the change posted as
#      a proposal (`POST /api/v1/rules/proposals`, what the console's "Propose" calls), its
#      impact job polled until done: the seconds from the post to the diff;
#   2. the computation alone: `eligibility rules simulate --population postgres` (the same
#      `Simulation::run_stored`), with its CPU and memory.
# Uses the release binary (ELIGIBILITY_BIN, default target/release/eligibility).
set -euo pipefail
cd "$(dirname "$0")/.."
users=${IMPACT_BENCH_USERS:-1000000}
bin=${ELIGIBILITY_BIN:-target/release/eligibility}
db=eligibility_impact_bench
export PGPASSWORD=eligibility
psql_in() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U eligibility "$@"; }
url="postgres://eligibility:eligibility@127.0.0.1:5432/$db?sslmode=disable"

psql_in -d eligibility -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" 2>/dev/null
ELIGIBILITY_DATABASE_URL=$url "$bin" migrate >/dev/null
"$bin" rules seed --database-url "$url" >&2
echo "writing $users citizens…" >&2
started=$(date +%s)
psql_in -d "$db" -v users="$users" <<'SQL'
CREATE TEMP TABLE citizens AS
SELECT i,
       'usr_' || lpad(i::text, 8, '0') AS user_id,
       md5(i::text) || md5('x' || i) AS input_hash,
       (ARRAY['andaman_and_nicobar_islands','andhra_pradesh','arunachal_pradesh','assam','bihar',
              'chandigarh','chhattisgarh','dadra_and_nagar_haveli_and_daman_and_diu','delhi','goa',
              'gujarat','haryana','himachal_pradesh','jammu_and_kashmir','jharkhand','karnataka',
              'kerala','ladakh','lakshadweep','madhya_pradesh','maharashtra','manipur','meghalaya',
              'mizoram','nagaland','odisha','puducherry','punjab','rajasthan','sikkim','tamil_nadu',
              'telangana','tripura','uttar_pradesh','uttarakhand','west_bengal'])[1 + i % 36] AS state
FROM generate_series(1::bigint, :users) AS i;
INSERT INTO profile_snapshots (input_hash, profile)
SELECT input_hash, jsonb_build_object(
    'user_id', user_id,
    'identity', jsonb_build_object(
        'age', 18 + (i * 7919) % 75,
        'gender', (ARRAY['female', 'male'])[1 + i % 2],
        'social_category', (ARRAY['general', 'obc', 'sc', 'st', 'ews'])[1 + (i / 3) % 5],
        'marital_status', (ARRAY['married', 'widowed', 'never_married'])[1 + (i / 7) % 3],
        'verified_documents', CASE WHEN i % 4 = 0 THEN '["aadhaar"]'::jsonb
                                   ELSE '["aadhaar", "bank_passbook", "bpl_card", "voter_id"]'::jsonb END),
    'economic', jsonb_build_object(
        'bpl_status', i % 3 <> 0,
        'annual_income', 20000 + (i * 104729) % 480000,
        'has_bank_account', i % 10 <> 0,
        'is_income_tax_payer', i % 17 = 0,
        'is_government_employee', i % 23 = 0,
        'occupation', (ARRAY['farmer', 'agricultural_labourer', 'street_vendor', 'retired', 'homemaker'])[1 + (i / 11) % 5],
        'land_holding', (i % 40) / 10.0),
    'eligibility', '{"active_schemes": []}'::jsonb,
    'demographics', jsonb_build_object('state', state, 'urban_rural', (ARRAY['rural', 'urban'])[1 + i % 2]))
FROM citizens;
INSERT INTO profile_current (user_id, input_hash, state, as_of, source_topic, source_partition, source_offset)
SELECT user_id, input_hash, state, DATE '2026-11-01', 'impact-bench', 0, i FROM citizens;
ANALYZE profile_current;
ANALYZE profile_snapshots;
SQL
echo "written in $(( $(date +%s) - started )) s" >&2

# The change: the central old-age pension from 65, as a new version.
change=target/impact-bench
rm -rf "$change" && mkdir -p "$change"
sed -e 's/rule_central_ignoaps_002/rule_central_ignoaps_009/' -e 's/^version: 2$/version: 9/' \
    -e 's/operator: "gte", value: 60/operator: "gte", value: 65/' \
    schemes/central/ignoaps.yaml > "$change/ignoaps_65.yaml"
grep -q 'value: 65' "$change/ignoaps_65.yaml"

echo "$(date -u +%F) $(nproc) cores; $("$bin" --version)" >&2

# 1. End to end through the API's proposal route and its job.
eval "$(scripts/stack.sh env)"
read -r api_port http_port < <(python3 -c 'import socket
ports = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s.getsockname()[1]); s.close()
print(*ports)')
export ELIGIBILITY_API_JWT_SECRET=impact-bench-development-secret-of-32-bytes
ELIGIBILITY_DATABASE_URL=$url ELIGIBILITY_API_ADDR=127.0.0.1:$api_port \
  ELIGIBILITY_HTTP_ADDR=127.0.0.1:$http_port ELIGIBILITY_API_ADMIN_CIDRS=127.0.0.1/32 \
  ELIGIBILITY_LOG=warn "$bin" api serve 2>"$change/api.log" &
api=$!
trap 'kill $api 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$http_port/readyz" >/dev/null 2>&1 && break
  sleep 0.5
done
token=$("$bin" api token --role admin --sub impact-bench)
python3 - "$change/ignoaps_65.yaml" "http://127.0.0.1:$api_port" "$token" <<'PY'
import json, sys, time, urllib.request
rule, base, token = sys.argv[1:]
def call(method, path, body=None):
    request = urllib.request.Request(base + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)
started = time.monotonic()
proposal = call("POST", "/api/v1/rules/proposals",
                {"rule_yaml": open(rule).read(), "reason": "impact bench", "as_of": "2026-11-27"})
while True:
    job = call("GET", f"/api/v1/rules/simulations/{proposal['simulation_job']}")
    if job["status"] in ("done", "failed"):
        break
    time.sleep(0.25)
elapsed = time.monotonic() - started
assert job["status"] == "done", job
print(f"end to end (proposal posted -> its impact stored): {elapsed:.1f} s over "
      f"{job['result']['citizens']} citizens")
PY
kill $api; wait $api 2>/dev/null || true
trap - EXIT

# 2. The computation alone.
/usr/bin/time -f "wall %e s, user %U s, system %S s, peak %M KiB" \
  "$bin" rules simulate --rules "$change" --population postgres --as-of 2026-11-27 --engine cpu \
    --format json --database-url "$url" > "$change/diff.json"
python3 - "$change/diff.json" <<'PY'
import json, sys
diff = json.load(open(sys.argv[1]))
cells = diff["schemes"]["sch_ignoaps"]
moved = {}
for state in cells.values():
    for transition, n in state["transitions"].items():
        moved[transition] = moved.get(transition, 0) + n
print(f"citizens {diff['citizens']:,}; engine {diff['engine']}; transitions {moved}")
PY
