# -*- coding: utf-8 -*-
"""The pod as one typed, frozen value (issue 13): fabrics, hosts, their NICs, storage and switches.

The inventory is the source of truth (docs/pod-model.md); preflight (``preflight.model.validate``) checks it and
:meth:`Pod.from_model` / :meth:`Pod.from_hostvars` then build this read-only view of it once. Every
derivation - the NIC plan, /etc/hosts, the NCCL environment, the mount plan, the switch cabling - reads the
pod through these types, so "which fabric is this NIC on, what does it carry, what MTU does it run" is
answered in one place.

Building a ``Pod`` from a model preflight has not accepted raises :class:`PodError` naming what is missing;
it never guesses. Stdlib and the catalogue only (it runs inside Ansible modules on the nodes too).
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import SWITCH_MODELS

ROLE_GROUPS = ("dgx", "storage", "switches")
# The inventory variables the pod model is made of (docs/pod-model.md): what model_from_hostvars reads of a host.
MODEL_VARS = ("pod", "nics", "dgx_model", "gpus", "storage_node", "switch", "ansible_host")


class PodError(ValueError):
    """The model cannot be read as a pod (run preflight: it names the file and line)."""


def _frozen(value: Any) -> Any:
    """A read-only copy of plain inventory data (dicts become mappings that refuse writes, lists tuples)."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Plain dicts and lists again (for Jinja, JSON and the functions that return plain data)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Fabric:
    """One network of the pod (pod.fabrics[]): 004's data-66 is ethernet, RoCE lossless, MTU 9000."""
    name: str
    kind: str                      # ethernet | infiniband
    subnet: ipaddress.IPv4Network
    mtu: int
    carries: Tuple[str, ...] = ()  # compute, storage, management
    gateway: Optional[str] = None
    roce: str = "none"             # none | lossless (ethernet only)
    ipoib_mode: Optional[str] = None  # datagram | connected (infiniband only)
    pkeys: Tuple[str, ...] = ()    # partition keys its HCA ports hold (infiniband only; "0x7fff")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Fabric:
        try:
            name, kind = str(raw["name"]), str(raw["kind"])
            subnet = ipaddress.IPv4Network(str(raw["subnet"]), strict=False)
            mtu = int(raw["mtu"])
        except (KeyError, TypeError, ValueError) as exc:
            raise PodError("pod.fabrics: %r is not a complete fabric (name, kind, subnet, mtu): %s" % (
                dict(raw) if isinstance(raw, Mapping) else raw, exc)) from None
        return cls(name=name, kind=kind, subnet=subnet, mtu=mtu, carries=tuple(raw.get("carries") or ()),
                   gateway=raw.get("gateway"),
                   roce=(raw.get("roce") or "none") if kind == "ethernet" else "none",
                   ipoib_mode=(raw.get("ipoib_mode") or "datagram") if kind == "infiniband" else None,
                   pkeys=tuple(str(k) for k in raw.get("pkeys") or ()) if kind == "infiniband" else ())

    def carries_any(self, *traffic: str) -> bool:
        return bool(set(self.carries) & set(traffic))


@dataclass(frozen=True)
class Nic:
    """One NIC of one host, with its fabric resolved (the effective MTU is the NIC's or else the fabric's)."""
    host: str
    index: int                     # its position in the host's nics list (the inventory's order)
    name: str
    fabric: Fabric
    address: str
    mtu: int
    rdma_device: Optional[str] = None
    speed: Optional[int] = None    # Gbit/s
    default_route: bool = False
    switch: Optional[str] = None
    switch_port: Optional[str] = None
    port_guid: Optional[str] = None  # an InfiniBand HCA port's GUID (ibstat's "Port GUID"), when the model gives it

    @property
    def prefix(self) -> int:
        return self.fabric.subnet.prefixlen

    @property
    def cidr(self) -> str:
        return "%s/%d" % (self.address, self.prefix)


@dataclass(frozen=True)
class Host:
    """An inventory host of the pod: a DGX, a storage node or a switch (by its groups)."""
    name: str
    groups: Tuple[str, ...]
    nics: Tuple[Nic, ...] = ()
    ansible_host: Optional[str] = None
    dgx_model: Optional[str] = None
    gpus: Optional[int] = None
    storage_node: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    switch: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def roles(self) -> Tuple[str, ...]:
        return tuple(g for g in ROLE_GROUPS if g in self.groups)

    def nic(self, name: str) -> Optional[Nic]:
        return next((n for n in self.nics if n.name == name), None)

    def nics_on(self, fabric: str) -> Tuple[Nic, ...]:
        return tuple(n for n in self.nics if n.fabric.name == fabric)


@dataclass(frozen=True)
class Pod:
    """The whole pod, read-only. ``hosts`` keeps the inventory's order within each role group."""
    name: str
    ra_profile: str
    fabrics: Mapping[str, Fabric]
    hosts: Mapping[str, Host]
    simulated: bool = False
    domain: Optional[str] = None
    hosts_fabric_name: Optional[str] = None
    storage: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    validation: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    raw: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), repr=False, compare=False)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_model(cls, model: Mapping[str, Any]) -> Pod:
        """From :func:`model_from_hostvars`' shape: {"pod": {...}, "hosts": {name: {groups, vars}}}."""
        pod = model.get("pod")
        if not isinstance(pod, Mapping):
            raise PodError("no 'pod' variable in the inventory (docs/pod-model.md)")
        fabrics: Dict[str, Fabric] = {}
        for raw in pod.get("fabrics") or []:
            fab = Fabric.from_dict(raw)
            fabrics[fab.name] = fab
        hosts: Dict[str, Host] = {}
        for name, info in (model.get("hosts") or {}).items():
            hosts[name] = _host(name, list(info.get("groups") or []), info.get("vars") or {}, fabrics)
        return cls(name=str(pod.get("name") or ""), ra_profile=str(pod.get("ra_profile") or ""),
                   fabrics=MappingProxyType(fabrics), hosts=MappingProxyType(hosts),
                   simulated=bool(pod.get("simulated")), domain=pod.get("domain"),
                   hosts_fabric_name=pod.get("hosts_fabric"), storage=_frozen(pod.get("storage") or {}),
                   validation=_frozen(pod.get("validation") or {}), raw=_frozen(pod))

    @classmethod
    def from_hostvars(cls, hostvars: Mapping[str, Mapping[str, Any]],
                      groups: Optional[Mapping[str, Iterable[str]]] = None, pod: Optional[Mapping[str, Any]] = None
                      ) -> Pod:
        """From Ansible's hostvars (each host's ``group_names``; or ``groups`` when given: {group: [hosts]}).

        ``pod``: the pod variable when the hostvars given do not carry it. Hosts keep the order of ``groups``
        (the inventory's), then of ``hostvars``."""
        member: Dict[str, List[str]] = {}
        if groups is not None:
            for group in ROLE_GROUPS:
                for host in groups.get(group, []) or []:
                    member.setdefault(host, []).append(group)
        order = list(member) + [h for h in hostvars if h not in member]
        model_hosts = {}
        found_pod = pod
        for name in order:
            hv = hostvars.get(name)
            if hv is None:
                continue
            if found_pod is None and hv.get("pod") is not None:
                found_pod = hv.get("pod")
            names = member.get(name) or list(hv.get("group_names") or [])
            model_hosts[name] = {"groups": names, "vars": {k: hv.get(k) for k in
                                                           ("nics", "dgx_model", "gpus", "storage_node", "switch",
                                                            "ansible_host") if hv.get(k) is not None}}
        return cls.from_model({"pod": found_pod, "hosts": model_hosts})

    @classmethod
    def of_one_host(cls, pod: Mapping[str, Any], nics: Iterable[Mapping[str, Any]], name: str = "this-host",
                    groups: Iterable[str] = ("dgx",)) -> Pod:
        """The pod as one host sees it (the pod variable and its own NICs): for the per-host filters."""
        return cls.from_model({"pod": pod, "hosts": {name: {"groups": list(groups), "vars": {"nics": list(nics)}}}})

    # ------------------------------------------------------------------ reading
    def in_group(self, group: str) -> Tuple[Host, ...]:
        return tuple(h for h in self.hosts.values() if group in h.groups)

    @property
    def dgx(self) -> Tuple[Host, ...]:
        return self.in_group("dgx")

    @property
    def storage_nodes(self) -> Tuple[Host, ...]:
        return self.in_group("storage")

    @property
    def switches(self) -> Tuple[Host, ...]:
        return self.in_group("switches")

    def host(self, name: str) -> Host:
        try:
            return self.hosts[name]
        except KeyError:
            raise PodError("%s is not a host of pod %s" % (name, self.name or "?")) from None

    def fabric(self, name: str) -> Fabric:
        try:
            return self.fabrics[name]
        except KeyError:
            raise PodError("fabric %s is not in pod.fabrics (%s)" % (name, ", ".join(self.fabrics) or "none")) \
                from None

    def fabrics_carrying(self, traffic: str) -> Tuple[Fabric, ...]:
        return tuple(f for f in self.fabrics.values() if traffic in f.carries)

    def storage_fabrics(self, first: Optional[str] = None) -> List[str]:
        """Fabrics that carry storage, ``first`` (default: the pod's hosts fabric, 004's data-66) first."""
        names = [f.name for f in self.fabrics_carrying("storage")]
        first = first or self.hosts_fabric_name
        return sorted(names, key=lambda n: (n != first, names.index(n)))

    def hosts_fabric(self, host: str) -> Optional[str]:
        """The fabric whose address ``host``'s name resolves to.

        ``pod.hosts_fabric`` if set; else the fabric of the NIC with the default route (004: enp132s0,
        10.55.66.x); else the first NIC's fabric that carries compute traffic; else storage."""
        if self.hosts_fabric_name:
            return self.hosts_fabric_name
        nics = self.host(host).nics
        for nic in nics:
            if nic.default_route:
                return nic.fabric.name
        for wanted in ("compute", "storage"):
            for nic in nics:
                if wanted in nic.fabric.carries:
                    return nic.fabric.name
        return None

    def primary_nic(self, host: str) -> Optional[Nic]:
        """The NIC ``host``'s name resolves to; a host with none on the hosts fabric (a storage node): its
        first storage NIC."""
        fabric = self.hosts_fabric(host)
        nics = self.host(host).nics
        for nic in nics:
            if nic.fabric.name == fabric:
                return nic
        return next((n for n in nics if "storage" in n.fabric.carries), None)

    def owner(self, address: str) -> Optional[Nic]:
        """The NIC that holds ``address`` (any host of the pod), or None."""
        return self._owners().get(str(address))

    def _owners(self) -> Dict[str, Nic]:
        cache = self.__dict__.get("_owner_index")
        if cache is None:
            cache = {n.address: n for h in self.hosts.values() for n in h.nics}
            object.__setattr__(self, "_owner_index", cache)
        return cache

    def cabling(self) -> Dict[str, List[Nic]]:
        """{switch: every NIC cabled to it (its switch and switch_port set)}, hosts in name order."""
        out: Dict[str, List[Nic]] = {}
        for name in sorted(self.hosts):
            for nic in self.hosts[name].nics:
                if nic.switch and nic.switch_port:
                    out.setdefault(nic.switch, []).append(nic)
        return out


def _host(name: str, groups: List[str], hv: Mapping[str, Any], fabrics: Mapping[str, Fabric]) -> Host:
    nics = []
    for i, raw in enumerate(hv.get("nics") or []):
        if not isinstance(raw, Mapping):
            raise PodError("%s: nics[%d] is not a mapping" % (name, i))
        fabric = fabrics.get(raw.get("fabric"))
        if fabric is None:
            raise PodError("%s: nics[%d] (%s) is on fabric %r, which pod.fabrics does not declare" % (
                name, i, raw.get("name"), raw.get("fabric")))
        try:
            nics.append(Nic(host=name, index=i, name=str(raw["name"]), fabric=fabric, address=str(raw["address"]),
                            mtu=int(raw.get("mtu") or fabric.mtu), rdma_device=raw.get("rdma_device"),
                            speed=raw.get("speed"), default_route=bool(raw.get("default_route")),
                            switch=raw.get("switch"), switch_port=raw.get("switch_port"),
                            port_guid=raw.get("port_guid")))
        except (KeyError, TypeError, ValueError) as exc:
            raise PodError("%s: nics[%d] is incomplete (name, fabric, address): %s" % (name, i, exc)) from None
    return Host(name=name, groups=tuple(groups), nics=tuple(nics), ansible_host=hv.get("ansible_host"),
                dgx_model=hv.get("dgx_model"), gpus=hv.get("gpus"),
                storage_node=_frozen(hv.get("storage_node") or {}), switch=_frozen(hv.get("switch") or {}))


# --------------------------------------------------------------------------- the model as plain data
def model_from_hostvars(hostvars: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The pod model from Ansible hostvars (each must carry ``group_names``): {"pod": the pod variable, "hosts":
    {name: {"groups": [...], "vars": {the MODEL_VARS it sets}}}} - what preflight checks and Pod.from_model reads."""
    hosts = {}
    pod = None
    for name in sorted(hostvars):
        hv = hostvars[name] or {}
        if pod is None and hv.get("pod") is not None:
            pod = hv.get("pod")
        hosts[name] = {"groups": list(hv.get("group_names") or []),
                       "vars": {k: hv.get(k) for k in MODEL_VARS if k != "pod" and hv.get(k) is not None}}
    return {"pod": pod, "hosts": hosts}


def switch_port_mtu(switch: Dict[str, Any], port: str) -> Optional[int]:
    """A switch port's MTU in the model: the port's, else the switch's, else the model's largest (None on an
    InfiniBand switch)."""
    model = SWITCH_MODELS[switch["model"]]
    ports = switch.get("ports") if isinstance(switch.get("ports"), dict) else {}
    port_cfg = ports.get(port) if isinstance(ports.get(port), dict) else {}
    # only integers: a string ("9214") is a schema error preflight reports, not a value to compare
    for mtu in (port_cfg.get("mtu"), switch.get("mtu")):
        if isinstance(mtu, int) and not isinstance(mtu, bool) and mtu:
            return mtu
    return model.max_mtu


def vlan_id(key: Any) -> Optional[int]:
    """A VLAN id from a ``switch.vlans`` key (YAML gives 10 or "10"); None when it is not one in 1..4094."""
    if isinstance(key, bool):
        return None
    if isinstance(key, str) and key.strip().isdigit():
        key = int(key.strip())
    return key if isinstance(key, int) and 1 <= key <= 4094 else None
