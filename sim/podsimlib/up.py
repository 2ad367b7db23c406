"""`podsim up`: build, repair or resize the pod, as an ordered list of named reconcile steps (STEPS).

Each step compares what runs on the host with the model (sim/podmodel.py) and changes only what differs, so
it is idempotent: `up` on a healthy pod changes nothing ("0 change(s)"), on a damaged pod the same steps
repair it, and with another size they add or remove nodes. The steps share one `Up` (the wanted pod, the
state, what earlier steps found) and append what they changed to `Up.actions`, which `up` prints at the
end. A step that cannot reach its goal stops `up` (die); what was created so far is already in the state,
so `down` finds it. The order matters: namespaces before links, links before the anchors that start the
daemons, daemons before waiting for them, and the inventory last (it is written only for a pod that is up).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable

import podmodel as pm
import podsim_hw
import podsim_node

from .common import REPO, Paths, die, inventory_path, ip_json, log, require_root, run, state_dir, write_file
from .docker import engines_step
from .namespaces import describe_foreign, foreign_namespaces, netns_list
from .network import check_host_routes, default_routes, ensure_bridges, ensure_neighbour_table, node_link_problems
from .nodefiles import ensure_keys, prepare_node_dir, write_known_hosts
from .nodes import launch_anchor, node_health, start_daemon, stop_nodes
from .procs import alive, ns_inode, read_pid, record, wait_tcp
from . import slurm
from .shaping import apply_shape, proportional_shapes
from .state import STATE_VERSION, Lock, State
from .switches import ensure_fake_switches


@dataclass
class Up:
    """What one `up` works on, passed from step to step."""
    args: argparse.Namespace
    pod: pm.Pod
    paths: Paths
    st: State
    actions: list[str] = field(default_factory=list)  # what changed, printed at the end
    pubkey: str = ""  # the controller's public key (keys step)
    rebuild: list[pm.Node] = field(default_factory=list)  # nodes (re)built from scratch by this run
    launch: list[tuple[pm.Node, subprocess.Popen]] = field(default_factory=list)  # their anchors

    @property
    def wanted(self) -> dict[str, pm.Node]:
        return {n.name: n for n in self.pod.all_nodes}


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[Up], None]

    @property
    def does(self) -> str:
        """What the step does: the first line of its function's docstring."""
        return (self.run.__doc__ or "").strip().split("\n")[0]


def refuse_foreign_pod(up: Up) -> None:
    """Refuse to run while node-named namespaces of another pod (not in this state) run processes."""
    foreign = foreign_namespaces(up.st)
    if foreign:
        die(describe_foreign(foreign))


def refuse_foreign_routes(up: Up) -> None:
    """Refuse to run if the host already routes a simulator subnet (198.18.0.0/15) somewhere else."""
    check_host_routes()


def bridges(up: Up) -> None:
    """One Linux bridge per fabric (MTU, up), and the controller's address on the mgmt bridge."""
    ensure_bridges(up.actions)


def neighbour_table(up: Up) -> None:
    """The host's neighbour tables (one for all namespaces) sized for every fabric's full mesh."""
    ensure_neighbour_table(up.pod, up.actions)


def remove_unwanted_nodes(up: Up) -> None:
    """Stop and remove the nodes this size no longer has (resized down), and forget their shapes."""
    st, wanted = up.st, up.wanted
    gone = sorted(set(st.members) - set(wanted))
    if gone:
        left = stop_nodes(st, gone, up.paths)
        if left:
            die("could not remove %s: %s" % (", ".join(gone), ", ".join(left)))
        up.actions += ["removed %s" % name for name in gone]
    for name in sorted(st.data.get("shapes", {})):
        if name.split("/")[0] not in wanted:
            del st.data["shapes"][name]


def keys(up: Up) -> None:
    """The controller's SSH key and each node's host key (made once, kept across down); the /ifs directory."""
    up.pubkey = ensure_keys(up.paths, list(up.pod.all_nodes))
    os.makedirs(up.paths.ifs, exist_ok=True)


def find_nodes_to_build(up: Up) -> None:
    """Choose the nodes to build: new ones, and those whose namespace or anchor is gone (stopped first)."""
    st, nets = up.st, netns_list()
    for node in up.pod.all_nodes:
        m = st.members.get(node.name)
        if m is None and node.name not in nets:
            up.rebuild.append(node)
            continue
        h = node_health(st, node, nets)
        if not (h["netns"] and h["anchor"]):
            left = stop_nodes(st, [node.name], up.paths)
            if left:
                die("could not clean %s before rebuilding it: %s" % (node.name, ", ".join(left)))
            up.actions.append("rebuilt %s (%s)" % (node.name, ", ".join(k for k, v in h.items() if not v)))
            up.rebuild.append(node)


def create_namespaces(up: Up) -> None:
    """A network namespace (recorded at once) and the node's own files for each node to build."""
    nets = netns_list()
    for node in up.rebuild:
        if node.name in nets:  # a stale, empty namespace of the same name (checked above)
            run(["ip", "netns", "del", node.name])
        run(["ip", "netns", "add", node.name])
        # recorded at once, so that a failed `up` leaves nothing `down` cannot find
        up.st.members[node.name] = {"role": node.role, "netns_ino": os.stat("/run/netns/" + node.name).st_ino}
        prepare_node_dir(up.paths, node, up.pubkey)
        if not any(a.startswith("rebuilt %s " % node.name) for a in up.actions):
            up.actions.append("created %s" % node.name)


def node_health_files(up: Up) -> None:
    """The node health stand-ins' proc files (sim/standins/podsim_node.py) in every DGX that has none: a node
    built before they existed gets them without a rebuild (a new node has them from its node files)."""
    for node in up.pod.all_nodes:
        etc = os.path.join(up.paths.node(node.name), "etc.upper", "podsim")
        if node.role != "dgx" or os.path.exists(os.path.join(etc, "sysfs", "proc", "meminfo")):
            continue
        try:
            with open(os.path.join(etc, "hardware.json")) as f:
                hw_state = json.load(f)
        except (OSError, ValueError):
            continue  # no stand-in state: the node is rebuilt above, or it is not a simulated DGX yet
        podsim_node.write_node_files(os.path.join(etc, "sysfs"), hw_state)
        up.actions.append("wrote %s's node health stand-in files" % node.name)


def hca_counter_files(up: Up) -> None:
    """The HCA port counters and rates of the stand-in sysfs (sim/standins/podsim_hw.py write_fake_counters) in every
    DGX, written only where missing: a node built before they existed gets them without a rebuild, and a counter a
    fault's ticker is raising keeps its value."""
    for node in up.pod.all_nodes:
        if node.role != "dgx":
            continue
        etc = os.path.join(up.paths.node(node.name), "etc.upper", "podsim")
        try:
            with open(os.path.join(etc, "hardware.json")) as f:
                hw_state = json.load(f)
        except (OSError, ValueError):
            continue  # no stand-in state: the node is rebuilt above, or it is not a simulated DGX yet
        if podsim_hw.write_fake_counters(os.path.join(etc, "sysfs"), hw_state):
            up.actions.append("wrote %s's HCA counter stand-in files" % node.name)


def links(up: Up) -> None:
    """Every node's veths as modelled (all of a new node's, repairs on others); stale host-side veths removed."""
    host_links = {link["ifname"]: link for link in ip_json(["link", "show"])}
    host_cmds, node_cmds = [], {}
    for node in up.pod.all_nodes:
        problems, hc, nc = node_link_problems(node, host_links)
        if problems and node not in up.rebuild:
            up.actions.append("repaired %s links: %s" % (node.name, ", ".join(problems)))
        host_cmds += hc
        if nc:
            node_cmds[node.name] = nc
    if host_cmds:
        run(["ip", "-batch", "-"], input="\n".join(host_cmds) + "\n")
    for name, cmds in node_cmds.items():
        run(["ip", "-n", name, "-batch", "-"], input="\n".join(cmds) + "\n")
    # stale host-side veths of nodes that no longer exist
    known = {nic.host_end for n in up.pod.all_nodes for nic in n.nics}
    for ifname in sorted(host_links):
        if ifname.startswith(pm.VETH_PREFIX) and ifname not in known and os.path.exists("/sys/class/net/" + ifname):
            run(["ip", "link", "del", ifname], check=False)
            up.actions.append("removed stale link %s" % ifname)


def start_anchors(up: Up) -> None:
    """Start each new node's anchor (sim/node-init.sh), all at once, wait until every one is ready, and
    record its daemons' PIDs and its namespaces."""
    st, paths = up.st, up.paths
    for node in up.rebuild:
        proc = launch_anchor(paths, node)
        st.members[node.name]["anchor"] = record(proc.pid)
        up.launch.append((node, proc))
    st.save()
    deadline = time.time() + 20
    for node, proc in up.launch:
        ready = os.path.join(paths.node(node.name), "ready")
        while not os.path.exists(ready):
            if proc.poll() is not None or time.time() > deadline:
                with open(os.path.join(paths.node(node.name), "init.log")) as f:
                    tail = f.read()[-2000:]
                die("node %s did not start:\n%s" % (node.name, tail))
            time.sleep(0.02)
        nd = paths.node(node.name)
        m = st.members[node.name]
        for d in ("sshd", "rpcbind", "ganesha"):
            pid = read_pid(os.path.join(nd, d + ".pid"))
            if pid:
                m[d] = record(pid)
        m["mntns"] = ns_inode(proc.pid, "mnt")
        m["netns_ino"] = ns_inode(proc.pid, "net")


def restart_daemons(up: Up) -> None:
    """Restart the daemons (sshd; rpcbind and ganesha on storage nodes) that died in otherwise healthy nodes."""
    for node in up.pod.all_nodes:
        if node in up.rebuild:
            continue
        m = up.st.members[node.name]
        for d in (["sshd"] + (["rpcbind", "ganesha"] if node.role == "storage" else [])):
            if not alive(m.get(d)):
                m[d] = start_daemon(up.paths, node, m["anchor"]["pid"], d)
                up.actions.append("restarted %s on %s" % (d, node.name))


def shaping(up: Up) -> None:
    """tc shapes: the recorded ones re-applied to rebuilt nodes, new ones (--shape-proportional) applied once."""
    st, wanted = up.st, up.wanted
    shapes = dict(st.data.get("shapes", {}))
    if up.args.shape_proportional:
        shapes.update(proportional_shapes(up.pod))
        st.data["shape_proportional"] = True
    for key, rate in sorted(shapes.items()):
        name, nicname = key.split("/")
        node = wanted[name]
        # a rebuilt node has fresh veths: re-apply its recorded shapes; new shapes are applied once
        if node in up.rebuild or st.data.get("shapes", {}).get(key) != rate:
            apply_shape(node, next(n for n in node.nics if n.name == nicname), rate)
            if node not in up.rebuild:
                up.actions.append("shaped %s to %s" % (key, rate))
    st.data["shapes"] = shapes


def record_pod(up: Up) -> None:
    """Record the pod's size in the state file; write known_hosts with every node's pinned host key."""
    up.st.data.update({"version": STATE_VERSION, "nodes": up.pod.nodes, "storage": up.pod.storage,
                       "repo": REPO, "controller_address": pm.CONTROLLER_ADDRESS})
    up.st.save()
    write_known_hosts(up.paths, list(up.pod.all_nodes))


def wait_for_nodes(up: Up) -> None:
    """Wait until every sshd (and ganesha) answers on its address; refuse a node that has a default route."""
    pod = up.pod
    targets = [(n.mgmt_address, 22) for n in pod.all_nodes]
    targets += [(nic.address, 2049) for n in pod.storage_nodes for nic in n.nics if nic.fabric == "mgmt"]
    late = wait_tcp(targets, 20)
    if late:
        die("not answering after 20 s: %s (see %s/nodes/*/ *.log)" % (
            ", ".join("%s:%d" % a for a in late), up.paths.root))
    for n in pod.all_nodes:
        if default_routes(n.name):
            die("node %s has a default route; the simulator never adds one" % n.name)


def fake_switches(up: Up) -> None:
    """The fake switch server (sim/fakeswitch) serving every switch of the pod, told its cabling."""
    ensure_fake_switches(up.st, up.paths, up.pod, up.actions)
    up.st.save()


def inventory(up: Up) -> None:
    """Write the inventory (inventories/sim/hosts.yml, or $PODSIM_INVENTORY) for this size, if it differs."""
    inv = inventory_path()
    text = pm.render_inventory(up.pod, up.st.data.get("engine", "podman"),
                               slurm.inventory_vars(up.pod, slurm.scheduler_of(up.args)))
    old = open(inv).read() if os.path.exists(inv) else None
    if old != text:
        write_file(inv, text)
        up.actions.append("wrote %s" % os.path.relpath(inv))


STEPS: tuple[Step, ...] = (
    Step("refuse a foreign pod", refuse_foreign_pod),
    Step("refuse foreign routes", refuse_foreign_routes),
    Step("bridges", bridges),
    Step("neighbour table", neighbour_table),
    Step("remove unwanted nodes", remove_unwanted_nodes),
    Step("keys", keys),
    Step("find nodes to build", find_nodes_to_build),
    Step("namespaces and node files", create_namespaces),
    Step("node health stand-in files", node_health_files),
    Step("HCA counter stand-in files", hca_counter_files),
    Step("links", links),
    Step("anchors", start_anchors),
    Step("dead daemons", restart_daemons),
    Step("shaping", shaping),
    Step("record the pod", record_pod),
    Step("wait for the nodes", wait_for_nodes),
    Step("fake switches", fake_switches),
    Step("container engines", engines_step),
    Step("slurm", slurm.check),
    Step("inventory", inventory),
)


def preflight(storage: int) -> None:
    need = ["ip", "unshare", "nsenter", "tc", "ssh-keygen", "/usr/sbin/sshd"]
    if storage:
        need += ["/usr/bin/ganesha.nfsd", "/usr/sbin/rpcbind"]
    missing = [c for c in need if not shutil.which(c)]
    if missing:
        die("missing tools: %s (run scripts/setup.sh)" % " ".join(missing))
    if storage and not os.path.exists("/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so") and \
            not any(os.path.exists(os.path.join(d, "ganesha", "libfsalvfs.so")) for d in ("/usr/lib", "/usr/lib64")):
        die("nfs-ganesha-vfs is not installed (run scripts/setup.sh)")


def compile_standins() -> None:
    """Compile the stand-ins' modules into sim/standins/__pycache__ (their launchers, podsim-hw and podsim-gpu,
    import them): the nodes mount the directory read-only, so a node's Python can use the compiled form but never
    write it, and compiling podsim_hw.py at every call was about a third of a call's CPU (issue 19). Explicit, so
    PYTHONDONTWRITEBYTECODE does not stop it; a stale or missing file only costs the compile again."""
    compileall.compile_dir(os.path.join(REPO, "sim", "standins"), maxlevels=0, quiet=1)


def cmd_up(args) -> int:
    require_root()
    t0 = time.time()
    try:
        pod = pm.pod_shape(args.nodes, args.storage)
    except ValueError as e:
        die(str(e), 2)
    preflight(pod.storage)
    compile_standins()
    paths = Paths(state_dir())
    with Lock(paths):
        up = Up(args, pod, paths, State(paths))
        for step in STEPS:
            step.run(up)
    for a in up.actions:
        log(a)
    log("pod up: %d DGX + %d storage nodes, %d change(s), %.2f s"
        % (pod.nodes, pod.storage, len(up.actions), time.time() - t0))
    return 0
