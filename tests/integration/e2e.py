"""Helpers shared by the end-to-end tests on the pod-in-a-box (tests/integration/test_*e2e*.py).

The simulated pod is one per test run: `conftest.py` brings it up once (`pod`) and converges it once
(`converged`); every end-to-end test file uses those fixtures, and every test leaves the pod as healthy and
converged as it found it (faults it injects are healed before it returns, even when it fails)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.join(ROOT, ".venv", "bin")
PODSIM = os.path.join(ROOT, "sim", "podsim")
RESULTS = os.path.join(ROOT, "results", "pod-in-a-box", "latest")
DGX = ["sim-dgx%d" % i for i in range(1, 5)]
TIMINGS = {}  # printed when the pod comes down: where the end-to-end time goes
# State checks only: no benchmark, no job (the drift tests need these; one test runs the rest once).
STATE_ONLY = ("--skip-tags", "iperf,fio,nccl,training")
STATE = os.environ.get("PODSIM_STATE", os.path.join(ROOT, "sim", ".state"))


def run(*cmd, timeout=600, check=False):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", PATH=VENV_BIN + ":" + os.environ["PATH"])
    start = time.monotonic()
    res = subprocess.run(list(cmd), cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    res.elapsed = time.monotonic() - start
    if check:
        assert res.returncode == 0, "%s failed (%d):\n%s\n%s" % (cmd, res.returncode, res.stdout[-6000:],
                                                                  res.stderr[-3000:])
    return res


def recap(output: str):
    """{host: {'ok': n, 'changed': n, 'failed': n, 'unreachable': n}} from the PLAY RECAP."""
    stats = {}
    for m in re.finditer(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)",
                         output.split("PLAY RECAP")[-1], re.M):
        stats[m.group(1)] = dict(ok=int(m.group(2)), changed=int(m.group(3)), unreachable=int(m.group(4)),
                                 failed=int(m.group(5)))
    return stats


def sim_state():
    """The simulator's state file (sim/.state/state.json): the pod that is up, its members and sizes."""
    with open(os.path.join(STATE, "state.json")) as f:
        return json.load(f)


@contextlib.contextmanager
def own_pod(inv_dir):
    """For a `long` test that builds a pod of its own: the shared pod (if one is up) is taken down first and
    brought back with its size afterwards. While inside, podsim writes its inventory to ``inv_dir``/hosts.yml
    (PODSIM_INVENTORY), beside a link to inventories/sim/group_vars, so the committed inventories/sim/hosts.yml
    is never changed; yields that path. The test's pod is taken down on the way out, whatever happened."""
    before = None
    if os.path.exists(os.path.join(STATE, "state.json")) and sim_state().get("members"):
        before = (sim_state()["nodes"], sim_state()["storage"])
        run(PODSIM, "down", check=True)
    os.symlink(os.path.join(ROOT, "inventories", "sim", "group_vars"), os.path.join(str(inv_dir), "group_vars"))
    inv = os.path.join(str(inv_dir), "hosts.yml")
    os.environ["PODSIM_INVENTORY"] = inv
    try:
        yield inv
    finally:
        run(PODSIM, "down")
        del os.environ["PODSIM_INVENTORY"]
        if before:
            run(PODSIM, "up", "--nodes", str(before[0]), "--storage", str(before[1]), check=True)
