"""The slurm stage of validate.yml and --drain-failed (issue 20): module_utils/slurm/eval.py turns what
playbooks/validate_slurm.yml recorded into checks; the report carries them; playbooks/validate_slurm_drain.yml
drains after the report. Here without Slurm (pure functions, and the real plays on a localhost inventory of a
pod without a scheduler); test_slurm_daemons.py runs the same plays against a real slurmctld/slurmd."""
from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from inventory_util import ROOT
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.results import build_results
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.render import render_all
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import drain as slurm_drain
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import eval as slurm_eval

DGX = ["DGX1-1", "DGX1-2", "DGX1-3", "DGX1-4"]


def _states(**over):
    base = {n: {"state": "idle", "drain": False, "responding": True, "reason": None} for n in DGX}
    base.update(over)
    return base


def _recorded(nodes, **extra):
    return dict({"scheduler": "slurm", "controller": "DGX1-1", "partition": "dgx", "dgx": DGX, "nodes": nodes},
                **extra)


# ----------------------------------------------------------------------------- slurm_eval (pure)
def test_no_scheduler_in_the_model_gives_no_checks():
    assert slurm_eval.evaluate({"scheduler": "none"}, {}, {}) == []
    assert slurm_eval.evaluate({}, {}, {}) == []


def test_every_dgx_gets_a_slurm_node_check_and_the_controller_one():
    nodes = _states(**{"DGX1-2": {"state": "drained", "drain": True, "responding": True,
                                  "reason": "dgxpod nccl_busbw: 40% of its peers"},
                       "DGX1-3": {"state": "idle", "drain": False, "responding": False, "reason": "Not responding"}})
    del nodes["DGX1-4"]
    checks = [c.to_dict() for c in slurm_eval.evaluate(_recorded(nodes), {}, {})]
    assert [(c["check"], c["host"], c["status"]) for c in checks] == [
        ("slurm_controller", "DGX1-1", "pass"), ("slurm_node", "DGX1-1", "pass"), ("slurm_node", "DGX1-2", "fail"),
        ("slurm_node", "DGX1-3", "fail"), ("slurm_node", "DGX1-4", "fail")]
    by = {c["host"]: c for c in checks if c["check"] == "slurm_node"}
    assert by["DGX1-2"]["cause"] == "drained in Slurm: dgxpod nccl_busbw: 40% of its peers"
    assert by["DGX1-3"]["cause"] == "idle, not responding in Slurm: Not responding"
    assert "not a node of slurmctld" in by["DGX1-4"]["cause"]
    assert all(c["source"] == slurm_eval.SOURCE for c in checks)
    # Slurm's view, as data (issue 38): of each DGX, and of the controller (a node of the pod)
    assert {(c["host"], c["category"], c["subject"]["node"]) for c in checks} == {
        ("DGX1-1", "service_state", "DGX1-1"), ("DGX1-2", "service_state", "DGX1-2"),
        ("DGX1-3", "service_state", "DGX1-3"), ("DGX1-4", "service_state", "DGX1-4")}


def test_a_controller_that_does_not_answer_fails_and_an_unreachable_one_is_error():
    failed = slurm_eval.evaluate(_recorded(None, error="scontrol show node -o failed (rc 1): Unable to contact"),
                                 {}, {})
    assert [(c.check, c.host, c.status) for c in failed] == [("slurm_controller", "DGX1-1", "fail")]
    assert "Unable to contact" in failed[0].cause and "DGX1-1" in failed[0].cause
    gone = slurm_eval.evaluate(_recorded(None, error="ssh: connect refused", unreachable=True), {}, {})
    assert gone[0].status == "error" and "did not answer" in gone[0].reason
    assert gone[0].unreachable and not failed[0].unreachable  # the record says which, not the words
    assert {(c.category, c.subject.node) for c in failed + gone} == {("service_state", "DGX1-1")}


def _base():
    return {"pod": "p", "ra_profile": "r", "simulated": False, "finished": "t", "checks": []}


def test_the_report_shows_the_slurm_checks_and_table():
    nodes = _states(**{"DGX1-4": {"state": "down", "drain": False, "responding": False, "reason": "Not responding"}})
    doc = build_results(_base(), {}, {}, {"slurm": _recorded(nodes)}, run_tags=["slurm"])
    rows = [(c["check"], c["host"], c["status"]) for c in doc["checks"] if c["check"].startswith("slurm")]
    assert rows[0] == ("slurm_controller", "DGX1-1", "pass") and ("slurm_node", "DGX1-4", "fail") in rows
    assert doc["summary"]["fail"] == 1 and doc["measurements"]["slurm"]["partition"] == "dgx"
    files = render_all(doc)
    assert "## Slurm (controller DGX1-1, partition dgx)" in files["report.md"]
    assert "| DGX1-4 | down, not responding | Not responding |" in files["report.md"]
    assert "<h2>Slurm (controller DGX1-1, partition dgx)</h2>" in files["report.html"]
    assert 'name="slurm_node' in files["junit.xml"] or "slurm_node" in files["junit.xml"]


def test_a_pod_without_slurm_has_no_slurm_rows_and_a_slurm_pod_left_out_is_skipped():
    none = build_results(_base(), {}, {}, {"slurm": {"scheduler": "none"}}, run_tags=["gpu"])
    assert [c for c in none["checks"] if c["check"].startswith("slurm")] == []
    assert "Slurm" not in render_all(none)["report.md"].split("## Checks")[0]
    left = build_results(_base(), {}, {}, {}, run_tags=["gpu"])
    assert [(c["check"], c["status"]) for c in left["checks"] if c["check"] == "slurm"] == [("slurm", "skipped")]
    lost = build_results(_base(), {}, {}, {}, run_tags=["slurm"])  # selected but recorded nothing: the play failed
    assert [(c["check"], c["status"]) for c in lost["checks"] if c["check"] == "slurm"] == [("slurm", "error")]


# ----------------------------------------------------------------------------- what --drain-failed drains
def _finding(fid, host, check, cause="slow"):
    return {"id": fid, "host": host, "cause": cause, "status": "fail", "root": {"check": check, "host": host},
            "explains": [{"check": check, "host": host}]}


def test_slurm_own_checks_never_drain():
    doc = {"findings": [_finding("F1", "DGX1-2", "slurm_node", "drained in Slurm: disk replacement"),
                        _finding("F2", "DGX1-1", "slurm_controller", "slurmctld on DGX1-1: no answer"),
                        _finding("F3", "DGX1-3", "gpu_ecc", "GPU 2 ECC errors")]}
    plan = slurm_drain.drain_plan(doc, DGX)
    assert plan["drain"] == [{"node": "DGX1-3", "finding": "F3", "reason": "dgxpod gpu_ecc: GPU 2 ECC errors"}]
    assert [(s["host"], s["finding"]) for s in plan["skipped"]] == [("DGX1-2", "F1"), ("DGX1-1", "F2")]
    assert "Slurm's own state" in plan["skipped"][0]["why"]
    assert len(slurm_drain.drain_plan(doc, DGX, 1.0, exclude_checks=())["drain"]) == 3  # the rule is what excludes


def test_drain_keeps_an_administrators_drain_and_skips_its_own_same_reason():
    import pod_slurm
    states = _states(**{"DGX1-2": {"state": "drained", "drain": True, "responding": True, "reason": "disk swap"},
                        "DGX1-3": {"state": "drained", "drain": True, "responding": True, "reason": "dgxpod a: b"},
                        "DGX1-4": {"state": "draining", "drain": True, "responding": True, "reason": "dgxpod old: c"}})
    wanted = [("DGX1-1", "dgxpod x: y"), ("DGX1-2", "dgxpod x: y"), ("DGX1-3", "dgxpod a: b"),
              ("DGX1-4", "dgxpod new: d"), ("DGX9", "dgxpod x: y")]
    todo, unknown, already, kept = pod_slurm.drain_changes(states, wanted)
    assert todo == [("DGX1-1", "dgxpod x: y"), ("DGX1-4", "dgxpod new: d")]
    assert unknown == ["DGX9"] and already == ["DGX1-3"] and kept == [{"node": "DGX1-2", "reason": "disk swap"}]
    todo, _, _, kept = pod_slurm.drain_changes(states, wanted, keep_foreign=False)
    assert ("DGX1-2", "dgxpod x: y") in todo and kept == []


def test_validate_yml_runs_the_slurm_stage_before_the_report_and_the_drain_after_it():
    with open(os.path.join(ROOT, "validate.yml")) as fh:
        plays = [p["ansible.builtin.import_playbook"] for p in yaml.safe_load(fh)]
    assert plays.index("playbooks/validate_slurm.yml") < plays.index("playbooks/report.yml") \
        < plays.index("playbooks/validate_slurm_drain.yml") == len(plays) - 1
    with open(os.path.join(ROOT, "playbooks", "report.yml")) as fh:
        report = yaml.safe_load(fh)[0]
    assert "pod_drain_failed" in report["vars"]["pod_report_fail_on_problems"]  # the verdict waits for the drain


# ----------------------------------------------------------------------------- the plays on a pod without Slurm
def write_pod(tmp_path, pod_extra=None, host_extra=None, node="DGX1-1"):
    """A one-DGX localhost inventory and a wrapper that runs validate.yml's slurm stage, report and drain plays
    (validate.yml's order) after an optional injected failed identity reading of the DGX, its hostname
    (-e inject_fail=...), recorded in pod_stages.identity as validate_identity.yml records it."""
    pod = dict({"name": "tiny", "ra_profile": "isilon-f800-dgx1"}, **(pod_extra or {}))
    host = dict({"ansible_connection": "local", "ansible_python_interpreter": os.path.join(ROOT, ".venv", "bin",
                                                                                            "python")},
                **(host_extra or {}))
    inv = tmp_path / "hosts.json"
    inv.write_text(json.dumps({"all": {"vars": {"pod": pod}, "children": {"dgx": {"hosts": {node: host}}}}}))
    wrapper = tmp_path / "validate_slurm_wrapper.yml"
    wrapper.write_text(yaml.safe_dump([
        {"name": "inject a failed check", "hosts": "localhost", "gather_facts": False, "tags": ["always"], "tasks": [
            {"name": "a failed identity reading of the DGX (its hostname)",
             "ansible.builtin.set_fact": {"pod_stages": {"identity": {"hosts": {node: {
                 "hostname": "{{ inject_fail }}", "interfaces": [], "nics": [], "check_hostname": True,
                 "check_nics": True}}}}}, "when": "inject_fail is defined"}]},
        {"import_playbook": os.path.join(ROOT, "playbooks", "validate_slurm.yml"), "tags": ["slurm"]},
        {"import_playbook": os.path.join(ROOT, "playbooks", "report.yml"), "tags": ["always"]},
        {"import_playbook": os.path.join(ROOT, "playbooks", "validate_slurm_drain.yml"), "tags": ["always"]}]))
    return {"inv": str(inv), "wrapper": str(wrapper), "results": tmp_path / "results" / pod["name"] / "latest"}


def inject(cause):
    """The extra vars that make the wrapper record a failed identity check on the DGX with this cause."""
    return ["-e", json.dumps({"inject_fail": cause})]


def run_validate(pod, *args, env=None):
    env = dict(env or os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FACT_CACHING="memory")
    res = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", pod["inv"], pod["wrapper"],
                          "-e", "pod_report_dir=%s" % os.path.dirname(pod["results"].parent), *args],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    with open(pod["results"] / "results.json") as fh:
        return res, json.load(fh)


def test_a_pod_without_slurm_says_so_once_records_nothing_and_drain_failed_is_a_message(tmp_path):
    pod = write_pod(tmp_path)
    res, doc = run_validate(pod, "--tags", "slurm")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert res.stdout.count("no scheduler in the model") == 1
    assert [c for c in doc["checks"] if c["check"].startswith("slurm")] == [] and doc["summary"]["error"] == 0
    res, doc = run_validate(pod, "--tags", "slurm", "-e", "pod_drain_failed=true", *inject("hostname x"))
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-2000:]  # the run's verdict, after the message
    assert "pod_drain_failed=true, but there is no scheduler in the model" in res.stdout
    assert "Fail the run if any check failed" in res.stdout and "1 check(s) failed" in res.stdout
    assert "Traceback" not in res.stdout + res.stderr
    assert [(c["check"], c["status"]) for c in doc["checks"] if c["status"] == "fail"] == [("identity", "fail")]


@pytest.mark.parametrize("drain", [False, True])
def test_without_drain_failed_the_verdict_is_the_reports(tmp_path, drain):
    """The failed run fails in the report play as before (no drain requested) or after the drain play."""
    pod = write_pod(tmp_path)
    extra = ["-e", "pod_drain_failed=true"] if drain else []
    res, _ = run_validate(pod, "--tags", "slurm", *inject("hostname x"), *extra)
    assert res.returncode == 2
    tail = res.stdout[res.stdout.index("PLAY [Slurm - drain"):] if "PLAY [Slurm - drain" in res.stdout else ""
    assert ("1 check(s) failed" in tail) == drain
