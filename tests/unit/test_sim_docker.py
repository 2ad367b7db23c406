"""`podsim up --engine docker` (sim/podsimlib/docker.py, issue 20): the inventory it writes, the dockerd it
starts in each DGX, the engine recorded in the state. The daemons themselves run in
tests/integration/test_e2e_docker.py (long)."""

import os
import shutil
import subprocess
import sys

import pytest
import yaml

import podmodel as pm
from podsimlib import docker as sd
from podsimlib.common import Paths

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INV = os.path.join(ROOT, "inventories", "sim")


def test_docker_inventory_gives_every_dgx_the_engine_and_nothing_else_changes():
    pod = pm.pod_shape(4, 2)
    podman, docker = pm.render_inventory(pod), pm.render_inventory(pod, "docker")
    assert pm.render_inventory(pod, "podman") == podman
    inv = yaml.safe_load(docker)
    dgx = inv["all"]["children"]["dgx"]["hosts"]
    assert all(h["ngc_container_engine"] == "docker" for h in dgx.values()) and len(dgx) == 4
    for group in ("storage", "switches"):
        assert all("ngc_container_engine" not in h for h in inv["all"]["children"][group]["hosts"].values())
    assert "--engine docker" in docker.splitlines()[0]
    # the same hosts and NICs: only the engine lines (and the header) differ
    extra = [ln for ln in docker.splitlines() if ln not in podman.splitlines()]
    assert len(extra) == 5 and sum("ngc_container_engine: docker" in ln for ln in extra) == 4


@pytest.mark.skipif(not shutil.which("ansible-inventory") and not os.path.exists(
    os.path.join(ROOT, ".venv", "bin", "ansible-inventory")), reason="ansible-inventory not installed")
def test_the_host_variable_wins_over_the_sim_group_vars(tmp_path):
    """group_vars/all/containers.yml says podman; the docker inventory's host variable must win there."""
    shutil.copytree(os.path.join(INV, "group_vars"), tmp_path / "group_vars")
    (tmp_path / "hosts.yml").write_text(pm.render_inventory(pm.pod_shape(2, 0), "docker"))
    exe = shutil.which("ansible-inventory") or os.path.join(ROOT, ".venv", "bin", "ansible-inventory")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    out = subprocess.run([exe, "-i", str(tmp_path / "hosts.yml"), "--host", "sim-dgx2"], capture_output=True,
                         text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    hv = yaml.safe_load(out.stdout)
    assert hv["ngc_container_engine"] == "docker"
    assert hv["ngc_container_ulimit_memlock"] == "8388608"  # the machine's hard limit, for both engines


def test_cli_inventory_engine_flag():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "sim", "podsim.py"), "inventory", "--engine", "docker"],
                         capture_output=True, text=True, check=True).stdout
    assert out == pm.render_inventory(pm.pod_shape(), "docker")


def test_dockerd_keeps_off_the_host_network_and_uses_the_node_data_root(tmp_path):
    paths = Paths(str(tmp_path))
    argv = sd.dockerd_argv(sd.data_root(paths, "sim-dgx3"))
    assert argv[0] == "dockerd"
    assert argv[argv.index("--data-root") + 1] == str(tmp_path / "docker" / "sim-dgx3")
    for flag in ("--iptables=false", "--ip6tables=false", "--bridge=none"):
        assert flag in argv
    # socket, exec-root and pid file stay at their defaults: the node's private /run
    for opt in ("-H", "--host", "--exec-root", "-p", "--pidfile"):
        assert opt not in argv


@pytest.mark.parametrize("recorded,asked,want", [
    ({}, None, "podman"), ({"engine": "docker"}, None, "docker"), ({"engine": "docker"}, "podman", "podman"),
    ({}, "docker", "docker")])
def test_engine_is_the_asked_then_the_recorded_then_podman(recorded, asked, want):
    assert sd.engine_of(recorded, asked) == want


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="unknown engine"):
        sd.engine_of({}, "lxc")


def test_cli_up_accepts_only_the_two_engines():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "sim", "podsim.py"), "up", "--engine", "lxc"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "invalid choice" in p.stderr


def test_podman_containers_reads_the_nodes_store(tmp_path):
    """Switching a podman pod to docker removes the podman MPI containers first (they hold port 2222)."""
    paths = Paths(str(tmp_path))
    d = tmp_path / "nodes" / "sim-dgx1" / "containers" / "overlay-containers"
    assert not sd.podman_containers(paths, "sim-dgx1")  # no store
    d.mkdir(parents=True)
    (d / "containers.json").write_text("[]")
    assert not sd.podman_containers(paths, "sim-dgx1")
    (d / "containers.json").write_text('[{"id":"72ffcf3f","names":["dgxpod-mpi"]}]')
    assert sd.podman_containers(paths, "sim-dgx1")
