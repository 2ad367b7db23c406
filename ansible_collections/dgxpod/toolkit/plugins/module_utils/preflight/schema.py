# -*- coding: utf-8 -*-
"""The pod model's schema (Field, the per-variable schemas, check_schema), the Finding a check returns,
and how findings are grouped and counted (split out of preflight/model.py, issue 13)."""
from __future__ import annotations

import difflib
import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Callable, Collection, Dict, Iterable, List, Optional, Tuple

from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.dgx import DGX_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.catalog.switches import PLATFORMS, SWITCH_MODELS
from ansible_collections.dgxpod.toolkit.plugins.module_utils.pod.types import ROLE_GROUPS

# The storage platforms the pod model names (what the NFS/Scale plans and the storage checks know).
STORAGE_PLATFORMS = ("isilon", "powerscale", "ess3000", "nfs-ganesha")


# --------------------------------------------------------------------------- findings
@dataclass
class Finding:
    """One problem with the model.

    ``host`` and ``var`` say whose variable it is (used to find the defining file); ``path`` is the key
    path inside that variable (``nics[1].address``); ``fix`` tells the user what to do.
    """

    host: Optional[str]
    var: str
    path: str
    message: str
    fix: str
    severity: str = "error"
    source: Optional[str] = None  # "file:line", filled in by preflight.sources.locate
    # Where the value really comes from when it may be inherited: (host, var, path, fix). When that place is a
    # group_vars file (or a group's inline vars), the finding is moved there (see pod_preflight) and the same
    # finding on every host of the group becomes one.
    cause: Optional[Tuple[Optional[str], str, str, str]] = None
    # True when the finding sits on a value many hosts share (a group_vars line, a fabric): every finding with
    # the same source and key is then one finding, whatever host or NIC each names.
    inherited: bool = False
    # Filled in by ``group_findings``: the other hosts with the same mistake at the same key.
    more_hosts: Optional[List[str]] = None
    more_count: int = 0

    def key(self) -> str:
        return self.path if self.path.startswith(self.var) else "%s%s%s" % (
            self.var, "" if not self.path or self.path.startswith("[") else ".", self.path)

    def format(self) -> str:
        where = self.source or "(inventory)"
        whose = " (host %s)" % self.host if self.host and self.var != "pod" and not self.inherited else ""
        fix = self.fix if self.fix.endswith(("?", ".")) else self.fix + "."
        return "%s %s: %s%s: %s. Fix: %s" % (
            self.severity.upper(), where, self.key(), whose, self.message.rstrip("."), fix)

    def as_dict(self) -> Dict[str, Any]:
        return {"severity": self.severity, "source": self.source, "host": self.host,
                "key": self.key(), "message": self.message, "fix": self.fix, "text": self.format(),
                "more_hosts": list(self.more_hosts or []), "more_count": self.more_count}


# --------------------------------------------------------------------------- schema
@dataclass
class Field:
    kind: str  # str int bool ipv4 cidr list dict any
    required: bool = False
    choices: Optional[Collection[Any]] = None  # a tuple, or a catalogue's keys() (a live view)
    item: Optional[Any] = None  # Field or Schema for list items
    schema: Optional[Schema] = None  # for dicts with known keys
    values: Optional[Any] = None  # Field/Schema for dict values (free keys)
    minimum: Optional[int] = None
    maximum: Optional[int] = None
    hint: str = ""  # what a good value looks like
    word: bool = False  # a name (NIC, device, port, fabric, host): no whitespace, not empty


Schema = Dict[str, Field]

_TYPE_NAMES = {"str": "a string", "int": "an integer", "bool": "true or false",
               "ipv4": "an IPv4 address", "cidr": "an IPv4 subnet in CIDR form (10.0.0.0/24)",
               "ipv4if": "an IPv4 interface address with its prefix length (10.0.0.1/24)",
               "list": "a list", "dict": "a mapping"}

FABRIC_SCHEMA: Schema = {
    "name": Field("str", True, hint="a short unique name, e.g. data-66", word=True),
    "kind": Field("str", True, ("ethernet", "infiniband")),
    "carries": Field("list", True, item=Field("str", choices=("compute", "storage", "management"))),
    "subnet": Field("cidr", True),
    "mtu": Field("int", True, minimum=576, maximum=65520),
    "gateway": Field("ipv4"),
    "roce": Field("str", choices=("none", "lossless")),
    "ipoib_mode": Field("str", choices=("datagram", "connected")),
    "pkeys": Field("list", item=Field("str", hint="a partition key, 0x0001..0x7fff (the 15-bit key)"),
                   hint="infiniband only: the partition keys the fabric's HCA ports must hold, e.g. ['0x7fff']"),
}
SCALE_SCHEMA: Schema = {
    "cluster_name": Field("str", True, hint="the Spectrum Scale cluster name mmlscluster shows on the storage nodes"),
    "contact_node": Field("str", True, hint="an inventory host in group 'storage' that is already a cluster member",
                          word=True),
    "filesystems": Field("list", item=Field("str"), hint="Scale file system (device) names; default [export]"),
    "verbs_port": Field("int", minimum=1, maximum=2),
}
STORAGE_SCHEMA: Schema = {
    "protocol": Field("str", True, ("nfs", "spectrum-scale")),
    "export": Field("str", True, hint="/ifs for Isilon, the file system name for Spectrum Scale"),
    "scripts_mount": Field("str"),
    "data_mount_prefix": Field("str"),
    "data_mounts": Field("int", minimum=1, maximum=256),
    "scripts_options": Field("str", hint="mount options of the scripts mount (default: the RA profile's)"),
    "data_options": Field("str", hint="mount options of the data mounts (default: the RA profile's)"),
    "nconnect": Field("int", minimum=1, maximum=16, hint="TCP connections per NFS mount (Linux >= 5.3)"),
    "fsc": Field("bool", hint="FS-Cache for the NFS mounts (adds fsc, runs cachefilesd)"),
    "scripts_server": Field("ipv4", hint="storage address of the scripts mount (default: the first one)"),
    "scale": Field("dict", schema=SCALE_SCHEMA),
}
SLURM_SCHEMA: Schema = {
    "controller": Field("str", True, hint="the inventory host that runs slurmctld (a DGX, e.g. DGX1-1)", word=True),
    "partition": Field("str", hint="letters, digits, '_', '-', '.'; default dgx"),
    "cluster_name": Field("str", hint="lower case letters, digits, '_', '-'; default: the pod name"),
    "mpi_default": Field("str", choices=("none", "pmi2", "pmix")),
    "proctrack": Field("str", choices=("linuxproc", "pgid", "cgroup")),
    "slurmctld_port": Field("int", minimum=1, maximum=65535),
    "slurmd_port": Field("int", minimum=1, maximum=65535),
}
POD_SCHEMA: Schema = {
    "name": Field("str", True),
    "ra_profile": Field("str", True, word=True),
    "simulated": Field("bool"),
    "domain": Field("str"),
    "hosts_fabric": Field("str", hint="the fabric whose address host names resolve to, e.g. data-66", word=True),
    "fabrics": Field("list", True, item=FABRIC_SCHEMA),
    "storage": Field("dict", schema=STORAGE_SCHEMA),
    "scheduler": Field("str", choices=("none", "slurm")),
    "slurm": Field("dict", schema=SLURM_SCHEMA),
    "validation": Field("dict", hint="expectation overrides and sizing inputs for validate.yml "
                                     "(expectations, workload, dataset_tb, caches_tb; docs/validation.md)"),
}
NIC_SCHEMA: Schema = {
    "name": Field("str", True, hint="the kernel name, e.g. enp5s0", word=True),
    "fabric": Field("str", True, hint="a pod.fabrics[].name", word=True),
    "address": Field("ipv4", True),
    "rdma_device": Field("str", hint="the RDMA device behind the port (mlx5_0)", word=True),
    "speed": Field("int", minimum=1, maximum=800),
    "mtu": Field("int", minimum=576, maximum=65520),
    "default_route": Field("bool"),
    "switch": Field("str", hint="the switch's inventory name", word=True),
    "switch_port": Field("str", hint="the port as the switch names it (Ethernet1/1, swp1, 1/1)", word=True),
    "port_guid": Field("str", hint="infiniband only: the HCA port's GUID as ibstat prints it (0x0c42a10300a1b2c3)",
                       word=True),
}
PORT_SCHEMA: Schema = {
    "mtu": Field("int", minimum=576, maximum=9216),
    "speed": Field("int", minimum=1, maximum=800),
    "description": Field("str"),
    "vlan": Field("int", minimum=1, maximum=4094, hint="the id of a VLAN declared in switch.vlans"),
    "address": Field("ipv4if", hint="10.0.0.1/30 (a routed port: no switchport)"),
}
VLAN_SCHEMA: Schema = {
    "name": Field("str", hint="letters, digits, '_', '-', '.'; up to 32 characters"),
    "address": Field("ipv4if", hint="10.55.5.1/24 (the switch's address in the VLAN)"),
}
SWITCH_SCHEMA: Schema = {
    "platform": Field("str", True, PLATFORMS),
    "model": Field("str", True, SWITCH_MODELS.keys()),  # a live view: the catalogue is the list
    "mtu": Field("int", minimum=576, maximum=9216),
    "ports": Field("dict", values=PORT_SCHEMA),
    "port_channels": Field("list", item={
        "id": Field("int", True, minimum=1, maximum=4096),
        "members": Field("list", True, item=Field("str")),
        "mode": Field("str", choices=("active", "passive", "on")),
        "peer": Field("str"),
    }),
    "routes": Field("list", item={"prefix": Field("cidr", True), "next_hop": Field("ipv4", True)}),
    "vlans": Field("dict", values=VLAN_SCHEMA),
    "raw_cli": Field("list", item=Field("str")),
    "guid": Field("str", hint="InfiniBand switches: the node GUID ibnetdiscover prints (switchguid=0x...)", word=True),
}
STORAGE_NODE_SCHEMA: Schema = {
    "platform": Field("str", True, STORAGE_PLATFORMS),
    "model": Field("str"),
}
# Per-host variables the model owns, by role group.
HOST_SCHEMAS: Dict[str, Schema] = {
    "dgx": {"nics": Field("list", True, item=NIC_SCHEMA),
            "dgx_model": Field("str", True, DGX_MODELS.keys()),  # a live view: the catalogue is the list
            "gpus": Field("int", minimum=0, maximum=64)},
    "storage": {"nics": Field("list", True, item=NIC_SCHEMA),
                "storage_node": Field("dict", True, schema=STORAGE_NODE_SCHEMA)},
    "switches": {"switch": Field("dict", True, schema=SWITCH_SCHEMA)},
}


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    return "%s.%s" % (path, key) if path else str(key)


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "any":
        return True
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "list":
        return isinstance(value, list)
    if kind == "dict":
        return isinstance(value, dict)
    if kind == "ipv4":  # as written: a space around it ends up in netplan and /etc/hosts
        return isinstance(value, str) and value == value.strip() and ip_of(value) is not None
    if kind == "cidr":  # A.B.C.D/N only: not a netmask (/255.255.255.0), not padded with spaces
        return isinstance(value, str) and value == value.strip() and value.rpartition("/")[2].isdigit() \
            and net_of(value) is not None
    if kind == "ipv4if":
        return ipif_of(value) is not None
    raise ValueError(kind)


def ip_of(value: Any) -> Optional[ipaddress.IPv4Address]:
    try:
        return ipaddress.IPv4Address(str(value).strip())
    except ValueError:
        return None


def net_of(value: Any) -> Optional[ipaddress.IPv4Network]:
    """A network written with its prefix length and no host bits (``10.0.0.0/24``), else None."""
    return _with_prefix(value, lambda v: ipaddress.IPv4Network(v, strict=True))


def ipif_of(value: Any) -> Optional[ipaddress.IPv4Interface]:
    """An interface address with its prefix length (``10.0.0.1/24``), else None."""
    return _with_prefix(value, ipaddress.IPv4Interface)


def _with_prefix(value: Any, make: Callable[[str], Any]) -> Any:
    if not isinstance(value, str) or "/" not in value:
        return None
    try:
        return make(value.strip())
    except ValueError:
        return None


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def suggest(value: Any, options: Iterable[Any]) -> Optional[str]:
    """The option ``value`` most likely means: the same but for case, '-' or '_' (``DGX1``, ``NFS``, ``MTU``), else
    the closest spelling (``adress``); None when nothing is close."""
    options = [str(o) for o in options]
    norm = str(value).strip().lower().replace("-", "_")
    same = [o for o in options if o.lower().replace("-", "_") == norm]
    if same:
        return same[0]
    lowered = {o.lower(): o for o in options}
    close = difflib.get_close_matches(str(value).strip().lower(), list(lowered), n=1)
    return lowered[close[0]] if close else None


def _value_problem(field_spec: Field, value: Any) -> Optional[Tuple[str, str]]:
    """(message, fix) for the mistakes a plain "is not <type>" would leave the reader to puzzle out."""
    kind = field_spec.kind
    if kind == "ipv4" and isinstance(value, str):
        if value != value.strip() and ip_of(value) is not None:
            return ("%s has spaces around the address" % _describe(value), "write %s without the spaces"
                    % value.strip())
        if "/" in value and ipif_of(value) is not None:
            return ("%s is written with a prefix length" % _describe(value), "write the address alone (%s): the "
                    "prefix length comes from the fabric's subnet" % value.strip().split("/")[0])
        if ":" in value:
            return ("%s is an IPv6 address; the pod model is IPv4 only" % _describe(value), "write the IPv4 address")
    if kind == "cidr" and isinstance(value, str) and "/" in value:
        what = "%s is not an IPv4 subnet in CIDR form" % _describe(value)
        addr, _sep, prefix = value.strip().partition("/")
        net = _with_prefix(value, lambda v: ipaddress.IPv4Network(v, strict=False))
        if ip_of(addr) is None:
            return ("%s: %r is not an IPv4 network address%s" % (what, addr, " (IPv6 is not supported)"
                                                                  if ":" in addr else ""),
                    "write an IPv4 subnet in CIDR form, e.g. 10.0.0.0/24")
        if not prefix.isdigit():
            return ("%s: it is written with a netmask, not a prefix length" % what,
                    "write it in CIDR form: %s" % net if net is not None else "write A.B.C.D/N (CIDR, N from 0 to 32)")
        if int(prefix) > 32:
            return ("%s: prefix length %s is more than 32" % (what, prefix),
                    "use a CIDR prefix length from 0 to 32 (a /24 holds 254 hosts)")
        if value != value.strip():
            return ("%s: it has spaces around it" % what, "write %s (CIDR) without the spaces" % value.strip())
        if net is not None and str(net.network_address) != addr:
            return ("%s: %s has host bits set (it is an address inside %s)" % (what, addr, net),
                    "write the subnet's network address in CIDR form: %s" % net)
    return None


def check_schema(value: Any, spec: Any, var: str, path: str, host: Optional[str],
                 out: List[Finding]) -> bool:
    """Check ``value`` against a Field or Schema; append findings; return True when it is usable."""
    if isinstance(spec, dict):  # a Schema: a mapping with known keys
        if not isinstance(value, dict):
            out.append(Finding(host, var, path, "is %s, not a mapping" % _describe(value),
                               "write it as a mapping with the keys %s" % ", ".join(spec)))
            return False
        ok = True
        for key in value:
            if key not in spec:
                close = suggest(key, spec)
                fix = ("did you mean '%s'?" % close) if close else (
                    "remove it; known keys are %s" % ", ".join(spec))
                out.append(Finding(host, var, _join(path, key), "unknown key", fix))
                ok = False
        for key, field_spec in spec.items():
            if key not in value or value[key] is None:
                if field_spec.required:
                    out.append(Finding(host, var, _join(path, key), "required key is missing",
                                       "add %s: <%s>" % (key, field_spec.hint or _TYPE_NAMES.get(
                                           field_spec.kind, field_spec.kind))))
                    ok = False
                continue
            ok = check_schema(value[key], field_spec, var, _join(path, key), host, out) and ok
        return ok
    field_spec: Field = spec
    if not _type_ok(field_spec.kind, value):
        problem = _value_problem(field_spec, value)
        if problem is not None:
            out.append(Finding(host, var, path, *problem))
            return False
        out.append(Finding(host, var, path, "%s is not %s" % (_describe(value), _TYPE_NAMES.get(
            field_spec.kind, field_spec.kind)), "write %s%s" % (
                _TYPE_NAMES.get(field_spec.kind, field_spec.kind),
                (", e.g. " + field_spec.hint) if field_spec.hint else "")))
        return False
    if field_spec.kind == "str" and (field_spec.required or field_spec.word) and not value.strip():
        out.append(Finding(host, var, path, "is empty", "write %s, or remove the key" % (
            field_spec.hint or "a value") if not field_spec.required else "write %s" % (field_spec.hint or "a value")))
        return False
    if field_spec.kind == "str" and field_spec.word and re.search(r"\s", value):
        out.append(Finding(host, var, path, "%s contains whitespace%s" % (
            _describe(value), " at its end" if value.strip() and not re.search(r"\s", value.strip()) else ""),
            "write %s" % ("'%s'" % value.strip() if not re.search(r"\s", value.strip()) else "the name without "
                                                                                             "spaces")))
        return False
    if field_spec.choices is not None and value not in field_spec.choices:
        close = suggest(value, field_spec.choices)
        out.append(Finding(host, var, path, "%s is not one of %s" % (
            _describe(value), ", ".join(str(c) for c in field_spec.choices)),
            ("use '%s'" % close) if close else "use one of the values listed"))
        return False
    if field_spec.kind == "int":
        if field_spec.minimum is not None and value < field_spec.minimum or (
                field_spec.maximum is not None and value > field_spec.maximum):
            out.append(Finding(host, var, path, "%d is outside %d..%d" % (
                value, field_spec.minimum, field_spec.maximum), "use a value in that range"))
            return False
    ok = True
    if field_spec.kind == "list" and field_spec.item is not None:
        for i, item in enumerate(value):
            ok = check_schema(item, field_spec.item, var, _join(path, i), host, out) and ok
    if field_spec.kind == "dict":
        if field_spec.schema is not None:
            ok = check_schema(value, field_spec.schema, var, path, host, out)
        elif field_spec.values is not None:
            for k, v in value.items():  # mapping keys are written path.key, also when they are numbers
                ok = check_schema(v, field_spec.values, var, "%s.%s" % (path, k), host, out) and ok
    return ok


HOSTNAME_RE = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


def role_of(groups: Iterable[str]) -> List[str]:
    return [g for g in ROLE_GROUPS if g in groups]


def addr_owner(host: str, path: str) -> str:
    return "%s %s" % (host, path)


_IP_RE = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?\b")
GROUP_LIST = 5  # host names listed in a grouped finding


def natural_key(text: Optional[str]) -> List[Any]:
    """'DGX-10' after 'DGX-9'."""
    return [(0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", text or "")]


def _mask(text: str, host: Optional[str]) -> str:
    if host:
        text = re.sub(r"(?<![\w-])%s(?![\w-])" % re.escape(host), "\x00", text)
    return _IP_RE.sub("\x01", text)


def group_findings(findings: Iterable[Finding]) -> List[Finding]:
    """One finding per mistake: the same problem at the same key in many hosts becomes the first host's finding
    with "(the same in N more hosts: a, b, c, ...)"; findings moved to a shared value (``inherited``) group by
    their source and key. Call after sources are filled in."""
    groups: Dict[Tuple[Any, ...], List[Finding]] = {}
    for f in sorted(findings, key=lambda f: (natural_key(f.host), natural_key(f.source), f.path)):
        if f.inherited:
            key: Tuple[Any, ...] = ("inherited", f.severity, f.source, f.key())
        else:
            key = (f.severity, f.var, f.key(), _mask(f.message, f.host), _mask(f.fix, f.host),
                   f.source if not f.host else None)
        groups.setdefault(key, []).append(f)
    out = []
    for members in groups.values():
        first = members[0]
        if len(members) > 1:
            hosts: List[str] = []
            for m in members[1:]:
                if m.host and m.host != first.host and m.host not in hosts:
                    hosts.append(m.host)
            listed = ", ".join(hosts[:GROUP_LIST]) + (", ..." if len(hosts) > GROUP_LIST else "")
            if len(hosts) == len(members) - 1:
                more = "the same in %d more host%s: %s" % (len(hosts), "" if len(hosts) == 1 else "s", listed)
            elif hosts:
                more = "the same %d more time%s, also in host%s %s" % (
                    len(members) - 1, "" if len(members) == 2 else "s", "" if len(hosts) == 1 else "s", listed)
            else:
                more = "the same %d more time%s" % (len(members) - 1, "" if len(members) == 2 else "s")
            first.message = "%s (%s)" % (first.message.rstrip("."), more)
            first.more_hosts = hosts
            first.more_count = len(members) - 1
        out.append(first)
    return out


def errors(findings: Iterable[Finding]) -> List[Finding]:
    return [f for f in findings if f.severity == "error"]
