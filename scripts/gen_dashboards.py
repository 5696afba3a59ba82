#!/usr/bin/env python3
"""Generate the Grafana dashboards in dashboards/ (Python standard library only).

The dashboards are committed as JSON (Grafana imports them as they are, and the Helm chart ships them as
ConfigMaps for the Grafana sidecar). They are generated rather than hand-edited so that every panel has
the same shape, the same datasource and namespace variables and stable ids, and so that a query is
written once here. `--check` exits non-zero when the committed files differ from what this script
generates; scripts/check-deploy.sh runs it.

Every metric used below must be listed in docs/metrics.md; scripts/check_metric_names.py enforces that.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

OUT_DIR = Path(__file__).resolve().parent.parent / "dashboards"

DS = {"type": "prometheus", "uid": "${datasource}"}
# Every query filters on the namespace variable; `=~` with an "All" value of ".*" also matches series
# without a namespace label (a plain static scrape outside Kubernetes).
NS = 'namespace=~"$namespace"'
RI = "$__rate_interval"


def target(expr: str, legend: str, ref: str) -> dict:
    return {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}


def quantiles(metric: str, by: str, selector: str = "", qs=(0.5, 0.95, 0.99)) -> list[dict]:
    """histogram_quantile targets for a real Prometheus histogram (docs/metrics.md: buckets exported)."""
    sel = NS + (", " + selector if selector else "")
    group = "le" + (", " + by if by else "")
    out = []
    for i, q in enumerate(qs):
        legend = f"p{int(q * 100)}" + (" {{" + by + "}}" if by else "")
        expr = f"histogram_quantile({q}, sum by ({group}) (rate({metric}_bucket{{{sel}}}[{RI}])))"
        out.append(target(expr, legend, chr(ord("A") + i)))
    return out


class Board:
    def __init__(self, uid: str, title: str, description: str, extra_vars: list[dict] | None = None):
        self.uid, self.title, self.description = uid, title, description
        self.extra_vars = extra_vars or []
        self.panels: list[dict] = []
        self.y = 0
        self.x = 0
        self.row_h = 0
        self.next_id = 1

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def row(self, title: str) -> None:
        self._newline()
        self.panels.append({"type": "row", "id": self._id(), "title": title, "collapsed": False,
                            "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y}, "panels": []})
        self.y += 1

    def _newline(self) -> None:
        if self.x:
            self.y += self.row_h
            self.x, self.row_h = 0, 0

    def _place(self, w: int, h: int) -> dict:
        if self.x + w > 24:
            self._newline()
        pos = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.x += w
        self.row_h = max(self.row_h, h)
        return pos

    def timeseries(self, title: str, desc: str, targets: list[dict], unit: str = "short", w: int = 12,
                   stack: bool = False) -> None:
        custom = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 20 if stack else 0,
                  "showPoints": "never", "spanNulls": False,
                  "stacking": {"mode": "normal" if stack else "none", "group": "A"}}
        self.panels.append({
            "type": "timeseries", "id": self._id(), "title": title, "description": desc,
            "datasource": DS, "gridPos": self._place(w, 8), "targets": targets,
            "fieldConfig": {"defaults": {"unit": unit, "custom": custom}, "overrides": []},
            "options": {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["mean", "max"]},
                        "tooltip": {"mode": "multi", "sort": "desc"}},
        })

    def stat(self, title: str, desc: str, expr: str, unit: str, thresholds: list[tuple[str, float | None]],
             w: int = 6) -> None:
        steps = [{"color": c, "value": v} for c, v in thresholds]
        self.panels.append({
            "type": "stat", "id": self._id(), "title": title, "description": desc, "datasource": DS,
            "gridPos": self._place(w, 4), "targets": [target(expr, title, "A")],
            "fieldConfig": {"defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}},
                            "overrides": []},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "background", "graphMode": "area", "textMode": "value"},
        })

    def to_json(self) -> dict:
        variables = [
            {"type": "datasource", "name": "datasource", "label": "Data source", "query": "prometheus",
             "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []},
            {"type": "query", "name": "namespace", "label": "Namespace", "datasource": DS,
             "definition": "label_values(eligibility_last_progress_timestamp_seconds, namespace)",
             "query": {"query": "label_values(eligibility_last_progress_timestamp_seconds, namespace)",
                       "refId": "namespace"},
             "includeAll": True, "allValue": ".*", "multi": True, "current": {}, "hide": 0, "refresh": 2,
             "regex": "", "sort": 1, "options": []},
        ] + self.extra_vars
        return {
            "uid": self.uid, "title": self.title, "description": self.description,
            "tags": ["eligibility"], "editable": True, "graphTooltip": 1, "schemaVersion": 39,
            "version": 1, "refresh": "30s", "time": {"from": "now-6h", "to": "now"},
            "timezone": "browser", "fiscalYearStartMonth": 0, "liveNow": False,
            "annotations": {"list": []}, "links": [],
            "templating": {"list": variables}, "panels": self.panels,
        }


def evaluator() -> Board:
    state_var = {
        "type": "query", "name": "state", "label": "State", "datasource": DS,
        "definition": 'label_values(eligibility_consumer_lag{namespace=~"$namespace"}, state)',
        "query": {"query": 'label_values(eligibility_consumer_lag{namespace=~"$namespace"}, state)',
                  "refId": "state"},
        "includeAll": True, "allValue": ".*", "multi": True, "current": {}, "hide": 0, "refresh": 2,
        "regex": "", "sort": 1, "options": []}
    b = Board("eligibility-evaluator", "Eligibility / Evaluator fleet",
              "Evaluator workers: throughput, consumer lag per partition and state, evaluation latency, "
              "batches, verdicts, transitions, dead letters, stores. Metrics: docs/metrics.md.",
              [state_var])
    lag = f'max by (topic, partition, state) (eligibility_consumer_lag{{{NS}, state=~"$state"}})'

    b.row("Overview")
    b.stat("Consumed / s", "Records consumed per second, all topics.",
           f"sum(rate(eligibility_events_consumed_total{{{NS}}}[{RI}]))", "ops", [("blue", None)])
    b.stat("Total consumer lag", "Records behind over all owned partitions (each partition counted once).",
           f"sum({lag})", "short", [("green", None), ("orange", 5000), ("red", 50000)])
    b.stat("Longest time without progress",
           "Seconds since the least recent micro-batch commit of any worker (EligibilityNoProgress pages at "
           "600 s while that worker has lag).",
           f"max(time() - eligibility_last_progress_timestamp_seconds{{{NS}}})", "s",
           [("green", None), ("orange", 300), ("red", 600)])
    b.stat("DLQ share", "Share of consumed records sent to a dead-letter topic.",
           f"sum(rate(eligibility_dlq_messages_total{{{NS}}}[{RI}])) / "
           f"sum(rate(eligibility_events_consumed_total{{{NS}}}[{RI}]))", "percentunit",
           [("green", None), ("orange", 0.005), ("red", 0.01)])

    b.row("Throughput")
    b.timeseries("Events consumed by topic", "Records per second taken from each input topic.",
                 [target(f"sum by (topic) (rate(eligibility_events_consumed_total{{{NS}}}[{RI}]))",
                         "{{topic}}", "A")], "ops")
    b.timeseries("Events produced by topic", "Records per second acknowledged by the brokers, per output topic.",
                 [target(f"sum by (topic) (rate(eligibility_events_produced_total{{{NS}}}[{RI}]))",
                         "{{topic}}", "A")], "ops")

    b.row("Consumer lag")
    b.timeseries("Lag by partition", "High watermark minus committed offset, per partition (with its state).",
                 [target(lag, "{{topic}}/{{partition}} ({{state}})", "A")], "short")
    b.timeseries("Lag by state", "Lag summed over each state's partitions.",
                 [target(f"sum by (state) ({lag})", "{{state}}", "A")], "short", stack=True)

    b.row("Evaluation")
    b.timeseries("Evaluation latency by engine",
                 "Wall time to evaluate one micro-batch, by the engine path the worker chose.",
                 quantiles("eligibility_evaluation_duration_seconds", "engine"), "s")
    b.timeseries("Micro-batch size", "Records per committed micro-batch: median, p99 and mean.",
                 quantiles("eligibility_micro_batch_size", "", qs=(0.5, 0.99)) + [
                     target(f"sum(rate(eligibility_micro_batch_size_sum{{{NS}}}[{RI}])) / "
                            f"sum(rate(eligibility_micro_batch_size_count{{{NS}}}[{RI}]))", "mean", "C")],
                 "short")
    b.timeseries("Verdict mix", "Verdicts computed per second.",
                 [target(f"sum by (verdict) (rate(eligibility_verdicts_total{{{NS}}}[{RI}]))",
                         "{{verdict}}", "A")], "ops", stack=True)
    b.timeseries("Transition events", "new_match / lost / partial_match events published per second.",
                 [target(f"sum by (kind) (rate(eligibility_transition_events_total{{{NS}}}[{RI}]))",
                         "{{kind}}", "A")], "ops")
    b.timeseries("Batch engine time, GPU vs CPU",
                 "Time inside one batch-evaluator call (GPU includes host/device copies).",
                 quantiles("eligibility_batch_engine_duration_seconds", "engine", qs=(0.5, 0.95)), "s")
    b.timeseries("Batch engine throughput, GPU vs CPU",
                 "(user, rule) pairs evaluated per second of engine time: the fair CPU/GPU comparison.",
                 [target(f"sum by (engine) (rate(eligibility_batch_engine_evaluations_total{{{NS}}}[{RI}])) / "
                         f"sum by (engine) (rate(eligibility_batch_engine_duration_seconds_sum{{{NS}}}[{RI}]))",
                         "{{engine}}", "A")], "short")

    b.row("Failures")
    b.timeseries("DLQ rate by topic and reason", "Input records dead-lettered per second.",
                 [target(f"sum by (topic, reason) (rate(eligibility_dlq_messages_total{{{NS}}}[{RI}]))",
                         "{{topic}}: {{reason}}", "A")], "ops")
    b.timeseries("Errors by kind (all workers)", "Retried or batch-stopping failures per second.",
                 [target(f"sum by (kind) (rate(eligibility_errors_total{{{NS}}}[{RI}]))", "{{kind}}", "A")],
                 "ops")

    b.row("Stores")
    b.timeseries("PostgreSQL latency by operation", "One PostgreSQL round trip, by operation.",
                 quantiles("eligibility_store_duration_seconds", "op", 'store="postgres"', qs=(0.5, 0.99)), "s")
    b.timeseries("Redis latency by operation", "One Redis round trip, by operation.",
                 quantiles("eligibility_store_duration_seconds", "op", 'store="redis"', qs=(0.5, 0.99)), "s")
    return b


def explainer() -> Board:
    b = Board("eligibility-explainer", "Eligibility / Explainer pool",
              "Explainer workers: backlog, LLM latency and outcomes, Oracle-A checks, template fallbacks. "
              "Metrics: docs/metrics.md.")
    explained = f'rate(eligibility_events_produced_total{{{NS}, topic="eligibility.explained"}}[{RI}])'
    fallbacks = f"rate(eligibility_explanation_fallbacks_total{{{NS}}}[{RI}])"

    b.row("Overview")
    b.stat("Explanations / s", "Explanations published to eligibility.explained.",
           f"sum({explained})", "ops", [("blue", None)])
    b.stat("Backlog", "Records waiting on the explainer's input topics.",
           f"sum(eligibility_explainer_queue_lag{{{NS}}})", "short",
           [("green", None), ("orange", 1000), ("red", 10000)])
    b.stat("Template fallback share", "Share of explanations served from the deterministic template.",
           f"sum({fallbacks}) / sum({explained})", "percentunit",
           [("green", None), ("orange", 0.2), ("red", 0.5)])
    b.stat("Oracle-A failing checks", "Share of Oracle-A rule checks that failed.",
           f'sum(rate(eligibility_oracle_checks_total{{{NS}, verdict="fail"}}[{RI}])) / '
           f"sum(rate(eligibility_oracle_checks_total{{{NS}}}[{RI}]))", "percentunit",
           [("green", None), ("orange", 0.05), ("red", 0.1)])

    b.row("Work")
    b.timeseries("Backlog by topic", "Records not yet explained, per input topic.",
                 [target(f"sum by (topic) (eligibility_explainer_queue_lag{{{NS}}})", "{{topic}}", "A")],
                 "short")
    b.timeseries("Consumed and published", "Matches consumed and explanations published per second.",
                 [target(f'sum by (topic) (rate(eligibility_events_consumed_total{{{NS}, '
                         f'topic=~"eligibility.new_match|eligibility.partial_match"}}[{RI}]))',
                         "consumed {{topic}}", "A"),
                  target(f"sum({explained})", "published eligibility.explained", "B")], "ops")

    b.row("LLM")
    b.timeseries("LLM request latency", "One request to the OpenAI-compatible endpoint, any outcome.",
                 quantiles("eligibility_llm_request_duration_seconds", ""), "s")
    b.timeseries("LLM requests by outcome", "Requests per second by outcome.",
                 [target(f"sum by (outcome) (rate(eligibility_llm_request_duration_seconds_count{{{NS}}}[{RI}]))",
                         "{{outcome}}", "A")], "ops", stack=True)

    b.row("Oracle-A and fallbacks")
    b.timeseries("Oracle-A failures by rule", "Failed Oracle-A rule checks per second, by rule id.",
                 [target(f'sum by (rule) (rate(eligibility_oracle_checks_total{{{NS}, verdict="fail"}}[{RI}]))',
                         "{{rule}}", "A")], "ops")
    b.timeseries("Template fallbacks by reason", "Explanations served from the template, per second.",
                 [target(f"sum by (reason) ({fallbacks})", "{{reason}}", "A")], "ops", stack=True)
    b.timeseries("Explanation store latency", "PostgreSQL round trip storing one explanation.",
                 quantiles("eligibility_store_duration_seconds", "", 'store="postgres", op="store_explanation"',
                           qs=(0.5, 0.99)), "s")
    return b


def api() -> Board:
    b = Board("eligibility-api", "Eligibility / API",
              "The HTTP API (eligibility api serve): request rate, latency, refusals and the cache. "
              "Metrics: docs/metrics.md.")
    requests = f"rate(eligibility_api_requests_total{{{NS}}}[{RI}])"

    b.row("Overview")
    b.stat("Requests / s", "API requests answered per second.", f"sum({requests})", "reqps", [("blue", None)])
    b.stat("5xx share", "Share of requests answered with a server error (storage or broker unavailable).",
           f'sum(rate(eligibility_api_requests_total{{{NS}, status=~"5.."}}[{RI}])) / sum({requests})',
           "percentunit", [("green", None), ("orange", 0.01), ("red", 0.05)])
    b.stat("429 share", "Share of requests refused by a rate limit.",
           f'sum(rate(eligibility_api_requests_total{{{NS}, status="429"}}[{RI}])) / sum({requests})',
           "percentunit", [("green", None), ("orange", 0.05), ("red", 0.2)])
    b.stat("Cache hit ratio", "Result-list reads served from Redis.",
           f'sum(rate(eligibility_api_cache_total{{{NS}, outcome="hit"}}[{RI}])) / '
           f"sum(rate(eligibility_api_cache_total{{{NS}}}[{RI}]))", "percentunit",
           [("red", None), ("orange", 0.5), ("green", 0.8)])

    b.row("Traffic")
    b.timeseries("Requests by route", "Requests per second by route template.",
                 [target(f"sum by (route) ({requests})", "{{route}}", "A")], "reqps", stack=True)
    b.timeseries("Requests by status", "Requests per second by HTTP status (4xx: refused input or "
                 "authorisation; 429: rate limits; 5xx: dependencies).",
                 [target(f"sum by (status) ({requests})", "{{status}}", "A")], "reqps", stack=True)
    b.timeseries("4xx, 5xx and 429", "Refusals and failures per second.",
                 [target(f'sum(rate(eligibility_api_requests_total{{{NS}, status=~"4..", status!="429"}}[{RI}]))',
                         "4xx (not 429)", "A"),
                  target(f'sum(rate(eligibility_api_requests_total{{{NS}, status="429"}}[{RI}]))', "429", "B"),
                  target(f'sum(rate(eligibility_api_requests_total{{{NS}, status=~"5.."}}[{RI}]))', "5xx", "C")],
                 "reqps")

    b.row("Latency")
    b.timeseries("Latency", "Request to response, all routes.",
                 quantiles("eligibility_api_request_seconds", ""), "s")
    b.timeseries("p99 latency by route", "99th percentile by route template.",
                 quantiles("eligibility_api_request_seconds", "route", qs=(0.99,)), "s")
    b.timeseries("Cache reads", "Result-list reads per second from Redis (hit) and PostgreSQL (miss).",
                 [target(f"sum by (outcome) (rate(eligibility_api_cache_total{{{NS}}}[{RI}]))", "{{outcome}}", "A")],
                 "ops", stack=True)
    return b


def render(board: Board) -> str:
    return json.dumps(board.to_json(), indent=2, sort_keys=False) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if dashboards/ differs from the generated JSON")
    args = ap.parse_args()
    stale = []
    for board in (evaluator(), explainer(), api()):
        path = OUT_DIR / f"{board.uid}.json"
        text = render(board)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            OUT_DIR.mkdir(exist_ok=True)
            path.write_text(text)
            print(f"wrote {path}")
    if stale:
        print("dashboards out of date (run scripts/gen_dashboards.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
