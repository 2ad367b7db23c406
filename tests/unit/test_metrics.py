"""metrics.prom (module_utils/report/metrics.py): every run's results as Prometheus text exposition 0.0.4, read back by
a real exposition parser (prometheus_client.parser.text_string_to_metric_families) and by the format's line rules.

Documents: the unit tests' sample run (perf_sample: iperf3 with a slow NIC, fio with an error, every other stage
missing) with its findings, and two results.json files the pod-in-a-box wrote (tests/unit/fixtures/report/README.md:
every stage healthy; a switch port MTU fault)."""
from __future__ import annotations

import json
import math
import os
import re

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perf_sample import base_results, profile, sample_context, sample_perf, sample_stages
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import metrics
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import with_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "report")
REAL_RUNS = ("results__podsim_all_stages_20261129T022723Z.json", "results__podsim_failing_20261129T020847Z.json")
# a sample line of the text format: name, optional {labels}, one value, no timestamp (node_exporter's textfile
# collector supports none; the Pushgateway refuses them)
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? '
                    r'(\S+)$')


def sample_doc():
    perf = sample_perf()
    return with_findings(build_results(base_results(), sample_context(perf), profile()["expectations"],
                                       sample_stages(perf)))


def real_doc(name):
    with open(os.path.join(FIXTURES, name)) as fh:
        return json.load(fh)


def families(text):
    return {f.name: f for f in text_string_to_metric_families(text)}


def line_rules(text):
    """The format's rules the parser is lenient about, as a textfile collector or Pushgateway applies them: a line
    feed at the end, HELP then TYPE once per family before its samples, a family's samples together, no label set
    twice in a family, no timestamps, no '# EOF' (that is OpenMetrics)."""
    assert text.endswith("\n") and "\n\n" not in text
    assert "# EOF" not in text
    done, current, label_sets = set(), None, set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            assert name not in done and name != current, "second HELP for %s" % name
            done.add(current)
            current, label_sets = name, set()
            continue
        if line.startswith("# TYPE "):
            assert line == "# TYPE %s gauge" % current
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        assert m.group(1) == current, "%s outside its family" % m.group(1)
        assert m.group(2) not in label_sets, "label set twice in %s: %s" % (current, m.group(2))
        label_sets.add(m.group(2))
        float(m.group(3).replace("Inf", "inf"))


def status_samples(fams):
    return fams["dgxpod_check_status"].samples


def test_sample_run_parses_with_a_sample_for_every_check_row():
    doc = sample_doc()
    text = metrics.prometheus_text(doc)
    line_rules(text)
    fams = families(text)
    assert all(f.type == "gauge" for f in fams.values())
    rows = status_samples(fams)
    assert len(rows) == len(doc["checks"])
    for c, s in zip(doc["checks"], rows, strict=True):
        assert s.value == 1 and s.labels["status"] == c["status"]
        assert s.labels["check"] == c["check"] and s.labels["host"] == c["host"] and s.labels["pod"] == "pod-in-a-box"
        assert s.labels["stage"] == c["stage"] and s.labels["category"] == c["category"]
    # the slow NIC's failing iperf_relative rows are there with their link
    failed = [s.labels for s in rows if s.labels["status"] == "fail"]
    assert len(failed) == doc["summary"]["fail"] == 3
    assert all(s["check"] == "iperf_relative" and "sim-dgx3" in (s["node"], s["peer"]) and s["fabric"] == "data-12"
               for s in failed)
    counts = {s.labels["status"]: s.value for s in fams["dgxpod_checks"].samples}
    assert counts == doc["summary"]
    assert fams["dgxpod_findings"].samples[0].value == len(doc["findings"]) > 0
    assert fams["dgxpod_run_timestamp_seconds"].samples[0].value == 1795248000  # 2026-11-21T08:00:00Z
    info = fams["dgxpod_run_info"].samples[0].labels
    assert info == {"pod": "pod-in-a-box", "ra_profile": "isilon-f800-dgx1", "simulated": "true",
                    "schema_version": "5"}


def test_every_numeric_measurement_and_expectation_is_a_sample_with_its_unit_and_comparison():
    doc = sample_doc()
    fams = families(metrics.prometheus_text(doc))
    measured = [c for c in doc["checks"] if metrics.is_number(c.get("measured"))]
    expected = [c for c in doc["checks"] if metrics.is_number(c.get("expected"))]
    assert len(measured) > 50 and len(expected) > 20
    assert [s.value for s in fams["dgxpod_measurement"].samples] == [float(c["measured"]) for c in measured]
    assert [s.labels.get("unit") for s in fams["dgxpod_measurement"].samples] == [c.get("unit") for c in measured]
    assert [s.value for s in fams["dgxpod_expected"].samples] == [float(c["expected"]) for c in expected]
    assert {s.labels["compare"] for s in fams["dgxpod_expected"].samples} == {">="}
    iperf = next(s for s in fams["dgxpod_measurement"].samples if s.labels["check"] == "iperf")
    assert iperf.labels["unit"] == "Gb/s" and set(iperf.labels) >= {"node", "nic", "peer", "peer_nic", "fabric"}


@pytest.mark.parametrize("name", REAL_RUNS)
def test_a_real_run_of_the_pod_in_a_box_parses_with_a_sample_for_every_check(name):
    doc = real_doc(name)
    text = metrics.prometheus_text(doc)
    line_rules(text)
    fams = families(text)
    rows = status_samples(fams)
    assert len(rows) == len(doc["checks"]) > 100
    assert [s.labels["status"] for s in rows] == [c["status"] for c in doc["checks"]]
    keys = [tuple(sorted((k, v) for k, v in s.labels.items() if k != "status")) for s in rows]
    assert len(set(keys)) == len(keys)  # one series per row, stable from run to run
    assert {s.labels["status"]: s.value for s in fams["dgxpod_checks"].samples} == doc["summary"]
    assert fams["dgxpod_findings"].samples[0].value == len(doc["findings"])
    numbers = [c for c in doc["checks"] if metrics.is_number(c.get("measured"))]
    assert len(fams["dgxpod_measurement"].samples) == len(numbers) > 0


def test_the_failing_real_run_names_the_switch_port_and_the_nic():
    fams = families(metrics.prometheus_text(real_doc(REAL_RUNS[1])))
    failed = [s.labels for s in status_samples(fams) if s.labels["status"] == "fail"]
    assert {f["check"] for f in failed} == {"switch_port_mtu", "switch_drift"}
    port = next(f for f in failed if f["check"] == "switch_port_mtu")
    assert (port["switch"], port["port"]) == ("sim-sw2", "Ethernet3/1")


def test_label_values_are_escaped_and_read_back_exactly():
    odd = 'sw"1\\Eth 1/1\nnext'
    doc = {"pod": "p\\od", "finished": "20261121T080000Z",
           "checks": [{"check": "switch_port_mtu", "host": odd, "status": "fail", "measured": 1500, "expected": 9214,
                       "unit": "bytes", "compare": "= ", "category": "port_state", "stage": "switches",
                       "subject": {"switch": odd, "port": "Ethernet1/1", "gpu": 3, "nodes": ["a", "b"],
                                   "storage": True}}]}
    text = metrics.prometheus_text(doc)
    line_rules(text)
    fams = families(text)
    s = status_samples(fams)[0]
    assert s.labels["host"] == odd and s.labels["switch"] == odd and s.labels["pod"] == "p\\od"
    assert s.labels["gpu"] == "3" and "nodes" not in s.labels and "storage" not in s.labels
    assert fams["dgxpod_expected"].samples[0].labels["compare"] == "="
    assert fams["dgxpod_measurement"].samples[0].value == 1500


def test_help_text_escapes_backslash_and_line_feed():
    lines = metrics.family_text("dgxpod_x", "a\\b\nc", [((), 1)])
    assert lines[0] == "# HELP dgxpod_x a\\\\b\\nc"
    assert families("\n".join(lines) + "\n")["dgxpod_x"].documentation == "a\\b\nc"


def test_two_rows_with_the_same_labels_get_a_seq_label():
    row = {"check": "iperf", "host": "a<->b", "status": "pass", "measured": 10.0, "unit": "Gb/s",
           "category": "link_perf", "stage": "iperf", "subject": {"node": "a", "nic": "e0", "peer": "b",
                                                                  "peer_nic": "e0", "fabric": "f"}}
    doc = {"pod": "p", "checks": [row, dict(row, measured=11.0), dict(row, measured=12.0, status="fail",
                                                                           cause="slow")]}
    text = metrics.prometheus_text(doc)
    line_rules(text)
    rows = status_samples(families(text))
    assert [s.labels.get("seq") for s in rows] == [None, "2", "3"]


def test_only_numbers_are_measurements_and_odd_numbers_keep_their_spelling():
    doc = {"pod": "p", "checks": [
        {"check": "a", "host": "h", "status": "pass", "measured": True},
        {"check": "b", "host": "h", "status": "pass", "measured": "550.54.15", "expected": "550.54.15"},
        {"check": "c", "host": "h", "status": "fail", "measured": float("nan"), "cause": "x"},
        {"check": "d", "host": "h", "status": "pass", "measured": float("inf")},
        {"check": "e", "host": "h", "status": "pass", "measured": -2, "expected": {"a": 1}},
        {"check": "f", "host": "h", "status": "skipped", "measured": 1e-12}]}
    text = metrics.prometheus_text(doc)
    line_rules(text)
    values = {s.labels["check"]: s.value for s in families(text)["dgxpod_measurement"].samples}
    assert set(values) == {"c", "d", "e", "f"}
    assert math.isnan(values["c"]) and values["d"] == math.inf and values["e"] == -2 and values["f"] == 1e-12
    assert 'check="d",host="h"} +Inf' in text and 'check="c",host="h"} NaN' in text
    assert "dgxpod_expected{" not in text


def test_a_run_without_checks_or_time_is_still_a_valid_file():
    text = metrics.prometheus_text({"pod": "p", "finished": "not a time"})
    line_rules(text)
    fams = families(text)
    assert fams["dgxpod_run_timestamp_seconds"].samples == []
    assert {s.labels["status"]: s.value for s in fams["dgxpod_checks"].samples} == {
        "pass": 0, "fail": 0, "skipped": 0, "error": 0}
    assert fams["dgxpod_findings"].samples[0].value == 0


def test_finished_reads_both_stamp_forms():
    assert metrics.finished_seconds("20261121T080000Z") == 1795248000
    assert metrics.finished_seconds("20261121T0800Z") == 1795248000
    assert metrics.finished_seconds("2026-11-21") is None and metrics.finished_seconds(None) is None


def test_names_are_checked_before_they_are_written():
    with pytest.raises(ValueError, match="metric name"):
        metrics.family_text("dgxpod-x", "h", [])
    with pytest.raises(ValueError, match="label name"):
        metrics.family_text("dgxpod_x", "h", [((("peer-nic", "a"),), 1)])
    with pytest.raises(ValueError, match="label name"):
        metrics.family_text("dgxpod_x", "h", [((("__name", "a"),), 1)])


def test_model_digest_is_in_the_run_info_when_the_document_has_one():
    fams = families(metrics.prometheus_text({"pod": "p", "model_digest": "sha256:ab12", "checks": []}))
    assert fams["dgxpod_run_info"].samples[0].labels["model_digest"] == "sha256:ab12"
