"""The GPU and node health stage end to end on the pod-in-a-box (issue 16)."""
from __future__ import annotations

import json
import os

import pytest

from e2e import ROOT, DGX, PODSIM, RESULTS, TIMINGS, run

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the simulator needs root")]


def gpu_checks():
    with open(os.path.join(RESULTS, "results.json")) as fh:
        doc = json.load(fh)
    return doc, [c for c in doc["checks"] if c["check"].startswith(("gpu", "hca_", "ofed"))]


def test_gpu_health_passes_then_names_each_injected_fault(converged):
    """validate.yml --tags gpu on the stand-ins: healthy pod passes in seconds; a missing GPU, ECC errors, an
    NVLink down, a GPU at PCIe x8 and a missing peermem module (one per node) are each named with node, GPU
    index and cause; cleared, the pod passes again."""
    healthy = run("ansible-playbook", "validate.yml", "--tags", "gpu", timeout=300)
    TIMINGS["validate --tags gpu (healthy)"] = healthy.elapsed
    doc, checks = gpu_checks()
    assert healthy.returncode == 0, healthy.stdout[-4000:]
    assert checks and not [c for c in checks if c["status"] in ("fail", "error")]
    assert set(doc["measurements"]["gpu"]["nodes"]) == set(DGX) and doc["measurements"]["gpu"]["level"] == 1
    faults = {"sim-dgx1": ["missing_gpu=7", "no_peermem=1"], "sim-dgx2": ["ecc=2"], "sim-dgx3": ["nvlink_down=3:4"],
              "sim-dgx4": ["pcie_x8=5"]}
    try:
        for node, fs in faults.items():
            run(PODSIM, "gpu", node, *[a for f in fs for a in ("--fault", f)], check=True)
        res = run("ansible-playbook", "validate.yml", "--tags", "gpu", timeout=300)
        TIMINGS["validate --tags gpu (faults)"] = res.elapsed
        assert res.returncode != 0
        _, checks = gpu_checks()
        failed = {(c["check"], c["host"], c.get("gpu")): c["cause"] for c in checks if c["status"] == "fail"}
        print("\n".join("%s %s: %s" % (k[0], k[1], v) for k, v in sorted(failed.items(), key=str)))
        assert "sim-dgx1 has 7 GPUs, expected 8 (dgx1); missing bus id(s) present on the other DGX: " \
               "00000000:8A:00.0" in failed[("gpu_count", "sim-dgx1", None)]
        assert "sim-dgx1: no GPUDirect RDMA peer-memory module" in failed[("gpu_peermem", "sim-dgx1", None)]
        assert "sim-dgx2 GPU 2 (00000000:0A:00.0): 2 volatile uncorrectable ECC" in failed[("gpu_ecc", "sim-dgx2", 2)]
        assert "page retirement is pending" in failed[("gpu_memory_retirement", "sim-dgx2", 2)]
        assert "'Page Retirement' FAIL on GPU(s) 2: " in failed[("gpu_dcgm_diag", "sim-dgx2", "2")]
        assert "sim-dgx3 GPU 3 (00000000:0B:00.0): link(s) 4 inactive" in failed[("gpu_nvlink", "sim-dgx3", 3)]
        assert "sim-dgx4 GPU 5 (00000000:86:00.0): PCIe link x8" in failed[("gpu_pcie_link", "sim-dgx4", 5)]
        assert len(failed) == 7, failed
    finally:
        for node in faults:
            run(PODSIM, "gpu", node, "--clear", check=True)
    # an unreachable DGX (ssh pointed at a closed port; preflight refuses a changed address) is an error row
    extra = os.path.join(ROOT, "build", "gpu-unreachable.yml")
    os.makedirs(os.path.dirname(extra), exist_ok=True)
    with open(extra, "w") as fh:
        fh.write("all:\n  hosts:\n    sim-dgx4:\n      ansible_port: 9\n")
    gone = run("ansible-playbook", "-i", "inventories/sim", "-i", extra, "validate.yml", "--tags", "gpu",
               timeout=300)
    TIMINGS["validate --tags gpu (one DGX unreachable)"] = gone.elapsed
    assert gone.returncode != 0
    _, checks = gpu_checks()
    bad = [(c["check"], c["host"], c["status"]) for c in checks if c["status"] in ("fail", "error")]
    assert bad == [("gpu_node", "sim-dgx4", "error")], bad
    print([c["reason"] for c in checks if c["check"] == "gpu_node"])
    again = run("ansible-playbook", "validate.yml", "--tags", "gpu", timeout=300)
    TIMINGS["validate --tags gpu (cleared)"] = again.elapsed
    assert again.returncode == 0, again.stdout[-3000:]
