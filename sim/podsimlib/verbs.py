"""The verbs other than up and down: status, exec, shape, switch, gpu, node, fault, inventory."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys

import podmodel as pm
import podsim_gpu
import podsim_node

from .common import Paths, die, ip_json, log, require_root, state_dir, write_file
from .cpulimit import apply_cpu_limit
from .namespaces import netns_list
from .network import node_link_problems
from .nodes import node_health
from .procs import alive, nsenter_cmd
from .shaping import apply_shape
from .slurm import inventory_vars
from .state import Lock, State
from .switches import parse_switch_faults


def collect_status(paths: Paths) -> dict:
    st = State(paths)
    pod = pm.pod_shape(st.data["nodes"], st.data["storage"]) if st.data.get("nodes") else None
    nets = netns_list()
    out = {"up": pod is not None, "nodes": {}, "bridges": {}, "healthy": False}
    if pod is None:
        return out
    links = {link["ifname"]: link for link in ip_json(["link", "show"])}
    for fab in pm.FABRICS.values():
        out["bridges"][fab.bridge] = fab.bridge in links and "UP" in links[fab.bridge].get("flags", [])
    for node in pod.all_nodes:
        h = node_health(st, node, nets)
        if h["netns"]:
            problems = node_link_problems(node, links)[0]
            h["links"] = not problems
            if problems:
                h["link_problems"] = problems
        else:
            h["links"] = False
        m = st.members.get(node.name, {})
        out["nodes"][node.name] = {"role": node.role, "address": node.mgmt_address,
                                   "anchor_pid": (m.get("anchor") or {}).get("pid"), **h}
    out["healthy"] = all(out["bridges"].values()) and all(
        all(v for k, v in n.items() if isinstance(v, bool)) for n in out["nodes"].values())
    out["size"] = {"nodes": pod.nodes, "storage": pod.storage}
    return out


def cmd_status(args) -> int:
    s = collect_status(Paths(state_dir()))
    if args.json:
        print(json.dumps(s, indent=1, sort_keys=True))
    elif not s["up"]:
        print("pod is down")
    else:
        print("pod-in-a-box: %d DGX + %d storage nodes, %s" % (s["size"]["nodes"], s["size"]["storage"],
                                                            "healthy" if s["healthy"] else "NOT healthy"))
        bad_br = [b for b, ok in s["bridges"].items() if not ok]
        if bad_br:
            print("  bridges down/missing: %s" % ", ".join(bad_br))
        for name, n in s["nodes"].items():
            checks = " ".join("%s=%s" % (k, "ok" if v else "FAIL") for k, v in n.items() if isinstance(v, bool))
            print("  %-13s %-15s pid %-7s %s" % (name, n["address"], n["anchor_pid"], checks))
            if n.get("link_problems"):
                print("      links: %s" % ", ".join(n["link_problems"]))
    return 0 if s["healthy"] else 1


def anchor_of(node: str) -> int:
    st = State(Paths(state_dir()))
    m = st.members.get(node)
    if not m or not alive(m.get("anchor")):
        die("node %s is not running (podsim status)" % node)
    return m["anchor"]["pid"]


def cmd_exec(args) -> int:
    require_root()
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        cmd = ["/bin/bash", "-l"]
    argv = nsenter_cmd(anchor_of(args.node), cmd)
    os.execvp(argv[0], argv)
    return 127


@contextlib.contextmanager
def running_pod():
    """The pod's state, under its lock (root only); exits naming the problem when the pod is down."""
    require_root()
    paths = Paths(state_dir())
    with Lock(paths):
        st = State(paths)
        if not st.data.get("nodes"):
            die("the pod is down")
        yield st


def record(st: State, table: str, key: str, value) -> None:
    """Keep ``value`` under ``st.data[table][key]`` (re-applied when a node is rebuilt); None removes it."""
    entries = st.data.setdefault(table, {})
    if value is None:
        entries.pop(key, None)
    else:
        entries[key] = value
    st.save()


def cmd_shape(args) -> int:
    with running_pod() as st:
        pod = pm.pod_shape(st.data["nodes"], st.data["storage"])
        node = next((n for n in pod.all_nodes if n.name == args.node), None)
        if node is None:
            die("no node %s" % args.node)
        nic = next((n for n in node.nics if n.name == args.nic), None)
        if nic is None:
            die("%s has no NIC %s (it has %s)" % (node.name, args.nic, ", ".join(n.name for n in node.nics)))
        key = "%s/%s" % (node.name, nic.name)
        apply_shape(node, nic, None if args.clear else args.rate)
        record(st, "shapes", key, None if args.clear else args.rate)
    log("%s: %s" % (key, "shaping cleared" if args.clear else "shaped to %s (tbf, both directions)" % args.rate))
    return 0


def cmd_cpu(args) -> int:
    """A slow DGX: cap (or uncap) its MPI container's CPU (sim/podsimlib/cpulimit.py)."""
    with running_pod() as st:
        if not args.node.startswith("sim-dgx"):
            die("%s is not a DGX: a CPU limit slows a DGX's MPI container" % args.node)
        cpus = None if args.clear else args.limit
        try:
            apply_cpu_limit(anchor_of(args.node), st.data.get("engine", "podman"), args.container, cpus)
        except (OSError, ValueError) as e:
            die("%s: %s" % (args.node, e))
        record(st, "cpu_limits", args.node, cpus)
    log("%s %s: %s" % (args.node, args.container, "CPU limit cleared" if cpus is None else "limited to %s CPU" % cpus))
    return 0


def cmd_switch(args) -> int:
    """Work on one fake switch's state file (read at every line the server handles): show its running
    config, set or clear faults, or type CLI lines into it as a person on its console would (the same CLI
    code the SSH server runs, so the same grammar and errors)."""
    from fakeswitch.cli import Device
    from fakeswitch.server import load_state, state_path, write_state

    paths = Paths(state_dir())
    path = state_path(os.path.join(paths.root, "switches"), args.switch)
    if args.switch not in pm.SWITCHES or not os.path.exists(path):
        die("no fake switch %s (the pod's switches: %s; `sim/podsim up` starts them)" % (
            args.switch, ", ".join(pm.SWITCHES)))
    try:
        faults = parse_switch_faults(args.fault or [])
    except ValueError as e:
        die(str(e), 2)
    dev = Device(load_state(path), lambda state: write_state(path, state))
    if args.clear_faults or faults:
        dev.state["faults"] = {} if args.clear_faults else dict(dev.state.get("faults") or {})
        dev.state["faults"].update(faults)
        dev.save()
        log("%s: faults %s" % (args.switch, json.dumps(dev.state["faults"], sort_keys=True)))
    bad = 0
    if args.cli:
        session = dev.session()
        for line in args.cli:
            dev.state = load_state(path)
            prompt = session.prompt()
            out, action = session.handle(line)
            print(prompt + line)
            if out:
                print(out)
            if re.search(r"^% |^Error:|command not found", out or "", re.M):
                bad += 1
            if action in ("close", "drop"):
                break
    if args.show:
        print(dev.session().handle({"cumulus": "nv config show -o commands"}.get(
            dev.platform, "show running-config"))[0])
    return 1 if bad else 0


def cmd_gpu(args) -> int:
    """Inject or clear GPU faults in a simulated DGX (the stand-ins read them at every call; see
    sim/standins/podsim_gpu.py for the keys)."""
    path = os.path.join(Paths(state_dir()).node(args.node), "etc.upper", "podsim", "hardware.json")
    if not os.path.exists(path):
        die("no simulated DGX %s (its state %s is missing; `sim/podsim up` first)" % (args.node, path))
    try:
        faults = podsim_gpu.parse_faults(args.fault or [])
    except ValueError as e:
        die(str(e), 2)
    with open(path) as f:
        state = json.load(f)
    if args.clear or faults:
        state["gpu_faults"] = {} if args.clear else dict(state.get("gpu_faults") or {})
        state["gpu_faults"].update(faults)
        if args.clear:
            state.pop("gpu_fault_counters", None)
        write_file(path, json.dumps(state, indent=1, sort_keys=True) + "\n")
        podsim_gpu.write_node_files(os.path.join(os.path.dirname(path), "sysfs"), state)
    print(json.dumps(state.get("gpu_faults") or {}, sort_keys=True))
    return 0


def cmd_node(args) -> int:
    """Inject or clear node health faults in a simulated DGX (kernel log, BMC, memory, NVMe, nvbandwidth; the
    stand-ins read them at every call; see sim/standins/podsim_node.py for the keys). The time of each inject is
    kept (``node_faults_at``): it dates the fault's kernel messages and SEL entries, so they fall in the window."""
    import time
    path = os.path.join(Paths(state_dir()).node(args.node), "etc.upper", "podsim", "hardware.json")
    if not os.path.exists(path):
        die("no simulated DGX %s (its state %s is missing; `sim/podsim up` first)" % (args.node, path))
    try:
        faults = podsim_node.parse_faults(args.fault or [])
    except ValueError as e:
        die(str(e), 2)
    with open(path) as f:
        state = json.load(f)
    if args.clear or faults:
        old = {} if args.clear else dict(state.get("node_faults") or {})
        at = {} if args.clear else dict(state.get("node_faults_at") or {})
        for key, value in faults.items():
            if old.get(key) != value or key not in at:
                at[key] = time.time()
        old.update(faults)
        state["node_faults"], state["node_faults_at"] = old, {k: v for k, v in at.items() if k in old}
        write_file(path, json.dumps(state, indent=1, sort_keys=True) + "\n")
        podsim_node.write_node_files(os.path.join(os.path.dirname(path), "sysfs"), state)
    print(json.dumps(state.get("node_faults") or {}, sort_keys=True))
    return 0


def cmd_fault(args) -> int:
    """The fault catalogue (sim/faults/: what each fault does, how it is cleared, what should find it)."""
    import faults
    if args.action != "list":
        require_root()
    return faults.main(args)


def cmd_inventory(args) -> int:
    try:
        pod = pm.pod_shape(args.nodes, args.storage)
        sys.stdout.write(pm.render_inventory(pod, args.engine, inventory_vars(pod, args.scheduler)))
    except ValueError as e:
        die(str(e), 2)
    return 0
