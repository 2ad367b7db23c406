#!/usr/bin/python3
"""SPECTRUM SCALE STAND-INS for the pod-in-a-box simulator -- test doubles, NOT IBM's mm* commands.

One file on purpose (~580 lines): the thirteen mm* commands and podsim-scale are symlinks to it (argv[0] picks
the tool), bind-mounted as one directory into each simulated node, sharing one state file and its helpers; a
package would have to be importable from every node's private mount namespace, for no gain in clarity.

The simulator has no Spectrum Scale cluster.  These stand-ins play `mmlscluster`, `mmgetstate`,
`mmlsconfig`, `mmlslicense`, `mmlsmount`, `mmaddnode`, `mmchlicense`, `mmchconfig`, `mmstartup`,
`mmshutdown`, `mmmount`, `mmumount` and `mmbuildgpl`: each is a symlink to this file, argv[0] picks the
tool.  `podsim-scale` (same file) administers the stand-in world: `init` a cluster that already has
server members and file systems, `add-node` (pre-seed a node into a cluster), `install` (record the
client packages on a node), `fault` (inject failures), `show`.

They print the real commands' human-readable formats (Spectrum Scale 4.2-5.1, after the IBM Knowledge
Center examples and public captures cited in docs/spectrum-scale.md) and keep state:

  cluster-wide  <state_dir>/clusters/<name>.json  name, id, member nodes (number, IP, designation,
                licence, daemon state), configuration (common + per-node), file systems and the
                nodes that mount them, injected faults
  per node      <state_dir>/nodes/<node>.json      packages installed; GPL build marker under
                <state_dir>/nodes/<node>/lib/modules/<kernel>/extra/mmfs26.ko

state_dir: $PODSIM_SCALE_DIR, else "state_dir" in /etc/podsim/scale.json.  Node name (the node the
command "runs on"): $PODSIM_SCALE_NODE, else "node" in /etc/podsim/node.json, else the short hostname.
Nothing is mounted for real: mmmount records the mount (no data path).  Error texts for failures are
this stand-in's own wording unless docs/spectrum-scale.md says otherwise.

Renderers (render_*) and state changes (op_*) are pure functions on dicts, tested in
tests/unit/test_sim_scale_standins.py.  Parsers of the real outputs are tested against real captures.

Why one file of this size: every mm* name is a symlink to it and the commands share the cluster state
files, so the stand-in cluster stays one consistent model (issue 13's file-size rule, stated here).
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import socket
import sys
import time
import zlib

CONFIG_PATH = "/etc/podsim/scale.json"
NODE_PATH = "/etc/podsim/node.json"
STANDIN_NOTE = "podsim stand-in (simulated Spectrum Scale, not IBM's command)"
CLIENT_PACKAGES = ["gpfs.base", "gpfs.gpl", "gpfs.gskit", "gpfs.msg.en-us", "gpfs.docs", "gpfs.license.std"]
STATES = ("active", "arbitrating", "down", "unknown", "unresponsive")
PROPAGATING = ("%s: Propagating the cluster configuration data to all\n"
               "  affected nodes.  This is an asynchronous process.\n")


class StandinError(Exception):
    def __init__(self, msg: str, rc: int = 1):
        super().__init__(msg)
        self.rc = rc


# --------------------------------------------------------------------------- pure state

def new_cluster(name: str, servers: list[str], filesystems: list[str], ips: dict[str, str] | None = None) -> dict:
    """A running cluster: the servers are quorum-manager nodes with server licences, active, mounting
    every file system (as an ESS building block's NSD servers would)."""
    ips = ips or {}
    cid = str(zlib.crc32(name.encode()) * 1000000007 % (10 ** 19))
    nodes = [{"number": i + 1, "name": s, "ip": ips.get(s, "0.0.0.0"), "designation": "quorum-manager",
              "license": "server", "daemon": "active"} for i, s in enumerate(servers)]
    return {
        "name": name, "id": cid, "nodes": nodes,
        "config": {"common": {"clusterName": name, "clusterId": cid, "autoload": "no", "dmapiFileHandleSize": "32",
                              "minReleaseLevel": "5.1.2.0", "ccrEnabled": "yes", "cipherList": "AUTHONLY",
                              "adminMode": "central"}, "nodes": {}},
        "filesystems": {fs: {"mount_point": "/gpfs/%s" % fs, "mounted_on": list(servers)} for fs in filesystems},
        "faults": {},
    }


def find_member(cluster: dict, node: str) -> dict | None:
    short = node.split(".")[0]
    return next((n for n in cluster["nodes"] if n["name"].split(".")[0] == short), None)


def op_addnode(cluster: dict, node: str, ip: str, other_cluster: str | None) -> str:
    if other_cluster and other_cluster != cluster["name"]:
        raise StandinError("mmaddnode: Node %s already belongs to GPFS cluster %s.\n"
                           "mmaddnode: Command failed. Examine previous error messages to determine cause.\n"
                           % (node, other_cluster))
    if find_member(cluster, node):
        raise StandinError("mmaddnode: Node %s is already a member of cluster %s.\n"
                           "mmaddnode: Command failed. Examine previous error messages to determine cause.\n"
                           % (node, cluster["name"]))
    number = max([n["number"] for n in cluster["nodes"]] + [0]) + 1
    cluster["nodes"].append({"number": number, "name": node, "ip": ip, "designation": "", "license": "none",
                             "daemon": "down"})
    return ("%s: mmaddnode: Processing node %s\nmmaddnode: Command successfully completed\n"
            "mmaddnode: Warning: Not all nodes have proper GPFS license designations.\n"
            "    Use the mmchlicense command to designate licenses as needed.\n" % (stamp(), node)
            + PROPAGATING % "mmaddnode")


def op_chlicense(cluster: dict, license: str, nodes: list[str]) -> str:
    members = [_member_or_fail(cluster, n, "mmchlicense") for n in nodes]
    for m in members:
        m["license"] = license
    return ("\nThe following nodes will be designated as possessing %s licenses:\n%s"
            "mmchlicense: Command successfully completed\n" % (license, "".join("\t%s\n" % m["name"] for m in members))
            + PROPAGATING % "mmchlicense")


def op_chconfig(cluster: dict, assignments: dict[str, str], nodes: list[str] | None) -> str:
    if nodes:
        for n in nodes:
            m = _member_or_fail(cluster, n, "mmchconfig")
            cluster["config"]["nodes"].setdefault(m["name"], {}).update(assignments)
    else:
        cluster["config"]["common"].update(assignments)
    return "mmchconfig: Command successfully completed\n" + PROPAGATING % "mmchconfig"


def op_startup(cluster: dict, nodes: list[str], node_states: dict[str, dict], kernel: str) -> str:
    out = ["%s: mmstartup: Starting GPFS ...\n" % stamp()]
    failed = []
    for n in nodes:
        m = _member_or_fail(cluster, n, "mmstartup")
        ns = node_states.get(m["name"]) or {}
        if not ns.get("packages"):
            out.append("%s:  mmstartup: GPFS is not installed on this node.\n" % m["name"])
            failed.append(m["name"])
        elif ns.get("gpl_kernel") != kernel:
            out.append("%s:  mmstartup: The GPFS portability layer is not built for kernel %s; run mmbuildgpl.\n"
                       % (m["name"], kernel))
            failed.append(m["name"])
        elif m["daemon"] == "active":
            out.append("%s:  The GPFS subsystem is already active.\n" % m["name"])
        else:
            m["daemon"] = cluster["faults"].get("stuck_state", "active")
    if failed:
        raise StandinError("".join(out) + "mmstartup: Command failed. Examine previous error messages to "
                           "determine cause.\n")
    return "".join(out)


def op_shutdown(cluster: dict, nodes: list[str]) -> str:
    t = stamp()
    for n in nodes:
        m = _member_or_fail(cluster, n, "mmshutdown")
        m["daemon"] = "down"
        for fs in cluster["filesystems"].values():
            fs["mounted_on"] = [x for x in fs["mounted_on"] if x != m["name"]]
    return ("%s: mmshutdown: Starting force unmount of GPFS file systems\n"
            "%s: mmshutdown: Shutting down GPFS daemons\n%s: mmshutdown: Finished\n" % (t, t, t))


def op_mount(cluster: dict, device: str, nodes: list[str], mount: bool = True) -> str:
    devices = list(cluster["filesystems"]) if device == "all" else [device.replace("/dev/", "")]
    for d in devices:
        if d not in cluster["filesystems"]:
            raise StandinError("%s: File system %s is not known to the GPFS cluster.\n"
                               % ("mmmount" if mount else "mmumount", d))
    for n in nodes:
        m = _member_or_fail(cluster, n, "mmmount")
        if mount and m["daemon"] != "active":
            raise StandinError("mmmount: Node %s: the GPFS daemon is %s.\nmmmount: Command failed. Examine previous "
                               "error messages to determine cause.\n" % (m["name"], m["daemon"]))
        for d in devices:
            on = cluster["filesystems"][d]["mounted_on"]
            if mount and m["name"] not in on:
                on.append(m["name"])
            if not mount and m["name"] in on:
                on.remove(m["name"])
    return "%s: %s: %s file systems ...\n" % (stamp(), "mmmount" if mount else "mmumount",
                                               "Mounting" if mount else "Unmounting")


def _member_or_fail(cluster: dict, node: str, tool: str) -> dict:
    m = find_member(cluster, node)
    if m is None:
        raise StandinError("%s: Node %s does not belong to GPFS cluster %s.\n%s: Command failed. Examine previous "
                           "error messages to determine cause.\n" % (tool, node, cluster["name"], tool))
    return m


def stamp(now: float | None = None) -> str:
    """The timestamp the mm commands put in front of progress lines, as date(1) prints it."""
    return time.strftime("%a %b %e %H:%M:%S %Z %Y", time.localtime(now))


# --------------------------------------------------------------------------- pure renderers

def render_mmlscluster(cluster: dict) -> str:
    nodes = cluster["nodes"]
    w = max([len(n["name"]) for n in nodes] + [16]) + 2
    wi = max([len(n["ip"]) for n in nodes] + [10]) + 2
    header = " Node  %-*s%-*s%-*sDesignation" % (w, "Daemon node name", wi, "IP address", w, "Admin node name")
    out = ["", "GPFS cluster information", "========================",
           "  GPFS cluster name:         %s" % cluster["name"],
           "  GPFS cluster id:           %s" % cluster["id"],
           "  GPFS UID domain:           %s" % cluster["name"],
           "  Remote shell command:      /usr/bin/ssh",
           "  Remote file copy command:  /usr/bin/scp",
           "  Repository type:           CCR", "", header, "-" * len(header)]
    for n in nodes:
        out.append(("%4d   %-*s%-*s%-*s%s" % (n["number"], w, n["name"], wi, n["ip"], w, n["name"],
                                              n["designation"])).rstrip())
    return "\n".join(out) + "\n\n"


def render_mmgetstate(cluster: dict, nodes: list[dict], long: bool = False) -> str:
    if long:
        quorum = [n for n in cluster["nodes"] if "quorum" in n["designation"]]
        up = sum(1 for n in cluster["nodes"] if n["daemon"] == "active")
        header = " Node number  Node name       Quorum  Nodes up  Total nodes  GPFS state  Remarks    "
        out = ["", header, "-" * 84]
        for n in nodes:
            remark = "quorum node" if "quorum" in n["designation"] else ""
            if n["daemon"] == "active":
                out.append("%8d      %-16s %4d %8d %10d       %-12s%s" % (
                    n["number"], n["name"].split(".")[0], len(quorum) // 2 + 1, up, len(cluster["nodes"]),
                    n["daemon"], remark))
            else:
                out.append("%8d      %-16s %27s%-12s%s" % (n["number"], n["name"].split(".")[0], "", n["daemon"],
                                                           remark))
        return "\n".join(line.rstrip() for line in out) + "\n"
    out = ["", " Node number  Node name        GPFS state  ", "-------------------------------------------"]
    for n in nodes:
        out.append("%8d      %-16s %s" % (n["number"], n["name"].split(".")[0], n["daemon"]))
    return "\n".join(out) + "\n"


def render_mmlsconfig(cluster: dict) -> str:
    title = "Configuration data for cluster %s:" % cluster["name"]
    out = [title, "-" * len(title)]
    out += ["%s %s" % kv for kv in cluster["config"]["common"].items()]
    groups: dict[str, list[str]] = {}
    for node, values in sorted(cluster["config"]["nodes"].items()):
        for k, v in values.items():
            groups.setdefault("%s %s" % (k, v), []).append(node)
    by_nodes: dict[str, list[str]] = {}
    for kv, nodes in groups.items():
        by_nodes.setdefault(",".join(nodes), []).append(kv)
    for nodes, kvs in by_nodes.items():
        out.append("[%s]" % nodes)
        out += kvs
    if by_nodes:
        out.append("[common]")
    fs_title = "File systems in cluster %s:" % cluster["name"]
    out += ["", fs_title, "-" * len(fs_title)]
    out += ["/dev/%s" % fs for fs in cluster["filesystems"]]
    return "\n".join(out) + "\n"


def render_mmlslicense(cluster: dict) -> str:
    out = [" Node name                      Required license   Designated license",
           "---------------------------------------------------------------------"]
    for n in cluster["nodes"]:
        required = "server" if n["designation"] else "client"
        out.append("%-34s %-19s %s" % (n["name"], required, n["license"]))
    lic = [n["license"] for n in cluster["nodes"]]
    out += ["", " Summary information", "---------------------",
            "Number of nodes defined in the cluster:                          %d" % len(lic),
            "Number of nodes with server license designation:                 %d" % lic.count("server"),
            "Number of nodes with client license designation:                 %d" % lic.count("client")]
    return "\n".join(out) + "\n"


def render_mmlsmount(cluster: dict, device: str = "all", long: bool = True) -> str:
    """`mmlsmount {all|fs} [-L]`: with -L the nodes, without it only their number ("... on 2 nodes.")."""
    devices = list(cluster["filesystems"]) if device in ("all", "all_local") else [device.replace("/dev/", "")]
    out = []
    for d in devices:
        fs = cluster["filesystems"].get(d)
        if fs is None:
            raise StandinError("mmlsmount: File system %s is not known to the GPFS cluster.\n" % d)
        on = [n for n in cluster["nodes"] if n["name"] in fs["mounted_on"]]
        if not on:
            out.append("File system %s is not mounted." % d)
            continue
        if not long:
            out.append("File system %s is mounted on %d nodes." % (d, len(on)))
            continue
        out.append("File system %s (%s:%s) is mounted on %d nodes:" % (d, cluster["name"], d, len(on)))
        for n in on:
            out.append("  %-15s %-30s  %s" % (n["ip"], n["name"], cluster["name"]))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- environment

def state_dir() -> str:
    if os.environ.get("PODSIM_SCALE_DIR"):
        return os.environ["PODSIM_SCALE_DIR"]
    try:
        with open(CONFIG_PATH) as f:
            return json.load(f)["state_dir"]
    except (OSError, ValueError, KeyError) as err:
        msg = "%s: not configured (no PODSIM_SCALE_DIR, no %s)\n" % (STANDIN_NOTE, CONFIG_PATH)
        raise StandinError(msg, 127) from err


def node_name() -> str:
    if os.environ.get("PODSIM_SCALE_NODE"):
        return os.environ["PODSIM_SCALE_NODE"]
    try:
        with open(NODE_PATH) as f:
            return json.load(f)["node"]
    except (OSError, ValueError, KeyError):
        return socket.gethostname().split(".")[0]


def host_address(node: str, hosts_file: str = "/etc/hosts") -> str:
    """The node's address from /etc/hosts (no DNS query: the simulator sends nothing off the machine)."""
    try:
        with open(hosts_file) as f:
            for line in f:
                fields = line.split("#")[0].split()
                if len(fields) >= 2 and any(x.split(".")[0] == node.split(".")[0] for x in fields[1:]):
                    if ":" not in fields[0]:
                        return fields[0]
    except OSError:
        pass
    return "0.0.0.0"


class World:
    """The stand-in state on disk, locked for the duration of one command."""

    def __init__(self, root: str):
        self.root = root
        os.makedirs(os.path.join(root, "clusters"), exist_ok=True)
        os.makedirs(os.path.join(root, "nodes"), exist_ok=True)

    @contextlib.contextmanager
    def locked(self):
        with open(os.path.join(self.root, ".lock"), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield self
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def clusters(self) -> dict[str, dict]:
        out = {}
        for name in sorted(os.listdir(os.path.join(self.root, "clusters"))):
            if name.endswith(".json"):
                with open(os.path.join(self.root, "clusters", name)) as f:
                    c = json.load(f)
                out[c["name"]] = c
        return out

    def save_cluster(self, cluster: dict) -> None:
        _write_json(os.path.join(self.root, "clusters", cluster["name"] + ".json"), cluster)

    def cluster_of(self, node: str) -> dict | None:
        return next((c for c in self.clusters().values() if find_member(c, node)), None)

    def node_state(self, node: str) -> dict:
        try:
            with open(os.path.join(self.root, "nodes", node + ".json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def save_node_state(self, node: str, state: dict) -> None:
        _write_json(os.path.join(self.root, "nodes", node + ".json"), state)

    def gpl_marker(self, node: str, kernel: str) -> str:
        return os.path.join(self.root, "nodes", node, "lib", "modules", kernel, "extra", "mmfs26.ko")


def _write_json(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def _nodes_arg(value: str | None, cluster: dict) -> list[str]:
    if not value:
        return []
    if value in ("all", "-a"):
        return [n["name"] for n in cluster["nodes"]]
    return [v for v in value.split(",") if v]


# --------------------------------------------------------------------------- commands

def _require_local(world: World, tool: str) -> tuple[str, dict]:
    """The node this runs on must have the packages (else: like a missing command) and be a member."""
    node = node_name()
    if not world.node_state(node).get("packages"):
        raise StandinError("%s: command not found (%s: GPFS is not installed on node %s)\n"
                           % (tool, STANDIN_NOTE, node), 127)
    cluster = world.cluster_of(node)
    if cluster is None:
        raise StandinError("%s: This node does not belong to a GPFS cluster.\n%s: Command failed.  Examine previous "
                           "error messages to determine cause.\n" % (tool, tool))
    return node, cluster


def _fault(cluster: dict, tool: str) -> None:
    fault = cluster["faults"].get(tool)
    if fault == "hang":
        time.sleep(3600)
    if fault == "fail":
        raise StandinError("%s: The GPFS daemon on the cluster manager is not responding.\n%s: Command failed. "
                           "Examine previous error messages to determine cause.\n" % (tool, tool))


def run_tool(tool: str, args: list[str]) -> str:
    world = World(state_dir())
    kernel = os.uname().release
    if tool == "mmbuildgpl":
        node = node_name()
        with world.locked():
            ns = world.node_state(node)
            if not ns.get("packages"):
                raise StandinError("mmbuildgpl: command not found (%s: GPFS is not installed)\n" % STANDIN_NOTE, 127)
            marker = world.gpl_marker(node, kernel)
            os.makedirs(os.path.dirname(marker), exist_ok=True)
            with open(marker, "w") as f:
                f.write("%s: GPFS portability layer for %s\n" % (STANDIN_NOTE, kernel))
            ns["gpl_kernel"] = kernel
            world.save_node_state(node, ns)
        return ("--------------------------------------------------------\nmmbuildgpl: Building GPL (5.1.2.0) module "
                "begins at %s.\n--------------------------------------------------------\nVerifying Kernel Header...\n"
                "  kernel version = %s\n  (stand-in: nothing is compiled)\n"
                "--------------------------------------------------------\nmmbuildgpl: Building GPL module completed "
                "successfully at %s.\n--------------------------------------------------------\n"
                % (stamp(), kernel, stamp()))
    with world.locked():
        node, cluster = _require_local(world, tool)
        p = argparse.ArgumentParser(prog=tool, add_help=False)
        p.add_argument("-N", dest="nodes")
        p.add_argument("-a", action="store_true")
        p.add_argument("-L", action="store_true")
        p.add_argument("-s", action="store_true")
        p.add_argument("-v", action="store_true")
        p.add_argument("--accept", action="store_true")
        p.add_argument("rest", nargs="*")
        ns = p.parse_args(args)
        targets = [n["name"] for n in cluster["nodes"]] if ns.a else _nodes_arg(ns.nodes, cluster)
        if tool == "mmlscluster":
            return render_mmlscluster(cluster)
        if tool == "mmlsconfig":
            return render_mmlsconfig(cluster)
        if tool == "mmlslicense":
            return render_mmlslicense(cluster)
        if tool == "mmlsmount":
            return render_mmlsmount(cluster, ns.rest[0] if ns.rest else "all", ns.L)
        if tool == "mmgetstate":
            members = [_member_or_fail(cluster, t, tool) for t in (targets or [node])]
            return render_mmgetstate(cluster, members, ns.L)
        _fault(cluster, tool)
        if tool == "mmaddnode":
            if not targets:
                raise StandinError("mmaddnode: Missing arguments.\n")
            out = ""
            for t in targets:
                other = world.cluster_of(t)
                out += op_addnode(cluster, t, host_address(t), other["name"] if other else None)
        elif tool == "mmchlicense":
            if not ns.rest or ns.rest[0] not in ("client", "fpo", "server") or not ns.accept or not targets:
                raise StandinError("mmchlicense: Missing arguments.\nUsage:\n  mmchlicense {client|fpo|server} "
                                   "[--accept] -N {Node[,Node...] | NodeFile | NodeClass}\n")
            out = op_chlicense(cluster, ns.rest[0], targets)
        elif tool == "mmchconfig":
            if not ns.rest:
                raise StandinError("mmchconfig: Missing arguments.\n")
            assignments = {}
            for item in " ".join(ns.rest).split(","):
                key, _, value = item.partition("=")
                assignments[key.strip()] = value.strip().strip('"')
            out = op_chconfig(cluster, assignments, targets)
        elif tool in ("mmstartup", "mmshutdown"):
            targets = targets or [node]
            if tool == "mmstartup":
                states = {t: world.node_state(t) for t in targets}
                out = op_startup(cluster, targets, states, kernel)
            else:
                out = op_shutdown(cluster, targets)
        elif tool in ("mmmount", "mmumount"):
            if not ns.rest:
                raise StandinError("%s: Missing arguments.\n" % tool)
            out = op_mount(cluster, ns.rest[0], targets or [node], tool == "mmmount")
        else:
            raise StandinError("%s: unknown stand-in tool\n" % tool)
        world.save_cluster(cluster)
        return out


# --------------------------------------------------------------------------- podsim-scale admin CLI

def admin(argv: list[str]) -> str:
    p = argparse.ArgumentParser(prog="podsim-scale", description=STANDIN_NOTE + ": administer the stand-in world")
    p.add_argument("--state-dir", help="default: $PODSIM_SCALE_DIR or /etc/podsim/scale.json")
    sub = p.add_subparsers(dest="cmd", required=True)
    i = sub.add_parser("init", help="create a running cluster with server members and file systems")
    i.add_argument("--cluster", required=True)
    i.add_argument("--servers", required=True, help="comma-separated server node names")
    i.add_argument("--fs", default="", help="comma-separated file system names")
    i.add_argument("--hosts-file", default="/etc/hosts")
    a = sub.add_parser("add-node", help="pre-seed a node as an active member of a cluster (packages, GPL)")
    a.add_argument("--cluster", required=True)
    a.add_argument("--node", required=True)
    a.add_argument("--license", default="client")
    n = sub.add_parser("install", help="record the client packages on a node (the simulator's package install)")
    n.add_argument("--node", help="default: this node")
    n.add_argument("--source", default="", help="where the packages came from (recorded)")
    f = sub.add_parser("fault", help="inject a fault: mmaddnode=hang|fail, mmstartup=..., stuck_state=arbitrating")
    f.add_argument("--cluster", required=True)
    f.add_argument("settings", nargs="*", help="KEY=VALUE (empty VALUE clears)")
    sub.add_parser("show", help="print the stand-in state as JSON")
    ns = p.parse_args(argv)
    if ns.state_dir:
        os.environ["PODSIM_SCALE_DIR"] = ns.state_dir
    world = World(state_dir())
    kernel = os.uname().release
    with world.locked():
        if ns.cmd == "init":
            servers = [s for s in ns.servers.split(",") if s]
            c = new_cluster(ns.cluster, servers, [x for x in ns.fs.split(",") if x],
                            {s: host_address(s, ns.hosts_file) for s in servers})
            existing = world.clusters().get(ns.cluster)
            if existing and existing != c:
                return "podsim-scale: cluster %s exists (unchanged)\n" % ns.cluster
            world.save_cluster(c)
            for s in servers:
                world.save_node_state(s, {"packages": CLIENT_PACKAGES, "source": "podsim-scale init",
                                          "gpl_kernel": kernel})
            return "podsim-scale: cluster %s with %d server(s)\n" % (ns.cluster, len(servers))
        if ns.cmd == "add-node":
            c = world.clusters().get(ns.cluster)
            if c is None:
                raise StandinError("podsim-scale: no cluster %s\n" % ns.cluster)
            if not find_member(c, ns.node):
                op_addnode(c, ns.node, host_address(ns.node), None)
                m = find_member(c, ns.node)
                m["license"], m["daemon"] = ns.license, "active"
            world.save_cluster(c)
            world.save_node_state(ns.node, {"packages": CLIENT_PACKAGES, "source": "podsim-scale add-node",
                                            "gpl_kernel": kernel})
            return "podsim-scale: %s is a member of %s\n" % (ns.node, ns.cluster)
        if ns.cmd == "install":
            node = ns.node or node_name()
            st = world.node_state(node)
            if st.get("packages") == CLIENT_PACKAGES:
                return "podsim-scale: packages already installed on %s\n" % node
            st.update(packages=CLIENT_PACKAGES, source=ns.source)
            world.save_node_state(node, st)
            return "podsim-scale: installed %s on %s (changed)\n" % (" ".join(CLIENT_PACKAGES), node)
        if ns.cmd == "fault":
            c = world.clusters()[ns.cluster]
            for item in ns.settings:
                k, _, v = item.partition("=")
                if v:
                    c["faults"][k] = v
                else:
                    c["faults"].pop(k, None)
            world.save_cluster(c)
            return json.dumps(c["faults"]) + "\n"
        return json.dumps({"clusters": world.clusters(),
                           "nodes": {x[:-5]: world.node_state(x[:-5]) for x in sorted(os.listdir(
                               os.path.join(world.root, "nodes"))) if x.endswith(".json")}}, indent=1) + "\n"


def main(argv: list[str]) -> int:
    tool = os.path.basename(argv[0])
    try:
        if tool in ("podsim-scale", "podsim_scale.py"):
            sys.stdout.write(admin(argv[1:]))
        else:
            sys.stdout.write(run_tool(tool, argv[1:]))
    except StandinError as e:
        sys.stderr.write(str(e))
        return e.rc
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
