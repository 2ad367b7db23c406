"""A node's life: its health (namespace, anchor, daemons), its anchor process (sim/node-init.sh in private
mount + UTS namespaces inside the node's netns), restarting a daemon that died, and stopping nodes."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import podmodel as pm

from .common import SIM_DIR, Paths, log, run
from .containers import remove_containers
from .docker import stop_dockerds
from .namespaces import netns_is_ours, netns_list, procs_in_namespaces
from .procs import alive, ns_inode, nsenter_cmd, record, signal_recorded
from .state import State

NODE_INIT = os.path.join(SIM_DIR, "node-init.sh")


def node_health(st: State, node: pm.Node, nets: set[str]) -> dict:
    m = st.members.get(node.name, {})
    h = {"netns": node.name in nets, "anchor": alive(m.get("anchor")), "sshd": alive(m.get("sshd"))}
    if node.role == "storage":
        h["rpcbind"] = alive(m.get("rpcbind"))
        h["ganesha"] = alive(m.get("ganesha"))
    if m.get("dockerd"):  # --engine docker (sim/podsimlib/docker.py)
        h["dockerd"] = alive(m["dockerd"])
    if h["anchor"] and h["netns"]:
        try:
            h["anchor"] = os.stat("/run/netns/" + node.name).st_ino == ns_inode(m["anchor"]["pid"], "net")
        except OSError:
            h["anchor"] = False
    return h


def stop_nodes(st: State, names: list[str], paths: Paths) -> list[str]:
    """Stop everything of these nodes (all at once); returns what is left (empty when clean).
    Order: recorded daemons, recorded anchors, then any other process inside the nodes' recorded
    namespaces (sessions, iperf3 servers, FUSE clients...), then the named netns and runtime dirs."""
    left = []
    ms = {name: st.members.get(name, {}) for name in names}
    for problem in remove_containers({n: m["anchor"] for n, m in ms.items()
                                      if m.get("role") == "dgx" and alive(m.get("anchor"))}, paths):
        log("warning: " + problem + " (its processes are stopped with the node)")
    left += stop_dockerds(ms)  # --engine docker: the node's dockerd (sim/podsimlib/docker.py)
    daemons = [m[k] for m in ms.values() for k in ("ganesha", "rpcbind", "sshd") if isinstance(m.get(k), dict)]
    left += ["pid %d" % r["pid"] for r in signal_recorded(daemons)]
    left += ["pid %d" % r["pid"] for r in signal_recorded([m["anchor"] for m in ms.values() if m.get("anchor")])]
    mnt = {m["mntns"] for m in ms.values() if m.get("mntns")}
    net = {m["netns_ino"] for m in ms.values() if m.get("netns_ino")}
    if mnt or net:
        left += ["pid %d (inside a node)" % r["pid"] for r in signal_recorded(procs_in_namespaces(mnt, net, paths))]
    nets = netns_list()
    for name in names:
        if name in nets:
            if not netns_is_ours(st, name) and run(["ip", "netns", "pids", name], check=False).stdout.split():
                left.append("netns %s is not this pod's and has processes (not touched)" % name)
                continue
            p = run(["ip", "netns", "del", name], check=False)
            if p.returncode != 0:
                left.append("netns %s: %s" % (name, p.stderr.strip()))
    if not left:
        for name in names:
            shutil.rmtree(paths.node(name), ignore_errors=True)
            st.members.pop(name, None)
    return left


def launch_anchor(paths: Paths, node: pm.Node) -> subprocess.Popen:
    nd = paths.node(node.name)
    for f in ("ready", "sshd.pid", "rpcbind.pid", "ganesha.pid"):
        try:
            os.unlink(os.path.join(nd, f))
        except FileNotFoundError:
            pass
    logf = open(os.path.join(nd, "init.log"), "a")
    return subprocess.Popen(
        ["ip", "netns", "exec", node.name, "unshare", "--mount", "--uts", "--propagation", "private",
         "/bin/sh", NODE_INIT, node.name, node.role, nd, SIM_DIR],
        stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, start_new_session=True, close_fds=True)


def start_daemon(paths: Paths, node: pm.Node, anchor_pid: int, which: str) -> dict | None:
    """Restart one daemon of a running node inside its namespaces (used when only the daemon died)."""
    nd = paths.node(node.name)
    cmds = {
        "sshd": ["/usr/sbin/sshd", "-D", "-e", "-f", "/etc/podsim/sshd_config"],
        "rpcbind": ["/usr/sbin/rpcbind", "-f"],
        "ganesha": ["/usr/bin/ganesha.nfsd", "-F", "-f", "/etc/podsim/ganesha.conf", "-L",
                    os.path.join(nd, "ganesha.log"), "-p", "/run/ganesha/ganesha.pid", "-N", "NIV_EVENT"],
    }
    logf = open(os.path.join(nd, which + ".log"), "a")
    # nsenter execs the daemon in place (no fork for -n -m -u), so the child's PID is the daemon's.
    p = subprocess.Popen(nsenter_cmd(anchor_pid, cmds[which]), stdin=subprocess.DEVNULL, stdout=logf,
                         stderr=logf, start_new_session=True, close_fds=True)
    time.sleep(0.1)
    return record(p.pid)
