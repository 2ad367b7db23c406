# -*- coding: utf-8 -*-
"""What one check result says about the pod, for the root-cause findings (module_utils/report/findings.py). Pure.

The pod index (:func:`pod_index`) is a small plain mapping of the typed pod: every host's NICs (address,
fabric, switch port) and the DGX, storage and switch names. :func:`analyse` reads one failed or errored
check (results.json form, docs/results.md) against it and returns a :class:`Facts`. It reads only what the
check says about itself as data - ``category``, ``subject``, ``problem_subjects`` (module_utils/result/check.py),
``status`` and ``unreachable`` - never the words of its cause, reason or host, and no list of check names: a new
check is read by the category and subject its evaluator declares.

- ``nodes``: the pod nodes the check involves (its node, the peer of a pair, every node of a step);
- ``endpoints``: (node, NIC) pairs it involves (a pair's two NICs, the DGX NIC a mount goes through, the NIC
  cabled to a switch port); NIC ``None`` when only the node is known;
- ``targets``: remote (node, NIC, address) its problems point at (a ping to an address, a mount from a
  storage address: REACH problems) - the check's own node is not the place to look for those;
- ``local``: state faults on a node: (node, NIC or None, cause, switch port or None);
- ``perf``: a performance measurement (low numbers, not a state difference).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.result.check import (JOB_PERF, JOB_STATE, LINK_PERF,
    NODE_STATE, PERF_CATEGORIES, POD_PERF, PORT_STATE, REACH)

__all__ = ["Facts", "Index", "JOB_PERF", "JOB_STATE", "LINK_PERF", "POD_PERF", "PORT_STATE", "analyse", "device_fault",
           "pod_index", "subject", "why"]


def pod_index(pod: Any) -> Dict[str, Any]:
    """The plain mapping build_findings reads, from a typed pod (module_utils/pod/types.Pod)."""
    nics = {}
    for host in pod.hosts.values():
        nics[host.name] = [{"name": n.name, "address": n.address, "fabric": n.fabric.name,
                            "carries": list(n.fabric.carries), "switch": n.switch, "switch_port": n.switch_port}
                           for n in host.nics]
    return {"pod": pod.name, "dgx": [h.name for h in pod.dgx], "storage": [h.name for h in pod.storage_nodes],
            "switches": [h.name for h in pod.switches], "nics": nics}


class Index:
    """Look-ups over a :func:`pod_index` mapping (addresses, switch ports, NIC names)."""

    def __init__(self, raw: Optional[Mapping[str, Any]]) -> None:
        raw = raw or {}
        self.dgx: List[str] = list(raw.get("dgx") or [])
        self.storage: List[str] = list(raw.get("storage") or [])
        self.switches: List[str] = list(raw.get("switches") or [])
        self.nics: Dict[str, List[Mapping[str, Any]]] = {h: list(v or []) for h, v in (raw.get("nics") or {}).items()}
        self.owner: Dict[str, Tuple[str, str]] = {}
        self.port: Dict[Tuple[str, str], Tuple[str, str]] = {}
        for host, nics in self.nics.items():
            for n in nics:
                if n.get("address"):
                    self.owner[str(n["address"])] = (host, n["name"])
                if n.get("switch") and n.get("switch_port"):
                    self.port[(n["switch"], n["switch_port"])] = (host, n["name"])
        self.nodes: Set[str] = set(self.dgx) | set(self.storage) | set(self.nics)

    def nic(self, host: str, name: Optional[str]) -> Optional[Mapping[str, Any]]:
        return next((n for n in self.nics.get(host, []) if n.get("name") == name), None)

    def addresses(self, host: str) -> List[str]:
        return [str(n["address"]) for n in self.nics.get(host, []) if n.get("address")]

    def via(self, host: str, address: str) -> Optional[str]:
        """The NIC of ``host`` on the fabric of ``address`` (a mount goes out through it)."""
        owner = self.owner.get(address)
        theirs = self.nic(*owner) if owner else None
        if not theirs:
            return None
        return next((n["name"] for n in self.nics.get(host, []) if n.get("fabric") == theirs.get("fabric")), None)

    def switch_port(self, host: str, nic: Optional[str]) -> Optional[str]:
        n = self.nic(host, nic)
        return "%s %s" % (n["switch"], n["switch_port"]) if n and n.get("switch") and n.get("switch_port") else None


@dataclass
class Facts:
    nodes: Set[str] = field(default_factory=set)
    endpoints: Set[Tuple[str, Optional[str]]] = field(default_factory=set)
    targets: List[Tuple[str, Optional[str], str]] = field(default_factory=list)
    # the cause each REACH problem gives of its own, in the order of ``targets`` (None: it just got no answer)
    target_causes: List[Optional[str]] = field(default_factory=list)
    local: List[Tuple[str, Optional[str], str, Optional[str]]] = field(default_factory=list)
    perf: bool = False
    unanswered: bool = False


def subject(c: Mapping[str, Any]) -> Mapping[str, Any]:
    """The check's subject (results.json ``subject``), ``{}`` when it has none."""
    s = c.get("subject")
    return s if isinstance(s, Mapping) else {}


def involved(c: Mapping[str, Any]) -> List[str]:
    """The pod nodes a check's subject names: node, peer, nodes (once each, in that order)."""
    s = subject(c)
    out: List[str] = []
    for n in [s.get("node"), s.get("peer")] + list(s.get("nodes") or []):
        if n and str(n) not in out:
            out.append(str(n))
    return out


def device_fault(c: Mapping[str, Any]) -> bool:
    """A fault of a node's GPU or HCA (found by the GPU stage, or naming one): it explains the GPU jobs the node
    takes part in (NCCL, training)."""
    s = subject(c)
    return c.get("category") == NODE_STATE and (c.get("stage") == "gpu" or s.get("gpu") is not None
                                                 or bool(s.get("hca")))


def problems(c: Mapping[str, Any]) -> List[Tuple[str, Mapping[str, Any]]]:
    """(text, about) of each problem the check lists with its subject (``problems`` + ``problem_subjects``)."""
    texts = list(c.get("problems") or [])
    abouts = list(c.get("problem_subjects") or [])
    return [(str(t), a if isinstance(a, Mapping) else {}) for t, a in zip(texts, abouts, strict=False)]


def why(c: Mapping[str, Any]) -> str:
    """The check's own words: its cause, reason or problems (or what it measured)."""
    if c.get("cause"):
        return str(c["cause"])
    if c.get("reason"):
        return str(c["reason"])
    if c.get("problems"):
        return "; ".join(str(p) for p in c["problems"])
    if c.get("measured") is not None or c.get("expected") is not None:
        return "measured %s, expected %s %s" % (c.get("measured"), c.get("expected"), c.get("unit") or "")
    return c.get("status") or "failed"


def analyse(c: Mapping[str, Any], idx: Index) -> Facts:
    category, s = c.get("category"), subject(c)
    f = Facts(perf=category in PERF_CATEGORIES)
    if c.get("status") == "error" and c.get("unreachable"):
        f.unanswered = True
    if category == PORT_STATE:
        return _port(c, s, idx, f)
    f.nodes |= set(involved(c))
    if category == LINK_PERF:
        for node, nic in ((s.get("node"), s.get("nic")), (s.get("peer"), s.get("peer_nic"))):
            if node:
                f.endpoints.add((str(node), nic))
    for n in f.nodes:
        if not any(e[0] == n for e in f.endpoints):
            f.endpoints.add((n, None))
    node = str(s.get("node") or "")
    listed = problems(c)
    for text, about in listed:
        _problem(text, about, node, idx, f)
    if category == NODE_STATE and c.get("status") == "fail" and node in idx.nodes and not f.local and not f.targets:
        nic = s.get("nic")
        f.local.append((node, nic, why(c), idx.switch_port(node, nic) if nic else None))
    return f


def _port(c: Mapping[str, Any], s: Mapping[str, Any], idx: Index, f: Facts) -> Facts:
    """A switch port's check: a failure is a fault of the port, on the node and NIC cabled to it (the pod's
    cabling says which)."""
    sw, port = s.get("switch"), s.get("port")
    cabled = idx.port.get((sw, port)) if sw and port else None
    if cabled and c.get("status") == "fail":
        where = "%s %s" % (sw, port)
        f.local.append((cabled[0], cabled[1], "%s: %s" % (where, _without(why(c), where, cabled)), where))
        f.nodes.add(cabled[0])
        f.endpoints.add(cabled)
    return f


def _without(text: str, where: str, cabled: Tuple[str, str]) -> str:
    """The port check's cause without the port it starts with ("sim-sw1 Et1/1 (sim-dgx1 enp5s0): ..."): the
    finding's subject names the port and the NIC already."""
    for prefix in ("%s (%s %s): " % (where, cabled[0], cabled[1]), where + ": "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _problem(text: str, about: Mapping[str, Any], node: str, idx: Index, f: Facts) -> None:
    """One problem of a check: an address or node it could not reach (REACH: a ping, a mount's I/O), or a
    fault of the node's own (its NIC's state, a mount of its own)."""
    mine = str(about.get("node") or node)
    addr = about.get("address")
    peer = about.get("peer")
    if about.get("category") == REACH and (peer or addr) and (not addr or addr not in idx.addresses(mine)):
        owner, nic = (idx.owner.get(str(addr)) if addr else None) or (str(peer or addr), about.get("peer_nic"))
        f.targets.append((owner, nic, str(addr or peer)))
        f.target_causes.append(str(about["cause"]) if about.get("cause") else None)
        f.nodes.add(owner)
        f.endpoints.add((owner, nic))
        via = about.get("nic") or (idx.via(mine, str(addr)) if addr else None)
        if via:
            f.endpoints.add((mine, via))
        return
    nic = about.get("nic")
    cause = str(about.get("cause") or text)
    if about.get("path"):  # a mount or file of the node's own: the node's fault, reached through its NIC
        f.local.append((mine, None, cause, None))
        if nic:
            f.endpoints.add((mine, nic))
        return
    f.local.append((mine, nic, cause, idx.switch_port(mine, nic) if nic else None))
