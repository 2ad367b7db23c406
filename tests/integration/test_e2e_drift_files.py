"""Drift of the files the deploy writes, end to end on the pod-in-a-box (issue 17 item 2): an /etc/hosts entry
changed and nccl.env deleted by hand on one DGX are named by validate.yml --tags drift (node, file and
difference), the deploy's network play puts them back, and the stage passes again."""
from __future__ import annotations

import json
import os

import pytest

from e2e import DGX, PODSIM, RESULTS, TIMINGS, recap, run

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the simulator needs root")]

NODE = "sim-dgx2"
NCCL_ENV = "/etc/dgxpod/nccl.env"
# the data-fabric address of sim-dgx4 in the managed block (between the toolkit's markers) becomes 198.18.99.99
EDIT_HOSTS = (r"sed -i '/^# BEGIN dgxpod toolkit/,/^# END dgxpod toolkit/ "
              r"s/^[0-9.]*\([[:space:]][[:space:]]*sim-dgx4\)$/198.18.99.99\1/' /etc/hosts")


def drift_checks():
    with open(os.path.join(RESULTS, "results.json")) as fh:
        doc = json.load(fh)
    return [c for c in doc["checks"] if c["check"].startswith("drift")]


def test_a_changed_hosts_entry_and_a_deleted_nccl_env_are_named_then_restored(converged):
    validate = ("ansible-playbook", "validate.yml", "--tags", "drift")
    healthy = run(*validate, check=True)
    TIMINGS["validate.yml --tags drift"] = healthy.elapsed
    checks = drift_checks()
    assert checks and all(c["status"] == "pass" for c in checks), [c for c in checks if c["status"] != "pass"]
    assert {c["host"] for c in checks} == set(DGX)
    assert {("drift_hosts", h) for h in DGX} | {("drift_nccl_env", h) for h in DGX} <= \
        {(c["check"], c["host"]) for c in checks}
    try:
        run(PODSIM, "exec", NODE, "--", "sh", "-c", EDIT_HOSTS, check=True)
        edited = run(PODSIM, "exec", NODE, "--", "cat", "/etc/hosts", check=True).stdout
        assert "198.18.99.99\tsim-dgx4" in edited, edited
        run(PODSIM, "exec", NODE, "--", "rm", "-f", NCCL_ENV, check=True)

        bad = run(*validate)
        out = bad.stdout + bad.stderr
        assert bad.returncode != 0, out[-3000:]
        failed = {(c["check"], c["host"]): c for c in drift_checks() if c["status"] != "pass"}
        assert set(failed) == {("drift_hosts", NODE), ("drift_nccl_env", NODE)}, failed
        hosts = failed[("drift_hosts", NODE)]
        assert hosts["status"] == "fail" and hosts["file"] == "/etc/hosts"
        assert hosts["cause"].startswith("%s /etc/hosts: the managed block differs" % NODE), hosts["cause"]
        assert "+198.18.99.99\tsim-dgx4" in hosts["cause"] and "+198.18.99.99\tsim-dgx4" in hosts["diff"]
        nccl = failed[("drift_nccl_env", NODE)]
        assert nccl["status"] == "fail" and nccl["measured"] == "missing" and nccl["file"] == NCCL_ENV
        assert "%s %s is missing" % (NODE, NCCL_ENV) in nccl["cause"]
        # the run's closing message: one line per finding, naming the node and each file
        assert "%s /etc/hosts: the managed block differs" % NODE in out, out[-3000:]
        assert "%s %s is missing" % (NODE, NCCL_ENV) in out, out[-3000:]
    finally:
        fix = run("ansible-playbook", "playbooks/network.yml", check=True)
    stats = recap(fix.stdout)
    # one changed task: /etc/hosts' block and nccl.env are in dgx_network's one pod_files call (two tasks before
    # session 19); the drift checks below then pass, so both files were restored
    assert stats[NODE]["changed"] == 1 and all(stats[h]["changed"] == 0 for h in DGX if h != NODE), stats
    run(*validate, check=True)
    assert all(c["status"] == "pass" for c in drift_checks())
