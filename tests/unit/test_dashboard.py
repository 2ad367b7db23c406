"""The Grafana dashboard (dashboards/dgxpod.json, docs/operations.md "Monitoring") cannot rot silently: it is a
Grafana 10 dashboard (a Prometheus data-source variable every panel and query uses, panels with unique ids, a grid
position inside 24 columns, targets with unique refIds), and every query names what report/metrics.py emits for a
real run - the families, the labels it filters, groups and names series by, the check names it selects (each must
select samples of a pod-in-a-box run of every stage, tests/unit/fixtures/report/README.md, plus the GPU copy-bandwidth
rows of the GPU stage's nvbandwidth fixtures) and the unit a panel shows (the samples' ``unit`` label). A renamed
metric, label or check, or a unit that changes, fails here rather than leaving an empty panel on a pod's wall."""
from __future__ import annotations

import json
import os
import re
from typing import Dict, List, Set, Tuple

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perf_sample import base_results, profile, sample_context, sample_perf, sample_stages
from test_gpu_bandwidth import _halve_h2d_gpu3, _pod

from ansible_collections.dgxpod.toolkit.plugins.module_utils.gpu import bandwidth_eval
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import baseline
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.metrics import HELP, PREFIX, prometheus_text
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD = os.path.join(ROOT, "dashboards", "dgxpod.json")
REAL = os.path.join(ROOT, "tests", "unit", "fixtures", "report", "results__podsim_all_stages_20261129T022723Z.json")
# what a query may say besides metric names (PromQL's aggregations, functions and keywords the dashboard uses)
PROMQL_WORDS = {"sum", "min", "max", "avg", "count", "by", "without", "label_values", "topk", "bottomk", "and", "or",
                "unless", "on", "ignoring", "bool"}
# Grafana's unit ids (packages/grafana-data valueFormats categories) -> the unit label metrics.py gives the samples
UNITS = {"Gbits": "Gb/s", "MBs": "MB/s", "GBs": "GB/s", "celsius": "C"}
PANEL_TYPES = {"row", "stat", "table", "timeseries", "bargauge", "gauge", "barchart", "state-timeline", "text"}
SELECTOR = re.compile(r"\b(%s[A-Za-z0-9_:]*)\s*(?:\{([^}]*)\})?" % PREFIX)
MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
LABEL_VALUES = re.compile(r"^\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$")  # Grafana's variable query
LEGEND = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

Sample = Dict[str, str]


@pytest.fixture(scope="module")
def dashboard():
    with open(DASHBOARD, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def families() -> Dict[str, List[Sample]]:
    """{family: [the labels of each sample]} of metrics.prom for a real run of every stage, read back by Prometheus'
    own parser; with the GPU stage's copy-bandwidth rows, the network and storage rows of the unit tests' sample
    judged as a real pod's (on the simulator the absolute checks are skipped and have no expected value), and the
    baseline comparison of that sample with one NIC slower (regression rows)."""
    with open(REAL, encoding="utf-8") as fh:
        doc = json.load(fh)
    rows = [dict(r.to_dict(), stage="gpu") for r in bandwidth_eval.bandwidth_checks(_pod(_halve_h2d_gpu3))]
    perf = sample_perf(slow=None)
    real_pod = build_results(base_results(simulated=False), sample_context(perf), profile()["expectations"],
                             sample_stages(perf))
    slow = sample_perf()  # sim-dgx3's data-12 NIC slower
    slower = build_results(base_results(simulated=False), sample_context(slow), profile()["expectations"],
                           sample_stages(slow))
    regressions = [r.to_dict() for r in baseline.compare(slower, real_pod, None)]
    assert any(r["status"] == "fail" for r in regressions)
    doc = dict(doc, checks=list(doc["checks"]) + rows + list(real_pod["checks"]) + regressions)
    out: Dict[str, List[Sample]] = {}
    for fam in text_string_to_metric_families(prometheus_text(doc)):
        out.setdefault(fam.name, []).extend(dict(s.labels) for s in fam.samples)
    assert set(out) == {PREFIX + k for k in HELP}
    return out


def panels(dash):
    """Every panel, those inside collapsed rows too."""
    for p in dash["panels"]:
        yield p
        yield from p.get("panels") or []


def queries(dash) -> List[Tuple[str, str, str]]:
    """(where, expr, legend) of every target and every query variable."""
    out = []
    for p in panels(dash):
        for t in p.get("targets") or []:
            out.append(("panel %d %r %s" % (p["id"], p["title"], t["refId"]), t["expr"], t.get("legendFormat", "")))
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            out.append(("variable %s" % v["name"], v["query"]["query"] if isinstance(v["query"], dict) else v["query"],
                        ""))
    return out


def matching(samples: List[Sample], matchers: List[Tuple[str, str, str]]) -> List[Sample]:
    """The samples a selector's matchers select (a matcher on a dashboard variable selects any value)."""
    out = []
    for s in samples:
        ok = True
        for name, op, value in matchers:
            if "$" in value:
                continue
            have = s.get(name, "")
            hit = re.fullmatch(value, have) is not None if op in ("=~", "!~") else have == value
            ok = ok and (hit if op in ("=", "=~") else not hit)
        if ok:
            out.append(s)
    return out


def test_the_dashboard_is_a_grafana_dashboard_on_a_prometheus_datasource_variable(dashboard):
    assert dashboard["title"] and re.fullmatch(r"[A-Za-z0-9_-]{1,40}", dashboard["uid"])
    assert isinstance(dashboard["schemaVersion"], int) and dashboard["schemaVersion"] >= 36  # Grafana 9.x/10
    assert "id" not in dashboard or dashboard["id"] is None  # an import gets its own id
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    ds = variables["datasource"]
    assert ds["type"] == "datasource" and ds["query"] == "prometheus"
    ds_ref = {"type": "prometheus", "uid": "${datasource}"}
    assert all(v.get("datasource") == ds_ref for v in variables.values() if v["type"] == "query")
    ids: Set[int] = set()
    for p in panels(dashboard):
        assert isinstance(p["id"], int) and p["id"] not in ids, p
        ids.add(p["id"])
        assert p["type"] in PANEL_TYPES and p.get("title"), p["id"]
        g = p["gridPos"]
        assert all(isinstance(g[k], int) for k in "xywh") and g["x"] >= 0 and g["w"] > 0 and g["x"] + g["w"] <= 24
        if p["type"] == "row":
            continue
        assert p["datasource"] == ds_ref, p["id"]
        assert p["targets"] and len({t["refId"] for t in p["targets"]}) == len(p["targets"]), p["id"]
        for t in p["targets"]:
            assert t["datasource"] == ds_ref and t["expr"].strip(), (p["id"], t)
    # no two panels overlap on the grid
    cells = {}
    for p in panels(dashboard):
        g = p["gridPos"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, "panels %s and %s overlap" % (cells[(x, y)], p["id"])
                cells[(x, y)] = p["id"]


def test_every_query_names_only_what_metrics_py_emits_for_a_real_run(dashboard, families):
    for where, expr, legend in queries(dashboard):
        values_of = LABEL_VALUES.match(expr)
        if values_of:  # label_values(<selector>, <label>): the label's values, named like a legend's label
            expr, legend = values_of.group(1), "{{%s}}" % values_of.group(2)
        selectors = SELECTOR.findall(expr)
        assert selectors, "%s: names no %s metric: %s" % (where, PREFIX, expr)
        bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
        bare = GROUPING.sub("", re.sub(r"\{[^}]*\}", "", bare))
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_:]*", bare):
            assert word in PROMQL_WORDS or word in families, "%s: %r is neither PromQL nor a metric metrics.py " \
                "emits: %s" % (where, word, expr)
        grouped = [set(g.replace(" ", "").split(",")) - {""} for g in GROUPING.findall(expr)]
        for name, body in selectors:
            matchers = MATCHER.findall(body or "")
            samples = families[name]
            labels = set().union(*samples)
            for label, _, _ in matchers:
                assert label in labels, "%s: %s has no label %r (it has %s)" % (where, name, label, sorted(labels))
            selected = matching(samples, matchers)
            assert selected, "%s: %s{%s} selects no sample of a real run" % (where, name, body)
            for label in set().union(*grouped):
                assert label in set().union(*selected), "%s: groups by %r, which %s{%s} lacks" % (where, label, name,
                                                                                                   body)
            shown = set(LEGEND.findall(legend)) - {"seq"}  # seq: only on a second row of the same labels
            allowed = set().union(*grouped) if grouped else set().union(*selected)
            assert shown <= allowed, "%s: the legend names %s, not labels of its series" % (where, shown - allowed)


def test_a_panel_s_unit_is_the_unit_of_the_samples_it_shows(dashboard, families):
    checked = 0
    for p in panels(dashboard):
        unit = (p.get("fieldConfig") or {}).get("defaults", {}).get("unit")
        if unit not in UNITS:
            continue
        for t in p["targets"]:
            for name, body in SELECTOR.findall(t["expr"]):
                units = {s.get("unit") for s in matching(families[name], MATCHER.findall(body or ""))}
                assert units == {UNITS[unit]}, "panel %r shows %s, its samples are in %s" % (p["title"], unit, units)
                checked += 1
    assert checked >= 6


def test_the_main_figures_each_have_a_panel(dashboard):
    """What issue 43 asks the dashboard to show: check status per stage and node, iperf3 per link, NCCL busbw, fio,
    training images/s, GPU temperature - and the regressions of the baseline comparison."""
    exprs = " ".join(expr for _, expr, _ in queries(dashboard))
    for needle in ("dgxpod_check_status", "dgxpod_checks", "dgxpod_findings", "dgxpod_run_info",
                   "dgxpod_run_timestamp_seconds", 'check="iperf"', 'check="nccl_busbw"', 'check="fio_read"',
                   'check="fio_scaling"', 'check="train_throughput"', 'check="gpu_temperature"', 'stage="baseline"'):
        assert needle in exprs, needle
    assert any("node" in (v["name"]) for v in dashboard["templating"]["list"])
