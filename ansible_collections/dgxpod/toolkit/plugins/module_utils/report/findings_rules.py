# -*- coding: utf-8 -*-
"""What one check result says about the pod, for the root-cause findings (module_utils/report/findings.py). Pure.

The pod index (:func:`pod_index`) is a small plain mapping of the typed pod: every host's NICs (address,
fabric, switch port) and the DGX, storage and switch names. :func:`analyse` reads one failed or errored
check (results.json form, docs/results.md) against it and returns a :class:`Facts`:

- ``nodes``: the pod nodes the check involves (its host, both ends of a pair, every node of a step);
- ``endpoints``: (node, NIC) pairs it involves (an iperf pair's two NICs, the DGX NIC a mount goes
  through, the NIC cabled to a switch port); NIC ``None`` when only the node is known;
- ``targets``: remote (node, NIC, address) its problems point at (a ping to an address, a mount from a
  storage address) - the check's own host is not the place to look for those;
- ``local``: host-state faults on the check's own node: (node, NIC or None, cause, switch port or None);
- ``perf``: a performance measurement (low numbers, not a state difference).

Check names and the keys their results carry: identity/network/nfs_mounts/mpi_containers (the roles),
iperf*/fio*/storage_sizing (pod/eval.py), nccl_* (nccl/eval.py), train_* (training/eval.py), gpu_* and
hca_pcie_link (gpu/eval.py), switch_* (switch/eval.py). A name not known here is analysed generically by
its ``host``/``hosts``/``nodes`` keys.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

IP = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d.])")
UNANSWERED = re.compile(r"unreachable|no route to host|connection (?:timed out|refused)|does not answer ssh", re.I)
PERF_CHECKS = {"iperf", "iperf_relative", "fio_read", "fio_relative", "fio_scaling", "storage_sizing",
               "nccl_busbw", "nccl_relative", "nccl_localisation", "train_throughput", "train_relative",
               "train_read_rate", "train_gpu_util", "train_storage_bound"}
STORAGE_PERF = {"fio_read", "fio_relative", "fio_scaling", "storage_sizing"}
# checks of one node's own state: a failure names a fault on that node (its NIC, GPU, port)
NODE_STATE = {"identity", "network", "gpu_model", "gpu_inventory", "gpu_count", "gpu_nvlink", "gpu_nvlink_errors",
              "gpu_peermem", "gpu_fabric_manager", "gpu_dcgm_diag", "hca_pcie_link", "gpu_node", "nccl_transport"}
# checks of one switch port: a failure is a fault of the NIC cabled to it
PORT_STATE = {"switch_port_mtu", "switch_port_status", "switch_lossless", "switch_lldp", "switch_counters"}
KERNEL_PREFIX = "kernel differs from the model: "
# pod_ping_mesh: "sim-dgx1 enp132s0 -> sim-dgx2 (198.18.66.12) at MTU 9000: 100% packet loss"
PING = re.compile(r"-> (?P<peer>\S+) \((?P<addr>\d{1,3}(?:\.\d{1,3}){3})\) at MTU")
# pod_nfs_verify, a mount's I/O: "sim-dgx1: /mnt/isilon2 from 198.18.5.212: listing failed: ..." (also write,
# read-back, reading the probe file); not "not mounted (planned ...)" / "is mounted from" (the client's side)
NFS_IO = re.compile(r"^(?:\S+: )?\S+ from (?P<addr>\d{1,3}(?:\.\d{1,3}){3}): ")
DIFF = re.compile(r"^(\S+) (\w+): (.*?) -> (.*)$")


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

    def nic_in(self, host: str, text: str) -> Optional[str]:
        """The first of ``host``'s NIC names that ``text`` mentions as a word."""
        found = []
        for n in self.nics.get(host, []):
            m = re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(str(n["name"])), text)
            if m:
                found.append((m.start(), n["name"]))
        return min(found)[1] if found else None

    def switch_port(self, host: str, nic: Optional[str]) -> Optional[str]:
        n = self.nic(host, nic)
        return "%s %s" % (n["switch"], n["switch_port"]) if n and n.get("switch") and n.get("switch_port") else None


@dataclass
class Facts:
    nodes: Set[str] = field(default_factory=set)
    endpoints: Set[Tuple[str, Optional[str]]] = field(default_factory=set)
    targets: List[Tuple[str, str, str]] = field(default_factory=list)
    local: List[Tuple[str, Optional[str], str, Optional[str]]] = field(default_factory=list)
    perf: bool = False
    unanswered: bool = False


def why(c: Mapping[str, Any]) -> str:
    """The check's own words: its cause, reason or problems (or what it measured)."""
    if c.get("cause"):
        return str(c["cause"])
    if c.get("reason"):
        return str(c["reason"])
    if c.get("problems"):
        return "; ".join(str(p) for p in c["problems"])
    if c.get("missing_nics"):
        return "missing NICs: " + ", ".join(c["missing_nics"])
    if c.get("measured") is not None or c.get("expected") is not None:
        return "measured %s, expected %s %s" % (c.get("measured"), c.get("expected"), c.get("unit") or "")
    return c.get("status") or "failed"


def tidy(problem: str) -> str:
    """'kernel differs from the model: enp132s0 mtu: 1500 -> 9000' -> 'mtu 1500, model 9000'."""
    text = problem[len(KERNEL_PREFIX):] if problem.startswith(KERNEL_PREFIX) else problem
    m = DIFF.match(text)
    if m:
        field_name = "MTU" if m.group(2) == "mtu" else m.group(2)
        return "%s %s, model %s" % (field_name, m.group(3), m.group(4))
    return text


def _host_nodes(host: str, idx: Index) -> Set[str]:
    if host.startswith("all (") or host == "pod":
        return set()
    parts = [p.strip() for p in host.split("<->")]
    if len(parts) == 1 and not idx.nodes:  # no pod index: a plain name is taken as a node
        return set() if " " in host else {host}
    return {p for p in parts if p in idx.nodes or len(parts) > 1}


def analyse(c: Mapping[str, Any], idx: Index) -> Facts:
    name, host = str(c.get("check")), str(c.get("host"))
    f = Facts(perf=name in PERF_CHECKS)
    f.nodes |= _host_nodes(host, idx)
    for key in ("hosts", "nodes"):
        if isinstance(c.get(key), list):
            f.nodes |= {str(h) for h in c[key]}
    if host.startswith("all (") and name.startswith("nccl"):
        f.nodes |= set(idx.dgx)
    if c.get("status") == "error" and UNANSWERED.search(str(c.get("reason") or "")):
        f.unanswered = True
    for side in ("client", "server"):
        if c.get(side):
            f.endpoints.add((str(c[side]), c.get(side + "_nic")))
            f.nodes.add(str(c[side]))
    for n in f.nodes:
        if not any(e[0] == n for e in f.endpoints):
            f.endpoints.add((n, None))
    if name in PORT_STATE and " " in host:
        sw, port = host.split(" ", 1)
        cabled = idx.port.get((sw, port))
        if cabled and c.get("status") == "fail":
            f.local.append((cabled[0], cabled[1], "%s %s: %s" % (sw, port, _strip_who(why(c), sw, port)), host))
            f.nodes.add(cabled[0])
            f.endpoints.add(cabled)
        return f
    if name in ("network", "nfs_mounts"):
        for p in c.get("problems") or []:
            _problem(str(p), host, name, idx, f)
        if name == "network" and c.get("status") == "fail" and not c.get("problems"):
            f.local.append((host, None, why(c), None))
        return f
    if name == "identity" and c.get("status") == "fail":
        for nic in c.get("missing_nics") or []:
            f.local.append((host, nic, "%s missing on the host" % nic, idx.switch_port(host, nic)))
        if not c.get("hostname_ok", True):
            f.local.append((host, None, "hostname %s" % c.get("hostname"), None))
        if not f.local:
            f.local.append((host, None, why(c), None))
        return f
    if name in NODE_STATE and host in idx.nodes and c.get("status") == "fail":
        nic = idx.nic_in(host, why(c))
        f.local.append((host, nic, why(c), idx.switch_port(host, nic) if nic else None))
    return f


def _strip_who(text: str, sw: str, port: str) -> str:
    """switch_eval's causes start with 'sw port (host nic): '; the finding's subject says that already."""
    m = re.match(r"^%s %s(?: \([^)]*\))?: (.*)$" % (re.escape(sw), re.escape(port)), text)
    return m.group(1) if m else text


def _problem(p: str, host: str, name: str, idx: Index, f: Facts) -> None:
    """One problem line of a node's network or NFS check: an address it could not reach (a ping,
    pod_ping_mesh's line; a mount's I/O, pod_nfs_verify's), or a fault of its own."""
    ping = PING.search(p) if name == "network" else None
    io = NFS_IO.search(p) if name == "nfs_mounts" else None
    addr = (ping or io).group("addr") if (ping or io) else None
    if addr and addr not in idx.addresses(host):
        owner, nic = idx.owner.get(addr) or (addr, None)  # an address the index does not know stands for its node
        f.targets.append((owner, nic, addr))
        f.nodes.add(owner)
        f.endpoints.add((owner, nic))
        mine = idx.nic_in(host, p[:ping.start()]) if ping else idx.via(host, addr)
        if mine:
            f.endpoints.add((host, mine))
        return
    if name == "nfs_mounts":
        # a mount of its own (not mounted, the wrong server or type): the client side, through the NIC it uses
        planned = next(iter(IP.findall(p)), None)
        nic = idx.via(host, planned) if planned else None
        f.local.append((host, None, p[len(host) + 2:] if p.startswith(host + ": ") else p, None))
        if nic:
            f.endpoints.add((host, nic))
        return
    nic = idx.nic_in(host, p)
    f.local.append((host, nic, tidy(p), idx.switch_port(host, nic) if nic else None))
