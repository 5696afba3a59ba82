#!/usr/bin/env python3
"""Check that every metric the dashboards and alerts query is one the workers export.

Sources of queries:
  * dashboards/*.json: every panel target's `expr` (rows included) and every templating query;
  * prometheus/*.rules.yml: every rule's `expr`.

Reference list of exported metrics, in this order of preference:
  * --metrics URL|FILE: a live `/metrics` endpoint or a saved scrape (Prometheus text format), i.e. what a
    worker really exports. Contract histograms exported as summaries, and metrics whose exported type
    differs from docs/metrics.md, are errors too;
  * otherwise the table in docs/metrics.md (the contract).

Checked for each selector in a query: the metric name is known (a histogram only through its `_bucket`,
`_sum` or `_count` series), and every label it is matched on (`name{label="..."}`) is a label of that
metric or one Prometheus/Kubernetes adds at scrape time.

Exit status: 0 all known, 1 an unknown name or label (each printed), 2 usage or input error.
Python standard library only, apart from PyYAML for the rules files (present in the tools venv that
scripts/check-deploy.sh creates).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Labels attached at scrape time (Prometheus target labels, the chart's ServiceMonitor relabelling, the
# Kubernetes service discovery of a plain scrape config): valid on every metric.
SCRAPE_LABELS = {"namespace", "pod", "job", "instance", "container", "service", "endpoint", "component", "node"}

PROMQL_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
    "and", "or", "unless", "atan2", "inf", "nan", "start", "end",
}

AGGREGATIONS = {
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
    "bottomk", "topk", "quantile", "limitk", "limit_ratio",
}

HIST_SUFFIXES = ("_bucket", "_sum", "_count")
NAME_RE = r"[a-zA-Z_:][a-zA-Z0-9_:]*"


class Catalogue:
    """Known metric families: base name -> (type, set of labels or None when unknown)."""

    def __init__(self, source: str):
        self.source = source
        self.families: dict[str, tuple[str, set[str] | None]] = {}

    def resolve(self, series: str) -> tuple[str | None, str | None]:
        """Return (family, error) for a series name used in a query."""
        fam = self.families.get(series)
        if fam is not None:
            if fam[0] == "histogram":
                return None, f"histogram `{series}` queried by its base name; use {series}_bucket/_sum/_count"
            return series, None
        for suffix in HIST_SUFFIXES:
            if series.endswith(suffix):
                base = series[: -len(suffix)]
                fam = self.families.get(base)
                if fam is not None and fam[0] in ("histogram", "summary"):
                    if fam[0] == "summary" and suffix == "_bucket":
                        return None, f"`{series}`: {base} is exported as a summary, so it has no buckets"
                    return base, None
        return None, f"unknown metric `{series}` (not in {self.source})"

    def labels(self, family: str, series: str) -> set[str] | None:
        labels = self.families[family][1]
        if labels is None:
            return None
        extra = {"le"} if series.endswith("_bucket") else set()
        return labels | extra | SCRAPE_LABELS


def catalogue_from_doc(path: Path) -> Catalogue:
    cat = Catalogue(str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path))
    row = re.compile(r"^\|\s*`(eligibility_[a-z0-9_]+)`\s*\|\s*(counter|gauge|histogram)\s*\|([^|]*)\|")
    for line in path.read_text().splitlines():
        m = row.match(line)
        if m:
            labels = set(re.findall(r"`([a-z_][a-z0-9_]*)`", m.group(3)))
            cat.families[m.group(1)] = (m.group(2), labels)
    if not cat.families:
        raise SystemExit(f"error: no metric table rows found in {path}")
    return cat


def read_exposition(ref: str) -> str:
    if re.match(r"^https?://", ref):
        with urllib.request.urlopen(ref, timeout=10) as resp:  # noqa: S310 (operator-supplied URL)
            return resp.read().decode("utf-8")
    return Path(ref).read_text()


def catalogue_from_exposition(refs: list[str], contract: Catalogue, problems: list[str]) -> Catalogue:
    """Families from Prometheus text format (the union of several scrapes, e.g. one per kind of
    worker); types from `# TYPE`, labels from the samples."""
    text = "\n".join(read_exposition(ref) for ref in refs)
    ref = " + ".join(refs)
    cat = Catalogue(ref)
    types: dict[str, str] = {}
    samples: dict[str, set[str]] = {}
    sample_re = re.compile(r"^(" + NAME_RE + r")(\{(.*)\})?\s+\S+")
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 4:
                types[parts[2]] = parts[3]
            continue
        if not line or line.startswith("#"):
            continue
        m = sample_re.match(line)
        if m:
            labels = set(re.findall(r"(" + NAME_RE + r')\s*=\s*"', m.group(3) or ""))
            samples.setdefault(m.group(1), set()).update(labels)
    if not samples:
        raise SystemExit(f"error: no samples in {ref}: not a Prometheus text exposition?")
    for name, kind in types.items():
        labels: set[str] = set()
        if kind in ("histogram", "summary"):
            for suffix in HIST_SUFFIXES + ("",):
                labels |= samples.get(name + suffix, set())
            labels -= {"le", "quantile"}
        else:
            labels = samples.get(name, set())
        cat.families[name] = (kind, labels)
    for name, labels in samples.items():  # samples without a TYPE line are untyped
        if not any(name == f or (name.startswith(f) and name[len(f):] in HIST_SUFFIXES) for f in types):
            cat.families.setdefault(name, ("untyped", labels))
    # Where the exposition contradicts the contract, the contract or the worker is wrong.
    for name, (kind, _) in contract.families.items():
        got = cat.families.get(name)
        if got is None:
            print(f"note: {name} ({kind}) is in the contract but not in this scrape "
                  "(not touched yet, or not exported)", file=sys.stderr)
        elif got[0] != kind:
            hint = " (set_buckets_for_metric missing?)" if kind == "histogram" and got[0] == "summary" else ""
            problems.append(f"{ref}: {name} is exported as {got[0]}, the contract says {kind}{hint}")
    return cat


def _blank(m: re.Match) -> str:
    return " " * len(m.group(0))


STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
MATCHER_LABEL_RE = re.compile(r"(" + NAME_RE + r")\s*(?:=~|!~|!=|=)")


def selectors(expr: str) -> list[tuple[str, set[str]]]:
    """(series name, labels matched on it) for every vector selector in a PromQL expression.

    Every rewrite below keeps the text's length, so that a label-matcher block can be tied to the name
    right before it by position.
    """
    found: list[tuple[str, set[str]]] = []
    # Grafana's label_values(selector, label): the second argument is a label, not a metric.
    expr = re.sub(r"(label_values\(\s*[^,()]*?(?:\{[^}]*\})?\s*)(,\s*" + NAME_RE + r"\s*)(\))",
                  lambda m: m.group(1) + " " * len(m.group(2)) + m.group(3), expr)
    # Grafana variables and macros ($var, ${var:fmt}, [[var]]) become neutral text of the same length.
    expr = re.sub(r"\$\{[^}]*\}|\$\w+|\[\[[^\]]*\]\]", lambda m: "1" * len(m.group(0)), expr)
    # Label-matcher blocks: remember the labels (and a __name__ matcher), then blank the block.
    matchers: dict[int, set[str]] = {}
    for m in re.finditer(r'\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}', expr):
        body = m.group(0)
        named = re.search(r'__name__\s*=\s*"(' + NAME_RE + r')"', body)
        labels = set(MATCHER_LABEL_RE.findall(STRING_RE.sub(_blank, body))) - {"__name__"}
        if named:
            found.append((named.group(1), labels))
        else:
            matchers[m.start()] = labels
    expr = re.sub(r'\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}', _blank, expr)
    expr = STRING_RE.sub(_blank, expr)
    expr = re.sub(r"\[[^\]]*\]", _blank, expr)  # range and subquery durations
    # Label lists of grouping and matching modifiers: `by (le, topic)` names labels, not metrics.
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)(\s*\([^)]*\))",
                  lambda m: m.group(1) + " " * len(m.group(2)), expr)
    for m in re.finditer(r"(?<![\w.:])" + NAME_RE, expr):
        token = m.group(0)
        rest = expr[m.end():].lstrip()
        if token.lower() in PROMQL_KEYWORDS or rest.startswith("("):
            continue  # keyword, function, or aggregation written `sum(...) by (...)`
        if token in AGGREGATIONS and re.match(r"(by|without)\b", rest):
            continue  # aggregation written `sum by (...) (...)`
        after = m.end()
        while after < len(expr) and expr[after] == " " and after not in matchers:
            after += 1
        found.append((token, matchers.get(after, set())))
    return found


def dashboard_queries(path: Path) -> list[tuple[str, str]]:
    data = json.loads(path.read_text())
    out = []
    def panels(items):
        for p in items:
            yield p
            yield from panels(p.get("panels", []))
    for p in panels(data.get("panels", [])):
        for t in p.get("targets", []):
            if t.get("expr"):
                out.append((f"{path.name}: panel '{p.get('title')}' {t.get('refId', '')}", t["expr"]))
    for v in data.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q:
            out.append((f"{path.name}: variable '{v.get('name')}'", q))
    return out


def rule_queries(path: Path) -> list[tuple[str, str]]:
    try:
        import yaml
    except ImportError:
        raise SystemExit("error: PyYAML is needed for the rules files (use the venv that "
                         "scripts/check-deploy.sh creates, or pip install pyyaml)")
    data = yaml.safe_load(path.read_text())
    out = []
    for group in data.get("groups", []):
        for rule in group.get("rules", []):
            name = rule.get("alert") or rule.get("record")
            out.append((f"{path.name}: {name}", rule["expr"]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--metrics", action="append",
                    help="live /metrics URL or saved scrape file to check against; repeat it for "
                         "several workers (their union is checked; default: the table in docs/metrics.md)")
    ap.add_argument("--contract", default=str(ROOT / "docs" / "metrics.md"), help="metrics contract page")
    ap.add_argument("--dashboards", default=str(ROOT / "dashboards"), help="folder of dashboard JSON")
    ap.add_argument("--rules", default=str(ROOT / "prometheus"), help="folder of *.rules.yml files")
    args = ap.parse_args()

    problems: list[str] = []
    contract = catalogue_from_doc(Path(args.contract))
    catalogue = catalogue_from_exposition(args.metrics, contract, problems) if args.metrics else contract

    queries: list[tuple[str, str]] = []
    for p in sorted(Path(args.dashboards).glob("*.json")):
        queries += dashboard_queries(p)
    for p in sorted(Path(args.rules).glob("*.rules.yml")):
        queries += rule_queries(p)
    if not queries:
        print("error: no queries found", file=sys.stderr)
        return 2

    used: set[str] = set()
    for where, expr in queries:
        for series, labels in selectors(expr):
            family, err = catalogue.resolve(series)
            if err:
                problems.append(f"{where}: {err}")
                continue
            used.add(family)
            allowed = catalogue.labels(family, series)
            if allowed is not None:
                for label in sorted(labels - allowed):
                    problems.append(f"{where}: `{series}` has no label `{label}` "
                                    f"(labels: {', '.join(sorted(allowed - SCRAPE_LABELS)) or 'none'})")

    unused = sorted(set(contract.families) - used)
    if unused:
        print("note: contract metrics no dashboard or alert uses: " + ", ".join(unused), file=sys.stderr)
    for p in problems:
        print("ERROR " + p)
    status = "FAILED" if problems else "ok"
    print(f"metric names: {status}: {len(queries)} queries, {len(used)} metric families used, "
          f"checked against {catalogue.source}" + (f", {len(problems)} problem(s)" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
