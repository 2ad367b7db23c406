"""One simulated pod for the whole test run: brought up once, converged once, shared by every end-to-end
test file (issue 19: CI time). The lifecycle test, which needs a pod of its own, runs last."""
from __future__ import annotations

import subprocess

import pytest

from e2e import DGX, PODSIM, TIMINGS, run


def pytest_collection_modifyitems(config, items):
    # test_sim_lifecycle and test_e2e_docker tear the shared pod down and build their own: keep them after
    # every e2e test.
    items.sort(key=lambda item: "test_sim_lifecycle" in item.nodeid or "test_e2e_docker" in item.nodeid)


@pytest.fixture(scope="session")
def pod():
    res = run(PODSIM, "up", "--nodes", "4", "--storage", "2", check=True)
    TIMINGS["sim up (4 nodes)"] = res.elapsed
    yield
    res = run(PODSIM, "down")
    TIMINGS["sim down"] = res.elapsed
    print("\ntimings: " + ", ".join("%s %.1f s" % kv for kv in TIMINGS.items()))
    assert res.returncode == 0, res.stdout + res.stderr
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not [n for n in DGX if n in netns], netns


@pytest.fixture(scope="session")
def converged(pod):
    """The pod after one site.yml run (the first end-to-end test that needs it pays for it)."""
    res = run("ansible-playbook", "site.yml", check=True)
    TIMINGS["site.yml first run"] = res.elapsed
    return res
