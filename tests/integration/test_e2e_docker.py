"""The Docker path of the MPI containers end to end on the pod-in-a-box (issue 20): `podsim up --engine docker`
(one dockerd per DGX, sim/podsimlib/docker.py), then site.yml converges, re-runs with changed=0,
`validate.yml --tags containers` passes from docker containers, a refused memlock names its variable, and
`podsim down` leaves no dockerd. docs/docker.md.

A pod of its own (the shared podman pod is taken down first and brought back afterwards), so `long`:
`make test-long`; CI does not run it. Its inventory is written to a temporary directory (PODSIM_INVENTORY)
beside a link to inventories/sim/group_vars, so the committed inventories/sim/hosts.yml is never changed."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from e2e import DGX, PODSIM, RESULTS, ROOT, STATE, TIMINGS, own_pod, recap, run, sim_state

pytestmark = [
    pytest.mark.integration,
    pytest.mark.long,  # a pod of its own, with a dockerd and the 1.4 GB image in every DGX
    pytest.mark.skipif(os.geteuid() != 0, reason="the simulator needs root"),
    pytest.mark.skipif(not shutil.which("dockerd"), reason="docker.io not installed (scripts/setup.sh)"),
]


@pytest.fixture(scope="module")
def docker_pod(tmp_path_factory):
    """A 4-DGX pod with --engine docker and its inventory; the pod that was up before comes back after."""
    with own_pod(tmp_path_factory.mktemp("docker-inv")) as inv:
        res = run(PODSIM, "up", "--nodes", "4", "--storage", "2", "--engine", "docker", timeout=900, check=True)
        TIMINGS["sim up --engine docker"] = res.elapsed
        yield inv
        print("\ntimings (docker): " + ", ".join("%s %.1f s" % kv for kv in TIMINGS.items() if "docker" in kv[0]))


def in_node(node, *cmd):
    return run(PODSIM, "exec", node, "--", *cmd)


def test_docker_pod_converges_validates_and_comes_down_clean(docker_pod):
    inv = docker_pod
    st = sim_state()
    assert st["engine"] == "docker"
    with open(inv) as f:
        assert f.read().count("ngc_container_engine: docker") == len(DGX)
    for node in DGX:
        assert "dockerd" in st["members"][node], st["members"][node]

    first = run("ansible-playbook", "-i", inv, "site.yml", timeout=1200, check=True)
    TIMINGS["site.yml (docker) first run"] = first.elapsed
    assert "Run the MPI container (docker, community.docker)" in first.stdout
    again = run("ansible-playbook", "-i", inv, "site.yml", timeout=1200, check=True)
    TIMINGS["site.yml (docker) re-run"] = again.elapsed
    stats = recap(again.stdout)
    assert set(DGX) <= set(stats)
    assert all(s["changed"] == 0 and s["failed"] == 0 for s in stats.values()), stats

    for node in DGX:
        ps = in_node(node, "docker", "ps", "--filter", "name=dgxpod-mpi",
                     "--format", "{{.Names}} {{.Image}} {{.State}}")
        assert ps.stdout.split() == ["dgxpod-mpi", "localhost/dgxpod-sim-ngc:latest", "running"], (node, ps.stdout)
        limits = json.loads(in_node(node, "docker", "inspect", "--format", "{{json .HostConfig.Ulimits}}",
                                    "dgxpod-mpi").stdout)
        assert {"Name": "memlock", "Hard": 8388608, "Soft": 8388608} in limits, limits
        # the node's CLI talks to its own daemon: docker, not podman, runs the MPI container
        assert in_node(node, "podman", "ps", "-q").stdout.strip() == ""

    val = run("ansible-playbook", "-i", inv, "validate.yml", "--tags", "containers", timeout=600)
    TIMINGS["validate containers (docker)"] = val.elapsed
    assert val.returncode == 0, val.stdout[-4000:]
    with open(os.path.join(RESULTS, "results.json")) as fh:
        checks = [c for c in json.load(fh)["checks"] if c["check"] == "mpi_containers"]
    assert sorted(c["host"] for c in checks) == DGX
    assert all(c["status"] == "pass" and c["mpirun_seen"] == 1 for c in checks), checks

    # testinfra reads the same containers through the inventory's engine (docker exec / container inspect)
    infra = run(os.path.join(ROOT, ".venv", "bin", "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q",
                "tests/infra/test_containers.py", "--pod-inventory", os.path.dirname(inv), timeout=600)
    assert infra.returncode == 0, infra.stdout[-3000:]

    # the RA's memlock=-1 is refused on this machine: the run fails naming the variable and the hard limit
    node = DGX[-1]
    bad = run("ansible-playbook", "-i", inv, "playbooks/containers.yml", "--limit", node,
              "-e", "ngc_container_ulimit_memlock=-1", timeout=600)
    assert bad.returncode != 0
    assert "ngc_container_ulimit_memlock" in bad.stdout and "hard limit is 8388608" in bad.stdout, bad.stdout[-3000:]
    run("ansible-playbook", "-i", inv, "playbooks/containers.yml", timeout=600, check=True)  # healed

    dockerds = [st["members"][n]["dockerd"]["pid"] for n in DGX]
    down = run(PODSIM, "down", timeout=300)
    assert down.returncode == 0, down.stdout + down.stderr
    alive = [p for p in dockerds if os.path.exists("/proc/%d" % p) and
             open("/proc/%d/stat" % p).read().split(") ")[1][0] not in "ZX"]
    assert not alive, "dockerd still running after down: %s" % alive
    with open("/proc/mounts") as f:
        left = [ln for ln in f if os.path.join(STATE, "docker") in ln]
    assert not left, left
