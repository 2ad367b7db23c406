"""A slow DGX (`podsim cpu NODE --limit CPUS`): a CFS CPU quota on the node's MPI container.

On the pod-in-a-box the "GPUs" of a DGX are the CPU time its MPI container gets: the NCCL stand-in and the
training job's ranks run there (the engine exec'd launcher and every rank started over the container's sshd
are in the container's cgroup). Capping that cgroup's CPU is what a DGX with slow or throttled GPUs looks like
to the validation stages: its ranks do their own work slower while its NICs, its storage client (the FUSE
stand-in runs in the node, outside the container) and the other DGX are untouched. `--clear` removes the cap.

The cgroup is found from the container's main process (`<engine> inspect`), so podman and dockerd nodes are
handled alike; cgroup v1 (`cpu.cfs_quota_us`) and v2 (`cpu.max`) are both written.
"""
from __future__ import annotations

import os
import subprocess

from .common import log
from .procs import nsenter_cmd

CGROUP_ROOT = "/sys/fs/cgroup"
PERIOD_US = 100000


def quota_us(cpus: float | None, period_us: int = PERIOD_US) -> int:
    """The CFS quota for ``cpus`` CPUs per ``period_us`` (-1: no limit). At least 1 ms, the kernel's floor."""
    if cpus is None:
        return -1
    if cpus <= 0:
        raise ValueError("a CPU limit must be > 0, got %r" % cpus)
    return max(1000, int(round(cpus * period_us)))


def cpu_cgroup(proc_cgroup: str) -> tuple[str, str]:
    """(version, path) of the cpu controller in a /proc/<pid>/cgroup text: ("v1", path) from a line whose
    controllers include ``cpu`` ("3:cpu,cpuacct:/x" or "1:cpu:/x"), else ("v2", path) from the unified
    "0::/x" line."""
    unified = None
    for line in proc_cgroup.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if "cpu" in controllers.split(","):
            return "v1", path
        if controllers == "" and parts[0] == "0":
            unified = path
    if unified is None:
        raise ValueError("no cpu controller and no unified cgroup in:\n%s" % proc_cgroup)
    return "v2", unified


def limit_files(version: str, path: str, root: str = CGROUP_ROOT) -> dict[str, str]:
    """The files to write for a cgroup: v1 under the ``cpu`` (or ``cpu,cpuacct``) hierarchy, v2 ``cpu.max``."""
    rel = path.lstrip("/")
    if version == "v1":
        base = next((os.path.join(root, d) for d in ("cpu", "cpu,cpuacct", "cpuacct,cpu")
                     if os.path.isdir(os.path.join(root, d))), os.path.join(root, "cpu"))
        return {"quota": os.path.join(base, rel, "cpu.cfs_quota_us"),
                "period": os.path.join(base, rel, "cpu.cfs_period_us")}
    return {"max": os.path.join(root, rel, "cpu.max")}


def write_limit(version: str, path: str, cpus: float | None, root: str = CGROUP_ROOT) -> None:
    files = limit_files(version, path, root)
    quota = quota_us(cpus)
    if version == "v1":
        with open(files["period"], "w") as fh:
            fh.write("%d\n" % PERIOD_US)
        with open(files["quota"], "w") as fh:
            fh.write("%d\n" % quota)
    else:
        with open(files["max"], "w") as fh:
            fh.write("%s %d\n" % ("max" if quota < 0 else quota, PERIOD_US))


def container_pid(anchor_pid: int, engine: str, container: str) -> int:
    """The container's main process, as the host sees it (the nodes share the host's PID namespace)."""
    p = subprocess.run(nsenter_cmd(anchor_pid, [engine, "inspect", "--format", "{{.State.Pid}}", container]),
                       capture_output=True, text=True, timeout=60)
    pid = p.stdout.strip()
    if p.returncode != 0 or not pid.isdigit() or pid == "0":
        raise RuntimeError("%s inspect %s: not running (%s)" % (engine, container, (p.stderr or p.stdout).strip()))
    return int(pid)


def apply_cpu_limit(anchor_pid: int, engine: str, container: str, cpus: float | None) -> str:
    """Cap (or with None uncap) the container's CPU; returns the cgroup written, for the log."""
    pid = container_pid(anchor_pid, engine, container)
    with open("/proc/%d/cgroup" % pid) as fh:
        version, path = cpu_cgroup(fh.read())
    write_limit(version, path, cpus)
    log("cgroup %s %s: %s" % (version, path, "no CPU limit" if cpus is None else "%.2f CPU" % cpus))
    return path
