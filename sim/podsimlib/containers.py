"""Rootful podman inside the DGX nodes (the MPI containers of roles/ngc_container): each node's container
config, and removing its containers before the node stops."""

from __future__ import annotations

import os
import shutil
import subprocess

from .common import Paths
from .procs import nsenter_cmd


def container_confs(graphroot: str) -> dict[str, str]:
    """/etc/containers/{storage,containers}.conf of a DGX node: rootful podman with the node's own
    container store (graphroot on disk under the node's state dir, runroot and tmp_dir on the node's
    private /run) that also reads the host's store, where sim/image/build.sh imported the stand-in
    image - so no node pulls or loads an image. cgroupfs + file events: the nodes run no systemd."""
    storage = (
        "# podsim: container storage of this simulated node (see sim/podsimlib/containers.py)\n"
        "[storage]\n"
        'driver = "overlay"\n'
        'graphroot = "%s"\n'
        'runroot = "/run/containers/storage"\n'
        "[storage.options]\n"
        'additionalimagestores = ["/var/lib/containers/storage"]\n' % graphroot)
    containers = (
        "# podsim: podman engine settings of this simulated node\n"
        "[engine]\n"
        'cgroup_manager = "cgroupfs"\n'
        'events_logger = "file"\n'
        'events_logfile_path = "/run/libpod/events.log"\n'
        'tmp_dir = "/run/libpod"\n')
    return {"storage.conf": storage, "containers.conf": containers}


def remove_containers(anchors: dict[str, dict], paths: Paths, timeout: float = 60.0) -> list[str]:
    """`podman rm --all --force` inside each DGX node that has a container store (all nodes at once):
    the MPI containers' conmon/sshd would otherwise be killed as strays and leave the node's store
    claiming running containers. Returns what failed; the caller goes on (the namespace sweep stops
    any process left, and the store is removed with the node's directory)."""
    if not shutil.which("podman"):
        return []
    procs = {}
    for name, rec in anchors.items():
        store = os.path.join(paths.node(name), "containers")
        if not os.path.isdir(store) or not os.listdir(store):
            continue
        procs[name] = subprocess.Popen(
            nsenter_cmd(rec["pid"], ["timeout", str(int(timeout)), "podman", "rm", "--all", "--force", "--time", "2"]),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    left = []
    for name, p in procs.items():
        _, err = p.communicate()
        if p.returncode != 0:
            left.append("%s: podman rm --all failed (rc %d): %s" % (name, p.returncode, err.strip()[-300:]))
    return left
