"""MPI containers on the host without the simulator (roles/ngc_container): the multi-node mesh self-test
(sim/image/selftest.sh: 3 private namespaces, strict-host-key ssh + mpirun, changed=0, faults named)
and the whole-role self-test (sim/image/role-selftest.sh: playbooks/containers*.yml on a node-shaped
namespace). Needs root, podman and the stand-in image (sim/image/build.sh; not built here: ~100 s)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ready():
    if os.geteuid() != 0 or not shutil.which("podman"):
        return False
    return subprocess.run(["podman", "image", "exists", "localhost/dgxpod-sim-ngc:latest"]).returncode == 0


pytestmark = pytest.mark.skipif(not _ready(), reason="needs root, podman and the image from sim/image/build.sh")


# role-selftest.sh (~100 s) runs the containers playbooks on one node-shaped namespace; CI already runs them
# on the simulated pod (converge, re-run, a stopped container restarted), so it is a `long` test.
@pytest.mark.parametrize("script", ["selftest.sh", pytest.param("role-selftest.sh", marks=pytest.mark.long)])
def test_container_selftest(script):
    res = subprocess.run([os.path.join(ROOT, "sim", "image", script)], cwd=ROOT, capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "PASS" in res.stdout
