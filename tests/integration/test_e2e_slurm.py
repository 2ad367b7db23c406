"""Slurm as the pod's scheduler on the pod-in-a-box (issue 20; docs/slurm.md "On the pod-in-a-box").

`podsim up --scheduler slurm` makes the inventory ask for Slurm; site.yml then runs munged + slurmctld on
sim-dgx1 and slurmd in every DGX node; a DGX whose data NIC is shaped slow is drained by
`validate.yml -e pod_drain_failed=true` with the check's cause as reason, the `slurm` stage reports it drained,
and playbooks/slurm_resume.yml resumes it. The pod is given back as it was found: daemons stopped, the default
inventory (no Slurm)."""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from e2e import DGX, PODSIM, RESULTS, TIMINGS, recap, run
from ansible_collections.dgxpod.toolkit.plugins.module_utils.slurm.parse import parse_sinfo

pytestmark = [pytest.mark.integration, pytest.mark.long,  # CI runs the NCCL stage already: `make test-long`
              pytest.mark.skipif(os.geteuid() != 0, reason="the simulator needs root")]

SLURM_UP = (PODSIM, "up", "--nodes", "4", "--storage", "2", "--scheduler", "slurm")
SLOW = ("sim-dgx3", "enp132s0")  # the data NIC MPI uses (btl_tcp_if_include), as test_e2e_nccl shapes it


def reason_of(run_record, node):
    return (run_record.get("failed_hosts") or {}).get(node)


def sinfo_nodes():
    """{node: (state and sinfo's flags, e.g. idle*: not responding; reason)} as the controller's sinfo says, and the
    `sinfo -R` text."""
    res = run(PODSIM, "exec", "sim-dgx1", "--", "sinfo", "-N", "-h", "-o", "%N|%t|%E", check=True)
    rows = {r["node"]: (r["state"] + r["flags"], r["reason"]) for r in parse_sinfo(res.stdout)}
    return rows, run(PODSIM, "exec", "sim-dgx1", "--", "sinfo", "-R", check=True).stdout


def test_slurm_on_the_simulator_idle_then_drains_the_slow_dgx_and_resumes_it(pod):
    res = run(*SLURM_UP, check=True)
    assert "wrote inventories/sim/hosts.yml" in res.stdout + res.stderr
    try:
        res = run("ansible-playbook", "site.yml", timeout=1200, check=True)
        TIMINGS["site.yml with Slurm"] = res.elapsed
        assert "TASK [slurm : Start slurmctld on the controller]" in res.stdout
        rows, _ = sinfo_nodes()
        assert rows == {n: ("idle", None) for n in DGX}, rows
        res = run("ansible-playbook", "site.yml", timeout=1200, check=True)
        TIMINGS["site.yml with Slurm, re-run"] = res.elapsed
        stats = recap(res.stdout)
        assert stats and all(s["changed"] == 0 for s in stats.values()), stats

        run(PODSIM, "shape", *SLOW, "--rate", "100mbit", check=True)
        try:
            res = run("ansible-playbook", "validate.yml", "--tags", "nccl", "-e", "pod_drain_failed=true",
                      timeout=900)
            TIMINGS["validate.yml --tags nccl -e pod_drain_failed=true, shaped"] = res.elapsed
        finally:
            run(PODSIM, "shape", *SLOW, "--clear", check=True)
        assert res.returncode != 0, res.stdout[-3000:]  # the verdict, given after the drain
        with open(os.path.join(RESULTS, "results.json")) as fh:
            nccl = json.load(fh)["measurements"]["nccl"]
        runs = nccl["single"] + [nccl["all"]] + nccl["pairs"]  # each in a Slurm allocation of its DGX (salloc)
        assert len(runs) == 11 and all(r["slurm"]["granted"] for r in runs), [r.get("slurm") for r in runs]
        rows, text = sinfo_nodes()
        state, reason = rows.pop(SLOW[0])
        assert state == "drained" and reason.startswith("dgxpod nccl"), (state, reason)
        assert SLOW[0] in reason, reason  # the check's cause names the slow node
        assert rows == {n: ("idle", None) for n in DGX if n != SLOW[0]}, rows
        assert text.splitlines()[0].split() == ["REASON", "USER", "TIMESTAMP", "NODELIST"]
        assert [line.split()[-1] for line in text.splitlines()[1:]] == [SLOW[0]], text

        # the slurm stage sees it: slurmctld answers, the drained DGX fails slurm_node with its reason
        res = run("ansible-playbook", "validate.yml", "--tags", "slurm", timeout=600)
        TIMINGS["validate.yml --tags slurm"] = res.elapsed
        assert res.returncode != 0, res.stdout[-3000:]
        with open(os.path.join(RESULTS, "results.json")) as fh:
            checks = {(c["check"], c["host"]): c for c in json.load(fh)["checks"]
                      if c["check"] in ("slurm_controller", "slurm_node")}
        assert checks.pop(("slurm_controller", "sim-dgx1"))["status"] == "pass"
        assert {h: c["status"] for (_, h), c in checks.items()} == {
            n: "fail" if n == SLOW[0] else "pass" for n in DGX}, checks
        assert checks[("slurm_node", SLOW[0])]["cause"].startswith("drained in Slurm: dgxpod nccl"), checks

        # NCCL while sim-dgx3 is drained: Slurm refuses every run that needs it, within the wait, naming it with
        # its reason; the runs without it are allocated and measured; nothing else is drained
        res = run("ansible-playbook", "validate.yml", "--tags", "nccl", "-e", "pod_nccl_slurm_wait=5", timeout=900)
        TIMINGS["validate.yml --tags nccl, one DGX drained"] = res.elapsed
        with open(os.path.join(RESULTS, "results.json")) as fh:
            doc = json.load(fh)
        nccl = doc["measurements"]["nccl"]
        for r in nccl["single"] + [nccl["all"]] + nccl["pairs"]:
            if SLOW[0] in r["nodes"]:
                assert not r["ok"] and not r["slurm"]["granted"], r
                assert r["failed_hosts"] == {SLOW[0]: reason_of(r, SLOW[0])}, r
                assert r["failed_hosts"][SLOW[0]].startswith("drained in Slurm: dgxpod nccl"), r
                assert "Required node not available (down, drained or reserved)" in r["error"], r
            else:
                assert r["ok"] and r["slurm"]["granted"], r
        errors = [c for c in doc["checks"] if c["check"] == "nccl_run"]
        assert errors and all(c["status"] == "error" and SLOW[0] in c["reason"] for c in errors), errors
        rows, _ = sinfo_nodes()
        assert rows.pop(SLOW[0])[0] == "drained" and rows == {n: ("idle", None) for n in DGX if n != SLOW[0]}, rows

        res = run("ansible-playbook", "playbooks/slurm_resume.yml", check=True)
        assert "- %s" % SLOW[0] in res.stdout.split("TASK [Resumed]")[-1], res.stdout[-2000:]
        # resumed, the node is `idle*` (not responding) until slurmctld's next ping to its slurmd (~1 s)
        deadline = time.monotonic() + 30
        while True:
            rows, _ = sinfo_nodes()
            if rows == {n: ("idle", None) for n in DGX} or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert rows == {n: ("idle", None) for n in DGX}, rows

        # healthy again: NCCL through Slurm gives the same checks as NCCL launched directly
        got = {}
        for scheduler in ("slurm", "none"):
            res = run("ansible-playbook", "validate.yml", "--tags", "nccl", "-e", "pod_nccl_scheduler=" + scheduler,
                      timeout=900)
            TIMINGS["validate.yml --tags nccl, healthy, scheduler=" + scheduler] = res.elapsed
            assert res.returncode == 0, res.stdout[-3000:]
            with open(os.path.join(RESULTS, "results.json")) as fh:
                doc = json.load(fh)
            got[scheduler] = {(c["check"], c["host"]): c["status"] for c in doc["checks"]
                              if c["check"].startswith("nccl")}
            runs = doc["measurements"]["nccl"]["single"] + [doc["measurements"]["nccl"]["all"]]
            assert all(bool((r.get("slurm") or {}).get("granted")) == (scheduler == "slurm") for r in runs), runs
        assert got["slurm"] == got["none"] and len(got["slurm"]) > 10, got
    finally:
        run("ansible-playbook", "playbooks/slurm.yml", "-e", "slurm_state=stopped", timeout=300)
        run(PODSIM, "up", "--nodes", "4", "--storage", "2", check=True)  # the default inventory again
    left = []
    for n in DGX:  # the nodes share the host's PIDs: the daemons in a node are the processes in its netns
        for pid in subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True).stdout.split():
            try:
                with open("/proc/%s/comm" % pid) as fh:
                    comm = fh.read().strip()
            except OSError:
                continue
            if comm in ("slurmd", "slurmctld", "munged"):
                left.append((n, comm))
    assert left == []
