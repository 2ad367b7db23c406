"""``sim/podsim ib``: the infiniband-diags stand-ins' fabric on the pod-in-a-box (sim/standins/podsim_ib.py).

The pod-in-a-box is an Ethernet pod (veths and bridges; no IPoIB, no subnet manager), and its model has no fabric of
kind infiniband, so ``validate.yml --tags ib`` records one skipped row on it. What this verb gives is the stand-ins'
side of an InfiniBand pod, declared to the stand-ins only: :func:`sim_ib_model` takes the running pod's shape and
declares its four RDMA data fabrics InfiniBand rails, cabled as the Ethernet ones are (each DGX data NIC on the same
switch, the port ``1/N`` of an HDR QM8700 stand-in named after the fake switch: ``sim-sw1`` -> ``sim-ib1``), and
writes its fabric map into every DGX's stand-in state (``ib_fabric`` in /etc/podsim/hardware.json). The stand-ins
then answer ``sminfo``, ``iblinkinfo`` and ``ibnetdiscover`` inside the nodes, so ``library/pod_ib_fabric.py`` runs
there for real (through Ansible) and its readings evaluate with ``network/ib_stage.py`` against the same declared
model (scripts that do so: docs/simulator.md). Faults (``--fault``) are the fabric's: every DGX gets the same.
"""

from __future__ import annotations

import json
import os
import sys

import podmodel as pm
import podsim_ib

from .common import Paths, die, state_dir, write_file

IB_SWITCH = {"sim-sw1": "sim-ib1", "sim-sw2": "sim-ib2"}
IB_MODEL = "QM8700"


def sim_ib_model(pod: pm.Pod) -> dict:
    """The pod model ({"pod", "hosts"}, model_from_hostvars' shape) of the sim pod with its RDMA data fabrics
    declared InfiniBand rails on QM8700 stand-ins (see the module docstring): what the stand-ins' map and the
    evaluation of their readings are built from."""
    rails = sorted({n.fabric for d in pod.dgx for n in d.nics if n.rdma_device})
    fabrics = [{"name": f, "kind": "infiniband", "carries": ["compute"], "subnet": pm.FABRICS[f].subnet,
                "mtu": 4092, "pkeys": ["0x7fff"]} for f in rails]
    hosts: dict = {}
    next_port: dict = {}
    for d in pod.dgx:
        nics = []
        for n in d.nics:
            if not n.rdma_device or n.switch not in IB_SWITCH:
                continue
            sw = IB_SWITCH[n.switch]
            next_port[sw] = next_port.get(sw, 0) + 1
            nics.append({"name": n.name, "fabric": n.fabric, "address": n.address, "rdma_device": n.rdma_device,
                         "speed": 200, "switch": sw, "switch_port": "1/%d" % next_port[sw]})
        hosts[d.name] = {"groups": ["dgx"], "vars": {"nics": nics, "dgx_model": "dgx1"}}
    for sw in sorted(set(IB_SWITCH.values())):
        other = [s for s in IB_SWITCH.values() if s != sw][0]
        hosts[sw] = {"groups": ["switches"], "vars": {"switch": {
            "platform": "mlnx-ib", "model": IB_MODEL,
            "ports": {"1/%d" % p: {"speed": 200, "description": "ISL to %s" % other} for p in (39, 40)}}}}
    return {"pod": {"name": "sim-ib", "ra_profile": "powerscale-f800-dgxa100", "fabrics": fabrics}, "hosts": hosts}


def sim_fabric_map(pod: pm.Pod) -> dict:
    """The stand-ins' fabric map of :func:`sim_ib_model`, ports and links by the toolkit's catalogue."""
    sys.path.insert(0, pm.__file__.rsplit(os.sep, 2)[0])  # the repository: the collection's module_utils
    from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import (SWITCH_MODELS, ib_link,
        ib_port_number)
    return podsim_ib.fabric_map(sim_ib_model(pod), lambda m, p: ib_port_number(SWITCH_MODELS[m], p),
                                lambda m, s: ib_link(SWITCH_MODELS[m], s))


def write_sysfs(root: str, fmap: dict, node: str) -> None:
    """The stand-in sysfs file pod_ib_fabric reads beside the tools, for ``node``'s HCAs of the map: port 1's P_Key
    table (``pkeys/0`` = 0xffff, the default partition with full membership, the rest 0x0000), as ib_core shows it.
    The HCA's ``node_guid`` is podsim_hw's (its stand-in sysfs and ibv_devinfo): never written here - the map takes
    the GUIDs from the nodes instead (:func:`with_node_guids`)."""
    for h in (fmap.get("hcas") or {}).values():
        if h["node"] != node:
            continue
        base = os.path.join(root, "sys", "class", "infiniband", h["hca"])
        for i in range(4):
            write_file(os.path.join(base, "ports", "1", "pkeys", str(i)), ("0xffff" if i == 0 else "0x0000") + "\n")


def remove_sysfs(root: str, fmap: dict, node: str) -> None:
    """Undo :func:`write_sysfs` (``--unmap``)."""
    import shutil
    for h in (fmap.get("hcas") or {}).values():
        if h["node"] == node:
            shutil.rmtree(os.path.join(root, "sys", "class", "infiniband", h["hca"], "ports", "1", "pkeys"),
                          ignore_errors=True)


def with_node_guids(fmap: dict, states: dict) -> dict:
    """The map with each HCA's GUID the one its node's stand-ins already show (``hcas.<dev>.node_guid`` of the node's
    hardware.json: ibv_devinfo's and the stand-in sysfs's ``node_guid``), so every tool of a node agrees."""
    for h in (fmap.get("hcas") or {}).values():
        g = (((states.get(h["node"]) or {}).get("hcas") or {}).get(h["hca"]) or {}).get("node_guid")
        if g:
            h["guid"] = "0x%016x" % int(g.replace(":", ""), 16)
    return fmap


def _states(pod: pm.Pod) -> list:
    paths = Paths(state_dir())
    out = []
    for d in pod.dgx:
        path = os.path.join(paths.node(d.name), "etc.upper", "podsim", "hardware.json")
        if not os.path.exists(path):
            die("no simulated DGX %s (its state %s is missing; `sim/podsim up` first)" % (d.name, path))
        out.append((d.name, path))
    return out


def cmd_ib(args) -> int:
    """Write (--map) or remove (--unmap) the stand-ins' fabric map on every DGX, inject or clear fabric faults
    (podsim_ib.FAULT_KEYS), print the faults set."""
    with open(Paths(state_dir()).state) as f:
        st = json.load(f)
    pod = pm.pod_shape(st["nodes"], st["storage"])
    try:
        faults = podsim_ib.parse_faults(args.fault or [])
    except ValueError as e:
        die(str(e), 2)
    paths = _states(pod)
    states = {}
    for node, path in paths:
        with open(path) as f:
            states[node] = json.load(f)
    fmap = with_node_guids(sim_fabric_map(pod), states) if args.map else None
    current: dict = {}
    for node, path in paths:
        state = states[node]
        sysfs = os.path.join(os.path.dirname(path), "sysfs")
        if args.map:
            state["ib_fabric"] = fmap
            write_sysfs(sysfs, fmap, node)
        if args.unmap:
            if state.get("ib_fabric"):
                remove_sysfs(sysfs, state["ib_fabric"], node)
            state.pop("ib_fabric", None)
            state.pop("ib_faults", None)
        if args.clear or faults:
            state["ib_faults"] = {} if args.clear else dict(state.get("ib_faults") or {})
            state["ib_faults"].update(faults)
        if args.map or args.unmap or args.clear or faults:
            write_file(path, json.dumps(state, indent=1, sort_keys=True) + "\n")
        current = state.get("ib_faults") or {}
    print(json.dumps(current, sort_keys=True))
    return 0
