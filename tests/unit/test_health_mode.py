"""playbooks/health.yml, the health mode (issue 43 item 1): it runs the validate stages' own playbooks with their cheap
settings (no DCGM diagnostic, no nvbandwidth), so its checks are the stages' evaluators' and nothing else; its report
skips every stage it does not run (run tags [health]) and evaluates those it does - a GPU fault of the simulator's
stand-ins fails the GPU stage's own check; the report goes to health-<time>/ beside a latest-health link; the
playbook parses (ansible-playbook --syntax-check)."""
from __future__ import annotations

import os
import subprocess

import pytest
import yaml
from ansible_collections.dgxpod.toolkit.plugins.module_utils.node.kernel_log import parse_kernel_log
from ansible_collections.dgxpod.toolkit.plugins.module_utils.report.stages import evaluate_stages, registry

from inventory_util import ROOT
from test_gpu_stage import node_facts

PLAYBOOKS = os.path.join(ROOT, "playbooks")
HEALTH = os.path.join(PLAYBOOKS, "health.yml")


def plays():
    with open(HEALTH) as fh:
        return yaml.safe_load(fh)


def imported():
    """{playbook file: the import's entry} of health.yml."""
    return {p["ansible.builtin.import_playbook"]: p for p in plays() if "ansible.builtin.import_playbook" in p}


def recorded_stage_names(playbook):
    """The stage names a validate playbook records (playbooks/tasks/record_stage.yml's record_stage_name)."""
    with open(os.path.join(PLAYBOOKS, playbook)) as fh:
        text = fh.read()
    return {line.split(":", 1)[1].strip() for line in text.splitlines()
            if line.strip().startswith("record_stage_name:")}


def report_play():
    (play,) = [p for p in plays() if p.get("hosts") == "localhost"]
    return play


def test_it_runs_the_stages_own_playbooks_with_the_cheap_settings():
    imports = imported()
    assert set(imports) == {"validate_gpu.yml", "validate_node.yml", "validate_network.yml",
                            "validate_storage.yml", "validate_containers.yml", "validate_drift.yml"}
    assert imports["validate_gpu.yml"]["vars"] == {"gpu_dcgm_level": 0, "gpu_nvbandwidth": False}
    assert imports["validate_drift.yml"]["when"] == "health_drift | default(false) | bool"
    for name in ("validate_node.yml", "validate_network.yml", "validate_storage.yml", "validate_containers.yml"):
        assert "vars" not in imports[name] and "when" not in imports[name], name


def test_the_stages_it_checks_for_are_those_its_playbooks_record_and_are_registered():
    recorded = set().union(*(recorded_stage_names(p) for p in imported()))
    assert set(report_play()["vars"]["health_stages_always"]) | {"drift"} == recorded
    assert recorded <= {s.name for s in registry()}


def test_the_report_goes_beside_the_validation_runs_and_skips_the_rest():
    (include, assert_recorded, verdict) = report_play()["tasks"]
    assert include["ansible.builtin.include_role"]["name"] == "pod_report"
    v = include["vars"]
    assert v["pod_report_run_prefix"] == "health-" and v["pod_report_latest_link"] == "latest-health"
    assert v["pod_report_run_tags"] == ["health"] and v["pod_report_fail_on_problems"] is False
    assert "health_missing" in assert_recorded["ansible.builtin.assert"]["that"]
    assert verdict["ansible.builtin.include_role"] == {"name": "pod_report", "tasks_from": "verdict"}
    assert not {t for s in registry() for t in ((s.tag,) if isinstance(s.tag, str) else s.tag)} & {"health"}


def test_the_mark_is_per_node_and_only_moved_after_a_reading():
    first, mark_play = plays()[0], [p for p in plays() if str(p.get("name", "")).startswith("Health - move")][0]
    assert "{{ inventory_hostname }}" in first["vars"]["health_mark"]
    assert [t.get("when") for t in mark_play["tasks"]] == ["node_health_read.dgx_node is defined"] * 2
    assert "node_since" in first["tasks"][1]["ansible.builtin.set_fact"]


def node_record(host):
    """pod_stages.node as validate_node.yml records it, for a DGX whose kernel log has nothing in the window."""
    reading = {"kernel_log": parse_kernel_log("-- No entries --\n", boot_time=0), "kernel_log_source": "journalctl",
               "since": 1.0, "until": 2.0, "boot_time": 0.0, "gpus": [], "hcas": [], "readings": {}, "errors": {}}
    return {"dgx_node": reading, "error": None, "unreachable": False, "dgx_model": "dgx1"}


def health_stages(tmp_path, faults=None):
    """pod_stages of a health run on two simulated DGX-1 (gpu at level 0, node); ``faults`` on sim-dgx2."""
    gpu = {}
    for i, name in ((1, "sim-dgx1"), (2, "sim-dgx2")):
        d = tmp_path / name
        d.mkdir()
        gpu[name] = {"status": "ok", "dgx_model": "dgx1",
                     "facts": node_facts(d, name, i, faults if i == 2 else None, level=0)}
    return {"gpu": {"level": 0, "nodes": gpu},
            "node": {"window_hours": 24, "nodes": {n: node_record(n) for n in gpu}}}


def by_stage(checks):
    out = {}
    for c in checks:
        out.setdefault(c["stage"], []).append(c)
    return out


def test_a_healthy_run_evaluates_its_stages_and_skips_the_others(tmp_path):
    checks, measurements = evaluate_stages(health_stages(tmp_path), {}, {"simulated": True}, run_tags=["health"],
                                           skip_tags=[])
    stages = by_stage(checks)
    assert set(measurements) == {"gpu", "node"}
    for name, rows in stages.items():
        if name in ("gpu", "node"):
            assert not [r for r in rows if r["status"] in ("fail", "error")], rows
            assert any(r["status"] == "pass" for r in rows)
        else:
            assert [r["status"] for r in rows] == ["skipped"], name
    dcgm = [r for r in stages["gpu"] if r["check"] == "gpu_dcgm_diag"]
    assert dcgm and all(r["status"] == "skipped" for r in dcgm)  # level 0: not run, never passed


def test_a_gpu_fault_fails_the_gpu_stages_own_check(tmp_path):
    checks, _ = evaluate_stages(health_stages(tmp_path, ["ecc=2"]), {}, {"simulated": True}, run_tags=["health"],
                                skip_tags=[])
    bad = [c for c in checks if c["status"] == "fail"]
    assert {c["check"] for c in bad} & {"gpu_ecc", "gpu_memory_retirement"}
    assert {c["host"] for c in bad} == {"sim-dgx2"}


def test_under_the_default_tags_a_missing_stage_would_be_an_error(tmp_path):
    """Why health.yml passes [health]: with validate.yml's default ("all") every stage it does not run would be an
    error; with [health] they are skipped, and the playbook itself names a stage of its own that recorded nothing."""
    checks, _ = evaluate_stages(health_stages(tmp_path), {}, {"simulated": True})
    assert [c for c in checks if c["stage"] == "nccl"][0]["status"] == "error"


@pytest.mark.parametrize("inventory", ["dgxpod"])
def test_the_playbook_parses(inventory):
    proc = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "--syntax-check", "-i",
                           os.path.join(ROOT, "inventories", inventory), HEALTH], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
