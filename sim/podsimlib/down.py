"""`podsim down`: stop everything the simulator recorded and everything inside its nodes, remove its
namespaces, veths and bridges, then verify that nothing is left."""

from __future__ import annotations

import os
import shutil
import sys
import time

import podmodel as pm

from .common import Paths, ip_json, log, require_root, run, state_dir
from .namespaces import describe_foreign, foreign_namespaces, is_sim_netns, netns_list, procs_in_namespaces
from .nodes import stop_nodes
from .procs import alive, signal_recorded
from .state import Lock, State
from .switches import reset_fake_switches


def leftovers(st: State | None) -> list[str]:
    left = []
    for name in sorted(netns_list()):
        if is_sim_netns(name):
            left.append("netns %s" % name)
    for link in ip_json(["link", "show"]):
        n = link["ifname"]
        if n.startswith(pm.BRIDGE_PREFIX) or n.startswith(pm.VETH_PREFIX):
            left.append("link %s" % n)
    with open("/proc/self/mounts") as f:
        for line in f:
            mp = line.split()[1]
            if mp.startswith("/run/netns/" + pm.NODE_PREFIX) or mp.startswith("/run/netns/" + pm.STORAGE_PREFIX):
                left.append("mount %s" % mp)
    if st is not None:
        mnts, nets = set(), set()
        for name, m in st.members.items():
            for k in ("anchor", "sshd", "rpcbind", "ganesha", "dockerd"):
                if alive(m.get(k)):
                    left.append("process %d (%s of %s)" % (m[k]["pid"], k, name))
            if m.get("mntns"):
                mnts.add(m["mntns"])
            if m.get("netns_ino"):
                nets.add(m["netns_ino"])
        for r in procs_in_namespaces(mnts, nets, st.paths):
            left.append("process %d (inside a simulator namespace)" % r["pid"])
    if os.path.isdir("/etc/netns") and any(d.startswith(pm.NETNS_PREFIX) for d in os.listdir("/etc/netns")):
        left.append("/etc/netns/%s*" % pm.NETNS_PREFIX)
    return left


def cmd_down(args) -> int:
    require_root()
    t0 = time.time()
    paths = Paths(state_dir())
    problems = []
    with Lock(paths):
        st = State(paths)
        problems += stop_nodes(st, sorted(st.members), paths)
        if st.data.get("fakeswitch"):
            problems += ["fake switch server pid %d did not stop" % r["pid"]
                         for r in signal_recorded([st.data["fakeswitch"]])]
            st.data.pop("fakeswitch", None)
        foreign = foreign_namespaces(st)
        if foreign:
            # another pod is alive: its bridges and veths are left alone too
            print("podsim: error: " + describe_foreign(foreign), file=sys.stderr)
            return 1
        for name in sorted(netns_list()):  # empty leftovers (e.g. of a lost state)
            if is_sim_netns(name):
                run(["ip", "netns", "del", name], check=False)
        for link in ip_json(["link", "show"]):
            n = link["ifname"]
            if n.startswith(pm.VETH_PREFIX) and os.path.exists("/sys/class/net/" + n):
                run(["ip", "link", "del", n], check=False)
        for link in ip_json(["link", "show"]):
            n = link["ifname"]
            if n.startswith(pm.BRIDGE_PREFIX):
                run(["ip", "link", "del", n], check=False)
        left = leftovers(st)
        if not left and not problems:
            st.members.clear()
            if os.path.exists(paths.state):
                os.unlink(paths.state)
            shutil.rmtree(paths.nodes, ignore_errors=True)
            reset_fake_switches(paths)
            if args.purge:
                shutil.rmtree(paths.root, ignore_errors=True)
        else:
            st.save()
    if left or problems:
        for p in problems + left:
            print("podsim: left over: " + p, file=sys.stderr)
        return 1
    log("pod down: nothing left (%.2f s)%s" % (time.time() - t0, "; state purged" if args.purge else ""))
    return 0
