"""Slurm as the pod's scheduler on the pod-in-a-box (issue 20; docs/slurm.md "On the pod-in-a-box").

`podsim up --scheduler slurm` makes the inventory ask for Slurm; site.yml then runs munged + slurmctld on
sim-dgx1 and slurmd in every DGX node; a DGX whose data NIC is shaped slow is drained by
`validate.yml -e pod_drain_failed=true` with the check's cause as reason, the `slurm` stage reports it drained,
and playbooks/slurm_resume.yml resumes it. slurmd's HealthCheckProgram, dgxpod-health, drains a DGX with a GPU
fault and resumes it when cleared, leaving an administrator's drain alone; playbooks/health.yml passes on the
healthy pod. The pod is given back as it was found: daemons stopped, the default
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


def wait_rows(what, want, timeout=90):
    """sinfo's rows once ``want(rows)`` holds (slurmd runs the health program every HealthCheckInterval)."""
    deadline = time.monotonic() + timeout
    while True:
        rows, _ = sinfo_nodes()
        if want(rows):
            return rows
        assert time.monotonic() < deadline, "timed out waiting for %s: %s" % (what, rows)
        time.sleep(1)


def outcome_mtime(node):
    """When dgxpod-health last wrote its outcome on ``node`` (the simulated DGX share the host's /var/lib)."""
    path = "/var/lib/dgxpod/health-%s.json" % node
    return os.path.getmtime(path) if os.path.exists(path) else 0.0


def health_program_drains_and_resumes():
    """dgxpod-health as slurmd's HealthCheckProgram (roles/slurm; docs/slurm.md "The health program"): on the healthy
    pod it leaves every DGX idle; GPU 2 of sim-dgx2 with ECC errors (the gpu_ecc fault) drains sim-dgx2 with
    "dgxpod-health: gpu_..."; cleared, it is resumed; an administrator's drain of sim-dgx4 stays through runs of the
    program. Then the health mode, playbooks/health.yml, on the whole healthy pod (timed)."""
    res = run("ansible-playbook", "playbooks/slurm.yml", "-e", "slurm_health_interval=5", timeout=600, check=True)
    TIMINGS["slurm.yml with HealthCheckInterval=5"] = res.elapsed
    conf = run(PODSIM, "exec", "sim-dgx2", "--", "scontrol", "show", "config", check=True).stdout
    assert "HealthCheckInterval     = 5 sec" in conf, conf
    wait_rows("every DGX idle", lambda rows: rows == {n: ("idle", None) for n in DGX})
    run(PODSIM, "fault", "inject", "gpu_ecc", check=True)  # GPU 2 of sim-dgx2
    start = time.monotonic()
    try:
        rows = wait_rows("sim-dgx2 drained by the health program", lambda rows: rows["sim-dgx2"][0] == "drained")
    finally:
        run(PODSIM, "fault", "clear", "gpu_ecc", check=True)
    TIMINGS["gpu_ecc injected -> sim-dgx2 drained"] = time.monotonic() - start
    assert rows["sim-dgx2"][1].startswith("dgxpod-health: gpu_"), rows
    assert {n: r for n, r in rows.items() if n != "sim-dgx2"} == {n: ("idle", None) for n in DGX if n != "sim-dgx2"}
    start = time.monotonic()
    wait_rows("sim-dgx2 resumed", lambda rows: rows["sim-dgx2"] == ("idle", None))
    TIMINGS["gpu_ecc cleared -> sim-dgx2 resumed"] = time.monotonic() - start

    run(PODSIM, "exec", "sim-dgx1", "--", "scontrol", "update", "nodename=sim-dgx4", "state=drain",
        "reason=admin: disk replacement", check=True)
    try:
        since = time.time()
        deadline = time.monotonic() + 60
        while outcome_mtime("sim-dgx4") <= since + 6:  # at least one whole interval after the drain
            assert time.monotonic() < deadline, "the health program did not run on sim-dgx4"
            time.sleep(1)
        rows, _ = sinfo_nodes()
        assert rows["sim-dgx4"] == ("drained", "admin: disk replacement"), rows
    finally:
        run(PODSIM, "exec", "sim-dgx1", "--", "scontrol", "update", "nodename=sim-dgx4", "state=resume", check=True)

    res = run("ansible-playbook", "playbooks/health.yml", timeout=600)
    TIMINGS["playbooks/health.yml, 4 DGX"] = res.elapsed
    assert res.returncode == 0, res.stdout[-3000:]
    with open(os.path.join(os.path.dirname(RESULTS), "latest-health", "results.json")) as fh:
        doc = json.load(fh)
    assert {c["stage"] for c in doc["checks"] if c["status"] == "pass"} >= {"gpu", "node", "network", "nfs_mounts",
                                                                          "containers"}


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

        health_program_drains_and_resumes()
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
