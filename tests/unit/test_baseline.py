"""A run compared with the pod's baseline (module_utils/report/baseline.py, report/results.py model_digests,
scripts/compare_runs.py): one NIC at 70 % of its baseline is a regression of exactly that NIC's links even when
iperf_relative passes, the findings name the NIC; the same run against itself gives none; a changed model is one
baseline_model error and no comparison; tolerances by check and by class; the direction from the check's
comparison. Runs: the unit tests' sample (perf_sample) on the simulator's inventory, and a real pod-in-a-box
results.json (tests/unit/fixtures/report/README.md)."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from perf_sample import base_results, profile, sample_context, sample_perf, sample_stages, sim_model
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report import baseline
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings import with_findings
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.findings_rules import pod_index
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results, model_digests
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import CheckResult, contradiction

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL = os.path.join(ROOT, "tests", "unit", "fixtures", "report", "results__podsim_all_stages_20261129T022723Z.json")
EXP = profile()["expectations"]
NIC = ("sim-dgx3", "data-12")  # sim-dgx3 enp12s0


def model_vars(change=None):
    """The simulator's model as the pod_model_vars filter hands it over ({host: {group_names, pod, <vars>}})."""
    pod, hosts, groups = sim_model()
    out = {}
    for g, names in groups.items():
        for h in names:
            out[h] = dict(copy.deepcopy(hosts[h] or {}), group_names=[g], pod=copy.deepcopy(pod))
    if change:
        change(out)
    return out


def on_nic(t):
    return NIC[0] in (t["client"], t["server"]) and t["fabric"] == NIC[1]


def run(nic_factor=1.0, finished="20261121T080000Z", model=None, expectations=EXP):
    """A run's results document: every iperf3 link at 20 Gb/s (storage 15), sim-dgx3's data-12 NIC at 25 x
    ``nic_factor`` (faster than its peers at hand-over), fio as perf_sample makes it."""
    perf = sample_perf(slow=None)
    for t in perf["iperf"]["tests"]:
        if on_nic(t):
            g = t["result"]["received_bps"] / 20.0 * 25.0 * nic_factor
            t["result"] = dict(t["result"], received_bps=g, sent_bps=g)
    base = dict(base_results(), finished=finished)
    base.update(model_digests(model if model is not None else model_vars()))
    return build_results(base, sample_context(perf), expectations, sample_stages(perf))


@pytest.fixture(scope="module")
def index():
    p, hosts, groups = sim_model()
    return pod_index(Pod.from_hostvars(hosts, groups, p))


def test_one_nic_at_70_percent_of_its_baseline_is_a_regression_of_its_links_only(index):
    before, now = run(), run(nic_factor=0.7, finished="20261128T080000Z")
    relative = [c for c in now["checks"] if c["check"] == "iperf_relative"]
    assert relative and all(c["status"] == "pass" for c in relative)  # 17.5 Gb/s is 0.875 of its peers' 20
    results = baseline.compare(now, before, EXP.get("regression"), "results/pod-in-a-box/20261121T080000Z")
    assert results[0].check == "baseline_model" and results[0].status == "pass"
    regs = results[1:]
    assert {r.check for r in regs} == {"regression_iperf", "regression_fio_read", "regression_fio_scaling"}
    failed = [r for r in regs if r.status == "fail"]
    nic_links = [c for c in now["checks"] if c["check"] == "iperf" and on_nic(c)]
    assert len(failed) == len(nic_links) > 0
    assert all(r.check == "regression_iperf" and r.subject.fabric == NIC[1] and NIC[0] in (r.subject.node,
                                                                                         r.subject.peer)
               for r in failed)
    # one comparison per link: iperf_relative carries the same Gb/s and is not compared again
    assert len([r for r in regs if r.check == "regression_iperf"]) == len([c for c in now["checks"]
                                                                          if c["check"] == "iperf"])
    r = failed[0]
    assert r.category == "link_perf" and r.stage == "baseline" and r.measured == pytest.approx(17.5)
    assert r.expected == pytest.approx(22.5) and r.details["baseline"] == pytest.approx(25.0)
    assert r.details["ratio"] == pytest.approx(0.7) and r.details["tolerance"] == 0.1
    assert "30 % lower than the baseline's 25 Gb/s (run pod-in-a-box 20261121T080000Z)" in r.cause
    assert "enp12s0" in r.cause and "data-12" in r.cause
    assert all(contradiction(x) is None for x in results)
    # the findings take it from the category and subject: one finding, the NIC
    doc = with_findings(baseline.with_baseline(now, results), index)
    assert doc["summary"]["fail"] == len(failed)
    nic = [f for f in doc["findings"] if "sim-dgx3 enp12s0" in f["subject"]]
    assert len(nic) == 1 and len(nic[0]["explains"]) == len(failed)


def test_a_run_against_itself_or_an_unchanged_pod_gives_no_regression():
    a = run()
    for other in (a, run(finished="20261128T080000Z")):
        results = baseline.compare(a, other, None)
        assert results[0].status == "pass" and len(results) > 40
        assert [r for r in results if r.status != "pass"] == []


def test_a_real_pod_in_a_box_run_against_itself_compares_its_measurements_and_finds_none():
    doc = baseline.read_results(REAL)
    results = baseline.compare(doc, doc, None, REAL)
    assert results[0].check == "baseline_model" and results[0].status == "skipped"  # written before the digest
    assert "no model digest" in results[0].reason
    regs = results[1:]
    assert len(regs) > 50 and all(r.status == "pass" for r in regs)
    stages = {c["stage"] for c in doc["checks"] if baseline.comparable(c)}
    assert {r.check for r in regs} >= {"regression_iperf", "regression_fio_read"} and "nccl" in stages
    assert all(r.subject is not None and r.category in ("link_perf", "node_perf", "job_perf", "pod_perf")
               for r in regs)


def test_a_real_run_with_one_job_slower_names_that_row():
    doc = baseline.read_results(REAL)
    slower = copy.deepcopy(doc)
    row = next(c for c in slower["checks"] if c["check"].startswith("nccl_busbw") and
               baseline.comparable(c) and c["measured"])
    row["measured"] = row["measured"] * 0.5
    failed = [r for r in baseline.compare(slower, doc, None) if r.status == "fail"]
    assert len(failed) == 1 and failed[0].host == row["host"] and failed[0].check == "regression_" + row["check"]
    assert failed[0].category == row["category"] and failed[0].subject.to_dict() == row["subject"]


def test_a_changed_model_is_one_baseline_model_error_and_nothing_is_compared():
    def dgx5(m):
        m["sim-dgx5"] = dict(copy.deepcopy(m["sim-dgx4"]), nics=[])

    def mtu(m):
        m["sim-dgx2"]["nics"][0]["mtu"] = 1500

    before = run()
    for change, words in ((dgx5, "hosts added: sim-dgx5"), (mtu, "hosts changed: sim-dgx2")):
        results = baseline.compare(run(nic_factor=0.5, model=model_vars(change)), before, None)
        assert len(results) == 1 and results[0].check == "baseline_model" and results[0].status == "error"
        assert words in results[0].reason and "not compared" in results[0].reason


def test_the_digest_leaves_out_the_judgement_and_how_hosts_are_reached():
    def judged(m):
        for v in m.values():
            v["pod"].setdefault("validation", {})["expectations"] = {"regression": {"link_perf": {"value": 0.2}}}
            v["ansible_host"] = "192.0.2.9"

    def fabric(m):
        for v in m.values():
            v["pod"]["fabrics"][0]["mtu"] = 1500

    plain = model_digests(model_vars())
    assert model_digests(model_vars(judged)) == plain
    moved = model_digests(model_vars(fabric))
    assert moved["model_digest"] != plain["model_digest"] and moved["model_parts"]["hosts"] == plain["model_parts"][
        "hosts"]
    assert plain["model_digest"].startswith("sha256:") and len(plain["model_digest"]) == 71
    results = baseline.compare(run(model=model_vars(fabric)), run(), None)
    assert "the pod's settings" in results[0].reason


def test_runs_without_a_digest_of_another_pod_are_not_compared():
    a, b = run(), run()
    for d in (a, b):
        d.pop("model_digest")
    b["pod"] = "other-pod"
    results = baseline.compare(a, b, None)
    assert len(results) == 1 and results[0].status == "error" and "another pod" in results[0].reason


def test_tolerance_by_check_then_class_then_default_with_its_source():
    block = {"iperf": {"value": 0.35, "source": "noisy lab"}, "link_perf": 0.05}
    assert baseline.tolerance(block, "iperf", "link_perf") == (0.35, "expectations.regression.iperf: noisy lab")
    assert baseline.tolerance(block, "iperf_relative", "link_perf") == (0.05, "expectations.regression.link_perf: "
                                                                             "pod override")
    assert baseline.tolerance(block, "fio_read", "node_perf") == (0.1, baseline.DEFAULT_SOURCE)
    results = baseline.compare(run(nic_factor=0.7), run(), block)
    assert [r for r in results if r.status == "fail"] == []  # 30 % is inside a 35 % tolerance
    for bad in (1.5, "10%", -0.1, True):
        with pytest.raises(ValueError, match="regression.link_perf"):
            baseline.tolerance({"link_perf": bad}, "iperf", "link_perf")
    results = baseline.compare(run(), run(), {"link_perf": {"value": 10}})
    assert results[-1].check == "baseline" and results[-1].status == "error" and "not a fraction" in \
        results[-1].reason


def row(check, measured, compare=None, category="job_perf", status="pass", **extra):
    c = {"check": check, "host": "sim-dgx1", "status": status, "measured": measured, "unit": "s",
         "category": category, "stage": "training", "subject": {"node": "sim-dgx1"}}
    if compare:
        c["compare"] = compare
    c.update(extra)
    return c


def test_the_direction_is_the_check_s_comparison_and_state_checks_are_not_compared():
    base = {"pod": "p", "checks": [row("step_time", 10.0, "<= "), row("busbw", 100.0), row("gpu_count", 8, "= "),
                                   row("xid_count", 0, "<= ", category="node_state"), row("odd", "fast")]}
    now = copy.deepcopy(base)
    now["checks"][0]["measured"] = 12.0   # 20 % slower: worse for a lower-is-better number
    now["checks"][1]["measured"] = 130.0  # better
    now["checks"][3]["measured"] = 5
    results = baseline.compare(now, base, None)
    assert results[0].status == "skipped"
    assert [(r.check, r.status) for r in results[1:]] == [("regression_step_time", "fail"),
                                                          ("regression_busbw", "pass")]
    step = results[1]
    assert step.details["compare"] == "<= " and step.expected == pytest.approx(11.0)
    assert "20 % higher than the baseline's 10 s" in step.cause
    assert all(contradiction(r) is None for r in results)


def test_rows_only_in_one_run_are_not_compared_and_reverse_tests_are_their_own_rows():
    base = {"pod": "p", "checks": [row("busbw", 100.0, reverse=False), row("busbw", 50.0, reverse=True)]}
    now = {"pod": "p", "checks": [row("busbw", 100.0, reverse=False), row("busbw", 40.0, reverse=True),
                                  row("new_thing", 1.0)]}
    results = baseline.compare(now, base, None)
    assert [(r.check, r.status, r.details.get("reverse")) for r in results[1:]] == [
        ("regression_busbw", "pass", False), ("regression_busbw", "fail", True)]


def test_read_results_takes_a_file_or_a_run_directory_and_names_what_is_wrong(tmp_path):
    doc = {"pod": "p", "checks": []}
    (tmp_path / "results.json").write_text(json.dumps(doc))
    assert baseline.read_results(str(tmp_path)) == doc == baseline.read_results(str(tmp_path / "results.json"))
    with pytest.raises(ValueError, match="cannot read"):
        baseline.read_results(str(tmp_path / "nope"))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        baseline.read_results(str(tmp_path / "bad.json"))
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(ValueError, match="not a results.json"):
        baseline.read_results(str(tmp_path / "list.json"))
    assert isinstance(baseline.unreadable("x"), CheckResult)


def compare_runs(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "compare_runs.py"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_compare_runs_prints_the_same_checks_and_exits_by_them(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "results.json").write_text(json.dumps(run()))
    (b / "results.json").write_text(json.dumps(run(nic_factor=0.7, finished="20261128T080000Z")))
    res = compare_runs(str(a), str(b / "results.json"))
    assert res.returncode == 1, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("[pass] baseline_model")
    assert sum(1 for line in lines if line.startswith("[fail] regression_iperf")) == 3
    assert all("enp12s0" in line for line in lines if line.startswith("[fail]"))
    assert lines[-1].endswith(" 3 regression(s)")
    same = compare_runs(str(a), str(a))
    assert same.returncode == 0 and same.stdout.splitlines()[-1].endswith(" 0 regression(s)")
    loose = compare_runs(str(a), str(b), "--tolerance", "link_perf=0.4")
    assert loose.returncode == 0, loose.stdout
    as_json = json.loads(compare_runs(str(a), str(b), "--json").stdout)
    assert sum(1 for c in as_json if c["status"] == "fail") == 3 and as_json[0]["check"] == "baseline_model"
    missing = compare_runs(str(a), str(tmp_path / "none"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


# --------------------------------------------------------------------------- the report role, end to end
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
ENV = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="default",
           ANSIBLE_FACT_CACHING="memory", ANSIBLE_NOCOLOR="1")


class Gateway:
    """A Pushgateway stand-in on 127.0.0.1: records each request's method, path, content type and body."""

    def __init__(self, status=200):
        import http.server
        import threading

        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")
                seen.append((self.command, self.path, self.headers["Content-Type"], body))
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"stand-in says no" if status >= 400 else b"")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def stages_file(path, nic_factor):
    perf = sample_perf(slow=None)
    for t in perf["iperf"]["tests"]:
        if on_nic(t):
            g = t["result"]["received_bps"] / 20.0 * 25.0 * nic_factor
            t["result"] = dict(t["result"], received_bps=g, sent_bps=g)
    path.write_text(json.dumps({"pod_stages": {"iperf": {"run": perf["run"], "tests": perf["iperf"]["tests"]},
                                               "fio": {"run": perf["run"], "steps": perf["fio"]["steps"]}}}))
    return "@%s" % path


def report(tmp_path, stages, *extra):
    return subprocess.run([PLAYBOOK, "playbooks/report.yml", "-e", "pod_report_dir=%s" % (tmp_path / "results"),
                           "-e", "pod_report_fail_on_problems=false", "-e", stages, *extra], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)


def test_report_role_marks_a_baseline_compares_with_it_and_exports_the_metrics(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    gateway = Gateway()
    textfiles = tmp_path / "textfile"
    textfiles.mkdir()
    pod_dir = tmp_path / "results" / "pod-in-a-box"
    try:
        first = report(tmp_path, stages_file(tmp_path / "a.json", 1.0), "-e", "pod_report_mark_baseline=true",
                       "-e", "pod_report_textfile_dir=%s" % textfiles, "-e", "pod_report_pushgateway=%s" % gateway.url)
        assert first.returncode == 0, first.stdout[-3000:]
        hand_over = json.loads((pod_dir / "baseline" / "results.json").read_text())
        assert hand_over["model_digest"].startswith("sha256:") and "sim-dgx3" in hand_over["model_parts"]["hosts"]
        assert not any(c["check"].startswith("regression_") for c in hand_over["checks"])
        # the textfile collector's copy, whole, and the push: PUT of the same text to the pod's group
        prom = (textfiles / "dgxpod_pod-in-a-box.prom").read_text()
        assert prom == (pod_dir / "baseline" / "metrics.prom").read_text()
        assert [f for f in os.listdir(textfiles)] == ["dgxpod_pod-in-a-box.prom"]
        assert oct((textfiles / "dgxpod_pod-in-a-box.prom").stat().st_mode & 0o777) == "0o644"
        ((method, path, ctype, body),) = gateway.seen
        assert (method, path) == ("PUT", "/metrics/job/dgxpod/pod@base64/cG9kLWluLWEtYm94")
        assert ctype.startswith("text/plain; version=0.0.4") and body == prom
        names = {f.name for f in text_string_to_metric_families(body)}
        assert {"dgxpod_check_status", "dgxpod_measurement", "dgxpod_run_info"} <= names

        # the next run: sim-dgx3's data-12 NIC at 70 % of its hand-over rate; the marked baseline is found
        second = report(tmp_path, stages_file(tmp_path / "b.json", 0.7))
        assert second.returncode == 0, second.stdout[-3000:]
        assert "3 regression(s)" in second.stdout
        now = json.loads((pod_dir / "latest" / "results.json").read_text())
        regs = [c for c in now["checks"] if c["check"] == "regression_iperf" and c["status"] == "fail"]
        assert len(regs) == 3 and all(c["stage"] == "baseline" for c in regs)
        assert all(c["status"] == "pass" for c in now["checks"] if c["check"] == "iperf_relative")
        nic = [f for f in now["findings"] if f["subject"] == "sim-dgx3 enp12s0"]
        assert len(nic) == 1 and {e["check"] for e in nic[0]["explains"]} == {"regression_iperf"}
        prom = (pod_dir / "latest" / "metrics.prom").read_text()
        failed = [s for f in text_string_to_metric_families(prom) if f.name == "dgxpod_check_status"
                  for s in f.samples if s.labels["status"] == "fail"]
        assert {(s.labels["check"], s.labels["nic"], s.labels["stage"]) for s in failed} == {
            ("regression_iperf", "enp12s0", "baseline")}
        assert "regression_iperf" in (pod_dir / "latest" / "report.md").read_text()
    finally:
        gateway.close()


def test_a_pushgateway_that_refuses_or_is_not_there_is_a_warning_and_a_bad_baseline_an_error(tmp_path):
    refusing = Gateway(status=400)
    try:
        res = report(tmp_path, stages_file(tmp_path / "a.json", 1.0), "-e", "pod_report_pushgateway=%s" % refusing.url,
                     "-e", "pod_baseline=%s" % (tmp_path / "no-such-run"))
    finally:
        refusing.close()
    assert res.returncode == 0, res.stdout[-3000:]
    out = " ".join((res.stdout + res.stderr).split())
    assert "metrics not pushed" in out and "HTTP 400: stand-in says no" in out
    doc = json.loads((tmp_path / "results" / "pod-in-a-box" / "latest" / "results.json").read_text())
    bad = [c for c in doc["checks"] if c["check"] == "baseline"]
    assert len(bad) == 1 and bad[0]["status"] == "error" and "cannot read" in bad[0]["reason"]
    gone = report(tmp_path, stages_file(tmp_path / "a.json", 1.0), "-e", "pod_report_pushgateway=http://127.0.0.1:9",
                  "-e", "pod_report_pushgateway_timeout=2", "-e", "pod_report_textfile_dir=%s" % (tmp_path / "none"))
    assert gone.returncode == 0, gone.stdout[-3000:]
    out = " ".join((gone.stdout + gone.stderr).split())
    assert "metrics not pushed" in out and "not written to the textfile collector directory" in out
