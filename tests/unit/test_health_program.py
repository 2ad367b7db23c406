"""dgxpod-health, slurmd's HealthCheckProgram (module_utils/slurm/health.py, roles/slurm/files/dgxpod_health_*.py):
the drain/resume rule on Slurm's own view of the node (drain when failing, resume only its own drain, never touch an
administrator's drain or a DOWN node), the scontrol calls with a fake scontrol, the checks judged by the GPU and node
stages' evaluators on the simulator stand-ins' readings, slurm.conf's HealthCheck lines, and the zipapp the role
builds, run by a plain Python with no Ansible against a fake scontrol.

``scontrol show node -o`` lines: tests/unit/fixtures/slurm/scontrol_{idle,drained,down}.txt, captured from Slurm
22.05.8 (docs/slurm.md). The line of a node drained by this program is composed from the drained capture with its
``Reason=`` replaced by one of ours (the format is the capture's: ``Reason=<text> [<user>@<time>]``), and the line
of a node set DOWN without DRAIN from the down capture (``State=DOWN+DRAIN`` -> ``State=DOWN``)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.kernel_log import parse_kernel_log
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import NODE_STATE, CheckResult, Subject
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import conf as slurm_conf
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm import health

from inventory_util import ROOT, hostvars
from test_gpu_stage import node_facts

FX = os.path.join(ROOT, "tests", "unit", "fixtures", "slurm")
FILES = os.path.join(ROOT, "roles", "slurm", "files")


def fx(name):
    with open(os.path.join(FX, name)) as fh:
        return fh.read()


IDLE = fx("scontrol_idle.txt")                 # State=IDLE, no reason
ADMIN = fx("scontrol_drained.txt")             # State=IDLE+DRAIN, Reason=check: nccl_busbw low ... [root@...]
DOWN_DRAIN = fx("scontrol_down.txt")           # State=DOWN+DRAIN, Reason=slurmd stopped for maintenance [root@...]
DOWN = DOWN_DRAIN.replace("State=DOWN+DRAIN", "State=DOWN")  # composed: a node set DOWN, not drained
OUR_REASON = "dgxpod-health: gpu_ecc: GPU 2 has 2 volatile double-bit ECC errors"
OURS = ADMIN.replace("check: nccl_busbw low (DGX1-2 at 40% of peers)", OUR_REASON)  # composed (docstring)


def failing(check="gpu_ecc", cause="GPU 2 has 2 volatile double-bit ECC errors", node="vm"):
    return CheckResult(check, node, "fail", cause=cause, subject=Subject(node=node, gpu=2), category=NODE_STATE)


class FakeScontrol:
    """run(argv, timeout) for scontrol: ``show node`` answers ``shown`` (or fails with ``show_rc``), ``update``
    answers ``update_rc``; every call is kept."""

    def __init__(self, shown, show_rc=0, update_rc=0):
        self.shown, self.show_rc, self.update_rc = shown, show_rc, update_rc
        self.calls = []

    def __call__(self, argv, timeout):
        self.calls.append(list(argv))
        if argv[1] == "show":
            return (self.show_rc, self.shown, "") if self.show_rc == 0 else \
                (self.show_rc, "", "slurm_load_node error: Unable to contact slurm controller (connect failure)")
        return (self.update_rc, "", "" if self.update_rc == 0 else
                "slurm_update error: Invalid node state specified")

    def updates(self):
        return [c for c in self.calls if c[1] == "update"]


# --------------------------------------------------------------------------- the rule


def test_a_failing_node_that_is_not_drained_is_drained_with_the_first_problem():
    state = health.node_state(IDLE, "vm")
    d = health.decide(state, [failing(), failing("gpu_nvlink", "GPU 3 link 4 inactive")])
    assert d["action"] == "drain"
    assert d["reason"] == OUR_REASON + " (+1 more)"


def test_an_administrators_drain_is_never_touched():
    state = health.node_state(ADMIN, "vm")
    assert state["drain"] and state["reason"] == "check: nccl_busbw low (DGX1-2 at 40% of peers)"
    healthy = health.decide(state, [])
    assert healthy["action"] == "none" and "someone else" in healthy["why"]
    still_failing = health.decide(state, [failing()])
    assert still_failing["action"] == "none" and still_failing["reason"] is None  # its reason is not replaced


def test_its_own_drain_is_resumed_when_healthy_and_kept_while_failing():
    state = health.node_state(OURS, "vm")
    assert state["reason"] == OUR_REASON
    assert health.decide(state, [])["action"] == "resume"
    assert health.decide(state, [failing()])["action"] == "none"  # same reason: nothing to change
    moved = health.decide(state, [failing("gpu_nvlink", "GPU 3 link 4 inactive")])
    assert moved == {"action": "drain", "reason": "dgxpod-health: gpu_nvlink: GPU 3 link 4 inactive",
                     "why": "still failing, now for another reason"}


def test_a_down_node_and_an_unlisted_node_are_left_alone():
    down = health.node_state(DOWN, "vm")
    assert down["state"] == "down" and not down["drain"]
    assert health.decide(down, [failing()])["action"] == "none"
    assert health.decide(down, [])["action"] == "none"
    down_drain = health.node_state(DOWN_DRAIN, "vm")
    assert down_drain["drain"] and health.decide(down_drain, [])["action"] == "none"
    assert health.node_state(IDLE, "DGX9-9") is None
    assert health.decide(None, [failing()])["action"] == "none"


def test_only_its_own_prefix_is_ours():
    assert health.ours(OUR_REASON)
    assert not health.ours("dgxpod nccl_relative: sim-dgx3 is low")  # the validation's drain (slurm/drain.py)
    assert not health.ours("dgxpod-healthy node")
    assert not health.ours(None)


def test_the_reason_is_one_line_and_bounded():
    long = failing(cause="x " * 300 + "\nsecond line")
    reason = health.reason_for([long, failing()])
    assert len(reason) <= health.REASON_MAX and "\n" not in reason
    assert reason.startswith(health.PREFIX + "gpu_ecc: x x") and reason.endswith("... (+1 more)")


def test_problems_are_fail_and_error_of_this_node_not_skipped():
    rows = [failing(), CheckResult("gpu_inventory", "vm", "error", reason="nvidia-smi is not installed",
                                   subject=Subject(node="vm"), category=NODE_STATE),
            CheckResult("bmc_sel", "vm", "skipped", reason="sel not read", subject=Subject(node="vm"),
                        category=NODE_STATE),
            failing(node="other")]
    assert [r.check for r in health.problems(rows, "vm")] == ["gpu_ecc", "gpu_inventory"]


# --------------------------------------------------------------------------- scontrol


def test_run_once_drains_through_scontrol_update():
    fake = FakeScontrol(IDLE)
    out = health.run_once("vm", [failing()], fake)
    assert fake.calls[0] == ["scontrol", "show", "node", "-o", "vm"]
    assert fake.updates() == [["scontrol", "update", "nodename=vm", "state=drain", "reason=" + OUR_REASON]]
    assert out["action"] == "drain" and out["error"] is None


def test_run_once_resumes_its_own_and_leaves_an_admin_drain():
    fake = FakeScontrol(OURS)
    assert health.run_once("vm", [], fake)["action"] == "resume"
    assert fake.updates() == [["scontrol", "update", "nodename=vm", "state=resume"]]
    admin = FakeScontrol(ADMIN)
    assert health.run_once("vm", [], admin)["action"] == "none"
    assert health.run_once("vm", [failing()], admin)["action"] == "none"
    assert admin.updates() == []


def test_run_once_without_slurms_answer_changes_nothing():
    fake = FakeScontrol(IDLE, show_rc=1)
    out = health.run_once("vm", [failing()], fake)
    assert fake.updates() == [] and "Unable to contact slurm controller" in out["error"]
    refused = FakeScontrol(IDLE, update_rc=1)
    assert "Invalid node state" in health.run_once("vm", [failing()], refused)["error"]


# --------------------------------------------------------------------------- the checks: the stages' evaluators


def node_reading():
    """A dgx_node_health reading with nothing in the kernel log of its window (journalctl's "-- No entries --", as
    node/kernel_log.py parses it) and no inventory tool read (those checks are skipped)."""
    return {"kernel_log": parse_kernel_log("-- No entries --\n", boot_time=0), "kernel_log_source": "journalctl",
            "since": 1.0, "until": 2.0, "boot_time": 0.0,
            "gpus": [], "hcas": [], "readings": {}, "errors": {}}


def test_the_stand_ins_healthy_dgx_passes_and_its_ecc_fault_is_the_reason(tmp_path):
    healthy = health.records("sim-dgx2", node_facts(tmp_path, "sim-dgx2", 2, level=0), node_reading(), "dgx1")
    results = health.evaluate_local(healthy, {}, {"simulated": True})
    assert {r.check for r in results} >= {"gpu_ecc", "gpu_nvlink", "gpu_throttle", "gpu_peermem", "kernel_xid"}
    assert health.problems(results, "sim-dgx2") == []
    (tmp_path / "f").mkdir()
    faulty = health.records("sim-dgx2", node_facts(tmp_path / "f", "sim-dgx2", 2, ["ecc=2"], level=0),
                            node_reading(), "dgx1")
    found = health.problems(health.evaluate_local(faulty, {}, {"simulated": True}), "sim-dgx2")
    assert found and found[0].check in ("gpu_ecc", "gpu_memory_retirement")
    assert health.reason_for(found).startswith("dgxpod-health: gpu_")
    ignored = health.evaluate_local(faulty, {}, {"simulated": "True"}, ignore=[r.check for r in found])
    assert health.problems(ignored, "sim-dgx2") == []


def test_a_reading_that_could_not_be_taken_is_a_problem():
    recorded = health.records("vm", None, None, "dgx1", gpu_error="nvidia-smi timed out")
    found = health.problems(health.evaluate_local(recorded, {}, {}), "vm")
    assert {r.check for r in found} == {"gpu_node", "node_health"}
    assert all(r.status == "error" for r in found)


# --------------------------------------------------------------------------- slurm.conf


def test_slurm_conf_names_the_program_only_when_asked(dgxpod):
    plain = slurm_conf.render_all(dgxpod)["slurm.conf"]
    assert "HealthCheck" not in plain
    text = slurm_conf.render_all(dgxpod, overrides={"health_program": "/usr/local/sbin/dgxpod-health",
                                                    "health_interval": "120", "health_node_state": "any"})
    lines = text["slurm.conf"].splitlines()
    assert "HealthCheckProgram=/usr/local/sbin/dgxpod-health" in lines
    assert "HealthCheckInterval=120" in lines and "HealthCheckNodeState=ANY" in lines
    with pytest.raises(slurm_conf.SlurmConfError):
        slurm_conf.render_all(dgxpod, overrides={"health_program": "dgxpod-health"})
    with pytest.raises(slurm_conf.SlurmConfError):
        slurm_conf.render_all(dgxpod, overrides={"health_program": "/x", "health_node_state": "SOMETIMES"})


@pytest.fixture(scope="module")
def dgxpod():
    """The 004 reference pod as a Slurm cluster, as tests/unit/test_slurm.py builds it."""
    hv = hostvars(os.path.join(ROOT, "inventories", "dgxpod"))
    groups = {"dgx": ["DGX1-%d" % i for i in range(1, 10)], "storage": ["isilon-%d" % i for i in range(1, 9)],
              "switches": [h for h in hv if "switches" in hv[h]["group_names"]]}
    return Pod.from_hostvars(hv, groups, dict(hv["DGX1-1"]["pod"], slurm={"controller": "DGX1-1", "partition": "dgx1"}))


# --------------------------------------------------------------------------- the zipapp on a plain Python


def build(tmp_path):
    out = tmp_path / "dgxpod-health"
    subprocess.run([sys.executable, os.path.join(FILES, "dgxpod_health_build.py"), "--root", ROOT, "--out",
                    str(out), "--python", "/usr/bin/env python3"], check=True, capture_output=True, text=True)
    return out


def fake_scontrol(tmp_path, shown):
    """A scontrol on PATH: ``show`` prints ``shown``, ``update`` appends its arguments to updates.log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (tmp_path / "shown.txt").write_text(shown)
    script = bin_dir / "scontrol"
    script.write_text("#!/bin/sh\nif [ \"$1\" = show ]; then cat %s; else echo \"$@\" >> %s; fi\n"
                      % (tmp_path / "shown.txt", tmp_path / "updates.log"))
    script.chmod(0o755)
    return bin_dir


def run_program(tmp_path, shown, *args):
    """Run the built zipapp with a Python that has no Ansible (-I: no site-packages of the venv, no PYTHONPATH)."""
    app = build(tmp_path) if not (tmp_path / "dgxpod-health").exists() else tmp_path / "dgxpod-health"
    config = tmp_path / "health.json"
    config.write_text(json.dumps({"node": "vm", "dgx_model": "dgx1", "state_dir": str(tmp_path / "state"),
                                  "expectations": {}, "context": {"simulated": True}, "tool_timeout": 5}))
    env = {"PATH": "%s:/usr/bin:/bin" % fake_scontrol(tmp_path, shown), "SLURMD_NODENAME": "vm"}
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    return subprocess.run([python, "-I", str(app), "--config", str(config)] + list(args), env=env,
                          capture_output=True, text=True, timeout=120)


def updates(tmp_path):
    log = tmp_path / "updates.log"
    return log.read_text().splitlines() if log.exists() else []


def test_the_zipapp_drains_a_node_whose_gpus_cannot_be_read(tmp_path):
    """No nvidia-smi on PATH: gpu_inventory is an error, so the node is drained naming it; the outcome is kept."""
    proc = run_program(tmp_path, IDLE)
    assert proc.returncode == 1, proc.stderr
    assert "drain: dgxpod-health: gpu_" in proc.stdout
    (line,) = updates(tmp_path)
    assert line.startswith("update nodename=vm state=drain reason=dgxpod-health: gpu_")
    kept = json.loads((tmp_path / "state" / "health-vm.json").read_text())
    assert kept["action"] == "drain" and any(r["check"] == "gpu_inventory" for r in kept["results"])
    assert not (tmp_path / "state" / "health-vm.last").exists()  # not healthy: the kernel-log mark stays


def test_the_zipapp_leaves_an_admin_drain_and_a_dry_run_changes_nothing(tmp_path):
    assert run_program(tmp_path, ADMIN).returncode == 1
    assert updates(tmp_path) == []
    dry = run_program(tmp_path, IDLE, "--dry-run", "--json")
    assert json.loads(dry.stdout)["action"] == "drain" and updates(tmp_path) == []


def test_the_zipapp_acknowledges_and_a_bad_configuration_drains_nothing(tmp_path):
    assert run_program(tmp_path, IDLE, "--acknowledge").returncode == 0
    assert float((tmp_path / "state" / "health-vm.last").read_text()) > 0
    (tmp_path / "health.json").write_text("{}")
    app = tmp_path / "dgxpod-health"
    env = {"PATH": "%s:/usr/bin:/bin" % fake_scontrol(tmp_path, IDLE)}
    proc = subprocess.run([sys.executable, "-I", str(app), "--config", str(tmp_path / "nothing.json")], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "nothing changed" in proc.stderr
    assert updates(tmp_path) == []


def test_the_program_takes_the_simulated_flag_from_the_pod_model():
    """roles/slurm writes the pod model into the configuration (the role itself never decides on pod.simulated);
    the program's context takes the flag from it, as results.json does, unless a context says otherwise."""
    spec = importlib.util.spec_from_file_location("dgxpod_health_main", os.path.join(FILES, "dgxpod_health_main.py"))
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)
    assert main.context_of({"pod": {"name": "p", "simulated": True}}) == {"simulated": True}
    assert main.context_of({"pod": {"name": "p"}}) == {"simulated": False}
    assert main.context_of({"pod": {"simulated": True}, "context": {"simulated": False}}) == {"simulated": False}


def test_the_zipapp_is_the_same_bytes_each_build(tmp_path):
    a = build(tmp_path).read_bytes()
    again = subprocess.run([sys.executable, os.path.join(FILES, "dgxpod_health_build.py"), "--root", ROOT, "--out",
                            str(tmp_path / "dgxpod-health"), "--python", "/usr/bin/env python3"],
                           capture_output=True, text=True, check=True)
    assert again.stdout.strip() == "unchanged" and (tmp_path / "dgxpod-health").read_bytes() == a
    assert a.startswith(b"#!/usr/bin/env python3\n")
