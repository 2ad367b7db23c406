"""The NCCL stage end to end on the pod-in-a-box (issue 14)."""
from __future__ import annotations

import json
import os

import pytest

from e2e import PODSIM, RESULTS, TIMINGS, run

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the simulator needs root")]


def nccl_results():
    with open(os.path.join(RESULTS, "results.json")) as fh:
        doc = json.load(fh)
    return doc, [c for c in doc["checks"] if c["check"].startswith("nccl")]


def test_nccl_stage_passes_then_names_a_shaped_node(converged):
    """Issue 14 on the pod-in-a-box: the NCCL stage (CPU stand-in) passes on the healthy pod; a shaped data
    NIC makes the all-node step fail and the pairs name exactly that node."""
    res = run("ansible-playbook", "validate.yml", "--tags", "nccl", timeout=900)
    TIMINGS["validate.yml --tags nccl"] = res.elapsed
    assert res.returncode == 0, res.stdout[-4000:]
    doc, checks = nccl_results()
    assert [c for c in checks if c["status"] not in ("pass", "skipped")] == []
    m = doc["measurements"]["nccl"]
    assert len(m["single"]) == 4 and m["all"]["ok"] and m["all"]["backend"] == "cpu" and len(m["pairs"]) == 6
    assert {c["status"] for c in checks if c["check"] in ("nccl_busbw", "nccl_transport")} == {"skipped"}
    with open(os.path.join(RESULTS, "report.md")) as fh:
        assert "## NCCL (all_reduce)" in fh.read()
    with open(os.path.join(RESULTS, "report.html")) as fh:
        assert fh.read().count("NCCL busbw vs size") == 3
    node, nic = "sim-dgx3", "enp132s0"   # the data NIC MPI uses (btl_tcp_if_include)
    run(PODSIM, "shape", node, nic, "--rate", "100mbit", check=True)
    try:
        res = run("ansible-playbook", "validate.yml", "--tags", "nccl", timeout=900)
        TIMINGS["validate.yml --tags nccl, shaped"] = res.elapsed
        assert res.returncode != 0, res.stdout[-3000:]
        _, checks = nccl_results()
        loc = [c for c in checks if c["check"] == "nccl_localisation"]
        assert [(c["host"], c["status"]) for c in loc] == [(node, "fail")], loc
        assert "%s is the slow node" % node in loc[0]["cause"]
        step_all = [c for c in checks if c["check"] == "nccl_relative" and c.get("step") == "all"]
        assert step_all[0]["status"] == "fail", step_all
    finally:
        run(PODSIM, "shape", node, nic, "--clear", check=True)


@pytest.mark.long  # a second fault of a stage that CI already covers: `make test-long`
def test_nccl_stage_with_a_stopped_container_is_an_error_naming_the_node_in_bounded_time(converged):
    """A stopped MPI container makes the stage an error naming the node, in bounded time, and the report is
    still written."""
    node = "sim-dgx2"
    run(PODSIM, "exec", node, "--", "podman", "stop", "--time", "1", "dgxpod-mpi", check=True)
    try:
        res = run("ansible-playbook", "validate.yml", "--tags", "nccl", timeout=900)
        TIMINGS["validate.yml --tags nccl, stopped container"] = res.elapsed
        assert res.returncode != 0 and res.elapsed < 300, (res.elapsed, res.stdout[-3000:])
        doc, checks = nccl_results()
        errors = {c["host"]: c["reason"] for c in checks if c["check"] == "nccl_run"}
        assert node in errors and "all (4 DGX)" in errors, errors
        assert all(node in why for why in errors.values()), errors
        assert all(c["status"] != "error" for c in checks if c["check"] == "nccl_run" and node not in c["host"]
                   and c["host"] != "all (4 DGX)")
    finally:
        run("ansible-playbook", "playbooks/containers.yml", check=True)
