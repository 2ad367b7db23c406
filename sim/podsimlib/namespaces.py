"""The simulator's network namespaces on the host: which are this pod's (by recorded inode), which belong to
another pod (never touched, reported), and which processes live inside this pod's namespaces."""

from __future__ import annotations

import os

import podmodel as pm

from .common import Paths, ip_json, run
from .procs import ns_inode, record
from .state import State


def netns_list() -> set[str]:
    return {n["name"] for n in ip_json(["netns", "list"])}


def is_sim_netns(name: str) -> bool:
    return name.startswith(pm.NODE_PREFIX) or name.startswith(pm.STORAGE_PREFIX)


def netns_is_ours(st: State, name: str) -> bool:
    """The named namespace is the one this state recorded (same inode)."""
    rec = st.members.get(name, {}).get("netns_ino")
    try:
        return rec is not None and os.stat("/run/netns/" + name).st_ino == rec
    except OSError:
        return False


def foreign_namespaces(st: State) -> dict[str, list[str]]:
    """Node-named namespaces that this state did not create and in which processes run
    (another checkout's pod, or one whose state was lost): never touched, reported."""
    out = {}
    for name in sorted(netns_list()):
        if is_sim_netns(name) and not netns_is_ours(st, name):
            procs = run(["ip", "netns", "pids", name], check=False).stdout.split()
            if procs:
                out[name] = procs
    return out


def describe_foreign(foreign: dict[str, list[str]]) -> str:
    owners = sorted({owner_state_dir(p) or "unknown state" for p in foreign.values()})
    return ("namespaces %s run processes this state did not record (pod of %s); stop that pod with "
            "`PODSIM_STATE=<its state dir> podsim down` (or its checkout's sim/podsim down) first"
            % (", ".join(foreign), ", ".join(owners)))


def owner_state_dir(pids: list[str]) -> str | None:
    """The state directory of the podsim that built the node these processes run in (from the
    upperdir of the node's /etc overlay), or None."""
    for pid in pids:
        try:
            with open("/proc/%s/mountinfo" % pid) as f:
                for line in f:
                    if " podsim-etc " in line and "upperdir=" in line:
                        upper = line.split("upperdir=", 1)[1].split(",", 1)[0]
                        return os.path.dirname(os.path.dirname(os.path.dirname(upper)))
        except OSError:
            continue
    return None


def _is_node_mnt_ns(pid: int, nodes_dir: str) -> bool:
    """True if pid's mount namespace is a simulator node's: it has a node's /etc overlay mounted."""
    try:
        with open("/proc/%d/mountinfo" % pid) as f:
            return any(" podsim-etc " in line and "upperdir=%s/" % nodes_dir in line for line in f)
    except OSError:
        return False


def procs_in_namespaces(mnt_inodes: set[int], net_inodes: set[int], paths: Paths) -> list[dict]:
    """Processes living inside the simulator's own node namespaces (started there by sshd sessions,
    Ansible, tests...): nothing else runs in those namespaces.  A recorded namespace inode is only
    trusted after checking that it is still ours (inode numbers are reused once a namespace is gone):
    a mount namespace must have a node's /etc overlay mounted, a network namespace must still be the
    one bound at /run/netns/<node>.  Host processes are never matched."""
    found = []
    host_mnt, host_net = ns_inode(os.getpid(), "mnt"), ns_inode(os.getpid(), "net")
    bound = set()
    for name in netns_list():
        try:
            bound.add(os.stat("/run/netns/" + name).st_ino)
        except OSError:
            pass
    net_ok = (net_inodes & bound) - {host_net}
    mnt_ok: dict[int, bool] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        m, n = ns_inode(pid, "mnt"), ns_inode(pid, "net")
        ours = n in net_ok
        if not ours and m in mnt_inodes and m != host_mnt:
            if m not in mnt_ok:
                mnt_ok[m] = _is_node_mnt_ns(pid, paths.nodes)
            ours = mnt_ok[m]
        if ours:
            rec = record(pid)
            if rec:
                found.append(rec)
    return found
