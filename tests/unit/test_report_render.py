"""Report files from a sample results document: junit parses, HTML is balanced and self-contained."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from perf_sample import base_results, profile, sample_context, sample_perf, sample_stages
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import (render_all, render_html,
    render_junit, render_markdown)

VOID = {"meta", "br", "img", "hr", "input", "link", "circle", "line", "polyline", "rect", "path"}


class Balance(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.tags = [], [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for k, v in attrs:
            if k in ("src", "href") or (v and "http" in v and k != "xmlns"):
                self.errors.append("external reference %s=%s" % (k, v))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("unbalanced </%s> (open: %s)" % (tag, self.stack[-3:]))
        else:
            self.stack.pop()


def doc(simulated=True):
    perf = sample_perf()
    return build_results(base_results(simulated), sample_context(perf), profile()["expectations"], sample_stages(perf))


def test_first_line_says_simulated_in_every_file():
    for name, text in render_all(doc(True)).items():
        first = text.splitlines()[0] if name != "results.json" else text.splitlines()[1]
        assert "SIMULATED" in first, name
    for name, text in render_all(doc(False)).items():
        assert "SIMULATED" not in text, name


def test_junit_one_testcase_per_check():
    d = doc()
    root = ET.fromstring(render_junit(d))
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(d["checks"]) == int(root.get("tests"))
    assert len(root.findall(".//failure")) == d["summary"]["fail"] == int(root.get("failures"))
    assert len(root.findall(".//error")) == d["summary"]["error"]
    assert len(root.findall(".//skipped")) == d["summary"]["skipped"]
    fail = root.find(".//failure")
    assert "sim-dgx3 enp12s0" in fail.get("message")
    suites = {s.get("name") for s in root.findall("testsuite")}
    assert {"identity", "network", "iperf", "iperf_relative", "fio_read", "fio_scaling", "storage_sizing"} <= suites


def test_html_is_balanced_self_contained_and_has_the_plots():
    html = render_html(doc())
    p = Balance()
    p.feed(html)
    assert not p.errors and not p.stack, (p.errors, p.stack)
    assert "<script" not in html and "svg" in p.tags
    assert html.count("<svg") == 4 + 2  # one heatmap per data fabric + fio scaling + latency
    assert "pair throughput" in html and "nodes reading at once" in html and "completion latency" in html
    for fabric in ("data-5", "data-12", "data-66", "data-139"):
        assert ">%s (Gb/s" % fabric in html


def test_html_of_a_run_without_perf_has_no_plots():
    html = render_html(build_results(base_results(False), {}, {}, sample_stages()))
    assert "<svg" not in html and "identity" in html


def test_markdown_lists_problems_and_sizing():
    md = render_markdown(doc())
    assert md.startswith("**SIMULATED POD")
    assert "## Problems" in md and "sim-dgx3 enp12s0" in md and "## RA sizing for this pod" in md
    assert "cache-hit estimate" in md
    table = [line for line in md.splitlines() if line.startswith("| identity |")]
    assert table == ["| identity | sim-dgx1 | pass | hostname sim-dgx1 |"]


def test_results_json_round_trips():
    d = doc()
    assert json.loads(render_all(d)["results.json"]) == json.loads(json.dumps(d))


def test_a_check_line_is_its_note_or_its_problems_whatever_the_check():
    """render.py knows no check by name: a pass says its note (the stage wrote it), a failure its problems."""
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import details, problem_line
    ok = {"check": "anything", "host": "sim-dgx2", "status": "pass", "note": "container running; seen 1 time(s)"}
    assert details(ok) == "container running; seen 1 time(s)"
    down = {"check": "anything", "host": "sim-dgx3", "status": "fail", "problems": ["container down", "no ssh"]}
    assert details(down) == "container down; no ssh"
    assert problem_line(down) == "[anything sim-dgx3] container down; no ssh"
    assert problem_line(dict(down, reason="no result")) == "[anything sim-dgx3] no result"


def test_findings_lead_the_reports_and_name_themselves_in_junit():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import with_findings
    d = with_findings(doc(True), None)
    assert d["schema_version"] == 5 and d["findings"]
    top = d["findings"][0]
    md = render_markdown(d)
    assert md.index("## Findings") < md.index("## Problems") < md.index("## Checks")
    assert "\n1. **%s** [%s]: %s\n" % (top["subject"], top["status"], top["summary"]) in md  # no subject: prefix
    html = render_html(d)
    assert html.index("<h2>Findings</h2>") < html.index("<h2>Problems</h2>") < html.index("<h2>All checks</h2>")
    checker = Balance()
    checker.feed(html)
    assert not checker.errors and not checker.stack
    junit = render_junit(d)
    assert junit.splitlines()[1].startswith("<!-- finding F1 [")
    root = ET.fromstring(junit)
    messages = [e.get("message") for e in root.iter() if e.tag in ("failure", "error")]
    assert messages and all(m.startswith("[F") for m in messages)
    named = {m.split()[0][1:] for m in messages}
    assert named == {f["id"] for f in d["findings"]}


def test_no_findings_section_on_a_healthy_run():
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import with_findings
    d = with_findings(build_results(base_results(True), None, profile()["expectations"], sample_stages(),
                                    run_tags=["identity"]), None)
    assert d["findings"] == [] and d["summary"]["fail"] == d["summary"]["error"] == 0
    assert "## Findings" not in render_markdown(d) and "<h2>Findings</h2>" not in render_html(d)
    assert "finding" not in render_junit(d)
