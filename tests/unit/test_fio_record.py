"""The record of one fio step (module_utils/storage/fio_record.py, filter pod_fio_step_record_hosts in roles/pod_perf):
decided in Python, the same data key for key and in the same order as the Jinja template it replaced, so
results.json keeps its bytes. The expected records were rendered by that template
(fixtures/perf_records/fio_steps.json)."""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from inventory_util import ROOT

from ansible_collections.dgxpod.toolkit.plugins.module_utils.storage.fio_record import (FILES_VAR, PHASE_VARS,
    node_record, ready_nodes, step_record, step_record_by_host)
from filter_plugins.perf_record import pod_fio_ready, pod_fio_step_record_hosts

FIXTURE = os.path.join(ROOT, "tests", "unit", "fixtures", "perf_records", "fio_steps.json")
with open(FIXTURE) as _fh:
    CASES = json.load(_fh)["cases"]


def _record(case, fn=step_record):
    return fn(case["nodes"], case["layout_jobs"], case.get("layout_waited"), case.get("jobs"), case.get("waited"),
              case.get("start_at"))


def _by_host(case):
    """The case as per-host tasks register it: node -> {phase variable: that node's own result}."""
    loops = [case["layout_jobs"], case.get("layout_waited"), case.get("jobs"), case.get("waited")]
    out = {}
    for i, node in enumerate(case["nodes"]):
        out[node] = {}
        for var, loop in zip(PHASE_VARS, loops, strict=True):
            results = (loop or {}).get("results") or []
            if i < len(results):
                out[node][var] = results[i]
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_same_bytes_as_the_jinja_template(case):
    assert json.dumps(_record(case)) == json.dumps(case["expected"])
    by_host = _by_host(case)
    assert json.dumps(step_record_by_host(case["nodes"], by_host, case.get("start_at"))) == json.dumps(case["expected"])
    assert json.dumps(pod_fio_step_record_hosts(case["nodes"], by_host, case.get("start_at"))) \
        == json.dumps(case["expected"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_nodes_that_read_are_those_whose_layout_finished_ok(case):
    by_host = _by_host(case)
    expected = [n for n in case["nodes"]
                if by_host[n].get(PHASE_VARS[1], {}).get("finished") and "status" in by_host[n][PHASE_VARS[1]]
                and by_host[n][PHASE_VARS[1]]["status"] == "ok"]
    assert ready_nodes(case["nodes"], by_host) == pod_fio_ready(case["nodes"], by_host) == expected


def test_ready_nodes_keep_the_step_order_and_skip_unfinished_failed_and_missing():
    by_host = {"n1": {PHASE_VARS[1]: LAID_OUT}, "n2": {PHASE_VARS[1]: dict(LAID_OUT, status="error")},
               "n3": {PHASE_VARS[1]: dict(LAID_OUT, finished=0)}, "n4": {PHASE_VARS[1]: {"skipped": True}},
               "n5": {PHASE_VARS[1]: LAID_OUT}}
    assert ready_nodes(["n5", "n4", "n3", "n2", "n1", "n6"], by_host) == ["n5", "n1"]


def test_the_cases_cover_every_outcome():
    reasons = [r["reason"] for c in CASES for r in c["expected"]["results"].values()]
    for start in ("n1 unreachable: ", "fio layout did not start: ", "fio layout: ", "layout: ", "fio did not start: ",
                  "fio: ", "fio read phase: "):
        assert any(str(r).startswith(start) for r in reasons), start
    assert None in reasons


LAUNCHED = {"ansible_job_id": "1.2", "started": 1, "finished": 0}
LAID_OUT = {"ansible_job_id": "1.2", "finished": 1, "status": "ok", "layout": {"jobs": [1]}, "seconds": 10.04}
READ = {"ansible_job_id": "3.4", "finished": 1, "status": "ok", "reason": None, "result": {"jobs": [1, 2]},
        "cleanup": "ok", "seconds": 30.0, "started_at": 100.5, "late_by": None}


def test_a_read_that_finished_is_its_own_status_with_both_phases_seconds():
    got = node_record("n1", LAUNCHED, LAID_OUT, LAUNCHED, READ)
    assert list(got) == ["status", "reason", "result", "layout", "cleanup", "seconds", "started_at", "late_by"]
    assert got["status"] == "ok" and got["seconds"] == 40.0 and got["layout"] == {"jobs": [1]}
    failed = node_record("n1", LAUNCHED, LAID_OUT, LAUNCHED, dict(READ, status="error", reason="EIO"))
    assert failed["status"] == "error" and failed["reason"] == "EIO"


def test_the_first_thing_that_went_wrong_is_the_reason():
    gone = {"unreachable": True, "msg": "no route"}
    # an unreachable layout wins over everything after it, even a read that says ok
    assert node_record("n1", gone, LAID_OUT, LAUNCHED, READ) == {
        "status": "error", "reason": "n1 unreachable: no route", "result": {}}
    assert node_record("n1", {}, {}, {}, {})["reason"] == "fio layout did not start: "
    assert node_record("n1", LAUNCHED, dict(LAID_OUT, finished=0, msg="Retries"), LAUNCHED, READ)["reason"] \
        == "fio layout: Retries"
    bad = node_record("n1", LAUNCHED, dict(LAID_OUT, status="error"), LAUNCHED, READ)
    assert bad["reason"] == "layout: failed" and bad["seconds"] == 10.04 and "started_at" not in bad
    skipped = {"skipped": True}
    assert node_record("n1", LAUNCHED, LAID_OUT, skipped, skipped)["reason"] == "fio did not start: "
    assert node_record("n1", LAUNCHED, LAID_OUT, LAUNCHED, {"ansible_job_id": "3.4", "finished": 1})["reason"] \
        == "fio: did not finish"


def test_a_step_keeps_its_nodes_order_and_start_even_with_missing_waits():
    got = step_record(("n2", "n1"), {"results": [LAUNCHED]}, None, None, None, 12.5)
    assert got["nodes"] == ["n2", "n1"] and list(got["results"]) == ["n2", "n1"] and got["start_at"] == 12.5
    assert got["results"]["n2"]["reason"] == "fio layout: did not finish"
    assert got["results"]["n1"]["reason"] == "fio layout did not start: "


def test_the_filter_gives_the_same_record_in_a_real_playbook_run(tmp_path):
    """ansible-playbook on localhost (connection local, nobody contacted): the filter loads through the
    module_utils bootstrap and its record survives Ansible's templating unchanged."""
    case = CASES[0]
    play = [{"hosts": "localhost", "gather_facts": False,
             "vars": {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}",
                      "c": case, "by_host": _by_host(case)},
             "tasks": [{"ansible.builtin.copy": {
                 "dest": str(tmp_path / "out.json"), "mode": "0644",
                 "content": "{{ c.nodes | pod_fio_step_record_hosts(by_host, c.start_at) | to_json }}"}}]}]
    (tmp_path / "play.json").write_text(json.dumps(play))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="False")
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", "localhost,",
                          str(tmp_path / "play.json")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert (tmp_path / "out.json").read_text() == json.dumps(case["expected"])


def test_reused_files_are_marked_only_when_true():
    """A layout that wrote nothing (pod_fio reuse) and a read that kept its files (keep) say so; any other record
    has neither key, so results.json of a run without reuse keeps its bytes."""
    lw = {"finished": 1, "status": "ok", "reused": True, "seconds": 0.1}
    w = {"finished": 1, "status": "ok", "result": {"jobs": []}, "kept": True, "seconds": 2.0, "started_at": 5.0}
    rec = node_record("n1", {"ansible_job_id": "1"}, lw, {"ansible_job_id": "2"}, w)
    assert rec["layout_reused"] is True and rec["kept"] is True and rec["layout"] == {} and rec["seconds"] == 2.1
    plain = node_record("n1", {"ansible_job_id": "1"}, dict(lw, reused=False), {"ansible_job_id": "2"},
                        dict(w, kept=False))
    assert "layout_reused" not in plain and "kept" not in plain


def test_a_node_holding_its_files_skips_the_layout_and_says_where_they_came_from():
    """pod_perf_fio_files (tasks/fio.yml, fio_step.yml): a skipped layout of a node that holds its files counts
    as done - in the node's first step as the layout before the steps (its write figures and seconds), later as
    reused (0 s); a skipped layout without held files, or with files whose layout failed, stays an error and the
    node does not read."""
    skipped = {"skipped": True, "changed": False, "false_condition": "held files"}
    pre = {"finished": 1, "status": "ok", "ansible_job_id": "7", "seconds": 3.0,
           "layout": {"aggregate": {"write": {"bw_bytes": 5}}}}
    kept = {"finished": 1, "status": "ok", "ansible_job_id": "8"}
    w = {"finished": 1, "status": "ok", "result": {"jobs": []}, "seconds": 2.0, "started_at": 5.0}
    first = node_record("n1", skipped, skipped, {"ansible_job_id": "2"}, w, pre)
    assert first["status"] == "ok" and first["layout"] == pre["layout"] and first["seconds"] == 5.0
    assert "layout_reused" not in first
    later = node_record("n1", skipped, skipped, {"ansible_job_id": "3"}, w, kept)
    assert later["status"] == "ok" and later["layout_reused"] is True and later["layout"] == {}
    assert later["seconds"] == 2.0
    for files in (None, {}, dict(pre, status="error"), dict(kept, finished=0)):
        rec = node_record("n1", skipped, skipped, {}, {}, files)
        assert rec["status"] == "error" and rec["reason"].startswith("fio layout did not start"), (files, rec)
    # a layout that ran in the step wins over held files
    ran = node_record("n1", {"ansible_job_id": "1"}, dict(pre, status="error", reason="disk full"), {}, {}, kept)
    assert ran["status"] == "error" and ran["reason"] == "layout: disk full"
    by_host = {"n1": {PHASE_VARS[0]: skipped, PHASE_VARS[1]: skipped, FILES_VAR: kept},
               "n2": {PHASE_VARS[0]: skipped, PHASE_VARS[1]: skipped},
               "n3": {PHASE_VARS[0]: {"ansible_job_id": "4"}, PHASE_VARS[1]: LAID_OUT, FILES_VAR: {}},
               "n4": {PHASE_VARS[0]: skipped, PHASE_VARS[1]: skipped, FILES_VAR: pre}}
    assert ready_nodes(["n4", "n3", "n2", "n1"], by_host) == ["n4", "n3", "n1"]
    step = step_record_by_host(["n1", "n2"], dict(by_host, n1=dict(by_host["n1"], **{PHASE_VARS[2]: {
        "ansible_job_id": "9"}, PHASE_VARS[3]: w})))
    assert step["results"]["n1"]["layout_reused"] is True and step["results"]["n2"]["status"] == "error"


@pytest.mark.parametrize("margin, slacks, cap, extra, want", [
    (3.2, [2.4, 1.9], None, 0, 2.3),        # the slowest used 1.3 s: + 1 s headroom
    (3.2, [2.9], None, 0, 1.5),             # used 0.3 s: the floor
    (3.2, [0.1], None, 0, 3.2),             # used 3.1 s: never more than the cap (the margin itself)
    (3.2, [-0.4], None, 0, 3.2),            # a late node: the cap
    (3.2, [None, "x", True], None, 0, 3.2),  # no number: the cap
    (2.0, [1.0], 3.4, 0.1, 2.1),            # the next step adds a node: + its per-node seconds, capped at 3.4
    (2.0, [0.2], 3.4, 0.1, 2.9),
    (None, [1.0], None, 0, None),           # nothing known
])
def test_margin_from_slack(margin, slacks, cap, extra, want):
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.common.start_margin import margin_from_slack
    assert margin_from_slack(margin, slacks, cap=cap, extra=extra) == want


def test_a_fio_step_sizes_its_margin_from_the_step_before():
    from filter_plugins.perf_record import pod_fio_start_margin
    hv = {"n1": {"pod_perf_fio_waited": {"start_slack": 2.1, "status": "ok"}},
          "n2": {"pod_perf_fio_waited": {"start_slack": 1.6}},
          "n3": {"pod_perf_fio_waited": {"skipped": True}}}
    # step 1: the configured margin (3 s + 0.1 s a node)
    assert pod_fio_start_margin(["n1"], hv, 3.1) == 3.1
    # step 3 after step 2 (n1, n2) with a 3.2 s margin: the slowest used 1.6 s, + 1 s, + 0.1 s for the node added
    assert pod_fio_start_margin(["n1", "n2", "n3"], hv, 3.3, ["n1", "n2"], 3.2, 0.1) == 2.7
    # the step before gave no number (its reads failed, the wait was skipped): the configured margin
    assert pod_fio_start_margin(["n1", "n2", "n3"], hv, 3.3, ["n3"], 3.2, 0.1) == 3.3
    assert pod_fio_start_margin(["n1"], hv, 3.1, ["n1"], None) == 3.1
