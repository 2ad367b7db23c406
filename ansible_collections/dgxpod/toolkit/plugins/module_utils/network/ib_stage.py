# -*- coding: utf-8 -*-
"""The InfiniBand fabric stage (``validate.yml --tags ib``, ``pod_stages.ib``): what to read where, and the
evaluation of what ``library/pod_ib_fabric.py`` read against the pod model.

The plan (:func:`ib_plan`) comes from the typed pod: per fabric of ``kind: infiniband``, every NIC cabled to a
managed InfiniBand switch is one modelled link ``{node, nic, hca (its rdma_device), port 1, switch, switch_port (the
IB port number, catalog.switches.ib_port_number), port_name (the model's 1/N or 1/C/P), width, speed}``; the width and
speed are the catalogue's (``catalog.switches.ib_link``: the switch's generation at 4X, fewer lanes when the NIC's
modelled speed says so - HDR100 is 2X HDR). Fabric nodes are named by the model's GUIDs (``switch.guid``,
``nics[].port_guid``) where given, else by node description (network/ib_eval.py).

The record: ``{"fabrics": [IB fabric names], "pod", "groups", "nics", "switches"`` (the model, :func:`pod_of_record`)
``, "discover": host, "nodes": {host:
{"ib": pod_ib_fabric's value, "error", "unreachable"} or None}}``. :func:`evaluate` gives ``ib_sm`` per IB subnet
(the fabrics whose discoveries reach a common switch: rails on switches joined by inter-switch links share one subnet
manager, so two masters between them is a split subnet), per fabric ``ib_link`` and ``ib_cabling`` per modelled
link (network/ib_eval.py) and ``ib_pkey`` per HCA port where the fabric models partition keys; a DGX that did not
answer is the ``no_result`` error naming it; a fabric nobody discovered is one ``ib_fabric`` error with the tool's
words; a pod without an InfiniBand fabric is one ``skipped`` row.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import (IB_SOURCE, ib_link,
    ib_port_number, switch_model)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.network.ib_eval import (cabling_checks, link_checks,
    sm_check, switch_names)
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import Pod
from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (NODE_STATE, POD_STATE,
    CheckResult, Subject, compare, no_result)

__all__ = ["ib_fabrics", "ib_plan", "ports_of_nics", "host_ports", "pod_of_record", "subnets", "evaluate", "NO_IB"]

NO_IB = "no InfiniBand fabric in the model"
SOURCE_PKEY = "the pod model's pod.fabrics[].pkeys (IBTA Vol. 1 10.9: a port holds the partitions it is a member of)"


def ib_fabrics(pod: Pod) -> List[str]:
    """The names of the pod's InfiniBand fabrics, in the model's order."""
    return [f.name for f in pod.fabrics.values() if f.kind == "infiniband"]


def ib_plan(pod: Pod) -> Dict[str, Dict[str, Any]]:
    """Per IB fabric: ``{"links": [modelled link], "switches": {name: {"guid"}}, "hcas": {node: {hca: guid}},
    "pkeys": [...]}`` (the shapes network/ib_eval.evaluate_fabric takes)."""
    out: Dict[str, Dict[str, Any]] = {}
    switch_hosts = {h.name: h for h in pod.switches}
    for name in ib_fabrics(pod):
        links: List[Dict[str, Any]] = []
        switches: Dict[str, Dict[str, Any]] = {}
        hcas: Dict[str, Dict[str, Any]] = {}
        for sw_name, nics in pod.cabling().items():
            sw = switch_hosts.get(sw_name)
            model = switch_model((sw.switch if sw else {}).get("model"))
            if model is None or model.platform != "mlnx-ib":
                continue
            for nic in nics:
                if nic.fabric.name != name:
                    continue
                number = ib_port_number(model, nic.switch_port)
                if number is None:
                    continue  # preflight names a port the model has not got
                want = ib_link(model, nic.speed) or (None, None)
                hca = nic.rdma_device or nic.name
                links.append({"node": nic.host, "nic": nic.name, "hca": hca, "port": 1, "switch": sw_name,
                              "switch_port": number, "port_name": nic.switch_port, "width": want[0],
                              "speed": want[1]})
                if sw and sw.switch.get("guid"):
                    switches[sw_name] = {"guid": sw.switch.get("guid")}
                else:
                    switches.setdefault(sw_name, {})
                if nic.port_guid:
                    hcas.setdefault(nic.host, {})[hca] = nic.port_guid
        out[name] = {"links": links, "switches": switches, "hcas": hcas, "pkeys": list(pod.fabric(name).pkeys)}
    return out


def ports_of_nics(nics: Any, fabrics: Any) -> List[Dict[str, Any]]:
    """The HCA ports a host asks ``sminfo`` on, from its model NICs (plain ``nics`` entries) and the IB fabric
    names: ``[{fabric, hca (rdma_device, else the netdev), port 1, nic}]``, one per NIC on an IB fabric."""
    names = set(fabrics or ())
    return [{"fabric": n.get("fabric"), "hca": n.get("rdma_device") or n.get("name"), "port": 1, "nic": n.get("name")}
            for n in nics or () if isinstance(n, Mapping) and n.get("fabric") in names]


def host_ports(pod: Pod, host: str) -> List[Dict[str, Any]]:
    """:func:`ports_of_nics` of one host of the typed pod."""
    return ports_of_nics([{"fabric": n.fabric.name, "rdma_device": n.rdma_device, "name": n.name}
                          for n in pod.host(host).nics], ib_fabrics(pod))


def _pkey_check(fabric: str, port: Mapping[str, Any], node: str, want: List[str]) -> CheckResult:
    hca, nic = str(port.get("hca")), port.get("nic")
    host = "%s %s" % (node, hca)
    common = dict(subject=Subject(node=node, hca=hca, nic=nic, fabric=fabric), category=NODE_STATE,
                  source=SOURCE_PKEY, expected=", ".join(want), details=dict(compare("=")))
    have = port.get("pkeys")
    if have is None:
        return CheckResult("ib_pkey", host, "error", reason=(port.get("errors") or {}).get("pkeys") or
                           "the P_Key table was not read", **common)
    held = {int(k, 16) & 0x7FFF for k in have}
    missing = [k for k in want if int(k, 16) & 0x7FFF not in held]
    measured = ", ".join(have) or "none"
    if missing:
        return CheckResult("ib_pkey", host, "fail", measured=measured, cause="%s %s (%s) on fabric %s is not a "
                           "member of partition %s (its P_Key table: %s)" % (node, hca, nic, fabric,
                                                                           ", ".join(missing), measured), **common)
    return CheckResult("ib_pkey", host, "pass", measured=measured, **common)


def pod_of_record(recorded: Mapping[str, Any]) -> Pod:
    """The typed pod from what validate_ib.yml records of the model: ``pod`` (the pod variable once), ``groups``
    ({dgx, storage, switches: [hosts]}), ``nics`` ({host: its nics}) and ``switches`` ({switch: its switch
    variable}) - only what the plan reads, not every host's copy of the pod variable."""
    groups = {g: list(h or []) for g, h in (recorded.get("groups") or {}).items()}
    hostvars: Dict[str, Dict[str, Any]] = {}
    for group, hosts in groups.items():
        for host in hosts:
            hostvars.setdefault(host, {"group_names": []})["group_names"].append(group)
    for host, nics in (recorded.get("nics") or {}).items():
        hostvars.setdefault(host, {"group_names": []})["nics"] = nics
    for host, sw in (recorded.get("switches") or {}).items():
        hostvars.setdefault(host, {"group_names": ["switches"]})["switch"] = sw
    return Pod.from_hostvars(hostvars, groups, pod=recorded.get("pod") or {})


def _discovery(nodes: Mapping[str, Any], fabric: str) -> Optional[Mapping[str, Any]]:
    for rec in nodes.values():
        d = (((rec or {}).get("ib") or {}).get("discovery") or {}).get(fabric)
        if d:
            return d
    return None


def _switch_guids(d: Optional[Mapping[str, Any]]) -> set:
    """The switches a fabric's discovery reached (their node GUIDs)."""
    if not d:
        return set()
    out = {n.get("guid") for n in ((d.get("ibnetdiscover") or {}).get("nodes") or ()) if n.get("type") == "Switch"}
    out |= {p.get("node_guid") for p in (d.get("iblinkinfo") or ()) if p.get("node_type") == "Switch"}
    return {g for g in out if g}


def subnets(fabrics: List[str], nodes: Mapping[str, Any]) -> List[List[str]]:
    """The fabrics grouped into IB subnets: fabrics whose discoveries reached a common switch (or the module's
    ``same_as``) are one subnet - one subnet manager for all of them (rails on switches joined by inter-switch
    links, as the reference pods have them); a fabric nobody discovered is its own."""
    groups: List[List[str]] = []
    reach: List[set] = []
    for fabric in fabrics:
        d = _discovery(nodes, fabric)
        mine = _switch_guids(d)
        same = (d or {}).get("same_as")
        hit = [i for i, r in enumerate(reach) if (mine & r) or (same and same in groups[i])]
        if not hit:
            groups.append([fabric])
            reach.append(set(mine))
            continue
        first = hit[0]
        for i in reversed(hit[1:]):
            groups[first].extend(groups.pop(i))
            reach[first] |= reach.pop(i)
        groups[first].append(fabric)
        reach[first] |= mine
    return [[f for f in fabrics if f in g] for g in groups]


def _subnet_label(names: List[str]) -> str:
    if len(names) == 1:
        return names[0]
    return "%s and %d more fabric%s (one subnet)" % (names[0], len(names) - 1, "" if len(names) == 2 else "s")


def evaluate(recorded: Mapping[str, Any], expectations: Mapping[str, Any], context: Mapping[str, Any]
             ) -> List[CheckResult]:
    """Every check of the IB stage from its record (see the module docstring): per subnet ``ib_sm``, per fabric
    ``ib_link``/``ib_cabling`` per modelled link and ``ib_pkey`` per HCA port where partition keys are modelled."""
    fabrics = list(recorded.get("fabrics") or [])
    if not fabrics:
        return [CheckResult("ib_fabric", "pod", "skipped", reason=NO_IB, subject=Subject(), category=POD_STATE)]
    pod = pod_of_record(recorded)
    plan = ib_plan(pod)
    nodes: Mapping[str, Any] = recorded.get("nodes") or {}
    out: List[CheckResult] = []
    for host, rec in nodes.items():
        if rec is None or rec.get("unreachable"):
            out.append(no_result("ib_sm", host, Subject(node=host), NODE_STATE))
        elif rec.get("error") or not rec.get("ib"):
            out.append(CheckResult("ib_sm", host, "error", reason="pod_ib_fabric failed on %s: %s" % (
                host, rec.get("error") or "no reading"), subject=Subject(node=host), category=NODE_STATE))
    sminfo: Dict[str, List[Dict[str, Any]]] = {f: [] for f in fabrics}
    for host, rec in nodes.items():
        for port in (((rec or {}).get("ib") or {}).get("ports") or ()):
            fabric = port.get("fabric")
            if fabric not in sminfo:
                continue
            reading = port.get("sminfo")
            if reading is None:
                reading = {"error": (port.get("errors") or {}).get("sminfo") or "sminfo not read"}
            sminfo[fabric].append({"node": host, "hca": port.get("hca"), "reading": reading})
            pkeys = (plan.get(fabric) or {}).get("pkeys")
            if pkeys:
                out.append(_pkey_check(fabric, port, host, pkeys))
    for group in subnets(fabrics, nodes):
        sm_names: Dict[str, str] = {}
        for f in group:
            d = _discovery(nodes, f) or {}
            fp = plan.get(f) or {}
            sm_names.update(switch_names(fp.get("switches"), fp.get("links") or [], d.get("iblinkinfo"),
                                         d.get("ibnetdiscover")))
        out.append(sm_check(_subnet_label(group), [r for f in group for r in sminfo[f]], sm_names))
    for fabric in fabrics:
        fp = plan.get(fabric) or {"links": [], "switches": {}, "hcas": {}}
        if not fp["links"]:
            out.append(CheckResult("ib_fabric", "fabric %s" % fabric, "skipped", reason="no NIC of fabric %s is "
                                   "cabled to a modelled InfiniBand switch port" % fabric,
                                   subject=Subject(fabric=fabric), category=POD_STATE))
            continue
        d = _discovery(nodes, fabric)
        linkinfo = d.get("iblinkinfo") if d else None
        topology = d.get("ibnetdiscover") if d else None
        if linkinfo is None and topology is None:
            why = "; ".join("%s: %s" % kv for kv in sorted(((d or {}).get("errors") or {}).items())) or (
                "no DGX discovered it (the discovering DGX %s gave no reading)" % (recorded.get("discover") or "?"))
            out.append(CheckResult("ib_fabric", "fabric %s" % fabric, "error", reason="fabric %s was not read with "
                                   "iblinkinfo or ibnetdiscover: %s" % (fabric, why), source=IB_SOURCE,
                                   subject=Subject(fabric=fabric), category=POD_STATE))
            continue
        out.extend(link_checks(fp["links"], linkinfo, topology, fp["switches"], fp["hcas"]))
        out.extend(cabling_checks(fp["links"], linkinfo, topology, fp["switches"], fp["hcas"]))
    return out
